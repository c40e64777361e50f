//! The `hysteretic` preset of spec `hysteretic-pfc.txt`: the Hertz elastic group of `hertz`
//! (normal force and shear with history) plus the hysteretic normal dashpot χ δ^α δ̇.
//! Twin of `shaders/contact/hysteretic.wgsl`.

use super::damping_hysteretic::{hysteretic_dashpot, impact_speed};
use super::energy::{dashpot_history, dashpot_work, normal_step_work, power_spring, previous_overlap, strain_energy};
use super::geometry::{contact_torques, ContactGeometry};
use super::history::History;
use super::output::ContactOutput;
use super::normal::hertz_normal;
use super::params::PairParams;
use super::tangential::hertz_shear;

/// One step of an active hysteretic contact, eqs (2)–(9). No moment (eq 2).
pub fn hysteretic_contact(p: &PairParams, g: &ContactGeometry, h: &History, dt: f64) -> ContactOutput {
    let normal = hertz_normal(p, g);
    let shear = hertz_shear(p, g, &normal, h, dt);
    let v_impact = impact_speed(g, h);
    let damp = hysteretic_dashpot(p, g, &normal, v_impact, dt);
    let force_j = g.normal * -(normal.fn_h + damp.fn_d) + shear.fs;
    let (torque_i, torque_j) = contact_torques(g, force_j);
    let history = History { shear: shear.fs, normal_force: -normal.fn_h, impact_velocity: v_impact, established: 1.0, shear_compliance: shear.compliance, ..History::NEW };
    let strain = strain_energy(p, &normal, shear.fs, shear.compliance);
    if !p.energy_tracking {
        return ContactOutput::untracked(force_j, torque_i, torque_j, history, strain);
    }
    let dashpot_work = dashpot_work(g, &damp, h, dt);
    let stepping = normal_step_work(g, power_spring(normal.h_n, p.hz_alpha, previous_overlap(p, g, dt)), normal.spring(p.hz_alpha), dt);
    let history = History { dashpot: dashpot_history(g, &damp), ..history };
    ContactOutput { force_j, torque_i, torque_j, history, strain, surface: 0.0, slip_work: shear.slip_work, dashpot_work, stiffness_work: shear.stiffness_work + stepping }
}
