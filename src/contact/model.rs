//! A contact's model is chosen per material pair (`PairParams::model`); this is the one entry
//! point the force passes call. Twin of `shaders/contact/model.wgsl`.

use super::geometry::ContactGeometry;
use super::hertz::hertz_contact;
use super::history::History;
use super::output::ContactOutput;
use super::params::{ContactModel, PairParams};

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
