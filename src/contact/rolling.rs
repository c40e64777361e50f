//! Rolling resistance, spec `hertz-mindlin-musen.txt` ("Rolling friction"): a torque
//! M_ro = −μ_r |F_n| r ω/|ω| on each body from its OWN spin ω, usable by any preset.
//! Twin of `shaders/contact/rolling.wgsl`.

use glam::DVec3;

use super::geometry::ContactGeometry;
use super::params::PairParams;

/// Rolling-resistance torques of one contact and the energy they dissipate this step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RollingTorque {
    /// Torque on i about its centre.
    pub torque_i: DVec3,
    /// Torque on j about its centre (zero for a wall).
    pub torque_j: DVec3,
    /// Work dissipated this step, booked as the trapezoid of `energy::dashpot_work`:
    /// ½(M(n−1) + M(n))·ω Δt with M(n−1) of |F_n|₀ (the previous step's) against the previous
    /// spins (`previous_rolling_power`).
    pub work: f64,
}

/// −μ_r |F_n| r ω/|ω| for one body; zero when ω = 0.
#[inline(always)]
pub fn rolling_torque(mu_r: f64, fn_mag: f64, r: f64, w: DVec3) -> DVec3 {
    let w_len = w.length();
    if w_len > 0.0 {
        w * (-mu_r * fn_mag * r / w_len)
    } else {
        DVec3::ZERO
    }
}

/// Both torques with μ_r = `rolling_fric`; `fn_mag` = |F_n|, `fn_previous` = |F_n| of the
/// previous step (`History::normal_force`). The lever r of each body is its arm (centre →
/// contact point, R − δ/2; zero for a wall). Without rolling friction
/// (μ_r = 0, the default) nothing is computed.
#[inline(always)]
pub fn rolling_resistance(p: &PairParams, g: &ContactGeometry, fn_mag: f64, fn_previous: f64, dt: f64) -> RollingTorque {
    if p.rolling_fric == 0.0 {
        return RollingTorque::default();
    }
    let torque_i = rolling_torque(p.rolling_fric, fn_mag, g.arm_i, g.spin_i);
    let torque_j = rolling_torque(p.rolling_fric, fn_mag, g.arm_j, g.spin_j);
    let work = 0.5 * (previous_rolling_power(p, g, fn_previous) - (torque_i.dot(g.spin_i) + torque_j.dot(g.spin_j))) * dt;
    RollingTorque { torque_i, torque_j, work }
}

/// −M(n−1)·ω: the power of the previous step's rolling torques, of magnitude μ_r |F_n|₀ r and
/// opposed to each body's spin at the previous force pass (`ContactGeometry::previous_spin_i`,
/// `_j`), at this step's spins and levers. A spin that reversed between the two passes (a
/// grain rocking at rest under rolling friction) gives a negative term: the previous torque
/// then pushed along the spin.
pub fn previous_rolling_power(p: &PairParams, g: &ContactGeometry, fn_previous: f64) -> f64 {
    p.rolling_fric * fn_previous * (g.arm_i * along(g.previous_spin_i, g.spin_i) + g.arm_j * along(g.previous_spin_j, g.spin_j))
}

/// The component of `w` along the direction of `previous` (zero when `previous` is zero: no
/// rolling torque acted then).
pub fn along(previous: DVec3, w: DVec3) -> f64 {
    let len = previous.length();
    if len > 0.0 {
        previous.dot(w) / len
    } else {
        0.0
    }
}
