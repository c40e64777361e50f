// Shared contact geometry and kinematics. Twin of src/contact/geometry.rs.

// Geometry and relative motion of one contact between body i and body j.
struct ContactGeometry {
    normal: vec3<f32>,      // unit vector from i to j
    gap: f32,               // g_c = distance − R_i − R_j (negative when overlapping)
    r_bar: f32,             // effective radius R̄, spec eq (6)
    m_c: f32,               // effective mass m_c, spec eq (13)
    arm_i: f32,             // centre of i → contact point, R_i − δ/2: branch vector normal · arm_i
    arm_j: f32,             // centre of j → contact point, R_j − δ/2 (zero for a wall): −normal · arm_j
    vel_normal: f32,        // ġ, normal relative velocity of j w.r.t. i (> 0 separating)
    vel_shear: vec3<f32>,   // tangential relative velocity of j's contact point w.r.t. i's
    spin_i: vec3<f32>,      // angular velocity of i (rolling resistance acts on each body's own spin)
    spin_j: vec3<f32>,      // angular velocity of j (zero for a wall)
    previous_spin_i: vec3<f32>, // angular velocity of i at the previous force pass (the constructors: spin_i)
    previous_spin_j: vec3<f32>, // angular velocity of j at the previous force pass (zero for a wall)
}

// Relative velocity at the contact point: x = normal part, yzw = tangential part. Both branch
// vectors lie along the normal, so the spins' part is one cross product, −(a_i w_i + a_j w_j) × n.
fn contact_kinematics(normal: vec3<f32>, arm_i: f32, arm_j: f32, v_i: vec3<f32>, w_i: vec3<f32>, v_j: vec3<f32>, w_j: vec3<f32>) -> vec4<f32> {
    let v_rel = (v_j - v_i) - cross(w_i * arm_i + w_j * arm_j, normal);
    let vel_normal = dot(v_rel, normal);
    let vel_shear = v_rel - normal * vel_normal;
    return vec4<f32>(vel_normal, vel_shear);
}

// Ball–ball contact; d = x_j − x_i. The contact point is the middle of the overlap.
fn ball_ball_geometry(d: vec3<f32>, r_i: f32, r_j: f32, m_i: f32, m_j: f32, v_i: vec3<f32>, w_i: vec3<f32>, v_j: vec3<f32>, w_j: vec3<f32>) -> ContactGeometry {
    let distance = length(d);
    let normal = d * (1.0 / distance);
    let gap = distance - r_i - r_j;
    let half_overlap = 0.5 * max(-gap, 0.0);
    let r_bar = 2.0 * r_i * r_j / (r_i + r_j);
    let m_c = m_i * m_j / (m_i + m_j);
    let arm_i = r_i - half_overlap;
    let arm_j = r_j - half_overlap;
    let kin = contact_kinematics(normal, arm_i, arm_j, v_i, w_i, v_j, w_j);
    return ContactGeometry(normal, gap, r_bar, m_c, arm_i, arm_j, kin.x, kin.yzw, w_i, w_j, w_i, w_j);
}

// Ball–wall contact; s = signed distance of the ball centre from the plane along the wall's
// outward normal n_w. The wall is body j, moving with v_wall.
fn ball_wall_geometry(s: f32, n_w: vec3<f32>, r_i: f32, m_i: f32, v_i: vec3<f32>, w_i: vec3<f32>, v_wall: vec3<f32>) -> ContactGeometry {
    let normal = -n_w;
    let gap = s - r_i;
    let half_overlap = 0.5 * max(-gap, 0.0);
    let r_bar = 2.0 * r_i;
    let m_c = m_i;
    let arm_i = r_i - half_overlap;
    let kin = contact_kinematics(normal, arm_i, 0.0, v_i, w_i, v_wall, vec3<f32>(0.0));
    return ContactGeometry(normal, gap, r_bar, m_c, arm_i, 0.0, kin.x, kin.yzw, w_i, vec3<f32>(0.0), w_i, vec3<f32>(0.0));
}

// The torques of contact force force_j (on j) about the two centres: branch_i × (−F) and
// branch_j × F, both −arm (n × F). Returned as (torque_i, torque_j).
fn contact_torques(g: ContactGeometry, force_j: vec3<f32>) -> array<vec3<f32>, 2> {
    let lever = cross(g.normal, force_j);
    return array<vec3<f32>, 2>(lever * -g.arm_i, lever * -g.arm_j);
}
