//! Insertion regions and outlets of a scene (`"insert"`, `"outlets"`); run by `src/flow/`.

use glam::DVec3;

use super::distribution::RadiusDist;
use super::region::Region;

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
