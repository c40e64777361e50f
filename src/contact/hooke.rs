//! The `hooke` preset of spec `hooke-aspherix.txt`: linear normal spring–dashpot + linear
//! tangential spring with history, Coulomb cap and tangential damping.
//! Twin of `shaders/contact/hooke.wgsl`.

use glam::DVec3;

use super::damping::DashpotForce;
use super::damping_hysteretic::impact_speed;
use super::energy::{dashpot_history, dashpot_work, normal_step_work, power_spring, previous_overlap};
use super::geometry::{contact_torques, ContactGeometry};
use super::history::History;
use super::output::ContactOutput;
use super::normal_hooke::hooke_normal;
use super::params::PairParams;
use super::tangential_linear::{linear_shear, linear_shear_stiffness};

/// Strain energy ½ k_n δ² + ½ |F_s|²/k_t, k_t given as its compliance `c_t` (`energy::compliance`).
pub fn hooke_strain_energy(k_n: f64, overlap: f64, fs: DVec3, c_t: f64) -> f64 {
    0.5 * k_n * overlap * overlap + 0.5 * fs.length_squared() * c_t
}

/// One step of an active Hooke contact. γ_t = γ_n with `tangential_damping` (LIGGGHTS), else 0.
pub fn hooke_contact(p: &PairParams, g: &ContactGeometry, h: &History, dt: f64) -> ContactOutput {
    let v_impact = impact_speed(g, h);
    let normal = hooke_normal(p, g, v_impact);
    let k_t = linear_shear_stiffness(p, normal.k_n);
    let gamma_t = if p.tangential_damping { normal.gamma_n } else { 0.0 };
    let shear = linear_shear(p, g, k_t, gamma_t, normal.fn_total, h, dt);
    let damp = DashpotForce { fn_d: normal.fn_d, fs_d: shear.fs_d };
    let force_j = g.normal * -normal.fn_total + shear.fs + shear.fs_d;
    let (torque_i, torque_j) = contact_torques(g, force_j);
    let history = History { shear: shear.fs, normal_force: -normal.fn_total, impact_velocity: v_impact, established: 1.0, shear_compliance: shear.compliance, ..History::NEW };
    let strain = hooke_strain_energy(normal.k_n, normal.overlap, shear.fs, shear.compliance);
    if !p.energy_tracking {
        return ContactOutput::untracked(force_j, torque_i, torque_j, history, strain);
    }
    let history = History { dashpot: dashpot_history(g, &damp), ..history };
    let dashpot_work = dashpot_work(g, &damp, h, dt);
    // k_t is constant over a contact's life: its spring never changes stiffness; the normal
    // spring's stepping work comes only from the steps a contact begins and ends
    let stepping = normal_step_work(g, power_spring(normal.k_n, 1.0, previous_overlap(p, g, dt)), (-normal.fn_spring, 0.5 * normal.k_n * normal.overlap * normal.overlap), dt);
    ContactOutput { force_j, torque_i, torque_j, history, strain, surface: 0.0, slip_work: shear.slip_work, dashpot_work, stiffness_work: stepping }
}
