//! A contact's model is chosen per material pair (`PairParams::model`); this is the one entry
//! point the force passes call. Twin of `shaders/contact/model.wgsl`.

use super::energy::previous_dashpot_power;
use super::geometry::ContactGeometry;
use super::hertz::hertz_contact;
use super::history::History;
use super::output::ContactOutput;
use super::params::{ContactModel, PairParams};
use super::rolling::previous_rolling_power;

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

/// The second half of the trapezoids of `energy::dashpot_work` and
/// `rolling::rolling_resistance` for a contact that was active in the previous step, booked
/// in this one whether it is still active or not: the previous step's dashpot forces and
/// rolling torques (stored in `h`) at this step's half-step velocities, in `g_prev`, the
/// contact's geometry at the previous step's positions. Returns (dashpot work, slip work).
pub fn previous_step_work(p: &PairParams, g_prev: &ContactGeometry, h: &History, dt: f64) -> (f64, f64) {
    let dashpot = 0.5 * previous_dashpot_power(g_prev, h) * dt;
    let rolling = match p.model {
        ContactModel::HertzMindlin | ContactModel::HertzViscous if p.rolling_fric != 0.0 => 0.5 * previous_rolling_power(p, g_prev, h.normal_force) * dt,
        _ => 0.0,
    };
    (dashpot, rolling)
}
