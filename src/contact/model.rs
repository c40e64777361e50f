//! A contact's model is chosen per material pair (`PairParams::model`); this is the one entry
//! point the force passes call. Twin of `shaders/contact/model.wgsl`.

use super::energy::previous_dashpot_power;
use super::geometry::{tangent_basis, ContactGeometry};
use super::hertz::hertz_contact;
use super::history::History;
use super::output::ContactOutput;
use super::params::{ContactModel, PairParams};
use super::rolling::previous_rolling_power;
use super::tangential::released_spring_work;

/// One step of an active contact with the model of its material pair.
pub fn contact_force(p: &PairParams, g: &ContactGeometry, h: &History, dt: f64) -> ContactOutput {
    match p.model {
        ContactModel::Hertz => hertz_contact(p, g, h, dt),
        ContactModel::Hysteretic => super::hysteretic::hysteretic_contact(p, g, h, dt),
        ContactModel::Hooke => super::hooke::hooke_contact(p, g, h, dt),
        ContactModel::HertzMindlin => super::hertz_mindlin::hertz_mindlin_contact(p, g, h, dt),
        ContactModel::HertzViscous => super::hertz_viscous::hertz_viscous_contact(p, g, h, dt),
    }
}

/// What a contact that was active in the previous step and is not in this one still
/// dissipates: the second half of the trapezoids of `energy::dashpot_work` and
/// `rolling::rolling_resistance`, the previous step's dashpot forces and rolling torques
/// (stored in `h`) at this step's velocities, and its shear spring's release
/// (`tangential::released_spring_work`). Returns (dashpot work, slip work) of this step.
pub fn ended_contact_work(p: &PairParams, g: &ContactGeometry, h: &History, dt: f64) -> (f64, f64) {
    let dashpot = 0.5 * previous_dashpot_power(g, h, &tangent_basis(g.normal)) * dt;
    let rolling = match p.model {
        ContactModel::HertzMindlin | ContactModel::HertzViscous if p.rolling_fric != 0.0 => 0.5 * previous_rolling_power(p, g, h.normal_force) * dt,
        _ => 0.0,
    };
    (dashpot, rolling + released_spring_work(g, h, dt))
}
