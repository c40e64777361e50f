//! Run-time checks of a resolved scene (docs/scenes.md, "Checks"): what a run watches once it
//! started (non-finite state, particles leaving the domain) and the bounds the scene loader
//! holds every value to, so that the GPU's f32 state can represent it.
//!
//! Both backends and the run driver use `first_problem` on their own state: the CPU after every
//! step, the GPU host on the state read back after its device flag (`BLOWUP`, set by
//! `shaders/drift.wgsl` and `shaders/kick.wgsl`) was raised, the run driver before it writes a
//! snapshot.

use glam::DVec3;

pub use crate::layout::consts::OVERLAP_MAX_FRACTION;

/// Largest |coordinate| (m) of a particle, wall point, mesh vertex, insertion region or domain
/// corner. Within it the GPU keeps its finest position block (2⁻¹⁶ m, ±2³⁰ blocks = ±16 km)
/// and resolves ~1e-12 m everywhere.
pub const MAX_COORDINATE: f64 = 1.0e4;
/// Smallest particle radius, m (the GPU resolves ~1e-12 m, 1e-6 of it).
pub const MIN_RADIUS: f64 = 1.0e-6;
/// Largest ratio of the largest to the smallest radius of a scene (f32 overlaps and forces of
/// the smallest particles against the largest keep ~1e-4 relative precision).
pub const MAX_RADIUS_RATIO: f64 = 1.0e3;
/// Largest speed, m/s, of a particle (|v| + |ω| r), an insertion or a wall's surface.
pub const MAX_SPEED: f64 = 1.0e4;
/// Largest |gravity|, m/s².
pub const MAX_GRAVITY: f64 = 1.0e5;

/// What happens to a particle whose centre leaves the domain on a non-periodic axis.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LostParticles {
    /// The run stops (exit status 3) naming the step, the particle and its position.
    #[default]
    Error,
    /// The particle is removed at the next output, like an outlet, and counted in
    /// `summary.json` (`flow.lost_particles`) and in the energy balance (`removed`).
    Remove,
}

impl LostParticles {
    pub fn name(self) -> &'static str {
        match self {
            LostParticles::Error => "error",
            LostParticles::Remove => "remove",
        }
    }
}

/// The run-time checks of a set-up.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RunChecks {
    /// `lost_particles` of the scene.
    pub lost_particles: LostParticles,
    /// A particle is lost when its centre is farther than this (m) outside the domain on a
    /// non-periodic axis: 0 for a scene's explicit `domain`, 10 × the largest extent of a
    /// domain the loader derived from the scene's contents. `None`: no particle is ever lost
    /// (set-ups built in code).
    pub lost_margin: Option<f64>,
    /// The energy sentinel (`energy_drift` of the scene): with every partition booked, a run
    /// whose total energy moves from its start by more than this fraction of the peak of
    /// kinetic + strain energy stops (`run::EnergySentinel`). `None` or 0: off (set-ups built
    /// in code, and scenes that set 0).
    pub energy_drift: Option<f64>,
}

/// The default `energy_drift` of a scene: 10 % of the energy in play (`simulation::EnergySentinel`), far above
/// what any shipped scene drifts (they close their energy within 1e-3) and far below the jump of
/// a run past its stability limit.
pub const ENERGY_DRIFT_DEFAULT: f64 = 0.1;

/// The quantity a problem was found in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantity {
    Position,
    Velocity,
    AngularVelocity,
    Force,
    Torque,
    /// The centre left the domain (lost particle).
    Lost,
    /// A contact overlap beyond `OVERLAP_MAX_FRACTION` of the radius (`value.x`: δ / r).
    Overlap,
}

/// A problem with one particle.
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    /// Index of the particle in the arrays given to `first_problem`.
    pub index: usize,
    pub quantity: Quantity,
    /// The offending vector.
    pub value: DVec3,
}

impl Problem {
    /// "velocity is not finite ([NaN, 1e3, 0] m/s)" and the like; `domain` for lost particles.
    pub fn describe(&self, domain: (DVec3, DVec3), margin: f64) -> String {
        let v = self.value;
        let show = format!("[{}, {}, {}]", num(v.x), num(v.y), num(v.z));
        match self.quantity {
            Quantity::Position => format!("position is not finite ({show} m)"),
            Quantity::Velocity => format!("velocity is not finite ({show} m/s)"),
            Quantity::AngularVelocity => format!("angular velocity is not finite ({show} rad/s)"),
            Quantity::Force => format!("contact force is not finite ({show} N)"),
            Quantity::Torque => format!("contact torque is not finite ({show} N m)"),
            Quantity::Overlap => format!("a contact overlap of {} of the radius, beyond {OVERLAP_MAX_FRACTION}", num(v.x)),
            Quantity::Lost => {
                let (lo, hi) = domain;
                let within = if margin > 0.0 { format!(" grown by {} m", num(margin)) } else { String::new() };
                format!(
                    "left the domain [{}, {}] x [{}, {}] x [{}, {}]{within}: position {show} m (lost particle; set \"lost_particles\": \"remove\" to remove such particles instead)",
                    num(lo.x), num(hi.x), num(lo.y), num(hi.y), num(lo.z), num(hi.z)
                )
            }
        }
    }
}

fn num(x: f64) -> String {
    crate::error::fmt_num(x)
}

/// What an overlap beyond the limit (`Quantity::Overlap`) is put down to: `at_start`, the
/// state the run starts from (never the time step); `wall`, the wall or mesh facet the
/// particle overlaps most (its name, and whether the centre is behind a one-sided facet).
pub fn overlap_cause(at_start: bool, wall: Option<(&str, bool)>) -> String {
    match (at_start, wall) {
        (true, Some((name, behind))) => format!(
            ", with {name}, in the state the run starts from (not a time-step problem): the particle is placed through the wall{}",
            if behind { "; its centre is behind a one-sided facet (the facet's normal points away from it): if the particles belong on this side, reverse the mesh's winding or set \"two_sided\": true" } else { "; keep the particles clear of the walls" }
        ),
        (true, None) => ", between particles, in the state the run starts from (not a time-step problem): the initial particles overlap".to_string(),
        (false, Some((name, true))) => format!(
            ", with {name}, whose normals point away from the particles (a one-sided mesh pushes a particle behind it out through its front): if the particles belong on this side, reverse the mesh's winding or set \"two_sided\": true; not a time-step problem"
        ),
        (false, Some((name, false))) => format!(", with {name} (the time step is too large or the material too soft for the impact speed)"),
        (false, None) => " (the time step is too large or the material too soft for the impact speed)".to_string(),
    }
}

/// True when `x` (the centre) is farther than `margin` outside [lo, hi] on an axis that is not
/// periodic.
pub fn outside(x: DVec3, lo: DVec3, hi: DVec3, margin: f64, periodic: [bool; 3]) -> bool {
    (0..3).any(|a| !periodic[a] && (x[a] < lo[a] - margin || x[a] > hi[a] + margin))
}

fn finite(v: DVec3) -> bool {
    v.is_finite()
}

/// The overlap `depth` of a contact as a fraction of `r` (the smaller radius; a ball's own
/// against a wall) when it lies beyond `OVERLAP_MAX_FRACTION`, else 0. The CPU force pass
/// keeps the largest per particle; the division is formed only for a contact the check will
/// report.
#[inline]
pub fn overlap_beyond_limit(depth: f64, r: f64) -> f32 {
    if depth > OVERLAP_MAX_FRACTION * r { (depth / r) as f32 } else { 0.0 }
}

/// The first particle (lowest index) whose deepest contact overlap `overlap(i)` (δ / the
/// smaller radius) is beyond `OVERLAP_MAX_FRACTION`.
pub fn overlap_problem(n: usize, overlap: impl Fn(usize) -> f64 + Sync) -> Option<Problem> {
    use rayon::prelude::*;
    (0..n).into_par_iter().with_min_len(4096).find_map_first(|i| {
        let d = overlap(i);
        (d > OVERLAP_MAX_FRACTION).then(|| Problem { index: i, quantity: Quantity::Overlap, value: DVec3::splat(d) })
    })
}

/// The first particle (lowest index) whose position, velocity, angular velocity, force or
/// torque is not finite, or (with `lost` = Some((lo, hi, margin))) whose centre left the
/// domain on a non-periodic axis. `state(i)` gives (x, v, ω, F, T) of particle i.
pub fn first_problem(
    n: usize,
    state: impl Fn(usize) -> [DVec3; 5] + Sync,
    lost: Option<(DVec3, DVec3, f64)>,
    periodic: [bool; 3],
) -> Option<Problem> {
    use rayon::prelude::*;
    const WHAT: [Quantity; 5] = [Quantity::Position, Quantity::Velocity, Quantity::AngularVelocity, Quantity::Force, Quantity::Torque];
    // in parallel (it runs every CPU step); the lowest index still wins
    (0..n).into_par_iter().with_min_len(4096).find_map_first(|i| {
        let s = state(i);
        for (k, &v) in s.iter().enumerate() {
            if !finite(v) {
                return Some(Problem { index: i, quantity: WHAT[k], value: v });
            }
        }
        match lost {
            Some((lo, hi, margin)) if outside(s[0], lo, hi, margin, periodic) => Some(Problem { index: i, quantity: Quantity::Lost, value: s[0] }),
            _ => None,
        }
    })
}
