//! Rust owns every struct and constant that WGSL also sees.
//!
//! `gpu_struct!` declares a `#[repr(C)]` Pod struct and, from the same token list, the text of
//! the matching WGSL struct (`Type::WGSL`). `wgsl_prelude()` concatenates those texts and the
//! shared constants; the shader composer prepends it to every shader, so no literal or layout
//! is written twice. `tests/shader_validation.rs` checks with naga that every WGSL struct has
//! exactly the size and field offsets of its Rust twin.

/// Declare a GPU-shared struct: Rust definition plus WGSL text.
/// Every field is written `name: RustType => "wgsl type"`.
#[macro_export]
macro_rules! gpu_struct {
    ($(#[$m:meta])* pub struct $name:ident { $($(#[$fm:meta])* $field:ident : $rty:ty => $wty:literal),* $(,)? }) => {
        $(#[$m])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
        pub struct $name { $($(#[$fm])* pub $field: $rty),* }
        impl $name {
            /// WGSL declaration of this struct.
            pub const WGSL: &'static str = concat!(
                "struct ", stringify!($name), " {\n",
                $("    ", stringify!($field), ": ", $wty, ",\n",)*
                "}\n");
            /// Field names in declaration order with their byte offsets (for layout checks).
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

/// Constants shared by Rust and WGSL.
pub mod consts {
    /// Set in a wall's key slot: keys `(i, WALL_KEY_BIT | w)` are ball–wall contacts.
    pub const WALL_KEY_BIT: u32 = 0x8000_0000;
    /// Empty hash-table key.
    pub const EMPTY_KEY: u32 = 0xFFFF_FFFF;
    /// Workgroup size of all 1-D compute passes.
    pub const WORKGROUP_SIZE: u32 = 64;
    /// Overflow flag bits (see `gpu::capacity`).
    pub const OVERFLOW_HASH: u32 = 1;
    /// Kahan pairs (sum, compensation) per particle in the GPU `dissipation` buffer: slip,
    /// dashpot, shear-stiffness and wall work of the contacts the particle owns.
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
    /// `PairParamsGpu::flags` bits.
    pub const PAIR_FLAG_USE_CHARACTERISTIC_VELOCITY: u32 = 1;
    pub const PAIR_FLAG_TANGENTIAL_DAMPING: u32 = 2;
    pub const PAIR_FLAG_KT_TO_KN_USER: u32 = 4;
    pub const PAIR_FLAG_LIMIT_FORCE: u32 = 8;
    pub const PAIR_FLAG_VISCOUS: u32 = 16;
    pub const PAIR_FLAG_NO_ATTRACTION: u32 = 32;
}

/// All constants as WGSL text.
pub fn wgsl_constants() -> String {
    use consts::*;
    [
        u32_const("WALL_KEY_BIT", WALL_KEY_BIT),
        u32_const("EMPTY_KEY", EMPTY_KEY),
        u32_const("WORKGROUP_SIZE", WORKGROUP_SIZE),
        u32_const("OVERFLOW_HASH", OVERFLOW_HASH),
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
        u32_const("PAIR_FLAG_USE_CHARACTERISTIC_VELOCITY", PAIR_FLAG_USE_CHARACTERISTIC_VELOCITY),
        u32_const("PAIR_FLAG_TANGENTIAL_DAMPING", PAIR_FLAG_TANGENTIAL_DAMPING),
        u32_const("PAIR_FLAG_KT_TO_KN_USER", PAIR_FLAG_KT_TO_KN_USER),
        u32_const("PAIR_FLAG_LIMIT_FORCE", PAIR_FLAG_LIMIT_FORCE),
        u32_const("PAIR_FLAG_VISCOUS", PAIR_FLAG_VISCOUS),
        u32_const("PAIR_FLAG_NO_ATTRACTION", PAIR_FLAG_NO_ATTRACTION),
    ]
    .concat()
}
