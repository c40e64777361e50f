//! Viscoelastic Hertz normal force of `hertz-woo.rst` (Antypov & Elliott 2011).
//! Twin of `shaders/contact/normal_viscous.wgsl`.
//!
//! P_n = k_n0 δ^{3/2} + α(ε)√(m* k_n0) δ^{1/4} δ̇ (compression positive in woo), k_n0 = 4/3 E*√R*,
//! α(ε) = −√5 ln ε/√(ln²ε + π²). In Talus' sign (tension positive, ġ = −δ̇):
//! fn_e = −k_n0 δ^{3/2}, fn_d = α√(m* k_n0) δ^{1/4} ġ; `noAttraction` caps fn_e + fn_d ≤ 0.

use super::geometry::ContactGeometry;
use super::params::PairParams;

/// Normal part of a `hertz_viscous` contact (spec sign: tension positive).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ViscousNormal {
    /// Elastic force −k_n0 δ^{3/2} (≤ 0).
    pub fn_e: f64,
    /// Viscous force α√(m* k_n0) δ^{1/4} ġ, capped at −fn_e with `noAttraction` or `limit_damping`.
    pub fn_d: f64,
    /// k_n0 = 4/3 E* √R*.
    pub k_n0: f64,
    /// Overlap δ = max(−g_c, 0).
    pub overlap: f64,
    /// Elastic energy 2/5 k_n0 δ^{5/2}.
    pub strain: f64,
}

/// α(ε) = −√5 ln ε/√(ln²ε + π²) (≥ 0); 0 for ε ≥ 1; ε is floored at 1e-20.
pub fn antypov_alpha(e: f64) -> f64 {
    let l = e.max(1e-20).ln();
    if e >= 1.0 { 0.0 } else { -(5.0f64).sqrt() * l / (l * l + std::f64::consts::PI * std::f64::consts::PI).sqrt() }
}

/// k_n0 = 4/3 E* √R*, R* = R̄/2: the Hertz law F = k_n0 δ^{3/2} of `hertz_viscous` and
/// `hertz_mindlin` (whose 2/3 ξ k_n with k_n = 2E*√(ξR*) is the same force).
pub fn hertz_k_n0(p: &PairParams, r_bar: f64) -> f64 {
    4.0 / 3.0 * p.e_star() * (0.5 * r_bar).sqrt()
}

pub fn viscous_normal(p: &PairParams, g: &ContactGeometry) -> ViscousNormal {
    let overlap = (-g.gap).max(0.0);
    let k_n0 = hertz_k_n0(p, g.r_bar);
    let fn_e = if overlap > 0.0 { -k_n0 * overlap * overlap.sqrt() } else { 0.0 };
    let visc = if overlap > 0.0 { antypov_alpha(p.damping_restitution()) * (g.m_c * k_n0).sqrt() * overlap.sqrt().sqrt() } else { 0.0 };
    let fn_raw = visc * g.vel_normal;
    let fn_d = if p.no_attraction || p.limit_damping { fn_raw.min(-fn_e) } else { fn_raw };
    let strain = 0.4 * overlap * -fn_e;
    ViscousNormal { fn_e, fn_d, k_n0, overlap, strain }
}
