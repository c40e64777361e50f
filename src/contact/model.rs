//! A contact's model is chosen per material pair (`PairParams::model`); this is the one entry
//! point the force passes call. Twin of `shaders/contact/model.wgsl`.

use super::energy::{normal_step_work, power_spring, previous_dashpot_power, previous_overlap};
use super::geometry::ContactGeometry;
use super::hertz::hertz_contact;
use super::normal::hertz_coefficient;
use super::normal_hooke::hooke_stiffness;
use super::normal_mindlin::mindlin_spring;
use super::normal_viscous::hertz_k_n0;
use super::history::History;
use super::output::ContactOutput;
use super::params::{ContactModel, PairParams};
use super::rolling::previous_rolling_power;
use super::tangential::released_spring_work;

/// One step of an active contact with the model of its material pair.
#[inline(always)]
pub fn contact_force(p: &PairParams, g: &ContactGeometry, h: &History, dt: f64) -> ContactOutput {
    match p.model {
        ContactModel::Hertz => hertz_contact(p, g, h, dt),
        ContactModel::Hysteretic => super::hysteretic::hysteretic_contact(p, g, h, dt),
        ContactModel::Hooke => super::hooke::hooke_contact(p, g, h, dt),
        ContactModel::HertzMindlin => super::hertz_mindlin::hertz_mindlin_contact(p, g, h, dt),
        ContactModel::HertzViscous => super::hertz_viscous::hertz_viscous_contact(p, g, h, dt),
    }
}

/// The normal spring of a pair's model in the previous step, (F(n−1), U(n−1)) at
/// `energy::previous_overlap`, formed as the model's preset forms it, for
/// `energy::normal_step_work`.
pub fn previous_spring(p: &PairParams, g: &ContactGeometry, dt: f64) -> (f64, f64) {
    let overlap = previous_overlap(p, g, dt);
    match p.model {
        ContactModel::Hertz | ContactModel::Hysteretic => power_spring(hertz_coefficient(p, g.r_bar), p.hz_alpha, overlap),
        ContactModel::HertzMindlin => {
            let (_, force, strain) = mindlin_spring(p, g.r_bar, overlap);
            (force, strain)
        }
        ContactModel::HertzViscous => power_spring(hertz_k_n0(p, g.r_bar), 1.5, overlap),
        ContactModel::Hooke => power_spring(hooke_stiffness(p, g), 1.0, overlap),
    }
}

/// What a contact that was active in the previous step and is not in this one still
/// dissipates: the second half of the trapezoids of `energy::dashpot_work` and
/// `rolling::rolling_resistance`, the previous step's dashpot forces and rolling torques
/// (stored in `h`) at this step's velocities, its shear spring's release
/// (`tangential::released_spring_work`) and its normal spring's last step
/// (`energy::normal_step_work` with no force now). Returns (dashpot work, slip work,
/// stiffness work) of this step; zeros without energy tracking.
pub fn ended_contact_work(p: &PairParams, g: &ContactGeometry, h: &History, dt: f64) -> (f64, f64, f64) {
    if !p.energy_tracking {
        return (0.0, 0.0, 0.0);
    }
    let dashpot = 0.5 * previous_dashpot_power(g, h) * dt;
    let rolling = match p.model {
        ContactModel::HertzMindlin | ContactModel::HertzViscous if p.rolling_fric != 0.0 => 0.5 * previous_rolling_power(p, g, h.normal_force) * dt,
        _ => 0.0,
    };
    let stepping = normal_step_work(g, previous_spring(p, g, dt), (0.0, 0.0), dt);
    (dashpot, rolling + released_spring_work(g, h, dt), stepping)
}
