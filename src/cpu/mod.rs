//! The CPU reference path: f64, the same stages and names as the GPU passes.
//! Step = `kick_drift` (half kick + drift) → neighbour list rebuilt when the skin is used up
//! (`neighbour.rs`) → `forces` (each contact once, by its owner) → `gather_kick` (each
//! particle's total force in id order, second half kick, fused with the next `kick_drift`).

pub mod checkpoint;
pub mod decomposed;
pub mod redistribute;
pub mod forces;
pub mod grid;
pub mod integrate;
pub mod isa;
pub mod neighbour;
pub mod prefetch;
pub mod rigid;
pub mod state;
pub mod wall_hits;

use glam::DVec3;

use crate::backend::{Backend, Energies, Snapshot, WallLoad};
use crate::error::{Result, TalusError};
use crate::exact_sum::ExactSum;
use crate::model::checks::{first_problem, overlap_problem, LostParticles, Problem, OVERLAP_MAX_FRACTION};
use crate::model::state::{ContactRecord, ExactState, ParticleState};
use crate::mesh::TriangleGrid;
use crate::setup::{mesh_group_bases, Particles, Setup, WallState};
use forces::{ForceContext, Incoming, MeshView, OwnedHistory, OwnerOutputs, WallContacts};
use integrate::Drift;
use neighbour::{NeighbourList, SORT_EVERY};
use state::{permute, Owned, Owners, State, Works};

/// Batches of at least this many steps keep the other rayon workers awake (`KeepAwake`).
const KEEP_AWAKE_MIN_STEPS: u64 = 8;

/// A polling worker that found no work for this long (the stepping thread is in a long serial
/// stretch, or the machine is oversubscribed) polls only every `KEEP_AWAKE_NAP` until it
/// finds work again. The serial part between two sweeps lasts microseconds.
const KEEP_AWAKE_IDLE: std::time::Duration = std::time::Duration::from_millis(2);
const KEEP_AWAKE_NAP: std::time::Duration = std::time::Duration::from_micros(100);

/// Keeps the rayon workers other than the stepping one polling for work while a batch of
/// steps runs, instead of going to sleep between its parallel sweeps. Each step has two
/// sweeps (the force pass, then the gather and kick) with a short serial part between them;
/// a worker that ran out of work in one sweep otherwise sleeps, and waking it for the next
/// costs tens of microseconds (more on a virtual machine): on the 10,000-particle falling box
/// two threads lost about 67 µs of each 300-µs step to idling, and polling won 9 % there. A
/// polling worker runs every job it finds (`rayon::yield_now`) and yields its core to the OS
/// when there is none, so it never holds up other threads; after `KEEP_AWAKE_IDLE` without
/// work it naps between polls. Dropping the guard ends the polling.
struct KeepAwake {
    running: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl KeepAwake {
    /// Starts polling on every worker but the current one (a no-op outside a rayon pool).
    fn start() -> KeepAwake {
        use std::sync::atomic::{AtomicBool, Ordering};
        let running = std::sync::Arc::new(AtomicBool::new(true));
        if let Some(stepper) = rayon::current_thread_index() {
            let flag = running.clone();
            rayon::spawn_broadcast(move |worker| {
                if worker.index() == stepper {
                    return;
                }
                let mut idle_since = None;
                while flag.load(Ordering::Acquire) {
                    if rayon::yield_now() == Some(rayon::Yield::Executed) {
                        idle_since = None;
                        continue;
                    }
                    let now = std::time::Instant::now();
                    if now.duration_since(*idle_since.get_or_insert(now)) > KEEP_AWAKE_IDLE {
                        std::thread::sleep(KEEP_AWAKE_NAP);
                    } else {
                        std::thread::yield_now();
                    }
                }
            });
        }
        KeepAwake { running }
    }
}

impl Drop for KeepAwake {
    fn drop(&mut self) {
        self.running.store(false, std::sync::atomic::Ordering::Release);
    }
}

/// The f64 CPU step loop (rayon over chunks of particles).
pub struct CpuBackend {
    setup: Setup,
    state: State,
    list: NeighbourList,
    /// The partner shares of the pair contacts active in the last force pass.
    incoming: Incoming,
    /// Per particle (internal order): what its owned contacts produced in the last force pass,
    /// how many were active, and its cumulative work.
    owners: Owners,
    /// Per particle: wall and mesh contact history of the last pass and the one being written.
    wall_history: Vec<OwnedHistory>,
    next_wall_history: Vec<OwnedHistory>,
    /// Per ball: what its wall contacts put on the walls in the last force pass.
    wall_contacts: Vec<WallContacts>,
    /// Triangle grid of every mesh wall in its t = 0 frame, built once.
    mesh_grids: Vec<TriangleGrid>,
    /// First global facet group of every mesh wall (history keys).
    mesh_group_bases: Vec<u32>,
    max_rgap: f64,
    /// Largest squared particle displacement since the list build (from the last drift; ∞
    /// when unknown, which forces a rebuild).
    displacement2: f64,
    steps_done: u64,
    /// Work partitions of particles no longer held (see `Backend::set_carried`).
    carried: Energies,
    /// Rigid bodies (`rigid.rs`); empty without clumps.
    bodies: rigid::BodyState,
}

/// Largest distance between surfaces at which any pair in the table can be active.
pub fn max_positive_rgap(setup: &Setup) -> f64 {
    setup.max_reach_gap()
}

/// Triangle grids of the mesh walls in their t = 0 frames: cells of about a particle
/// diameter (plus the largest gap), queried with each ball's reach.
pub fn mesh_grids(setup: &Setup, max_rgap: f64) -> Result<Vec<TriangleGrid>> {
    let cell = (2.0 * (setup.max_radius() + max_rgap)).max(f64::MIN_POSITIVE);
    setup.meshes.iter().map(|m| TriangleGrid::build(&m.mesh, cell, 0.0)).collect()
}

impl CpuBackend {
    pub fn new(setup: &Setup) -> Result<CpuBackend> {
        isa::from_env()?;
        let max_rgap = max_positive_rgap(setup);
        let mut backend = CpuBackend {
            setup: setup.clone(),
            state: State::default(),
            list: NeighbourList::new(setup, max_rgap)?,
            incoming: Incoming::default(),
            owners: Owners::default(),
            wall_history: Vec::new(),
            next_wall_history: Vec::new(),
            wall_contacts: Vec::new(),
            mesh_grids: mesh_grids(setup, max_rgap)?,
            mesh_group_bases: mesh_group_bases(&setup.meshes)?,
            max_rgap,
            displacement2: f64::INFINITY,
            steps_done: 0,
            carried: Energies::default(),
            bodies: rigid::BodyState::of(&setup.bodies),
        };
        backend.load(State::of(setup, &setup.particles).with_bodies(&setup.bodies), &setup.initial_contacts);
        backend.place_components();
        // Initial forces for the first half kick. Like the GPU, this evaluation keeps nothing
        // but forces, torques, strain and counts: history starts at step 1 as the set-up gives
        // it, empty unless the scene started from a checkpoint (dt = 0 also leaves the
        // dissipation at zero).
        backend.force_pass(0.0, 0.0);
        integrate::gather_only(&mut backend.state, &backend.list, &backend.incoming, &backend.owners);
        rigid::gather_only(&backend.state, &mut backend.bodies);
        backend.restore_history(&setup.initial_contacts);
        // a start that already overlaps beyond the stated fraction does not run (as on the GPU)
        if let Some(p) = overlap_problem(backend.state.len(), |i| backend.owners.owned[i].overlap as f64) {
            return Err(backend.blow_up(&p, 0));
        }
        Ok(backend)
    }

    /// Take `state` (in id order) with the wall and mesh history of `records`; the pair
    /// history of `records` goes into the slots of a fresh list.
    fn load(&mut self, state: State, records: &[ContactRecord]) {
        let t = self.steps_done as f64 * self.setup.dt;
        self.load_at(state, records, t);
    }

    /// `load` with the list built against the walls at time `t`.
    fn load_at(&mut self, state: State, records: &[ContactRecord], t: f64) {
        let n = state.len();
        self.state = state;
        self.owners = Owners::with_adhesion(n, self.setup.has_adhesion());
        self.wall_history = vec![Vec::new(); n];
        self.next_wall_history = vec![Vec::new(); n];
        self.wall_contacts = vec![Vec::new(); n];
        for c in records.iter().filter(|c| !c.between_particles()) {
            self.wall_history[c.owner as usize].push((c.partner, c.history));
        }
        let pairs: Vec<ContactRecord> = records.iter().filter(|c| c.between_particles()).copied().collect();
        self.rebuild(&self.wall_states(t), Some(&pairs));
    }

    /// Replace the particles by `state` (ids 0..n in order; a decomposed run's owned and ghost
    /// particles at a list build, `decomposed.rs`) with their cumulative work, adhesion
    /// energies and contact records (pairs sorted by ids, and wall histories), the list built
    /// against the walls at time `t`.
    pub(crate) fn reload(&mut self, state: State, works: &[Works], adhesion: &[state::AdhesionEnergy], records: &[ContactRecord], t: f64) {
        self.load_at(state, records, t);
        for (u, w) in works.iter().enumerate() {
            let i = self.state.index_of[u] as usize;
            self.owners.works[i] = *w;
            if !self.owners.adhesion.is_empty() {
                self.owners.adhesion[i] = adhesion[u];
            }
        }
    }

    /// Components where their bodies put them (a no-op without bodies).
    fn place_components(&mut self) {
        if self.bodies.is_empty() {
            return;
        }
        let drift = Drift::new(&self.setup, self.setup.dt);
        self.displacement2 = self.displacement2.max(rigid::place(&mut self.state, &self.bodies, &drift, self.list.x_build()).displacement2);
    }

    fn wall_states(&self, t: f64) -> Vec<WallState> {
        self.setup.walls.iter().map(|w| w.state_at(t)).collect()
    }

    /// Replace every contact history by `records` (sorted by (owner, partner) ids).
    fn restore_history(&mut self, records: &[ContactRecord]) {
        self.list.history.iter_mut().for_each(|h| h.0 = crate::contact::History::NEW);
        self.list.in_contact.iter_mut().for_each(|f| *f = false);
        self.incoming.clear_shares();
        self.wall_history.iter_mut().for_each(Vec::clear);
        let mut pairs = Vec::new();
        for c in records {
            if c.between_particles() {
                pairs.push(*c);
            } else {
                self.wall_history[self.state.index_of[c.owner as usize] as usize].push((c.partner, c.history));
            }
        }
        self.list.seed(&self.state, &pairs);
        self.clear_unlisted_walls();
    }

    /// A new neighbour list, renumbering the particles in cell (Z-)order first on every
    /// `SORT_EVERY`-th build. The pair history moves to the new slots (`records`, when given,
    /// replaces it).
    fn rebuild(&mut self, walls_now: &[WallState], records: Option<&[ContactRecord]>) {
        // the old shares are of no use to the new list: freed before the records are taken
        self.incoming.clear_shares();
        let kept;
        let records = match records {
            Some(r) => r,
            None => {
                kept = self.list.records(&self.state);
                &kept
            }
        };
        if self.list.builds.is_multiple_of(SORT_EVERY) {
            let order = self.list.cell_order(&self.state.position);
            self.state.permute(&order);
            self.owners.permute(&order);
            permute(&mut self.wall_history, &order);
            permute(&mut self.wall_contacts, &order);
        }
        self.list.build(&self.setup, &self.state, walls_now);
        self.clear_unlisted_walls();
        self.list.seed(&self.state, records);
        self.displacement2 = 0.0;
    }

    /// Empties the wall and mesh contact lists (both histories and the wall loads) of every
    /// particle with no plane wall in the neighbour list, when there is no mesh wall: the force
    /// pass does not read them (most particles touch no wall, and reading their empty lists
    /// was 0.75 of the 3.7 cache lines a falling 100k box missed per particle-step), so none
    /// may keep anything from before. A wall contact active in the last pass is within reach,
    /// so its wall is listed and its history kept.
    fn clear_unlisted_walls(&mut self) {
        if !self.setup.meshes.is_empty() {
            return;
        }
        let starts = &self.list.wall_start;
        for (o, w) in starts.windows(2).enumerate() {
            if w[0] == w[1] {
                for list in [&mut self.wall_history[o], &mut self.next_wall_history[o]] {
                    if !list.is_empty() {
                        list.clear();
                    }
                }
                if !self.wall_contacts[o].is_empty() {
                    self.wall_contacts[o].clear();
                }
            }
        }
    }

    /// Contacts at time `t` (the walls' pose); `dt` = 0 for a force evaluation outside a
    /// step. Rebuilds the neighbour list first when its skin is used up. Returns the deepest
    /// contact overlap beyond the run-time check's limit, as a fraction of the smaller radius
    /// (0 when no contact is that deep).
    fn force_pass(&mut self, dt: f64, t: f64) -> f32 {
        let wall_states = self.wall_states(t);
        if self.list.needs_rebuild(&self.setup, self.displacement2, &wall_states) {
            self.rebuild(&wall_states, None);
        }
        let meshes: Vec<MeshView> = (self.setup.meshes.iter().zip(&self.mesh_grids).zip(&self.mesh_group_bases))
            .map(|((wall, grid), &group_base)| MeshView { wall, grid, group_base, pose: wall.pose_at(t) })
            .collect();
        let ctx = ForceContext { setup: &self.setup, pairs: &self.setup.pairs, walls: &self.setup.walls, wall_states: &wall_states, meshes: &meshes, max_rgap: self.max_rgap, periodic: self.setup.periodic.iter().any(|&p| p) };
        let out = OwnerOutputs { owners: &mut self.owners, wall_history: &mut self.next_wall_history, wall_contacts: &mut self.wall_contacts };
        let overlap = forces::forces(&ctx, &self.state, &mut self.list, &mut self.incoming, &self.wall_history, out, dt);
        std::mem::swap(&mut self.wall_history, &mut self.next_wall_history);
        // the spins of this pass are the previous ones of the next (rolling work, when booked)
        if !self.state.previous_spin.is_empty() {
            self.state.previous_spin.copy_from_slice(&self.state.angular_velocity);
        }
        overlap
    }

    /// `n` velocity-Verlet steps. The loop runs on a rayon worker, so its parallel sweeps
    /// start without handing work across threads (and waking the caller) twice per step.
    fn steps(&mut self, n: u64) -> Option<Problem> {
        self.steps_with(n, &mut Alone)
    }

    /// `steps` with `halo` (a rank's exchanges with the others in a decomposed run,
    /// `decomposed.rs`; nothing on one process) between the sweeps.
    pub(crate) fn steps_with<H: Halo + Send>(&mut self, n: u64, halo: &mut H) -> Option<Problem> {
        rayon::scope(|_| {
            let _awake = (n >= KEEP_AWAKE_MIN_STEPS).then(KeepAwake::start);
            self.steps_on_worker(n, halo)
        })
    }

    /// `n` steps, each followed by the run-time checks (`crate::model::checks`); stops at the
    /// first step that leaves a problem, and returns it. The sweeps flag what may be wrong as
    /// they go (`Sweep::suspicious`, the force pass's deepest overlap), so a full scan to name
    /// the particle runs only then.
    fn steps_on_worker<H: Halo>(&mut self, n: u64, halo: &mut H) -> Option<Problem> {
        if !self.bodies.is_empty() {
            return self.body_steps(n);
        }
        let drift = Drift::new(&self.setup, self.setup.dt);
        let mut suspicious = false;
        for k in 0..n {
            if k == 0 {
                let sweep = integrate::kick_drift(&mut self.state, &drift, self.list.x_build());
                (self.displacement2, suspicious) = (sweep.displacement2, sweep.suspicious);
            }
            halo.before_forces(self, k == 0);
            let overlap = self.force_pass(self.setup.dt, (self.steps_done + 1) as f64 * self.setup.dt);
            // the last step of a batch ends with full-step velocities; inside a batch the sweep
            // also drifts the next step, so the check sees that step's positions early
            let sweep = integrate::gather_kick(&mut self.state, &self.list, &self.incoming, &self.owners, &drift, k + 1 < n);
            self.displacement2 = sweep.displacement2;
            suspicious |= sweep.suspicious || overlap as f64 > OVERLAP_MAX_FRACTION;
            self.steps_done += 1;
            let flagged = std::mem::take(&mut suspicious);
            if flagged && k + 1 < n {
                // inside a batch the sweep used the totals without storing them
                integrate::gather_only(&mut self.state, &self.list, &self.incoming, &self.owners);
            }
            if let Some(p) = halo.check(self, flagged) {
                // inside a batch the positions are those of the next step already (as the
                // GPU's `kick_drift` sees them): name that step
                if k + 1 < n {
                    self.steps_done += 1;
                }
                return Some(p);
            }
        }
        None
    }

    /// `n` steps of a scene with rigid bodies (`rigid.rs`): the bodies are kicked and drifted,
    /// their components placed, the force pass runs on the components, and the bodies gather
    /// their components' totals and take the second half kick. Checks as `steps_on_worker`.
    /// The components' velocities and spins after the second half kick (`place_velocities`)
    /// are set only where something reads them before the next step's `place` overwrites them:
    /// at the batch's end and before a check.
    fn body_steps(&mut self, n: u64) -> Option<Problem> {
        let drift = Drift::new(&self.setup, self.setup.dt);
        for k in 0..n {
            rigid::kick_drift(&mut self.bodies, &drift);
            let sweep = rigid::place(&mut self.state, &self.bodies, &drift, self.list.x_build());
            self.displacement2 = sweep.displacement2;
            let overlap = self.force_pass(self.setup.dt, (self.steps_done + 1) as f64 * self.setup.dt);
            integrate::gather_only(&mut self.state, &self.list, &self.incoming, &self.owners);
            rigid::gather_kick(&self.state, &mut self.bodies, &drift);
            self.steps_done += 1;
            let check = sweep.suspicious || overlap as f64 > OVERLAP_MAX_FRACTION || k + 1 == n;
            if check {
                rigid::place_velocities(&mut self.state, &self.bodies);
                if let Some(p) = self.first_problem() {
                    return Some(p);
                }
            }
        }
        None
    }

    /// The first particle (internal order) with a non-finite quantity or, with the `error`
    /// policy, outside the domain.
    fn first_problem(&self) -> Option<Problem> {
        let s = &self.state;
        let lost = match self.setup.checks.lost_particles {
            LostParticles::Error => self.setup.lost_bounds(),
            LostParticles::Remove => None,
        };
        first_problem(s.len(), |i| [s.position[i], s.velocity[i], s.angular_velocity[i], s.force[i], s.torque[i]], lost, self.setup.periodic)
            .or_else(|| overlap_problem(s.len(), |i| self.owners.owned[i].overlap as f64))
    }

    /// One velocity-Verlet step.
    pub fn step_once(&mut self) {
        self.steps(1);
    }

    /// The error for `problem` (found at `steps_done`), naming the step, the particle's id and
    /// the quantity.
    fn blow_up(&self, problem: &Problem, good_step: u64) -> TalusError {
        let id = self.state.id[problem.index];
        let (lo, hi) = (DVec3::from(self.setup.domain.min), DVec3::from(self.setup.domain.max));
        let mut what = problem.describe((lo, hi), self.setup.checks.lost_margin.unwrap_or(0.0));
        if problem.quantity == crate::model::checks::Quantity::Overlap {
            what += &self.overlap_cause(problem.index);
        }
        let message = if self.steps_done == 0 { what } else { format!("{what}; the backend holds the last good state, step {good_step}") };
        TalusError::BlowUp { step: self.steps_done, particle: Some(id), message }
    }

    /// Why particle `i` (internal order) overlaps beyond the limit: the wall or mesh facet it
    /// reaches deepest into, if that is beyond the limit, and whether the run just started.
    fn overlap_cause(&self, i: usize) -> String {
        let t = self.steps_done as f64 * self.setup.dt;
        let meshes: Vec<MeshView> = (self.setup.meshes.iter().zip(&self.mesh_grids).zip(&self.mesh_group_bases))
            .map(|((wall, grid), &group_base)| MeshView { wall, grid, group_base, pose: wall.pose_at(t) })
            .collect();
        let (x, r) = (self.state.position[i], self.state.radius[i]);
        let sample = || {
            let stride = self.state.len().div_ceil(256).max(1);
            self.state.position.iter().step_by(stride).copied().collect()
        };
        let travel = self.state.velocity[i].length() * self.setup.dt;
        let wall = wall_hits::overlap_wall(&self.setup.walls, t, &meshes, x, r, travel, sample);
        crate::model::checks::overlap_cause(self.steps_done == 0, wall.as_ref().map(|(n, behind)| (n.as_str(), *behind)))
    }

    /// The energy partitions held and booked by the particles `keep` admits (internal index),
    /// each an exact sum (`ENERGY_SUMS` of them, in `energies_of`'s order): the same bits
    /// however the particles are ordered or split between ranks (`decomposed.rs` sums the
    /// particles each rank owns, then over the ranks). Rigid bodies count as wholes.
    pub(crate) fn energy_sums(&self, keep: impl Fn(usize) -> bool) -> Vec<ExactSum> {
        let s = &self.state;
        let g = DVec3::from(self.setup.gravity);
        let mut e = vec![ExactSum::new(); ENERGY_SUMS];
        let bodies = !self.bodies.is_empty();
        if bodies {
            let (b, period) = (&self.bodies, self.setup.period());
            for k in 0..b.len() {
                let v = b.velocity[k];
                e[0].add(0.5 * b.mass[k] * v.length_squared());
                e[1].add(0.5 * b.angular_momentum[k].dot(b.omega[k]));
                e[2].add(-(b.mass[k] * g.dot(b.unwrapped(k, period))));
            }
        }
        let adhesion = !self.owners.adhesion.is_empty();
        for i in (0..s.len()).filter(|&i| keep(i)) {
            let (o, w) = (&self.owners.owned[i], &self.owners.works[i]);
            if !bodies {
                e[0].add(0.5 * s.mass[i] * s.velocity[i].length_squared());
                e[1].add(0.5 * s.inertia[i] * s.angular_velocity[i].length_squared());
                e[2].add(-(s.mass[i] * g.dot(self.unwrapped(i))));
            }
            e[3].add(o.strain);
            e[4].add(w.slip_work);
            e[5].add(w.dashpot_work);
            e[6].add(w.stiffness_work);
            e[7].add(w.wall_work);
            if adhesion {
                e[8].add(self.owners.adhesion[i].surface);
                e[9].add(self.owners.adhesion[i].bond_break);
            }
        }
        e
    }

    /// What the wall contacts of the particles `keep` admits put on each wall: per wall (plane
    /// walls, then meshes) 6 exact sums, force then torque.
    pub(crate) fn wall_load_sums(&self, keep: impl Fn(usize) -> bool) -> Vec<ExactSum> {
        let mut sums = vec![ExactSum::new(); 6 * (self.setup.walls.len() + self.setup.meshes.len())];
        for i in (0..self.state.len()).filter(|&i| keep(i)) {
            for &(w, f, t) in &self.wall_contacts[i] {
                let l = &mut sums[6 * w as usize..6 * w as usize + 6];
                for a in 0..3 {
                    l[a].add(f[a]);
                    l[3 + a].add(t[a]);
                }
            }
        }
        sums
    }

    pub fn state(&self) -> &State {
        &self.state
    }

    /// Neighbour-list builds so far.
    pub fn list_builds(&self) -> u64 {
        self.list.builds
    }

    /// Slots of the current neighbour list (listed pairs).
    pub fn list_slots(&self) -> usize {
        self.list.slots()
    }

    /// Position of the particle stored at `i` without the periodic wrapping (continuous in time).
    fn unwrapped(&self, i: usize) -> DVec3 {
        let k = self.state.image[i];
        self.state.position[i] + DVec3::new(k[0] as f64, k[1] as f64, k[2] as f64) * self.setup.period()
    }

    /// `v` in user-id order.
    fn by_id<T: Copy>(&self, v: &[T]) -> Vec<T> {
        self.state.by_id().map(|i| v[i]).collect()
    }
}

/// What a step loop does between its sweeps besides stepping: nothing on one process
/// (`Alone`); a decomposed run's rank refreshes its ghosts, agrees with the other ranks on list
/// rebuilds and problems, and migrates particles (`decomposed::Halo`).
pub(crate) trait Halo {
    /// After the sweep that drifted the coming step's positions, before its force pass
    /// (`first`: the batch's first step, drifted by `kick_drift`).
    fn before_forces(&mut self, b: &mut CpuBackend, first: bool);
    /// After a step: the problem that stops the loop, if any (`flagged`: this rank's sweeps
    /// flagged something to look at).
    fn check(&mut self, b: &mut CpuBackend, flagged: bool) -> Option<Problem>;
}

/// One process: no exchanges, the checks as they were.
struct Alone;

impl Halo for Alone {
    #[inline]
    fn before_forces(&mut self, _: &mut CpuBackend, _: bool) {}
    #[inline]
    fn check(&mut self, b: &mut CpuBackend, flagged: bool) -> Option<Problem> {
        if flagged { b.first_problem() } else { None }
    }
}

/// Exact sums behind `Energies` (`CpuBackend::energy_sums`).
pub(crate) const ENERGY_SUMS: usize = 10;

/// The energies of `ENERGY_SUMS` exact sums, each rounded once (without the carried work).
pub(crate) fn energies_of(sums: &[ExactSum]) -> Energies {
    let v = |k: usize| sums[k].value();
    Energies {
        kinetic_translational: v(0),
        kinetic_rotational: v(1),
        gravitational: v(2),
        strain: v(3),
        slip: v(4),
        dashpot: v(5),
        stiffness_work: v(6),
        wall_work: v(7),
        surface: v(8),
        bond_break: v(9),
        ..Energies::default()
    }
}

/// The wall loads of `CpuBackend::wall_load_sums`'s sums.
pub(crate) fn wall_loads_of(sums: &[ExactSum]) -> Vec<WallLoad> {
    sums.chunks(6).map(|l| WallLoad { force: [l[0].value(), l[1].value(), l[2].value()], torque: [l[3].value(), l[4].value(), l[5].value()] }).collect()
}

fn to_arrays(v: &[DVec3]) -> Vec<[f64; 3]> {
    v.iter().map(|x| x.to_array()).collect()
}

impl Backend for CpuBackend {
    fn kind(&self) -> &'static str {
        "cpu"
    }
    fn adapter(&self) -> String {
        format!("CPU reference, f64, {} rayon threads, {} force pass", rayon::current_num_threads(), isa::isa().name())
    }
    /// On a problem (`crate::model::checks`) the particle state goes back to where the batch
    /// started (for the last good snapshot; stepping on from there is not supported) and the
    /// error names the step, the particle and the quantity.
    fn step(&mut self, n: u64) -> Result<()> {
        let (good, good_step) = (self.state.motion(), self.steps_done);
        let good_bodies = (!self.bodies.is_empty()).then(|| self.bodies.clone());
        match self.steps(n) {
            None => Ok(()),
            Some(p) => {
                let e = self.blow_up(&p, good_step);
                self.state.restore_motion(good);
                if let Some(b) = good_bodies {
                    self.bodies = b;
                }
                self.steps_done = good_step;
                Err(e)
            }
        }
    }
    fn steps_done(&self) -> u64 {
        self.steps_done
    }
    fn snapshot(&mut self) -> Result<Snapshot> {
        let s = &self.state;
        Ok(Snapshot {
            step: self.steps_done,
            time: self.steps_done as f64 * self.setup.dt,
            position: s.by_id().map(|i| self.unwrapped(i).to_array()).collect(),
            velocity: to_arrays(&self.by_id(&s.velocity)),
            angular_velocity: to_arrays(&self.by_id(&s.angular_velocity)),
            force: to_arrays(&self.by_id(&s.force)),
            torque: to_arrays(&self.by_id(&s.torque)),
            radius: self.by_id(&s.radius),
            bodies: self.bodies.export(),
        })
    }
    fn energies(&mut self) -> Result<Energies> {
        let sums = self.energy_sums(|_| true);
        Ok(energies_of(&sums).plus_carried(&self.carried))
    }
    fn wall_loads(&mut self) -> Result<Vec<WallLoad>> {
        Ok(wall_loads_of(&self.wall_load_sums(|_| true)))
    }
    fn contact_count(&mut self) -> Result<u64> {
        Ok(self.owners.contacts.iter().map(|&c| c as u64).sum())
    }
    fn export_state(&mut self) -> Result<ParticleState> {
        let s = &self.state;
        let particles = Particles {
            position: to_arrays(&self.by_id(&s.position)),
            velocity: to_arrays(&self.by_id(&s.velocity)),
            angular_velocity: to_arrays(&self.by_id(&s.angular_velocity)),
            radius: self.by_id(&s.radius),
            material: self.by_id(&s.material),
        };
        let mut history = self.list.records(s);
        for i in s.by_id() {
            history.extend(self.wall_history[i].iter().map(|&(partner, history)| ContactRecord { owner: s.id[i], partner, history }));
        }
        let n = s.len();
        let mut out = ParticleState { step: self.steps_done, particles, image: self.by_id(&s.image), force: to_arrays(&self.by_id(&s.force)), torque: to_arrays(&self.by_id(&s.torque)), refresh: vec![false; n], history, bodies: self.bodies.export() };
        out.sort_history();
        Ok(out)
    }
    fn import_state(&mut self, state: &ParticleState) -> Result<()> {
        let n = state.len();
        self.steps_done = state.step;
        let mut fresh = State::of(&self.setup, &state.particles).with_bodies(&state.bodies);
        fresh.image = state.image.clone();
        self.bodies = rigid::BodyState::of(&state.bodies);
        self.load(fresh, &state.history);
        // forces of the new state from the kept history, which the pass must not advance
        self.force_pass(0.0, self.steps_done as f64 * self.setup.dt);
        integrate::gather_only(&mut self.state, &self.list, &self.incoming, &self.owners);
        self.restore_history(&state.history);
        self.owners.owned.iter_mut().for_each(|o| *o = Owned { strain: o.strain, ..Owned::default() });
        self.owners.works.iter_mut().for_each(|w| *w = Works::default());
        self.owners.adhesion.iter_mut().for_each(|a| a.bond_break = 0.0);
        for u in (0..n).filter(|&u| !state.refresh[u]) {
            let i = self.state.index_of[u] as usize;
            self.state.force[i] = DVec3::from(state.force[u]);
            self.state.torque[i] = DVec3::from(state.torque[u]);
        }
        rigid::gather_only(&self.state, &mut self.bodies);
        Ok(())
    }
    fn set_carried(&mut self, carried: Energies) {
        self.carried = carried;
    }
    fn carried(&self) -> Energies {
        self.carried
    }
    fn export_exact(&mut self) -> Result<ExactState> {
        Ok(self.export_exact_state())
    }
    fn import_exact(&mut self, exact: &ExactState) -> Result<()> {
        self.import_exact_state(exact)
    }
}
