//! Every device buffer, created once (hash tables re-created on growth).

use super::context::GpuContext;
use super::layout::*;
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

/// Copies of the state taken at the start of each batch (for redo after overflow).
pub struct Backup {
    pub state: Vec<wgpu::Buffer>,
    pub step_state: wgpu::Buffer,
    /// The history table read by the batch's first step.
    pub hash: wgpu::Buffer,
}

pub struct Buffers {
    pub n_particles: u32,
    pub sim: wgpu::Buffer,
    pub pos_block: wgpu::Buffer,
    pub pos_offset: wgpu::Buffer,
    pub velocity: wgpu::Buffer,
    pub omega: wgpu::Buffer,
    pub force: wgpu::Buffer,
    pub torque: wgpu::Buffer,
    pub dissipation: wgpu::Buffer,
    pub contacts: wgpu::Buffer,
    /// Per particle: periods it was moved back by on each periodic axis (vec4<i32>, w unused).
    pub image: wgpu::Buffer,
    pub pairs: wgpu::Buffer,
    /// Wall table: rows × n_walls `WallGpu` (see `gpu::walls`).
    pub walls: wgpu::Buffer,
    /// Per plane wall, then per mesh wall: (force, 0), (torque about the load point, 0) of the
    /// last step of a batch.
    pub wall_loads: wgpu::Buffer,
    /// All mesh-wall data, packed (see `gpu::meshes`).
    pub mesh_data: wgpu::Buffer,
    pub particle_cell: wgpu::Buffer,
    pub particle_rank: wgpu::Buffer,
    pub sorted_ids: wgpu::Buffer,
    /// n_cells + 1 counts, scanned in place into cell starts.
    pub cell_count: wgpu::Buffer,
    pub scan_levels: Vec<ScanLevel>,
    /// Ping-pong history tables; step s reads `hash[s % 2]`.
    pub hash: [wgpu::Buffer; 2],
    pub hash_capacity: u32,
    pub step_state: wgpu::Buffer,
    pub partials: wgpu::Buffer,
    pub n_partials: u32,
    pub backup: Backup,
    /// MAP_READ buffer for the step state (flags) after each batch.
    pub flags_readback: wgpu::Buffer,
}

const STATE: U = U::STORAGE.union(U::COPY_SRC).union(U::COPY_DST);

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

impl Buffers {
    /// Buffers whose contents are the simulation state (backed up per batch), in a fixed order.
    pub fn state_buffers(&self) -> [&wgpu::Buffer; 9] {
        [&self.pos_block, &self.pos_offset, &self.velocity, &self.omega, &self.force, &self.torque, &self.dissipation, &self.contacts, &self.image]
    }

    #[allow(clippy::too_many_arguments)]
    /// `n_loads`: plane walls + mesh walls; `mesh_data`: the packed mesh buffer (`gpu::meshes`).
    pub fn new(ctx: &GpuContext, n_particles: u32, n_walls: u32, n_loads: u32, wall_rows: u32, n_pairs: u32, n_cells: u32, hash_capacity: u32, n_partials: u32, mesh_data: wgpu::Buffer) -> Result<Self> {
        let n = n_particles.max(1) as u64;
        let v4 = 16 * n;
        let b = |label: &str, size: u64, usage: U| ctx.create_buffer(label, size, usage);
        let scan_levels = scan_levels(ctx, n_cells as u64 + 1)?;
        let hash_bytes = hash_capacity as u64 * std::mem::size_of::<HashSlot>() as u64;
        let dissipation_bytes = 8 * crate::layout::consts::DISSIPATION_PARTS as u64 * n;
        let sizes = [v4, v4, v4, v4, v4, v4, dissipation_bytes, 4 * n, v4];
        let state_labels = ["backup_pos_block", "backup_pos_offset", "backup_velocity", "backup_omega", "backup_force", "backup_torque", "backup_dissipation", "backup_contacts", "backup_image"];
        let mut backup_state = Vec::new();
        for (l, size) in state_labels.iter().zip(sizes) {
            backup_state.push(b(l, size, U::COPY_SRC | U::COPY_DST)?);
        }
        Ok(Buffers {
            n_particles,
            sim: b("sim_params", std::mem::size_of::<SimParams>() as u64, U::UNIFORM | U::COPY_DST)?,
            pos_block: b("pos_block", v4, STATE)?,
            pos_offset: b("pos_offset", v4, STATE)?,
            velocity: b("velocity", v4, STATE)?,
            omega: b("omega", v4, STATE)?,
            force: b("force", v4, STATE)?,
            torque: b("torque", v4, STATE)?,
            dissipation: b("dissipation", dissipation_bytes, STATE)?,
            contacts: b("contacts", 4 * n, STATE)?,
            image: b("image", v4, STATE)?,
            pairs: b("pair_params", n_pairs.max(1) as u64 * std::mem::size_of::<crate::contact::params::PairParamsGpu>() as u64, U::STORAGE | U::COPY_DST)?,
            walls: b("walls", (n_walls.max(1) * wall_rows.max(1)) as u64 * std::mem::size_of::<WallGpu>() as u64, U::STORAGE | U::COPY_DST)?,
            wall_loads: b("wall_loads", 32 * n_loads.max(1) as u64, U::STORAGE | U::COPY_SRC)?,
            mesh_data,
            particle_cell: b("particle_cell", 4 * n, U::STORAGE)?,
            particle_rank: b("particle_rank", 4 * n, U::STORAGE)?,
            sorted_ids: b("sorted_ids", 4 * n, U::STORAGE)?,
            cell_count: b("cell_count", 4 * (n_cells as u64 + 1), U::STORAGE | U::COPY_DST)?,
            scan_levels,
            hash: [b("hash_table_0", hash_bytes, STATE)?, b("hash_table_1", hash_bytes, STATE)?],
            hash_capacity,
            step_state: b("step_state", STEP_STATE_BYTES, STATE)?,
            partials: b("energy_partials", n_partials.max(1) as u64 * std::mem::size_of::<EnergyPartial>() as u64, STATE)?,
            n_partials,
            backup: Backup {
                state: backup_state,
                step_state: b("backup_step_state", STEP_STATE_BYTES, U::COPY_SRC | U::COPY_DST)?,
                hash: b("backup_hash", hash_bytes, U::STORAGE | U::COPY_SRC | U::COPY_DST)?,
            },
            flags_readback: b("flags_readback", STEP_STATE_BYTES, U::MAP_READ | U::COPY_DST)?,
        })
    }

    /// Replace both history tables and the backup table by zeroed ones of `capacity` slots;
    /// returns the old backup table (holding the batch-start history).
    pub fn replace_hash(&mut self, ctx: &GpuContext, capacity: u32) -> Result<wgpu::Buffer> {
        let bytes = capacity as u64 * std::mem::size_of::<HashSlot>() as u64;
        self.hash = [ctx.create_buffer("hash_table_0", bytes, STATE)?, ctx.create_buffer("hash_table_1", bytes, STATE)?];
        let old = std::mem::replace(&mut self.backup.hash, ctx.create_buffer("backup_hash", bytes, U::STORAGE | U::COPY_SRC | U::COPY_DST)?);
        self.hash_capacity = capacity;
        Ok(old)
    }
}
