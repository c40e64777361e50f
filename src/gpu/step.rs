//! Bind groups and the encoding of the named passes of one step:
//! `drift` → `list_plan` → on rebuild steps only (indirect dispatches, zero-sized otherwise;
//! encoded only in the steps whose counter is a multiple of `SimParams::rebuild_stride`):
//! grid (`list_clear`, `grid_count`, `scan`, `grid_scatter`, `grid_sort`) and half list
//! (`list_count`, `scan`, `list_stash`, `list_fill`, `scan`, `incoming_fill`, `incoming_sort`, `incoming_map`) → `forces` →
//! `advance`. Each step's total force (the pair shares gathered) and second half kick are fused
//! into the next `drift` (`kick_drift`), and a `kick` closes the batch (writing the totals
//! back); `gather` runs only after the initial force evaluation. The force pass and the list
//! passes alternate between two bind groups (slot-history table parity).

use super::buffers::{Buffers, ScanLevel, SCAN_BLOCK, MAX_REBUILD_DISPATCHES, ORDER_HASH_STAGES};
use super::encode::{bind_group, dispatch_threads, pass_groups, scan_bind_groups, split_dispatch, PassGroups};
use crate::layout::consts::WORKGROUP_SIZE;
use super::pipelines::Pipelines;

pub struct BindGroups {
    pub drift: PassGroups,
    pub kick_drift: PassGroups,
    pub kick: PassGroups,
    pub advance: wgpu::BindGroup,
    pub grid_count: wgpu::BindGroup,
    pub scan: Vec<wgpu::BindGroup>,
    pub scan_add: Vec<wgpu::BindGroup>,
    pub grid_scatter: wgpu::BindGroup,
    pub grid_sort: wgpu::BindGroup,
    pub list_plan: wgpu::BindGroup,
    pub list_clear: wgpu::BindGroup,
    /// `list_count`, `list_stash` and `list_fill` by step parity (the slot-history table the
    /// step reads: [s % 2]).
    pub list_count: [PassGroups; 2],
    pub list_stash: [PassGroups; 2],
    pub list_fill: [PassGroups; 2],
    pub list_scan: Vec<wgpu::BindGroup>,
    pub list_scan_add: Vec<wgpu::BindGroup>,
    pub incoming_fill: PassGroups,
    pub incoming_sort: PassGroups,
    pub incoming_map: PassGroups,
    pub incoming_scan: Vec<wgpu::BindGroup>,
    pub incoming_scan_add: Vec<wgpu::BindGroup>,
    pub gather: PassGroups,
    /// Indexed by step parity: [s % 2] reads slot-history table s % 2 and writes the other.
    pub forces: [PassGroups; 2],
    /// As `forces`, for the force evaluations that keep no history (start, state import).
    pub forces_init: [PassGroups; 2],
    pub reduce_energy: PassGroups,
    pub wall_loads: PassGroups,
    /// `mesh_marks`, before `wall_loads` where the scene has mesh walls.
    pub mesh_marks: wgpu::BindGroup,
    /// The renumbering in cell order (`order.wgsl`, `order_hash.wgsl`): a bind group per stage.
    pub order: Vec<PassGroups>,
    pub order_hash: Vec<wgpu::BindGroup>,
    /// The force pass's schedule (`schedule.wgsl`), written at each list build.
    pub schedule: wgpu::BindGroup,
}

impl BindGroups {
    /// Every pass's groups; the split arrays of each in the order of its `shader::pass_splits`.
    pub fn new(device: &wgpu::Device, p: &Pipelines, b: &Buffers) -> Self {
        let forces = |pipe: &wgpu::ComputePipeline, parity: usize| {
            pass_groups(
                device,
                pipe,
                "forces",
                &[&b.sim, &b.pos_block, &b.pos_offset, &b.work_step, &b.pairs, &b.walls, &b.list_start, &b.wall_hash, &b.step_state, &b.mesh_data],
                &[&b.motion, &b.force, &b.list_partner, &b.slot_history[parity], &b.slot_history[1 - parity], &b.shares, &b.incoming],
            )
        };
        let drift_buffers = [&b.sim, &b.pos_block, &b.pos_offset, &b.step_state, &b.image, &b.incoming_count, &b.dissipation, &b.work_step];
        let drift_split = [&b.motion, &b.force, &b.incoming, &b.shares];
        let (scan, scan_add) = scan_bind_groups(device, p, &b.scan_levels, &b.cell_count);
        let list = |pipe: &wgpu::ComputePipeline, parity: usize| {
            pass_groups(
                device,
                pipe,
                "list_build",
                &[&b.sim, &b.pos_block, &b.pos_offset, &b.cell_count, &b.sorted_ids, &b.list_next, &b.list_start, &b.incoming_count, &b.step_state, &b.tag],
                &[&b.list_partner, &b.incoming, &b.slot_history[1 - parity], &b.slot_history[parity]],
            )
        };
        let stash = |parity: usize| {
            pass_groups(device, &p.list_stash, "list_stash", &[&b.sim, &b.list_next, &b.list_start, &b.step_state], &[&b.list_partner, &b.incoming, &b.slot_history[parity], &b.slot_history[1 - parity]])
        };
        let incoming_buffers = [&b.sim, &b.list_next, &b.incoming_count, &b.incoming_cursor, &b.list_start, &b.step_state, &b.tag];
        let (list_scan, list_scan_add) = scan_bind_groups(device, p, &b.list_scan_levels, &b.list_next);
        let order = b
            .order_stages
            .iter()
            .map(|stage| {
                pass_groups(
                    device,
                    &p.order,
                    "order",
                    &[&b.sim, stage, &b.step_state, &b.pos_block, &b.pos_offset, &b.image, &b.particle_cell, &b.particle_rank, &b.cell_count, &b.sorted_ids, &b.tag, &b.list_start],
                    &[&b.motion, &b.force, &b.list_partner],
                )
            })
            .collect();
        let order_hash = b.order_stages[..ORDER_HASH_STAGES as usize].iter().map(|stage| bind_group(device, &p.order_hash, "order_hash", &[&b.sim, stage, &b.step_state, &b.wall_hash, &b.particle_rank])).collect();
        let (incoming_scan, incoming_scan_add) = scan_bind_groups(device, p, &b.list_scan_levels, &b.incoming_count);
        BindGroups {
            drift: pass_groups(device, &p.drift, "drift", &drift_buffers, &drift_split),
            kick_drift: pass_groups(device, &p.kick_drift, "kick_drift", &drift_buffers, &drift_split),
            kick: pass_groups(device, &p.kick, "kick", &[&b.sim, &b.step_state, &b.incoming_count, &b.dissipation, &b.work_step], &[&b.motion, &b.force, &b.incoming, &b.shares]),
            advance: bind_group(device, &p.advance, "advance", &[&b.step_state]),
            grid_count: bind_group(device, &p.grid_count, "grid_count", &[&b.sim, &b.pos_block, &b.particle_cell, &b.particle_rank, &b.cell_count, &b.step_state]),
            scan,
            scan_add,
            grid_scatter: bind_group(device, &p.grid_scatter, "grid_scatter", &[&b.sim, &b.particle_cell, &b.particle_rank, &b.cell_count, &b.sorted_ids, &b.step_state]),
            grid_sort: bind_group(device, &p.grid_sort, "grid_sort", &[&b.sim, &b.cell_count, &b.sorted_ids, &b.step_state]),
            list_plan: bind_group(device, &p.list_plan, "list_plan", &[&b.sim, &b.step_state, &b.dispatch_full, &b.dispatch]),
            list_clear: bind_group(device, &p.list_clear, "list_clear", &[&b.sim, &b.cell_count, &b.incoming_count, &b.incoming_cursor]),
            list_count: [list(&p.list_count, 0), list(&p.list_count, 1)],
            list_stash: [stash(0), stash(1)],
            list_fill: [list(&p.list_fill, 0), list(&p.list_fill, 1)],
            list_scan,
            list_scan_add,
            incoming_fill: pass_groups(device, &p.incoming_fill, "incoming_fill", &incoming_buffers, &[&b.list_partner, &b.incoming]),
            incoming_sort: pass_groups(device, &p.incoming_sort, "incoming_sort", &incoming_buffers, &[&b.list_partner, &b.incoming]),
            incoming_map: pass_groups(device, &p.incoming_map, "incoming_map", &incoming_buffers, &[&b.list_partner, &b.incoming]),
            incoming_scan,
            incoming_scan_add,
            gather: pass_groups(device, &p.gather, "gather", &[&b.sim, &b.incoming_count, &b.step_state], &[&b.force, &b.incoming, &b.shares]),
            forces: [forces(&p.forces, 0), forces(&p.forces, 1)],
            forces_init: [forces(&p.forces_init, 0), forces(&p.forces_init, 1)],
            reduce_energy: pass_groups(device, &p.reduce_energy, "reduce_energy", &[&b.sim, &b.pos_block, &b.pos_offset, &b.dissipation, &b.partials, &b.image], &[&b.motion, &b.force]),
            wall_loads: pass_groups(
                device,
                &p.wall_loads,
                "wall_loads",
                &[&b.sim, &b.pos_block, &b.pos_offset, &b.pairs, &b.walls, &b.wall_hash, &b.step_state, &b.wall_loads, &b.mesh_data, &b.particle_cell],
                &[&b.motion],
            ),
            mesh_marks: bind_group(device, &p.mesh_marks, "mesh_marks", &[&b.sim, &b.pos_block, &b.pos_offset, &b.step_state, &b.mesh_data, &b.particle_cell]),
            order,
            order_hash,
            schedule: bind_group(device, &p.schedule, "schedule", &[&b.sim, &b.list_start, &b.step_state]),
        }
    }
}


/// Entries of the rebuild dispatch table (`Buffers::dispatch_full`): one particle per thread,
/// one cell per thread, the clears, then one per prefix-sum level of the cell counts and of
/// the n + 1 list counts.
pub const DISPATCH_PARTICLES: u64 = 0;
pub const DISPATCH_CELLS: u64 = 1;
pub const DISPATCH_CLEAR: u64 = 2;
pub const DISPATCH_SCANS: u64 = 3;

/// The full workgroup counts of every rebuild dispatch (x, y, z, unused), in table order.
pub fn rebuild_dispatch_table(b: &Buffers, n_cells: u32, max_dim: u32) -> Vec<[u32; 4]> {
    let threads = |n: u32| {
        let (x, y) = split_dispatch(n.div_ceil(WORKGROUP_SIZE), max_dim);
        [x, y, 1, 0]
    };
    let mut t = vec![threads(b.n_particles), threads(n_cells), threads((n_cells + 1).max(b.n_particles + 1))];
    for lvl in b.scan_levels.iter().chain(&b.list_scan_levels) {
        t.push([(lvl.n as u64).div_ceil(SCAN_BLOCK) as u32, 1, 1, 0]);
    }
    assert!(t.len() as u64 <= MAX_REBUILD_DISPATCHES, "rebuild dispatch table of {} entries", t.len());
    t
}

/// Encodes steps; holds what encoding needs.
pub struct StepEncoder<'a> {
    pub p: &'a Pipelines,
    pub b: &'a Buffers,
    pub g: &'a BindGroups,
    pub n_cells: u32,
    pub n_walls: u32,
    pub n_meshes: u32,
    pub max_dim: u32,
    /// Steps whose counter is a multiple of this carry the rebuild passes
    /// (`SimParams::rebuild_stride`).
    pub rebuild_stride: u64,
    /// Steps between renumberings in cell order (`SimParams::renumber_every`; 0: never), the
    /// order grid's cells, and the wall-contact table's slots (re-keyed where there are walls).
    pub renumber_every: u64,
    pub order_cells: u32,
    pub hash_slots: Option<u32>,
    /// The rigid bodies (`gpu::bodies`), when the scene has any: their passes replace
    /// `drift`/`kick_drift` and `kick`, and the list leaves the pairs of one body out.
    pub bodies: Option<&'a super::bodies::GpuBodies>,
}

impl StepEncoder<'_> {
    fn pass<'e>(enc: &'e mut wgpu::CommandEncoder, label: &str) -> wgpu::ComputePass<'e> {
        enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some(label), timestamp_writes: None })
    }

    fn simple(&self, enc: &mut wgpu::CommandEncoder, label: &str, pipe: &wgpu::ComputePipeline, groups: &PassGroups, n: u32) {
        let mut pass = Self::pass(enc, label);
        pass.set_pipeline(pipe);
        groups.set(&mut pass);
        dispatch_threads(&mut pass, n, self.max_dim);
    }

    /// A rebuild pass: workgroup counts from entry `entry` of the device-written table.
    fn indirect(&self, enc: &mut wgpu::CommandEncoder, label: &str, pipe: &wgpu::ComputePipeline, bg: &wgpu::BindGroup, entry: u64) {
        let mut pass = Self::pass(enc, label);
        pass.set_pipeline(pipe);
        pass.set_bind_group(0, bg, &[]);
        pass.dispatch_workgroups_indirect(&self.b.dispatch, 16 * entry);
    }

    /// A rebuild pass with split arrays (group 1), as `indirect`.
    fn indirect_split(&self, enc: &mut wgpu::CommandEncoder, label: &str, pipe: &wgpu::ComputePipeline, groups: &PassGroups, entry: u64) {
        let mut pass = Self::pass(enc, label);
        pass.set_pipeline(pipe);
        groups.set(&mut pass);
        pass.dispatch_workgroups_indirect(&self.b.dispatch, 16 * entry);
    }

    /// The exclusive prefix sum of `levels` with indirect dispatches (table entries from
    /// `first`): every level's blocks upwards, then the block offsets added back downwards.
    fn scan(&self, enc: &mut wgpu::CommandEncoder, levels: &[ScanLevel], scan: &[wgpu::BindGroup], add: &[wgpu::BindGroup], first: u64) {
        let mut pass = Self::pass(enc, "scan");
        pass.set_pipeline(&self.p.scan_blocks);
        for (l, bg) in scan.iter().enumerate() {
            pass.set_bind_group(0, bg, &[]);
            pass.dispatch_workgroups_indirect(&self.b.dispatch, 16 * (first + l as u64));
        }
        pass.set_pipeline(&self.p.scan_add);
        for l in (0..levels.len().saturating_sub(1)).rev() {
            pass.set_bind_group(0, &add[l], &[]);
            pass.dispatch_workgroups_indirect(&self.b.dispatch, 16 * (first + l as u64));
        }
    }

    /// Whether this step rebuilds (`StepState::rebuild`): the dispatch table of the rebuild
    /// passes, full or empty.
    pub fn list_plan(&self, enc: &mut wgpu::CommandEncoder) {
        let mut pass = Self::pass(enc, "list_plan");
        pass.set_pipeline(&self.p.list_plan);
        pass.set_bind_group(0, &self.g.list_plan, &[]);
        pass.dispatch_workgroups(1, 1, 1);
    }

    /// Whether step `s` renumbers the particles in cell order (`order.wgsl`).
    pub fn renumbers_in(&self, s: u64) -> bool {
        self.renumber_every != 0 && s != 0 && s.is_multiple_of(self.renumber_every)
    }

    /// The renumbering in cell order (`order.wgsl`, `order_hash.wgsl`, in their stage order),
    /// in a step that renumbers, before the grid.
    pub fn order(&self, enc: &mut wgpu::CommandEncoder) {
        let n = self.b.n_particles;
        let stage = |enc: &mut wgpu::CommandEncoder, k: usize, threads: u32| self.simple(enc, "order", &self.p.order, &self.g.order[k], threads);
        let hash = |enc: &mut wgpu::CommandEncoder, k: usize| {
            if let Some(slots) = self.hash_slots {
                let mut pass = Self::pass(enc, "order_hash");
                pass.set_pipeline(&self.p.order_hash);
                pass.set_bind_group(0, &self.g.order_hash[k], &[]);
                dispatch_threads(&mut pass, slots, self.max_dim);
            }
        };
        // with rigid bodies each particle is keyed by its body's centre, and the body table's
        // particle indices move after the rows (`body_order`)
        let body = |enc: &mut wgpu::CommandEncoder, mode: usize| {
            if let Some(bd) = self.bodies {
                self.simple(enc, "body_order", &bd.pipelines.order[mode], &bd.groups.order[mode], n);
            }
        };
        stage(enc, 0, self.order_cells + 1);
        body(enc, 0);
        stage(enc, 1, n);
        self.scan(enc, &self.b.scan_levels, &self.g.scan, &self.g.scan_add, DISPATCH_SCANS);
        stage(enc, 2, n);
        stage(enc, 3, self.order_cells);
        stage(enc, 4, n);
        hash(enc, 0);
        hash(enc, 1);
        for k in 5..=10 {
            stage(enc, k, n);
        }
        body(enc, 1);
        body(enc, 2);
        hash(enc, 2);
        hash(enc, 3);
        stage(enc, 11, n);
        stage(enc, 12, 1);
    }

    /// Counting sort of particles into cells (cell_count → cell starts, sorted ids), on
    /// rebuild steps only; first the renumbering where step `renumber` (if any) renumbers.
    pub fn grid(&self, enc: &mut wgpu::CommandEncoder, renumber: Option<u64>) {
        if renumber.is_some_and(|s| self.renumbers_in(s)) {
            self.order(enc);
        }
        self.indirect(enc, "list_clear", &self.p.list_clear, &self.g.list_clear, DISPATCH_CLEAR);
        self.indirect(enc, "grid_count", &self.p.grid_count, &self.g.grid_count, DISPATCH_PARTICLES);
        self.scan(enc, &self.b.scan_levels, &self.g.scan, &self.g.scan_add, DISPATCH_SCANS);
        self.indirect(enc, "grid_scatter", &self.p.grid_scatter, &self.g.grid_scatter, DISPATCH_PARTICLES);
        self.indirect(enc, "grid_sort", &self.p.grid_sort, &self.g.grid_sort, DISPATCH_CELLS);
    }

    /// The half neighbour list and its incoming index from the grid, on rebuild steps only.
    pub fn list(&self, enc: &mut wgpu::CommandEncoder, s: u64) {
        let parity = (s % 2) as usize;
        let list_scans = DISPATCH_SCANS + self.b.scan_levels.len() as u64;
        let (count, count_g, fill, fill_g) = match self.bodies {
            Some(bd) => (&bd.pipelines.list_count, &bd.groups.list_count[parity], &bd.pipelines.list_fill, &bd.groups.list_fill[parity]),
            None => (&self.p.list_count, &self.g.list_count[parity], &self.p.list_fill, &self.g.list_fill[parity]),
        };
        self.indirect_split(enc, "list_count", count, count_g, DISPATCH_PARTICLES);
        self.scan(enc, &self.b.list_scan_levels, &self.g.list_scan, &self.g.list_scan_add, list_scans);
        self.indirect_split(enc, "list_stash", &self.p.list_stash, &self.g.list_stash[parity], DISPATCH_PARTICLES);
        self.indirect_split(enc, "list_fill", fill, fill_g, DISPATCH_PARTICLES);
        self.scan(enc, &self.b.list_scan_levels, &self.g.incoming_scan, &self.g.incoming_scan_add, list_scans);
        self.indirect_split(enc, "incoming_fill", &self.p.incoming_fill, &self.g.incoming_fill, DISPATCH_PARTICLES);
        self.indirect_split(enc, "incoming_sort", &self.p.incoming_sort, &self.g.incoming_sort, DISPATCH_PARTICLES);
        self.indirect_split(enc, "incoming_map", &self.p.incoming_map, &self.g.incoming_map, DISPATCH_PARTICLES);
        self.indirect(enc, "schedule", &self.p.schedule, &self.g.schedule, DISPATCH_PARTICLES);
    }

    /// Whether step `s` carries the rebuild passes (`list_plan.wgsl` plans a rebuild only in
    /// such a step; one between them that needs a rebuild halts with REBUILD_LATE, and its
    /// resumed batch carries the passes, `resume`).
    pub fn rebuilds_in(&self, s: u64) -> bool {
        s.is_multiple_of(self.rebuild_stride)
    }

    /// Plan, grid and list: a rebuild if `StepState::rebuild` is set, else empty dispatches.
    pub fn rebuild(&self, enc: &mut wgpu::CommandEncoder, s: u64) {
        self.list_plan(enc);
        // (an initial force evaluation never renumbers: the host has just set the order)
        self.grid(enc, None);
        self.list(enc, s);
    }

    pub fn gather(&self, enc: &mut wgpu::CommandEncoder) {
        self.simple(enc, "gather", &self.p.gather, &self.g.gather, self.b.n_particles);
    }

    /// Force evaluation without history writes before step `s` (at the start, and after a
    /// state import), so the next half kick uses real forces; reads the table step s reads.
    /// The host has set `StepState::rebuild`, so the list is built first; `import` (a
    /// `slot_import` bind group and its record count) puts imported pair history into its slots.
    pub fn initial_forces(&self, enc: &mut wgpu::CommandEncoder, s: u64, import: Option<(&wgpu::ComputePipeline, &PassGroups, u32)>) {
        self.rebuild(enc, s);
        if let Some((pipe, bg, threads)) = import {
            self.simple(enc, "slot_import", pipe, bg, threads);
        }
        self.simple(enc, "forces_init", &self.p.forces_init, &self.g.forces_init[(s % 2) as usize], self.b.n_particles);
        self.gather(enc);
        self.body_totals(enc);
        // the host's request is served: the step after builds only when the list goes stale
        // (left set, `list_plan` would rebuild in a step that may carry no rebuild passes)
        enc.clear_buffer(&self.b.step_state, std::mem::offset_of!(super::layout::StepState, rebuild) as u64, Some(4));
    }

    /// Steps `s0 .. s0 + n` (s = steps done before it; selects the history-table parity).
    /// The second half kick of each step is fused into the next step's drift (`kick_drift`);
    /// the batch ends with a separate `kick`, so velocities are full-step values between batches.
    /// With `loads`, the last step also runs `wall_loads` between its `forces` and `advance`
    /// (the loads are read at outputs only, after the last step of `Backend::step`: at 10M
    /// particles on an H100 the pass took 26 ms, as much as 11 steps).
    pub fn steps(&self, enc: &mut wgpu::CommandEncoder, s0: u64, n: u64, loads: bool) {
        self.steps_marked(enc, s0, n, loads, &mut |_, _| {});
    }

    /// `steps`, calling `mark(enc, part)` after every named pass (`part` = its index in
    /// `STEP_PASSES`) and after the wall loads and the closing kick (`part` =
    /// `STEP_PASSES.len()`): `talus bench --profile` times the parts there (`gpu::profile`).
    pub fn steps_marked(&self, enc: &mut wgpu::CommandEncoder, s0: u64, n: u64, loads: bool, mark: &mut dyn FnMut(&mut wgpu::CommandEncoder, usize)) {
        let end = Self::STEP_PASSES.len();
        for s in s0..s0 + n {
            for (p, (name, pass)) in Self::STEP_PASSES.iter().enumerate() {
                pass(self, enc, s, s == s0);
                mark(enc, p);
                if loads && *name == "forces" && s + 1 == s0 + n {
                    self.wall_loads(enc);
                    mark(enc, end);
                }
            }
        }
        if n > 0 {
            self.kick(enc);
            mark(enc, end);
        }
    }

    /// The rest of a batch that halted in step `s` (an overflow raised there; the host has
    /// grown the capacity and cleared the flags): that step from its rebuild passes on (its
    /// `drift` and `list_plan` have run, and the `dispatch` table still holds its plan), then
    /// steps `s + 1 .. end` and the closing `kick` (the wall loads in the last step with
    /// `loads`). Every pass from the rebuild on writes only what it later reads back in this
    /// order, so a resumed batch equals one that never overflowed.
    pub fn resume(&self, enc: &mut wgpu::CommandEncoder, s: u64, end: u64, loads: bool) {
        // the halted step carries its rebuild passes whatever its counter (a REBUILD_LATE halt
        // planned a rebuild in a step between those that carry them)
        self.grid(enc, Some(s));
        self.list(enc, s);
        for (name, pass) in Self::STEP_PASSES.iter().skip(Self::RESUME_PASS + 2) {
            pass(self, enc, s, false);
            if loads && *name == "forces" && s + 1 == end {
                self.wall_loads(enc);
            }
        }
        for t in s + 1..end {
            for (name, pass) in Self::STEP_PASSES {
                pass(self, enc, t, false);
                if loads && name == "forces" && t + 1 == end {
                    self.wall_loads(enc);
                }
            }
        }
        self.kick(enc);
    }

    /// Loads on every wall from the contacts of the step being encoded (between its `forces` and
    /// `advance`; one workgroup per plane wall, then one per mesh wall), after `mesh_marks` has
    /// marked the balls that can touch a mesh.
    pub fn wall_loads(&self, enc: &mut wgpu::CommandEncoder) {
        if self.n_walls + self.n_meshes == 0 {
            return;
        }
        if self.n_meshes > 0 {
            let mut pass = Self::pass(enc, "mesh_marks");
            pass.set_pipeline(&self.p.mesh_marks);
            pass.set_bind_group(0, &self.g.mesh_marks, &[]);
            dispatch_threads(&mut pass, self.b.n_particles, self.max_dim);
        }
        let mut pass = Self::pass(enc, "wall_loads");
        pass.set_pipeline(&self.p.wall_loads);
        self.g.wall_loads.set(&mut pass);
        pass.dispatch_workgroups(self.n_walls + self.n_meshes, 1, 1);
    }

    pub fn kick(&self, enc: &mut wgpu::CommandEncoder) {
        if let Some(bd) = self.bodies {
            // the components' totals, the bodies' second half kick, the components' velocities
            self.gather(enc);
            self.simple(enc, "body_kick", &bd.pipelines.kick[2], &bd.groups.kick[2], bd.buffers.n_bodies);
            self.simple(enc, "body_place", &bd.pipelines.place[2], &bd.groups.place[2], self.b.n_particles);
            return;
        }
        self.simple(enc, "kick", &self.p.kick, &self.g.kick, self.b.n_particles);
    }

    /// A step's first passes in a scene with rigid bodies, in place of `drift` (`first`: the
    /// first step of a batch) or `kick_drift`: the bodies' kicks and drifts (`body_kick`; after
    /// the first step it forms the components' totals itself, as `kick_drift` does, where a
    /// `gather` pass ran before: one dispatch and a write and read of `force` less a step), the
    /// components placed (`body_place`).
    fn body_drift(&self, enc: &mut wgpu::CommandEncoder, bd: &super::bodies::GpuBodies, first: bool) {
        let mode = if first { 0 } else { 1 };
        self.simple(enc, "body_kick", &bd.pipelines.kick[mode], &bd.groups.kick[mode], bd.buffers.n_bodies);
        self.simple(enc, "body_place", &bd.pipelines.place[mode], &bd.groups.place[mode], self.b.n_particles);
    }

    /// The bodies' total forces and torques from their components' totals in `force` (after a
    /// force evaluation outside the step loop); nothing without bodies.
    pub fn body_totals(&self, enc: &mut wgpu::CommandEncoder) {
        if let Some(bd) = self.bodies {
            self.simple(enc, "body_totals", &bd.pipelines.kick[3], &bd.groups.kick[3], bd.buffers.n_bodies);
        }
    }

    /// Every component placed on its body (positions, velocities, spins), as at the start of a
    /// step (before the initial force evaluation of a set-up with bodies).
    pub fn body_place_all(&self, enc: &mut wgpu::CommandEncoder) {
        if let Some(bd) = self.bodies {
            self.simple(enc, "body_place", &bd.pipelines.place[0], &bd.groups.place[0], self.b.n_particles);
        }
    }

    /// Index in `STEP_PASSES` of the first pass a halted step is resumed from (the grid).
    pub const RESUME_PASS: usize = 2;

    /// The named passes of a step, in order (`talus bench --profile` times them one by one);
    /// the flag says whether this is the first step of a batch.
    #[allow(clippy::type_complexity)]
    pub const STEP_PASSES: [(&'static str, fn(&Self, &mut wgpu::CommandEncoder, u64, bool)); 6] = [
        ("drift", |e, enc, _, first| {
            if let Some(bd) = e.bodies {
                e.body_drift(enc, bd, first)
            } else if first {
                e.simple(enc, "drift", &e.p.drift, &e.g.drift, e.b.n_particles)
            } else {
                e.simple(enc, "kick_drift", &e.p.kick_drift, &e.g.kick_drift, e.b.n_particles)
            }
        }),
        ("list_plan", |e, enc, _, _| e.list_plan(enc)),
        ("grid (rebuild steps)", |e, enc, s, _| {
            if e.rebuilds_in(s) {
                e.grid(enc, Some(s))
            }
        }),
        ("list (rebuild steps)", |e, enc, s, _| {
            if e.rebuilds_in(s) {
                e.list(enc, s)
            }
        }),
        ("forces", |e, enc, s, _| e.simple(enc, "forces", &e.p.forces, &e.g.forces[(s % 2) as usize], e.b.n_particles)),
        ("advance", |e, enc, _, _| {
            let mut pass = Self::pass(enc, "advance");
            pass.set_pipeline(&e.p.advance);
            pass.set_bind_group(0, &e.g.advance, &[]);
            pass.dispatch_workgroups(1, 1, 1);
        }),
    ];
}
