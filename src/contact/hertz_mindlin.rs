//! The `hertz_mindlin` preset of `hertz-mindlin-musen.txt`: Hertz normal force with Tsuji
//! damping, Mindlin tangential spring with damping and Coulomb cap, rolling friction.
//! Twin of `shaders/contact/hertz_mindlin.wgsl`.

use super::damping::DashpotForce;
use super::energy::{dashpot_history, dashpot_work, normal_step_work, previous_overlap};
use super::geometry::{contact_torques, ContactGeometry};
use super::history::History;
use super::output::ContactOutput;
use super::normal_mindlin::{mindlin_normal, mindlin_spring};
use super::params::PairParams;
use super::rolling::rolling_resistance;
use super::tangential_mindlin::{mindlin_shear, mindlin_shear_damping, mindlin_shear_stiffness};

/// One step of an active `hertz_mindlin` contact. |F_n| (Coulomb limit and rolling torque) is
/// the total normal force, damping included, as in the spec; never negative.
#[inline(always)]
pub fn hertz_mindlin_contact(p: &PairParams, g: &ContactGeometry, h: &History, dt: f64) -> ContactOutput {
    let alpha = p.tsuji_alpha();
    let normal = mindlin_normal(p, g, alpha);
    // formed here as the shader forms it (fewer registers live there through the shear law)
    let stepping = if p.energy_tracking {
        let (_, force_before, strain_before) = mindlin_spring(p, g.r_bar, previous_overlap(p, g, dt));
        normal_step_work(g, (force_before, strain_before), (-normal.fn_e, normal.strain), dt)
    } else {
        0.0
    };
    let fn_total = normal.fn_e + normal.fn_d;
    let fn_mag = (-fn_total).max(0.0);
    let k_t = mindlin_shear_stiffness(p, g.r_bar, normal.overlap);
    let eta_t = mindlin_shear_damping(p, normal.eta_n);
    let shear = mindlin_shear(p, g, k_t, eta_t, fn_mag, h, dt);
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
    ContactOutput { force_j, torque_i, torque_j, history, strain, surface: 0.0, slip_work: shear.slip_work + roll.work, dashpot_work: dashpot, stiffness_work: shear.stiffness_work + stepping }
}
