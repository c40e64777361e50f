//! The GPU backend decomposed over MPI ranks, one device per rank (issue 35, docs/mpi.md): the
//! brick, ownership, local ids in global-id order and the collective protocol of
//! `cpu::decomposed` (`Bricks`, `plan`, `RankPart`, `Root`, `serve`), with a `GpuBackend` per
//! rank holding its owned particles and their ghosts.
//!
//! * **Every step** (`GpuBackend::step_with_ghosts`): the drift, then the owned rows other ranks
//!   hold as ghosts packed on the device (`ghost_pack`, 60 B a ghost: the xyz of block,
//!   offset, velocity, spin and previous spin) and read back, exchanged (`Ranks::all_to_all`), unpacked over the ghosts
//!   (`ghost_unpack`), then the list plan, forces and kick as a batch of one step. The device
//!   sums every particle's force in partner-id order, so an owned particle's force is the one a
//!   single device computes from the same bits.
//! * **Ghost marks.** A ghost carries `GHOST_BIT` in its block's w word: the force pass books no
//!   work for the contacts it owns, and the energy and wall-load reductions skip it, so each
//!   rank sums what it owns and the ranks' sums add up (exactly, `ExactSum`).
//! * **Migration.** A rank's device rebuilds its list on its own (the list's content and
//!   timing do not change results: the skin-independence tests). Since the last migration
//!   every particle has moved less than skin/2 plus a step unless some rank rebuilt, so when a
//!   step's list plan rebuilt on any rank, every rank migrates before the next step: its state
//!   read back whole (`export_state`, `export_exact`), each owned particle sent with its raw
//!   device rows and the records it owns to its new owner and to the ranks that hold it as a
//!   ghost (one all-to-all), and the device reloaded (`import_state`, `import_exact`: bit for
//!   bit the rows that were sent). The work booked so far is carried (`Backend::set_carried`).
//!
//! What the f32 device cannot give at any rank count: the energy partitions and wall loads are
//! f32 tree sums per workgroup of the particles a device holds, so their last bits depend on
//! how the particles are split; the trajectory (positions, velocities, spins, forces) does not.

use std::sync::Arc;

use bytemuck::{Pod, Zeroable};

use super::buffers::{adhesion_rows, work_groups};
use super::halo::{GhostLists, GhostPipelines};
use super::{GpuBackend, GpuOptions, GridSpec};
use crate::backend::{Backend, Energies, Snapshot, WallLoad};
use crate::cpu::decomposed::{decode_state, encode_state, local_state, replan, start, Bricks, Local, Message, RankPart, Reader, WireRecord};
use crate::cpu::redistribute::{apply_change, gather_view, local_records, placed_fields, reach_for, redistribute, share_query, state_of, Held, Placed, Size, ViewRow};
use crate::model::exchange::{ExchangeChange, ExchangeQuery, ExchangeView};
use crate::cpu::{energies_of, wall_loads_of};
use crate::error::{Result, TalusError};
use crate::exact_sum::ExactSum;
use crate::layout::consts::{DISSIPATION_PARTS, GHOST_BIT, MATERIAL_MASK};
use crate::model::state::{ContactRecord, ExactState, ParticleState};
use crate::ranks::Ranks;
use crate::setup::{Particles, Setup};

/// The device arrays a particle carries bit for bit (`gpu::checkpoint`'s per-particle raw
/// arrays), with their bytes per particle.
const RAW: [(&str, usize); 5] = [("pos_block", 16), ("pos_offset", 16), ("motion", 48), ("force", 32), ("image", 16)];
const RAW_WORDS: usize = 32;
const _: () = assert!(RAW[0].1 + RAW[1].1 + RAW[2].1 + RAW[3].1 + RAW[4].1 == 4 * RAW_WORDS);
const _: () = assert!(crate::layout::consts::MOTION_ROWS == 3, "RAW's motion bytes");

/// One particle on the wire: its state as `export_state` gives it and its device rows.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct GpuRow {
    position: [f64; 3],
    velocity: [f64; 3],
    spin: [f64; 3],
    force: [f64; 3],
    torque: [f64; 3],
    radius: f64,
    id: u32,
    material: u32,
    image: [i32; 3],
    _pad: u32,
    raw: [u32; RAW_WORDS],
}

/// One particle of a snapshot on the wire (as the rank's device read it).
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct SnapRow {
    position: [f64; 3],
    velocity: [f64; 3],
    spin: [f64; 3],
    force: [f64; 3],
    torque: [f64; 3],
    radius: f64,
    id: u64,
}

/// Every local particle of `state` and `exact` (one device's export) as rows with global ids.
fn rows_of(state: &ParticleState, exact: &ExactState, local: &Local) -> Result<Vec<GpuRow>> {
    let arrays: Vec<&[u8]> = RAW.iter().map(|(name, _)| exact.raw(name)).collect::<Result<_>>()?;
    let p = &state.particles;
    Ok((0..p.len())
        .map(|l| {
            let mut raw = [0u32; RAW_WORDS];
            let mut at = 0;
            for (bytes, (_, size)) in arrays.iter().zip(RAW) {
                let words: Vec<u32> = bytemuck::pod_collect_to_vec(&bytes[l * size..(l + 1) * size]);
                raw[at..at + size / 4].copy_from_slice(&words);
                at += size / 4;
            }
            GpuRow {
                position: p.position[l],
                velocity: p.velocity[l],
                spin: p.angular_velocity[l],
                force: state.force[l],
                torque: state.torque[l],
                radius: p.radius[l],
                id: local.gid[l],
                material: p.material[l],
                image: state.image[l],
                _pad: 0,
                raw,
            }
        })
        .collect())
}

/// The device's arrays for `rows` (local id order): the raw rows with the ghost marks of
/// `owned`, and empty work accumulators.
fn exact_of(rows: &[GpuRow], owned: &[bool], adhesion: bool) -> ExactState {
    let n = rows.len();
    let mut raw = Vec::new();
    let mut at = 0;
    for (name, size) in RAW {
        let mut bytes = Vec::with_capacity(n * size);
        for (r, &own) in rows.iter().zip(owned) {
            let mut words = r.raw[at..at + size / 4].to_vec();
            if name == "pos_block" {
                let material = words[3] & MATERIAL_MASK;
                words[3] = if own { material } else { material | GHOST_BIT };
            }
            bytes.extend_from_slice(bytemuck::cast_slice(&words));
        }
        raw.push((name.to_string(), bytes));
        at += size / 4;
    }
    let groups = work_groups(n as u32) as usize;
    let (step_rows, work_pairs) = adhesion_rows(adhesion);
    raw.push(("dissipation".to_string(), vec![0u8; 8 * work_pairs as usize * groups]));
    raw.push(("work_step".to_string(), vec![0u8; 16 * step_rows as usize * groups]));
    ExactState { kind: super::checkpoint::KIND.into(), work: vec![[0.0; 4]; n], raw }
}

/// The cumulative work of `e` as the carried partitions of a backend (`Backend::set_carried`).
fn work_of(e: &Energies) -> Energies {
    Energies { slip: e.slip, dashpot: e.dashpot, stiffness_work: e.stiffness_work, wall_work: e.wall_work, bond_break: e.bond_break, ..Energies::default() }
}

/// One rank's part of a decomposed GPU run (module notes). Every method but the accessors is
/// collective.
pub struct GpuDecomposed {
    ranks: Arc<Ranks>,
    setup: Setup,
    bricks: Bricks,
    inner: GpuBackend,
    local: Local,
    pipes: Arc<GhostPipelines>,
    lists: GhostLists,
    /// `StepState::rebuilds` of this rank's device after the last migration or import.
    rebuilds_at_migration: u32,
    /// A list was rebuilt on some rank: migrate before the next step.
    migrate_due: bool,
}

impl GpuDecomposed {
    /// Every rank's share of `setup`'s initial state on its own device (each rank reads the
    /// whole scene).
    pub fn new(setup: &Setup, ranks: Arc<Ranks>) -> Result<GpuDecomposed> {
        let made = Self::make(setup, &ranks);
        ranks.agree(made)
    }

    fn make(setup: &Setup, ranks: &Arc<Ranks>) -> Result<GpuDecomposed> {
        let (bricks, local, local_setup) = start(setup, ranks)?;
        // the whole scene's grid: the same blocks on every rank as on one device
        let opts = GpuOptions { grid: Some(GridSpec::new(setup)?), cell_order: Some(false), ..GpuOptions::default() };
        // a device per rank: the ranks of a node take its GPUs in turn
        let ctx = super::context::open_context_for_rank(crate::gpu::context::node_local_rank())?;
        let mut inner = GpuBackend::with_context(ctx, &local_setup, opts)?;
        inner.mark_ghosts(&local.owned)?;
        let pipes = inner.ghost_pipelines(None)?;
        let lists = Self::lists_for(&inner, &pipes, &local)?;
        let rebuilds_at_migration = inner.list_builds()?;
        Ok(GpuDecomposed { ranks: ranks.clone(), setup: setup.clone(), bricks, inner, local, pipes, lists, rebuilds_at_migration, migrate_due: false })
    }

    /// The device's exchange lists: every rank's list in rank order.
    fn lists_for(inner: &GpuBackend, pipes: &GhostPipelines, local: &Local) -> Result<GhostLists> {
        let send: Vec<u32> = local.send.concat();
        let recv: Vec<u32> = local.recv.concat();
        inner.ghost_lists(pipes, &send, &recv)
    }

    /// After the device took new particles: ghost marks, exchange lists, the build count.
    fn after_import(&mut self, marked: bool) -> Result<()> {
        if !marked {
            self.inner.mark_ghosts(&self.local.owned)?;
        }
        self.pipes = self.inner.ghost_pipelines(Some(self.pipes.clone()))?;
        self.lists = Self::lists_for(&self.inner, &self.pipes, &self.local)?;
        self.rebuilds_at_migration = self.inner.list_builds()?;
        Ok(())
    }

    /// A device error's particle index, made a global id (the others pass through).
    fn global_error(&self, e: TalusError) -> TalusError {
        match e {
            TalusError::BlowUp { step, particle, message } => TalusError::BlowUp { step, particle: particle.map(|l| self.local.gid.get(l as usize).copied().unwrap_or(l)), message },
            other => other,
        }
    }

    fn step_once(&mut self, loads: bool) -> Result<()> {
        if self.migrate_due {
            let done = self.migrate();
            self.ranks.agree(done)?;
            self.migrate_due = false;
        }
        let ranks = self.ranks.clone();
        let sizes: Vec<usize> = self.local.send.iter().map(|l| l.len() * super::halo::GHOST_ROW_BYTES as usize).collect();
        let mut exchange = |rows: Vec<u8>| -> Vec<u8> {
            let mut at = 0;
            let to = sizes
                .iter()
                .map(|&len| {
                    let part = rows[at..at + len].to_vec();
                    at += len;
                    part
                })
                .collect();
            ranks.all_to_all(to).concat()
        };
        let stepped = self.inner.step_with_ghosts(&self.lists, &self.pipes, loads, &mut exchange).map_err(|e| self.global_error(e));
        let st = self.ranks.agree(stepped)?;
        let rebuilt = st.rebuilds != self.rebuilds_at_migration;
        self.migrate_due = self.ranks.max_f64(if rebuilt { 1.0 } else { 0.0 }) > 0.0;
        Ok(())
    }

    /// Particles to their new owners, ghosts chosen again, the device reloaded (module notes).
    fn migrate(&mut self) -> Result<()> {
        // every rank agrees before the collectives below, so that none waits for one that failed
        let read = (|| Ok((self.inner.export_state()?, self.inner.export_exact()?, self.inner.energies()?)))();
        let (state, exact, energies) = self.ranks.agree(read)?;
        let carried = work_of(&energies);
        let rows = self.ranks.agree(rows_of(&state, &exact, &self.local))?;
        // each owned particle to its owner and the ranks that hold it as a ghost, with the
        // records it owns (a pair's record is kept where both its particles are held)
        let owned: Vec<GpuRow> = rows.iter().enumerate().filter(|(l, _)| self.local.owned[*l]).map(|(_, r)| *r).collect();
        let records: Vec<ContactRecord> = state
            .history
            .iter()
            .filter(|c| self.local.owned[c.owner as usize])
            .map(|c| ContactRecord { owner: self.local.gid[c.owner as usize], partner: if c.between_particles() { self.local.gid[c.partner as usize] } else { c.partner }, history: c.history })
            .collect();
        let reach = reach_for(&self.ranks, &mut self.bricks, &self.setup, &owned);
        let Held { rows: held, records, local, .. } = redistribute(&self.ranks, &self.bricks, &reach, &owned, &vec![0; owned.len()], &records);
        let history = local_records(&records, &local);
        let next = state_of(state.step, &held, vec![false; held.len()], history);
        let exact = exact_of(&held, &local.owned, self.setup.has_adhesion());
        self.local = local;
        self.inner.import_state(&next)?;
        self.inner.import_exact(&exact)?;
        self.inner.set_carried(carried);
        self.after_import(true)
    }

    /// The owned rows of this rank's device, gathered on rank 0 in id order.
    fn gather_owned<T: Pod>(&self, rows: Vec<T>, id: impl Fn(&T) -> u64) -> Option<Vec<T>> {
        let all = self.ranks.gather(bytemuck::cast_slice(&rows))?;
        let mut rows: Vec<T> = all.iter().flat_map(|b| bytemuck::pod_collect_to_vec::<u8, T>(b)).collect();
        rows.sort_unstable_by_key(&id);
        assert!(rows.iter().enumerate().all(|(k, r)| id(r) == k as u64), "the ranks' particles are ids 0..n, each once");
        Some(rows)
    }
}

impl RankPart for GpuDecomposed {
    fn ranks(&self) -> &Ranks {
        &self.ranks
    }
    fn setup(&self) -> &Setup {
        &self.setup
    }
    fn kind(&self) -> &'static str {
        "gpu"
    }
    fn adapter(&self) -> String {
        let d = self.bricks.dims;
        format!("{}, {} MPI ranks ({}×{}×{} bricks), a device per rank", self.inner.adapter(), self.ranks.size(), d[0], d[1], d[2])
    }
    fn steps_done(&self) -> u64 {
        self.inner.steps_done()
    }
    fn step(&mut self, n: u64) -> Result<()> {
        for k in 0..n {
            self.step_once(k + 1 == n)?;
        }
        Ok(())
    }
    fn energies(&mut self) -> Result<Energies> {
        let e = self.inner.energies();
        let e = self.ranks.agree(e)?;
        let values = [e.kinetic_translational, e.kinetic_rotational, e.gravitational, e.strain, e.slip, e.dashpot, e.stiffness_work, e.wall_work, e.surface, e.bond_break];
        let sums: Vec<ExactSum> = values.iter().map(|&v| ExactSum::sum_of([v])).collect();
        Ok(energies_of(&self.ranks.sum_exact_many(&sums)))
    }
    fn wall_loads(&mut self) -> Result<Vec<WallLoad>> {
        let loads = self.inner.wall_loads();
        let loads = self.ranks.agree(loads)?;
        let sums: Vec<ExactSum> = loads.iter().flat_map(|l| l.force.into_iter().chain(l.torque)).map(|v| ExactSum::sum_of([v])).collect();
        Ok(wall_loads_of(&self.ranks.sum_exact_many(&sums)))
    }
    fn contact_count(&mut self) -> Result<u64> {
        let n = self.inner.contact_count();
        let n = self.ranks.agree(n)?;
        Ok(self.ranks.sum_u64(n))
    }
    fn snapshot(&mut self) -> Result<Option<Snapshot>> {
        let s = self.inner.snapshot();
        let s = self.ranks.agree(s)?;
        let rows: Vec<SnapRow> = (0..s.radius.len())
            .filter(|&l| self.local.owned[l])
            .map(|l| SnapRow { position: s.position[l], velocity: s.velocity[l], spin: s.angular_velocity[l], force: s.force[l], torque: s.torque[l], radius: s.radius[l], id: self.local.gid[l] as u64 })
            .collect();
        let Some(rows) = self.gather_owned(rows, |r| r.id) else { return Ok(None) };
        Ok(Some(Snapshot {
            step: s.step,
            time: s.time,
            position: rows.iter().map(|r| r.position).collect(),
            velocity: rows.iter().map(|r| r.velocity).collect(),
            angular_velocity: rows.iter().map(|r| r.spin).collect(),
            force: rows.iter().map(|r| r.force).collect(),
            torque: rows.iter().map(|r| r.torque).collect(),
            radius: rows.iter().map(|r| r.radius).collect(),
            bodies: Default::default(),
        }))
    }
    fn export_state(&mut self) -> Result<Option<ParticleState>> {
        let state = self.inner.export_state();
        let state = self.ranks.agree(state)?;
        let rows: Vec<GpuRow> = rows_of(&state, &zero_raw(state.len()), &self.local).expect("the arrays just made").into_iter().filter(|r| self.local.lid(r.id).is_some_and(|l| self.local.owned[l as usize])).collect();
        let records: Vec<WireRecord> = state
            .history
            .iter()
            .filter(|c| self.local.owned[c.owner as usize])
            .map(|c| WireRecord::of(&ContactRecord { owner: self.local.gid[c.owner as usize], partner: if c.between_particles() { self.local.gid[c.partner as usize] } else { c.partner }, history: c.history }))
            .collect();
        let gathered = self.ranks.gather(bytemuck::cast_slice(&records));
        let Some(rows) = self.gather_owned(rows, |r| r.id as u64) else { return Ok(None) };
        let Some(gathered) = gathered else { return Ok(None) };
        let history = gathered.iter().flat_map(|b| bytemuck::pod_collect_to_vec::<u8, WireRecord>(b)).map(|w| w.record()).collect();
        Ok(Some(state_of(state.step, &rows, vec![false; rows.len()], history)))
    }
    fn import_state(&mut self, state: Option<&ParticleState>) -> Result<()> {
        let mut bytes = state.map(encode_state).unwrap_or_default();
        self.ranks.broadcast(&mut bytes);
        let state = decode_state(&bytes);
        self.local = replan(&mut self.bricks, &self.ranks, &self.setup, &state);
        let done = self.inner.import_state(&local_state(&state, &self.local)).and_then(|_| {
            // the run's totals are rank 0's (`Root`); what the devices book starts again
            self.inner.set_carried(Energies::default());
            self.after_import(false)
        });
        self.migrate_due = false;
        self.ranks.agree(done)
    }
    fn export_exact(&mut self) -> Result<Option<ExactState>> {
        let mine = self.inner.export_exact();
        let mine = self.ranks.agree(mine)?;
        let e = self.inner.energies();
        let work = work_of(&self.ranks.agree(e)?);
        let n = self.local.gid.len();
        let owned: Vec<usize> = (0..n).filter(|&l| self.local.owned[l]).collect();
        let mut m = Message::default();
        m.put(&owned.iter().map(|&l| self.local.gid[l]).collect::<Vec<u32>>());
        for (name, size) in RAW {
            let bytes = mine.raw(name).expect("the GPU's raw arrays");
            m.put(&owned.iter().flat_map(|&l| bytes[l * size..(l + 1) * size].iter().copied()).collect::<Vec<u8>>());
        }
        let totals = [work.slip, work.dashpot, work.stiffness_work, work.wall_work, work.bond_break].map(|v| ExactSum::sum_of([v]));
        let totals: Vec<f64> = self.ranks.sum_exact_many(&totals).iter().map(ExactSum::value).collect();
        let Some(all) = self.ranks.gather(&m.0) else { return Ok(None) };
        let mut parts = Vec::new();
        for b in &all {
            let mut r = Reader { bytes: b };
            let ids: Vec<u32> = r.take();
            let arrays: Vec<Vec<u8>> = RAW.iter().map(|_| r.take::<u8>()).collect();
            parts.push((ids, arrays));
        }
        let total: usize = parts.iter().map(|p| p.0.len()).sum();
        let mut raw: Vec<(String, Vec<u8>)> = RAW.iter().map(|(name, size)| (name.to_string(), vec![0u8; size * total])).collect();
        for (ids, arrays) in &parts {
            for (k, &g) in ids.iter().enumerate() {
                for ((_, dst), (src, (_, size))) in raw.iter_mut().zip(arrays.iter().zip(RAW)) {
                    dst[g as usize * size..(g as usize + 1) * size].copy_from_slice(&src[k * size..(k + 1) * size]);
                }
            }
        }
        // one process's layout: no ghost marks, and the work of all ranks on the first workgroup
        for b in raw[0].1.chunks_mut(16) {
            let w = u32::from_le_bytes(b[12..16].try_into().expect("a word")) & MATERIAL_MASK;
            b[12..16].copy_from_slice(&w.to_le_bytes());
        }
        let adhesion = self.setup.has_adhesion();
        let groups = work_groups(total as u32) as usize;
        let (step_rows, work_pairs) = adhesion_rows(adhesion);
        let pair = |v: f64| [v as f32, ((v as f32) as f64 - v) as f32];
        let mut dissipation: Vec<[f32; 2]> = vec![[0.0; 2]; work_pairs as usize * groups];
        for k in 0..DISSIPATION_PARTS as usize {
            dissipation[k] = pair(totals[k]);
        }
        if adhesion {
            dissipation[DISSIPATION_PARTS as usize * groups] = pair(totals[4]);
        }
        raw.push(("dissipation".into(), bytemuck::cast_slice(&dissipation).to_vec()));
        raw.push(("work_step".into(), vec![0u8; 16 * step_rows as usize * groups]));
        let mut per_particle = vec![[0.0f64; 4]; total];
        if total > 0 {
            per_particle[0] = [totals[0], totals[1], totals[2], totals[3]];
        }
        if adhesion {
            let mut a = vec![[0.0f64; 2]; total];
            if total > 0 {
                a[0][1] = totals[4];
            }
            raw.push(("adhesion".into(), bytemuck::cast_slice(&a).to_vec()));
        }
        Ok(Some(ExactState { kind: mine.kind, work: per_particle, raw }))
    }
    fn import_exact(&mut self, exact: Option<&ExactState>) -> Result<()> {
        let mut m = Message::default();
        // (an unreadable order is an error every rank agrees on, after the broadcast)
        let (exact, unreadable) = match exact.map(super::checkpoint::in_id_order).transpose() {
            Ok(e) => (e, None),
            Err(e) => (None, Some(e)),
        };
        if let Some(e) = exact.as_deref() {
            m.put(e.kind.as_bytes());
            m.put(&e.work);
            let bond_break: f64 = e.raw("adhesion").map(|b| bytemuck::pod_collect_to_vec::<u8, [f64; 2]>(b).iter().map(|a| a[1]).sum()).unwrap_or(0.0);
            m.put(&[bond_break]);
            for (name, _) in RAW {
                m.put(e.raw(name).unwrap_or(&[]));
            }
        }
        self.ranks.broadcast(&mut m.0);
        let mut r = Reader { bytes: &m.0 };
        let kind = String::from_utf8(r.take()).unwrap_or_default();
        let work: Vec<[f64; 4]> = r.take();
        let bond_break: Vec<f64> = r.take();
        let arrays: Vec<Vec<u8>> = RAW.iter().map(|_| r.take::<u8>()).collect();
        let done = (|| -> Result<()> {
            if let Some(e) = unreadable {
                return Err(e);
            }
            if kind == super::checkpoint::KIND {
                let total = work.len();
                let mut rows: Vec<GpuRow> = Vec::with_capacity(self.local.gid.len());
                for &g in &self.local.gid {
                    let mut row = GpuRow::zeroed();
                    let mut at = 0;
                    for (bytes, (name, size)) in arrays.iter().zip(RAW) {
                        if bytes.len() != size * total {
                            return Err(TalusError::Other(format!("the GPU state's `{name}` holds {} bytes, not {} for {total} particles", bytes.len(), size * total)));
                        }
                        let words: Vec<u32> = bytemuck::pod_collect_to_vec(&bytes[g as usize * size..(g as usize + 1) * size]);
                        row.raw[at..at + size / 4].copy_from_slice(&words);
                        at += size / 4;
                    }
                    rows.push(row);
                }
                self.inner.import_exact(&exact_of(&rows, &self.local.owned, self.setup.has_adhesion()))?;
            }
            // the work saved with the state is the devices' (one total, on rank 0)
            let sum = |k: usize| ExactSum::sum_of(work.iter().map(|w| w[k])).value();
            let carried = Energies { slip: sum(0), dashpot: sum(1), stiffness_work: sum(2), wall_work: sum(3), bond_break: bond_break.first().copied().unwrap_or(0.0), ..Energies::default() };
            self.inner.set_carried(if self.ranks.is_root() { carried } else { Energies::default() });
            Ok(())
        })();
        self.ranks.agree(done)
    }
    fn exchange_view(&mut self, query: Option<&ExchangeQuery>) -> Result<Option<ExchangeView>> {
        let q = share_query(&self.ranks, query);
        let view = self.inner.exchange_view(&q).map(|v| v.expect("the GPU backend hands out views of spheres"));
        let view = self.ranks.agree(view)?;
        let p = &view.state.particles;
        let picked: Vec<ViewRow> = (0..view.ids.len())
            .filter(|&k| self.local.owned[view.ids[k] as usize])
            .map(|k| ViewRow { position: p.position[k], velocity: p.velocity[k], spin: p.angular_velocity[k], radius: p.radius[k], id: self.local.gid[view.ids[k] as usize], material: p.material[k] })
            .collect();
        let sizes: Vec<Size> = (0..view.n).filter(|&l| self.local.owned[l]).map(|l| Size { radius: view.radius[l], id: self.local.gid[l], material: view.material[l] }).collect();
        Ok(gather_view(&self.ranks, self.inner.steps_done(), &picked, &sizes))
    }
    fn apply_exchange(&mut self, change: Option<&ExchangeChange>) -> Result<()> {
        let state = self.inner.export_state();
        let state = self.ranks.agree(state)?;
        let rows = rows_of(&state, &zero_raw(state.len()), &self.local).expect("the arrays just made");
        let records: Vec<ContactRecord> = state.history.iter().map(|c| ContactRecord { owner: self.local.gid[c.owner as usize], partner: if c.between_particles() { self.local.gid[c.partner as usize] } else { c.partner }, history: c.history }).collect();
        let (mut next, local) = apply_change(&self.ranks, &mut self.bricks, &self.setup, &self.local, &rows, &records, change);
        next.step = state.step;
        self.local = local;
        let done = self.inner.import_state(&next).and_then(|_| {
            // as an import: what the devices book starts again (`Root` carries the totals)
            self.inner.set_carried(Energies::default());
            self.after_import(false)
        });
        self.migrate_due = false;
        self.ranks.agree(done)
    }
}

/// Empty device rows for `n` particles (the rows of a state that is imported, not restored).
fn zero_raw(n: usize) -> ExactState {
    ExactState { kind: String::new(), work: Vec::new(), raw: RAW.iter().map(|(name, size)| (name.to_string(), vec![0u8; size * n])).collect() }
}

impl Placed for GpuRow {
    placed_fields!();
    fn added(gid: u32, p: &Particles, k: usize) -> GpuRow {
        GpuRow { position: p.position[k], velocity: p.velocity[k], spin: p.angular_velocity[k], radius: p.radius[k], id: gid, material: p.material[k], ..GpuRow::zeroed() }
    }
}
