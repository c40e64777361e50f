//! Hertz normal force, spec `hertz-pfc.txt` eqs (4)–(6) and the activity rule.
//! Twin of `shaders/contact/normal.wgsl`.

use super::geometry::ContactGeometry;
use super::params::PairParams;

/// Normal part of a Hertz contact.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NormalForce {
    /// F_n^h in the spec's sign (tension positive): −h_n |g_c|^α_h when overlapping, eq (4).
    pub fn_h: f64,
    /// h_n, eq (5).
    pub h_n: f64,
    /// Normal tangent stiffness k_n = α_h h_n δ^(α_h−1), eq (13).
    pub k_n: f64,
    /// Overlap δ_n = max(−g_c, 0).
    pub overlap: f64,
}

impl NormalForce {
    /// (|F_n^h|, its strain energy h_n δ^(α_h+1)/(α_h+1) = |F_n^h| δ/(α_h+1)) for
    /// `energy::normal_step_work`.
    pub fn spring(&self, alpha: f64) -> (f64, f64) {
        (-self.fn_h, -self.fn_h * self.overlap / (alpha + 1.0))
    }
}

/// Activity rule: active iff the surface gap g_s = g_c − g_r ≤ 0.
pub fn contact_active(p: &PairParams, g: &ContactGeometry) -> bool {
    g.gap - p.rgap <= 0.0
}

/// h_n = 2 G √(2 R̄) / (3 (1 − ν)), eq (5).
pub fn hertz_coefficient(p: &PairParams, r_bar: f64) -> f64 {
    2.0 * p.hz_shear * (2.0 * r_bar).sqrt() / (3.0 * (1.0 - p.hz_poiss))
}

/// Eq (4) with the tangent stiffness of eq (13).
pub fn hertz_normal(p: &PairParams, g: &ContactGeometry) -> NormalForce {
    let h_n = hertz_coefficient(p, g.r_bar);
    let overlap = (-g.gap).max(0.0);
    let fn_h = if overlap > 0.0 { -h_n * overlap.powf(p.hz_alpha) } else { 0.0 };
    let k_n = if overlap > 0.0 { p.hz_alpha * h_n * overlap.powf(p.hz_alpha - 1.0) } else { 0.0 };
    NormalForce { fn_h, h_n, k_n, overlap }
}
