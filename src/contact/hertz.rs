//! The `hertz` preset of spec `hertz-pfc.txt`: geometry → normal → shear → dashpot → energies.
//! Twin of `shaders/contact/hertz.wgsl`.

use glam::DVec3;

use super::damping::dashpot;
use super::energy::{dashpot_work, strain_energy};
use super::geometry::ContactGeometry;
use super::normal::hertz_normal;
use super::params::PairParams;
use super::tangential::hertz_shear;

/// Everything one active contact contributes in one step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ContactOutput {
    /// Total contact force on j (i feels −force_j), eq (1)–(2).
    pub force_j: DVec3,
    /// Torque on i about its centre.
    pub torque_i: DVec3,
    /// Torque on j about its centre (zero for a wall).
    pub torque_j: DVec3,
    /// History for the next step: (F_s^h, |F_n^h|).
    pub history: [f64; 4],
    /// Strain energy stored in the contact, eq (15).
    pub strain: f64,
    /// Slip work this step, eq (16).
    pub slip_work: f64,
    /// Dashpot work this step, eq (17).
    pub dashpot_work: f64,
}

/// One step of an active Hertz contact. The contact carries no moment (eq 1): torques come
/// only from the shear force acting at the contact point.
pub fn hertz_contact(p: &PairParams, g: &ContactGeometry, history: [f64; 4], dt: f64) -> ContactOutput {
    let normal = hertz_normal(p, g);
    let shear = hertz_shear(p, g, &normal, history, dt);
    let damp = dashpot(p, g, &normal, shear.k_s, shear.slip);
    let force_j = g.normal * -(normal.fn_h + damp.fn_d) + shear.fs + damp.fs_d;
    let torque_i = g.branch_i.cross(-force_j);
    let torque_j = g.branch_j.cross(force_j);
    let history = [shear.fs.x, shear.fs.y, shear.fs.z, -normal.fn_h];
    let strain = strain_energy(p, &normal, shear.fs, shear.k_s);
    let dashpot_work = dashpot_work(g, &damp, dt);
    ContactOutput { force_j, torque_i, torque_j, history, strain, slip_work: shear.slip_work, dashpot_work }
}

/// Zero history for a new contact.
pub const NEW_HISTORY: [f64; 4] = [0.0; 4];
