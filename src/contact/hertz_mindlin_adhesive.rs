//! `hertz_mindlin` with JKR or DMT adhesion (EDEM's "Hertz–Mindlin with JKR", LAMMPS
//! GRANULAR `normal jkr`/`dmt`): the Hertz spring is replaced by the adhesive one, the Tsuji
//! dashpot and the Mindlin shear spring take their stiffness from the contact radius, and the
//! Coulomb and rolling caps use the adhesion-corrected load |N + 2 F_pulloff|.
//! Twin of `shaders/contact/hertz_mindlin_adhesive.wgsl`.

use super::adhesion::{adhesive_part, dmt_pulloff_force, jkr_adhesive, jkr_pulloff_force, Adhesive};
use super::damping::DashpotForce;
use super::energy::{dashpot_history, dashpot_work, normal_step_work, previous_overlap};
use super::geometry::{contact_torques, ContactGeometry};
use super::history::History;
use super::normal_mindlin::{mindlin_spring, TSUJI_FACTOR};
use super::output::ContactOutput;
use super::params::{Adhesion, PairParams};
use super::rolling::rolling_resistance;
use super::tangential_mindlin::{mindlin_shear, mindlin_shear_damping};

/// The adhesive spring at overlap δ = −g (δ < 0 for a JKR neck held apart): (its adhesive
/// part F_a, U_a; the contact radius a: JKR's, or Hertz's √(R*δ) for DMT; the pull-off force).
pub fn adhesive_spring(p: &PairParams, g: &ContactGeometry) -> (Adhesive, f64, f64) {
    let r_star = 0.5 * g.r_bar;
    if p.adhesion == Adhesion::Jkr {
        let (adhesive, a) = jkr_adhesive(p.e_star(), r_star, p.surface_energy, -g.gap);
        return (adhesive, a, jkr_pulloff_force(p.surface_energy, r_star));
    }
    (adhesive_part(p, g, g.gap), (r_star * (-g.gap).max(0.0)).sqrt(), dmt_pulloff_force(p.surface_energy, r_star))
}

/// One step of an active JKR or DMT contact. The normal force is the Hertz spring less the
/// adhesive pull F_a plus the Tsuji dashpot with k_n = 2E*a; the shear spring has k_t = 8G*a;
/// both caps use |N + 2F_c| with N the total normal force (compression positive). Strain
/// energy: the Hertz spring's and the shear spring's; surface energy: U_a.
#[inline(always)]
pub fn hertz_mindlin_adhesive_contact(p: &PairParams, g: &ContactGeometry, h: &History, dt: f64) -> ContactOutput {
    let (adhesive, a, pulloff) = adhesive_spring(p, g);
    let (_, hertz, hertz_strain) = mindlin_spring(p, g.r_bar, (-g.gap).max(0.0));
    let k_n = 2.0 * p.e_star() * a;
    let fn_e = adhesive.force - hertz;
    let eta_n = -TSUJI_FACTOR * p.tsuji_alpha() * (k_n * g.m_c).sqrt();
    let fn_d = eta_n * g.vel_normal;
    let fn_total = fn_e + fn_d;
    // the step's spring work against its energies: the Hertz part as hertz_mindlin books it,
    // the adhesive part from the previous step's gap while the bond held then; formed while its
    // inputs are at hand, so that the GPU twin's shear law runs with fewer values live
    let stepping = if p.energy_tracking {
        let (_, hertz_before, hertz_strain_before) = mindlin_spring(p, g.r_bar, previous_overlap(p, g, dt));
        let before = previous_adhesive(p, g, h, dt);
        normal_step_work(g, (hertz_before - before.force, hertz_strain_before + before.energy), (hertz - adhesive.force, hertz_strain + adhesive.energy), dt)
    } else {
        0.0
    };
    let load = (2.0 * pulloff - fn_total).abs();
    let k_t = 8.0 * p.g_star * a;
    let eta_t = mindlin_shear_damping(p, eta_n);
    let shear = mindlin_shear(p, g, k_t, eta_t, load, h, dt);
    let roll = rolling_resistance(p, g, load, h.normal_force, dt);
    let force_j = g.normal * -fn_total + shear.fs;
    let (contact_i, contact_j) = contact_torques(g, force_j);
    let (torque_i, torque_j) = (contact_i + roll.torque_i, contact_j + roll.torque_j);
    let history = History { shear: shear.spring, normal_force: load, impact_velocity: 0.0, established: 1.0, shear_compliance: shear.compliance, ..History::NEW };
    let strain = hertz_strain + shear.strain;
    if !p.energy_tracking {
        return ContactOutput { surface: adhesive.energy, ..ContactOutput::untracked(force_j, torque_i, torque_j, history, strain) };
    }
    let damp = DashpotForce { fn_d, fs_d: shear.fs_d };
    let history = History { dashpot: dashpot_history(g, &damp), ..history };
    let dashpot = dashpot_work(g, &damp, h, dt);
    ContactOutput { force_j, torque_i, torque_j, history, strain, surface: adhesive.energy, slip_work: shear.slip_work + roll.work, dashpot_work: dashpot, stiffness_work: shear.stiffness_work + stepping }
}

/// The adhesive part in the previous step, at its gap g − ġΔt, for a contact that was bonded
/// then (`h.established` ≠ 0); zero for a new one.
pub fn previous_adhesive(p: &PairParams, g: &ContactGeometry, h: &History, dt: f64) -> Adhesive {
    if h.established == 0.0 {
        return Adhesive::default();
    }
    adhesive_part(p, g, g.gap - g.vel_normal * dt)
}
