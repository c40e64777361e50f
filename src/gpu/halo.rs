//! The GPU backend's part in a decomposed run (`gpu::decomposed`, docs/mpi.md): ghost rows
//! packed on the device after each step's drift, sent by the host, and unpacked over the ghosts
//! before the step's list plan and force pass.
//!
//! A step of a decomposed run is two submissions: `drift` + `ghost_pack` + a copy into a
//! mapped buffer; then (after the host has exchanged the rows) `ghost_unpack` and the rest of
//! the step, closed by its `kick`, as a batch of one step (`kick` + `drift` is bit for bit the
//! fused `kick_drift`, so the trajectory is that of any batch length). wgpu exposes no device
//! pointers, so the rows go through host memory: no GPU-aware MPI.

use super::layout::StepStateRead;
use super::encode::{dispatch_threads, pass_groups, PassGroups};
use super::pipelines::{module, pipeline};
use super::readback::{map_read_after, read_buffers};
use super::split::SplitLayout;
use super::step::StepEncoder;
use super::GpuBackend;
use crate::error::{Result, TalusError};
use crate::layout::consts::{GHOST_BIT, GHOST_WORDS, MATERIAL_MASK};

/// Bytes of one ghost row (`shaders/ranks/pack.wgsl`).
pub const GHOST_ROW_BYTES: u64 = 4 * GHOST_WORDS as u64;

/// The pack and unpack passes, compiled for a split layout.
pub struct GhostPipelines {
    split: SplitLayout,
    pack: wgpu::ComputePipeline,
    unpack: wgpu::ComputePipeline,
}

/// The exchange lists of one rank as device buffers, bound to the backend's particle buffers
/// (made again after every import, which re-creates them).
pub struct GhostLists {
    n_send: u32,
    n_recv: u32,
    pack: PassGroups,
    unpack: PassGroups,
    packed: wgpu::Buffer,
    readback: wgpu::Buffer,
    incoming: wgpu::Buffer,
}

impl GpuBackend {
    /// The pack and unpack passes for this backend's split layout (`cached` if it still fits).
    pub fn ghost_pipelines(&self, cached: Option<std::sync::Arc<GhostPipelines>>) -> Result<std::sync::Arc<GhostPipelines>> {
        if let Some(p) = cached.filter(|p| p.split == self.pipelines.split) {
            return Ok(p);
        }
        let adhesion = self.buffers.adhesion;
        let p = |name: &str| -> Result<wgpu::ComputePipeline> { pipeline(&self.ctx, &module(&self.ctx, name, &self.pipelines.split, adhesion)?, name, "main", &[]) };
        Ok(std::sync::Arc::new(GhostPipelines { split: self.pipelines.split.clone(), pack: p("ghost_pack")?, unpack: p("ghost_unpack")? }))
    }

    /// Device lists: `send` the local ids whose rows go out after each drift (in the order the
    /// receivers expect), `recv` the ghosts' local ids in the order their rows come in.
    pub fn ghost_lists(&self, pipes: &GhostPipelines, send: &[u32], recv: &[u32]) -> Result<GhostLists> {
        let ctx = &self.ctx;
        let b = &self.buffers;
        let ids = |label: &str, list: &[u32]| -> Result<wgpu::Buffer> {
            let words: Vec<u32> = std::iter::once(list.len() as u32).chain(list.iter().copied()).collect();
            let buf = ctx.create_buffer(label, 4 * words.len() as u64, wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST)?;
            ctx.queue.write_buffer(&buf, 0, bytemuck::cast_slice(&words));
            Ok(buf)
        };
        let send_ids = ids("ghost_send", send)?;
        let recv_ids = ids("ghost_recv", recv)?;
        let bytes = |n: usize| GHOST_ROW_BYTES * n.max(1) as u64;
        let packed = ctx.create_buffer("ghost_packed", bytes(send.len()), wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC)?;
        let readback = ctx.create_buffer("ghost_readback", bytes(send.len()), wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST)?;
        let incoming = ctx.create_buffer("ghost_incoming", bytes(recv.len()), wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST)?;
        let dev = &ctx.device;
        let pack = pass_groups(dev, &pipes.pack, "ghost_pack", &[&send_ids, &b.pos_block, &b.pos_offset, &packed], &[&b.motion]);
        let unpack = pass_groups(dev, &pipes.unpack, "ghost_unpack", &[&recv_ids, &incoming, &b.pos_block, &b.pos_offset], &[&b.motion]);
        Ok(GhostLists { n_send: send.len() as u32, n_recv: recv.len() as u32, pack, unpack, packed, readback, incoming })
    }

    /// Sets `GHOST_BIT` in the position blocks of the particles not `owned` and clears it in the
    /// others (after an import; one readback and one upload of the blocks).
    pub fn mark_ghosts(&mut self, owned: &[bool]) -> Result<()> {
        let n = self.buffers.n_particles as usize;
        if owned.len() != n {
            return Err(TalusError::Other(format!("{} ownership flags for {n} particles", owned.len())));
        }
        if n == 0 {
            return Ok(());
        }
        let data = read_buffers(&self.ctx, &[(&self.buffers.pos_block, 16 * n as u64)])?;
        let mut blocks: Vec<[i32; 4]> = bytemuck::pod_collect_to_vec(&data[0]);
        for (b, &own) in blocks.iter_mut().zip(owned) {
            let material = b[3] as u32 & MATERIAL_MASK;
            b[3] = (if own { material } else { material | GHOST_BIT }) as i32;
        }
        self.ctx.queue.write_buffer(&self.buffers.pos_block, 0, bytemuck::cast_slice(&blocks));
        Ok(())
    }

    /// One step of a decomposed run: drift, the owned rows packed and read back, `exchange`
    /// (the rows out, in `send` order, to the rows in, in `recv` order), the ghosts unpacked,
    /// then the rest of the step and its closing kick (the wall loads with `loads`). Returns the
    /// step state after it (its list builds tell the caller when particles must migrate).
    pub fn step_with_ghosts(&mut self, lists: &GhostLists, pipes: &GhostPipelines, loads: bool, exchange: &mut dyn FnMut(Vec<u8>) -> Vec<u8>) -> Result<StepStateRead> {
        self.check_usable()?;
        let s = self.steps_done;
        self.prepare_batch(s, 1);
        let max_dim = self.ctx.limits.max_compute_workgroups_per_dimension;
        let dev = &self.ctx.device;
        let mut enc = dev.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("ghost_step_drift") });
        {
            let e = self.step_encoder();
            (StepEncoder::STEP_PASSES[0].1)(&e, &mut enc, s, true);
        }
        let out_bytes = GHOST_ROW_BYTES * lists.n_send as u64;
        if lists.n_send > 0 {
            {
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("ghost_pack"), timestamp_writes: None });
                pass.set_pipeline(&pipes.pack);
                lists.pack.set(&mut pass);
                dispatch_threads(&mut pass, lists.n_send, max_dim);
            }
            enc.copy_buffer_to_buffer(&lists.packed, 0, &lists.readback, 0, out_bytes);
        }
        let index = self.ctx.queue.submit([enc.finish()]);
        let rows = if lists.n_send > 0 { map_read_after(&self.ctx, &lists.readback, out_bytes, Some(index))? } else { Vec::new() };
        let received = exchange(rows);
        let in_bytes = GHOST_ROW_BYTES * lists.n_recv as u64;
        if received.len() as u64 != in_bytes {
            return Err(TalusError::Other(format!("{} bytes of ghost rows arrived, {in_bytes} expected", received.len())));
        }
        let mut enc = self.ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("ghost_step") });
        if lists.n_recv > 0 {
            self.ctx.queue.write_buffer(&lists.incoming, 0, &received);
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("ghost_unpack"), timestamp_writes: None });
            pass.set_pipeline(&pipes.unpack);
            lists.unpack.set(&mut pass);
            dispatch_threads(&mut pass, lists.n_recv, max_dim);
        }
        {
            let e = self.step_encoder();
            for (name, pass) in StepEncoder::STEP_PASSES.iter().skip(1) {
                pass(&e, &mut enc, s, false);
                if loads && *name == "forces" {
                    e.wall_loads(&mut enc);
                }
            }
            e.kick(&mut enc);
        }
        self.finish_step(enc, s, loads)
    }
}
