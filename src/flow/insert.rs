//! Placing inserted particles: random positions in the region, accepted only where the new
//! sphere overlaps no particle, no plane wall and no mesh wall, with a clearance of the largest
//! contact gap (`rgap`) so no contact is active at insertion.

use glam::DVec3;
use rand::SeedableRng;
use rand_pcg::Pcg64;

use crate::model::flow::{Insertion, Rate};
use crate::model::state::ParticleState;
use crate::cpu::forces::MeshView;
use crate::mesh::closest::closest_point_on_triangle;
use crate::model::overlap::Grid as OverlapGrid;
use crate::setup::Setup;

/// Placement attempts per particle in one batch before the rest waits for the next batch.
pub const ATTEMPTS_PER_PARTICLE: usize = 200;

/// The running state of one insertion: its random stream and what it has inserted (saved
/// whole in checkpoints).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Inserter {
    rng: Pcg64,
    /// The radius drawn for the next particle (kept when it could not be placed yet, so the
    /// stream of radii does not depend on how crowded the region was).
    next_radius: Option<f64>,
    pub count: u64,
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
}

impl Obstacles<'_> {
    /// Whether a sphere (x, r) keeps the clearance to every plane and mesh wall.
    fn clear_of_walls(&self, x: DVec3, r: f64) -> bool {
        let reach = r + self.clearance;
        for w in &self.setup.walls {
            let s = w.state_at(self.time);
            if (x - s.point).dot(s.normal) < reach {
                return false;
            }
        }
        for m in self.meshes {
            let xb = m.to_mesh_frame(x);
            let mesh = &m.wall.mesh;
            for t in m.grid.candidates(xb, reach) {
                let [a, b, c] = mesh.triangles[t as usize];
                if (closest_point_on_triangle(xb, a, b, c).point - xb).length_squared() < reach * reach {
                    return false;
                }
            }
        }
        true
    }
}

impl Inserter {
    pub fn new(spec: &Insertion) -> Inserter {
        Inserter { rng: Pcg64::seed_from_u64(spec.seed), next_radius: None, count: 0, mass: 0.0, deferred: 0 }
    }

    /// Insert into `state` (appended at the end) what `spec` owes at time `obstacles.time`;
    /// returns how many particles were added.
    pub fn insert(&mut self, spec: &Insertion, state: &mut ParticleState, obstacles: &Obstacles) -> u64 {
        let setup = obstacles.setup;
        let target = spec.target(obstacles.time);
        let density = setup.materials[spec.material as usize].density;
        let r_max = spec.radius.max().max(setup.max_radius());
        let mut grid = OverlapGrid::new();
        grid.prepare(&state.particles, r_max + 0.5 * obstacles.clearance);
        let mut added = 0;
        loop {
            let owed = match spec.rate {
                Rate::Count(_) => target - self.count as f64 >= 1.0,
                // a particle enters once the mass it brings is due
                Rate::Mass(_) => self.next_radius.map_or(self.mass < target, |r| self.mass + Setup::sphere_mass(density, r) <= target),
            };
            if !owed {
                break;
            }
            let r = match self.next_radius {
                Some(r) => r,
                None => {
                    let Some(r) = spec.radius.sample(&mut self.rng) else { break };
                    self.next_radius = Some(r);
                    if matches!(spec.rate, Rate::Mass(_)) {
                        continue; // re-check that this particle's mass is due
                    }
                    r
                }
            };
            let placed = (0..ATTEMPTS_PER_PARTICLE).find_map(|_| {
                let x = spec.region.sample_centre(r, &mut self.rng)?;
                let free = grid.overlap(&state.particles, x.to_array(), r + obstacles.clearance).is_none() && obstacles.clear_of_walls(x, r);
                free.then_some(x)
            });
            let Some(x) = placed else {
                self.deferred += 1;
                break;
            };
            state.push(x.to_array(), spec.velocity.to_array(), spec.angular_velocity.to_array(), r, spec.material);
            grid.sync(&state.particles);
            self.next_radius = None;
            self.count += 1;
            self.mass += Setup::sphere_mass(density, r);
            added += 1;
        }
        added
    }
}
