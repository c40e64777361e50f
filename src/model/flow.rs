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

/// How inserted or generated clumps are oriented.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ClumpOrientation {
    /// Uniformly random (seeded).
    Random,
    /// As the template's spheres were written.
    Template,
}

/// What a clump insertion feeds: bodies of a template, scaled by draws of `scale`.
#[derive(Clone, Debug, PartialEq)]
pub struct ClumpInsert {
    /// Index into `Setup::clump_templates`.
    pub template: u32,
    /// Scale factor of each body (default 1).
    pub scale: RadiusDist,
    pub orientation: ClumpOrientation,
}

/// An insertion region: particles drawn from a radius distribution (or rigid clumps of a
/// template, `clump`) placed at random, without overlaps, inside `region` at `rate` between
/// `start` and `stop`, up to `limit`.
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
    /// Radii of the spheres inserted. For a clump insertion, not drawn: the range of its
    /// component spheres' radii over the scale distribution (what time step, domain and checks
    /// size themselves by).
    pub radius: RadiusDist,
    /// Material of the spheres (a clump insertion: its template's).
    pub material: u32,
    /// `Some`: the insertion feeds rigid clumps (counts and `rate` are bodies, masses body
    /// masses) instead of spheres; `angular_velocity` is then zero.
    pub clump: Option<ClumpInsert>,
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
