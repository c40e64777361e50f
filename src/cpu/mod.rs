//! The CPU reference path: f64, the same stages and names as the GPU passes.
//! Step = `drift` (half kick + drift) → `grid` (count, scan, scatter) → `forces` → `kick`.

pub mod forces;
pub mod grid;
pub mod integrate;
pub mod state;

use glam::DVec3;

use crate::backend::{Backend, Energies, Snapshot, WallLoad};
use crate::error::Result;
use crate::model::state::{ContactRecord, ParticleState};
use crate::mesh::TriangleGrid;
use crate::setup::{mesh_group_bases, Particles, Setup};
use forces::{ForceContext, MeshView, OwnedHistory, WallContacts};
use grid::Grid;
use state::State;

/// The f64 CPU step loop (rayon over particles in the force pass).
pub struct CpuBackend {
    setup: Setup,
    state: State,
    grid: Grid,
    history: Vec<OwnedHistory>,
    next_history: Vec<OwnedHistory>,
    /// Per ball: what its wall contacts put on the walls in the last force pass.
    wall_contacts: Vec<WallContacts>,
    /// Triangle grid of every mesh wall in its t = 0 frame, built once.
    mesh_grids: Vec<TriangleGrid>,
    /// First global facet group of every mesh wall (history keys).
    mesh_group_bases: Vec<u32>,
    max_rgap: f64,
    steps_done: u64,
    /// Work partitions of particles no longer held (see `Backend::set_carried`).
    carried: Energies,
}

/// Largest distance between surfaces at which any pair in the table can be active.
pub fn max_positive_rgap(setup: &Setup) -> f64 {
    setup.pairs.entries.iter().map(|p| p.rgap).fold(0.0, f64::max)
}

/// Triangle grids of the mesh walls in their t = 0 frames: cells of about a particle
/// diameter (plus the largest gap), queried with each ball's reach.
pub fn mesh_grids(setup: &Setup, max_rgap: f64) -> Result<Vec<TriangleGrid>> {
    let cell = (2.0 * (setup.max_radius() + max_rgap)).max(f64::MIN_POSITIVE);
    setup.meshes.iter().map(|m| TriangleGrid::build(&m.mesh, cell, 0.0)).collect()
}

impl CpuBackend {
    pub fn new(setup: &Setup) -> Result<CpuBackend> {
        let state = State::new(setup);
        let max_rgap = max_positive_rgap(setup);
        let mesh_group_bases = mesh_group_bases(&setup.meshes)?;
        let mesh_grids = mesh_grids(setup, max_rgap)?;
        let min_cell = (2.0 * setup.max_radius() + max_rgap).max(f64::MIN_POSITIVE);
        let grid = Grid::new(&setup.domain, setup.periodic, min_cell, setup.particle_capacity())?;
        let n = state.position.len();
        let mut backend = CpuBackend {
            setup: setup.clone(),
            state,
            grid,
            history: vec![Vec::new(); n],
            next_history: vec![Vec::new(); n],
            wall_contacts: vec![Vec::new(); n],
            mesh_grids,
            mesh_group_bases,
            max_rgap,
            steps_done: 0,
            carried: Energies::default(),
        };
        // Initial forces for the first half kick. Like the GPU, this evaluation keeps nothing
        // but forces, torques, strain and counts: history starts empty at step 1 (dt = 0 also
        // leaves the dissipation at zero).
        backend.force_pass(0.0, 0.0);
        backend.history.iter_mut().for_each(Vec::clear);
        Ok(backend)
    }

    /// Forces at time `t` (the walls' pose); `dt` = 0 for the initial evaluation.
    fn force_pass(&mut self, dt: f64, t: f64) {
        self.grid.build(&self.state.position);
        let wall_states: Vec<_> = self.setup.walls.iter().map(|w| w.state_at(t)).collect();
        let meshes: Vec<MeshView> = (self.setup.meshes.iter().zip(&self.mesh_grids).zip(&self.mesh_group_bases))
            .map(|((wall, grid), &group_base)| MeshView { wall, grid, group_base, pose: wall.pose_at(t) })
            .collect();
        let ctx = ForceContext { setup: &self.setup, pairs: &self.setup.pairs, walls: &self.setup.walls, wall_states: &wall_states, meshes: &meshes, grid: &self.grid, max_rgap: self.max_rgap };
        forces::forces(&ctx, &mut self.state, &self.history, &mut self.next_history, &mut self.wall_contacts, dt);
        std::mem::swap(&mut self.history, &mut self.next_history);
    }

    /// One velocity-Verlet step.
    pub fn step_once(&mut self) {
        let g = DVec3::from(self.setup.gravity);
        let dt = self.setup.dt;
        integrate::drift(&mut self.state, &self.setup, g, dt);
        self.force_pass(dt, (self.steps_done + 1) as f64 * dt);
        integrate::kick(&mut self.state, g, dt);
        self.steps_done += 1;
    }

    pub fn state(&self) -> &State {
        &self.state
    }

    /// Position of particle `i` without the periodic wrapping (continuous in time).
    fn unwrapped(&self, i: usize) -> DVec3 {
        let k = self.state.image[i];
        self.state.position[i] + DVec3::new(k[0] as f64, k[1] as f64, k[2] as f64) * self.setup.period()
    }
}

fn to_arrays(v: &[DVec3]) -> Vec<[f64; 3]> {
    v.iter().map(|x| x.to_array()).collect()
}

impl Backend for CpuBackend {
    fn kind(&self) -> &'static str {
        "cpu"
    }
    fn adapter(&self) -> String {
        format!("CPU reference, f64, {} rayon threads", rayon::current_num_threads())
    }
    fn step(&mut self, n: u64) -> Result<()> {
        for _ in 0..n {
            self.step_once();
        }
        Ok(())
    }
    fn steps_done(&self) -> u64 {
        self.steps_done
    }
    fn snapshot(&mut self) -> Result<Snapshot> {
        let s = &self.state;
        Ok(Snapshot {
            step: self.steps_done,
            time: self.steps_done as f64 * self.setup.dt,
            position: (0..s.position.len()).map(|i| self.unwrapped(i).to_array()).collect(),
            velocity: to_arrays(&s.velocity),
            angular_velocity: to_arrays(&s.angular_velocity),
            force: to_arrays(&s.force),
            torque: to_arrays(&s.torque),
            radius: s.radius.clone(),
        })
    }
    fn energies(&mut self) -> Result<Energies> {
        let s = &self.state;
        let g = DVec3::from(self.setup.gravity);
        let mut e = Energies::default();
        for i in 0..s.position.len() {
            e.kinetic_translational += 0.5 * s.mass[i] * s.velocity[i].length_squared();
            e.kinetic_rotational += 0.5 * s.inertia[i] * s.angular_velocity[i].length_squared();
            e.gravitational -= s.mass[i] * g.dot(self.unwrapped(i));
            e.strain += s.strain[i];
            e.slip += s.slip_work[i];
            e.dashpot += s.dashpot_work[i];
            e.stiffness_work += s.stiffness_work[i];
            e.wall_work += s.wall_work[i];
        }
        Ok(e.plus_carried(&self.carried))
    }
    fn wall_loads(&mut self) -> Result<Vec<WallLoad>> {
        let mut loads = vec![WallLoad::default(); self.setup.walls.len() + self.setup.meshes.len()];
        for contacts in &self.wall_contacts {
            for &(w, f, t) in contacts {
                let l = &mut loads[w as usize];
                l.force = (DVec3::from(l.force) + f).to_array();
                l.torque = (DVec3::from(l.torque) + t).to_array();
            }
        }
        Ok(loads)
    }
    fn contact_count(&mut self) -> Result<u64> {
        Ok(self.state.contacts.iter().map(|&c| c as u64).sum())
    }
    fn export_state(&mut self) -> Result<ParticleState> {
        let s = &self.state;
        let particles = Particles {
            position: to_arrays(&s.position),
            velocity: to_arrays(&s.velocity),
            angular_velocity: to_arrays(&s.angular_velocity),
            radius: s.radius.clone(),
            material: s.material.clone(),
        };
        let history = (self.history.iter().enumerate())
            .flat_map(|(i, owned)| owned.iter().map(move |&(partner, history)| ContactRecord { owner: i as u32, partner, history }))
            .collect();
        let mut out = ParticleState { step: self.steps_done, particles, image: s.image.clone(), force: to_arrays(&s.force), torque: to_arrays(&s.torque), refresh: vec![false; s.position.len()], history };
        out.sort_history();
        Ok(out)
    }
    fn import_state(&mut self, state: &ParticleState) -> Result<()> {
        let n = state.len();
        self.steps_done = state.step;
        self.state = State::of(&self.setup, &state.particles);
        self.state.image = state.image.clone();
        let mut history = vec![Vec::new(); n];
        for c in &state.history {
            history[c.owner as usize].push((c.partner, c.history));
        }
        self.next_history = vec![Vec::new(); n];
        self.wall_contacts = vec![Vec::new(); n];
        // forces of the new state from the kept history, which the pass must not advance
        self.history = history.clone();
        self.force_pass(0.0, self.steps_done as f64 * self.setup.dt);
        self.history = history;
        self.state.clear_work();
        for i in (0..n).filter(|&i| !state.refresh[i]) {
            self.state.force[i] = DVec3::from(state.force[i]);
            self.state.torque[i] = DVec3::from(state.torque[i]);
        }
        Ok(())
    }
    fn set_carried(&mut self, carried: Energies) {
        self.carried = carried;
    }
}
