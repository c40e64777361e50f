//! Mindlin tangential force with history, spec `hertz-mindlin-musen.txt` ("Tangential force").
//! Twin of `shaders/contact/tangential_mindlin.wgsl`.
//!
//! The history holds the SPRING force only: the damping force of a step is added to the force
//! applied but not to the stored spring (musen stores the damped total, so each step's damping
//! would be fed back into the next step's spring). In a slipping step the whole force is
//! Coulomb friction: the spring is set to the capped force and no damping force is reported.

use glam::DVec3;

use super::energy::{compliance, stiffness_work};
use super::geometry::ContactGeometry;
use super::history::History;
use super::params::PairParams;
use super::tangential::rotate_history;

/// Tangential part of a contact with a Mindlin spring.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MindlinShear {
    /// Total tangential force on j (spring + damping, after the Coulomb cap).
    pub fs: DVec3,
    /// Spring force on j, the history of the next step.
    pub spring: DVec3,
    /// Tangential damping force on j (zero while slipping).
    pub fs_d: DVec3,
    /// k_t used this step.
    pub k_t: f64,
    /// Its compliance 1/k_t (`energy::compliance`), which the history keeps.
    pub compliance: f64,
    /// |spring + damping| exceeded μ|F_n|.
    pub slip: bool,
    /// Energy dissipated by slip this step (trapezoidal, as hertz-pfc eq 16).
    pub slip_work: f64,
    /// Energy the spring lost to its stiffness change this step (k_t follows the overlap).
    pub stiffness_work: f64,
    /// Strain energy of the spring after this step, ½|spring|²/k_t (0 without a spring).
    pub strain: f64,
}

/// k_t = 8 G* √(R* ξ), R* = R̄/2.
pub fn mindlin_shear_stiffness(p: &PairParams, r_bar: f64, overlap: f64) -> f64 {
    8.0 * p.g_star * (0.5 * r_bar * overlap).sqrt()
}

/// η_t = −1.8257 α √(k_t M*) of the spec, formed as η_n √(4G*/E*) (k_t/k_n = 4G*/E*,
/// `params::mindlin_damping_ratio`); `eta_n` = `MindlinNormal::eta_n`.
pub fn mindlin_shear_damping(p: &PairParams, eta_n: f64) -> f64 {
    eta_n * p.mindlin_damping_ratio()
}

/// Old spring projected into the new plane (magnitude kept), increment −k_t v_t Δt, damping
/// −η_t v_t, Coulomb cap |F_t| ≤ μ |F_n| (`fn_mag` = |F_n|), slip work.
#[inline(always)]
pub fn mindlin_shear(p: &PairParams, g: &ContactGeometry, k_t: f64, eta_t: f64, fn_mag: f64, h: &History, dt: f64) -> MindlinShear {
    let fs_old = rotate_history(h.shear, g.normal);
    let increment = g.vel_shear * dt;
    let spring_trial = fs_old - increment * k_t;
    let damp = g.vel_shear * -eta_t;
    let total = spring_trial + damp;
    let strength = p.fric * fn_mag;
    // compared squared: the length is formed only for a slipping contact
    let slip = total.length_squared() > strength * strength;
    let fs = if slip { total * (strength / total.length()) } else { total };
    let spring = if slip { fs } else { spring_trial };
    let fs_d = if slip { DVec3::ZERO } else { damp };
    let c_t = compliance(k_t);
    let strain = 0.5 * spring.length_squared() * c_t;
    if !p.energy_tracking {
        return MindlinShear { fs, spring, fs_d, k_t, compliance: c_t, slip, slip_work: 0.0, stiffness_work: 0.0, strain };
    }
    // the slip part of the increment: the increment less the spring's own stretch, which is
    // the whole increment while a spring sticks (no slip work then)
    let slip_work = if slip || k_t <= 0.0 {
        let elastic = if k_t <= 0.0 { DVec3::ZERO } else { (fs_old - spring) * c_t };
        -0.5 * (fs_old + spring).dot(increment - elastic)
    } else {
        0.0
    };
    let stiffness_work = stiffness_work(h.shear, h.shear_compliance, fs_old, c_t);
    MindlinShear { fs, spring, fs_d, k_t, compliance: c_t, slip, slip_work, stiffness_work, strain }
}
