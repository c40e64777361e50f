//! Capacities that can overflow (the wall-contact history table and the neighbour list, whose
//! slots also hold the ball-pair history),
//! overflow detection, growth and redo. (The per-thread list of a ball's facet groups of a mesh, `MESH_GROUPS_MAX`, cannot
//! grow: its flag `OVERFLOW_MESH_GROUPS` ends the run with an error naming the mesh.)
//!
//! No copy of the state is kept (HOOMD's checkConditions style: flag, grow, redo). A pass that
//! finds a capacity too small raises its flag in the step state before it has changed anything
//! a redo reads; the rest of that step's passes, and `advance`, see the flag and every later
//! pass of the batch exits early (`halt`), so the device stops inside step s with the step
//! counter at s. After the batch the host reads the step state (the only readback per batch),
//! grows what overflowed and resumes the batch from step s's rebuild passes
//! (`StepEncoder::resume`):
//! - a list build that needs more slots than the list has raises `OVERFLOW_LIST` (with the
//!   number it needed) in `list_stash`, before it writes a slot; the host re-creates the slot
//!   buffers a quarter larger, copying the current list's partner words and history tables
//!   over, and the resumed step builds the list again (moving the history to the new slots);
//! - an insert into the wall-contact table being written that finds no free slot, or a load
//!   over 3/4, raises `OVERFLOW_HASH`; the table the step read is untouched (ping-pong, as the
//!   slot history: the force pass writes only the other table and flags of it), so the host
//!   moves its entries into a table twice as large (`rehash`, lookups are by key so results are
//!   unchanged), starts the write table empty and the resumed step evaluates the forces again
//!   (they overwrite everything the first attempt wrote).
//!
//! Nothing is dropped, so a run with a tiny initial table or list is bit-identical to one with
//! generous ones.

use super::walls;
use super::layout::{HashSlot, StepState, StepStateRead, STEP_STATE_BYTES};
use super::readback::{map_read_after, read_buffers};
use super::buffers::Buffers;
use super::split::{SplitBuffer, SplitLayout};
use super::encode::{bind_group, dispatch_threads, pass_groups, PassGroups};
use super::step::{BindGroups, StepEncoder};
use super::GpuBackend;
use crate::error::{Result, TalusError};
use crate::layout::consts::{BLOWUP, OVERFLOW_HASH, OVERFLOW_LIST, OVERFLOW_MESH_GROUPS, REBUILD_LATE, SLOT_ACTIVE_BIT};
use std::collections::VecDeque;

/// The ball-pair history an initial force evaluation puts into the new list's slots: records
/// uploaded by a state import (a buffer of `PairRecord`s and their count; `slot_import`), or
/// the old list's of an exchange on the device (`gpu::flow`; `exchange_pairs`).
pub(crate) enum HistoryImport<'a> {
    Records(&'a wgpu::Buffer, u32),
    Exchange(&'a Carried<'a>),
}

/// What `exchange_pairs` binds inside the force evaluation of an exchange
/// (`HistoryImport::Exchange`): the old list, the exchange's parameters and removed ids, and
/// the refresh marks it sets.
pub(crate) struct Carried<'a> {
    /// The `exchange_pairs` pipeline, compiled for `split`.
    pub pairs: &'a wgpu::ComputePipeline,
    /// How the arrays were cut when the exchange began (the pipeline's and the old arrays').
    pub split: SplitLayout,
    /// The old list: its run starts and partner words.
    pub start_old: &'a wgpu::Buffer,
    pub partner_old: &'a SplitBuffer,
    /// The records the next step reads, at the old list's slots; `None`: in the other table of
    /// the buffers the list is built in (an exchange in place copies them there, `gpu::flow`).
    pub history_old: Option<&'a SplitBuffer>,
    pub params: &'a wgpu::Buffer,
    pub removed: &'a wgpu::Buffer,
    pub refresh: &'a wgpu::Buffer,
    pub n_old: u32,
}

/// The old partner words and records of an exchange laid out again, with the pass compiled
/// anew, for a list that grew into more parts during the exchange's force evaluation
/// (`GpuBackend::relay_carried`).
pub(crate) struct Relaid {
    pub split: SplitLayout,
    /// `exchange_pairs` compiled for `split`.
    pub pairs: wgpu::ComputePipeline,
    pub partner_old: SplitBuffer,
    pub history_old: Option<SplitBuffer>,
}

impl Carried<'_> {
    /// The pass, its bind groups over the new buffers `b` at step `s`, and its thread count
    /// (from `relaid`'s copies and pipeline where the list grew into more parts).
    pub(crate) fn pairs_pass<'p>(&'p self, device: &wgpu::Device, b: &Buffers, s: u64, relaid: Option<&'p Relaid>) -> (&'p wgpu::ComputePipeline, PassGroups, u32) {
        let p = (s % 2) as usize;
        let (pairs, partner_old, history_old) = match relaid {
            Some(r) => (&r.pairs, &r.partner_old, r.history_old.as_ref()),
            None => (self.pairs, self.partner_old, self.history_old),
        };
        let history_old = history_old.unwrap_or(&b.slot_history[1 - p]);
        let groups = pass_groups(
            device,
            pairs,
            "exchange_pairs",
            &[self.params, self.removed, self.start_old, &b.list_start, self.refresh, &b.step_state, &b.tag],
            &[partner_old, history_old, &b.list_partner, &b.slot_history[p]],
        );
        (pairs, groups, self.n_old)
    }
}

/// Batches of steps submitted before the host reads the first one's step state
/// (`GpuBackend::run_steps`).
const BATCHES_IN_FLIGHT: usize = 2;

/// A submitted batch of steps `s0 .. s0 + n` whose step state goes to readback buffer
/// `readback` (of `Buffers::flags_readback`).
struct Submitted {
    s0: u64,
    n: u64,
    readback: usize,
    index: wgpu::SubmissionIndex,
}

/// Slot indices carry `SLOT_ACTIVE_BIT` in the incoming entries: the list stays below it.
const SLOT_INDEX_MAX: u32 = SLOT_ACTIVE_BIT - 1;

/// Default size of each wall-contact table (ball-pair history lives in the list slots): one
/// slot per 8 particles plus 16 per plane or mesh wall, at least 256 (at load 3/4 that is one
/// wall contact per 11 particles, where a cube of 1M packed grains has one per 20; it grows when
/// a scene has more, bit-identically); 4 without walls. Both tables share one binding: at
/// 100M particles they take 1.4 GB of its 2 GiB (56-byte `HashSlot`s).
pub fn initial_hash_capacity(n_particles: u32, n_surfaces: u32) -> u32 {
    if n_surfaces == 0 {
        return 4;
    }
    let want = n_particles as u64 / 8 + 16 * n_surfaces as u64;
    want.clamp(256, 1 << 29) as u32
}

/// Default neighbour-list size: 3.5 slots per particle (the settled settle box needs 3.4 with
/// the default skin, a packed bed 2.9; a list that needs more grows by a quarter, see above),
/// at least 256.
pub fn initial_list_capacity(n_particles: u32) -> u32 {
    (7u64 * n_particles as u64 / 2).clamp(256, u32::MAX as u64) as u32
}

/// A requested capacity (at least 4 slots).
pub fn round_capacity(c: u32) -> u32 {
    c.max(4)
}

/// Insertions per step allowed before OVERFLOW_HASH (load factor 3/4).
pub fn max_load(capacity: u32) -> u32 {
    (capacity as u64 * 3 / 4) as u32
}

impl GpuBackend {
    fn write_sim(&self) {
        self.ctx.queue.write_buffer(&self.buffers.sim, 0, bytemuck::bytes_of(&self.sim));
    }

    pub(crate) fn read_step_state(&self) -> Result<StepStateRead> {
        let b = read_buffers(&self.ctx, &[(&self.buffers.step_state, STEP_STATE_BYTES)])?;
        Ok(bytemuck::pod_read_unaligned(&b[0]))
    }

    /// Run `n` steps in batches of `batch_len` steps, `BATCHES_IN_FLIGHT` of them submitted
    /// ahead, so that the device runs one while the host encodes the next (on an H100 the host
    /// left the device idle for about 0.25 ms a step while it read a batch's step state and
    /// encoded the next one). The host reads each batch's step state (its only readback) in
    /// turn. A batch that overflowed or blew up halted the device, so the batches submitted
    /// after it ran as no-ops (every pass exits early on `halt`): they are waited for and
    /// dropped, the halted batch is grown and resumed (`finish_halted`), and the steps after
    /// it are submitted again. The last step computes the wall loads.
    pub(crate) fn run_steps(&mut self, n: u64) -> Result<()> {
        self.check_usable()?;
        let end = self.steps_done + n;
        let per = self.batch_len();
        let mut flight: VecDeque<Submitted> = VecDeque::new();
        let mut next = self.steps_done;
        while self.steps_done < end {
            while flight.len() < BATCHES_IN_FLIGHT && next < end {
                let k = per.min(end - next);
                let readback = flight.back().map_or(0, |b| 1 - b.readback);
                self.prepare_batch(next, k);
                let mut enc = self.ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("batch") });
                self.step_encoder().steps(&mut enc, next, k, next + k == end);
                flight.push_back(self.submit_with_readback(enc, next, k, readback));
                next += k;
            }
            let batch = flight.pop_front().expect("a batch in flight");
            let st = self.read_step_state_of(&batch)?;
            if st.flags == 0 {
                self.steps_done = batch.s0 + batch.n;
                self.adapt_rebuild_stride(&st, batch.n, false);
                continue;
            }
            if let Some(last) = flight.back() {
                self.wait_for(last)?;
            }
            flight.clear();
            self.prepare_batch(batch.s0, batch.n);
            self.finish_halted(st, batch.s0, batch.n, batch.s0 + batch.n == end)?;
            next = self.steps_done;
        }
        Ok(())
    }

    /// Steps per batch: `steps_per_submit`, at most `WALL_ROWS_MAX` where walls move (one row
    /// of wall poses per step is uploaded per batch).
    pub(crate) fn batch_len(&self) -> u64 {
        if self.walls_move() {
            self.opts.steps_per_submit.clamp(1, walls::WALL_ROWS_MAX)
        } else {
            self.opts.steps_per_submit.max(1)
        }
    }

    /// Before encoding steps `s0 .. s0 + n` as a batch: the wall poses they use. (A batch
    /// submitted after it may upload its own rows over them; queue order keeps each batch's
    /// rows until it has run, and a halted batch uploads its rows again before it resumes.)
    pub(crate) fn prepare_batch(&mut self, s0: u64, n: u64) {
        if self.walls_move() {
            // the force evaluations of steps s0 .. s0 + n are at time indices s0 + 1 ..
            self.upload_poses(s0 + 1, n);
        }
    }

    /// Submit `enc`, holding the batch of steps `s0 .. s0 + n`, with the step state copied to
    /// readback buffer `readback` after it.
    fn submit_with_readback(&self, mut enc: wgpu::CommandEncoder, s0: u64, n: u64, readback: usize) -> Submitted {
        let b = &self.buffers;
        enc.copy_buffer_to_buffer(&b.step_state, 0, &b.flags_readback[readback], 0, STEP_STATE_BYTES);
        let index = self.ctx.queue.submit([enc.finish()]);
        Submitted { s0, n, readback, index }
    }

    /// The step state after `batch` (waits for it, not for later submissions).
    fn read_step_state_of(&self, batch: &Submitted) -> Result<StepStateRead> {
        let bytes = map_read_after(&self.ctx, &self.buffers.flags_readback[batch.readback], STEP_STATE_BYTES, Some(batch.index.clone()))?;
        Ok(bytemuck::pod_read_unaligned(&bytes))
    }

    fn wait_for(&self, batch: &Submitted) -> Result<()> {
        self.ctx
            .device
            .poll(wgpu::PollType::Wait { submission_index: Some(batch.index.clone()), timeout: None })
            .map_err(|e| TalusError::Device(format!("poll: {e}")))?;
        Ok(())
    }

    /// Submit `enc`, holding the batch of steps `s0 .. s0 + n` (or, when the caller has already
    /// submitted them, nothing of them), and finish it as `finish_halted` does. Returns whether
    /// the batch overflowed (and was resumed).
    pub(crate) fn finish_batch(&mut self, enc: wgpu::CommandEncoder, s0: u64, n: u64, loads: bool) -> Result<bool> {
        let batch = self.submit_with_readback(enc, s0, n, 0);
        let st = self.read_step_state_of(&batch)?;
        if st.flags == 0 {
            self.steps_done = s0 + n;
            return Ok(false);
        }
        self.finish_halted(st, s0, n, loads)?;
        Ok(true)
    }

    /// One step `s` encoded in `enc` (a decomposed run, `gpu::halo`), finished as
    /// `finish_batch` does; returns the step state after it.
    pub(crate) fn finish_step(&mut self, enc: wgpu::CommandEncoder, s: u64, loads: bool) -> Result<StepStateRead> {
        let batch = self.submit_with_readback(enc, s, 1, 0);
        let st = self.read_step_state_of(&batch)?;
        if st.flags == 0 {
            self.steps_done = s + 1;
            return Ok(st);
        }
        self.finish_halted(st, s, 1, loads)?;
        self.read_step_state()
    }

    /// The batch of steps `s0 .. s0 + n` halted with step state `st`: a blow-up or an
    /// overflow that cannot grow is an error; otherwise grow what overflowed and resume from
    /// the halted step (`StepEncoder::resume`, the wall loads in its last step with `loads`)
    /// until the batch is done.
    fn finish_halted(&mut self, mut st: StepStateRead, s0: u64, n: u64, loads: bool) -> Result<()> {
        loop {
            if st.flags == 0 {
                self.steps_done = s0 + n;
                return Ok(());
            }
            if st.flags & BLOWUP != 0 {
                return Err(self.blow_up(&st, s0, n));
            }
            if st.flags & OVERFLOW_MESH_GROUPS != 0 {
                return Err(self.mesh_overflow(&st, s0));
            }
            if st.flags & !(OVERFLOW_HASH | OVERFLOW_LIST | REBUILD_LATE) != 0 {
                return Err(TalusError::Device(format!("unknown overflow flags {:#x}", st.flags)));
            }
            // the device step counter stopped at the step that overflowed
            let s = s0 + st.step.wrapping_sub(s0 as u32) as u64;
            if st.flags & OVERFLOW_LIST != 0 {
                self.grow_list(s, st.list_needed)?;
            }
            if st.flags & OVERFLOW_HASH != 0 {
                self.grow_hash(s, st.inserted)?;
            }
            // REBUILD_LATE: the list went stale in a step without rebuild passes; `list_plan` has
            // planned the rebuild, and the resumed step carries the passes
            if st.flags & REBUILD_LATE != 0 {
                self.late_rebuilds += 1;
                self.adapt_rebuild_stride(&st, 0, true);
            }
            self.clear_overflow(&st);
            let mut enc = self.ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("batch") });
            self.step_encoder().resume(&mut enc, s, s0 + n, loads);
            let batch = self.submit_with_readback(enc, s0, n, 0);
            st = self.read_step_state_of(&batch)?;
        }
    }

    /// Write the halted step state back with its overflow flags, counters and halt cleared.
    fn clear_overflow(&self, st: &StepStateRead) {
        let mut next: StepState = bytemuck::cast(*st);
        next.flags = 0;
        next.inserted = 0;
        next.halt = 0;
        next.list_needed = 0;
        self.ctx.queue.write_buffer(&self.buffers.step_state, 0, bytemuck::bytes_of(&next));
    }

    /// The force evaluation before step `s` (`StepEncoder::initial_forces`) from a fresh step
    /// state at step `s` with a list rebuild, after the commands of `first` (if any), with the
    /// ball-pair history put into the new list's slots as `import` says. A list overflow grows
    /// the list and evaluates again; returns the step state after it.
    pub(crate) fn initial_forces(&mut self, s: u64, mut first: Option<wgpu::CommandEncoder>, import: Option<HistoryImport>) -> Result<StepStateRead> {
        let mut relaid: Option<Relaid> = None;
        loop {
            let fresh = StepState { step: s as u32, rebuild: 1, ..Default::default() };
            self.ctx.queue.write_buffer(&self.buffers.step_state, 0, bytemuck::bytes_of(&fresh));
            let mut enc = first.take().unwrap_or_else(|| self.ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("initial_forces") }));
            {
                let b = &self.buffers;
                let import = match &import {
                    Some(HistoryImport::Records(records, n)) if *n > 0 => {
                        let bg = pass_groups(&self.ctx.device, &self.pipelines.slot_import, "slot_import", &[&b.sim, &b.list_start, records, &b.step_state, &b.tag], &[&b.list_partner, &b.slot_history[(s % 2) as usize]]);
                        Some((&self.pipelines.slot_import, bg, *n))
                    }
                    Some(HistoryImport::Exchange(carried)) => Some(carried.pairs_pass(&self.ctx.device, b, s, relaid.as_ref())),
                    _ => None,
                };
                self.step_encoder().initial_forces(&mut enc, s, import.as_ref().map(|(p, bg, n)| (*p, bg, *n)));
            }
            self.ctx.queue.submit([enc.finish()]);
            let st = self.read_step_state()?;
            if st.flags & OVERFLOW_LIST == 0 {
                return Ok(st);
            }
            self.grow_list(s, st.list_needed)?;
            if let Some(HistoryImport::Exchange(carried)) = &import {
                let split = relaid.as_ref().map_or(&carried.split, |r| &r.split);
                if *split != self.buffers.split {
                    // the list grew into more parts: the old arrays and the pass follow
                    relaid = Some(self.relay_carried(carried)?);
                }
            }
        }
    }

    /// Re-create the list slot buffers with room for `needed` slots and a quarter more (the
    /// current list's partner words and history move over).
    fn grow_list(&mut self, s: u64, needed: u32) -> Result<()> {
        let old = self.buffers.list_capacity;
        let cap = (needed as u64 + needed as u64 / 4).max(old as u64 + 1);
        if cap > SLOT_INDEX_MAX as u64 {
            return Err(TalusError::Device(format!("neighbour list of {cap} slots: more than the {SLOT_INDEX_MAX} a slot index can address")));
        }
        // the new list is made while the old one is copied into it: both are held at once
        if let Some(m) = self.memory {
            let held = self.device_bytes();
            let more = self.buffers.list_bytes(cap as u32);
            if held + more > m {
                let n = self.buffers.n_particles;
                return Err(TalusError::Device(format!(
                    "step {s}: the neighbour list needs {needed} slots ({:.1} per particle); growing it to {cap} slots takes {} beside the {} held, beyond the {} of {}: fewer particles, or a card with more memory",
                    needed as f64 / n.max(1) as f64,
                    bytes_text(more),
                    bytes_text(held),
                    bytes_text(m),
                    super::describe_memory(&self.ctx, self.memory),
                )));
            }
        }
        crate::error::notice(&format!("neighbour list overflowed in step {s} ({needed} slots needed); growing {old} -> {cap} slots and redoing the step"));
        let mut enc = self.ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("grow_list") });
        self.buffers.replace_list(&self.ctx, &mut enc, cap as u32)?;
        self.ctx.queue.submit([enc.finish()]);
        if self.pipelines.split != self.buffers.split {
            // a slot array now needs more bindings: shaders with more parts
            self.pipelines = Self::pipelines_for(&self.ctx, self.shared_pipelines, !self.meshes.walls.is_empty(), self.buffers.adhesion, self.pipelines.contact, &self.buffers.split)?;
        }
        self.sim.list_capacity = cap as u32;
        self.write_sim();
        self.groups = BindGroups::new(&self.ctx.device, &self.pipelines, &self.buffers);
        if let Some(bd) = &mut self.bodies {
            bd.refresh(&self.ctx, &self.buffers)?;
        }
        Ok(())
    }

    /// Grow the wall-contact tables (at least ×2, and enough for the `inserted` contacts the
    /// overflowing step `s` attempted at load 1/2) and move the entries of the table step `s`
    /// reads into the new one; repeat if even that does not fit. The table step `s` writes
    /// starts empty (the resumed step writes it again).
    fn grow_hash(&mut self, s: u64, inserted: u32) -> Result<()> {
        let old_cap = self.buffers.hash_capacity;
        let mut old_tables: Option<wgpu::Buffer> = None;
        let mut cap = old_cap;
        let mut want = inserted as u64 * 2;
        loop {
            let next = (cap as u64 * 2).max(want);
            want = 0;
            if next > 1 << 29 {
                return Err(TalusError::Device(format!("contact-history table cannot grow beyond {cap} slots")));
            }
            cap = next as u32;
            let max_bytes = 2 * cap as u64 * std::mem::size_of::<HashSlot>() as u64;
            if max_bytes > self.ctx.limits.max_storage_buffer_binding_size {
                return Err(TalusError::Device(format!(
                    "contact-history tables of 2 × {cap} slots ({max_bytes} bytes) exceed max_storage_buffer_binding_size {}",
                    self.ctx.limits.max_storage_buffer_binding_size
                )));
            }
            // the new tables are made while the old ones still hold the entries they take
            if let Some(m) = self.memory {
                let held = self.device_bytes() + old_tables.as_ref().map_or(0, |b| b.size());
                if held + max_bytes > m {
                    return Err(TalusError::Device(format!(
                        "step {s}: the wall-contact tables overflowed at {old_cap} slots ({inserted} contacts inserted); growing them to 2 × {cap} slots takes {} beside the {} held, beyond the {} of {}: fewer particles, or a card with more memory",
                        bytes_text(max_bytes),
                        bytes_text(held),
                        bytes_text(m),
                        super::describe_memory(&self.ctx, self.memory),
                    )));
                }
            }
            crate::error::notice(&format!("contact-history table overflowed in step {s}; growing {old_cap} -> {cap} slots and redoing the step"));
            let replaced = self.buffers.replace_hash(&self.ctx, cap)?;
            // the first replaced buffer holds the table step s reads (its entries of the read
            // epoch are exactly those)
            let old_tables = &*old_tables.get_or_insert(replaced);
            self.sim.hash_capacity = cap;
            self.sim.hash_max_load = max_load(cap);
            self.write_sim();
            self.groups = BindGroups::new(&self.ctx.device, &self.pipelines, &self.buffers);
            let b = &self.buffers;
            let mut enc = self.ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("rehash") });
            // `rehash` raises OVERFLOW_HASH if the entries do not fit: count from a clean flag word
            enc.clear_buffer(&b.step_state, std::mem::offset_of!(StepState, flags) as u64, Some(4));
            let bg = bind_group(&self.ctx.device, &self.pipelines.rehash, "rehash", &[&b.sim, old_tables, &b.wall_hash, &b.step_state]);
            {
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("rehash"), timestamp_writes: None });
                pass.set_pipeline(&self.pipelines.rehash);
                pass.set_bind_group(0, &bg, &[]);
                dispatch_threads(&mut pass, (old_tables.size() / std::mem::size_of::<HashSlot>() as u64) as u32, self.ctx.limits.max_compute_workgroups_per_dimension);
            }
            self.ctx.queue.submit([enc.finish()]);
            let st = self.read_step_state()?;
            if st.flags & OVERFLOW_HASH == 0 {
                return Ok(());
            }
        }
    }

    /// The rebuild stride for the list's lifetime (`SimParams::rebuild_stride`; results do not
    /// depend on it). A list that lives a few steps would go stale between the steps that carry
    /// the rebuild passes and halt batch after batch (`REBUILD_LATE`, a host round trip each):
    /// the rotating drum builds every 6 steps. After a batch of `steps` steps with the step state
    /// `st`, the stride becomes the largest power of two within a quarter of the steps per build
    /// the batch saw, or, in a batch without a build, of the steps since the last batch that
    /// built (batches are 64 steps: a list living hundreds of steps reaches the largest stride);
    /// at most `REBUILD_STRIDE`, at least 1. After a late rebuild (`late`) it halves. Takes
    /// effect from the next batch encoded (the write of `sim` precedes it in queue order, and
    /// the host encodes with the same value).
    fn adapt_rebuild_stride(&mut self, st: &StepStateRead, steps: u64, late: bool) {
        let builds = st.rebuilds.wrapping_sub(self.rebuilds_seen);
        self.rebuilds_seen = st.rebuilds;
        self.steps_since_build = if builds == 0 { self.steps_since_build + steps } else { 0 };
        let old = self.sim.rebuild_stride;
        if old == 0 || self.grid.skin <= 0.0 {
            return;
        }
        let new = if late {
            (old / 2).max(1)
        } else if steps == 0 {
            old
        } else {
            let per_build = if builds == 0 { self.steps_since_build as f64 } else { steps as f64 / builds as f64 };
            let quarter = (per_build / 4.0).max(1.0) as u32;
            (1u32 << quarter.ilog2()).min(crate::layout::consts::REBUILD_STRIDE)
        };
        if new != old {
            self.sim.rebuild_stride = new;
            self.write_sim();
        }
    }

    pub(crate) fn step_encoder(&self) -> StepEncoder<'_> {
        StepEncoder {
            p: &self.pipelines,
            b: &self.buffers,
            g: &self.groups,
            n_cells: self.grid.n_cells,
            n_walls: self.walls.len() as u32,
            n_meshes: self.meshes.walls.len() as u32,
            max_dim: self.ctx.limits.max_compute_workgroups_per_dimension,
            rebuild_stride: self.sim.rebuild_stride.max(1) as u64,
            renumber_every: self.sim.renumber_every as u64,
            order_cells: self.sim.order_cells,
            hash_slots: (self.sim.n_walls + self.sim.n_meshes > 0).then_some(self.sim.hash_capacity),
            bodies: self.bodies.as_ref(),
        }
    }
}

/// Bytes for a message: GB from 1 GB on, else MB.
fn bytes_text(b: u64) -> String {
    if b >= 1_000_000_000 {
        format!("{:.2} GB", b as f64 / 1e9)
    } else {
        format!("{:.1} MB", b as f64 / 1e6)
    }
}
