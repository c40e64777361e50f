//! Linear (Hooke) normal force of spec `hooke-aspherix.txt`: stiffness from `elasticStiffness`
//! or `characteristicVelocity`, damping from the restitution coefficient (optionally from the
//! local Stokes number, `viscous`), `limitForce`. Twin of `shaders/contact/normal_hooke.wgsl`.

use super::geometry::ContactGeometry;
use super::params::PairParams;

/// Normal part of a Hooke contact (spec sign: tension positive).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct HookeNormal {
    /// Total normal force F_n = −k_n δ + γ_n ġ, capped at 0 with `limitForce`.
    pub fn_total: f64,
    /// Elastic part −k_n δ.
    pub fn_spring: f64,
    /// Dashpot part actually applied, F_n − spring part (after `limitForce`).
    pub fn_d: f64,
    /// k_n.
    pub k_n: f64,
    /// γ_n.
    pub gamma_n: f64,
    /// Overlap δ = max(−g_c, 0).
    pub overlap: f64,
}

/// k_n: `elasticStiffness`, or from v_0 = `characteristicVelocity` (when
/// `useCharacteristicVelocity` is on or `elasticStiffness` is 0):
/// k_n = 16/15 √r* Y* (15 m* v_0² / (16 √r* Y*))^(1/5), r* = R̄/2 (ball–wall: R_i), m* = m_c.
pub fn hooke_stiffness(p: &PairParams, g: &ContactGeometry) -> f64 {
    let use_v0 = (p.use_characteristic_velocity && p.characteristic_velocity > 0.0) || p.elastic_stiffness <= 0.0;
    if !use_v0 {
        return p.elastic_stiffness;
    }
    let r_star = 0.5 * g.r_bar;
    let y_star = p.e_star();
    let v0 = p.characteristic_velocity;
    let sqrt_r = r_star.sqrt();
    16.0 / 15.0 * sqrt_r * y_star * (15.0 * g.m_c * v0 * v0 / (16.0 * sqrt_r * y_star)).powf(0.2)
}

/// γ = √(4 m* k / (1 + (π/ln e)²)): 0 for e ≥ 1, critical 2√(m* k) for e ≤ 0.
pub fn restitution_damping(m_c: f64, k: f64, e: f64) -> f64 {
    if e >= 1.0 {
        return 0.0;
    }
    if e <= 0.0 {
        return 2.0 * (m_c * k).sqrt();
    }
    let q = std::f64::consts::PI / e.ln();
    (4.0 * m_c * k / (1.0 + q * q)).sqrt()
}

/// Restitution with `viscous` (Legendre et al. 2005): e = e_max exp(−c_S/St), St = m* v / (6π μ_f r*²),
/// v the impact speed. (The spec prints log e = log e_max + c_S/St, which would raise e above
/// e_max as St falls; the physics has the minus sign.) Without `viscous`: `coefficientRestitution`.
pub fn hooke_restitution(p: &PairParams, g: &ContactGeometry, v_impact: f64) -> f64 {
    if !p.viscous {
        return p.damping_restitution();
    }
    let r_star = 0.5 * g.r_bar;
    let stokes = g.m_c * v_impact / (6.0 * std::f64::consts::PI * p.fluid_viscosity * r_star * r_star);
    if stokes > 0.0 { p.maximum_restitution * (-p.critical_stokes / stokes).exp() } else { 0.0 }
}

/// F_n = −k_n δ + γ_n ġ (spec sign; physics: k_n δ − γ_n v_n repulsive); `limitForce` or
/// `limit_damping`: F_n ≤ 0.
pub fn hooke_normal(p: &PairParams, g: &ContactGeometry, v_impact: f64) -> HookeNormal {
    let k_n = hooke_stiffness(p, g);
    let e = hooke_restitution(p, g, v_impact);
    let gamma_n = restitution_damping(g.m_c, k_n, e);
    let overlap = (-g.gap).max(0.0);
    let fn_spring = -k_n * overlap;
    let fn_free = fn_spring + gamma_n * g.vel_normal;
    let fn_total = if p.limit_force || p.limit_damping { fn_free.min(0.0) } else { fn_free };
    let fn_d = fn_total - fn_spring;
    HookeNormal { fn_total, fn_spring, fn_d, k_n, gamma_n, overlap }
}
