//! The `hertz` preset of spec `hertz-pfc.txt`: geometry → normal → shear → dashpot → energies.
//! Twin of `shaders/contact/hertz.wgsl`.


use super::damping::dashpot;
use super::energy::{dashpot_history, dashpot_work, normal_step_work, power_spring, previous_overlap, strain_energy};
use super::geometry::{contact_torques, ContactGeometry};
use super::history::History;
use super::output::ContactOutput;
use super::normal::hertz_normal;
use super::params::PairParams;
use super::tangential::hertz_shear;

/// One step of an active Hertz contact. The contact carries no moment (eq 1): torques come
/// only from the shear force acting at the contact point.
pub fn hertz_contact(p: &PairParams, g: &ContactGeometry, h: &History, dt: f64) -> ContactOutput {
    let normal = hertz_normal(p, g);
    let shear = hertz_shear(p, g, &normal, h, dt);
    let damp = dashpot(p, g, &normal, shear.k_s, shear.slip);
    let force_j = g.normal * -(normal.fn_h + damp.fn_d) + shear.fs + damp.fs_d;
    let (torque_i, torque_j) = contact_torques(g, force_j);
    let history = History { shear: shear.fs, normal_force: -normal.fn_h, impact_velocity: 0.0, established: 1.0, shear_compliance: shear.compliance, ..History::NEW };
    let strain = strain_energy(p, &normal, shear.fs, shear.compliance);
    if !p.energy_tracking {
        return ContactOutput::untracked(force_j, torque_i, torque_j, history, strain);
    }
    let dashpot_work = dashpot_work(g, &damp, h, dt);
    let stepping = normal_step_work(g, power_spring(normal.h_n, p.hz_alpha, previous_overlap(p, g, dt)), normal.spring(p.hz_alpha), dt);
    let history = History { dashpot: dashpot_history(g, &damp), ..history };
    ContactOutput { force_j, torque_i, torque_j, history, strain, surface: 0.0, slip_work: shear.slip_work, dashpot_work, stiffness_work: shear.stiffness_work + stepping }
}
