//! Placing inserted particles: random positions in the region, accepted only where the new
//! sphere overlaps no particle, no plane wall and no mesh wall, with a clearance of the largest
//! contact gap (`rgap`) so no contact is active at insertion.
//!
//! A clump insertion places bodies: a scale drawn from its distribution, a centre drawn so the
//! scaled template's bounding sphere lies in the region, an orientation drawn per attempt
//! (uniformly random, or the template's own); the body is accepted when every component sphere
//! is clear by the rules above. It enters as a body of the state's table (mass × s³, moments ×
//! s⁵) with its components after it, moving at the insertion's velocity without spin. In a
//! scene with bodies (`Setup::has_bodies`) an inserted sphere enters as a one-component body.

use std::ops::ControlFlow;

use glam::DVec3;
use rand::SeedableRng;
use rand_pcg::Pcg64;

use crate::model::body::{random_orientation, rotate};
use crate::model::flow::{ClumpOrientation, Insertion, Rate};
use crate::model::state::ParticleState;
use crate::cpu::forces::MeshView;
use crate::cpu::wall_hits::wall_hits;
use crate::model::overlap::Grid as OverlapGrid;
use crate::setup::Setup;

/// Placement attempts per particle in one batch before the rest waits for the next batch.
pub const ATTEMPTS_PER_PARTICLE: usize = 200;

/// The running state of one insertion: its random stream and what it has inserted (saved
/// whole in checkpoints).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Inserter {
    rng: Pcg64,
    /// The radius drawn for the next particle, or for a clump insertion the scale of the next
    /// body (kept when it could not be placed yet, so the stream of sizes does not depend on
    /// how crowded the region was).
    next_radius: Option<f64>,
    /// Particles inserted (a clump insertion: bodies).
    pub count: u64,
    /// Their mass, kg (a clump insertion: the bodies' masses).
    pub mass: f64,
    /// Particles that could not be placed when due (region full), summed over batches.
    pub deferred: u64,
}

/// Geometry the placement checks against, at the time of the batch boundary.
pub struct Obstacles<'a> {
    pub setup: &'a Setup,
    pub time: f64,
    pub meshes: &'a [MeshView<'a>],
    /// Extra gap kept to every surface (the largest positive `rgap`).
    pub clearance: f64,
    /// Whether the state carries a body table (`Setup::has_bodies`).
    pub bodies: bool,
}

impl Obstacles<'_> {
    /// Whether a sphere (x, r) keeps the clearance to every plane and mesh wall.
    fn clear_of_walls(&self, x: DVec3, r: f64) -> bool {
        wall_hits(&self.setup.walls, self.time, self.meshes, x, r + self.clearance, |_| ControlFlow::Break(())).is_continue()
    }
}

impl Inserter {
    pub fn new(spec: &Insertion) -> Inserter {
        Inserter { rng: Pcg64::seed_from_u64(spec.seed), next_radius: None, count: 0, mass: 0.0, deferred: 0 }
    }

    /// Whether `insert` at `time` may place anything (false: it returns at once without looking
    /// at the particles, so an exchange need not hand them out).
    pub fn may_insert(&self, spec: &Insertion, time: f64) -> bool {
        let target = spec.target(time);
        match spec.rate {
            Rate::Count(_) => target - self.count as f64 >= 1.0,
            // (with the next size drawn, what is due is mass + its mass ≤ target: less than this)
            Rate::Mass(_) => self.mass < target,
        }
    }

    /// Insert into `state` (appended at the end) what `spec` owes at time `obstacles.time`;
    /// returns how many particles (a clump insertion: bodies) were added.
    pub fn insert(&mut self, spec: &Insertion, state: &mut ParticleState, obstacles: &Obstacles) -> u64 {
        let setup = obstacles.setup;
        let target = spec.target(obstacles.time);
        let density = setup.materials[spec.material as usize].density;
        let clump = spec.clump.as_ref().map(|c| (c, &setup.clump_templates[c.template as usize]));
        // mass of the item of size `s` (a sphere's radius, a body's scale)
        let mass_of = |s: f64| match clump {
            None => Setup::sphere_mass(density, s),
            Some((_, t)) => t.mass * s * s * s,
        };
        let r_max = spec.radius.max().max(setup.max_radius());
        let mut grid = OverlapGrid::new();
        grid.prepare(&state.particles, r_max + 0.5 * obstacles.clearance);
        let mut added = 0;
        loop {
            let owed = match spec.rate {
                Rate::Count(_) => target - self.count as f64 >= 1.0,
                // a particle enters once the mass it brings is due
                Rate::Mass(_) => self.next_radius.map_or(self.mass < target, |s| self.mass + mass_of(s) <= target),
            };
            if !owed {
                break;
            }
            let size = match self.next_radius {
                Some(s) => s,
                None => {
                    let dist = clump.map_or(&spec.radius, |(c, _)| &c.scale);
                    let Some(s) = dist.sample(&mut self.rng) else { break };
                    self.next_radius = Some(s);
                    if matches!(spec.rate, Rate::Mass(_)) {
                        continue; // re-check that this particle's mass is due
                    }
                    s
                }
            };
            let free = |x: DVec3, r: f64, state: &ParticleState| grid.overlap(&state.particles, x.to_array(), r + obstacles.clearance).is_none() && obstacles.clear_of_walls(x, r);
            match clump {
                None => {
                    let r = size;
                    let placed = (0..ATTEMPTS_PER_PARTICLE).find_map(|_| {
                        let x = spec.region.sample_centre(r, &mut self.rng)?;
                        free(x, r, state).then_some(x)
                    });
                    let Some(x) = placed else {
                        self.deferred += 1;
                        break;
                    };
                    let first = state.len() as u32;
                    state.push(x.to_array(), spec.velocity.to_array(), spec.angular_velocity.to_array(), r, spec.material);
                    if obstacles.bodies {
                        state.bodies.push_sphere(x.to_array(), spec.velocity.to_array(), spec.angular_velocity.to_array(), mass_of(r), r, first);
                    }
                }
                Some((c, t)) => {
                    let s = size;
                    let placed = (0..ATTEMPTS_PER_PARTICLE).find_map(|_| {
                        let x = spec.region.sample_centre(t.bounding_radius * s, &mut self.rng)?;
                        let q = match c.orientation {
                            ClumpOrientation::Random => random_orientation(&mut self.rng),
                            // the body frame is the principal frame, which `to_principal` turns
                            // onto the template's own frame
                            ClumpOrientation::Template => t.to_principal,
                        };
                        let clear = t.spheres.iter().all(|k| free(x + DVec3::from(rotate(q, k.offset.map(|o| o * s))), k.radius * s, state));
                        clear.then_some((x, q))
                    });
                    let Some((x, q)) = placed else {
                        self.deferred += 1;
                        break;
                    };
                    let v = spec.velocity.to_array();
                    let offsets: Vec<[f64; 3]> = t.spheres.iter().map(|k| k.offset.map(|o| o * s)).collect();
                    let moments = t.principal_moments.map(|m| m * s.powi(5));
                    state.bodies.push(x.to_array(), q, v, [0.0; 3], mass_of(s), moments, c.template, state.len() as u32, &offsets);
                    for (k, o) in t.spheres.iter().zip(&offsets) {
                        state.push((x + DVec3::from(rotate(q, *o))).to_array(), v, [0.0; 3], k.radius * s, t.material);
                    }
                }
            }
            grid.sync(&state.particles);
            self.next_radius = None;
            self.count += 1;
            self.mass += mass_of(size);
            added += 1;
        }
        added
    }
}
