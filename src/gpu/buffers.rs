//! Every device buffer, created once (hash tables re-created on growth).

use super::context::GpuContext;
use super::layout::*;
use super::readback::Source;
use super::split::{ArrayShape, Split, SplitBuffer, SplitLayout};
use crate::error::Result;
use wgpu::BufferUsages as U;

/// Elements one `scan_blocks` workgroup scans.
pub const SCAN_BLOCK: u64 = 1024;

/// One level of the multi-level prefix sum: `n` elements scanned, block totals in `sums`.
pub struct ScanLevel {
    pub n: u32,
    pub params: wgpu::Buffer,
    pub sums: wgpu::Buffer,
}

pub struct Buffers {
    /// Particles held now (`SimParams::n_particles`; every pass and readback takes this many).
    pub n_particles: u32,
    /// Particles the per-particle arrays have room for (≥ `n_particles`): an exchange on the
    /// device appends into the room left (`gpu::flow`); `n_particles` at a set-up or import.
    pub capacity: u32,
    pub sim: wgpu::Buffer,
    pub pos_block: wgpu::Buffer,
    pub pos_offset: wgpu::Buffer,
    /// Per particle i: [3i] velocity (w = 1/m), [3i + 1] angular velocity (w = 1/I), [3i + 2]
    /// the spin of the previous force pass, vec4<f32> (one array for all: the force pass is at
    /// the storage-buffer limit); split across bindings where it outgrows one (`gpu::split`).
    pub motion: SplitBuffer,
    /// Per particle i: [2i] force (w = strain energy), [2i + 1] torque (w = contacts owned);
    /// the particle's own sums after `forces`, its totals after `gather` or `kick`.
    pub force: SplitBuffer,
    /// Per workgroup of the force pass (`WORKGROUP_SIZE` particles): Kahan pairs of the slip,
    /// dashpot, stiffness and wall work of the contacts its particles own (`work_fold.wgsl`).
    pub dissipation: wgpu::Buffer,
    /// Per workgroup: that work in the last force pass (vec4<f32>), folded by the next kick.
    /// With adhesion (`adhesion`) both hold a second part (`adhesion_rows`).
    pub work_step: wgpu::Buffer,
    /// The scene has adhesion: `work_step` and `dissipation` hold the adhesion rows.
    pub adhesion: bool,
    /// Per particle: periods it was moved back by on each periodic axis (vec4<i32>, w unused);
    /// one row where the scene has no periodic axis (`SplitLayout::images`; read back as zeros,
    /// `image_source`).
    pub image: wgpu::Buffer,
    pub pairs: wgpu::Buffer,
    /// Wall table: rows × n_walls `WallGpu` (see `gpu::walls`).
    pub walls: wgpu::Buffer,
    /// Per plane wall, then per mesh wall: (force, 0), (torque about the load point, 0) of the
    /// last step of a `Backend::step` call (computed in that step only).
    pub wall_loads: wgpu::Buffer,
    /// All mesh-wall data, packed (see `gpu::meshes`).
    pub mesh_data: wgpu::Buffer,
    pub particle_cell: wgpu::Buffer,
    pub particle_rank: wgpu::Buffer,
    pub sorted_ids: wgpu::Buffer,
    /// Per storage index: the id of the particle stored there (`gpu::order`; the list build and
    /// the incoming sort order pairs by it); then, per storage index, the index it had before
    /// the last renumbering on the device (`order.wgsl`).
    pub tag: wgpu::Buffer,
    /// The stage number of each `order.wgsl` stage (a 16-byte uniform each).
    pub order_stages: Vec<wgpu::Buffer>,
    /// n_cells + 1 counts, scanned in place into cell starts (n_cells: the most of the
    /// neighbour grid's and the order grid's, `order.wgsl`).
    pub cell_count: wgpu::Buffer,
    pub scan_levels: Vec<ScanLevel>,

    /// n + 1: each owner's first slot (the list as last built); then n: the particle each
    /// thread of `forces` takes (`schedule.wgsl`; the identity until a list is built).
    pub list_start: wgpu::Buffer,
    /// n + 1 counts of owned pairs of the list being built, scanned into its run starts
    /// (`incoming_sort` copies them into `list_start`).
    pub list_next: wgpu::Buffer,
    /// `list_capacity` slots: the partner (j > owner) of each owned pair with its flags
    /// (`SLOT_ACTIVE_BIT`, `SLOT_HISTORY_BIT0/1`; the id is `& SLOT_PARTNER_MASK`).
    pub list_partner: SplitBuffer,
    /// Per slot, two tables (the fields of a `HistoryRecord` the set-up reads, `RecordLayout`):
    /// the pair's contact history; step s reads table s % 2 (valid where the partner word has
    /// that table's bit) and writes the other.
    pub slot_history: [SplitBuffer; 2],
    /// n + 1 counts of pairs each particle is the partner of, scanned into run starts.
    pub incoming_count: wgpu::Buffer,
    pub incoming_cursor: wgpu::Buffer,
    /// 2 × `list_capacity` u32: each particle's incoming run (slot | `SLOT_ACTIVE_BIT`, sorted
    /// by the owner's id), then each slot's position in those runs (`incoming.wgsl`).
    pub incoming: SplitBuffer,
    /// Per slot a `PairShare`: the partner's force and torque, written only while the contact
    /// is active.
    pub shares: SplitBuffer,
    pub list_capacity: u32,
    /// How the split arrays are cut now (it changes when the list grows past a part).
    pub split: SplitLayout,
    /// Prefix-sum levels over n + 1 elements (list and incoming counts).
    pub list_scan_levels: Vec<ScanLevel>,
    /// Workgroup counts of every rebuild dispatch (`list_plan.wgsl`), written once by the host.
    pub dispatch_full: wgpu::Buffer,
    /// What the rebuild dispatches use: `dispatch_full` on rebuild steps, else zeros.
    pub dispatch: wgpu::Buffer,
    /// Wall and mesh contact history: two tables of `hash_capacity` `HashSlot`s in one buffer;
    /// step s reads table s % 2 and writes the other.
    pub wall_hash: wgpu::Buffer,
    pub hash_capacity: u32,
    pub step_state: wgpu::Buffer,
    pub partials: wgpu::Buffer,
    pub n_partials: u32,
    /// MAP_READ buffer for the step state (flags) after each batch.
    pub flags_readback: [wgpu::Buffer; 2],
}

/// Stages of `order.wgsl` (the first `ORDER_HASH_STAGES` also those of `order_hash.wgsl`), a
/// uniform buffer each (`Buffers::order_stages`).
pub const ORDER_STAGES: u32 = 13;
pub const ORDER_HASH_STAGES: u32 = 4;

/// Entries of the rebuild dispatch table (`dispatch_full`): particles, cells, clears, and
/// every prefix-sum level of the cell and list scans (at most 6 levels each).
pub const MAX_REBUILD_DISPATCHES: u64 = 16;

const STATE: U = U::STORAGE.union(U::COPY_SRC).union(U::COPY_DST);
/// List-slot buffers whose contents move into larger ones when the list grows.
const LIST: U = STATE;
/// Bytes of a slot's share.
pub const SHARE: u64 = std::mem::size_of::<PairShare>() as u64;

/// Workgroups of a one-particle-per-thread pass over `n` particles (at least 1): the force
/// pass sums the work per workgroup.
/// (work_step rows, dissipation Kahan pairs) per workgroup of a scene with adhesion or
/// without: with, `work_step` holds after the `n_groups` work rows one adhesion row per
/// workgroup (surface energy of the last force pass, bond-break work of its step, 0, 0), and
/// `dissipation` after its `DISSIPATION_PARTS × n_groups` pairs one more per workgroup, the
/// bond-break work (shaders/forces.wgsl, work_fold.wgsl). Without, the buffers are as ever.
pub fn adhesion_rows(adhesion: bool) -> (u64, u64) {
    let a = adhesion as u64;
    (1 + a, crate::layout::consts::DISSIPATION_PARTS as u64 + a)
}

/// Bytes `adhesion_rows` adds to the buffers of `n_particles` (none without adhesion).
pub fn adhesion_planned_bytes(n_particles: u32, adhesion: bool) -> u64 {
    if !adhesion {
        return 0;
    }
    let groups = work_groups(n_particles);
    16 * groups + 8 * groups
}

pub fn work_groups(n: u32) -> u64 {
    (n as u64).div_ceil(crate::layout::consts::WORKGROUP_SIZE as u64).max(1)
}

/// The levels of a multi-level prefix sum over `n` u32 elements: level 0 scans the data in
/// blocks of `SCAN_BLOCK`, each next level the block totals of the one before, until one block.
pub fn scan_levels(ctx: &GpuContext, n: u64) -> Result<Vec<ScanLevel>> {
    let mut levels = Vec::new();
    let mut len = n;
    loop {
        let wgs = len.div_ceil(SCAN_BLOCK);
        let params = ctx.create_buffer("scan_params", 16, U::UNIFORM | U::COPY_DST)?;
        ctx.queue.write_buffer(&params, 0, bytemuck::bytes_of(&ScanParams { n: len as u32, ..Default::default() }));
        levels.push(ScanLevel { n: len as u32, params, sums: ctx.create_buffer("scan_sums", 4 * wgs, U::STORAGE)? });
        if wgs <= 1 {
            return Ok(levels);
        }
        len = wgs;
    }
}

/// The bytes `Buffers::new` allocates for these arguments, every array in one part (a split
/// array's last part rounds up by at most 16 bytes more): what a set-up will take before
/// anything is created. `GpuBackend::build` refuses a set-up that does not fit; a test keeps
/// this equal to `Buffers::device_bytes` of a fresh backend.
#[allow(clippy::too_many_arguments)]
pub fn planned_bytes(n_particles: u32, capacity: u32, n_walls: u32, n_loads: u32, wall_rows: u32, n_pairs: u32, n_cells: u32, hash_capacity: u32, list_capacity: u32, n_partials: u32, shape: ArrayShape) -> u64 {
    let ArrayShape { images, places, .. } = shape;
    let r = |b: u64| b.max(16).div_ceil(16) * 16;
    let n = capacity.max(n_particles).max(1) as u64;
    let live = n_particles.max(1) as u64;
    let slots = list_capacity.max(1) as u64;
    let groups = work_groups(n_particles);
    let levels = |len: u64| {
        let mut total = 0;
        let mut len = len;
        loop {
            let wgs = len.div_ceil(SCAN_BLOCK);
            total += r(16) + r(4 * wgs);
            if wgs <= 1 {
                return total;
            }
            len = wgs;
        }
    };
    let layout = SplitLayout::of_shape(u64::MAX, n, slots, shape);
    let split = |s: Split| r(layout.elements(s, n, slots) * layout.element(s).1);
    let hash = r(2 * hash_capacity as u64 * std::mem::size_of::<HashSlot>() as u64);
    r(std::mem::size_of::<SimParams>() as u64)
        + 2 * r(16 * n)
        + if images { r(16 * n) } else { r(16) }
        + split(Split::Motion)
        + split(Split::Force)
        + r(8 * crate::layout::consts::DISSIPATION_PARTS as u64 * groups)
        + r(16 * groups)
        + r(n_pairs.max(1) as u64 * std::mem::size_of::<crate::contact::params::PairParamsGpu>() as u64)
        + r((n_walls.max(1) * wall_rows.max(1)) as u64 * std::mem::size_of::<WallGpu>() as u64)
        + r(32 * n_loads.max(1) as u64)
        + 3 * r(4 * n)
        + r(8 * n)
        + ORDER_STAGES as u64 * r(16)
        + r(4 * (n_cells as u64 + 1))
        + levels(n_cells as u64 + 1)
        + levels(live + 1)
        + 2 * r(4 * (n + 1))
        + r(4 * list_start_words(n, places))
        + r(4 * n)
        + split(Split::ListPartner)
        + 2 * split(Split::History)
        + split(Split::Incoming)
        + split(Split::Shares)
        + 2 * r(16 * MAX_REBUILD_DISPATCHES)
        + hash
        + 3 * r(STEP_STATE_BYTES)
        + r(n_partials.max(1) as u64 * std::mem::size_of::<EnergyPartial>() as u64)
}

/// Words of `Buffers::list_start` for room for `capacity` particles: n + 1 run starts, the
/// schedule (n), and where slots are placed the force pass's column starts (one per thread of
/// every workgroup, `list_build.wgsl`'s `column_start_put`).
pub fn list_start_words(capacity: u64, places: bool) -> u64 {
    let columns = if places { capacity.div_ceil(crate::layout::consts::WORKGROUP_SIZE as u64) * crate::layout::consts::WORKGROUP_SIZE as u64 } else { 0 };
    2 * capacity + 1 + columns
}

/// `Buffers::list_start` for `n` particles held, room for `capacity`: n + 1 run starts (zero),
/// then the schedule of the force pass as the identity (`shaders/schedule.wgsl` writes it at
/// each list build), then where slots are placed room for the column starts.
fn list_start(ctx: &GpuContext, n: u64, capacity: u64, places: bool) -> Result<wgpu::Buffer> {
    let buf = ctx.create_buffer("list_start", 4 * list_start_words(capacity, places), U::STORAGE | U::COPY_SRC | U::COPY_DST)?;
    // in pieces of 4 MiB: a large run's identity never sits in host memory whole
    const PIECE: u64 = 1 << 20;
    for from in (0..n).step_by(PIECE as usize) {
        let ids: Vec<u32> = (from..n.min(from + PIECE)).map(|k| k as u32).collect();
        ctx.queue.write_buffer(&buf, 4 * (n + 1 + from), bytemuck::cast_slice(&ids));
    }
    Ok(buf)
}

impl Buffers {
    /// The periodic images of the first `n` particles to read back: the buffer, or zeros where
    /// the device does not hold them (`SplitLayout::images`).
    pub fn image_source(&self, n: u64) -> Source<'_> {
        if self.split.images {
            Source::Whole(&self.image, 16 * n)
        } else {
            Source::Zeros(16 * n)
        }
    }

    #[allow(clippy::too_many_arguments)]
    /// `n_loads`: plane walls + mesh walls; `mesh_data`: the packed mesh buffer (`gpu::meshes`).
    /// `cap_bytes`: the most bytes of one binding (`split::binding_cap`). The per-particle
    /// arrays have room for `capacity` particles (at least `n_particles`); the per-workgroup
    /// ones, the energy partials and the list's prefix sum are made for the `n_particles` held
    /// (`resize_live`).
    pub fn new(ctx: &GpuContext, n_particles: u32, capacity: u32, n_walls: u32, n_loads: u32, wall_rows: u32, n_pairs: u32, n_cells: u32, hash_capacity: u32, list_capacity: u32, n_partials: u32, mesh_data: wgpu::Buffer, cap_bytes: u64, adhesion: bool, shape: ArrayShape) -> Result<Self> {
        let ArrayShape { images, places, .. } = shape;
        let capacity = capacity.max(n_particles);
        let n = capacity.max(1) as u64;
        let v4 = 16 * n;
        let b = |label: &str, size: u64, usage: U| ctx.create_buffer(label, size, usage);
        let cell_scan_levels = scan_levels(ctx, n_cells as u64 + 1)?;
        let list_scan_levels = scan_levels(ctx, n_particles.max(1) as u64 + 1)?;
        let hash_bytes = 2 * hash_capacity as u64 * std::mem::size_of::<HashSlot>() as u64;
        let slots = list_capacity.max(1) as u64;
        let groups = work_groups(n_particles);
        let (step_rows, work_pairs) = adhesion_rows(adhesion);
        let dissipation_bytes = 8 * work_pairs * groups;
        let split = SplitLayout::of_shape(cap_bytes, n, slots, shape);
        let sb = |label: &str, array: Split, usage: U| SplitBuffer::new(ctx, label, array, split.elements(array, n, slots), &split, usage);
        Ok(Buffers {
            n_particles,
            capacity,
            sim: b("sim_params", std::mem::size_of::<SimParams>() as u64, U::UNIFORM | U::COPY_DST)?,
            pos_block: b("pos_block", v4, STATE)?,
            pos_offset: b("pos_offset", v4, STATE)?,
            motion: sb("motion", Split::Motion, STATE)?,
            force: sb("force", Split::Force, STATE)?,
            dissipation: b("dissipation", dissipation_bytes, STATE)?,
            work_step: b("work_step", 16 * step_rows * groups, STATE)?,
            adhesion,
            image: b("image", if images { v4 } else { 16 }, STATE)?,
            pairs: b("pair_params", n_pairs.max(1) as u64 * std::mem::size_of::<crate::contact::params::PairParamsGpu>() as u64, U::STORAGE | U::COPY_DST)?,
            walls: b("walls", (n_walls.max(1) * wall_rows.max(1)) as u64 * std::mem::size_of::<WallGpu>() as u64, U::STORAGE | U::COPY_DST)?,
            wall_loads: b("wall_loads", 32 * n_loads.max(1) as u64, U::STORAGE | U::COPY_SRC)?,
            mesh_data,
            particle_cell: b("particle_cell", 4 * n, U::STORAGE)?,
            particle_rank: b("particle_rank", 4 * n, U::STORAGE)?,
            sorted_ids: b("sorted_ids", 4 * n, U::STORAGE)?,
            tag: b("tag", 8 * n, STATE)?,
            order_stages: (0..ORDER_STAGES)
                .map(|k| {
                    let u = b("order_stage", 16, U::UNIFORM | U::COPY_DST)?;
                    ctx.queue.write_buffer(&u, 0, bytemuck::cast_slice(&[k, 0, 0, 0]));
                    Ok(u)
                })
                .collect::<Result<_>>()?,
            cell_count: b("cell_count", 4 * (n_cells as u64 + 1), U::STORAGE | U::COPY_DST)?,
            scan_levels: cell_scan_levels,
            list_start: list_start(ctx, n_particles.max(1) as u64, n, places)?,
            list_next: b("list_next", 4 * (n + 1), U::STORAGE)?,
            list_partner: sb("list_partner", Split::ListPartner, LIST)?,
            slot_history: [sb("slot_history_0", Split::History, LIST)?, sb("slot_history_1", Split::History, LIST)?],
            incoming_count: b("incoming_count", 4 * (n + 1), U::STORAGE)?,
            incoming_cursor: b("incoming_cursor", 4 * n, U::STORAGE)?,
            incoming: sb("incoming", Split::Incoming, U::STORAGE)?,
            shares: sb("shares", Split::Shares, U::STORAGE)?,
            list_capacity,
            split,
            list_scan_levels,
            dispatch_full: b("dispatch_full", 16 * MAX_REBUILD_DISPATCHES, U::STORAGE | U::COPY_DST)?,
            dispatch: b("dispatch", 16 * MAX_REBUILD_DISPATCHES, U::STORAGE | U::INDIRECT)?,
            wall_hash: b("wall_hash", hash_bytes, STATE)?,
            hash_capacity,
            step_state: b("step_state", STEP_STATE_BYTES, STATE)?,
            partials: b("energy_partials", n_partials.max(1) as u64 * std::mem::size_of::<EnergyPartial>() as u64, STATE)?,
            n_partials,
            flags_readback: [b("flags_readback 0", STEP_STATE_BYTES, U::MAP_READ | U::COPY_DST)?, b("flags_readback 1", STEP_STATE_BYTES, U::MAP_READ | U::COPY_DST)?],
        })
    }

    /// Every device buffer held here (state, grid, list, history tables, staging for flags),
    /// each split array's parts one by one; not the mesh data, which its owner holds.
    fn every_buffer(&self) -> Vec<&wgpu::Buffer> {
        let plain = [
            &self.sim, &self.pos_block, &self.pos_offset, &self.dissipation, &self.image,
            &self.pairs, &self.walls, &self.wall_loads, &self.particle_cell, &self.particle_rank, &self.sorted_ids, &self.tag, &self.cell_count, &self.work_step,
            &self.list_start, &self.list_next, &self.incoming_count, &self.incoming_cursor,
            &self.dispatch_full, &self.dispatch, &self.wall_hash, &self.step_state, &self.partials, &self.flags_readback[0], &self.flags_readback[1],
        ];
        let plain = plain.into_iter().chain(&self.order_stages);
        let split = [&self.motion, &self.force, &self.list_partner, &self.slot_history[0], &self.slot_history[1], &self.incoming, &self.shares];
        let levels = self.scan_levels.iter().chain(&self.list_scan_levels).flat_map(|l| [&l.params, &l.sums]);
        plain.chain(split.into_iter().flat_map(|s| s.parts.iter())).chain(levels).collect()
    }

    /// Give every buffer's device memory back now (`wgpu::Buffer::destroy`), but the mesh
    /// data's, which its owner keeps: before an import makes the new set, so that the two never
    /// hold memory together. Nothing may use these buffers afterwards.
    pub fn destroy(&self) {
        for b in self.every_buffer() {
            b.destroy();
        }
    }

    /// Bytes of every device buffer held here (the mesh data is counted by its owner).
    pub fn device_bytes(&self) -> u64 {
        self.every_buffer().iter().map(|b| b.size()).sum()
    }

    /// Device bytes of the list-slot buffers at `capacity` slots (partner words, both history
    /// tables, incoming entries, shares): what `replace_list` makes.
    pub fn list_bytes(&self, capacity: u32) -> u64 {
        let slots = capacity.max(1) as u64;
        let n = self.capacity.max(1) as u64;
        [Split::ListPartner, Split::History, Split::History, Split::Incoming, Split::Shares].iter().map(|&a| self.split.elements(a, n, slots) * self.split.element(a).1).sum()
    }

    /// Replace the list-slot buffers by ones of `capacity` slots; the partner words and both
    /// history tables of the current list are copied over (by `enc`), so a step halted in its
    /// rebuild can be resumed; the other slot buffers are rebuilt by that rebuild. The split
    /// layout is updated: where a slot array now needs more parts the caller must compile the
    /// pipelines again (`GpuBackend::grow_list`).
    pub fn replace_list(&mut self, ctx: &GpuContext, enc: &mut wgpu::CommandEncoder, capacity: u32) -> Result<()> {
        let slots = capacity.max(1) as u64;
        let split = self.split.resized(self.capacity.max(1) as u64, slots);
        let sb = |label: &str, array: Split, usage: U| SplitBuffer::new(ctx, label, array, split.elements(array, self.capacity.max(1) as u64, slots), &split, usage);
        let moved = |enc: &mut wgpu::CommandEncoder, label: &str, old: &SplitBuffer| old.copied(ctx, enc, label, split.elements(old.array, self.capacity.max(1) as u64, slots), old.elements, &split);
        let partner = moved(enc, "list_partner", &self.list_partner)?;
        let history = [moved(enc, "slot_history_0", &self.slot_history[0])?, moved(enc, "slot_history_1", &self.slot_history[1])?];
        self.list_partner = partner;
        self.slot_history = history;
        self.incoming = sb("incoming", Split::Incoming, U::STORAGE)?;
        self.shares = sb("shares", Split::Shares, U::STORAGE)?;
        self.list_capacity = capacity;
        // the per-particle arrays keep their parts (their length did not change)
        self.split = split;
        Ok(())
    }

    /// Hold `n` particles (at most `capacity`) in the arrays made for others: the per-workgroup
    /// work and the wall loads (zeroed, as new buffers start), the energy partials
    /// (`n_partials`) and the list's prefix-sum levels are made again for `n`, so that they are what `new` makes for `n`
    /// particles; the per-particle arrays stay. The caller writes `sim`, the rebuild table and
    /// the bind groups.
    pub fn resize_live(&mut self, ctx: &GpuContext, n: u32, n_partials: u32) -> Result<()> {
        assert!(n <= self.capacity, "{n} particles in buffers with room for {}", self.capacity);
        let groups = work_groups(n);
        let (step_rows, work_pairs) = adhesion_rows(self.adhesion);
        self.dissipation = ctx.create_buffer("dissipation", 8 * work_pairs * groups, STATE)?;
        self.work_step = ctx.create_buffer("work_step", 16 * step_rows * groups, STATE)?;
        self.partials = ctx.create_buffer("energy_partials", n_partials.max(1) as u64 * std::mem::size_of::<EnergyPartial>() as u64, STATE)?;
        self.n_partials = n_partials;
        self.wall_loads = ctx.create_buffer("wall_loads", self.wall_loads.size(), U::STORAGE | U::COPY_SRC)?;
        self.list_scan_levels = scan_levels(ctx, n.max(1) as u64 + 1)?;
        self.n_particles = n;
        Ok(())
    }

    /// Replace the wall-contact tables by zeroed ones of `capacity` slots each; returns the old
    /// buffer.
    pub fn replace_hash(&mut self, ctx: &GpuContext, capacity: u32) -> Result<wgpu::Buffer> {
        let bytes = 2 * capacity as u64 * std::mem::size_of::<HashSlot>() as u64;
        let new = ctx.create_buffer("wall_hash", bytes, STATE)?;
        self.hash_capacity = capacity;
        Ok(std::mem::replace(&mut self.wall_hash, new))
    }
}
