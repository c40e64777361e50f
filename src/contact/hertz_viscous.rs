//! The `hertz_viscous` preset of `hertz-woo.rst`: Hertz elastic force plus Antypov's viscous
//! force α(ε)√(m* k_n0) δ^{1/4} δ̇ (speed-independent restitution ε), optional `noAttraction`,
//! Coulomb friction with a Mindlin tangential spring k_t = 8G*√(R*δ) (no tangential damping:
//! the spec defines none), rolling friction with μ_r = `rolling_fric` (off by default).
//! Twin of `shaders/contact/hertz_viscous.wgsl`.

use super::damping::DashpotForce;
use super::energy::{dashpot_history, dashpot_work, normal_step_work, power_spring, previous_overlap};
use super::geometry::{contact_torques, ContactGeometry};
use super::history::History;
use super::output::ContactOutput;
use super::normal_viscous::viscous_normal;
use super::params::PairParams;
use super::rolling::rolling_resistance;
use super::tangential_mindlin::{mindlin_shear, mindlin_shear_stiffness};

/// One step of an active `hertz_viscous` contact; |F_n| is the total normal force.
pub fn hertz_viscous_contact(p: &PairParams, g: &ContactGeometry, h: &History, dt: f64) -> ContactOutput {
    let normal = viscous_normal(p, g);
    let fn_total = normal.fn_e + normal.fn_d;
    let fn_mag = (-fn_total).max(0.0);
    let k_t = mindlin_shear_stiffness(p, g.r_bar, normal.overlap);
    let shear = mindlin_shear(p, g, k_t, 0.0, fn_mag, h, dt);
    let roll = rolling_resistance(p, g, fn_mag, h.normal_force, dt);
    let force_j = g.normal * -fn_total + shear.fs;
    let (contact_i, contact_j) = contact_torques(g, force_j);
    let (torque_i, torque_j) = (contact_i + roll.torque_i, contact_j + roll.torque_j);
    let history = History { shear: shear.spring, normal_force: fn_mag, impact_velocity: 0.0, established: 1.0, shear_compliance: shear.compliance, ..History::NEW };
    let strain = normal.strain + shear.strain;
    if !p.energy_tracking {
        return ContactOutput::untracked(force_j, torque_i, torque_j, history, strain);
    }
    let damp = DashpotForce { fn_d: normal.fn_d, fs_d: shear.fs_d };
    let history = History { dashpot: dashpot_history(g, &damp), ..history };
    let dashpot = dashpot_work(g, &damp, h, dt);
    let stepping = normal_step_work(g, power_spring(normal.k_n0, 1.5, previous_overlap(p, g, dt)), (-normal.fn_e, normal.strain), dt);
    ContactOutput { force_j, torque_i, torque_j, history, strain, surface: 0.0, slip_work: shear.slip_work + roll.work, dashpot_work: dashpot, stiffness_work: shear.stiffness_work + stepping }
}
