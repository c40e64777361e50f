//! Particles entering and leaving a run: insertion regions (`"insert"` in a scene) and outlets
//! (`"outlets"`).
//!
//! Both act at batch boundaries (the output cadence, where a readback is allowed anyway): the
//! run reads the backend's whole state (`Backend::export_state`), removes the particles in the
//! outlets, compacts ids (survivors keep their order, history keys are remapped), appends the
//! newly inserted particles and hands the state back (`Backend::import_state`). Shaders never
//! see a changing particle count inside a batch. Every decision depends only on the state and
//! a seeded random stream, so a backend's run stays deterministic.

pub mod driver;
pub mod insert;
pub mod outlet;
pub mod region;
pub mod state;

use glam::DVec3;

pub use driver::{FlowDriver, FlowTotals};
pub use region::Region;
pub use state::{ContactRecord, ParticleState};

use crate::scene::RadiusDist;

/// How fast an insertion feeds particles.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rate {
    /// Particles per second.
    Count(f64),
    /// Kilograms per second.
    Mass(f64),
}

/// An insertion region: particles drawn from a radius distribution placed at random, without
/// overlaps, inside `region` at `rate` between `start` and `stop`, up to `limit`.
#[derive(Clone, Debug, PartialEq)]
pub struct Insertion {
    pub name: String,
    pub region: Region,
    pub rate: Rate,
    /// s
    pub start: f64,
    /// s; `None` = until the run ends (or the limit is reached).
    pub stop: Option<f64>,
    /// Most particles (for `Rate::Count`) or kilograms (for `Rate::Mass`) inserted in all;
    /// `None` = no limit.
    pub limit: Option<f64>,
    pub radius: RadiusDist,
    pub material: u32,
    pub velocity: DVec3,
    pub angular_velocity: DVec3,
    pub seed: u64,
}

impl Insertion {
    /// How much (particles or kg, as `rate`) should have entered by time t.
    pub fn target(&self, t: f64) -> f64 {
        let end = self.stop.map_or(t, |s| t.min(s));
        let per_s = match self.rate {
            Rate::Count(r) | Rate::Mass(r) => r,
        };
        let want = per_s * (end - self.start).max(0.0);
        self.limit.map_or(want, |l| want.min(l))
    }
}

/// What an outlet removes: particles whose centre is in a region, or behind a plane (on the
/// side opposite to `normal`).
#[derive(Clone, Debug, PartialEq)]
pub enum OutletShape {
    Region(Region),
    Plane { point: DVec3, normal: DVec3 },
}

/// A sink for particles; the mass that left through it is written to `outflow.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct Outlet {
    pub name: String,
    pub shape: OutletShape,
}

impl Outlet {
    /// Whether a particle centred at x leaves through this outlet.
    pub fn takes(&self, x: DVec3) -> bool {
        match &self.shape {
            OutletShape::Region(r) => r.contains(x),
            OutletShape::Plane { point, normal } => (x - *point).dot(*normal) < 0.0,
        }
    }
}
