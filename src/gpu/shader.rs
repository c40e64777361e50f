//! Shader composition: shared constants + every `gpu_struct` + the contact model files +
//! the pass shader. One composed module per pass.

use super::layout::{packed_word_constants, struct_layouts, MESH_TOLERANCE_PER_REACH, ROTATE_MAX_BLOCKS};
use super::split::{split_wgsl, Split, SplitLayout};

/// The contact model files (written as twins of `src/contact`), in composition order.
pub fn contact_sources() -> &'static [(&'static str, &'static str)] {
    &[
        ("geometry.wgsl", include_str!("../../shaders/contact/geometry.wgsl")),
        ("normal.wgsl", include_str!("../../shaders/contact/normal.wgsl")),
        ("tangential.wgsl", include_str!("../../shaders/contact/tangential.wgsl")),
        ("damping.wgsl", include_str!("../../shaders/contact/damping.wgsl")),
        ("energy.wgsl", include_str!("../../shaders/contact/energy.wgsl")),
        ("hertz.wgsl", include_str!("../../shaders/contact/hertz.wgsl")),
        ("damping_hysteretic.wgsl", include_str!("../../shaders/contact/damping_hysteretic.wgsl")),
        ("hysteretic.wgsl", include_str!("../../shaders/contact/hysteretic.wgsl")),
        ("normal_hooke.wgsl", include_str!("../../shaders/contact/normal_hooke.wgsl")),
        ("tangential_linear.wgsl", include_str!("../../shaders/contact/tangential_linear.wgsl")),
        ("hooke.wgsl", include_str!("../../shaders/contact/hooke.wgsl")),
        ("rolling.wgsl", include_str!("../../shaders/contact/rolling.wgsl")),
        ("normal_mindlin.wgsl", include_str!("../../shaders/contact/normal_mindlin.wgsl")),
        ("tangential_mindlin.wgsl", include_str!("../../shaders/contact/tangential_mindlin.wgsl")),
        ("normal_viscous.wgsl", include_str!("../../shaders/contact/normal_viscous.wgsl")),
        ("hertz_mindlin.wgsl", include_str!("../../shaders/contact/hertz_mindlin.wgsl")),
        ("hertz_viscous.wgsl", include_str!("../../shaders/contact/hertz_viscous.wgsl")),
        ("adhesion.wgsl", include_str!("../../shaders/contact/adhesion.wgsl")),
        ("hertz_mindlin_adhesive.wgsl", include_str!("../../shaders/contact/hertz_mindlin_adhesive.wgsl")),
        ("model.wgsl", include_str!("../../shaders/contact/model.wgsl")),
        ("adhesive.wgsl", include_str!("../../shaders/contact/adhesive.wgsl")),
    ]
}

/// Old and new ids across an exchange (`gpu::flow`), for the `exchange_*` passes.
pub const EXCHANGE_IDS: &str = include_str!("../../shaders/exchange/ids.wgsl");

/// Pure helper functions every pass may use.
pub const COMMON: &str = include_str!("../../shaders/common.wgsl");
/// Conversions between the stored `HistoryRecord` and the models' `HistoryGpu` (pure).
pub const HISTORY_RECORD: &str = include_str!("../../shaders/history_record.wgsl");
/// Wall-contact history insertion (needs `sim`, `wall_hash`, `state` bindings).
pub const HASH_INSERT: &str = include_str!("../../shaders/hash_insert.wgsl");
/// Minimum-image pair separation in block + offset arithmetic (needs `sim`).
pub const PAIR_SEPARATION: &str = include_str!("../../shaders/pair_separation.wgsl");
/// A particle's total force from its own sum and its incoming pair shares (needs `force`,
/// `incoming_start`, `incoming`, `shares`).
pub const INCOMING_SUM: &str = include_str!("../../shaders/incoming_sum.wgsl");
/// The per-workgroup work folded into its Kahan pairs (needs `work_step`, `dissipation`).
pub const WORK_FOLD: &str = include_str!("../../shaders/work_fold.wgsl");
/// Block + offset positions: `normalize_offset`, `place_periodic`, `lost_flag` (needs `sim`), for
/// `drift` and the body passes.
pub const BLOCK_OFFSET: &str = include_str!("../../shaders/block_offset.wgsl");
/// Wall-contact history lookup (needs `sim`, `wall_hash`, `state` bindings).
pub const HASH_LOOKUP: &str = include_str!("../../shaders/hash_lookup.wgsl");
/// Whether a step renumbers (`order.wgsl`, `body/order.wgsl`).
const ORDER_DUE: &str = include_str!("../../shaders/order_due.wgsl");
/// The force pass's schedule order within a workgroup (`schedule` and `list_fill`).
const SCHEDULE_RANK: &str = include_str!("../../shaders/schedule_rank.wgsl");

/// The ball–wall contact shared by `forces` and `wall_loads` (needs `sim`, `pairs`, `walls`,
/// `mesh_data`, `wall_hash`, `state`).
pub const WALL_CONTACT: &str = include_str!("../../shaders/wall_contact.wgsl");
/// Closest point on a triangle (twin of `src/mesh/closest.rs`; pure).
pub const MESH_CLOSEST: &str = include_str!("../../shaders/mesh/closest.wgsl");
/// Ball–mesh contact selection (twin of `src/mesh/contacts.rs`; needs `MESH_DATA`).
pub const MESH_CONTACTS: &str = include_str!("../../shaders/mesh/contacts.wgsl");
/// Accessors of the packed `mesh_data` buffer and the ball's view of a mesh (needs `sim`,
/// `mesh_data`).
pub const MESH_DATA: &str = include_str!("../../shaders/mesh/data.wgsl");

/// The rigid-body rotation integrator (twin of `src/rigid/integrate.rs`; pure), composed into
/// the body passes.
pub const RIGID_INTEGRATE: &str = include_str!("../../shaders/rigid/integrate.wgsl");
/// Rigid-body helpers of the body passes: the blow-up flag (needs `sim` and `state`, and
/// `RIGID_INTEGRATE` and `BLOCK_OFFSET` before it).
pub const RIGID: &str = include_str!("../../shaders/body/rigid.wgsl");
/// `same_body` of `list_build` in a scene without rigid bodies: no pair is excluded (a constant
/// the compiler folds away, no binding).
pub const NO_BODIES: &str = "fn same_body(i: u32, j: u32) -> bool { return false; }\n";
/// `same_body` of `list_build_bodies`: the pairs of one rigid body are not listed (the body of
/// each particle in the w of `body_comp`, `gpu::bodies`).
pub const BODY_EXCLUSION: &str = "@group(0) @binding(10) var<storage, read> body_comp: array<vec4<u32>>;\nfn same_body(i: u32, j: u32) -> bool { return body_comp[i].w == body_comp[j].w; }\n";

/// Everything the ball–wall contact needs: history records, hash lookup, the mesh files,
/// `wall_contact.wgsl`.
fn wall_contact_sources() -> String {
    format!("{HISTORY_RECORD}\n{HASH_LOOKUP}\n{MESH_CLOSEST}\n{MESH_DATA}\n{MESH_CONTACTS}\n{WALL_CONTACT}")
}

/// The pass shaders, by name (what `GpuBackend` compiles).
pub fn pass_sources() -> Vec<(&'static str, String)> {
    vec![
        ("drift", format!("{INCOMING_SUM}\n{WORK_FOLD}\n{BLOCK_OFFSET}\n{}", include_str!("../../shaders/drift.wgsl"))),
        ("kick", format!("{INCOMING_SUM}\n{WORK_FOLD}\n{}", include_str!("../../shaders/kick.wgsl"))),
        ("advance", include_str!("../../shaders/advance.wgsl").to_string()),
        ("grid_count", include_str!("../../shaders/grid_count.wgsl").to_string()),
        ("scan", include_str!("../../shaders/scan.wgsl").to_string()),
        ("grid_scatter", include_str!("../../shaders/grid_scatter.wgsl").to_string()),
        ("grid_sort", include_str!("../../shaders/grid_sort.wgsl").to_string()),
        ("list_plan", include_str!("../../shaders/list_plan.wgsl").to_string()),
        ("list_clear", include_str!("../../shaders/list_clear.wgsl").to_string()),
        ("list_build", format!("{PAIR_SEPARATION}\n{NO_BODIES}\n{SCHEDULE_RANK}\n{}", include_str!("../../shaders/list_build.wgsl"))),
        ("list_build_bodies", format!("{PAIR_SEPARATION}\n{BODY_EXCLUSION}\n{SCHEDULE_RANK}\n{}", include_str!("../../shaders/list_build.wgsl"))),
        ("body_kick", format!("{INCOMING_SUM}\n{RIGID_INTEGRATE}\n{BLOCK_OFFSET}\n{RIGID}\n{}", include_str!("../../shaders/body/kick.wgsl"))),
        ("body_place", format!("{RIGID_INTEGRATE}\n{BLOCK_OFFSET}\n{RIGID}\n{WORK_FOLD}\n{}", include_str!("../../shaders/body/place.wgsl"))),
        ("list_stash", include_str!("../../shaders/list_stash.wgsl").to_string()),
        ("incoming", include_str!("../../shaders/incoming.wgsl").to_string()),
        ("slot_import", include_str!("../../shaders/slot_import.wgsl").to_string()),
        ("forces", format!("{HASH_INSERT}\n{}\n{PAIR_SEPARATION}\n{}", wall_contact_sources(), include_str!("../../shaders/forces.wgsl"))),
        ("gather", format!("{INCOMING_SUM}\n{}", include_str!("../../shaders/gather.wgsl"))),
        ("wall_loads", format!("{}\n{}", wall_contact_sources(), include_str!("../../shaders/wall_loads.wgsl"))),
        ("mesh_bin", include_str!("../../shaders/mesh/bin.wgsl").to_string()),
        ("mesh_marks", format!("{MESH_DATA}\n{}", include_str!("../../shaders/mesh_marks.wgsl"))),
        ("order", format!("{ORDER_DUE}\n{}", include_str!("../../shaders/order.wgsl"))),
        ("body_order", format!("{ORDER_DUE}\n{}", include_str!("../../shaders/body/order.wgsl"))),
        ("schedule", format!("{SCHEDULE_RANK}\n{}", include_str!("../../shaders/schedule.wgsl"))),
        ("order_hash", format!("{HISTORY_RECORD}\n{HASH_INSERT}\n{}", include_str!("../../shaders/order_hash.wgsl"))),
        ("rehash", format!("{HISTORY_RECORD}\n{HASH_INSERT}\n{}", include_str!("../../shaders/rehash.wgsl"))),
        ("exchange_near", include_str!("../../shaders/exchange/near.wgsl").to_string()),
        ("exchange_gather", include_str!("../../shaders/exchange/gather.wgsl").to_string()),
        ("exchange_compact", format!("{EXCHANGE_IDS}\n{}", include_str!("../../shaders/exchange/compact.wgsl"))),
        ("exchange_hash_count", format!("{EXCHANGE_IDS}\n{}", include_str!("../../shaders/exchange/hash_count.wgsl"))),
        ("exchange_hash", format!("{EXCHANGE_IDS}\n{HISTORY_RECORD}\n{HASH_INSERT}\n{}", include_str!("../../shaders/exchange/hash.wgsl"))),
        ("exchange_pairs", format!("{EXCHANGE_IDS}\n{}", include_str!("../../shaders/exchange/pairs.wgsl"))),
        ("exchange_keep", format!("{EXCHANGE_IDS}\n{}", include_str!("../../shaders/exchange/keep.wgsl"))),
        ("exchange_body_gather", include_str!("../../shaders/exchange/body_gather.wgsl").to_string()),
        ("exchange_body_compact", format!("{EXCHANGE_IDS}\n{}", include_str!("../../shaders/exchange/body_compact.wgsl"))),
        ("ghost_pack", include_str!("../../shaders/ranks/pack.wgsl").to_string()),
        ("ghost_unpack", include_str!("../../shaders/ranks/unpack.wgsl").to_string()),
        ("reduce_energy", format!("const BODIES: bool = false;\n{}", include_str!("../../shaders/reduce_energy.wgsl"))),
        ("reduce_energy_bodies", format!("const BODIES: bool = true;\n{}", include_str!("../../shaders/reduce_energy.wgsl"))),
    ]
}

/// The split arrays each pass uses (`gpu::split`): (WGSL name, array, read_write), in the
/// order of their bindings in group 1 (and of the buffers its bind group lists,
/// `step::BindGroups`).
pub fn pass_splits(name: &str) -> &'static [(&'static str, Split, bool)] {
    use Split::*;
    match name {
        "drift" => &[("motion", Motion, true), ("force", Force, false), ("incoming", Incoming, false), ("shares", Shares, false)],
        "kick" => &[("motion", Motion, true), ("force", Force, true), ("incoming", Incoming, false), ("shares", Shares, false)],
        "gather" => &[("force", Force, true), ("incoming", Incoming, false), ("shares", Shares, false)],
        "forces" => &[
            ("motion", Motion, false),
            ("force", Force, true),
            ("list_partner", ListPartner, true),
            ("slot_read", History, false),
            ("slot_write", History, true),
            ("shares", Shares, true),
            ("incoming", Incoming, true),
        ],
        "body_kick" => &[("force", Force, false), ("incoming", Incoming, false), ("shares", Shares, false)],
        "body_place" => &[("motion", Motion, true)],
        "list_build" | "list_build_bodies" => &[("list_partner", ListPartner, true), ("incoming", Incoming, false), ("history_stash", History, false), ("history", History, true)],
        "list_stash" => &[("list_partner", ListPartner, false), ("incoming", Incoming, true), ("history", History, false), ("history_stash", History, true)],
        "incoming" => &[("list_partner", ListPartner, false), ("incoming", Incoming, true)],
        "slot_import" => &[("list_partner", ListPartner, true), ("history", History, true)],
        "exchange_gather" => &[("motion", Motion, false)],
        "exchange_compact" => &[("motion_old", Motion, false), ("motion", Motion, true)],
        "exchange_pairs" => &[("partner_old", ListPartner, false), ("history_old", History, false), ("list_partner", ListPartner, true), ("history", History, true)],
        "exchange_keep" => &[("force_old", Force, false), ("force", Force, true)],
        "ghost_pack" => &[("motion", Motion, false)],
        "ghost_unpack" => &[("motion", Motion, true)],
        "reduce_energy" | "reduce_energy_bodies" => &[("motion", Motion, false), ("force", Force, false)],
        "wall_loads" => &[("motion", Motion, false)],
        "order" => &[("motion", Motion, true), ("force", Force, true), ("list_partner", ListPartner, true)],
        "body_order" => &[("force", Force, true)],
        _ => &[],
    }
}

/// Composed source of the named pass, its split arrays cut as `split` says. Panics on an
/// unknown name (programming error).
pub fn pass_module(name: &str, split: &SplitLayout) -> String {
    pass_module_for(name, split, true)
}

/// `pass_module` for a scene with adhesion or a dry one (`compose_for`).
pub fn pass_module_for(name: &str, split: &SplitLayout, adhesion: bool) -> String {
    let (_, src) = pass_sources().into_iter().find(|(n, _)| *n == name).unwrap_or_else(|| panic!("unknown pass {name}"));
    compose_for(&format!("{src}\n// ---- split arrays (gpu::split) ----\n{}", split_wgsl(split, pass_splits(name))), adhesion)
}

/// The contact files of adhesion (in `contact_sources`), composed only into the modules of a
/// scene with adhesion (`compose_for`).
pub const ADHESION_FILES: [&str; 3] = ["adhesion.wgsl", "hertz_mindlin_adhesive.wgsl", "adhesive.wgsl"];

/// What the passes call of the adhesion files, as stubs for the modules of a dry scene
/// (`compose_for`): they sit in branches that `ADHESION` = false takes away, and keep the
/// adhesive code out of those modules, so a dry scene compiles what it compiled before
/// (llvmpipe inlines every called function before it drops dead branches: the JKR and
/// capillary code cost a dry start about a second there).
pub const NO_ADHESION: &str = "const BONDED_APART: f32 = 2.0;
fn tensile_range(p: PairParamsGpu, r_bar: f32) -> f32 { return 0.0; }
fn bonded_active(p: PairParamsGpu, g: ContactGeometry, h: HistoryGpu) -> bool { return contact_active(p, g); }
fn adhesive_contact_force(p: PairParamsGpu, g: ContactGeometry, h: HistoryGpu, dt: f32) -> ContactOutput { return contact_force(p, g, h, dt); }
fn ended_adhesive_work(p: PairParamsGpu, g: ContactGeometry, h: HistoryGpu, dt: f32) -> vec4<f32> { return vec4<f32>(ended_contact_work(p, g, h, dt), 0.0); }
";

/// The pipeline-overridable switch of a scene with adhesion, declared in every composed module
/// (the passes that read it: `forces`, `wall_loads` and the work folds of `drift`, `kick`,
/// `body_place`). `Pipelines::new` sets it true only where `Setup::has_adhesion`; false, the
/// adhesive code is specialised away and a dry scene runs the code it ran before.
pub const ADHESION_OVERRIDE: &str = "override ADHESION: bool = false;\n";

/// constants + structs + contact files + common helpers + `pass_source`.
pub fn compose(pass_source: &str) -> String {
    compose_for(pass_source, true)
}

/// `compose`, for a scene with adhesion (`adhesion`) or a dry one: the latter without the
/// `ADHESION_FILES`, their `NO_ADHESION` stubs in their place.
pub fn compose_for(pass_source: &str, adhesion: bool) -> String {
    let mut s = String::new();
    s.push_str(&crate::layout::wgsl_constants());
    s.push_str(ADHESION_OVERRIDE);
    s.push_str(&mesh_constants());
    for l in struct_layouts() {
        s.push_str(l.wgsl);
    }
    for (name, src) in contact_sources() {
        if !adhesion && ADHESION_FILES.contains(name) {
            continue;
        }
        s.push_str(&format!("\n// ---- contact/{name} ----\n"));
        s.push_str(src);
    }
    if !adhesion {
        s.push_str("\n// ---- no adhesion (shader::NO_ADHESION) ----\n");
        s.push_str(NO_ADHESION);
    }
    s.push_str("\n// ---- common.wgsl ----\n");
    s.push_str(COMMON);
    s.push_str("\n// ---- pass ----\n");
    s.push_str(pass_source);
    s
}

/// WGSL constants of the mesh passes: packed struct sizes, the tolerance factor and the range
/// of `rotate_blocks` (the values live in `layout.rs`, next to the packed structs).
pub fn mesh_constants() -> String {
    format!(
        "{}const MESH_TOLERANCE_PER_REACH: f32 = {:e};\nconst ROTATE_MAX_BLOCKS: i32 = {ROTATE_MAX_BLOCKS};\n",
        packed_word_constants(),
        MESH_TOLERANCE_PER_REACH
    )
}
