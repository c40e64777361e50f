//! Hertz shear force with history, spec `hertz-pfc.txt` eqs (7)–(12) and the slip work of eq (16).
//! Twin of `shaders/contact/tangential.wgsl`.

use glam::DVec3;

use super::energy::{compliance, stiffness_work};
use super::geometry::ContactGeometry;
use super::history::History;
use super::normal::NormalForce;
use super::params::PairParams;

/// Shear part of a Hertz contact.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ShearForce {
    /// Hertz shear force F_s^h on j after the Coulomb cap, eq (11).
    pub fs: DVec3,
    /// Tangent shear stiffness k_s, eq (8).
    pub k_s: f64,
    /// Its compliance 1/k_s (`energy::compliance`), which the history keeps.
    pub compliance: f64,
    /// Slip state s, eq (12).
    pub slip: bool,
    /// Energy dissipated by slip this step (≥ 0), eq (16).
    pub slip_work: f64,
    /// Energy the spring lost to its stiffness change this step (`energy::stiffness_work`).
    pub stiffness_work: f64,
}

/// k_s = 2(1−ν)/(2−ν) α_h h_n^(1/α_h) (F_n^h)^((α_h−1)/α_h), eq (8); `fn_mag` = |F_n^h|.
pub fn shear_stiffness(p: &PairParams, h_n: f64, fn_mag: f64) -> f64 {
    if fn_mag <= 0.0 {
        return 0.0;
    }
    2.0 * (1.0 - p.hz_poiss) / (2.0 - p.hz_poiss) * p.hz_alpha * h_n.powf(1.0 / p.hz_alpha) * fn_mag.powf((p.hz_alpha - 1.0) / p.hz_alpha)
}

/// Turn the stored shear force into the current contact plane, keeping its magnitude (the
/// scale from squared lengths: one square root).
pub fn rotate_history(fs_old: DVec3, normal: DVec3) -> DVec3 {
    let projected = fs_old - normal * fs_old.dot(normal);
    let len2_new = projected.length_squared();
    if len2_new > 0.0 {
        projected * (fs_old.length_squared() / len2_new).sqrt()
    } else {
        DVec3::ZERO
    }
}

/// Eqs (7)–(12) and (16), from the shear force and |F_n^h| of the previous step in `h`.
pub fn hertz_shear(p: &PairParams, g: &ContactGeometry, normal: &NormalForce, h: &History, dt: f64) -> ShearForce {
    let fn_mag = -normal.fn_h;
    let k_s = shear_stiffness(p, normal.h_n, fn_mag);
    let fs_rotated = rotate_history(h.shear, g.normal);
    // eq (9): scale the old shear force down with the stiffness on normal unloading (M_s = 1)
    let fn_old = h.normal_force;
    let k_s_old = shear_stiffness(p, normal.h_n, fn_old);
    let scale = if p.hz_mode == 1 && fn_mag < fn_old && k_s_old > 0.0 { k_s / k_s_old } else { 1.0 };
    let fs_old = fs_rotated * scale;
    // eq (7): trial force; the spring on j resists j's shear displacement
    let increment = g.vel_shear * dt;
    let trial = fs_old - increment * k_s;
    // eqs (10)–(12): Coulomb cap and slip state
    let strength = p.fric * fn_mag;
    let trial_len = trial.length();
    let slip = trial_len > strength;
    let fs = if slip && trial_len > 0.0 { trial * (strength / trial_len) } else { trial };
    let c_s = compliance(k_s);
    if !p.energy_tracking {
        return ShearForce { fs, k_s, compliance: c_s, slip, slip_work: 0.0, stiffness_work: 0.0 };
    }
    // eq (16): slip part of the increment = total − elastic part
    let elastic = (fs_old - fs) * c_s;
    let slip_increment = increment - elastic;
    let slip_work = -0.5 * (fs_old + fs).dot(slip_increment);
    let stiffness_work = stiffness_work(h.shear, h.shear_compliance, fs_old, c_s);
    ShearForce { fs, k_s, compliance: c_s, slip, slip_work, stiffness_work }
}

/// What a shear spring still loaded when its contact ends gives up in the step it ends: its
/// stored ½|F₀|²/k₀ leaves the strain energy, less the work it does in the half step it still
/// acts for (the second half of the trapezoid −½(F₀ + F)·Δs that an active step books, with
/// F = 0 once released: −½ F₀·v_s Δt, F₀ turned into the current plane). Booked as slip, the
/// spring's last slip; without it each contact's end would take that energy off the total.
pub fn released_spring_work(g: &ContactGeometry, h: &History, dt: f64) -> f64 {
    0.5 * h.shear.length_squared() * h.shear_compliance - 0.5 * rotate_history(h.shear, g.normal).dot(g.vel_shear) * dt
}
