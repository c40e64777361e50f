//! Linear tangential spring with history (hooke-aspherix `tangential_history` convention):
//! history rotated into the current plane, increment k_t v_t Δt, Coulomb cap, tangential
//! damping, slip work of `hertz-pfc.txt` eq (16). Twin of `shaders/contact/tangential_linear.wgsl`.

use glam::DVec3;

use super::energy::compliance;
use super::geometry::ContactGeometry;
use super::history::History;
use super::params::PairParams;
use super::tangential::rotate_history;

/// Tangential part of a linear contact.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LinearShear {
    /// Spring (history) force on j after the Coulomb cap.
    pub fs: DVec3,
    /// Tangential dashpot force on j (zero while slipping).
    pub fs_d: DVec3,
    /// k_t.
    pub k_t: f64,
    /// Its compliance 1/k_t (`energy::compliance`), which the history keeps.
    pub compliance: f64,
    /// Slip state.
    pub slip: bool,
    /// Energy dissipated by slip this step, eq (16) of hertz-pfc.
    pub slip_work: f64,
}

/// k_t = k_n, or 2/7 k_n with `ktToKnUser`.
pub fn linear_shear_stiffness(p: &PairParams, k_n: f64) -> f64 {
    if p.kt_to_kn_user { 2.0 / 7.0 * k_n } else { k_n }
}

/// Trial F* = F₀ − k_t v_t Δt (F₀ rotated into the current plane); cap |F_s| ≤ μ|F_n| with
/// |F_n| the compressive part of the total normal force `fn_total` (spec sign); while slipping
/// the history force is rescaled onto the cone and there is no tangential dashpot, otherwise
/// F_s^d = −γ_t v_t. With `limit_damping` the cap is tested on the total F* + F_s^d (LAMMPS
/// `granular`): while slipping the spring becomes the capped total and there is no dashpot.
pub fn linear_shear(p: &PairParams, g: &ContactGeometry, k_t: f64, gamma_t: f64, fn_total: f64, h: &History, dt: f64) -> LinearShear {
    let fs_old = rotate_history(h.shear, g.normal);
    let increment = g.vel_shear * dt;
    let trial = fs_old - increment * k_t;
    let damp = g.vel_shear * -gamma_t;
    let capped = if p.limit_damping { trial + damp } else { trial };
    let strength = p.fric * (-fn_total).max(0.0);
    let capped_len = capped.length();
    let slip = capped_len > strength;
    let fs = if slip && capped_len > 0.0 { capped * (strength / capped_len) } else { trial };
    let fs_d = if slip { DVec3::ZERO } else { damp };
    let c_t = compliance(k_t);
    if !p.energy_tracking {
        return LinearShear { fs, fs_d, k_t, compliance: c_t, slip, slip_work: 0.0 };
    }
    let elastic = (fs_old - fs) * c_t;
    let slip_increment = increment - elastic;
    let slip_work = -0.5 * (fs_old + fs).dot(slip_increment);
    LinearShear { fs, fs_d, k_t, compliance: c_t, slip, slip_work }
}
