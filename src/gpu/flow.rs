//! Particles entering and leaving on the device (`Backend::exchange_view`,
//! `Backend::apply_exchange`; issue 34, item 6).
//!
//! An exchange used to read the whole state back and upload it again (`export`, `import`).
//! Here the host sees only what it decides on:
//! - `exchange_view`: `exchange_near` tests every particle's block against the query's boxes
//!   (integer tests, coarse by up to two blocks, so no particle the query wants is missed) and
//!   `exchange_gather` collects the rows of those found; one readback of their ids and rows. The
//!   flow driver decides on them exactly as on the whole state (`flow::driver`);
//! - `apply_exchange`: where the buffers held have room for the new count (`Buffers::capacity`),
//!   the exchange runs in them (`GpuBackend::hold_in_place`): copies of what the passes read of
//!   the state before it (the survivors' rows, forces, the list's run starts and partner words;
//!   the records the next step reads go into the other history table, which holds nothing the
//!   exchange needs), a new wall-contact table and the small per-workgroup arrays made for the
//!   new count; the per-particle arrays and the list stay. Where they have no room, the buffers
//!   are made again as an import makes them (`GpuBackend::fresh_buffers`), with room for a
//!   quarter more particles or twice the particles added (`GpuBackend::exchange_room`), and the
//!   old set is read. Then `exchange_compact` copies the survivors' rows to their new storage
//!   indices (the removed ones sorted: a survivor's new index is its old one less the removed
//!   ones below it, `shaders/exchange/ids.wgsl`; the ids follow on the host,
//!   `order::Order::after_exchange`, and go to `tag`), the new particles' rows are uploaded
//!   after them into the room left (the only upload), `exchange_hash` moves the wall and mesh
//!   contacts of the survivors into the new wall-contact table, and the force evaluation with
//!   Δt = 0 that an import runs (`GpuBackend::refresh_forces`) carries the ball-pair history
//!   from the old list's slots to the new list's (`exchange_pairs`, in place of `slot_import`),
//!   marking the survivors that lost a partner; `exchange_keep` gives the others their force
//!   and torque back. Each step of it is what `import` does with the exported state, so the
//!   device ends in the same bytes (`tests/hopper.rs` and `tests/flow.rs` compare the paths).
//!
//! With rigid bodies (`gpu::bodies`; stored body by body, a body's components one run) the view
//! hands out whole bodies: `exchange_near` tests the components against the query's boxes
//! widened by the largest component offset (`GpuBodies::reach`), so every body whose centre of
//! mass or a component the query wants has a component found; the host takes every component of
//! those bodies (`exchange_gather`) and their rows (`exchange_body_gather`), and the driver
//! decides on centres of mass as on the whole state. The change names the bodies that leave
//! (with all their components) and the new ones: `exchange_body_compact` closes the survivors'
//! body rows up into new body buffers (the first component's id and each component's body
//! renumbered as `Bodies::retain` renumbers them), the new bodies' rows are uploaded after
//! them, the host's table follows (`Bodies::retain`, `Bodies::extend_from`), and the bodies'
//! totals are formed from the forces put back (`body_totals`), as `keep_forces` forms them.
//! An exchange that makes the body table (a feed's first bodies) or empties it goes through the
//! whole state.
//!
//! Readbacks per exchange: the found particles' ids and rows (68 B each; with bodies, 144 B
//! more per body), two 4-byte counts and the energies the driver reads before and after. An
//! exchange in place holds about 160 B per particle beside the buffers (`in_place_bytes`); one
//! into buffers made again, the old set and the new; with bodies, new body buffers beside the
//! old (16 B per component and 144 B per body). Where that would pass the device memory, or
//! where the new count cuts the split arrays into other parts than the old one
//! (`gpu::split`), the exchange goes through `export` and `import`.

use std::sync::Arc;

use super::capacity::{Carried, HistoryImport, Relaid};
use super::encode::{bind_group, dispatch_threads, pass_groups};
use super::exchange::ParticleRows;
use super::grid;
use super::layout::{ExchangeBox, ExchangeParams, HashSlot};
use super::pipelines::{module, pipeline};
use super::readback::{read_buffer_range, read_buffers};
use super::buffers::Buffers;
use super::capacity::max_load;
use super::split::{SplitBuffer, SplitLayout};
use super::step::BindGroups;
use super::GpuBackend;
use crate::error::{Result, TalusError};
use crate::layout::consts::{BODY_INT_ROWS, BODY_ROWS, SLOT_PARTNER_MASK};
use crate::model::exchange::{ExchangeChange, ExchangeQuery, ExchangeView};
use crate::model::state::ParticleState;

/// The exchange passes (`shaders/exchange/`), compiled at a backend's first exchange for the
/// split layout of its arrays.
pub struct ExchangePipelines {
    pub split: SplitLayout,
    near: wgpu::ComputePipeline,
    gather: wgpu::ComputePipeline,
    compact: wgpu::ComputePipeline,
    hash_count: wgpu::ComputePipeline,
    hash: wgpu::ComputePipeline,
    pairs: wgpu::ComputePipeline,
    keep: wgpu::ComputePipeline,
    /// With rigid bodies: `exchange_body_gather` and `exchange_body_compact`.
    bodies: Option<(wgpu::ComputePipeline, wgpu::ComputePipeline)>,
}

impl ExchangePipelines {
    fn new(ctx: &super::GpuContext, split: &SplitLayout, adhesion: bool, bodies: bool) -> Result<Self> {
        let p = |name: &str| -> Result<wgpu::ComputePipeline> { pipeline(ctx, &module(ctx, name, split, adhesion)?, name, "main", &[]) };
        Ok(ExchangePipelines {
            bodies: if bodies { Some((p("exchange_body_gather")?, p("exchange_body_compact")?)) } else { None },
            split: split.clone(),
            near: p("exchange_near")?,
            gather: p("exchange_gather")?,
            compact: p("exchange_compact")?,
            hash_count: p("exchange_hash_count")?,
            hash: p("exchange_hash")?,
            pairs: p("exchange_pairs")?,
            keep: p("exchange_keep")?,
        })
    }
}

/// Blocks (of `block` m) whose particles may have a centre at `x`: ⌊x / block⌋, widened by one
/// block each way (an offset rounded up to the block's edge), kept inside i32.
fn block_of(x: f64, block: f64) -> f64 {
    (x / block).floor().clamp(i32::MIN as f64 + 4.0, i32::MAX as f64 - 4.0)
}

/// The query as boxes of blocks for `exchange_near`: a box takes every block a centre in it can
/// lie in; the outside test takes every block not surely inside its bounds (periodic axes never).
pub fn block_boxes(q: &ExchangeQuery, block: f64, periodic: [bool; 3]) -> Vec<ExchangeBox> {
    let mut out: Vec<ExchangeBox> = q
        .boxes
        .iter()
        .map(|(lo, hi)| {
            let l: [i32; 3] = std::array::from_fn(|a| block_of(lo[a], block) as i32 - 1);
            let h: [i32; 3] = std::array::from_fn(|a| block_of(hi[a], block) as i32 + 1);
            ExchangeBox { lo: [l[0], l[1], l[2], 0], hi: [h[0], h[1], h[2], 0] }
        })
        .collect();
    if let Some((lo, hi)) = q.outside {
        // a block b holds centres in [b, b + 1] blocks: surely inside when ⌈lo⌉ + 1 ≤ b and
        // b + 2 ≤ ⌊hi⌋ (one block of slack each way)
        let l: [i32; 3] = std::array::from_fn(|a| if periodic[a] { i32::MIN } else { (-block_of(-lo[a], block)) as i32 + 1 });
        let h: [i32; 3] = std::array::from_fn(|a| if periodic[a] { i32::MAX } else { block_of(hi[a], block) as i32 - 2 });
        out.push(ExchangeBox { lo: [l[0], l[1], l[2], 1], hi: [h[0], h[1], h[2], 1] });
    }
    out
}

impl GpuBackend {
    /// Full-state readbacks so far (`export` and the force readback of `import`): an exchange
    /// on the device makes none (`tests/flow.rs` counts them over a hopper).
    pub fn full_state_readbacks(&self) -> u64 {
        self.full_readbacks
    }

    /// The exchange passes for the current split layout (compiled on first use).
    fn exchange_pipelines(&mut self) -> Result<Arc<ExchangePipelines>> {
        let bodies = self.bodies.is_some();
        if let Some(p) = self.exchange_pipes.as_ref().filter(|p| p.split == self.pipelines.split && (p.bodies.is_some() || !bodies)) {
            return Ok(p.clone());
        }
        let p = Arc::new(ExchangePipelines::new(&self.ctx, &self.pipelines.split, self.buffers.adhesion, bodies)?);
        self.exchange_pipes = Some(p.clone());
        Ok(p)
    }

    fn exchange_params(&self, p: &ExchangeParams) -> Result<wgpu::Buffer> {
        let buf = self.ctx.create_buffer("exchange_params", std::mem::size_of::<ExchangeParams>() as u64, wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST)?;
        self.ctx.queue.write_buffer(&buf, 0, bytemuck::bytes_of(p));
        Ok(buf)
    }

    fn storage_with(&self, label: &str, data: &[u8]) -> Result<wgpu::Buffer> {
        let buf = self.ctx.create_buffer(label, data.len().max(4) as u64, wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC)?;
        if !data.is_empty() {
            self.ctx.queue.write_buffer(&buf, 0, data);
        }
        Ok(buf)
    }

    /// `Backend::exchange_view` (module doc). With rigid bodies the boxes are widened by the
    /// largest distance of a component from its body's centre (`GpuBodies::reach`), and repeated
    /// one period either way on periodic axes (a component wrapped across the edge), so every
    /// body whose centre or a component the query wants has a component found, and each such
    /// body is handed out whole: its components' rows (`exchange_gather` over the found bodies'
    /// runs) and its own (`exchange_body_gather`).
    pub(crate) fn exchange_view(&mut self, q: &ExchangeQuery) -> Result<Option<ExchangeView>> {
        self.check_usable()?;
        self.sync_order(false)?;
        let n = self.buffers.n_particles;
        let (body_ids, body_mass, reach) = match &self.bodies {
            Some(bd) => (Vec::new(), bd.host.mass.clone(), bd.reach()),
            None => (Vec::new(), Vec::new(), 0.0),
        };
        let mut view = ExchangeView { n: n as usize, ids: Vec::new(), state: ParticleState { step: self.steps_done, ..Default::default() }, radius: self.radius.clone(), material: self.material.clone(), body_ids, body_mass };
        let q = match reach > 0.0 {
            true => q.widened(reach).with_images(self.period, self.periodic),
            false => q.clone(),
        };
        let boxes = block_boxes(&q, self.grid.block, self.periodic);
        if boxes.is_empty() {
            // nothing to look at (no outlet, no insertion due, no lost-particle check)
            return Ok(Some(view));
        }
        let pipes = self.exchange_pipelines()?;
        let mut xp = ExchangeParams { n_old: n, n_boxes: boxes.len() as u32, ..Default::default() };
        let params = self.exchange_params(&xp)?;
        let box_buf = self.storage_with("exchange_boxes", bytemuck::cast_slice(&boxes))?;
        // zeroed at creation: found[0] counts from 0
        let found = self.ctx.create_buffer("exchange_found", 4 * (n as u64 + 1), wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC)?;
        let dev = &self.ctx.device;
        let max_dim = self.ctx.limits.max_compute_workgroups_per_dimension;
        let b = &self.buffers;
        let mut enc = dev.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("exchange_near") });
        {
            let bg = bind_group(dev, &pipes.near, "exchange_near", &[&params, &box_buf, &b.pos_block, &found]);
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("exchange_near"), timestamp_writes: None });
            pass.set_pipeline(&pipes.near);
            pass.set_bind_group(0, &bg, &[]);
            dispatch_threads(&mut pass, n, max_dim);
        }
        self.ctx.queue.submit([enc.finish()]);
        let count: u32 = bytemuck::pod_read_unaligned(&read_buffer_range(&self.ctx, &found, 0, 4)?);
        if count == 0 {
            return Ok(Some(view));
        }
        // the device appended storage indices in its own order: ids, in id order, for the host
        let found_slots: Vec<u32> = bytemuck::pod_collect_to_vec(&read_buffer_range(&self.ctx, &found, 4, 4 * count as u64)?);
        let mut ids: Vec<u32> = found_slots.iter().map(|&s| self.order.id(s as usize) as u32).collect();
        let mut gathered = found;
        if let Some(bd) = &self.bodies {
            // whole bodies: every component of each body found, in id order (bodies keep it)
            let h = &bd.host;
            view.body_ids = ids.iter().map(|&i| h.body_of[i as usize]).collect();
            view.body_ids.sort_unstable();
            view.body_ids.dedup();
            ids = view.body_ids.iter().flat_map(|&k| h.first[k as usize]..h.first[k as usize] + h.count[k as usize]).collect();
            let list: Vec<u32> = std::iter::once(ids.len() as u32).chain(ids.iter().map(|&i| self.order.slot(i as usize) as u32)).collect();
            gathered = self.storage_with("exchange_found_bodies", bytemuck::cast_slice(&list))?;
        }
        let count = ids.len() as u32;
        xp.n_found = count;
        let params = self.exchange_params(&xp)?;
        let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC;
        let out_block = self.ctx.create_buffer("exchange_out_block", 16 * count as u64, usage)?;
        let out_rows = self.ctx.create_buffer("exchange_out_rows", 48 * count as u64, usage)?;
        let b = &self.buffers;
        let mut enc = dev.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("exchange_gather") });
        {
            let groups = pass_groups(dev, &pipes.gather, "exchange_gather", &[&params, &gathered, &b.pos_block, &b.pos_offset, &out_block, &out_rows], &[&b.motion]);
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("exchange_gather"), timestamp_writes: None });
            pass.set_pipeline(&pipes.gather);
            groups.set(&mut pass);
            dispatch_threads(&mut pass, count, max_dim);
        }
        let mut reads = vec![(out_block, 16 * count as u64), (out_rows, 48 * count as u64)];
        if let (Some(bd), Some((gather_bodies, _))) = (&self.bodies, &pipes.bodies) {
            let nb = view.body_ids.len() as u32;
            let bp = self.exchange_params(&ExchangeParams { n_found: nb, ..Default::default() })?;
            let list = self.storage_with("exchange_body_list", bytemuck::cast_slice(&view.body_ids))?;
            let (ni, ns) = (16 * BODY_INT_ROWS as u64 * nb as u64, 16 * BODY_ROWS as u64 * nb as u64);
            let (out_int, out_state) = (self.ctx.create_buffer("exchange_out_body_int", ni, usage)?, self.ctx.create_buffer("exchange_out_body_state", ns, usage)?);
            let bg = bind_group(dev, gather_bodies, "exchange_body_gather", &[&bp, &list, &bd.buffers.int, &bd.buffers.state, &out_int, &out_state]);
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("exchange_body_gather"), timestamp_writes: None });
            pass.set_pipeline(gather_bodies);
            pass.set_bind_group(0, &bg, &[]);
            dispatch_threads(&mut pass, nb, max_dim);
            drop(pass);
            reads.push((out_int, ni));
            reads.push((out_state, ns));
        }
        self.ctx.queue.submit([enc.finish()]);
        let data = read_buffers(&self.ctx, &reads.iter().map(|(buf, bytes)| (buf, *bytes)).collect::<Vec<_>>())?;
        // the rows come in the order gathered (the device's, without bodies): sorted by id
        let blocks: Vec<[i32; 4]> = bytemuck::pod_collect_to_vec(&data[0]);
        let rows: Vec<[f32; 4]> = bytemuck::pod_collect_to_vec(&data[1]);
        let mut order: Vec<usize> = (0..count as usize).collect();
        order.sort_by_key(|&k| ids[k]);
        let blk = self.grid.block;
        let v3 = |x: [f32; 4]| [x[0] as f64, x[1] as f64, x[2] as f64];
        let state = &mut view.state;
        for k in order {
            let i = ids[k] as usize;
            // as `export` reads them: radius from the host copy, material from the block's w
            let x = std::array::from_fn(|a| grid::join(blocks[k][a], rows[3 * k][a], blk));
            state.push(x, v3(rows[3 * k + 1]), v3(rows[3 * k + 2]), self.radius[i], blocks[k][3] as u32 & crate::layout::consts::MATERIAL_MASK);
            view.ids.push(i as u32);
        }
        state.refresh = vec![false; view.ids.len()];
        if let Some(bd) = &self.bodies {
            state.bodies = bd.some(&view.body_ids, &data[2], &data[3], blk);
        }
        Ok(Some(view))
    }

    /// `apply_exchange` through the whole state, as every exchange went before it moved onto the
    /// device and as one goes where the device memory is short: `export`, the change, `import`,
    /// with the particles stored where the exchange on the device puts them
    /// (`order::Order::after_exchange`), so the two paths give the same bits (`tests/hopper.rs`,
    /// `tests/flow.rs`).
    pub fn apply_exchange_through_host(&mut self, c: &ExchangeChange) -> Result<()> {
        self.check_usable()?;
        self.sync_order(false)?;
        let n_old = self.buffers.n_particles;
        if c.removed.windows(2).any(|w| w[0] >= w[1]) || c.removed.last().is_some_and(|&i| i >= n_old) {
            return Err(TalusError::Other(format!("an exchange must remove distinct ids below {n_old}, ascending")));
        }
        let (order, _) = self.order.after_exchange(n_old as usize, &c.removed, c.added.len());
        self.exchange_through_host(c, order)
    }

    /// The exchange through the whole state, into buffers with room (`room`) where the device
    /// memory holds them.
    fn exchange_through_host(&mut self, c: &ExchangeChange, order: super::order::Order) -> Result<()> {
        self.device_exchanges.through_host += 1;
        let mut state = self.export()?;
        c.apply_to(&mut state);
        let room = self.room(state.len() as u32, c.added.len() as u32);
        self.import_in(&state, order, room)
    }

    /// The bodies before and after change `c` (`Some((0, 0))` without bodies), checked: the
    /// removed bodies distinct and ascending, `removed` exactly their components, the added
    /// ones a table of the added particles. `None` where the body table appears or goes (no
    /// bodies held before, or none after): such an exchange goes through the whole state.
    fn body_counts(&self, c: &ExchangeChange) -> Result<Option<(u32, u32)>> {
        let bad = |what: String| Err(TalusError::Other(format!("an exchange of rigid bodies: {what}")));
        let Some(bd) = &self.bodies else {
            if !c.removed_bodies.is_empty() {
                return bad(format!("{} bodies removed, but none are held", c.removed_bodies.len()));
            }
            return Ok(if c.added_bodies.is_empty() { Some((0, 0)) } else { None });
        };
        let h = &bd.host;
        let nb_old = h.len() as u32;
        if c.removed_bodies.windows(2).any(|w| w[0] >= w[1]) || c.removed_bodies.last().is_some_and(|&k| k >= nb_old) {
            return bad(format!("the removed bodies must be distinct ids below {nb_old}, ascending"));
        }
        let components: u64 = c.removed_bodies.iter().map(|&k| h.count[k as usize] as u64).sum();
        let whole = c.removed_bodies.iter().all(|&k| (h.first[k as usize]..h.first[k as usize] + h.count[k as usize]).all(|i| c.removed.binary_search(&i).is_ok()));
        if components != c.removed.len() as u64 || !whole {
            return bad(format!("{} particles removed, not the {components} components of the {} bodies removed", c.removed.len(), c.removed_bodies.len()));
        }
        if let Err(e) = c.added_bodies.check(c.added.len()) {
            return bad(format!("the added bodies: {e}"));
        }
        let nb_new = nb_old - c.removed_bodies.len() as u32 + c.added_bodies.len() as u32;
        Ok((nb_new > 0).then_some((nb_old, nb_new)))
    }

    /// The particles buffers made again for `n_new` particles after an exchange that added
    /// `added` have room for: a quarter more or twice the particles added, whichever is more
    /// (so a hopper that keeps inserting finds room at its next exchanges), not beyond the
    /// most the scene can hold (`Setup::particle_capacity`) nor what one binding of 16-byte
    /// rows holds.
    fn room(&self, n_new: u32, added: u32) -> u32 {
        let most = (self.buffers.split.cap_bytes / 16).min(SLOT_PARTNER_MASK as u64) as u32;
        n_new.saturating_add((n_new / 4).max(added.saturating_mul(2))).min(self.most_particles.max(n_new)).min(most).max(n_new)
    }

    /// `Backend::apply_exchange` (module doc).
    pub(crate) fn apply_exchange(&mut self, c: &ExchangeChange) -> Result<()> {
        self.check_usable()?;
        self.sync_order(false)?;
        let n_old = self.buffers.n_particles;
        let n_removed = c.removed.len() as u32;
        if c.removed.windows(2).any(|w| w[0] >= w[1]) || c.removed.last().is_some_and(|&i| i >= n_old) {
            return Err(TalusError::Other(format!("an exchange must remove distinct ids below {n_old}, ascending")));
        }
        let n_kept = n_old - n_removed;
        let n_new = n_kept as usize + c.added.len();
        if n_new > SLOT_PARTNER_MASK as usize {
            return Err(TalusError::Other(format!("{n_new} particles: too many for the GPU backend (at most {SLOT_PARTNER_MASK})")));
        }
        let n_new = n_new as u32;
        // the survivors stay where they are, closed up, the new particles after them; the
        // device passes below work on storage indices (`removed`: those that leave)
        let (order, removed_slots) = self.order.after_exchange(n_old as usize, &c.removed, c.added.len());
        let Some((nb_old, nb_new)) = self.body_counts(c)? else {
            // a body table that appears (the first bodies of a feed) or goes (the last leave)
            return self.exchange_through_host(c, order);
        };
        let pipes = self.exchange_pipelines()?;
        let s = self.steps_done;
        let n_removed_bodies = c.removed_bodies.len() as u32;
        let xp = ExchangeParams { n_old, n_kept, n_removed, epoch: (s as u32).wrapping_add(1), n_old_bodies: nb_old, n_removed_bodies, ..Default::default() };
        let params = self.exchange_params(&xp)?;
        let removed = self.storage_with("exchange_removed", bytemuck::cast_slice(&removed_slots))?;
        let dev = self.ctx.device.clone();
        let max_dim = self.ctx.limits.max_compute_workgroups_per_dimension;

        // the wall and mesh contacts that stay size the new table, as an import's records do
        let old_hash_slots = (self.buffers.wall_hash.size() / std::mem::size_of::<HashSlot>() as u64) as u32;
        let counter = self.ctx.create_buffer("exchange_count", 4, wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC)?;
        let mut enc = dev.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("exchange_hash_count") });
        {
            let bg = bind_group(&dev, &pipes.hash_count, "exchange_hash_count", &[&params, &removed, &self.buffers.wall_hash, &counter]);
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("exchange_hash_count"), timestamp_writes: None });
            pass.set_pipeline(&pipes.hash_count);
            pass.set_bind_group(0, &bg, &[]);
            dispatch_threads(&mut pass, old_hash_slots, max_dim);
        }
        self.ctx.queue.submit([enc.finish()]);
        let wall_records: u32 = bytemuck::pod_read_unaligned(&read_buffer_range(&self.ctx, &counter, 0, 4)?);

        // new body buffers are made beside the old ones (`exchange_body_compact` reads those)
        let body_bytes = if self.bodies.is_some() { super::bodies::planned_bytes(n_new, nb_new) } else { 0 };
        let before = match self.exchange_room(n_old, n_new, c.added.len() as u32, wall_records, body_bytes) {
            Room::Held => {
                self.device_exchanges.in_place += 1;
                self.hold_in_place(n_old, n_new, wall_records)?
            }
            Room::Made(capacity) => {
                self.device_exchanges.regrown += 1;
                let p = (s % 2) as usize;
                Before::of(self.fresh_buffers(n_new, capacity, wall_records)?, p)
            }
            // the arrays would be cut into other parts, or the two sets of buffers would not
            // fit the device memory: through the whole state (the import gives the old
            // buffers back before it makes the new)
            Room::None => return self.exchange_through_host(c, order),
        };
        // a list grown in place may be cut into more parts: the passes compiled for them
        let pipes = self.exchange_pipelines()?;
        self.order = order;
        self.order_step = self.steps_done;
        self.write_tags();
        // the host copies: survivors in order, then the new particles
        retain_unremoved(&mut self.radius, &c.removed);
        retain_unremoved(&mut self.material, &c.removed);
        self.radius.extend_from_slice(&c.added.radius);
        self.material.extend_from_slice(&c.added.material);

        let b = &self.buffers;
        let mut enc = dev.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("exchange") });
        {
            let groups = pass_groups(&dev, &pipes.compact, "exchange_compact", &[&params, &removed, &before.pos_block, &before.pos_offset, &before.image, &b.pos_block, &b.pos_offset, &b.image], &[&before.motion, &b.motion]);
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("exchange_compact"), timestamp_writes: None });
            pass.set_pipeline(&pipes.compact);
            groups.set(&mut pass);
            dispatch_threads(&mut pass, n_old, max_dim);
        }
        if wall_records > 0 {
            let bg = bind_group(&dev, &pipes.hash, "exchange_hash", &[&b.sim, &params, &removed, &before.wall_hash, &b.wall_hash, &b.step_state]);
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("exchange_hash"), timestamp_writes: None });
            pass.set_pipeline(&pipes.hash);
            pass.set_bind_group(0, &bg, &[]);
            dispatch_threads(&mut pass, old_hash_slots, max_dim);
        }
        let mut rows = ParticleRows::of(&c.added, &[], &self.densities, self.grid.block, self.buffers.split.motion_rows);
        let removed_bodies = self.storage_with("exchange_removed_bodies", bytemuck::cast_slice(&c.removed_bodies))?;
        if let (Some(bd), Some((_, body_compact))) = (&mut self.bodies, &pipes.bodies) {
            // the survivors' body rows closed up into new body buffers, the new bodies' rows
            // after them, the host's table changed alike (`Bodies::retain`, `extend_from`)
            let fresh = super::bodies::BodyBuffers::new(&self.ctx, nb_new, n_new)?;
            let old = &bd.buffers;
            let bg = bind_group(&dev, body_compact, "exchange_body_compact", &[&params, &removed, &removed_bodies, &old.int, &old.state, &old.comp, &fresh.int, &fresh.state, &fresh.comp]);
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("exchange_body_compact"), timestamp_writes: None });
            pass.set_pipeline(body_compact);
            pass.set_bind_group(0, &bg, &[]);
            dispatch_threads(&mut pass, n_old, max_dim);
            drop(pass);
            let nb_kept = nb_old - n_removed_bodies;
            let (int, state, comp) = super::bodies::rows(&c.added_bodies, self.grid.block, n_kept, nb_kept);
            if !c.added_bodies.is_empty() {
                let q = &self.ctx.queue;
                q.write_buffer(&fresh.int, 16 * BODY_INT_ROWS as u64 * nb_kept as u64, bytemuck::cast_slice(&int));
                q.write_buffer(&fresh.state, 16 * BODY_ROWS as u64 * nb_kept as u64, bytemuck::cast_slice(&state));
                q.write_buffer(&fresh.comp, 16 * n_kept as u64, bytemuck::cast_slice(&comp));
            }
            super::bodies::set_component_masses(&mut rows.motion, rows.motion_rows, &c.added_bodies);
            let mut keep = vec![true; nb_old as usize];
            for &k in &c.removed_bodies {
                keep[k as usize] = false;
            }
            bd.host.retain(&keep);
            bd.host.extend_from(&c.added_bodies);
            bd.buffers = fresh;
            bd.refresh(&self.ctx, &self.buffers)?;
        }
        self.write_particles_at(n_kept as u64, &rows);
        let refresh = self.ctx.create_buffer("exchange_refresh", 4 * n_new.max(1) as u64, wgpu::BufferUsages::STORAGE)?;
        let carried = Carried {
            pairs: &pipes.pairs,
            split: pipes.split.clone(),
            start_old: &before.list_start,
            partner_old: &before.list_partner,
            history_old: before.history.as_ref(),
            params: &params,
            removed: &removed,
            refresh: &refresh,
            n_old,
        };
        self.refresh_forces(s, enc, Some(HistoryImport::Exchange(&carried)))?;

        // survivors that kept their partners get their forces back (and the bodies their
        // totals from them, as `keep_forces` forms them)
        let b = &self.buffers;
        let mut enc = dev.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("exchange_keep") });
        {
            let groups = pass_groups(&dev, &pipes.keep, "exchange_keep", &[&params, &removed, &refresh], &[&before.force, &b.force]);
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("exchange_keep"), timestamp_writes: None });
            pass.set_pipeline(&pipes.keep);
            groups.set(&mut pass);
            dispatch_threads(&mut pass, n_kept, max_dim);
        }
        self.step_encoder().body_totals(&mut enc);
        self.ctx.queue.submit([enc.finish()]);
        debug_assert_eq!(self.radius.len(), n_new as usize);
        debug_assert!(self.bodies.as_ref().is_none_or(|bd| bd.host.check(n_new as usize).is_ok()));
        Ok(())
    }

    /// Where an exchange from `n_old` to `n_new` particles (`added` of them new) puts them:
    /// - in the buffers held, where they have room for `n_new` and the copies an exchange in
    ///   place makes (`in_place_bytes`) fit the device memory beside them (the list may grow
    ///   into more parts there: every pass reads and writes the buffers of one layout);
    /// - else in buffers made again with room (`room`), or for `n_new` alone where that room
    ///   would not fit beside the buffers held; each only where the arrays keep the parts they
    ///   are cut into now (`gpu::split`: the exchange passes read the old and the new ones
    ///   alike);
    /// - else nowhere on the device: through the host (whose import makes room too, where it
    ///   fits).
    ///
    /// `body_bytes`: the new body buffers made beside the old ones (a scene with bodies).
    fn exchange_room(&self, n_old: u32, n_new: u32, added: u32, wall_records: u32, body_bytes: u64) -> Room {
        let b = &self.buffers;
        let list_capacity = self.fresh_capacities(n_new, wall_records).2;
        let layout = |capacity: u32| b.split.resized(capacity.max(1) as u64, list_capacity.max(1) as u64);
        let fits = |more: u64| self.memory.is_none_or(|m| self.device_bytes() + body_bytes + more <= m);
        if n_new <= b.capacity && fits(self.in_place_bytes(n_old, n_new, wall_records)) {
            return Room::Held;
        }
        [self.room(n_new, added), n_new]
            .into_iter()
            .find(|&capacity| capacity >= n_new && layout(capacity) == b.split && fits(self.fresh_bytes(n_new, capacity, wall_records)))
            .map_or(Room::None, Room::Made)
    }

    /// Device bytes an exchange in place makes beside the buffers held: copies of the
    /// survivors' rows, forces, run starts and partner words, and a new wall-contact table
    /// (the records the next step reads go into the other history table, which holds nothing
    /// the exchange needs).
    fn in_place_bytes(&self, n_old: u32, n_new: u32, wall_records: u32) -> u64 {
        let b = &self.buffers;
        let (_, hash_slots, list_capacity, _) = self.fresh_capacities(n_new, wall_records);
        let list_growth = b.list_bytes(list_capacity).saturating_sub(b.list_bytes(b.list_capacity));
        2 * 16 * n_old as u64 + b.image.size().min(16 * n_old as u64) + b.motion.size() + b.force.size() + 4 * (n_old as u64 + 1) + b.list_partner.size() + 2 * hash_slots as u64 * std::mem::size_of::<HashSlot>() as u64 + list_growth
    }

    /// The start of an exchange in the buffers held (`Room::Held`): the list grown where a new
    /// one would be larger (as `fresh_buffers` sizes it), copies of what the passes read of the
    /// state before the exchange (the survivors' rows, forces, the list's run starts and
    /// partner words), the records the next step reads copied into the other history table, the
    /// run starts of the new count cleared (so the list build carries nothing: `exchange_pairs`
    /// carries it), a new wall-contact table, and the per-workgroup arrays, energy partials and
    /// wall loads made for `n_new` (`Buffers::resize_live`), as `fresh_buffers` leaves them.
    fn hold_in_place(&mut self, n_old: u32, n_new: u32, wall_records: u32) -> Result<Before> {
        self.restart_build_count();
        let (_, hash_capacity, list_capacity, partials) = self.fresh_capacities(n_new, wall_records);
        let p = (self.steps_done % 2) as usize;
        let ctx = self.ctx.clone();
        let mut enc = ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("exchange_in_place") });
        if list_capacity > self.buffers.list_capacity {
            self.buffers.replace_list(&ctx, &mut enc, list_capacity)?;
        }
        let b = &self.buffers;
        let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC;
        let mut copy = |label: &str, src: &wgpu::Buffer, bytes: u64| -> Result<wgpu::Buffer> {
            let buf = ctx.create_buffer(label, bytes.max(4), usage)?;
            enc.copy_buffer_to_buffer(src, 0, &buf, 0, bytes);
            Ok(buf)
        };
        let v4 = 16 * n_old as u64;
        let (pos_block, pos_offset, image) = (copy("before_pos_block", &b.pos_block, v4)?, copy("before_pos_offset", &b.pos_offset, v4)?, copy("before_image", &b.image, b.image.size().min(v4))?);
        let list_start = copy("before_list_start", &b.list_start, 4 * (n_old as u64 + 1))?;
        let motion = b.motion.copied(&ctx, &mut enc, "before_motion", b.motion.elements, b.split.motion_rows as u64 * n_old as u64, &b.split)?;
        let force = b.force.copied(&ctx, &mut enc, "before_force", b.force.elements, 2 * n_old as u64, &b.split)?;
        let list_partner = b.list_partner.copied(&ctx, &mut enc, "before_list_partner", b.list_partner.elements, b.list_partner.elements, &b.split)?;
        b.slot_history[1 - p].copy_from(&mut enc, &b.slot_history[p], b.slot_history[p].elements);
        enc.clear_buffer(&b.list_start, 0, Some(4 * (n_new as u64 + 1)));
        ctx.queue.submit([enc.finish()]);
        let wall_hash = self.buffers.replace_hash(&ctx, hash_capacity)?;
        self.buffers.resize_live(&ctx, n_new, partials)?;
        if self.pipelines.split != self.buffers.split {
            self.pipelines = Self::pipelines_for(&ctx, self.shared_pipelines, !self.meshes.walls.is_empty(), self.buffers.adhesion, self.pipelines.contact, &self.buffers.split)?;
        }
        self.write_rebuild_table();
        self.groups = BindGroups::new(&ctx.device, &self.pipelines, &self.buffers);
        self.sim.n_particles = n_new;
        self.sim.hash_capacity = hash_capacity;
        self.sim.hash_max_load = max_load(hash_capacity);
        self.sim.list_capacity = self.buffers.list_capacity;
        Ok(Before { pos_block, pos_offset, image, motion, force, wall_hash, list_start, list_partner, history: None })
    }

    /// `carried`'s old partner words and records (where they are not in the buffers held)
    /// copied into arrays cut as the list's are now, and the exchange passes for that cut:
    /// after the list grew into more parts in the exchange's force evaluation.
    pub(crate) fn relay_carried(&mut self, carried: &Carried) -> Result<Relaid> {
        let pipes = self.exchange_pipelines()?;
        let split = self.buffers.split.clone();
        let mut enc = self.ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("exchange_relay") });
        let b = &self.buffers;
        let partner_old = carried.partner_old.copied(&self.ctx, &mut enc, "before_relaid", b.list_partner.elements, u64::MAX, &split)?;
        let history_old = carried.history_old.map(|h| h.copied(&self.ctx, &mut enc, "before_relaid", b.slot_history[0].elements, u64::MAX, &split)).transpose()?;
        self.ctx.queue.submit([enc.finish()]);
        Ok(Relaid { split, pairs: pipes.pairs.clone(), partner_old, history_old })
    }

    /// Exchanges so far: in the buffers held, into buffers made again, and through the host.
    pub fn device_exchanges(&self) -> DeviceExchanges {
        self.device_exchanges
    }
}

/// Exchanges of the GPU backend, by the way they went (`GpuBackend::device_exchanges`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct DeviceExchanges {
    /// On the device, into the buffers held: the survivors closed up and the new particles
    /// appended into the room left, no buffer of the state made again.
    pub in_place: u64,
    /// On the device, into buffers made again with more room.
    pub regrown: u64,
    /// Through the whole state (`export`, the change, `import`): the device memory short, the
    /// arrays cut into other parts, or a body table made or emptied.
    pub through_host: u64,
}

impl DeviceExchanges {
    /// The exchanges made since `before` (counts of the same backend).
    pub fn since(&self, before: &DeviceExchanges) -> DeviceExchanges {
        DeviceExchanges { in_place: self.in_place - before.in_place, regrown: self.regrown - before.regrown, through_host: self.through_host - before.through_host }
    }
}

/// Where an exchange puts the particles (`GpuBackend::exchange_room`).
enum Room {
    /// In the buffers held.
    Held,
    /// In buffers made again with room for this many.
    Made(u32),
    /// Through the host.
    None,
}

/// What the exchange passes read of the state before the exchange: the old buffers where the
/// buffers are made again, else copies (`GpuBackend::hold_in_place`).
struct Before {
    pos_block: wgpu::Buffer,
    pos_offset: wgpu::Buffer,
    image: wgpu::Buffer,
    motion: SplitBuffer,
    force: SplitBuffer,
    wall_hash: wgpu::Buffer,
    list_start: wgpu::Buffer,
    list_partner: SplitBuffer,
    /// The records the next step reads, at the old list's slots; `None`: in the other history
    /// table of the buffers held (`Carried::history_old`).
    history: Option<SplitBuffer>,
}

impl Before {
    /// The old buffers of a set made again, at history parity `p` (the rest is given back).
    fn of(old: Buffers, p: usize) -> Self {
        let Buffers { pos_block, pos_offset, image, motion, force, wall_hash, list_start, list_partner, slot_history, .. } = old;
        let [h0, h1] = slot_history;
        Before { pos_block, pos_offset, image, motion, force, wall_hash, list_start, list_partner, history: Some(if p == 0 { h0 } else { h1 }) }
    }
}

/// Drop the elements at the `removed` indices (ascending), keeping the order of the rest.
fn retain_unremoved<T>(v: &mut Vec<T>, removed: &[u32]) {
    let mut gone = removed.iter().peekable();
    let mut k = 0u32;
    v.retain(|_| {
        let stay = gone.peek() != Some(&&k);
        if !stay {
            gone.next();
        }
        k += 1;
        stay
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::DVec3;

    #[test]
    fn block_boxes_hold_every_block_a_wanted_centre_lies_in() {
        let block = 1.0 / 1024.0;
        let q = ExchangeQuery {
            boxes: vec![(DVec3::new(-0.01, f64::NEG_INFINITY, 0.02), DVec3::new(0.013, 0.0, f64::INFINITY))],
            outside: Some((DVec3::splat(-0.05), DVec3::splat(0.05))),
        };
        let periodic = [false, true, false];
        let boxes = block_boxes(&q, block, periodic);
        let takes = |x: DVec3| {
            let b: [i32; 3] = std::array::from_fn(|a| grid::split(x[a], block).0);
            boxes.iter().any(|bx| {
                let inside = (0..3).all(|a| bx.lo[a] <= b[a] && b[a] <= bx.hi[a]);
                inside != (bx.lo[3] != 0)
            })
        };
        let mut rng = 0x1234_5678_u64;
        let mut next = || {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (rng >> 11) as f64 / (1u64 << 53) as f64 * 0.14 - 0.07
        };
        let mut wanted = 0;
        for _ in 0..20000 {
            let x = DVec3::new(next(), next(), next());
            if q.wants(x, periodic) {
                wanted += 1;
                assert!(takes(x), "{x} is wanted but its block is not taken");
            }
        }
        assert!(wanted > 1000);
        // a centre well inside everything and far from the box is not taken
        assert!(!takes(DVec3::new(0.0, 0.01, 0.0)));
        // the exact edges are taken
        assert!(takes(DVec3::new(0.013, 0.0, 0.02)) && takes(DVec3::new(-0.05, 0.0, 0.0)) && takes(DVec3::new(0.0, 0.0, 0.05)));
    }

    #[test]
    fn removed_indices_leave_the_rest_in_order() {
        let mut v: Vec<u32> = (0..8).collect();
        retain_unremoved(&mut v, &[0, 3, 7]);
        assert_eq!(v, vec![1, 2, 4, 5, 6]);
    }
}
