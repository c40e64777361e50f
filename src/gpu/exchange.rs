//! Handing the whole state out and taking it back (`Backend::export_state` / `import_state`,
//! used when particles enter or leave; `crate::flow`).
//!
//! Export reads the particle buffers and the history the next step reads: the list slots whose
//! partner word carries that step's table bit, and the wall-contact entries whose tag is that
//! step's epoch. Import re-creates the buffers for the new particle count, uploads the
//! particles, moves the wall and mesh records into the wall-contact table through the `rehash`
//! pass (as after a capacity growth: lookups are by key, so the slot order does not matter),
//! builds the list and puts the ball-pair records into their slots (`slot_import`; a pair out
//! of the list's reach cannot be in contact and has no slot, as on the CPU), and evaluates the
//! forces with Δt = 0 and no history writes (`forces_init`), as at the start; particles that
//! neither arrived nor lost a contact get their exported force and torque back, so an
//! exchange leaves them as they were.

use super::buffers::Buffers;
use super::capacity::{initial_hash_capacity, initial_list_capacity, max_load, round_capacity, HistoryImport};
use super::energy::reduce_dispatch;
use super::grid;
use super::layout::{HashSlotRead, HistoryRecord, PairRecord, StepStateRead, STEP_STATE_BYTES};
use super::readback::{read_sources, Source::{Split, Whole}};
use super::encode::{bind_group, dispatch_threads};
use super::step::BindGroups;
use super::GpuBackend;
use crate::contact::History;
use crate::error::{Result, TalusError};
use crate::model::state::{ContactRecord, ParticleState};
use crate::layout::consts::{OVERFLOW_MESH_GROUPS, SLOT_HISTORY_BIT0, SLOT_HISTORY_BIT1, SLOT_PARTNER_MASK, WALL_KEY_BIT};
use crate::setup::{Particles, Setup};

/// Particle arrays in the GPU layout.
pub struct ParticleRows {
    pub pos_block: Vec<[i32; 4]>,
    pub pos_offset: Vec<[f32; 4]>,
    /// Per particle, `motion_rows` rows: velocity (w = 1/m), angular velocity (w = 1/I), and
    /// where rolling work is booked the angular velocity of the previous force pass (here the
    /// same).
    pub motion: Vec<[f32; 4]>,
    pub image: Vec<[i32; 4]>,
    /// Motion rows per particle (`SplitLayout::motion_rows`).
    pub motion_rows: usize,
}

impl ParticleRows {
    /// `p` with periodic images `image` (empty = all zero); masses from `densities` by material;
    /// `motion_rows` rows of motion per particle.
    pub fn of(p: &Particles, image: &[[i32; 3]], densities: &[f64], block: f64, motion_rows: u32) -> ParticleRows {
        let n = p.len();
        let motion_rows = motion_rows as usize;
        let mut rows = ParticleRows { pos_block: Vec::with_capacity(n), pos_offset: Vec::with_capacity(n), motion: Vec::with_capacity(motion_rows * n), image: Vec::with_capacity(n), motion_rows };
        for i in 0..n {
            let s: [(i32, f32); 3] = std::array::from_fn(|a| grid::split(p.position[i][a], block));
            let (r, m) = (p.radius[i], p.material[i]);
            let mass = Setup::sphere_mass(densities[m as usize], r);
            rows.pos_block.push([s[0].0, s[1].0, s[2].0, m as i32]);
            rows.pos_offset.push([s[0].1, s[1].1, s[2].1, r as f32]);
            let (v, w) = (p.velocity[i], p.angular_velocity[i]);
            rows.motion.push([v[0] as f32, v[1] as f32, v[2] as f32, (1.0 / mass) as f32]);
            rows.motion.push([w[0] as f32, w[1] as f32, w[2] as f32, (1.0 / (0.4 * mass * r * r)) as f32]);
            if motion_rows > 2 {
                rows.motion.push([w[0] as f32, w[1] as f32, w[2] as f32, 0.0]);
            }
            let k = image.get(i).copied().unwrap_or([0; 3]);
            rows.image.push([k[0], k[1], k[2], 0]);
        }
        rows
    }
}

impl GpuBackend {
    /// Upload the rows of every particle (in id order) into the current buffers, where the
    /// storage order puts them, with the `tag` of every storage index (`gpu::order`).
    pub(crate) fn write_particles(&self, rows: &ParticleRows) {
        let o = &self.order;
        let stored = ParticleRows { pos_block: o.to_storage(&rows.pos_block, 1), pos_offset: o.to_storage(&rows.pos_offset, 1), motion: o.to_storage(&rows.motion, rows.motion_rows), image: o.to_storage(&rows.image, 1), motion_rows: rows.motion_rows };
        self.write_particles_at(0, &stored);
        self.write_tags();
    }

    /// The `tag` buffer from the storage order.
    pub(crate) fn write_tags(&self) {
        let n = self.buffers.n_particles as usize;
        if n > 0 {
            self.ctx.queue.write_buffer(&self.buffers.tag, 0, bytemuck::cast_slice(&self.order.tags(n)));
        }
    }

    /// Upload particle rows into the current buffers from storage index `first` on, as they are.
    pub(crate) fn write_particles_at(&self, first: u64, rows: &ParticleRows) {
        if rows.pos_block.is_empty() {
            return;
        }
        let (q, b) = (&self.ctx.queue, &self.buffers);
        q.write_buffer(&b.pos_block, 16 * first, bytemuck::cast_slice(&rows.pos_block));
        q.write_buffer(&b.pos_offset, 16 * first, bytemuck::cast_slice(&rows.pos_offset));
        debug_assert_eq!(rows.motion_rows as u32, b.split.motion_rows);
        b.motion.write(q, b.split.motion_rows as u64 * first, bytemuck::cast_slice(&rows.motion));
        if b.split.images {
            q.write_buffer(&b.image, 16 * first, bytemuck::cast_slice(&rows.image));
        }
    }

    /// The state at the current step (one readback).
    pub(crate) fn export(&mut self) -> Result<ParticleState> {
        self.sync_order(false)?;
        self.full_readbacks += 1;
        let n = self.buffers.n_particles as usize;
        let v4 = 16 * n as u64;
        let b = &self.buffers;
        let s = self.steps_done;
        let p = (s % 2) as usize;
        let table_bytes = b.hash_capacity as u64 * std::mem::size_of::<HashSlotRead>() as u64;
        let slots = b.list_capacity.max(1) as u64;
        // a slot's word, and where slots are placed its place (`SplitLayout::places`)
        let words = super::split::slot_words(b.split.places) as usize;
        let data = read_sources(&self.ctx, &[
            Whole(&b.pos_block, v4), Whole(&b.pos_offset, v4), Split(&b.motion, b.split.motion_rows as u64 * n as u64), b.image_source(n as u64), Whole(&b.step_state, STEP_STATE_BYTES), Whole(&b.wall_hash, 2 * table_bytes),
            Split(&b.force, 2 * n as u64), Whole(&b.list_start, 4 * (n as u64 + 1)), Split(&b.list_partner, words as u64 * slots), Split(&b.slot_history[p], slots),
        ])?;
        // copies (the readback bytes carry no alignment guarantee and may be empty); the
        // particle rows in id order, the list and the table translated below (`gpu::order`)
        let o = &self.order;
        let blocks: Vec<[i32; 4]> = o.to_ids(&bytemuck::pod_collect_to_vec(&data[0]), 1);
        let off: Vec<[f32; 4]> = o.to_ids(&bytemuck::pod_collect_to_vec(&data[1]), 1);
        let rows = b.split.motion_rows as usize;
        let motion: Vec<[f32; 4]> = o.to_ids(&bytemuck::pod_collect_to_vec(&data[2]), rows);
        let image: Vec<[i32; 4]> = o.to_ids(&bytemuck::pod_collect_to_vec(&data[3]), 1);
        let st: StepStateRead = bytemuck::pod_read_unaligned(&data[4]);
        let table: Vec<HashSlotRead> = bytemuck::pod_collect_to_vec(&data[5]);
        let force_torque: Vec<[f32; 4]> = o.to_ids(&bytemuck::pod_collect_to_vec(&data[6]), 2);
        let start: Vec<u32> = bytemuck::pod_collect_to_vec(&data[7]);
        let partner: Vec<u32> = bytemuck::pod_collect_to_vec(&data[8]);
        // the slot records as stored (`RecordLayout`), every field of each
        let records: Vec<HistoryRecord> = b.split.record.decode(&data[9]);
        let v3 = |x: [f32; 4]| [x[0] as f64, x[1] as f64, x[2] as f64];
        let blk = self.grid.block;
        let mut particles = Particles::default();
        for i in 0..n {
            // radius and material from the host copy: the f64 radius the particle was made with
            let x = std::array::from_fn(|a| grid::join(blocks[i][a], off[i][a], blk));
            particles.push(x, v3(motion[rows * i]), v3(motion[rows * i + 1]), self.radius[i], blocks[i][3] as u32 & crate::layout::consts::MATERIAL_MASK);
        }
        // ball pairs: the slots whose record in the table the next step reads is valid; walls
        // and meshes: the entries of the epoch the next step reads in its wall-contact table
        let read_bit = if p == 0 { SLOT_HISTORY_BIT0 } else { SLOT_HISTORY_BIT1 };
        let mut history = Vec::new();
        // (storage indices → ids; an owner has the lower id)
        for s in 0..n {
            for k in start[s] as usize..start[s + 1] as usize {
                // where slots are placed, the word and record are at the slot's place
                let place = if words > 1 { partner[words * k + 1] as usize } else { k };
                let word = partner[words * place];
                if word & read_bit != 0 {
                    let j = (word & SLOT_PARTNER_MASK) as usize;
                    history.push(ContactRecord { owner: o.id(s) as u32, partner: o.id(j) as u32, history: History::from(&records[place]) });
                }
            }
        }
        let epoch = st.step.wrapping_add(1);
        let own = &table[p * b.hash_capacity as usize..(p + 1) * b.hash_capacity as usize];
        history.extend(own.iter().filter(|h| h.tag == epoch).map(|h| ContactRecord { owner: o.id(h.key_a as usize) as u32, partner: h.key_b, history: History::from(&h.history) }));
        let image = image.iter().map(|k| [k[0], k[1], k[2]]).collect();
        let (force, torque) = (force_torque.iter().step_by(2).copied().map(v3).collect(), force_torque.iter().skip(1).step_by(2).copied().map(v3).collect());
        let mut out = ParticleState { step: s, particles, image, force, torque, refresh: vec![false; n], history, bodies: self.read_bodies()? };
        out.sort_history();
        Ok(out)
    }

    /// Continue from `state`, at its step (see the module doc), stored in cell order of its
    /// positions where the backend stores so (`gpu::order`).
    pub(crate) fn import(&mut self, state: &ParticleState) -> Result<()> {
        let order = super::order::for_state(&state.particles.position, &state.particles.radius, &state.bodies, self.cell_order);
        self.import_in(state, order, 0)
    }

    /// `import`, storing the particles in `order`, in buffers with room for `room` particles
    /// where that fits the device memory (else for the state's own).
    pub(crate) fn import_in(&mut self, state: &ParticleState, order: super::order::Order, room: u32) -> Result<()> {
        let n = state.len();
        if n > SLOT_PARTNER_MASK as usize {
            return Err(TalusError::Other(format!("{n} particles: too many for the GPU backend (at most {SLOT_PARTNER_MASK})")));
        }
        let n = n as u32;
        // the state's step may differ from ours (a state handed over from another backend)
        self.steps_done = state.step;
        let step = state.step as u32;
        let s = self.steps_done;
        // ball pairs go into the list slots, walls and meshes into the wall-contact table
        let (walls, pairs): (Vec<&ContactRecord>, Vec<&ContactRecord>) = state.history.iter().partition(|c| c.partner & WALL_KEY_BIT != 0);
        // the old buffers hold nothing the import needs: their memory is given back before the
        // new ones are made, so an import needs the device memory of one set, not two (a
        // refusal comes first, while the backend is whole)
        let capacity = match room > n && self.memory.is_none_or(|m| self.fresh_bytes(n, room, walls.len() as u32) + self.meshes.data.size() <= m) {
            true => room,
            false => n,
        };
        let planned = self.fresh_bytes(n, n, walls.len() as u32) + self.meshes.data.size();
        super::check_fits(n, planned, self.buffers.list_capacity.max(initial_list_capacity(n)), self.memory, self.buffers.split.cap_bytes, &super::describe_memory(&self.ctx, self.memory))?;
        let body_pipelines = self.bodies.take().map(|bd| bd.pipelines);
        self.buffers.destroy();
        drop(self.fresh_buffers(n, capacity, walls.len() as u32)?);
        self.bodies = if state.bodies.is_empty() {
            None
        } else {
            let kept = body_pipelines;
            Some(super::bodies::GpuBodies::new(&self.ctx, &self.buffers, &state.bodies, &order, self.grid.block, kept)?)
        };
        self.radius = state.particles.radius.clone();
        self.material = state.particles.material.clone();
        self.order = order;
        self.order_step = self.steps_done;
        let mut rows = ParticleRows::of(&state.particles, &state.image, &self.densities, self.grid.block, self.buffers.split.motion_rows);
        if !state.bodies.is_empty() {
            super::bodies::set_component_masses(&mut rows.motion, rows.motion_rows, &state.bodies);
        }
        self.write_particles(&rows);
        let q = &self.ctx.queue;

        let mut enc = self.ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("import") });
        let epoch = step.wrapping_add(1);
        // the records by storage index (`gpu::order`)
        let o = &self.order;
        let slots: Vec<HashSlotRead> = walls.iter().map(|c| HashSlotRead { key_a: o.slot(c.owner as usize) as u32, key_b: c.partner, tag: epoch, _pad: 0, history: HistoryRecord::from(&c.history) }).collect();
        let upload = self.ctx.create_buffer("imported_history", (slots.len().max(1) * std::mem::size_of::<HashSlotRead>()) as u64, wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST)?;
        if !slots.is_empty() {
            q.write_buffer(&upload, 0, bytemuck::cast_slice(&slots));
            let b = &self.buffers;
            let bg = bind_group(&self.ctx.device, &self.pipelines.rehash, "import_history", &[&b.sim, &upload, &b.wall_hash, &b.step_state]);
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("import_history"), timestamp_writes: None });
            pass.set_pipeline(&self.pipelines.rehash);
            pass.set_bind_group(0, &bg, &[]);
            dispatch_threads(&mut pass, slots.len() as u32, self.ctx.limits.max_compute_workgroups_per_dimension);
        }
        let pair_records: Vec<PairRecord> = pairs.iter().map(|c| PairRecord { owner: o.slot(c.owner as usize) as u32, partner: o.slot(c.partner as usize) as u32, history: HistoryRecord::from(&c.history) }).collect();
        let pair_upload = self.ctx.create_buffer("imported_pair_history", (pair_records.len().max(1) * std::mem::size_of::<PairRecord>()) as u64, wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST)?;
        if !pair_records.is_empty() {
            q.write_buffer(&pair_upload, 0, bytemuck::cast_slice(&pair_records));
        }
        self.refresh_forces(s, enc, Some(HistoryImport::Records(&pair_upload, pair_records.len() as u32)))?;
        drop((upload, pair_upload));
        self.keep_forces(state)
    }

    /// The sizes `fresh_buffers(n, wall_records)` makes: (wall-load rows, wall-contact table
    /// slots, list slots, reduction workgroups).
    pub(crate) fn fresh_capacities(&self, n: u32, wall_records: u32) -> (u32, u32, u32, u32) {
        let n_loads = self.walls.len() as u32 + self.meshes.walls.len() as u32;
        let cap = self.buffers.hash_capacity.max(initial_hash_capacity(n, n_loads)).max(round_capacity(wall_records.saturating_mul(4)));
        let (rx, ry) = reduce_dispatch(n, self.ctx.limits.max_compute_workgroups_per_dimension);
        let list_capacity = self.buffers.list_capacity.max(initial_list_capacity(n));
        (n_loads, cap, list_capacity, rx * ry)
    }

    /// Device bytes of the buffers `fresh_buffers(n, capacity, wall_records)` makes (the
    /// particle, grid, list and table buffers; the mesh data and a body table are made apart).
    pub(crate) fn fresh_bytes(&self, n: u32, capacity: u32, wall_records: u32) -> u64 {
        let (n_loads, cap, list_capacity, partials) = self.fresh_capacities(n, wall_records);
        super::buffers::planned_bytes(n, capacity, self.walls.len() as u32, n_loads, self.wall_rows_capacity as u32, self.pairs.len() as u32, self.cells, cap, list_capacity, partials, self.buffers.split.shape())
            + super::buffers::adhesion_planned_bytes(n, self.buffers.adhesion)
    }

    /// The buffers re-created for `n` particles with room for `capacity` (≥ n), as a state
    /// import makes them (the wall-contact table sized for `wall_records` records besides the
    /// usual, the list at least as large as now), with pipelines, bind groups and `sim` to match
    /// and the pair table uploaded; the particle rows are left to the caller. Returns the old
    /// buffers. Refused, naming the count that fits, where they alone would not fit the device
    /// memory (`GpuBackend::memory`).
    pub(crate) fn fresh_buffers(&mut self, n: u32, capacity: u32, wall_records: u32) -> Result<Buffers> {
        let capacity = capacity.max(n);
        self.restart_build_count();
        let (n_loads, cap, list_capacity, partials) = self.fresh_capacities(n, wall_records);
        let n_pairs = self.pairs.len() as u32;
        let cap_bytes = self.buffers.split.cap_bytes;
        if capacity as u64 > cap_bytes / 16 {
            return Err(TalusError::Device(format!("{capacity} particles: the per-particle arrays of 16 bytes hold at most {} particles in one storage binding of {cap_bytes} bytes", cap_bytes / 16)));
        }
        let planned = self.fresh_bytes(n, capacity, wall_records) + self.meshes.data.size();
        super::check_fits(capacity, planned, list_capacity, self.memory, cap_bytes, &super::describe_memory(&self.ctx, self.memory))?;
        let fresh = Buffers::new(&self.ctx, n, capacity, self.walls.len() as u32, n_loads, self.wall_rows_capacity as u32, n_pairs, self.cells, cap, list_capacity, partials, self.meshes.data.clone(), cap_bytes, self.buffers.adhesion, self.buffers.split.shape())?;
        let old = std::mem::replace(&mut self.buffers, fresh);
        if self.pipelines.split != self.buffers.split {
            self.pipelines = Self::pipelines_for(&self.ctx, self.shared_pipelines, !self.meshes.walls.is_empty(), self.buffers.adhesion, self.pipelines.contact, &self.buffers.split)?;
        }
        self.write_rebuild_table();
        self.groups = BindGroups::new(&self.ctx.device, &self.pipelines, &self.buffers);
        if !self.pairs.is_empty() {
            self.ctx.queue.write_buffer(&self.buffers.pairs, 0, bytemuck::cast_slice(&self.pairs));
        }
        self.sim.n_particles = n;
        self.sim.hash_capacity = cap;
        self.sim.hash_max_load = max_load(cap);
        self.sim.list_capacity = list_capacity;
        Ok(old)
    }

    /// After `fresh_buffers` and the particle rows: the list built and the forces evaluated at
    /// step `s` with Δt = 0 and no history writes, after the commands of `enc`, with the
    /// ball-pair history put into the new list's slots as `history` says.
    pub(crate) fn refresh_forces(&mut self, s: u64, enc: wgpu::CommandEncoder, history: Option<HistoryImport>) -> Result<()> {
        // the refresh evaluates forces at Δt = 0: no tangential increment, no dashpot work
        let dt = self.sim.dt;
        self.sim.dt = 0.0;
        self.ctx.queue.write_buffer(&self.buffers.sim, 0, bytemuck::bytes_of(&self.sim));
        self.upload_poses(s, 1);
        let st = self.initial_forces(s, Some(enc), history)?;
        self.rebuilds_seen = st.rebuilds;
        self.sim.dt = dt;
        self.ctx.queue.write_buffer(&self.buffers.sim, 0, bytemuck::bytes_of(&self.sim));
        if st.flags & OVERFLOW_MESH_GROUPS != 0 {
            return Err(self.mesh_overflow(&st, s));
        }
        if st.flags != 0 {
            return Err(TalusError::Device(format!("importing wall contact records into a table of {} slots raised flags {:#x}", self.buffers.hash_capacity, st.flags)));
        }
        Ok(())
    }

    /// Put back the exported force and torque of every particle not marked `refresh` (the
    /// refreshed strain, in force.w, stays).
    fn keep_forces(&mut self, state: &ParticleState) -> Result<()> {
        if state.refresh.iter().all(|&r| r) {
            return Ok(());
        }
        self.full_readbacks += 1;
        let b = &self.buffers;
        let data = read_sources(&self.ctx, &[Split(&b.force, 2 * state.len() as u64)])?;
        let mut force: Vec<[f32; 4]> = bytemuck::pod_collect_to_vec(&data[0]);
        for s in 0..state.len() {
            let i = self.order.id(s);
            if state.refresh[i] {
                continue;
            }
            let (f, t) = (state.force[i], state.torque[i]);
            force[2 * s] = [f[0] as f32, f[1] as f32, f[2] as f32, force[2 * s][3]];
            force[2 * s + 1] = [t[0] as f32, t[1] as f32, t[2] as f32, force[2 * s + 1][3]];
        }
        b.force.write(&self.ctx.queue, 0, bytemuck::cast_slice(&force));
        if self.bodies.is_some() {
            // the bodies' totals from the components' totals put back
            let mut enc = self.ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("body_totals") });
            self.step_encoder().body_totals(&mut enc);
            self.ctx.queue.submit([enc.finish()]);
        }
        Ok(())
    }
}
