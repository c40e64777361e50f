//! A contact's model is chosen per material pair (`PairParams::model`); this is the one entry
//! point the force passes call. Twin of `shaders/contact/model.wgsl`.

use glam::DVec3;

use super::geometry::ContactGeometry;
use super::hertz::hertz_contact;
use super::history::History;
use super::params::{ContactModel, PairParams};

/// Everything one active contact contributes in one step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ContactOutput {
    /// Total contact force on j (i feels −force_j), eq (1)–(2).
    pub force_j: DVec3,
    /// Torque on i about its centre.
    pub torque_i: DVec3,
    /// Torque on j about its centre (zero for a wall).
    pub torque_j: DVec3,
    /// History for the next step.
    pub history: History,
    /// Strain energy stored in the contact, eq (15).
    pub strain: f64,
    /// Slip work this step, eq (16).
    pub slip_work: f64,
    /// Dashpot work this step, eq (17).
    pub dashpot_work: f64,
    /// Energy the shear spring lost to its stiffness change this step (`energy::stiffness_work`).
    pub stiffness_work: f64,
}

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
