//! Hysteretic normal dashpot, spec `hysteretic-pfc.txt` eqs (5)–(6), and the impact speed δ̇⁻
//! captured when a contact becomes active (also used by `hooke`'s viscous option).
//! Twin of `shaders/contact/damping_hysteretic.wgsl`.

use glam::DVec3;

use super::damping::DashpotForce;
use super::geometry::ContactGeometry;
use super::history::History;
use super::normal::NormalForce;
use super::params::PairParams;

/// δ̇⁻ = normal approach speed at activation: taken from the current geometry on the step the
/// contact is new (`established` = 0), afterwards the stored value. Never negative.
pub fn impact_speed(g: &ContactGeometry, h: &History) -> f64 {
    if h.established == 0.0 { (-g.vel_normal).max(0.0) } else { h.impact_velocity }
}

/// The dimensionless factor of eq (6), χ = factor · h_n / δ̇⁻, for dashpot mode M_d:
/// 0 (1−e²)/e (Gonthier 2004), 1 ¾(1−e²) with e = max(e_n, e*_n) (Lankarani–Nikravesh 1990),
/// 2 ¾(1−e²) e^(2(1−e)) (Zhiying–Qishao). Mode 0 clamps e_n ≥ 1e-3 (χ is infinite at e_n = 0).
/// e_n is `PairParams::damping_restitution()`: `dp_en`, or with `limit_damping` the value that
/// keeps the rebound at `dp_en` (`calibration`).
pub fn hysteretic_factor(p: &PairParams) -> f64 {
    factor_of(p.dp_mode, p.damping_restitution(), p.dp_enmin)
}

/// The factor of dashpot mode `mode` at e_n = `e_n` (mode 1's floor `e_min`).
pub fn factor_of(mode: u32, e_n: f64, e_min: f64) -> f64 {
    if mode == 1 {
        let e = e_n.max(e_min);
        0.75 * (1.0 - e * e)
    } else if mode == 2 {
        let e = e_n;
        0.75 * (1.0 - e * e) * (2.0 * (1.0 - e)).exp()
    } else {
        let e = e_n.max(1e-3);
        (1.0 - e * e) / e
    }
}

/// Eq (5): F_n^d = χ δ^α δ̇ (spec sign: tension positive, δ̇ = ġ > 0 when separating);
/// no shear dashpot. No damping when δ̇⁻ = 0 (a contact that formed without approaching).
/// Eq (6) is singular as δ̇⁻ → 0 (a contact that forms at a crawl gets a huge χ), and an
/// explicit step is unstable once the damping coefficient χ δ^α exceeds m_c/Δt, so the
/// coefficient is limited to m_c/Δt. In a resolved impact it stays far below (≈ 0.1 m_c/Δt at
/// e = 0.1 and Δt = t_c/200), so the restitution is unaffected. With `limit_damping` the dashpot
/// is cut where the total normal force would pull.
pub fn hysteretic_dashpot(p: &PairParams, g: &ContactGeometry, normal: &NormalForce, v_impact: f64, dt: f64) -> DashpotForce {
    let chi = if v_impact > 0.0 { hysteretic_factor(p) * normal.h_n / v_impact } else { 0.0 };
    let coefficient = if dt > 0.0 { (chi * normal.overlap.powf(p.hz_alpha)).min(g.m_c / dt) } else { chi * normal.overlap.powf(p.hz_alpha) };
    let fn_raw = if normal.overlap > 0.0 { coefficient * g.vel_normal } else { 0.0 };
    // `limit_damping`: the total normal force F_n^h + F_n^d is never tension
    let fn_d = if p.limit_damping { fn_raw.min(-normal.fn_h) } else { fn_raw };
    DashpotForce { fn_d, fs_d: DVec3::ZERO }
}
