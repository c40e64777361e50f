//! The CPU backend decomposed over MPI ranks (issue 35, docs/mpi.md): a Cartesian brick of
//! subdomains, one per rank; each rank steps a `CpuBackend` over the particles it owns (centre in
//! its brick) and bit-exact copies of the others' particles within reach (ghosts).
//!
//! * **Local ids.** A rank's `CpuBackend` numbers its particles 0..n in increasing global id
//!   (`Local::gid`), so every order the CPU backend sums in (partners by id, incoming shares by
//!   owner id) is the global one, and a pair across a boundary is evaluated by both ranks, in
//!   canonical order, from the same inputs (LAMMPS `newton off`): an owned particle's force is
//!   bit for bit the force one process computes.
//! * **Every step** (`Halo::before_forces`) ghosts get their owner's position, velocity and spin
//!   (`Ranks::all_to_all`, 72 bytes a ghost); after each step one reduction carries the largest
//!   displacement since the list build and whether a rank found a problem (`Halo::check`), so
//!   every rank rebuilds, and stops, at the same step.
//! * **At a list rebuild** (`Halo::migrate`) particles whose centre left the brick go to the
//!   rank that owns their new place, with their cumulative work and contact history (pair
//!   records where they are owner or partner, their wall history; LAMMPS `fix
//!   neigh/history`); the ghosts are chosen again (`Bricks::ghost_for`: within
//!   2 r_max + largest gap + skin + 2 × the longest step of the brick, on periodic axes by the
//!   nearest image), and the rank's `CpuBackend` reloads its particles (`CpuBackend::reload`).
//! * **Global sums are exact** (`ExactSum` over the particles a rank owns, then over ranks), so
//!   energies and wall loads have the same bits at 1 and N ranks.
//! * **Rank 0 drives.** `Root` is a `Backend` on rank 0 that the ordinary run loop
//!   (`Simulation`) drives; each of its calls first sends the others a `Command`, which they
//!   carry out in `serve`, so every collective call is made by all ranks in the same order.
//!   States travel whole for what is rare (snapshots, checkpoints, the flow exchange: gathered
//!   on rank 0 in id order, or broadcast from it), never inside the step loop.

use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use glam::DVec3;

use super::state::{AdhesionEnergy, State, Works};
pub(crate) use super::redistribute::{Bricks, Local, Message, Reach, Reader, WireRecord};
use super::redistribute::{apply_change, gather_view, local_records, placed_fields, share_query, state_of, Placed, Size, ViewRow};
use super::{energies_of, wall_loads_of, CpuBackend, Halo};
use crate::backend::{Backend, Energies, Snapshot, WallLoad};
use crate::error::{Result, TalusError};
use crate::model::checks::{first_problem, overlap_problem, LostParticles, Problem};
use crate::model::exchange::{ExchangeChange, ExchangeQuery, ExchangeView};
use crate::model::state::{ContactRecord, ExactState, ParticleState};
use crate::ranks::Ranks;
use crate::setup::{Particles, Setup};

/// One particle as it travels between ranks: a migrant (everything it carries) or a ghost
/// chosen at a rebuild.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub(crate) struct Row {
    position: [f64; 3],
    velocity: [f64; 3],
    spin: [f64; 3],
    previous_spin: [f64; 3],
    force: [f64; 3],
    torque: [f64; 3],
    radius: f64,
    works: [f64; 4],
    adhesion: [f64; 2],
    strain: f64,
    id: u32,
    material: u32,
    image: [i32; 3],
    contacts: u32,
}

/// The particles of a global state that a rank holds: owned and ghosts, with the exchange lists.
pub(crate) fn plan(bricks: &Bricks, me: usize, position: &[[f64; 3]], radius: &[f64], reach: &Reach) -> Local {
    let size = bricks.count();
    let mut local = Local { send: vec![Vec::new(); size], recv: vec![Vec::new(); size], ..Local::default() };
    let mut send_gid = vec![Vec::new(); size];
    let mut recv_gid = vec![Vec::new(); size];
    for (g, (&x, &r)) in position.iter().zip(radius).enumerate() {
        let x = DVec3::from(x);
        let owner = bricks.rank_of(x);
        if owner == me {
            local.gid.push(g as u32);
            local.owned.push(true);
            for (other, list) in send_gid.iter_mut().enumerate().filter(|(o, _)| *o != me) {
                if bricks.ghost_for(x, r, other, reach) {
                    list.push(g as u32);
                }
            }
        } else if bricks.ghost_for(x, r, me, reach) {
            local.gid.push(g as u32);
            local.owned.push(false);
            recv_gid[owner].push(g as u32);
        }
    }
    for r in 0..size {
        local.send[r] = send_gid[r].iter().map(|&g| local.lid(g).expect("a sent particle is held")).collect();
        local.recv[r] = recv_gid[r].iter().map(|&g| local.lid(g).expect("a ghost is held")).collect();
    }
    local
}

/// A rank's start of a decomposed run (CPU or GPU): the brick (balanced where the scene asks),
/// the particles it holds, and the set-up of those particles for its backend.
pub(crate) fn start(setup: &Setup, ranks: &Ranks) -> Result<(Bricks, Local, Setup)> {
    if !setup.bodies.is_empty() || !setup.clump_templates.is_empty() {
        return Err(TalusError::Other(format!(
            "{}: rigid clumps on {} MPI ranks are not built yet (issue 35; docs/mpi.md); run the scene on one rank",
            setup.source.display(),
            ranks.size()
        )));
    }
    let mut bricks = Bricks::new(setup, ranks.size())?;
    let p = &setup.particles;
    let state = ParticleState { step: 0, particles: p.clone(), image: vec![[0; 3]; p.len()], force: vec![[0.0; 3]; p.len()], torque: vec![[0.0; 3]; p.len()], refresh: vec![false; p.len()], history: setup.initial_contacts.clone(), bodies: Default::default() };
    let local = replan(&mut bricks, ranks, setup, &state);
    let mut local_setup = setup.clone();
    let subset = |v: &Vec<[f64; 3]>| local.gid.iter().map(|&g| v[g as usize]).collect::<Vec<_>>();
    local_setup.particles = Particles {
        position: subset(&p.position),
        velocity: subset(&p.velocity),
        angular_velocity: subset(&p.angular_velocity),
        radius: local.gid.iter().map(|&g| p.radius[g as usize]).collect(),
        material: local.gid.iter().map(|&g| p.material[g as usize]).collect(),
    };
    // the global skin (its default follows the largest radius held)
    local_setup.skin = Some(setup.skin());
    local_setup.initial_contacts = local_state(&state, &local).history;
    Ok((bricks, local, local_setup))
}

/// The particles of a whole `state` this rank holds, the cut planes balanced first where the
/// scene asks (collective).
pub(crate) fn replan(bricks: &mut Bricks, ranks: &Ranks, setup: &Setup, state: &ParticleState) -> Local {
    let p = &state.particles;
    if setup.balance {
        let me = ranks.rank();
        let mine = p.position.iter().map(|&x| DVec3::from(x)).filter(|&x| bricks.rank_of(x) == me).collect::<Vec<_>>();
        bricks.balance(ranks, mine.into_iter());
    }
    let speed = p.velocity.iter().map(|v| DVec3::from(*v).length()).fold(0.0, f64::max);
    plan(bricks, ranks.rank(), &p.position, &p.radius, &Reach::of(setup, speed))
}

/// `state` restricted to the particles of `local` (ids become local ids): pair records between
/// two of them, wall records of the owned ones.
pub(crate) fn local_state(state: &ParticleState, local: &Local) -> ParticleState {
    let pick = |v: &Vec<[f64; 3]>| local.gid.iter().map(|&g| v[g as usize]).collect::<Vec<_>>();
    let p = &state.particles;
    let particles = Particles {
        position: pick(&p.position),
        velocity: pick(&p.velocity),
        angular_velocity: pick(&p.angular_velocity),
        radius: local.gid.iter().map(|&g| p.radius[g as usize]).collect(),
        material: local.gid.iter().map(|&g| p.material[g as usize]).collect(),
    };
    let history = local_records(&state.history, local);
    ParticleState {
        step: state.step,
        particles,
        image: local.gid.iter().map(|&g| state.image[g as usize]).collect(),
        force: pick(&state.force),
        torque: pick(&state.torque),
        refresh: local.gid.iter().map(|&g| state.refresh[g as usize]).collect(),
        history,
        bodies: Default::default(),
    }
}

/// The commands rank 0 sends the others (`serve`).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Command {
    Step(u64),
    Energies,
    WallLoads,
    ContactCount,
    Snapshot,
    ExportState,
    ImportState,
    ExportExact,
    ImportExact,
    ExchangeView,
    ApplyExchange,
    Exit(i32),
}

impl Command {
    fn to_bytes(self) -> Vec<u8> {
        let (tag, arg): (u8, i64) = match self {
            Command::Step(n) => (0, n as i64),
            Command::Energies => (1, 0),
            Command::WallLoads => (2, 0),
            Command::ContactCount => (3, 0),
            Command::Snapshot => (4, 0),
            Command::ExportState => (5, 0),
            Command::ImportState => (6, 0),
            Command::ExportExact => (7, 0),
            Command::ImportExact => (8, 0),
            Command::ExchangeView => (10, 0),
            Command::ApplyExchange => (11, 0),
            Command::Exit(s) => (9, s as i64),
        };
        let mut v = vec![tag];
        v.extend_from_slice(&arg.to_le_bytes());
        v
    }
    fn of(bytes: &[u8]) -> Command {
        let arg = i64::from_le_bytes(bytes[1..9].try_into().expect("a command argument"));
        match bytes[0] {
            0 => Command::Step(arg as u64),
            1 => Command::Energies,
            2 => Command::WallLoads,
            3 => Command::ContactCount,
            4 => Command::Snapshot,
            5 => Command::ExportState,
            6 => Command::ImportState,
            7 => Command::ExportExact,
            8 => Command::ImportExact,
            10 => Command::ExchangeView,
            11 => Command::ApplyExchange,
            _ => Command::Exit(arg as i32),
        }
    }
}

/// One rank's part of a decomposed CPU run (see the module notes). Every method but the
/// accessors is collective: all ranks call it, in the same order.
pub struct Decomposed {
    ranks: Arc<Ranks>,
    setup: Setup,
    bricks: Bricks,
    inner: CpuBackend,
    local: Local,
}

impl Decomposed {
    /// Every rank's share of `setup`'s initial state (each rank reads the whole scene).
    pub fn new(setup: &Setup, ranks: Arc<Ranks>) -> Result<Decomposed> {
        let made = Self::make(setup, &ranks);
        ranks.agree(made.map(|(bricks, inner, local)| Decomposed { ranks: ranks.clone(), setup: setup.clone(), bricks, inner, local }))
    }

    fn make(setup: &Setup, ranks: &Ranks) -> Result<(Bricks, CpuBackend, Local)> {
        let (bricks, local, local_setup) = start(setup, ranks)?;
        let inner = CpuBackend::new(&local_setup)?;
        Ok((bricks, inner, local))
    }

    fn is_owned(&self, i: usize) -> bool {
        self.local.owned[self.inner.state.id[i] as usize]
    }

    /// `n` steps on every rank; a problem on any rank stops all at the same step, with the
    /// same error (that of the lowest rank that found one), each holding the state at the
    /// batch's start.
    pub fn step(&mut self, n: u64) -> Result<()> {
        let good_step = self.inner.steps_done;
        let saved = self.save();
        let mut halo = StepHalo { ranks: &self.ranks, bricks: &mut self.bricks, setup: &self.setup, local: &mut self.local, failed: None };
        let stopped = self.inner.steps_with(n, &mut halo);
        let failed = halo.failed.take();
        let (Some(_), Some((from, problem))) = (stopped, failed) else { return Ok(()) };
        // formed after the loop named the step (inside a batch, the next one), as on one process
        let mut bytes = match problem {
            Some(p) => {
                let e = match self.inner.blow_up(&p, good_step) {
                    TalusError::BlowUp { step, particle, message } => TalusError::BlowUp { step, particle: particle.map(|l| self.local.gid[l as usize]), message },
                    other => other,
                };
                crate::error::WireError::of(&e).to_bytes()
            }
            None => Vec::new(),
        };
        self.ranks.broadcast_from(from, &mut bytes);
        self.restore(saved, good_step);
        Err(crate::error::WireError::from_bytes(&bytes).into_error())
    }

    /// This rank's particles as rows (local id order) with their pair and wall records.
    fn save(&self) -> (Local, Vec<Row>, Vec<ContactRecord>) {
        let rows = (0..self.local.gid.len() as u32).map(|lid| row(&self.inner, &self.local, lid)).collect();
        (self.local.clone(), rows, records_global(&self.inner, &self.local))
    }

    fn restore(&mut self, saved: (Local, Vec<Row>, Vec<ContactRecord>), step: u64) {
        let (local, rows, records) = saved;
        self.inner.steps_done = step;
        let t = step as f64 * self.setup.dt;
        reload(&mut self.inner, &self.setup, &local, &rows, &records, t);
        self.local = local;
    }

    pub fn energies(&mut self) -> Energies {
        let sums = self.inner.energy_sums(|i| self.is_owned(i));
        energies_of(&self.ranks.sum_exact_many(&sums))
    }

    pub fn wall_loads(&mut self) -> Vec<WallLoad> {
        let sums = self.inner.wall_load_sums(|i| self.is_owned(i));
        if sums.is_empty() {
            return Vec::new();
        }
        wall_loads_of(&self.ranks.sum_exact_many(&sums))
    }

    pub fn contact_count(&mut self) -> u64 {
        let s = &self.inner.state;
        let local = (0..s.len()).filter(|&i| self.is_owned(i)).map(|i| self.inner.owners.contacts[i] as u64).sum();
        self.ranks.sum_u64(local)
    }

    /// Every rank's owned particles, gathered on rank 0 in id order.
    fn gather_rows(&self) -> Option<Vec<Row>> {
        let rows: Vec<Row> = (0..self.local.gid.len() as u32).filter(|&l| self.local.owned[l as usize]).map(|l| row(&self.inner, &self.local, l)).collect();
        let all = self.ranks.gather(bytemuck::cast_slice(&rows))?;
        let mut rows: Vec<Row> = all.iter().flat_map(|b| bytemuck::pod_collect_to_vec::<u8, Row>(b)).collect();
        rows.sort_unstable_by_key(|r| r.id);
        assert!(rows.iter().enumerate().all(|(k, r)| r.id as usize == k), "the ranks' particles are ids 0..n, each once");
        Some(rows)
    }

    pub fn snapshot(&mut self) -> Option<Snapshot> {
        let rows = self.gather_rows()?;
        let period = self.setup.period();
        let unwrapped = |r: &Row| (DVec3::from(r.position) + DVec3::new(r.image[0] as f64, r.image[1] as f64, r.image[2] as f64) * period).to_array();
        Some(Snapshot {
            step: self.inner.steps_done,
            time: self.inner.steps_done as f64 * self.setup.dt,
            position: rows.iter().map(unwrapped).collect(),
            velocity: rows.iter().map(|r| r.velocity).collect(),
            angular_velocity: rows.iter().map(|r| r.spin).collect(),
            force: rows.iter().map(|r| r.force).collect(),
            torque: rows.iter().map(|r| r.torque).collect(),
            radius: rows.iter().map(|r| r.radius).collect(),
            bodies: Default::default(),
        })
    }

    /// The whole state, on rank 0: each pair record from the rank that owns its owner particle.
    pub fn export_state(&mut self) -> Option<ParticleState> {
        let records: Vec<WireRecord> = records_global(&self.inner, &self.local)
            .iter()
            .filter(|c| self.local.lid(c.owner).is_some_and(|l| self.local.owned[l as usize]))
            .map(WireRecord::of)
            .collect();
        let gathered = self.ranks.gather(bytemuck::cast_slice(&records));
        let rows = self.gather_rows()?;
        let mut history: Vec<ContactRecord> = gathered?.iter().flat_map(|b| bytemuck::pod_collect_to_vec::<u8, WireRecord>(b)).map(|w| w.record()).collect();
        history.sort_unstable_by_key(|c| (c.owner, c.partner));
        Some(state_of(self.inner.steps_done, &rows, vec![false; rows.len()], history))
    }

    /// Continue from `state` (rank 0's; the others pass `None` and receive it).
    pub fn import_state(&mut self, state: Option<&ParticleState>) -> Result<()> {
        let mut bytes = state.map(encode_state).unwrap_or_default();
        self.ranks.broadcast(&mut bytes);
        let state = decode_state(&bytes);
        let local = replan(&mut self.bricks, &self.ranks, &self.setup, &state);
        let done = self.inner.import_state(&local_state(&state, &local));
        self.local = local;
        self.ranks.agree(done)
    }

    /// Every particle's exact state (`Backend::export_exact`), on rank 0 in id order.
    pub fn export_exact(&mut self) -> Option<ExactState> {
        let mine = self.inner.export_exact_state();
        let n = self.local.gid.len();
        let owned: Vec<usize> = (0..n).filter(|&l| self.local.owned[l]).collect();
        let mut m = Message::default();
        m.put(&owned.iter().map(|&l| self.local.gid[l]).collect::<Vec<u32>>());
        m.put(&owned.iter().map(|&l| mine.work[l]).collect::<Vec<[f64; 4]>>());
        // bytes per particle of each array (0 on a rank that holds none)
        m.put(&mine.raw.iter().map(|(_, b)| b.len().checked_div(n).unwrap_or(0) as u64).collect::<Vec<u64>>());
        for (_, bytes) in &mine.raw {
            let size = bytes.len().checked_div(n).unwrap_or(0);
            m.put(&owned.iter().flat_map(|&l| bytes[l * size..(l + 1) * size].iter().copied()).collect::<Vec<u8>>());
        }
        let all = self.ranks.gather(&m.0)?;
        let mut parts: Vec<(Vec<u32>, Vec<[f64; 4]>, Vec<Vec<u8>>)> = Vec::new();
        let mut sizes = vec![0usize; mine.raw.len()];
        for b in &all {
            let mut r = Reader { bytes: b };
            let ids: Vec<u32> = r.take();
            let work: Vec<[f64; 4]> = r.take();
            for (s, &k) in sizes.iter_mut().zip(&r.take::<u64>()) {
                *s = (*s).max(k as usize);
            }
            let raw = mine.raw.iter().map(|_| r.take::<u8>()).collect();
            parts.push((ids, work, raw));
        }
        let total: usize = parts.iter().map(|p| p.0.len()).sum();
        let mut work = vec![[0.0; 4]; total];
        let mut raw: Vec<(String, Vec<u8>)> = mine.raw.iter().zip(&sizes).map(|((name, _), size)| (name.clone(), vec![0u8; size * total])).collect();
        for (ids, w, r) in &parts {
            for (k, &g) in ids.iter().enumerate() {
                work[g as usize] = w[k];
                for (((_, dst), src), &size) in raw.iter_mut().zip(r).zip(&sizes) {
                    dst[g as usize * size..(g as usize + 1) * size].copy_from_slice(&src[k * size..(k + 1) * size]);
                }
            }
        }
        Some(ExactState { kind: mine.kind, work, raw })
    }

    /// Right after `import_state`: restore rank 0's `exact` (the others pass `None`).
    pub fn import_exact(&mut self, exact: Option<&ExactState>) -> Result<()> {
        let mut m = Message::default();
        if let Some(e) = exact {
            m.put(e.kind.as_bytes());
            m.put(&e.work);
            m.put(&[e.raw.len() as u64]);
            for (name, bytes) in &e.raw {
                m.put(name.as_bytes());
                m.put(bytes);
            }
        }
        self.ranks.broadcast(&mut m.0);
        let mut r = Reader { bytes: &m.0 };
        let kind = String::from_utf8(r.take()).unwrap_or_default();
        let work: Vec<[f64; 4]> = r.take();
        let count: Vec<u64> = r.take();
        let total = work.len();
        let mut raw = Vec::new();
        for _ in 0..count[0] {
            let name = String::from_utf8(r.take()).unwrap_or_default();
            let bytes: Vec<u8> = r.take();
            let size = bytes.len().checked_div(total).unwrap_or(0);
            raw.push((name, self.local.gid.iter().flat_map(|&g| bytes[g as usize * size..(g as usize + 1) * size].iter().copied()).collect()));
        }
        let mine = ExactState { kind, work: self.local.gid.iter().map(|&g| work[g as usize]).collect(), raw };
        let done = self.inner.import_exact_state(&mine);
        self.ranks.agree(done)
    }
}

/// One rank's part of a decomposed run, on the CPU (`Decomposed`) or the GPU
/// (`gpu::decomposed::GpuDecomposed`): the collective operations `Root` drives on rank 0 and
/// `serve` carries out on the others. Every method is called by all ranks in the same order;
/// what is gathered comes back on rank 0 only (`None` elsewhere).
pub trait RankPart {
    fn ranks(&self) -> &Ranks;
    fn setup(&self) -> &Setup;
    /// `Backend::kind` of the backend each rank steps.
    fn kind(&self) -> &'static str;
    /// `Backend::adapter` of the whole run (rank 0's device, the ranks and the brick).
    fn adapter(&self) -> String;
    fn steps_done(&self) -> u64;
    /// `n` steps on every rank; a problem on any rank stops all at the same step with the
    /// same error.
    fn step(&mut self, n: u64) -> Result<()>;
    /// The energy partitions over all ranks (the cumulative work the ranks hold, without the
    /// run's carried work, which `Root` keeps).
    fn energies(&mut self) -> Result<Energies>;
    fn wall_loads(&mut self) -> Result<Vec<WallLoad>>;
    fn contact_count(&mut self) -> Result<u64>;
    fn snapshot(&mut self) -> Result<Option<Snapshot>>;
    fn export_state(&mut self) -> Result<Option<ParticleState>>;
    /// Continue from `state` (rank 0's; the others pass `None` and receive it).
    fn import_state(&mut self, state: Option<&ParticleState>) -> Result<()>;
    fn export_exact(&mut self) -> Result<Option<ExactState>>;
    /// Right after `import_state`: restore rank 0's `exact` (the others pass `None`).
    fn import_exact(&mut self, exact: Option<&ExactState>) -> Result<()>;
    /// The particles rank 0's `query` asks for (the others pass `None`), gathered on rank 0
    /// (`Backend::exchange_view`; `cpu::redistribute`).
    fn exchange_view(&mut self, query: Option<&ExchangeQuery>) -> Result<Option<ExchangeView>>;
    /// Rank 0's `change` (the others pass `None`) applied where the particles are
    /// (`Backend::apply_exchange`; `cpu::redistribute::apply_change`).
    fn apply_exchange(&mut self, change: Option<&ExchangeChange>) -> Result<()>;
}

/// Ranks other than 0: carry out rank 0's commands until it says the run is over; returns the
/// exit status it gave.
pub fn serve(part: &mut dyn RankPart) -> i32 {
    loop {
        let mut bytes = Vec::new();
        part.ranks().broadcast(&mut bytes);
        match Command::of(&bytes) {
            Command::Step(n) => {
                let _ = part.step(n);
            }
            Command::Energies => {
                let _ = part.energies();
            }
            Command::WallLoads => {
                let _ = part.wall_loads();
            }
            Command::ContactCount => {
                let _ = part.contact_count();
            }
            Command::Snapshot => {
                let _ = part.snapshot();
            }
            Command::ExportState => {
                let _ = part.export_state();
            }
            Command::ImportState => {
                let _ = part.import_state(None);
            }
            Command::ExportExact => {
                let _ = part.export_exact();
            }
            Command::ImportExact => {
                let _ = part.import_exact(None);
            }
            Command::ExchangeView => {
                let _ = part.exchange_view(None);
            }
            Command::ApplyExchange => {
                let _ = part.apply_exchange(None);
            }
            Command::Exit(status) => return status,
        }
    }
}

impl RankPart for Decomposed {
    fn ranks(&self) -> &Ranks {
        &self.ranks
    }
    fn setup(&self) -> &Setup {
        &self.setup
    }
    fn kind(&self) -> &'static str {
        "cpu"
    }
    fn adapter(&self) -> String {
        let d = self.bricks.dims;
        format!("CPU reference, f64, {} MPI ranks ({}×{}×{} bricks) × {} rayon threads, {} force pass", self.ranks.size(), d[0], d[1], d[2], rayon::current_num_threads(), super::isa::isa().name())
    }
    fn steps_done(&self) -> u64 {
        self.inner.steps_done
    }
    fn step(&mut self, n: u64) -> Result<()> {
        Decomposed::step(self, n)
    }
    fn energies(&mut self) -> Result<Energies> {
        Ok(Decomposed::energies(self))
    }
    fn wall_loads(&mut self) -> Result<Vec<WallLoad>> {
        Ok(Decomposed::wall_loads(self))
    }
    fn contact_count(&mut self) -> Result<u64> {
        Ok(Decomposed::contact_count(self))
    }
    fn snapshot(&mut self) -> Result<Option<Snapshot>> {
        Ok(Decomposed::snapshot(self))
    }
    fn export_state(&mut self) -> Result<Option<ParticleState>> {
        Ok(Decomposed::export_state(self))
    }
    fn import_state(&mut self, state: Option<&ParticleState>) -> Result<()> {
        Decomposed::import_state(self, state)
    }
    fn export_exact(&mut self) -> Result<Option<ExactState>> {
        Ok(Decomposed::export_exact(self))
    }
    fn import_exact(&mut self, exact: Option<&ExactState>) -> Result<()> {
        Decomposed::import_exact(self, exact)
    }
    fn exchange_view(&mut self, query: Option<&ExchangeQuery>) -> Result<Option<ExchangeView>> {
        let q = share_query(&self.ranks, query);
        let periodic = self.setup.periodic;
        let owned = (0..self.local.gid.len() as u32).filter(|&l| self.local.owned[l as usize]).map(|l| row(&self.inner, &self.local, l));
        let (mut picked, mut sizes) = (Vec::new(), Vec::new());
        for r in owned {
            if q.wants(DVec3::from(r.position), periodic) {
                picked.push(ViewRow { position: r.position, velocity: r.velocity, spin: r.spin, radius: r.radius, id: r.id, material: r.material });
            }
            sizes.push(Size { radius: r.radius, id: r.id, material: r.material });
        }
        Ok(gather_view(&self.ranks, self.inner.steps_done, &picked, &sizes))
    }
    fn apply_exchange(&mut self, change: Option<&ExchangeChange>) -> Result<()> {
        let rows: Vec<Row> = (0..self.local.gid.len() as u32).map(|l| row(&self.inner, &self.local, l)).collect();
        let records = records_global(&self.inner, &self.local);
        let (mut state, local) = apply_change(&self.ranks, &mut self.bricks, &self.setup, &self.local, &rows, &records, change);
        state.step = self.inner.steps_done;
        self.local = local;
        let done = self.inner.import_state(&state);
        self.ranks.agree(done)
    }
}

impl Placed for Row {
    placed_fields!();
    fn added(gid: u32, p: &Particles, k: usize) -> Row {
        Row { position: p.position[k], velocity: p.velocity[k], spin: p.angular_velocity[k], previous_spin: p.angular_velocity[k], radius: p.radius[k], id: gid, material: p.material[k], ..Row::zeroed() }
    }
}

/// Local id `lid` of `b` as a row (global id).
fn row(b: &CpuBackend, local: &Local, lid: u32) -> Row {
    let s = &b.state;
    let i = s.index_of[lid as usize] as usize;
    let w = &b.owners.works[i];
    let a = b.owners.adhesion.get(i).copied().unwrap_or_default();
    Row {
        position: s.position[i].to_array(),
        velocity: s.velocity[i].to_array(),
        spin: s.angular_velocity[i].to_array(),
        previous_spin: s.previous_spin.get(i).copied().unwrap_or(DVec3::ZERO).to_array(),
        force: s.force[i].to_array(),
        torque: s.torque[i].to_array(),
        radius: s.radius[i],
        works: [w.slip_work, w.dashpot_work, w.stiffness_work, w.wall_work],
        adhesion: [a.surface, a.bond_break],
        strain: b.owners.owned[i].strain,
        id: local.gid[lid as usize],
        material: s.material[i],
        image: s.image[i],
        contacts: b.owners.contacts[i],
    }
}

/// `b`'s pair records and wall histories with global ids.
fn records_global(b: &CpuBackend, local: &Local) -> Vec<ContactRecord> {
    let g = |lid: u32| local.gid[lid as usize];
    let mut out: Vec<ContactRecord> = b.list.records(&b.state).into_iter().map(|c| ContactRecord { owner: g(c.owner), partner: g(c.partner), history: c.history }).collect();
    for i in b.state.by_id() {
        let owner = g(b.state.id[i]);
        out.extend(b.wall_history[i].iter().map(|&(partner, history)| ContactRecord { owner, partner, history }));
    }
    out
}

/// Load `rows` (in global id order, ids as in `local`) with `records` (global ids) into `b`.
fn reload(b: &mut CpuBackend, setup: &Setup, local: &Local, rows: &[Row], records: &[ContactRecord], t: f64) {
    let particles = Particles {
        position: rows.iter().map(|r| r.position).collect(),
        velocity: rows.iter().map(|r| r.velocity).collect(),
        angular_velocity: rows.iter().map(|r| r.spin).collect(),
        radius: rows.iter().map(|r| r.radius).collect(),
        material: rows.iter().map(|r| r.material).collect(),
    };
    let mut state = State::of(setup, &particles);
    state.image = rows.iter().map(|r| r.image).collect();
    state.force = rows.iter().map(|r| DVec3::from(r.force)).collect();
    state.torque = rows.iter().map(|r| DVec3::from(r.torque)).collect();
    if !state.previous_spin.is_empty() {
        state.previous_spin = rows.iter().map(|r| DVec3::from(r.previous_spin)).collect();
    }
    let mut local_records = local_records(records, local);
    local_records.sort_by_key(|c| (c.owner, !c.between_particles(), c.partner));
    let works: Vec<Works> = rows.iter().map(|r| Works { slip_work: r.works[0], dashpot_work: r.works[1], stiffness_work: r.works[2], wall_work: r.works[3] }).collect();
    let adhesion: Vec<AdhesionEnergy> = rows.iter().map(|r| AdhesionEnergy { surface: r.adhesion[0], bond_break: r.adhesion[1] }).collect();
    b.reload(state, &works, &adhesion, &local_records, t);
    for (lid, r) in rows.iter().enumerate() {
        let i = b.state.index_of[lid] as usize;
        b.owners.owned[i].strain = r.strain;
        b.owners.contacts[i] = r.contacts;
    }
}

/// A rank's exchanges inside the step loop (`CpuBackend::steps_with`).
struct StepHalo<'a> {
    ranks: &'a Ranks,
    bricks: &'a mut Bricks,
    setup: &'a Setup,
    local: &'a mut Local,
    /// Once a rank found a problem: the rank that names it, and (on that rank) the problem.
    failed: Option<(usize, Option<Problem>)>,
}

impl StepHalo<'_> {
    /// Ghosts take their owners' position, velocity and spin.
    fn refresh(&mut self, b: &mut CpuBackend) {
        let s = &mut b.state;
        let to: Vec<Vec<u8>> = self
            .local
            .send
            .iter()
            .map(|lids| {
                let mut v: Vec<[f64; 3]> = Vec::with_capacity(3 * lids.len());
                for &l in lids {
                    let i = s.index_of[l as usize] as usize;
                    v.extend([s.position[i].to_array(), s.velocity[i].to_array(), s.angular_velocity[i].to_array()]);
                }
                bytemuck::cast_slice(&v).to_vec()
            })
            .collect();
        let got = self.ranks.all_to_all(to);
        for (lids, bytes) in self.local.recv.iter().zip(&got) {
            let v: Vec<[f64; 3]> = bytemuck::pod_collect_to_vec(bytes);
            assert_eq!(v.len(), 3 * lids.len(), "a ghost refresh of the agreed length");
            for (k, &l) in lids.iter().enumerate() {
                let i = s.index_of[l as usize] as usize;
                s.position[i] = DVec3::from(v[3 * k]);
                s.velocity[i] = DVec3::from(v[3 * k + 1]);
                s.angular_velocity[i] = DVec3::from(v[3 * k + 2]);
            }
        }
    }

    /// At a list rebuild: particles that left the brick go to their new owner with what they
    /// carry, the ghosts are chosen again, and `b` reloads.
    fn migrate(&mut self, b: &mut CpuBackend, t: f64) {
        let (me, size) = (self.ranks.rank(), self.ranks.size());
        let n = self.local.gid.len();
        let rows: Vec<Row> = (0..n as u32).map(|l| row(b, self.local, l)).collect();
        let records = records_global(b, self.local);
        let owned_speed = (0..n).filter(|&l| self.local.owned[l]).map(|l| DVec3::from(rows[l].velocity).length()).fold(0.0, f64::max);
        let reach = Reach::of(self.setup, self.ranks.max_f64(owned_speed));
        if self.setup.balance {
            self.bricks.balance(self.ranks, rows.iter().enumerate().filter(|(l, _)| self.local.owned[*l]).map(|(_, r)| DVec3::from(r.position)));
        }
        // migrants, with every record that names them
        let dest: Vec<usize> = rows.iter().enumerate().map(|(l, r)| if self.local.owned[l] { self.bricks.rank_of(DVec3::from(r.position)) } else { usize::MAX }).collect();
        let mut out_rows: Vec<Vec<Row>> = vec![Vec::new(); size];
        let mut out_records: Vec<Vec<WireRecord>> = vec![Vec::new(); size];
        for (l, &d) in dest.iter().enumerate() {
            if d != me && d != usize::MAX {
                out_rows[d].push(rows[l]);
            }
        }
        let leaving = |g: u32| self.local.lid(g).map(|l| dest[l as usize]).filter(|&d| d != me && d != usize::MAX);
        for c in &records {
            let a = leaving(c.owner);
            if let Some(d) = a {
                out_records[d].push(WireRecord::of(c));
            }
            if c.between_particles() {
                if let Some(d) = leaving(c.partner).filter(|&d| Some(d) != a) {
                    out_records[d].push(WireRecord::of(c));
                }
            }
        }
        let messages: Vec<Vec<u8>> = out_rows.iter().zip(&out_records).map(|(r, c)| {
            let mut m = Message::default();
            m.put(r);
            m.put(c);
            m.0
        }).collect();
        let got = self.ranks.all_to_all(messages);
        let mut owned_rows: Vec<Row> = rows.iter().enumerate().filter(|(l, _)| dest[*l] == me).map(|(_, r)| *r).collect();
        let mut arrived: Vec<ContactRecord> = Vec::new();
        let mut migrants: Vec<u32> = Vec::new();
        for bytes in &got {
            let mut r = Reader { bytes };
            let rows: Vec<Row> = r.take();
            migrants.extend(rows.iter().map(|r| r.id));
            owned_rows.extend(rows);
            arrived.extend(r.take::<WireRecord>().iter().map(WireRecord::record));
        }
        migrants.sort_unstable();
        owned_rows.sort_unstable_by_key(|r| r.id);
        // a migrant's records come from the rank that owned it; the others stay
        let is_migrant = |g: u32| migrants.binary_search(&g).is_ok();
        let mut records: Vec<ContactRecord> = records.into_iter().filter(|c| !is_migrant(c.owner) && !(c.between_particles() && is_migrant(c.partner))).collect();
        records.extend(arrived);
        records.sort_by_key(|c| (c.owner, !c.between_particles(), c.partner));
        records.dedup_by_key(|c| (c.owner, !c.between_particles(), c.partner));
        // ghosts for the other ranks
        let mut out_ghosts: Vec<Vec<Row>> = vec![Vec::new(); size];
        for r in &owned_rows {
            for (other, list) in out_ghosts.iter_mut().enumerate().filter(|(o, _)| *o != me) {
                if self.bricks.ghost_for(DVec3::from(r.position), r.radius, other, &reach) {
                    list.push(*r);
                }
            }
        }
        let send_gid: Vec<Vec<u32>> = out_ghosts.iter().map(|g| g.iter().map(|r| r.id).collect()).collect();
        let got = self.ranks.all_to_all(out_ghosts.iter().map(|g| bytemuck::cast_slice(g).to_vec()).collect());
        let ghosts: Vec<Vec<Row>> = got.iter().map(|b| bytemuck::pod_collect_to_vec(b)).collect();
        let mut all: Vec<(Row, bool)> = owned_rows.iter().map(|r| (*r, true)).chain(ghosts.iter().flatten().map(|r| (*r, false))).collect();
        all.sort_unstable_by_key(|(r, _)| r.id);
        let mut local = Local {
            gid: all.iter().map(|(r, _)| r.id).collect(),
            owned: all.iter().map(|(_, o)| *o).collect(),
            send: Vec::new(),
            recv: Vec::new(),
        };
        local.send = send_gid.iter().map(|g| g.iter().map(|&g| local.lid(g).expect("an owned particle")).collect()).collect();
        local.recv = ghosts.iter().map(|g| g.iter().map(|r| local.lid(r.id).expect("a ghost")).collect()).collect();
        let rows: Vec<Row> = all.into_iter().map(|(r, _)| r).collect();
        reload(b, self.setup, &local, &rows, &records, t);
        *self.local = local;
    }

    /// The first problem among the particles this rank owns (internal index).
    fn first_owned_problem(&self, b: &CpuBackend) -> Option<Problem> {
        let s = &b.state;
        let owned: Vec<usize> = (0..s.len()).filter(|&i| self.local.owned[s.id[i] as usize]).collect();
        let lost = match self.setup.checks.lost_particles {
            LostParticles::Error => self.setup.lost_bounds(),
            LostParticles::Remove => None,
        };
        let found = first_problem(owned.len(), |k| { let i = owned[k]; [s.position[i], s.velocity[i], s.angular_velocity[i], s.force[i], s.torque[i]] }, lost, self.setup.periodic)
            .or_else(|| overlap_problem(owned.len(), |k| b.owners.owned[owned[k]].overlap as f64));
        found.map(|p| Problem { index: owned[p.index], ..p })
    }
}

impl Halo for StepHalo<'_> {
    fn before_forces(&mut self, b: &mut CpuBackend, _first: bool) {
        self.refresh(b);
        // the largest displacement since the build over every rank's particles, from exact
        // positions only (a ghost's own drift used a partial force: its sweep value is not)
        let drift = super::integrate::Drift::new(&b.setup, b.setup.dt);
        let x_build = b.list.x_build();
        let local = if x_build.len() == b.state.len() {
            use rayon::prelude::*;
            b.state.position.par_iter().zip(x_build).with_min_len(4096).map(|(&x, &x0)| drift.displacement2(x, x0)).reduce(|| 0.0, f64::max)
        } else {
            f64::INFINITY
        };
        b.displacement2 = self.ranks.max_f64(local);
        let t = (b.steps_done + 1) as f64 * self.setup.dt;
        if b.list.needs_rebuild(&b.setup, b.displacement2, &b.wall_states(t)) {
            self.migrate(b, t);
        }
    }

    fn check(&mut self, b: &mut CpuBackend, flagged: bool) -> Option<Problem> {
        let local = if flagged { self.first_owned_problem(b) } else { None };
        // the problem every rank names: the lowest (kind, global id) found on any rank
        let key = |p: &Problem| (p.quantity == crate::model::checks::Quantity::Overlap) as u64 * (1u64 << 32) + self.local.gid[b.state.id[p.index] as usize] as u64;
        let mine = local.as_ref().map(key);
        let first = self.ranks.max_f64(mine.map_or(f64::NEG_INFINITY, |k| -(k as f64)));
        if first == f64::NEG_INFINITY {
            return None;
        }
        let chosen = mine.is_some_and(|k| -(k as f64) == first);
        // the rank that names it is the lowest holding it (one owner: exactly one)
        let me = self.ranks.rank() as f64;
        let from = self.ranks.max_f64(if chosen { -me } else { f64::NEG_INFINITY });
        self.failed = Some(((-from) as usize, if chosen { local.clone() } else { None }));
        Some(local.unwrap_or(Problem { index: 0, quantity: crate::model::checks::Quantity::Overlap, value: DVec3::ZERO }))
    }
}

/// A whole state as bytes (the flow exchange's and a resume's import on every rank).
pub(crate) fn encode_state(s: &ParticleState) -> Vec<u8> {
    let mut m = Message::default();
    let p = &s.particles;
    m.put(&[s.step]);
    m.put(&p.position);
    m.put(&p.velocity);
    m.put(&p.angular_velocity);
    m.put(&p.radius);
    m.put(&p.material);
    m.put(&s.image);
    m.put(&s.force);
    m.put(&s.torque);
    m.put(&s.refresh.iter().map(|&r| r as u8).collect::<Vec<u8>>());
    m.put(&s.history.iter().map(WireRecord::of).collect::<Vec<_>>());
    m.0
}

pub(crate) fn decode_state(bytes: &[u8]) -> ParticleState {
    let mut r = Reader { bytes };
    let step: Vec<u64> = r.take();
    let particles = Particles { position: r.take(), velocity: r.take(), angular_velocity: r.take(), radius: r.take(), material: r.take() };
    ParticleState {
        step: step[0],
        particles,
        image: r.take(),
        force: r.take(),
        torque: r.take(),
        refresh: r.take::<u8>().iter().map(|&x| x != 0).collect(),
        history: r.take::<WireRecord>().iter().map(WireRecord::record).collect(),
        bodies: Default::default(),
    }
}

/// Rank 0's face of a decomposed run: the `Backend` the run loop drives. Each call tells the
/// other ranks (`serve`) to do the same, then does its part.
pub struct Root {
    d: Box<dyn RankPart>,
    carried: Energies,
}

impl Root {
    pub fn new(d: Box<dyn RankPart>) -> Root {
        Root { d, carried: Energies::default() }
    }

    /// Rank 0: send the others `command`.
    fn command(&self, command: Command) {
        let mut bytes = command.to_bytes();
        self.d.ranks().broadcast(&mut bytes);
    }

    /// The run is over: the other ranks exit with `status`.
    pub fn finish(&self, status: i32) {
        self.command(Command::Exit(status));
    }
}

fn none_on_root<T>(v: Option<T>) -> Result<T> {
    v.ok_or_else(|| TalusError::Other("rank 0 received no gathered state".into()))
}

impl Backend for Root {
    fn kind(&self) -> &'static str {
        self.d.kind()
    }
    fn adapter(&self) -> String {
        self.d.adapter()
    }
    fn step(&mut self, n: u64) -> Result<()> {
        self.command(Command::Step(n));
        self.d.step(n)
    }
    fn steps_done(&self) -> u64 {
        self.d.steps_done()
    }
    fn snapshot(&mut self) -> Result<Snapshot> {
        self.command(Command::Snapshot);
        none_on_root(self.d.snapshot()?)
    }
    fn energies(&mut self) -> Result<Energies> {
        self.command(Command::Energies);
        Ok(self.d.energies()?.plus_carried(&self.carried))
    }
    fn wall_loads(&mut self) -> Result<Vec<WallLoad>> {
        self.command(Command::WallLoads);
        let loads = self.d.wall_loads()?;
        let setup = self.d.setup();
        Ok(if loads.is_empty() { vec![WallLoad::default(); setup.walls.len() + setup.meshes.len()] } else { loads })
    }
    fn contact_count(&mut self) -> Result<u64> {
        self.command(Command::ContactCount);
        self.d.contact_count()
    }
    fn export_state(&mut self) -> Result<ParticleState> {
        self.command(Command::ExportState);
        none_on_root(self.d.export_state()?)
    }
    fn import_state(&mut self, state: &ParticleState) -> Result<()> {
        if !state.bodies.is_empty() {
            return Err(TalusError::Other("rigid clumps on several MPI ranks are not built yet (issue 35)".into()));
        }
        self.command(Command::ImportState);
        self.d.import_state(Some(state))
    }
    fn set_carried(&mut self, carried: Energies) {
        self.carried = carried;
    }
    fn carried(&self) -> Energies {
        self.carried
    }
    fn export_exact(&mut self) -> Result<ExactState> {
        self.command(Command::ExportExact);
        none_on_root(self.d.export_exact()?)
    }
    fn import_exact(&mut self, exact: &ExactState) -> Result<()> {
        self.command(Command::ImportExact);
        self.d.import_exact(Some(exact))
    }
    /// Only the particles near the outlets and insertion regions come to rank 0, with every
    /// particle's radius and material (the held mass).
    fn exchange_view(&mut self, query: &ExchangeQuery) -> Result<Option<ExchangeView>> {
        self.command(Command::ExchangeView);
        none_on_root(self.d.exchange_view(Some(query))?).map(Some)
    }
    /// The change goes to every rank, which applies it to what it owns.
    fn apply_exchange(&mut self, change: &ExchangeChange) -> Result<()> {
        self.command(Command::ApplyExchange);
        self.d.apply_exchange(Some(change))
    }
}
