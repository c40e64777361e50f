//! `ContactOutput`, what one contact step returns: below the presets, which build it, and the
//! dispatch of `model.rs`, which returns it, so neither imports the other.
//!
//! No WGSL twin: the WGSL `ContactOutput` struct stays in `shaders/contact/model.wgsl` (WGSL
//! module-scope declarations need no import order); this file holds only the Rust struct.

use glam::DVec3;

use super::history::History;

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
    /// Surface energy of the contact's adhesion, U_a (zero at touch; `adhesion.rs`); 0 for a
    /// dry pair.
    pub surface: f64,
    /// Slip work this step, eq (16).
    pub slip_work: f64,
    /// Dashpot work this step, eq (17).
    pub dashpot_work: f64,
    /// Energy the shear spring lost to its stiffness change this step (`energy::stiffness_work`).
    pub stiffness_work: f64,
}

impl ContactOutput {
    /// A step of a pair without energy tracking (`PairParams::energy_tracking` off): forces,
    /// torques, history (no stored dashpot forces: they only book energy) and strain energy;
    /// no work booked.
    pub fn untracked(force_j: DVec3, torque_i: DVec3, torque_j: DVec3, history: History, strain: f64) -> ContactOutput {
        ContactOutput { force_j, torque_i, torque_j, history, strain, surface: 0.0, slip_work: 0.0, dashpot_work: 0.0, stiffness_work: 0.0 }
    }
}
