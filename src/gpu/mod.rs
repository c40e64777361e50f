//! The GPU step loop (wgpu + WGSL compute).
//!
//! Files: `context` (adapter/device), `shader` (composition), `layout` (GPU structs),
//! `grid` (BLOCK size and grid geometry), `pipelines`, `buffers`, `encode` (bind groups,
//! dispatch, prefix sum), `step` (pass encoding),
//! `capacity` (overflow → grow → redo), `checkpoint` (the exact device state a checkpoint
//! keeps), `readback`, `energy` (reduction), `walls` (wall
//! tables, loads), `meshes` (mesh walls: packed data, binning on the device, pose rows).
//!
//! Positions are stored as an integer block (vec4<i32>, w = material) times BLOCK plus an f32
//! offset in [0, BLOCK) (vec4<f32>, w = radius); see `grid` for the choice of BLOCK.

pub mod access;
pub mod blowup;
pub mod bodies;
pub mod buffers;
pub mod capacity;
pub mod checkpoint;
pub mod context;
pub mod encode;
pub mod energy;
pub mod exchange;
pub mod flow;
pub mod grid;
pub mod halo;
pub mod decomposed;
pub mod layout;
pub mod meshes;
pub mod order;
pub mod pipelines;
pub mod profile;
pub mod readback;
pub mod shader;
pub mod shader_stats;
pub mod shared;
pub mod split;
pub mod step;
pub mod walls;

pub use context::{list_adapters, open_context, preferred_adapter_handle, AdapterSummary, GpuContext};
pub use flow::DeviceExchanges;
pub use grid::GridSpec;

use crate::backend::{Backend, Energies, Snapshot, WallLoad};
use crate::contact::params::PairParamsGpu;
use crate::error::{Result, TalusError};
use crate::layout::consts::{OVERFLOW_MESH_GROUPS, SLOT_ACTIVE_BIT};
use crate::model::checks::LostParticles;
use crate::setup::{Setup, Wall};
use buffers::Buffers;
use layout::SimParams;
use meshes::GpuMeshes;
use pipelines::Pipelines;
use readback::{read_buffer_range, read_sources, Source::{Split, Whole}};
use step::BindGroups;

/// The most particles that fit on a device of `memory` bytes at `bytes_per_particle`: the
/// memory, the largest per-particle array that stays in one binding of `cap_bytes`
/// (`split::SplitLayout::max_particles`) and the particle ids a list slot holds
/// (`SLOT_PARTNER_MASK`), whichever is least.
pub fn particles_that_fit(memory: u64, bytes_per_particle: f64, cap_bytes: u64) -> u64 {
    let by_memory = (memory as f64 / bytes_per_particle.max(1.0)) as u64;
    by_memory.min(cap_bytes / 16).min(crate::layout::consts::SLOT_PARTNER_MASK as u64)
}

/// Refuse a set-up of `n` particles whose buffers take `planned` bytes (`buffers::planned_bytes`,
/// the list at `list_capacity` slots) on an adapter (`adapter`) of `memory` bytes, naming the
/// count that would fit. `None`: the backend reports no memory size, and nothing is refused.
pub fn check_fits(n: u32, planned: u64, list_capacity: u32, memory: Option<u64>, cap_bytes: u64, adapter: &str) -> Result<()> {
    let Some(memory) = memory.filter(|&m| planned > m) else { return Ok(()) };
    let per = planned as f64 / n.max(1) as f64;
    Err(TalusError::Device(format!(
        "{n} particles need {:.2} GB of device memory ({per:.0} B/particle at the initial list of {:.1} slots/particle); {adapter} has {:.2} GB: about {} particles fit",
        planned as f64 / 1e9,
        list_capacity as f64 / n.max(1) as f64,
        memory as f64 / 1e9,
        particles_that_fit(memory, per, cap_bytes)
    )))
}

/// What the arrays of the set-up `default_bytes_per_particle` sizes hold: two motion rows (no
/// rolling work booked), no periodic images, slots not placed, records of a Hertz-family law
/// with energy booked (32 bytes).
pub const DEFAULT_SHAPE: split::ArrayShape = split::ArrayShape { motion_rows: crate::layout::consts::MOTION_ROWS_DRY, images: false, places: false, record: split::RecordLayout::HERTZ_BOOKED };

/// Device bytes per particle of a `count`-particle set-up at the default capacities (the list
/// at 3.5 slots per particle, a box with 5 walls, one grid cell per two particles, no rolling
/// work booked, no periodic axis, a Hertz-family law with energy booked: `DEFAULT_SHAPE`):
/// what `talus info` sizes an adapter by.
pub fn default_bytes_per_particle(count: u32) -> f64 {
    let cells = count / 2 + 1;
    let bytes = buffers::planned_bytes(count, count, 5, 5, 1, 1, cells, capacity::initial_hash_capacity(count, 5), capacity::initial_list_capacity(count), energy::reduce_dispatch(count, 65535).0 * energy::reduce_dispatch(count, 65535).1, DEFAULT_SHAPE);
    bytes as f64 / count.max(1) as f64
}

/// Options of the GPU backend.
#[derive(Clone, Debug)]
pub struct GpuOptions {
    /// Initial capacity of each wall-contact history table (slots, at least 4; ball pairs keep
    /// their history in the list slots); `None` = `capacity::initial_hash_capacity`. It grows
    /// ×2 on overflow.
    pub hash_capacity: Option<u32>,
    /// Steps encoded into one submit (one 80-byte step-state readback per submit).
    pub steps_per_submit: u64,
    /// Initial neighbour-list capacity (slots); `None` = 3.5 per particle. It grows on overflow.
    pub list_capacity: Option<u32>,
    /// The most bytes of one storage binding, below the adapter's limits (`gpu::split`);
    /// `None` = the environment variable `TALUS_GPU_MAX_BINDING_BYTES`, else the adapter's.
    pub max_binding_bytes: Option<u64>,
    /// The grid to use in place of the set-up's own (`GridSpec::new`): a rank of a decomposed
    /// run (`gpu::decomposed`) holds a part of the scene and takes the whole scene's grid, so
    /// that every rank splits positions into the same blocks as one process.
    pub grid: Option<GridSpec>,
    /// The most device memory the backend plans to use, bytes, below the adapter's
    /// (`GpuContext::memory`); `None` = the environment variable `TALUS_GPU_MAX_DEVICE_BYTES`,
    /// else the adapter's memory (a card shared with other work, or a test of what a smaller
    /// card does).
    pub max_device_bytes: Option<u64>,
    /// Whether the device stores the particles in cell order (`gpu::order`); `None` = the
    /// environment variable `TALUS_GPU_CELL_ORDER` (`1` or `0`), else yes. Scenes with rigid
    /// bodies are stored body by body (`order::for_state`); ranks of a decomposed run are stored
    /// in id order either way.
    pub cell_order: Option<bool>,
    /// Steps between renumberings in cell order on the device (a positive multiple of
    /// `REBUILD_STRIDE`, or 0: never); `None` = `RENUMBER_EVERY` where the particles are stored
    /// in cell order, never otherwise.
    pub renumber_every: Option<u64>,
    /// Whether each workgroup of the force pass takes its particles longest run first
    /// (`shaders/schedule.wgsl`; no output changes by a bit); `None` = the environment variable
    /// `TALUS_GPU_BALANCE` (`1` or `0`), else yes.
    pub balanced: Option<bool>,
    /// Whether list slots carry their place (`split::SplitLayout::places`; no output changes
    /// by a bit); `None` = the device's choice, `GpuContext::slot_places`
    /// (`TALUS_GPU_SLOT_PLACES`).
    pub slot_places: Option<bool>,
    /// Whether the slot records keep every field of a contact's history
    /// (`split::RecordLayout::FULL`) rather than only those the set-up's laws read
    /// (`RecordLayout::of_setup`; no output changes by a bit: tests compare the two); `None` =
    /// the environment variable `TALUS_GPU_FULL_RECORDS` (`1` or `0`), else no.
    pub full_records: Option<bool>,
}

/// How a GPU backend stores its particles and schedules its force pass (`GpuBackend::layout`).
#[derive(Clone, Debug, serde::Serialize)]
pub struct GpuLayout {
    /// Stored in cell order (`GpuOptions::cell_order`, `TALUS_GPU_CELL_ORDER`), else in id order.
    pub cell_order: bool,
    /// Steps between renumberings on the device, where it renumbers.
    pub renumber_every: Option<u64>,
    /// The force pass's schedule (`GpuOptions::balanced`, `TALUS_GPU_BALANCE`): "off", "taken",
    /// or on but not taken.
    pub schedule: &'static str,
    /// Whether the shaders keep naga's runtime checks (`GpuContext::shader_checks`,
    /// `TALUS_GPU_SHADER_CHECKS`).
    pub shader_checks: bool,
    /// Whether the force pass issues each slot's loads early (`GpuContext::force_early_loads`,
    /// `TALUS_GPU_EARLY_LOADS`).
    pub early_loads: bool,
    /// Whether the force pass reads the particle's own state again at each contact
    /// (`GpuContext::reload_own`, `TALUS_GPU_RELOAD_OWN`).
    pub reload_own: bool,
    /// Whether list slots carry their place (`GpuContext::slot_places`,
    /// `TALUS_GPU_SLOT_PLACES`).
    pub slot_places: bool,
    /// Bytes apart of the slot records (`split::RecordLayout::bytes`: 32 for a Hertz-family law
    /// with energy booked, 40 with every field).
    pub record_bytes: u64,
    /// The contact code compiled into the force pass (`pipelines::ContactVariant`): the one
    /// model of every pair (`None`: every law), and whether the energy booking is.
    pub contact_model: Option<&'static str>,
    /// Where the pairs' models differ, the models whose laws are compiled in (`None`: every
    /// one).
    pub contact_models: Option<Vec<&'static str>>,
    pub contact_booking: bool,
    /// In a scene with adhesion, the one adhesion model of every pair (`None`: every one).
    pub contact_adhesion: Option<Option<&'static str>>,
}

impl std::fmt::Display for GpuLayout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "stored in {} order", if self.cell_order { "cell" } else { "id" })?;
        if let Some(k) = self.renumber_every {
            write!(f, " (renumbered in cell order every {k} steps)")?;
        }
        write!(f, "; force-pass schedule {}", self.schedule)?;
        if !self.shader_checks {
            write!(f, "; shaders without naga's runtime checks")?;
        }
        if self.early_loads {
            write!(f, "; force pass with early loads")?;
        }
        if !self.reload_own {
            write!(f, "; own state kept in registers")?;
        }
        if self.slot_places {
            write!(f, "; slots placed by SIMD group")?;
        }
        write!(f, "; {}-byte slot records", self.record_bytes)?;
        match (self.contact_model, &self.contact_models) {
            (Some(m), _) => write!(f, "; contact law {m} only")?,
            (None, Some(ms)) => write!(f, "; contact laws {} only", ms.join(", "))?,
            (None, None) => write!(f, "; every contact law")?,
        }
        match self.contact_adhesion {
            Some(Some(a)) => write!(f, ", adhesion {a} only")?,
            Some(None) => write!(f, ", every adhesion model")?,
            None => {}
        }
        if !self.contact_booking {
            write!(f, ", no energy booking")?;
        }
        Ok(())
    }
}

/// The environment variable that turns the cell order of the device's storage off (`0`) or on.
pub const CELL_ORDER_ENV: &str = "TALUS_GPU_CELL_ORDER";

/// Whether to store in cell order: `chosen`, else `TALUS_GPU_CELL_ORDER`, else yes; an unclear
/// value of the variable is an error naming it.
pub fn cell_order_wanted(chosen: Option<bool>) -> Result<bool> {
    switch_wanted(chosen, CELL_ORDER_ENV, "1 (cell order) or 0 (id order)")
}

/// The environment variable that turns the force pass's schedule by run length off (`0`) or on.
pub const BALANCE_ENV: &str = "TALUS_GPU_BALANCE";

/// Whether the force pass takes each workgroup's particles longest run first: `chosen`, else
/// `TALUS_GPU_BALANCE`, else yes; an unclear value of the variable is an error naming it.
pub fn balanced_wanted(chosen: Option<bool>) -> Result<bool> {
    switch_wanted(chosen, BALANCE_ENV, "1 (longest runs first) or 0 (thread k takes particle k)")
}

/// The environment variable that compiles the shaders without naga's runtime checks (`0`).
pub const SHADER_CHECKS_ENV: &str = "TALUS_GPU_SHADER_CHECKS";

/// Whether the shaders keep naga's runtime checks (`GpuContext::shader_checks`):
/// `TALUS_GPU_SHADER_CHECKS`, else yes; an unclear value of the variable is an error naming it.
pub fn shader_checks_wanted() -> Result<bool> {
    switch_wanted(None, SHADER_CHECKS_ENV, "1 (naga's runtime checks, the default) or 0 (without them)")
}

/// The environment variable that makes the force pass issue each slot's loads early (`1`).
pub const EARLY_LOADS_ENV: &str = "TALUS_GPU_EARLY_LOADS";

/// Whether the force pass issues each slot's loads early (`GpuContext::force_early_loads`):
/// `TALUS_GPU_EARLY_LOADS` = `1`, else no; an unclear value is an error naming the variable.
pub fn early_loads_wanted() -> Result<bool> {
    switch_or(None, EARLY_LOADS_ENV, false, "1 (early loads) or 0 (the default)")
}

/// The environment variable that places the list slots (`1`; `split::SplitLayout::places`).
pub const SLOT_PLACES_ENV: &str = "TALUS_GPU_SLOT_PLACES";

/// Whether list slots carry their place (`GpuContext::slot_places`): `TALUS_GPU_SLOT_PLACES` =
/// `1`, else no; an unclear value is an error naming the variable.
pub fn slot_places_wanted() -> Result<bool> {
    switch_or(None, SLOT_PLACES_ENV, false, "1 (slots placed by SIMD group) or 0 (the default)")
}

/// The environment variable that makes the slot records keep every field of a contact's
/// history (`1`; `GpuOptions::full_records`), not only those the set-up's laws read.
pub const FULL_RECORDS_ENV: &str = "TALUS_GPU_FULL_RECORDS";

/// The environment variable that makes the force pass read each particle's own state again at
/// each contact (`1`) or keep it in registers (`0`).
pub const RELOAD_OWN_ENV: &str = "TALUS_GPU_RELOAD_OWN";

/// Whether the force pass reads the particle's own state again at each contact
/// (`GpuContext::reload_own`): `TALUS_GPU_RELOAD_OWN`, else yes on a GPU and no on a CPU device
/// (`cpu_device`: lavapipe, llvmpipe), whose compiler keeps values at no cost in occupancy and
/// pays each load in instructions; an unclear value is an error naming the variable.
pub fn reload_own_wanted(cpu_device: bool) -> Result<bool> {
    switch_or(None, RELOAD_OWN_ENV, !cpu_device, "1 (read again at each contact) or 0 (kept in registers)")
}

/// The environment variable that compiles every contact law and the energy booking into the
/// force pass whatever the scene's pairs need (`0`; `pipelines::ContactVariant`).
pub const SPECIALISE_ENV: &str = "TALUS_GPU_SPECIALISE";

/// Whether the force pass is compiled for the scene's pairs only (`GpuContext::specialise`):
/// `TALUS_GPU_SPECIALISE`, else yes; an unclear value is an error naming the variable.
pub fn specialise_wanted() -> Result<bool> {
    switch_wanted(None, SPECIALISE_ENV, "1 (the contact code the pairs need, the default) or 0 (every law and the booking)")
}

/// `chosen`, else the environment variable `env` (`1` or `0`), else yes.
fn switch_wanted(chosen: Option<bool>, env: &str, expected: &str) -> Result<bool> {
    switch_or(chosen, env, true, expected)
}

/// `chosen`, else the environment variable `env` (`1` or `0`), else `default`.
fn switch_or(chosen: Option<bool>, env: &str, default: bool, expected: &str) -> Result<bool> {
    if let Some(c) = chosen {
        return Ok(c);
    }
    match std::env::var(env) {
        Err(_) => Ok(default),
        Ok(v) => match v.trim() {
            "1" => Ok(true),
            "0" => Ok(false),
            _ => Err(TalusError::Other(format!("environment variable {env} = `{v}`: expected {expected}"))),
        },
    }
}

/// The adapter, named for a refusal by device memory, with the budget where it is lower than
/// the adapter's memory.
pub(crate) fn describe_memory(ctx: &GpuContext, memory: Option<u64>) -> String {
    match memory {
        Some(m) if ctx.memory != Some(m) => format!("{} (the memory budget of {MAX_DEVICE_ENV} or GpuOptions::max_device_bytes)", ctx.describe()),
        _ => ctx.describe(),
    }
}

/// The environment variable that lowers the device memory the GPU backend plans with.
pub const MAX_DEVICE_ENV: &str = "TALUS_GPU_MAX_DEVICE_BYTES";

/// The device memory to plan with: the adapter's (`None` where it does not report it), lowered
/// to `lowered` (`GpuOptions::max_device_bytes`) or else to `TALUS_GPU_MAX_DEVICE_BYTES`. A value
/// that is not a positive number of bytes is an error naming the variable.
pub fn memory_budget(adapter: Option<u64>, lowered: Option<u64>) -> Result<Option<u64>> {
    let cap = match (lowered, std::env::var(MAX_DEVICE_ENV)) {
        (Some(bytes), _) => Some(bytes),
        (None, Ok(v)) => match v.trim().parse::<u64>() {
            Ok(bytes) if bytes > 0 => Some(bytes),
            _ => return Err(TalusError::Other(format!("environment variable {MAX_DEVICE_ENV} = `{v}`: expected a positive number of bytes"))),
        },
        (None, Err(_)) => None,
    };
    Ok(match (adapter, cap) {
        (Some(a), Some(c)) => Some(a.min(c)),
        (a, c) => a.or(c),
    })
}

impl Default for GpuOptions {
    fn default() -> Self {
        GpuOptions { hash_capacity: None, steps_per_submit: 64, list_capacity: None, max_binding_bytes: None, grid: None, max_device_bytes: None, cell_order: None, renumber_every: None, balanced: None, slot_places: None, full_records: None }
    }
}

/// Modelled device-memory traffic of one step, for `talus bench`.
#[derive(Clone, Debug, PartialEq)]
pub struct TrafficModel {
    pub bytes_per_particle_step: f64,
    pub bytes_per_contact_step: f64,
    /// Neighbour-list slots per particle (owned pairs within the list cut-off).
    pub slots_per_particle: f64,
    /// Steps per list build so far.
    pub steps_per_rebuild: f64,
    /// The same per named pass of the step (`StepEncoder::STEP_PASSES`, then the kick closing a
    /// batch): (name, bytes per particle-step, bytes per contact-step); the totals above are
    /// their sums.
    pub passes: Vec<(&'static str, f64, f64)>,
}

pub struct GpuBackend {
    ctx: GpuContext,
    pipelines: std::sync::Arc<Pipelines>,
    buffers: Buffers,
    groups: BindGroups,
    grid: GridSpec,
    sim: SimParams,
    opts: GpuOptions,
    steps_done: u64,
    dt: f64,
    /// The set-up's walls (their poses are evaluated on the host for every batch).
    walls: Vec<Wall>,
    /// The mesh walls on the device (triangles binned at start).
    meshes: GpuMeshes,
    /// Rows of the wall and mesh pose tables: 1 when nothing moves, else the longest batch.
    wall_rows_capacity: u64,
    /// Period per axis (the domain extent), for unwrapped snapshot positions.
    period: [f64; 3],
    /// Host copy of every particle's radius (f64, as made; the device holds f32).
    radius: Vec<f64>,
    /// Host copy of every particle's material (what an exchange sums the held mass over).
    material: Vec<u32>,
    /// Density of every material (masses of imported particles).
    densities: Vec<f64>,
    /// The pair table in the GPU layout (re-uploaded when buffers are re-created).
    pairs: Vec<PairParamsGpu>,
    /// Work partitions of particles no longer held (`Backend::set_carried`).
    carried: Energies,
    /// Run-time checks: the lost-particle bounds (policy `error`) and the periodic axes.
    lost: Option<(glam::DVec3, glam::DVec3, f64)>,
    periodic: [bool; 3],
    /// Step of the last snapshot read (`Backend::snapshot`): the last good state after a
    /// blow-up (`gpu::blowup`).
    last_snapshot_step: Option<u64>,
    /// Set by a blow-up: why the backend stopped (it holds no good state any more).
    stopped: Option<String>,
    /// `steps_done` at the start or the last state import (list builds are counted since).
    steps_at_start: u64,
    /// Steps and list builds before `steps_at_start` (each import and exchange restarts the
    /// device's count), so `traffic_model` counts the builds of the whole run.
    earlier_builds: (u64, u64),
    /// Batches halted by REBUILD_LATE (a list gone stale in a step without rebuild passes,
    /// `list_plan.wgsl`) and resumed.
    late_rebuilds: u64,
    /// `StepState::rebuilds` after the last batch read (`GpuBackend::adapt_rebuild_stride`).
    rebuilds_seen: u32,
    /// The device memory the backend plans with (`memory_budget`; `None` where unknown): an
    /// exchange that would hold its old and new buffers beyond it goes through the host.
    memory: Option<u64>,
    /// Steps since the last batch that built a list (`GpuBackend::adapt_rebuild_stride`: a list
    /// that outlives a batch lets the stride grow beyond a quarter of the batch).
    steps_since_build: u64,
    /// Whether the pipelines are the process's shared ones (`GpuBackend::new`) or this
    /// backend's own (`with_context`): where the list outgrows a part, new ones come from the
    /// same source.
    shared_pipelines: bool,
    /// What `buffers::planned_bytes` said the buffers would take, before they were made.
    planned_bytes: u64,
    /// The rigid bodies (`gpu::bodies`); `None` in a scene of spheres.
    bodies: Option<bodies::GpuBodies>,
    /// Gravity in f64 (the bodies' energies are summed on the host, `bodies::energies`).
    gravity: [f64; 3],
    /// The exchange passes (`gpu::flow`), compiled at the first exchange.
    exchange_pipes: Option<std::sync::Arc<flow::ExchangePipelines>>,
    /// Full-state readbacks so far (`GpuBackend::full_state_readbacks`).
    full_readbacks: u64,
    /// Exchanges on the device so far, by how (`GpuBackend::device_exchanges`).
    device_exchanges: flow::DeviceExchanges,
    /// Where each particle is stored on the device (`gpu::order`).
    order: order::Order,
    /// Whether a state import stores the particles in cell order (`GpuOptions::cell_order`; never
    /// with rigid bodies).
    cell_order: bool,
    /// Cells the grid buffers hold: the most of the neighbour grid's and the order grid's.
    cells: u32,
    /// The most particles the scene can hold (`Setup::particle_capacity`): the room an
    /// exchange makes never goes beyond it (`GpuBackend::exchange_room`).
    most_particles: u32,
    /// `steps_done` where `order` was last read or set: a renumbering on the device since (at a
    /// positive multiple of `SimParams::renumber_every`) makes the host read `tag` back first.
    order_step: u64,
}

impl GpuBackend {
    /// Upload `setup` to the process's shared device (the preferred adapter, opened and its
    /// pipelines compiled on first use; `gpu::shared`).
    pub fn new(setup: &Setup, opts: GpuOptions) -> Result<Self> {
        Self::build(shared::shared_context()?, true, setup, opts)
    }

    /// Upload `setup` to an already opened context (compiling its own pipelines) and compute
    /// the initial forces.
    pub fn with_context(ctx: GpuContext, setup: &Setup, opts: GpuOptions) -> Result<Self> {
        Self::build(ctx, false, setup, opts)
    }

    /// The pipelines for arrays cut as `split` says: the process's shared ones, or compiled
    /// for this backend alone.
    fn pipelines_for(ctx: &GpuContext, shared: bool, mesh_walls: bool, adhesion: bool, contact: pipelines::ContactVariant, split: &split::SplitLayout) -> Result<std::sync::Arc<Pipelines>> {
        if shared {
            shared::shared_pipelines(mesh_walls, adhesion, contact, split)
        } else {
            Ok(std::sync::Arc::new(Pipelines::new(ctx, mesh_walls, adhesion, contact, split)?))
        }
    }

    fn build(ctx: GpuContext, shared_pipelines: bool, setup: &Setup, opts: GpuOptions) -> Result<Self> {
        let n = setup.particles.len();
        let max = crate::layout::consts::SLOT_PARTNER_MASK;
        if n > max as usize {
            return Err(TalusError::Other(format!("{n} particles: too many for the GPU backend (at most {max})")));
        }
        let n = n as u32;
        let n_walls = setup.walls.len() as u32;
        if n_walls >= crate::layout::consts::MESH_KEY_BIT {
            return Err(TalusError::Other(format!("{n_walls} plane walls: too many for the contact-history keys")));
        }
        let n_meshes = setup.meshes.len() as u32;
        let n_mat = setup.pairs.n_materials as u32;
        let grid = match &opts.grid {
            Some(g) => *g,
            None => GridSpec::new(setup)?,
        };
        let hash_capacity = opts.hash_capacity.map(capacity::round_capacity).unwrap_or_else(|| capacity::initial_hash_capacity(n, n_walls + n_meshes));
        let max_dim = ctx.limits.max_compute_workgroups_per_dimension;
        let (rx, ry) = energy::reduce_dispatch(n, max_dim);
        let wall_rows_capacity = walls::wall_rows_capacity(&setup.walls, &setup.meshes, opts.steps_per_submit);
        let list_capacity = opts.list_capacity.map(|c| c.max(1)).unwrap_or_else(|| capacity::initial_list_capacity(n));
        let cap_bytes = split::binding_cap(&ctx, opts.max_binding_bytes)?;
        if n as u64 > cap_bytes / 16 {
            return Err(TalusError::Device(format!(
                "{n} particles: the per-particle arrays of 16 bytes (positions, image) hold at most {} particles in one storage binding of {cap_bytes} bytes (max_storage_buffer_binding_size{})",
                cap_bytes / 16,
                if opts.max_binding_bytes.is_some() || std::env::var(split::MAX_BINDING_ENV).is_ok() { format!(", lowered by {}", split::MAX_BINDING_ENV) } else { String::new() }
            )));
        }
        // the renumbering on the device (`gpu::order`): cells of the grid of skin 0
        // (not on a rank of a decomposed run, which takes a grid; rigid bodies are keyed by
        // their centres, `shaders/body/order.wgsl`)
        let applies = opts.grid.is_none();
        let cell_order = cell_order_wanted(opts.cell_order)? && applies;
        let renumber_every = match opts.renumber_every {
            _ if !applies => 0,
            Some(k) if k % crate::layout::consts::REBUILD_STRIDE as u64 != 0 || k > u32::MAX as u64 => {
                return Err(TalusError::Other(format!("renumber_every = {k}: a multiple of {} steps (or 0) is needed", crate::layout::consts::REBUILD_STRIDE)));
            }
            Some(k) => k,
            None if cell_order => crate::layout::consts::RENUMBER_EVERY as u64,
            None => 0,
        };
        let order_grid = match renumber_every {
            0 => grid,
            _ => GridSpec::with_skin(setup, 0.0).unwrap_or(grid),
        };
        let cells = grid.n_cells.max(order_grid.n_cells);
        // velocity and spin per particle, and the spin of the last force pass where rolling
        // work is booked
        let motion_rows = split::motion_rows(setup.rolling_booked());
        // the periodic images, where an axis is periodic
        let images = setup.periodic.iter().any(|&p| p);
        // each list slot's place, where slots are placed (`GpuContext::slot_places`)
        let places = opts.slot_places.unwrap_or(ctx.slot_places);
        // the fields of a contact's history the pairs' laws read
        let record = match switch_or(opts.full_records, FULL_RECORDS_ENV, false, "1 (every field of a contact's history in the slot records) or 0 (the default)")? {
            true => split::RecordLayout::FULL,
            false => split::RecordLayout::of_setup(setup),
        };
        let shape = split::ArrayShape { motion_rows, images, places, record };
        let mut planned = buffers::planned_bytes(n, n, n_walls, n_walls + n_meshes, wall_rows_capacity as u32, n_mat * n_mat, cells, hash_capacity, list_capacity, rx * ry, shape);
        if !setup.bodies.is_empty() {
            planned += bodies::planned_bytes(n, setup.bodies.len() as u32);
        }
        let adhesion = setup.has_adhesion();
        planned += buffers::adhesion_planned_bytes(n, adhesion);
        let memory = memory_budget(ctx.memory, opts.max_device_bytes)?;
        check_fits(n, planned, list_capacity, memory, cap_bytes, &describe_memory(&ctx, memory))?;
        let pairs: Vec<PairParamsGpu> = setup.pairs.entries.iter().map(PairParamsGpu::from).collect();
        let contact = if ctx.specialise { pipelines::ContactVariant::of(&pairs) } else { pipelines::ContactVariant::ANY };
        let pipelines = Self::pipelines_for(&ctx, shared_pipelines, !setup.meshes.is_empty(), adhesion, contact, &split::SplitLayout::of_shape(cap_bytes, n as u64, list_capacity as u64, shape))?;
        let meshes = GpuMeshes::new(&ctx, &pipelines, setup, &grid, wall_rows_capacity as u32)?;
        let mesh_layout = meshes.layout;
        let buffers = Buffers::new(&ctx, n, n, n_walls, n_walls + n_meshes, wall_rows_capacity as u32, n_mat * n_mat, cells, hash_capacity, list_capacity, rx * ry, meshes.data.clone(), cap_bytes, adhesion, shape)?;
        let groups = BindGroups::new(&ctx.device, &pipelines, &buffers);

        let g = setup.gravity;
        let sim = SimParams {
            gravity: [g[0] as f32, g[1] as f32, g[2] as f32],
            dt: setup.dt as f32,
            grid_origin: grid.origin,
            cell_blocks: grid.cell_blocks,
            grid_dims: grid.dims,
            n_cells: grid.n_cells,
            block: grid.block as f32,
            n_particles: n,
            n_walls,
            n_materials: n_mat,
            hash_capacity,
            hash_max_load: capacity::max_load(hash_capacity),
            max_rgap: crate::cpu::max_positive_rgap(setup) as f32,
            wall_time0: 0,
            wall_rows: 1,
            n_meshes,
            mesh_pose_base: mesh_layout.pose_base,
            mesh_tri_base: mesh_layout.tri_base,
            mesh_start_base: mesh_layout.start_base,
            mesh_id_base: mesh_layout.id_base,
            periodic: (0..3).filter(|&a| setup.periodic[a]).map(|a| 1u32 << a).sum(),
            list_capacity,
            period_blocks: grid.period_blocks,
            skin: grid.skin as f32,
            period_offset: grid.period_offset,
            lost_margin: match (setup.checks.lost_particles, setup.checks.lost_margin) {
                (LostParticles::Error, Some(m)) => m as f32,
                _ => -1.0,
            },
            domain_min_block: grid.domain_min_block,
            rolling_booked: setup.rolling_booked() as u32,
            domain_min_offset: grid.domain_min_offset,
            rebuild_stride: if grid.skin > 0.0 { crate::layout::consts::REBUILD_STRIDE_START } else { 1 },
            order_origin: order_grid.origin,
            order_cell_blocks: order_grid.cell_blocks,
            order_dims: order_grid.dims,
            order_cells: order_grid.n_cells,
            renumber_every: renumber_every as u32,
            balanced: balanced_wanted(opts.balanced)? as u32,
            order_by_body: setup.has_bodies() as u32,
            _pad_order2: 0,
        };
        let q = &ctx.queue;
        q.write_buffer(&buffers.sim, 0, bytemuck::bytes_of(&sim));
        if !pairs.is_empty() {
            q.write_buffer(&buffers.pairs, 0, bytemuck::cast_slice(&pairs));
        }
        let densities: Vec<f64> = setup.materials.iter().map(|m| m.density).collect();
        let mut rows = exchange::ParticleRows::of(&setup.particles, &[], &densities, grid.block, motion_rows);
        let radius = setup.particles.radius.clone();
        let order = order::for_state(&setup.particles.position, &radius, &setup.bodies, cell_order);
        let body_state = if setup.bodies.is_empty() {
            None
        } else {
            bodies::set_component_masses(&mut rows.motion, rows.motion_rows, &setup.bodies);
            Some(bodies::GpuBodies::new(&ctx, &buffers, &setup.bodies, &order, grid.block, None)?)
        };
        let period = setup.period().to_array();
        let mut backend = GpuBackend { ctx, pipelines, buffers, groups, grid, sim, opts, steps_done: 0, dt: setup.dt, walls: setup.walls.clone(), meshes, wall_rows_capacity, period, radius, material: setup.particles.material.clone(), densities, pairs, carried: Energies::default(), lost: match setup.checks.lost_particles { LostParticles::Error => setup.lost_bounds(), LostParticles::Remove => None }, periodic: setup.periodic, last_snapshot_step: None, stopped: None, steps_at_start: 0, earlier_builds: (0, 0), late_rebuilds: 0, rebuilds_seen: 0, steps_since_build: 0, memory, shared_pipelines, planned_bytes: planned, bodies: body_state, gravity: setup.gravity, exchange_pipes: None, full_readbacks: 0, device_exchanges: Default::default(), order, cell_order, cells, most_particles: setup.particle_capacity().min(u32::MAX as usize) as u32, order_step: 0 };
        backend.write_particles(&rows);
        backend.write_rebuild_table();
        // the initial force evaluation sees the walls at t = 0 (time index 0)
        backend.upload_poses(0, 1);
        // components where their bodies put them (as the CPU's `place_components`)
        let first = backend.bodies.is_some().then(|| {
            let mut enc = backend.ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("body_place") });
            backend.step_encoder().body_place_all(&mut enc);
            enc
        });
        let st = backend.initial_forces(0, first, None)?;
        backend.rebuilds_seen = st.rebuilds;
        if st.flags & OVERFLOW_MESH_GROUPS != 0 {
            return Err(backend.mesh_overflow(&st, 0));
        }
        if st.flags & crate::layout::consts::BLOWUP != 0 {
            // the start already overlaps beyond the stated fraction (`forces.wgsl`)
            return Err(backend.blow_up(&st, 0, 0));
        }
        if !setup.initial_contacts.is_empty() {
            // a scene started from a checkpoint: forces again, from the saved history
            let n = setup.particles.len();
            let history = setup.initial_contacts.clone();
            let zero = vec![[0.0; 3]; n];
            backend.import_in(&crate::model::state::ParticleState { step: 0, particles: setup.particles.clone(), image: vec![[0; 3]; n], force: zero.clone(), torque: zero, refresh: vec![true; n], history, bodies: setup.bodies.clone() }, backend.order.clone(), 0)?;
        }
        Ok(backend)
    }

    /// Seconds the upload and on-device binning of the mesh walls' triangles took (0 without
    /// mesh walls), and the number of binned (triangle, cell) entries.
    pub fn mesh_binning(&self) -> (f64, u32) {
        (self.meshes.bin_seconds, self.meshes.n_entries)
    }

    /// The grid and BLOCK in use.
    pub fn grid(&self) -> &GridSpec {
        &self.grid
    }

    /// Upload the rebuild dispatch table for the current buffers.
    pub(crate) fn write_rebuild_table(&self) {
        let t = step::rebuild_dispatch_table(&self.buffers, self.grid.n_cells, self.ctx.limits.max_compute_workgroups_per_dimension);
        self.ctx.queue.write_buffer(&self.buffers.dispatch_full, 0, bytemuck::cast_slice(&t));
    }

    /// Neighbour-list builds since the start or the last state import.
    pub fn list_builds(&self) -> Result<u32> {
        Ok(self.read_step_state()?.rebuilds)
    }

    /// Before an import or an exchange restarts the device's count of list builds: the steps
    /// and builds since the last restart kept (`earlier_builds`), and the count restarted here.
    pub(crate) fn restart_build_count(&mut self) {
        self.earlier_builds.0 += self.steps_done - self.steps_at_start;
        self.earlier_builds.1 += self.rebuilds_seen as u64;
        self.steps_at_start = self.steps_done;
    }

    /// Batches that halted because the list went stale in a step that carries no rebuild
    /// passes (`consts::REBUILD_LATE`), each resumed from that step's rebuild.
    pub fn late_rebuilds(&self) -> u64 {
        self.late_rebuilds
    }

    /// Current neighbour-list capacity (slots).
    /// Bytes of the buffers as planned before they were made (`buffers::planned_bytes`, with
    /// the bodies' `bodies::planned_bytes`) and as made (`Buffers::device_bytes` and the body
    /// buffers, the mesh data not counted), for the test that keeps the two equal.
    pub fn buffer_bytes(&self) -> (u64, u64) {
        (self.planned_bytes, self.buffers.device_bytes() + self.bodies.as_ref().map_or(0, |b| b.device_bytes()))
    }

    /// How the split arrays are cut now (`gpu::split`).
    pub fn split_layout(&self) -> &split::SplitLayout {
        &self.buffers.split
    }

    /// Steps whose counter is a multiple of this carry the rebuild passes now
    /// (`SimParams::rebuild_stride`, adapted to the list's lifetime).
    pub fn rebuild_stride(&self) -> u32 {
        self.sim.rebuild_stride
    }

    /// Current neighbour-list capacity (slots).
    pub fn list_capacity(&self) -> u32 {
        self.buffers.list_capacity
    }

    /// Current contact-history table capacity (slots per table).
    pub fn hash_capacity(&self) -> u32 {
        self.buffers.hash_capacity
    }

    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }

    /// Modelled device-memory bytes per step, from the list as it is now and the rebuilds so
    /// far (one small readback; call it after stepping). Each buffer element a pass reads or
    /// writes counts once per pass (read + write = twice; a run start read by threads i and
    /// i − 1 once); the partners' positions and velocities read by `forces` and `list_build`,
    /// and the grid cells and ids `list_build` searches, are assumed cached, as are the pair
    /// parameters and wall tables. Per particle (vec4 = 16 B) and pass:
    /// - `drift` (`kick_drift`: the previous step's total force gathered, its second half kick,
    ///   this step's half kick and drift): read pos_block, pos_offset, motion (2 vec4), force
    ///   (2 vec4), incoming start (4), write pos_block, pos_offset, motion (64) → 164 (pos_block
    ///   is written only when a particle crosses into another block: counted as every step, an
    ///   upper bound); per list
    ///   slot its incoming entry (4); per active contact its share (24); per workgroup of
    ///   `WORKGROUP_SIZE` particles the previous force pass's work read and added to the four
    ///   Kahan pairs (16 + 2 × 32) → 80 / 64. (`image` is touched only when a particle wraps
    ///   round a periodic axis.)
    /// - `list_plan`, `advance`: one thread each, the step state and the dispatch table
    ///   (≈ 660 B per step in all) / n.
    /// - grid (rebuild steps; amortised over the measured steps between builds): clears
    ///   (8 + 4 per cell), grid count (32), cell scan (16 per cell), scatter (16), cell sort
    ///   (8 + 8 per cell) → 64 + 28 per cell; and, once in `renumber_every` steps, the
    ///   renumbering in cell order (`order.wgsl`: count, scatter, sort and new indices, 64;
    ///   three rounds of rows gathered into `force` and put back, 3 × 128, with the ids and old
    ///   indices, 16; the list's partner words, 8 per slot) → (464 + 8 per slot) / renumber_every.
    /// - list (rebuild steps, amortised likewise): list count (36, and the ids, 4) and its scan
    ///   (16); list stash (4; per current slot its partner word read and copied, 8; per valid
    ///   record read and copied, 2 × R); list fill and the history carry (40; per slot 32:
    ///   partner written, incoming count, the current word found and the new one written, the
    ///   partners' ids; per record moved 2 × R); incoming scan (16), fill (8 + 24 per slot,
    ///   with the owner's id as key), sort with the keys and the new run starts (12 + 20 per
    ///   slot), the slot positions (8 per slot) → 132 + 92 per slot + 4 R per contact, R the
    ///   bytes of a stored record's fields (`split::RecordLayout::data_bytes`: 36 with every
    ///   field, 32 for a Hertz-family law with energy booked, 16 without); with the force pass's
    ///   schedule (`SimParams::balanced`) its pass
    ///   (`schedule.wgsl`: the run start read, the schedule written, 8) → 140.
    /// - `forces`: read own pos_block, pos_offset, motion (64), run start (4), write force
    ///   (32) → 100, and where it takes the schedule the particle each thread takes (4) → 104;
    ///   per slot the partner word (4); per workgroup the step's work written (16,
    ///   → 16 / 64); per active owned contact the slot-history record read (R) and written
    ///   (R; the record's padding untouched), the partner's share
    ///   written (24), and at a contact's start or end its partner word, slot position and
    ///   incoming entry (12 each time; counted here as 12 per contact-step, an upper bound
    ///   while contacts last 3 steps or more: a collision at the scenes' time steps lasts
    ///   tens) → 2 R + 36 (108 with every field, 100 for the bench bed's records); a wall or
    ///   mesh contact's table lookup and insert (≤ 2 × 44 + 4, full records) stays below that.
    /// - kick closing each batch of `steps_per_submit` steps, beyond the gather `drift`
    ///   already counts: read and write motion and force (128) / steps per batch.
    ///
    /// Where rolling work is booked (`SimParams::rolling_booked`, not the settle box this
    /// models), the kicks also write each particle's spin into `motion`'s third row (16) and
    /// `forces` reads it for both bodies of every contact (2 × 16): not counted here.
    pub fn traffic_model(&self) -> Result<TrafficModel> {
        let n = self.buffers.n_particles.max(1) as f64;
        let st = self.read_step_state()?;
        let slots = self.list_slots()? as f64 / n;
        let cells = self.grid.n_cells as f64 / n;
        // the run's steps and builds, across imports and exchanges (a bench of a hopper ends at
        // an exchange: its own count has no steps yet)
        let steps = self.earlier_builds.0 + (self.steps_done - self.steps_at_start);
        let builds = self.earlier_builds.1 + st.rebuilds as u64;
        let steps_per_rebuild = if builds > 0 { (steps as f64 / builds as f64).max(1.0) } else { 1.0 };
        let group = crate::layout::consts::WORKGROUP_SIZE as f64;
        let batch = self.batch_len() as f64;
        // the bytes of a slot record the passes move (`split::RecordLayout`)
        let record = self.buffers.split.record.data_bytes() as f64;
        let renumber = match self.sim.renumber_every {
            0 => 0.0,
            every => (464.0 + 8.0 * slots) / every as f64,
        };
        // the schedule's pass runs at every build where it is on; `forces` reads it where it pays
        let schedule = if self.sim.balanced != 0 { 4.0 } else { 0.0 };
        let taken = self.schedule_taken(&st);
        // where slots are placed, each slot's place: at a build read and stashed by
        // `list_stash`, read back and written by `list_fill`, and the force pass's column
        // starts written; `forces` reads a column start per SIMD group and column (4 bytes per
        // 32 slots) and the slot's own place only past column SCHEDULE_LONGEST
        let place = if self.buffers.split.places { 4.0 } else { 0.0 };
        let mut passes = vec![
            ("drift", 164.0 + 4.0 * slots + 80.0 / group, 24.0),
            ("list_plan", 530.0 / n, 0.0),
            ("grid (rebuild steps)", (64.0 + 28.0 * cells) / steps_per_rebuild + renumber, 0.0),
            ("list (rebuild steps)", (132.0 + 2.0 * schedule + place + (92.0 + 4.0 * place) * slots) / steps_per_rebuild, 4.0 * record / steps_per_rebuild),
            ("forces", 100.0 + if taken { 4.0 } else { 0.0 } + (4.0 + place / 32.0) * slots + 16.0 / group, 2.0 * record + 36.0),
            ("advance", 128.0 / n, 0.0),
            ("kick (batch end)", 128.0 / batch, 0.0),
        ];
        if let Some(bd) = &self.bodies {
            // a scene with bodies, per component-step: in a step `body_kick` (per body its two
            // int rows and seven state rows read and written, 2 × 144 B; per component its own
            // rows, 32 B, and the incoming shares, as `drift` gathers them, and its offset,
            // 16 B) → `body_place` (per component its offset row, 16 B, its body's int and
            // state rows, 144 B per body; position block and offset, motion rows v and ω and
            // image written, 80 B; the work fold as `drift`'s): the step's "drift". At a
            // batch's end `gather` (the totals written, 32 B, more) and `body_kick` reading
            // them: its "kick" (the names `talus bench --profile` times them under)
            let per_body = n / bd.buffers.n_bodies.max(1) as f64;
            let place = 96.0 + 144.0 / per_body + 80.0 / group;
            let body_step = (48.0 + 4.0 * slots + 288.0 / per_body) + place;
            let batch_end = (64.0 + 4.0 * slots) + (48.0 + 288.0 / per_body) + place;
            for p in passes.iter_mut() {
                match p.0 {
                    "drift" => *p = ("drift", body_step, 24.0),
                    "kick (batch end)" => *p = ("kick (batch end)", batch_end / batch, 24.0 / batch),
                    _ => {}
                }
            }
        }
        Ok(TrafficModel {
            bytes_per_particle_step: passes.iter().map(|p| p.1).sum(),
            bytes_per_contact_step: passes.iter().map(|p| p.2).sum(),
            slots_per_particle: slots,
            steps_per_rebuild,
            passes,
        })
    }

    /// How the particles are stored and the force pass scheduled now (`talus bench` reports
    /// it; reads the step state).
    pub fn layout(&self) -> Result<GpuLayout> {
        let schedule = if self.sim.balanced == 0 {
            "off"
        } else if self.schedule_taken(&self.read_step_state()?) {
            "taken"
        } else {
            "on, not taken (the runs are alike)"
        };
        Ok(GpuLayout {
            cell_order: self.cell_order,
            renumber_every: (self.sim.renumber_every > 0).then_some(self.sim.renumber_every as u64),
            schedule,
            shader_checks: self.ctx.shader_checks,
            early_loads: self.ctx.force_early_loads,
            reload_own: self.ctx.reload_own,
            slot_places: self.buffers.split.places,
            record_bytes: self.buffers.split.record.bytes(),
            contact_model: self.pipelines.contact.model.and_then(crate::contact::params::ContactModel::from_code).map(|c| c.name()),
            contact_models: self.pipelines.contact.model_codes().map(|codes| codes.into_iter().filter_map(crate::contact::params::ContactModel::from_code).map(|c| c.name()).collect()),
            contact_booking: self.pipelines.contact.energy_tracking,
            contact_adhesion: self.buffers.adhesion.then(|| self.pipelines.contact.adhesion.and_then(crate::contact::params::Adhesion::from_code).map(|c| c.name())),
        })
    }

    /// The force pass's schedule as last written (`shaders/schedule.wgsl`): for each thread,
    /// the storage index of the particle it takes; for each storage index its run length in
    /// the list (slots it owns); and whether the force pass takes it (the schedule is on and
    /// pays, `SCHEDULE_GAIN`).
    pub fn force_schedule(&self) -> Result<(Vec<u32>, Vec<u32>, bool)> {
        let n = self.buffers.n_particles as u64;
        let words: Vec<u32> = bytemuck::pod_collect_to_vec(&readback::read_buffer_range(&self.ctx, &self.buffers.list_start, 0, 4 * (2 * n + 1))?);
        let runs = words[..n as usize + 1].windows(2).map(|w| w[1] - w[0]).collect();
        let taken = self.schedule_taken(&self.read_step_state()?);
        Ok((words[n as usize + 1..].to_vec(), runs, taken))
    }

    /// Where slots are placed (`split::SplitLayout::places`), the place of every slot of the
    /// list as last built (the index of its word, record, share and incoming entry), in slot order;
    /// `None` where they are not.
    pub fn slot_places(&self) -> Result<Option<Vec<u32>>> {
        Ok(self.slot_words()?.1)
    }

    /// The partner word of every slot of the list as last built, in slot order, and where
    /// slots are placed their places (the word at the slot's place, `split::slot_word_wgsl`).
    fn slot_words(&self) -> Result<(Vec<u32>, Option<Vec<u32>>)> {
        let slots = self.list_slots()? as u64;
        let per = split::slot_words(self.buffers.split.places) as u64;
        let words = readback::read_sources(&self.ctx, &[readback::Source::Split(&self.buffers.list_partner, per * slots)])?;
        let words: Vec<u32> = bytemuck::pod_collect_to_vec(&words[0]);
        if per == 1 {
            return Ok((words, None));
        }
        let places: Vec<u32> = words.iter().skip(1).step_by(2).copied().collect();
        Ok((places.iter().map(|&p| words[2 * p as usize]).collect(), Some(places)))
    }

    /// How the force pass's SIMD groups touch the slot-history records of the active contacts,
    /// in the list as last built (`access::record_access`): lines and sectors per contact as
    /// laid out, and with each record at its own slot.
    pub fn record_access(&self) -> Result<access::RecordAccess> {
        let (schedule, runs, taken) = self.force_schedule()?;
        let n = runs.len();
        let mut start = vec![0u32; n + 1];
        for i in 0..n {
            start[i + 1] = start[i] + runs[i];
        }
        let order: Vec<u32> = if taken { schedule[..n].to_vec() } else { (0..n as u32).collect() };
        let (words, places) = self.slot_words()?;
        let active = |k: usize| words[k] & SLOT_ACTIVE_BIT != 0;
        let record = self.buffers.split.record;
        Ok(match &places {
            Some(p) => access::record_access(&order, &start, active, |k| p[k] as u64, 8, record),
            None => access::record_access(&order, &start, active, |k| k as u64, 4, record),
        })
    }

    /// Whether `forces` takes the schedule in the state `st`: it is on and its summed longest
    /// runs are below `SCHEDULE_GAIN` of storage order's (the test of `forces.wgsl`, in f32).
    fn schedule_taken(&self, st: &layout::StepStateRead) -> bool {
        self.sim.balanced != 0 && (self.buffers.split.places || (st.schedule_sorted as f32) < crate::layout::consts::SCHEDULE_GAIN as f32 * st.schedule_plain as f32)
    }

    /// Slots of the neighbour list as last built.
    pub fn list_slots(&self) -> Result<u32> {
        let n = self.buffers.n_particles as u64;
        let b = &self.buffers;
        let bytes = readback::read_buffer_range(&self.ctx, &b.list_start, 4 * n, 4)?;
        Ok(bytemuck::pod_read_unaligned(&bytes))
    }

    /// The device memory the backend plans with: the adapter's, or less where
    /// `GpuOptions::max_device_bytes` or `TALUS_GPU_MAX_DEVICE_BYTES` lowers it (`None` where the
    /// adapter does not report its memory and nothing lowers it).
    /// The id of the particle at every storage index of the device (`gpu::order`).
    pub fn stored_ids(&mut self) -> Result<Vec<u32>> {
        self.sync_order(false)?;
        Ok(self.order.tags(self.buffers.n_particles as usize))
    }

    /// The storage order as the device holds it: read back from `tag` (4 B per particle) where
    /// the device may have renumbered since the host last knew it (a step at a positive multiple
    /// of `SimParams::renumber_every` has run since), or always with `force`.
    pub(crate) fn sync_order(&mut self, force: bool) -> Result<()> {
        let every = self.sim.renumber_every as u64;
        if every == 0 {
            return Ok(());
        }
        let first = self.order_step.max(1).div_ceil(every) * every;
        if !force && first >= self.steps_done {
            return Ok(());
        }
        let n = self.buffers.n_particles as usize;
        if n > 0 {
            let bytes = read_buffer_range(&self.ctx, &self.buffers.tag, 0, 4 * n as u64)?;
            self.order = order::Order::checked(bytemuck::pod_collect_to_vec(&bytes), n).ok_or_else(|| TalusError::Device("the device's storage order (`tag`) is not an order of its particles".into()))?;
        }
        self.order_step = self.steps_done;
        Ok(())
    }

    pub fn memory_budget(&self) -> Option<u64> {
        self.memory
    }

    /// Device memory of every buffer the backend holds, bytes.
    pub fn device_bytes(&self) -> u64 {
        self.buffers.device_bytes() + self.meshes.data.size() + self.bodies.as_ref().map_or(0, |b| b.device_bytes())
    }
}

fn v3(v: [f32; 4]) -> [f64; 3] {
    [v[0] as f64, v[1] as f64, v[2] as f64]
}

impl Backend for GpuBackend {
    fn kind(&self) -> &'static str {
        "gpu"
    }

    fn adapter(&self) -> String {
        self.ctx.describe()
    }

    fn layout_note(&self) -> Option<String> {
        self.buffers.split.describe()
    }

    fn step(&mut self, n: u64) -> Result<()> {
        self.run_steps(n)
    }

    fn steps_done(&self) -> u64 {
        self.steps_done
    }

    fn snapshot(&mut self) -> Result<Snapshot> {
        self.check_usable()?;
        let s = self.read_snapshot()?;
        self.last_snapshot_step = Some(s.step);
        Ok(s)
    }

    fn energies(&mut self) -> Result<Energies> {
        self.check_usable()?;
        Ok(self.reduce_energies()?.0.plus_carried(&self.carried))
    }

    fn wall_loads(&mut self) -> Result<Vec<WallLoad>> {
        self.check_usable()?;
        self.read_wall_loads()
    }

    fn contact_count(&mut self) -> Result<u64> {
        self.check_usable()?;
        Ok(self.reduce_energies()?.1)
    }

    fn export_state(&mut self) -> Result<crate::model::state::ParticleState> {
        self.check_usable()?;
        self.export()
    }

    fn import_state(&mut self, state: &crate::model::state::ParticleState) -> Result<()> {
        // a new state: a backend stopped by a blow-up runs again from it
        self.stopped = None;
        self.import(state)
    }

    fn set_carried(&mut self, carried: Energies) {
        self.carried = carried;
    }

    fn carried(&self) -> Energies {
        self.carried
    }

    fn export_exact(&mut self) -> Result<crate::model::state::ExactState> {
        self.export_exact_state()
    }

    fn import_exact(&mut self, exact: &crate::model::state::ExactState) -> Result<()> {
        self.import_exact_state(exact)
    }

    fn exchange_view(&mut self, query: &crate::model::exchange::ExchangeQuery) -> Result<Option<crate::model::exchange::ExchangeView>> {
        GpuBackend::exchange_view(self, query)
    }

    fn apply_exchange(&mut self, change: &crate::model::exchange::ExchangeChange) -> Result<()> {
        GpuBackend::apply_exchange(self, change)
    }
}

impl GpuBackend {
    /// The particles as they are on the device now (one readback).
    pub(crate) fn read_snapshot(&mut self) -> Result<Snapshot> {
        self.sync_order(false)?;
        let n = self.buffers.n_particles as usize;
        let v4 = 16 * n as u64;
        let b = &self.buffers;
        let data = read_sources(&self.ctx, &[Whole(&b.pos_block, v4), Whole(&b.pos_offset, v4), Split(&b.motion, b.split.motion_rows as u64 * n as u64), Split(&b.force, 2 * n as u64), b.image_source(n as u64)])?;
        // copies (the readback bytes carry no alignment guarantee and may be empty), in id order
        let o = &self.order;
        let blocks: Vec<[i32; 4]> = o.to_ids(&bytemuck::pod_collect_to_vec(&data[0]), 1);
        let image: Vec<[i32; 4]> = o.to_ids(&bytemuck::pod_collect_to_vec(&data[4]), 1);
        let period = self.period;
        let f4 = |k: usize, per: usize| -> Vec<[f32; 4]> { o.to_ids(&bytemuck::pod_collect_to_vec(&data[k]), per) };
        let rows = b.split.motion_rows as usize;
        let (off, motion, force) = (f4(1, 1), f4(2, rows), f4(3, 2));
        let (vel, om) = (|i: usize| motion[rows * i], |i: usize| motion[rows * i + 1]);
        let (fo, to) = (|i: usize| force[2 * i], |i: usize| force[2 * i + 1]);
        let blk = self.grid.block;
        let mut s = Snapshot { step: self.steps_done, time: self.steps_done as f64 * self.dt, ..Default::default() };
        for i in 0..n {
            // unwrapped: + image × period on the periodic axes
            s.position.push(std::array::from_fn(|a| grid::join(blocks[i][a], off[i][a], blk) + image[i][a] as f64 * period[a]));
            s.radius.push(self.radius[i]);
            s.velocity.push(v3(vel(i)));
            s.angular_velocity.push(v3(om(i)));
            s.force.push(v3(fo(i)));
            s.torque.push(v3(to(i)));
        }
        s.bodies = self.read_bodies()?;
        Ok(s)
    }
}

impl GpuBackend {
    /// The bodies as the device holds them now (one readback; empty without bodies).
    pub(crate) fn read_bodies(&self) -> Result<crate::model::body::Bodies> {
        let Some(bd) = &self.bodies else { return Ok(Default::default()) };
        let (ni, ns) = bd.raw_sizes();
        let data = read_sources(&self.ctx, &[Whole(&bd.buffers.int, ni), Whole(&bd.buffers.state, ns)])?;
        Ok(bd.table(&data[0], &data[1], self.grid.block))
    }
}

