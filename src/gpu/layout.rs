//! GPU-only structs shared with WGSL (declared once with `gpu_struct!`).

use crate::contact::params::PairParamsGpu;
use crate::contact::history::HistoryGpu;
use crate::contact::History;
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
        /// Slots per wall-contact history table (two tables in `wall_hash`; any size ≥ 4: the
        /// hash is taken modulo it).
        hash_capacity: u32 => "u32",
        /// Insertions per step above which OVERFLOW_HASH is raised.
        hash_max_load: u32 => "u32",
        /// Largest positive reference gap of all pairs (m): the neighbour reach beyond the radii.
        max_rgap: f32 => "f32",
        /// Time index (steps since t = 0) of row 0 of the `walls` table.
        wall_time0: u32 => "u32",
        /// Rows (times) in the `walls` table and in the mesh pose table; the last row holds
        /// for later times.
        wall_rows: u32 => "u32",
        /// Mesh walls. `mesh_data` (see `gpu::meshes`) holds, in 16-byte words: the `MeshGpu`
        /// headers from word 0, then the sections below.
        n_meshes: u32 => "u32",
        /// First word of the mesh pose table (wall_rows × n_meshes `MeshPoseGpu`).
        mesh_pose_base: u32 => "u32",
        /// First word of the triangles (`MeshTriangleGpu`, all meshes concatenated).
        mesh_tri_base: u32 => "u32",
        /// First word of the cell starts (u32, 4 per word; all meshes' cells + 1).
        mesh_start_base: u32 => "u32",
        /// First word of the binned triangle ids (u32, 4 per word).
        mesh_id_base: u32 => "u32",
        /// Periodic axes: bit 0 = x, 1 = y, 2 = z.
        periodic: u32 => "u32",
        /// Slots of the half neighbour list (and of its incoming index, whose slot positions
        /// start at this offset in `incoming`); growing it is an overflow (`OVERFLOW_LIST`).
        list_capacity: u32 => "u32",
        /// Period on each axis as blocks + offset (offset in [0, BLOCK)).
        period_blocks: [i32; 3] => "vec3<i32>",
        /// Neighbour-list skin, m: the list holds pairs within rᵢ + rⱼ + max_rgap + skin and
        /// is rebuilt once a particle has moved skin/2 since the last build.
        skin: f32 => "f32",
        period_offset: [f32; 3] => "vec3<f32>",
        /// A particle whose centre is farther than this (m) outside the domain on a
        /// non-periodic axis raises BLOWUP (lost particle); negative: never.
        lost_margin: f32 => "f32",
        /// Domain minimum as blocks + offset (the periodic range starts there).
        domain_min_block: [i32; 3] => "vec3<i32>",
        /// 1 where some pair books rolling work (`Setup::rolling_booked`): the kicks keep each
        /// particle's spin of the force pass in its third `motion` row, for the next pass.
        rolling_booked: u32 => "u32",
        domain_min_offset: [f32; 3] => "vec3<f32>",
        /// Steps whose counter is a multiple of this carry the rebuild passes
        /// (`consts::REBUILD_STRIDE` with a skin, 1 without; `list_plan.wgsl`).
        rebuild_stride: u32 => "u32",
        /// The grid the particles are renumbered by (`shaders/order.wgsl`): that of skin 0, so a
        /// run with any skin stores alike. Origin (blocks), blocks per cell, dims, cells.
        order_origin: [i32; 3] => "vec3<i32>",
        order_cell_blocks: i32 => "i32",
        order_dims: [u32; 3] => "vec3<u32>",
        order_cells: u32 => "u32",
        /// Steps between renumberings in cell order on the device (a multiple of
        /// `REBUILD_STRIDE`; 0: never; `gpu::order`).
        renumber_every: u32 => "u32",
        /// 1: each workgroup of `forces` takes its particles in the order `schedule.wgsl`
        /// wrote (longest runs first); 0: thread k takes particle k (`GpuOptions::balanced`).
        balanced: u32 => "u32",
        /// 1: the renumbering keys each particle by its body's centre (rigid bodies;
        /// `shaders/body/order.wgsl` MODE 0 writes the cells, `order.wgsl` stage 1 counts them).
        order_by_body: u32 => "u32",
        _pad_order2: u32 => "u32",
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
    /// A mesh wall's static data: its triangle grid in the mesh's t = 0 frame (origin in blocks,
    /// w = blocks per cell edge; cells per axis, w = the mesh's first cell in the concatenated
    /// cell starts), its t = 0 rotation centre c0 and its load point (block + offset), its
    /// material, `MESH_FLAG_*` bits, the grid margin (m: the largest reach) and its f32
    /// contact tolerance (m).
    pub struct MeshGpu {
        grid_origin: [i32; 4] => "vec4<i32>",
        grid_dims: [u32; 4] => "vec4<u32>",
        center_block: [i32; 4] => "vec4<i32>",
        center_offset: [f32; 4] => "vec4<f32>",
        load_block: [i32; 4] => "vec4<i32>",
        load_offset: [f32; 4] => "vec4<f32>",
        material: u32 => "u32",
        flags: u32 => "u32",
        margin: f32 => "f32",
        tolerance: f32 => "f32",
    }
}

gpu_struct! {
    /// A mesh wall at one time: the columns of its rotation R(t) since t = 0 (f32, for
    /// directions), its rotation centre c(t) (block + offset), translation velocity and angular
    /// velocity, and the rows of Rᵀ split as `hi`·2⁻¹² + `mid`·2⁻²⁴ + `lo` (integers `hi`,
    /// `mid`; f32 remainder `lo`) for the exact rotation of block vectors
    /// (`rotate_blocks` in shaders/mesh/data.wgsl, `gpu::meshes::split_entry`).
    pub struct MeshPoseGpu {
        rot_x: [f32; 4] => "vec4<f32>",
        rot_y: [f32; 4] => "vec4<f32>",
        rot_z: [f32; 4] => "vec4<f32>",
        center_block: [i32; 4] => "vec4<i32>",
        center_offset: [f32; 4] => "vec4<f32>",
        velocity: [f32; 4] => "vec4<f32>",
        omega: [f32; 4] => "vec4<f32>",
        inv_hi_x: [i32; 4] => "vec4<i32>",
        inv_hi_y: [i32; 4] => "vec4<i32>",
        inv_hi_z: [i32; 4] => "vec4<i32>",
        inv_mid_x: [i32; 4] => "vec4<i32>",
        inv_mid_y: [i32; 4] => "vec4<i32>",
        inv_mid_z: [i32; 4] => "vec4<i32>",
        inv_lo_x: [f32; 4] => "vec4<f32>",
        inv_lo_y: [f32; 4] => "vec4<f32>",
        inv_lo_z: [f32; 4] => "vec4<f32>",
    }
}

gpu_struct! {
    /// One mesh triangle in its mesh's t = 0 frame: vertex 0 as block + offset (like wall
    /// points, so an axis-aligned floor gives the plane's distance arithmetic bit for bit), the
    /// edges to vertices 1 and 2, the unit normal, the mesh index and the global facet group.
    pub struct MeshTriangleGpu {
        v0_block: [i32; 4] => "vec4<i32>",
        v0_offset: [f32; 4] => "vec4<f32>",
        edge1: [f32; 4] => "vec4<f32>",
        edge2: [f32; 4] => "vec4<f32>",
        normal: [f32; 4] => "vec4<f32>",
        mesh: u32 => "u32",
        group: u32 => "u32",
        _pad0: u32 => "u32",
        _pad1: u32 => "u32",
    }
}

gpu_struct! {
    /// Uniform of the triangle-binning passes (`shaders/mesh/bin.wgsl`).
    pub struct MeshBinParams {
        n_triangles: u32 => "u32",
        /// Cells of all meshes together.
        n_cells: u32 => "u32",
        /// BLOCK, m.
        block: f32 => "f32",
        _pad: u32 => "u32",
    }
}

gpu_struct! {
    /// A contact's history as the GPU stores it: `HistoryGpu` without its padding and without
    /// `established`, which a stored record always is (the models' `HistoryGpu` of a contact
    /// with no record is all zeros). 36 bytes of data, four `vec2`s and a scalar, 8-byte
    /// aligned: 40 bytes apart in an array, moved in five accesses. A record of nine scalars
    /// at a 36-byte stride is only 4-byte aligned, and NVIDIA's compiler then moves it in nine
    /// 4-byte accesses, each a cache line of its own across a warp whose threads read slots
    /// apart (docs/performance.md, "Records moved in 8-byte words"). The last 4 bytes are
    /// padding, which no shader reads or writes. The wall tables, imports and exports hold
    /// this record; the list slots' two tables store only the fields the set-up's laws read
    /// (`split::RecordLayout`, as `SlotRecord`), and their accessors convert.
    pub struct HistoryRecord {
        /// The elastic shear displacement, x and y.
        shear_xy: [f32; 2] => "vec2<f32>",
        /// The shear displacement's z, and |F_n| of the last step.
        shear_z_normal: [f32; 2] => "vec2<f32>",
        /// The impact velocity and the shear compliance.
        impact_compliance: [f32; 2] => "vec2<f32>",
        /// The dashpot force, x and y.
        dashpot_xy: [f32; 2] => "vec2<f32>",
        /// The dashpot force's z.
        dashpot_z: f32 => "f32";
        host _pad: f32
    }
}

/// The bytes of a `HistoryRecord` that the shaders move (36: all but its padding), which the
/// traffic model counts; the record takes `size_of::<HistoryRecord>()` (40) in memory.
pub const RECORD_DATA_BYTES: u64 = std::mem::offset_of!(HistoryRecord, _pad) as u64;

/// `HistoryRecord`'s |F_n| (`shear_z_normal[1]`) of a bonded contact whose surfaces are apart
/// (`History::established` = `BONDED_APART`): no model stores a negative |F_n|, so the record
/// needs no `established` field (shaders/history_record.wgsl maps it the same way).
pub const BONDED_APART_RECORD: f32 = -1.0;

impl From<&History> for HistoryRecord {
    fn from(h: &History) -> Self {
        if h.established == crate::contact::adhesion::BONDED_APART {
            return HistoryRecord { shear_z_normal: [0.0, BONDED_APART_RECORD], ..Default::default() };
        }
        HistoryRecord {
            shear_xy: [h.shear.x as f32, h.shear.y as f32],
            shear_z_normal: [h.shear.z as f32, h.normal_force as f32],
            impact_compliance: [h.impact_velocity as f32, h.shear_compliance as f32],
            dashpot_xy: [h.dashpot[0], h.dashpot[1]],
            dashpot_z: h.dashpot[2],
            _pad: 0.0,
        }
    }
}

impl From<&HistoryRecord> for History {
    fn from(r: &HistoryRecord) -> Self {
        if r.shear_z_normal[1] < 0.0 {
            return History { established: crate::contact::adhesion::BONDED_APART, ..History::NEW };
        }
        History {
            shear: glam::DVec3::new(r.shear_xy[0] as f64, r.shear_xy[1] as f64, r.shear_z_normal[0] as f64),
            normal_force: r.shear_z_normal[1] as f64,
            impact_velocity: r.impact_compliance[0] as f64,
            established: 1.0,
            shear_compliance: r.impact_compliance[1] as f64,
            dashpot: [r.dashpot_xy[0], r.dashpot_xy[1], r.dashpot_z],
        }
    }
}

gpu_struct! {
    /// The partner's share of an active pair contact (24 bytes): force and torque on it, in
    /// three `vec2`s (moved in three 8-byte accesses, as `HistoryRecord`).
    pub struct PairShare {
        /// The force, x and y.
        force_xy: [f32; 2] => "vec2<f32>",
        /// The force's z and the torque's x.
        force_z_torque_x: [f32; 2] => "vec2<f32>",
        /// The torque, y and z.
        torque_yz: [f32; 2] => "vec2<f32>",
    }
}

gpu_struct! {
    /// Wall-contact history table slot as written (tag claimed by CAS). Occupied in step s iff
    /// tag == epoch.
    pub struct HashSlot {
        key_a: u32 => "u32",
        key_b: u32 => "u32",
        tag: u32 => "atomic<u32>",
        /// (`HistoryRecord` is 8-byte aligned)
        _pad: u32 => "u32",
        history: HistoryRecord => "HistoryRecord",
    }
}

gpu_struct! {
    /// Read-only view of `HashSlot`.
    pub struct HashSlotRead {
        key_a: u32 => "u32",
        key_b: u32 => "u32",
        tag: u32 => "u32",
        _pad: u32 => "u32",
        history: HistoryRecord => "HistoryRecord",
    }
}

gpu_struct! {
    /// A ball-pair contact record handed to the device by a state import (`slot_import.wgsl`).
    pub struct PairRecord {
        owner: u32 => "u32",
        partner: u32 => "u32",
        history: HistoryRecord => "HistoryRecord",
    }
}

gpu_struct! {
    /// Parameters of the exchange passes (`gpu::flow`, `shaders/exchange/`): the particle count
    /// before the exchange, the survivors, the removed ids (sorted, in `removed`), the query
    /// boxes (`ExchangeBox`), the epoch of the wall-contact entries the next step reads, and
    /// the particles found by `exchange_near` (or the bodies listed for `exchange_body_gather`);
    /// with rigid bodies, the bodies before the exchange and the removed ones (sorted, in
    /// `removed_bodies`).
    pub struct ExchangeParams {
        n_old: u32 => "u32",
        n_kept: u32 => "u32",
        n_removed: u32 => "u32",
        n_boxes: u32 => "u32",
        epoch: u32 => "u32",
        n_found: u32 => "u32",
        n_old_bodies: u32 => "u32",
        n_removed_bodies: u32 => "u32",
    }
}

gpu_struct! {
    /// A box of blocks for `exchange_near` (inclusive bounds; lo.w = 0: the particles whose
    /// block is in it, 1: those whose block is not).
    pub struct ExchangeBox {
        lo: [i32; 4] => "vec4<i32>",
        hi: [i32; 4] => "vec4<i32>",
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
        /// With OVERFLOW_MESH_GROUPS: 1 + the highest mesh index that overflowed.
        mesh_overflow: u32 => "atomic<u32>",
        /// With OVERFLOW_MESH_GROUPS: 1 + the highest particle index that overflowed.
        mesh_overflow_particle: u32 => "atomic<u32>",
        /// Non-zero: the neighbour list is rebuilt in this step (set by `list_plan` when
        /// `travelled` exceeds skin/2, or by the host; cleared by `advance`).
        rebuild: u32 => "atomic<u32>",
        /// With OVERFLOW_LIST: the list slots the overflowing build needed.
        list_needed: u32 => "atomic<u32>",
        /// Neighbour-list builds since the start (counted by `list_plan` where it plans one).
        rebuilds: u32 => "u32",
        /// With BLOWUP: !(lowest flagged particle index) (atomicMax; 0 = none).
        blowup_particle: u32 => "atomic<u32>",
        /// With BLOWUP: `BLOWUP_*` bits of the quantities that went wrong.
        blowup_what: u32 => "atomic<u32>",
        /// The longest step |v|Δt any particle made in this step (f32 bits; `drift`).
        max_step: u32 => "atomic<u32>",
        /// Sum of `max_step` over the steps since the last list build (f32 bits; `list_plan`):
        /// a bound on every particle's displacement since that build.
        travelled: u32 => "u32",
        /// `max_step` of the step that rebuilds (f32 bits; `list_plan`): the list takes pairs up
        /// to twice that beyond contact distance, so that a contact that ended in this step is
        /// still listed and books its end (`ended_contact_work`) whatever the skin.
        list_margin: u32 => "u32",
        /// step + 1 where this step renumbered the particles (`order.wgsl`): a step redone after
        /// an overflow does not renumber again.
        renumbered: u32 => "u32",
        /// step + 1 where this step must not renumber (an initial force evaluation, or a
        /// wall-contact record that found no slot under its new key: `order_hash`).
        renumber_skip: u32 => "atomic<u32>",
        /// step + 1 while the list's runs are still laid out by the storage indices before
        /// this step's renumbering (`list_fill` finds an owner's old run through `tag`'s second
        /// half; `incoming_sort` lays out the new list and clears it).
        old_runs: u32 => "u32",
        /// The force pass's cost by SIMD groups of `SCHEDULE_LANES` threads, summed over the
        /// workgroups at the last list build (`schedule.wgsl`; zeroed by `list_plan` where it
        /// plans a build): the longest run of each group with the particles in storage order,
        /// and in the schedule's. `forces` takes the schedule only where it is below
        /// `SCHEDULE_GAIN` of the other.
        schedule_plain: u32 => "atomic<u32>",
        schedule_sorted: u32 => "atomic<u32>",
        _pad3: u32 => "u32",
    }
}

gpu_struct! {
    /// Read-only view of `StepState`.
    pub struct StepStateRead {
        step: u32 => "u32",
        flags: u32 => "u32",
        inserted: u32 => "u32",
        halt: u32 => "u32",
        mesh_overflow: u32 => "u32",
        mesh_overflow_particle: u32 => "u32",
        rebuild: u32 => "u32",
        list_needed: u32 => "u32",
        rebuilds: u32 => "u32",
        blowup_particle: u32 => "u32",
        blowup_what: u32 => "u32",
        max_step: u32 => "u32",
        travelled: u32 => "u32",
        list_margin: u32 => "u32",
        renumbered: u32 => "u32",
        renumber_skip: u32 => "u32",
        old_runs: u32 => "u32",
        schedule_plain: u32 => "u32",
        schedule_sorted: u32 => "u32",
        _pad3: u32 => "u32",
    }
}

/// Bytes of the step state (copied for backups and read back after every batch).
pub const STEP_STATE_BYTES: u64 = std::mem::size_of::<StepState>() as u64;

gpu_struct! {
    /// Uniform of the rigid-body passes (`gpu::bodies`, shaders/body/kick.wgsl and
    /// shaders/body/place.wgsl).
    pub struct BodyParams {
        n_bodies: u32 => "u32",
        _pad0: u32 => "u32",
        _pad1: u32 => "u32",
        _pad2: u32 => "u32",
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
    layouts!(PairParamsGpu, HistoryGpu, SimParams, WallGpu, MeshGpu, MeshPoseGpu, MeshTriangleGpu, MeshBinParams, HistoryRecord, PairShare, HashSlot, HashSlotRead, PairRecord, ExchangeParams, ExchangeBox, StepState, StepStateRead, BodyParams, ScanParams, EnergyPartial)
}

/// The structs stored in the packed `mesh_data` buffer (read back by the accessors of
/// `shaders/mesh/data.wgsl` word by word): name and size in 16-byte words. Their fields are
/// vec4s at 16-byte steps, then at most one word of four 4-byte scalars
/// (`tests/gpu_shaders.rs` checks this).
pub fn packed_structs() -> Vec<(&'static str, u32)> {
    let words = |bytes: usize| (bytes / 16) as u32;
    vec![
        ("MeshGpu", words(std::mem::size_of::<MeshGpu>())),
        ("MeshPoseGpu", words(std::mem::size_of::<MeshPoseGpu>())),
        ("MeshTriangleGpu", words(std::mem::size_of::<MeshTriangleGpu>())),
    ]
}

/// WGSL constants of the packed structs' sizes: `MESH_GPU_WORDS`, `MESH_POSE_GPU_WORDS`,
/// `MESH_TRIANGLE_GPU_WORDS`.
pub fn packed_word_constants() -> String {
    packed_structs().iter().map(|(name, words)| format!("const {}_WORDS: u32 = {words}u;\n", upper_snake(name))).collect()
}

/// `MeshPoseGpu` → `MESH_POSE_GPU`.
fn upper_snake(name: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = name.chars().collect();
    for (k, &c) in chars.iter().enumerate() {
        let boundary = k > 0 && c.is_uppercase() && (chars[k - 1].is_lowercase() || chars.get(k + 1).is_some_and(|n| n.is_lowercase()));
        if boundary {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

/// Per-ball floor of the GPU tolerance, relative to the ball's reach (see the module doc).
pub const MESH_TOLERANCE_PER_REACH: f32 = 1e-3;

/// Largest block count per axis between a ball and a moving mesh's rotation centre that
/// `rotate_blocks` takes (2²⁴: 256 m at the usual block of 2⁻¹⁶ m). Farther balls cannot
/// touch the mesh (`moving_extent_blocks` is checked below it at start).
pub const ROTATE_MAX_BLOCKS: i64 = 1 << 24;
