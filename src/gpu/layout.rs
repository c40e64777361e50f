//! GPU-only structs shared with WGSL (declared once with `gpu_struct!`).

use crate::contact::params::PairParamsGpu;
use crate::contact::history::HistoryGpu;
use crate::gpu_struct;

gpu_struct! {
    /// Uniform simulation parameters. Positions are `block × block_size + offset`.
    pub struct SimParams {
        gravity: [f32; 3] => "vec3<f32>",
        dt: f32 => "f32",
        /// Grid origin in blocks.
        grid_origin: [i32; 3] => "vec3<i32>",
        /// Blocks per grid cell edge (cell = cell_blocks × block).
        cell_blocks: i32 => "i32",
        grid_dims: [u32; 3] => "vec3<u32>",
        n_cells: u32 => "u32",
        /// BLOCK, m (a power of two).
        block: f32 => "f32",
        n_particles: u32 => "u32",
        n_walls: u32 => "u32",
        n_materials: u32 => "u32",
        /// Slots per history table (power of two).
        hash_capacity: u32 => "u32",
        /// Insertions per step above which OVERFLOW_HASH is raised.
        hash_max_load: u32 => "u32",
        /// Largest positive reference gap of all pairs (m): the neighbour reach beyond the radii.
        max_rgap: f32 => "f32",
        /// Time index (steps since t = 0) of row 0 of the `walls` table.
        wall_time0: u32 => "u32",
        /// Rows (times) in the `walls` table; the last row holds for later times.
        wall_rows: u32 => "u32",
        /// Periodic axes: bit 0 = x, 1 = y, 2 = z.
        periodic: u32 => "u32",
        _pad0: u32 => "u32",
        _pad1: u32 => "u32",
        /// Period on each axis as blocks + offset (offset in [0, BLOCK)).
        period_blocks: [i32; 3] => "vec3<i32>",
        _pad2: u32 => "u32",
        period_offset: [f32; 3] => "vec3<f32>",
        _pad3: u32 => "u32",
        /// Domain minimum as blocks + offset (the periodic range starts there).
        domain_min_block: [i32; 3] => "vec3<i32>",
        _pad4: u32 => "u32",
        domain_min_offset: [f32; 3] => "vec3<f32>",
        _pad5: u32 => "u32",
    }
}

gpu_struct! {
    /// A plane wall at one time: point as block (w = material) + offset, unit outward normal,
    /// translation velocity, angular velocity about the centre (block + offset), and the fixed
    /// point its loads are reported about (block + offset).
    pub struct WallGpu {
        block: [i32; 4] => "vec4<i32>",
        offset: [f32; 4] => "vec4<f32>",
        normal: [f32; 4] => "vec4<f32>",
        velocity: [f32; 4] => "vec4<f32>",
        omega: [f32; 4] => "vec4<f32>",
        center_block: [i32; 4] => "vec4<i32>",
        center_offset: [f32; 4] => "vec4<f32>",
        load_block: [i32; 4] => "vec4<i32>",
        load_offset: [f32; 4] => "vec4<f32>",
    }
}

gpu_struct! {
    /// History-table slot as written (tag claimed by CAS). Occupied in step s iff tag == epoch.
    pub struct HashSlot {
        key_a: u32 => "u32",
        key_b: u32 => "u32",
        tag: u32 => "atomic<u32>",
        _pad: u32 => "u32",
        history: HistoryGpu => "HistoryGpu",
    }
}

gpu_struct! {
    /// Read-only view of `HashSlot`.
    pub struct HashSlotRead {
        key_a: u32 => "u32",
        key_b: u32 => "u32",
        tag: u32 => "u32",
        _pad: u32 => "u32",
        history: HistoryGpu => "HistoryGpu",
    }
}

gpu_struct! {
    /// Device-advanced step state: step counter (hash epochs) and overflow flags.
    pub struct StepState {
        step: u32 => "u32",
        flags: u32 => "atomic<u32>",
        inserted: u32 => "atomic<u32>",
        /// Set by `advance` when a flag was raised: later passes exit early.
        halt: u32 => "u32",
    }
}

gpu_struct! {
    /// Read-only view of `StepState`.
    pub struct StepStateRead {
        step: u32 => "u32",
        flags: u32 => "u32",
        inserted: u32 => "u32",
        halt: u32 => "u32",
    }
}

gpu_struct! {
    /// Element count of one prefix-sum level.
    pub struct ScanParams {
        n: u32 => "u32",
        _pad0: u32 => "u32",
        _pad1: u32 => "u32",
        _pad2: u32 => "u32",
    }
}

gpu_struct! {
    /// Per-workgroup energy partial sums (see shaders/reduce_energy.wgsl).
    pub struct EnergyPartial {
        a: [f32; 4] => "vec4<f32>",
        b: [f32; 4] => "vec4<f32>",
        /// (owned contacts, 0, 0, 0)
        c: [u32; 4] => "vec4<u32>",
    }
}

/// One GPU struct for layout checks: name, WGSL text, Rust size, Rust field offsets.
pub struct StructLayout {
    pub name: &'static str,
    pub wgsl: &'static str,
    pub size: usize,
    pub offsets: Vec<(&'static str, usize)>,
}

macro_rules! layouts {
    ($($t:ident),*) => {
        vec![$(StructLayout {
            name: stringify!($t),
            wgsl: $t::WGSL,
            size: std::mem::size_of::<$t>(),
            offsets: $t::field_offsets(),
        }),*]
    };
}

/// Every struct the shaders see, in the order the composer emits them.
pub fn struct_layouts() -> Vec<StructLayout> {
    layouts!(PairParamsGpu, HistoryGpu, SimParams, WallGpu, HashSlot, HashSlotRead, StepState, StepStateRead, ScanParams, EnergyPartial)
}
