//! Rust owns every struct and constant that WGSL also sees.
//!
//! `gpu_struct!` declares a `#[repr(C)]` Pod struct and, from the same token list, the text of
//! the matching WGSL struct (`Type::WGSL`). `wgsl_prelude()` concatenates those texts and the
//! shared constants; the shader composer prepends it to every shader, so no literal or layout
//! is written twice. `tests/shader_validation.rs` checks with naga that every WGSL struct has
//! exactly the size and field offsets of its Rust twin.

/// Declare a GPU-shared struct: Rust definition plus WGSL text.
/// Every field is written `name: RustType => "wgsl type"`. A last field written
/// `; host name: RustType` (no WGSL type) is Rust's only: it names the WGSL struct's implicit
/// trailing padding (its size rounded up to its alignment), so that the Rust struct has no
/// padding bytes (`bytemuck::Pod`) and the same size; no shader reads or writes it.
#[macro_export]
macro_rules! gpu_struct {
    ($(#[$m:meta])* pub struct $name:ident { $($(#[$fm:meta])* $field:ident : $rty:ty => $wty:literal),* $(,)? $(; $(#[$hm:meta])* host $hfield:ident : $hty:ty)? }) => {
        $(#[$m])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
        pub struct $name { $($(#[$fm])* pub $field: $rty,)* $($(#[$hm])* pub $hfield: $hty)? }
        impl $name {
            /// WGSL declaration of this struct.
            pub const WGSL: &'static str = concat!(
                "struct ", stringify!($name), " {\n",
                $("    ", stringify!($field), ": ", $wty, ",\n",)*
                "}\n");
            /// Field names in declaration order with their byte offsets (for layout checks; a
            /// host-only padding field is not among them).
            pub fn field_offsets() -> Vec<(&'static str, usize)> {
                vec![$((stringify!($field), std::mem::offset_of!($name, $field))),*]
            }
        }
    };
}

/// A `u32` constant as WGSL text.
fn u32_const(name: &str, v: u32) -> String {
    format!("const {name}: u32 = {v}u;\n")
}

/// An `f32` constant as WGSL text (Rust's `{:e}` prints the shortest round-tripping decimal).
fn f32_const(name: &str, v: f32) -> String {
    format!("const {name}: f32 = {v:e};\n")
}

/// Constants shared by Rust and WGSL.
pub mod consts {
    /// Set in a wall's key slot: keys `(i, WALL_KEY_BIT | w)` are ball–wall contacts.
    pub const WALL_KEY_BIT: u32 = 0x8000_0000;
    /// Set with `WALL_KEY_BIT` for mesh walls: keys `(i, WALL_KEY_BIT | MESH_KEY_BIT | g)`, g the
    /// global facet group (the mesh's group plus the group counts of the meshes before it),
    /// so history survives a ball moving between triangles of one facet group. Plane walls and
    /// global groups must both stay below this bit.
    pub const MESH_KEY_BIT: u32 = 0x4000_0000;
    /// Set in the w (material) word of a GPU particle's position block when the particle is a
    /// ghost of a decomposed run (`gpu::decomposed`): another rank owns it. The force pass books
    /// no work for the contacts a ghost owns, and the energy and wall-load reductions skip it.
    pub const GHOST_BIT: u32 = 0x4000_0000;
    /// The material index in that word (`GHOST_BIT` cleared).
    pub const MATERIAL_MASK: u32 = 0x3FFF_FFFF;
    /// Empty hash-table key.
    pub const EMPTY_KEY: u32 = 0xFFFF_FFFF;
    /// Workgroup size of all 1-D compute passes.
    pub const WORKGROUP_SIZE: u32 = 64;
    /// Overflow flag bits (see `gpu::capacity`).
    pub const OVERFLOW_HASH: u32 = 1;
    /// A ball was near more facet groups of one mesh than `MESH_GROUPS_MAX` (GPU only; the
    /// host stops with an error naming the mesh).
    pub const OVERFLOW_MESH_GROUPS: u32 = 2;
    /// The neighbour list being built needs more slots than `SimParams::list_capacity` (the
    /// host grows it and redoes the batch).
    pub const OVERFLOW_LIST: u32 = 4;
    /// A particle's state went wrong (`drift.wgsl`, `kick.wgsl`): the step halts like an
    /// overflow, the host restores the batch-start backup and stops the run (`gpu::blowup`).
    pub const BLOWUP: u32 = 8;
    /// The neighbour list went stale in a step that has no rebuild passes encoded (only every
    /// `REBUILD_STRIDE`-th step has them): `list_plan` plans the rebuild and halts the batch, and
    /// the host resumes it from that step's rebuild passes (`gpu::capacity`), as after an
    /// overflow. Not an error.
    pub const REBUILD_LATE: u32 = 16;
    /// With a skin, at most every this many steps carries the rebuild passes (grid, list: about
    /// 20 indirect dispatches; `SimParams::rebuild_stride`, which the host adapts to the list's
    /// lifetime); the steps between encode none (an empty indirect dispatch still costs a few µs
    /// on a real GPU: 0.1 ms a step at 1M particles on an H200 when every step carried them,
    /// 0.018 ms at a stride of 8). At such a step `list_plan` rebuilds early when the list could
    /// go stale before the next one. Without a skin every step rebuilds, and every step carries
    /// the passes (stride 1).
    pub const REBUILD_STRIDE: u32 = 32;
    /// The stride a run with a skin starts at, before any batch has shown how long its lists
    /// live (a pour starts from rest, where the longest step grows fastest against itself).
    pub const REBUILD_STRIDE_START: u32 = 8;
    /// Steps between renumberings of the particles in cell order on the GPU (`gpu::order`,
    /// `shaders/order.wgsl`; a multiple of `REBUILD_STRIDE`, so the step always carries the
    /// rebuild passes). About 20 passes over the particles, once in 1,024 steps: below 0.1 % of
    /// a step's cost; the CPU renumbers every 16 builds.
    pub const RENUMBER_EVERY: u32 = 1024;
    /// Runs of this many slots or more count as one length in the force pass's schedule
    /// (`shaders/schedule.wgsl`): a longer run is rare, and sorting it further buys nothing.
    pub const SCHEDULE_LONGEST: u32 = 31;
    /// Threads of a SIMD group as the schedule counts them (a warp): a group waits for its
    /// longest run.
    pub const SCHEDULE_LANES: u32 = 32;
    /// The force pass takes the schedule where it cuts the summed longest runs of the SIMD
    /// groups below this fraction (`StepState::schedule_plain`): elsewhere (a lattice
    /// numbered row by row, whose runs are alike) the indirection would cost a dependent load
    /// per thread and gain nothing.
    pub const SCHEDULE_GAIN: f64 = 0.9;
    /// `StepState::blowup_what` bits: which quantity of a flagged particle went wrong.
    pub const BLOWUP_POSITION: u32 = 1;
    pub const BLOWUP_VELOCITY: u32 = 2;
    pub const BLOWUP_FORCE: u32 = 4;
    /// The centre left the domain by more than `SimParams::lost_margin` (lost particle).
    pub const BLOWUP_LOST: u32 = 8;
    /// A contact overlap δ beyond `OVERLAP_MAX_FRACTION` of the smaller radius.
    pub const BLOWUP_OVERLAP: u32 = 16;
    /// Largest contact overlap, as a fraction of the smaller radius of the pair (the ball's
    /// radius for a wall), before a run stops: far beyond any elastic contact the models are
    /// meant for (δ/R of a few per cent), so it catches a too-large time step or a too-soft
    /// material, not a hard impact.
    pub const OVERLAP_MAX_FRACTION: f64 = 0.5;
    /// Set in a GPU list slot's partner word while the slot's contact is active (the last force
    /// evaluation wrote its share), and in the slot's incoming entry likewise.
    pub const SLOT_ACTIVE_BIT: u32 = 0x8000_0000;
    /// Set in a GPU list slot's partner word while the slot's record in slot-history table 0
    /// (`SLOT_HISTORY_BIT1`: table 1) holds the pair's history (the steps reading that table
    /// find it there; a force pass sets or clears only the bit of the table it writes).
    pub const SLOT_HISTORY_BIT0: u32 = 0x4000_0000;
    pub const SLOT_HISTORY_BIT1: u32 = 0x2000_0000;
    /// The partner id in a GPU list slot's partner word (the GPU backend takes at most this
    /// many particles).
    pub const SLOT_PARTNER_MASK: u32 = 0x1FFF_FFFF;
    /// Facet groups of one mesh a GPU thread keeps per ball (`shaders/mesh/contacts.wgsl`).
    pub const MESH_GROUPS_MAX: u32 = 16;
    /// `MeshGpu::flags` bits.
    pub const MESH_FLAG_TWO_SIDED: u32 = 1;
    pub const MESH_FLAG_MOVING: u32 = 2;
    /// Kahan pairs (sum, compensation) per workgroup of the force pass in the GPU
    /// `dissipation` buffer: slip, dashpot, shear-stiffness and wall work of the contacts its
    /// particles own.
    pub const DISSIPATION_PARTS: u32 = 4;
    /// Dashpot modes of spec eqs (13)–(14).
    pub const DP_MODE_FULL: u32 = 0;
    pub const DP_MODE_NO_TENSION: u32 = 1;
    pub const DP_MODE_SLIP_CUT: u32 = 2;
    pub const DP_MODE_BOTH: u32 = 3;
    /// Contact models (`ContactModel` discriminants).
    pub const MODEL_HERTZ: u32 = 0;
    pub const MODEL_HYSTERETIC: u32 = 1;
    pub const MODEL_HOOKE: u32 = 2;
    pub const MODEL_HERTZ_MINDLIN: u32 = 3;
    pub const MODEL_HERTZ_VISCOUS: u32 = 4;
    /// The force pass's `CONTACT_MODEL` override where a scene's pairs have more than one
    /// model (`gpu::pipelines::ContactVariant`).
    pub const ANY_CONTACT_MODEL: u32 = u32::MAX;
    /// `PairParamsGpu::flags` bits.
    pub const ADHESION_NONE: u32 = 0;
    pub const ADHESION_JKR: u32 = 1;
    pub const ADHESION_DMT: u32 = 2;
    pub const ADHESION_SJKR: u32 = 3;
    pub const ADHESION_SJKR2: u32 = 4;
    pub const ADHESION_CAPILLARY: u32 = 5;
    /// The force pass's `ADHESION_MODEL` override where a scene's pairs have more than one
    /// adhesion model (`gpu::pipelines::ContactVariant`).
    pub const ANY_ADHESION_MODEL: u32 = u32::MAX;
    pub const PAIR_FLAG_USE_CHARACTERISTIC_VELOCITY: u32 = 1;
    pub const PAIR_FLAG_TANGENTIAL_DAMPING: u32 = 2;
    pub const PAIR_FLAG_KT_TO_KN_USER: u32 = 4;
    pub const PAIR_FLAG_LIMIT_FORCE: u32 = 8;
    pub const PAIR_FLAG_VISCOUS: u32 = 16;
    pub const PAIR_FLAG_NO_ATTRACTION: u32 = 32;
    pub const PAIR_FLAG_LIMIT_DAMPING: u32 = 64;
    pub const PAIR_FLAG_NO_ENERGY_TRACKING: u32 = 128;
    /// vec4 rows per particle in the GPU `motion` buffer of a scene that books rolling work
    /// (`SimParams::rolling_booked`): velocity (w = 1/m), angular velocity (w = 1/I), and the
    /// angular velocity of the previous force pass (w unused). Host copies of the motion rows
    /// (the exact state of checkpoints and rank hand-overs) always have these three.
    pub const MOTION_ROWS: u32 = 3;
    /// vec4 rows per particle in the GPU `motion` buffer of any other scene: velocity and
    /// angular velocity, 16 B a particle less (`SplitLayout::motion_rows`; the shaders see the
    /// rows of their set-up as the WGSL constant `MOTION_ROWS`, `split::split_wgsl`).
    pub const MOTION_ROWS_DRY: u32 = 2;
    /// u32 words per ghost row of a decomposed GPU run (`shaders/ranks/pack.wgsl`): the xyz of
    /// the position block, the offset and up to `MOTION_ROWS` motion rows (60 B).
    pub const GHOST_WORDS: u32 = 3 * (2 + MOTION_ROWS);
    /// vec4<f32> rows per rigid body in the GPU `body_state` buffer (`gpu::bodies`), at these
    /// row indices: the centre's offset in its block (w unused), the orientation q as
    /// (x, y, z, w), the velocity (w = 1/M), the space-frame angular momentum L (w unused), the
    /// principal moments (w unused), the total force and the total torque about the centre of
    /// the last force pass (gravity excluded; w unused).
    pub const BODY_ROWS: u32 = 7;
    pub const BODY_ROW_OFFSET: u32 = 0;
    pub const BODY_ROW_Q: u32 = 1;
    pub const BODY_ROW_VELOCITY: u32 = 2;
    pub const BODY_ROW_MOMENTUM: u32 = 3;
    pub const BODY_ROW_MOMENTS: u32 = 4;
    pub const BODY_ROW_FORCE: u32 = 5;
    pub const BODY_ROW_TORQUE: u32 = 6;
    /// vec4<i32> rows per rigid body in the GPU `body_int` buffer: the centre's block
    /// (w = first component's particle id), the periodic image (w = number of components).
    pub const BODY_INT_ROWS: u32 = 2;
}

/// All constants as WGSL text.
pub fn wgsl_constants() -> String {
    use consts::*;
    [
        u32_const("WALL_KEY_BIT", WALL_KEY_BIT),
        u32_const("EMPTY_KEY", EMPTY_KEY),
        u32_const("GHOST_BIT", GHOST_BIT),
        u32_const("GHOST_WORDS", GHOST_WORDS),
        u32_const("MATERIAL_MASK", MATERIAL_MASK),
        u32_const("WORKGROUP_SIZE", WORKGROUP_SIZE),
        u32_const("SCHEDULE_LONGEST", SCHEDULE_LONGEST),
        u32_const("SCHEDULE_LANES", SCHEDULE_LANES),
        u32_const("OVERFLOW_HASH", OVERFLOW_HASH),
        u32_const("MESH_KEY_BIT", MESH_KEY_BIT),
        u32_const("OVERFLOW_MESH_GROUPS", OVERFLOW_MESH_GROUPS),
        u32_const("OVERFLOW_LIST", OVERFLOW_LIST),
        u32_const("SLOT_ACTIVE_BIT", SLOT_ACTIVE_BIT),
        u32_const("SLOT_HISTORY_BIT0", SLOT_HISTORY_BIT0),
        u32_const("SLOT_HISTORY_BIT1", SLOT_HISTORY_BIT1),
        u32_const("SLOT_PARTNER_MASK", SLOT_PARTNER_MASK),
        u32_const("MESH_GROUPS_MAX", MESH_GROUPS_MAX),
        u32_const("BLOWUP", BLOWUP),
        u32_const("REBUILD_LATE", REBUILD_LATE),
        u32_const("BLOWUP_POSITION", BLOWUP_POSITION),
        u32_const("BLOWUP_VELOCITY", BLOWUP_VELOCITY),
        u32_const("BLOWUP_FORCE", BLOWUP_FORCE),
        u32_const("BLOWUP_LOST", BLOWUP_LOST),
        u32_const("BLOWUP_OVERLAP", BLOWUP_OVERLAP),
        f32_const("OVERLAP_MAX_FRACTION", OVERLAP_MAX_FRACTION as f32),
        f32_const("SCHEDULE_GAIN", SCHEDULE_GAIN as f32),
        u32_const("MESH_FLAG_TWO_SIDED", MESH_FLAG_TWO_SIDED),
        u32_const("MESH_FLAG_MOVING", MESH_FLAG_MOVING),
        f32_const("MESH_REACH_SLACK", crate::mesh::contacts::MESH_REACH_SLACK as f32),
        u32_const("DISSIPATION_PARTS", DISSIPATION_PARTS),
        u32_const("DP_MODE_FULL", DP_MODE_FULL),
        u32_const("DP_MODE_NO_TENSION", DP_MODE_NO_TENSION),
        u32_const("DP_MODE_SLIP_CUT", DP_MODE_SLIP_CUT),
        u32_const("DP_MODE_BOTH", DP_MODE_BOTH),
        u32_const("MODEL_HERTZ", MODEL_HERTZ),
        u32_const("MODEL_HYSTERETIC", MODEL_HYSTERETIC),
        u32_const("MODEL_HOOKE", MODEL_HOOKE),
        u32_const("MODEL_HERTZ_MINDLIN", MODEL_HERTZ_MINDLIN),
        u32_const("MODEL_HERTZ_VISCOUS", MODEL_HERTZ_VISCOUS),
        u32_const("ANY_CONTACT_MODEL", ANY_CONTACT_MODEL),
        u32_const("ADHESION_NONE", ADHESION_NONE),
        u32_const("ADHESION_JKR", ADHESION_JKR),
        u32_const("ADHESION_DMT", ADHESION_DMT),
        u32_const("ADHESION_SJKR", ADHESION_SJKR),
        u32_const("ADHESION_SJKR2", ADHESION_SJKR2),
        u32_const("ADHESION_CAPILLARY", ADHESION_CAPILLARY),
        u32_const("ANY_ADHESION_MODEL", ANY_ADHESION_MODEL),
        u32_const("PAIR_FLAG_USE_CHARACTERISTIC_VELOCITY", PAIR_FLAG_USE_CHARACTERISTIC_VELOCITY),
        u32_const("PAIR_FLAG_TANGENTIAL_DAMPING", PAIR_FLAG_TANGENTIAL_DAMPING),
        u32_const("PAIR_FLAG_KT_TO_KN_USER", PAIR_FLAG_KT_TO_KN_USER),
        u32_const("PAIR_FLAG_LIMIT_FORCE", PAIR_FLAG_LIMIT_FORCE),
        u32_const("PAIR_FLAG_VISCOUS", PAIR_FLAG_VISCOUS),
        u32_const("PAIR_FLAG_NO_ATTRACTION", PAIR_FLAG_NO_ATTRACTION),
        u32_const("PAIR_FLAG_LIMIT_DAMPING", PAIR_FLAG_LIMIT_DAMPING),
        u32_const("PAIR_FLAG_NO_ENERGY_TRACKING", PAIR_FLAG_NO_ENERGY_TRACKING),
        u32_const("BODY_ROWS", BODY_ROWS),
        u32_const("BODY_ROW_OFFSET", BODY_ROW_OFFSET),
        u32_const("BODY_ROW_Q", BODY_ROW_Q),
        u32_const("BODY_ROW_VELOCITY", BODY_ROW_VELOCITY),
        u32_const("BODY_ROW_MOMENTUM", BODY_ROW_MOMENTUM),
        u32_const("BODY_ROW_MOMENTS", BODY_ROW_MOMENTS),
        u32_const("BODY_ROW_FORCE", BODY_ROW_FORCE),
        u32_const("BODY_ROW_TORQUE", BODY_ROW_TORQUE),
        u32_const("BODY_INT_ROWS", BODY_INT_ROWS),
    ]
    .concat()
}
