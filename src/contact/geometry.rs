//! Shared contact geometry and kinematics. Twin of `shaders/contact/geometry.wgsl`.

use glam::DVec3;

/// Geometry and relative motion of one contact between body i and body j.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ContactGeometry {
    /// Unit vector from i to j.
    pub normal: DVec3,
    /// Contact gap g_c = distance − R_i − R_j (negative when the surfaces overlap).
    pub gap: f64,
    /// Effective radius R̄ of spec eq (6) (a wall has radius ∞).
    pub r_bar: f64,
    /// Effective mass m_c of spec eq (13) (ball–wall: the ball's mass).
    pub m_c: f64,
    /// Distance from the centre of i to the contact point, R_i − δ/2: i's branch vector
    /// (centre → contact point) is `normal · arm_i`.
    pub arm_i: f64,
    /// Distance from the centre of j to the contact point, R_j − δ/2 (zero for a wall): j's
    /// branch vector is `−normal · arm_j`.
    pub arm_j: f64,
    /// Normal relative velocity ġ of j w.r.t. i (positive when separating).
    pub vel_normal: f64,
    /// Tangential relative velocity of j's contact point w.r.t. i's.
    pub vel_shear: DVec3,
    /// Angular velocity of i (rolling resistance acts on each body's own spin).
    pub spin_i: DVec3,
    /// Angular velocity of j (zero for a wall).
    pub spin_j: DVec3,
    /// Angular velocity of i at the previous force pass, ω(n−3/2): the previous step's rolling
    /// torque opposed it (`rolling::previous_rolling_power`). The constructors set the spin
    /// itself; a force pass that keeps the previous spins (`rolling_booked`) puts them in.
    pub previous_spin_i: DVec3,
    /// Angular velocity of j at the previous force pass (zero for a wall).
    pub previous_spin_j: DVec3,
}

/// Relative velocity at the contact point split into normal and tangential parts. Both
/// branch vectors lie along the normal (`arm_i`, `arm_j`), so the spins' contribution
/// w_j × (−n a_j) − w_i × (n a_i) is one cross product, −(a_i w_i + a_j w_j) × n.
pub fn contact_kinematics(normal: DVec3, arm_i: f64, arm_j: f64, v_i: DVec3, w_i: DVec3, v_j: DVec3, w_j: DVec3) -> (f64, DVec3) {
    let v_rel = (v_j - v_i) - (w_i * arm_i + w_j * arm_j).cross(normal);
    let vel_normal = v_rel.dot(normal);
    let vel_shear = v_rel - normal * vel_normal;
    (vel_normal, vel_shear)
}

/// Ball–ball contact; `d` = x_j − x_i. The contact point is the middle of the overlap.
#[allow(clippy::too_many_arguments)]
pub fn ball_ball_geometry(d: DVec3, r_i: f64, r_j: f64, m_i: f64, m_j: f64, v_i: DVec3, w_i: DVec3, v_j: DVec3, w_j: DVec3) -> ContactGeometry {
    let distance = d.length();
    let normal = d * (1.0 / distance);
    let gap = distance - r_i - r_j;
    let half_overlap = 0.5 * (-gap).max(0.0);
    let r_bar = 2.0 * r_i * r_j / (r_i + r_j);
    let m_c = m_i * m_j / (m_i + m_j);
    let (arm_i, arm_j) = (r_i - half_overlap, r_j - half_overlap);
    let (vel_normal, vel_shear) = contact_kinematics(normal, arm_i, arm_j, v_i, w_i, v_j, w_j);
    ContactGeometry { normal, gap, r_bar, m_c, arm_i, arm_j, vel_normal, vel_shear, spin_i: w_i, spin_j: w_j, previous_spin_i: w_i, previous_spin_j: w_j }
}

/// Ball–wall contact; `s` = signed distance of the ball centre from the plane along the
/// wall's outward normal `n_w`. The wall is body j, moving with `v_wall`.
pub fn ball_wall_geometry(s: f64, n_w: DVec3, r_i: f64, m_i: f64, v_i: DVec3, w_i: DVec3, v_wall: DVec3) -> ContactGeometry {
    let normal = -n_w;
    let gap = s - r_i;
    let half_overlap = 0.5 * (-gap).max(0.0);
    let r_bar = 2.0 * r_i;
    let m_c = m_i;
    let arm_i = r_i - half_overlap;
    let (vel_normal, vel_shear) = contact_kinematics(normal, arm_i, 0.0, v_i, w_i, v_wall, DVec3::ZERO);
    ContactGeometry { normal, gap, r_bar, m_c, arm_i, arm_j: 0.0, vel_normal, vel_shear, spin_i: w_i, spin_j: DVec3::ZERO, previous_spin_i: w_i, previous_spin_j: DVec3::ZERO }
}

/// The torques of contact force `force_j` (on j; i feels −force_j) about the two centres:
/// branch_i × (−F) and branch_j × F, both −arm (n × F) since both branches lie along n.
pub fn contact_torques(g: &ContactGeometry, force_j: DVec3) -> (DVec3, DVec3) {
    let lever = g.normal.cross(force_j);
    (lever * -g.arm_i, lever * -g.arm_j)
}
