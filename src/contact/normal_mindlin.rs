//! Hertz normal force with Tsuji damping, spec `hertz-mindlin-musen.txt` ("Normal force").
//! Twin of `shaders/contact/normal_mindlin.wgsl`.
//!
//! k_n = 2E*√(ξR*), F_n = 2/3 ξ k_n = 4/3 E*√R* ξ^{3/2}; damping 1.8257 α √(k_n M*) |v_n| with
//! α = ln e/√(π² + ln² e). Since √k_n = √(3/2 k_n0) ξ^{1/4} (k_n0 = 4/3 E*√R*), this is
//! 1.8257·√(3/2) |ln e|/√(π²+ln²e) √(M* k_n0) ξ^{1/4} ξ̇ = 2.23603… ≈ √5 (= 2.23607): Antypov's
//! α(ε)√(m* k_n0) δ^{1/4} δ̇ of `hertz-woo.rst` to 2e-5 (1.8257 is √(10/3) = 1.825742 rounded).

use super::geometry::ContactGeometry;
use super::params::PairParams;

/// Tsuji's fit factor of the musen spec.
pub const TSUJI_FACTOR: f64 = 1.8257;

/// Normal part of a `hertz_mindlin` contact (spec sign: tension positive).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MindlinNormal {
    /// Elastic force −2/3 ξ k_n (≤ 0).
    pub fn_e: f64,
    /// Damping force η_n ġ (ġ > 0 separating), η_n = −1.8257 α √(k_n M*) ≥ 0; with
    /// `limit_damping` capped at −fn_e (the total normal force is never attractive).
    pub fn_d: f64,
    /// η_n = −1.8257 α √(k_n M*) ≥ 0 (`tangential_mindlin::mindlin_shear_damping` scales it).
    pub eta_n: f64,
    /// k_n = 2E*√(ξR*).
    pub k_n: f64,
    /// Overlap ξ = max(−g_c, 0).
    pub overlap: f64,
    /// Elastic energy ∫F dξ = 2/5 (2/3 ξ k_n) ξ.
    pub strain: f64,
}

/// α = ln e/√(π² + ln² e) (≤ 0); 0 for e ≥ 1 (defined beside `PairParams`, which forms it
/// once per pair).
pub use super::params::tsuji_alpha;

/// The Hertz spring at overlap ξ (R* = `r_bar`/2): (k_n = 2E*√(ξR*), F = 2/3 ξ k_n =
/// 4/3 E*√R* ξ^{3/2} with one square root, its energy 2/5 F ξ); zeros for ξ ≤ 0. Also the
/// previous step's spring of the stepping work (`energy::normal_step_work`).
pub fn mindlin_spring(p: &PairParams, r_bar: f64, overlap: f64) -> (f64, f64, f64) {
    if overlap <= 0.0 {
        return (0.0, 0.0, 0.0);
    }
    let k_n = 2.0 * p.e_star() * (overlap * (0.5 * r_bar)).sqrt();
    let force = 2.0 / 3.0 * overlap * k_n;
    (k_n, force, 0.4 * overlap * force)
}

/// `alpha` = Tsuji's α of the pair (`PairParams::tsuji_alpha`, formed once per pair).
pub fn mindlin_normal(p: &PairParams, g: &ContactGeometry, alpha: f64) -> MindlinNormal {
    let overlap = (-g.gap).max(0.0);
    let (k_n, force, strain) = mindlin_spring(p, g.r_bar, overlap);
    let fn_e = -force;
    let eta_n = -TSUJI_FACTOR * alpha * (k_n * g.m_c).sqrt();
    let fn_raw = eta_n * g.vel_normal;
    let fn_d = if p.limit_damping { fn_raw.min(-fn_e) } else { fn_raw };
    MindlinNormal { fn_e, fn_d, eta_n, k_n, overlap, strain }
}
