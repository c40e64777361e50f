//! Running a scene: choose a backend (`open_backend`) and drive the run loop,
//! `crate::simulation::Simulation`, to the end: a progress bar, the stop flag a signal sets,
//! and the stop record of a run a check stopped (`record_stop`). The loop itself (batches of
//! `output_every`, particles entering and leaving, `energy.csv`, `walls.csv`, `outflow.csv`,
//! VTU snapshots + `particles.pvd`, `summary.json`, `checkpoint.talus`) is the simulation's.
//! `talus run` is a thin layer over `open_backend` and `run_scene`; `talus resume` continues a
//! checkpoint's run with `continue_run` (`crate::resume`).

use std::borrow::Cow;
use std::io::IsTerminal;
use std::path::Path;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::backend::Backend;
use crate::checkpoint::{RunProgress, SceneRecord};
use crate::cpu::CpuBackend;
use crate::error::{Result, TalusError};
use crate::gpu::{GpuBackend, GpuOptions};
use crate::output::atomic::create_dir_all;
use crate::output::{write_vtu, PvdIndex, Summary, VtuEncoding};
use crate::setup::Setup;
use crate::simulation::{BackendSlot, Simulation};

pub use crate::simulation::{bodies_file, describe_time_step, snapshot_file, CheckpointOptions, EnergySentinel, ENERGY_PNG, RENDER_PNG};

/// Which step loop to run on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BackendChoice {
    /// A hardware GPU when one is found, else the CPU (with a one-line notice): a software
    /// adapter (device type `Cpu`: llvmpipe/lavapipe, WARP, SwiftShader) counts as none.
    #[default]
    Auto,
    /// The GPU (any adapter, software ones included) or an error.
    Gpu,
    /// The f64 CPU reference.
    Cpu,
}

/// What `BackendChoice::Auto` resolves to on this machine.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AutoPick {
    /// A hardware adapter was found: open the GPU backend.
    Gpu,
    /// Run on the CPU; the one-line notice says why (no adapter, or only a software one, named).
    Cpu { notice: String },
}

/// The one place `Auto` is decided (`open_backend`, `bench::gpu_for`): the adapter the GPU
/// backend would open is looked at without opening it; none, or a software emulation, means
/// the CPU backend (it is faster than a GPU emulated on the same cores).
pub fn resolve_auto() -> AutoPick {
    match crate::gpu::context::preferred_adapter() {
        Ok(info) if crate::gpu::context::is_software(info.device_type) => AutoPick::Cpu { notice: software_notice(&info.name, &format!("{:?}", info.backend)) },
        Ok(_) => AutoPick::Gpu,
        Err(TalusError::NoAdapter(why)) => AutoPick::Cpu { notice: no_adapter_notice(&why) },
        Err(e) => AutoPick::Cpu { notice: no_adapter_notice(&e.to_string()) },
    }
}

fn software_notice(name: &str, backend: &str) -> String {
    format!("talus: the only GPU adapter is {name} ({backend}), a software emulation; running on the CPU backend (--backend gpu uses it anyway)")
}

fn no_adapter_notice(why: &str) -> String {
    let why = why.lines().next().unwrap_or("").trim();
    format!("talus: no GPU adapter found ({why}); running on the CPU backend")
}

impl FromStr for BackendChoice {
    type Err = TalusError;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "auto" => Ok(BackendChoice::Auto),
            "gpu" => Ok(BackendChoice::Gpu),
            "cpu" => Ok(BackendChoice::Cpu),
            other => Err(TalusError::Other(format!("unknown backend `{other}` (expected auto, gpu or cpu)"))),
        }
    }
}

impl std::fmt::Display for BackendChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BackendChoice::Auto => "auto",
            BackendChoice::Gpu => "gpu",
            BackendChoice::Cpu => "cpu",
        })
    }
}

/// Open the chosen backend for `setup`. `Auto` is decided by `resolve_auto`: without a
/// hardware adapter it opens the CPU backend and the second value holds the one-line notice
/// saying why (other GPU errors are returned).
pub fn open_backend(setup: &Setup, choice: BackendChoice) -> Result<(Box<dyn Backend + Send>, Option<String>)> {
    match choice {
        BackendChoice::Cpu => Ok((Box::new(CpuBackend::new(setup)?), None)),
        BackendChoice::Gpu => Ok((Box::new(GpuBackend::new(setup, GpuOptions::default())?), None)),
        BackendChoice::Auto => match resolve_auto() {
            AutoPick::Cpu { notice } => Ok((Box::new(CpuBackend::new(setup)?), Some(notice))),
            AutoPick::Gpu => match GpuBackend::new(setup, GpuOptions::default()) {
                Ok(gpu) => Ok((Box::new(gpu), None)),
                Err(TalusError::NoAdapter(why)) => Ok((Box::new(CpuBackend::new(setup)?), Some(no_adapter_notice(&why)))),
                Err(e) => Err(e),
            },
        },
    }
}

/// Options of `run_scene`.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Number of steps to run; `None` = the scene's `steps`.
    pub steps: Option<u64>,
    /// Show a progress bar (only drawn when stderr is a terminal).
    pub progress: bool,
    /// Write `checkpoint.talus` into the output directory (at the end, every so many outputs,
    /// and when `stop` ends the run); `None`: no checkpoints.
    pub checkpoint: Option<CheckpointOptions>,
    /// Checked between batches: once set (by a Ctrl-C handler), the run writes its checkpoint
    /// at the last completed batch and returns `TalusError::Interrupted`.
    pub stop: Option<Arc<AtomicBool>>,
}

fn progress_bar(total: u64) -> Option<indicatif::ProgressBar> {
    let style = indicatif::ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} steps, ETA {eta} {msg}",
    )
    .ok()?;
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(style);
    Some(bar)
}

/// Run `setup` on `backend` from its current step, writing outputs into `out_dir` (created).
///
/// The loop steps in batches of `setup.output_every` (one `Backend::step` call per batch, no
/// per-step host work). After every batch it reads the wall loads, then lets particles leave
/// through the outlets and enter through the insertions (`FlowDriver::exchange`, scenes with
/// `insert` or `outlets`; a row of `outflow.csv`). After step 0 and every batch it appends a
/// row to `energy.csv` (and, after every batch, one row per plane and mesh wall to `walls.csv`
/// when the scene has walls); at step 0,
/// every `snapshot_every`-th output and the last step it writes a VTU snapshot and rewrites
/// `particles.pvd`; after every batch the scene's measurements observe the state
/// (`Measurements::observe`). At the end it writes `summary.json` (with the measurement
/// results) and returns the summary. With `opts.checkpoint` it also writes
/// `checkpoint.talus` (see `RunOptions`).
pub fn run_scene(setup: &Setup, backend: &mut dyn Backend, out_dir: &Path, opts: RunOptions) -> Result<Summary> {
    run_from(setup, backend, out_dir, opts, None)
}

/// Continue a run whose loop state at the backend's current step is `progress` (a
/// checkpoint's; the backend holds the checkpoint's state): the CSV logs go on from the rows
/// they had, `particles.pvd` keeps the earlier snapshots found in `out_dir` and a snapshot of
/// the current step is added when the index has none, and insertions, outlets, measurements
/// and the rest watch go on where they were, so the outputs are those of a run that never
/// stopped. `opts.steps` counts from the current step.
pub fn continue_run(setup: &Setup, backend: &mut dyn Backend, out_dir: &Path, opts: RunOptions, progress: RunProgress) -> Result<Summary> {
    run_from(setup, backend, out_dir, opts, Some(progress))
}

fn run_from(setup: &Setup, backend: &mut dyn Backend, out_dir: &Path, opts: RunOptions, progress: Option<RunProgress>) -> Result<Summary> {
    let scene = opts.checkpoint.as_ref().map(|c| c.scene.clone());
    run_loop(setup, backend, out_dir, opts, progress).map_err(|e| record_stop(setup, scene.as_ref(), out_dir, e))
}

fn run_loop(setup: &Setup, backend: &mut dyn Backend, out_dir: &Path, opts: RunOptions, progress: Option<RunProgress>) -> Result<Summary> {
    let total = opts.steps.unwrap_or(setup.steps);
    let mut sim = Simulation::start(Cow::Borrowed(setup), BackendSlot::Borrowed(backend), Some(out_dir), opts.steps, opts.checkpoint, progress)?;
    let bar = if opts.progress && std::io::stderr().is_terminal() { progress_bar(total) } else { None };
    while !sim.is_done() {
        if opts.stop.as_ref().is_some_and(|s| s.load(Ordering::SeqCst)) {
            if let Some(bar) = &bar {
                bar.finish_and_clear();
            }
            return Err(sim.interrupt());
        }
        let end = sim.end_step();
        sim.advance(end)?;
        if let Some(bar) = &bar {
            bar.set_position(sim.steps_done() - sim.start_step());
            let secs = sim.elapsed();
            if secs > 0.0 {
                let rate = sim.particle_steps() / secs;
                bar.set_message(format!("{rate:.3e} particle-steps/s"));
            }
        }
    }
    let contacts_and_summary = sim.finish();
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    contacts_and_summary
}

/// What a run stopped by a check (`TalusError::BlowUp`) leaves in its output directory
/// besides the outputs up to its last good state: the scene it ran and where it stopped.
pub const STOPPED_JSON: &str = "stopped.json";

/// After a run stopped by a check (`TalusError::BlowUp`): `render.png` of the last snapshot at
/// or before the step it stopped at (the last good state), and `stopped.json` naming the scene
/// (as `summary.json` does: with its absolute path, so `talus render` draws its walls from
/// anywhere, and the run's `--set` overrides), the step, that snapshot and the message; the message then says where they are. Other errors pass through.
pub fn record_stop(setup: &Setup, scene_record: Option<&SceneRecord>, out_dir: &Path, e: TalusError) -> TalusError {
    let TalusError::BlowUp { step, particle, message } = e else { return e };
    let snapshots = out_dir.join("snapshots");
    let last = std::fs::read_dir(&snapshots)
        .into_iter()
        .flatten()
        .filter_map(|f| f.ok().map(|f| f.path()))
        .filter_map(|p| crate::render::snapshot_step(&p).filter(|&k| k <= step && p.extension().is_some_and(|x| x == "vtu")).map(|k| (k, p)))
        .max_by_key(|(k, _)| *k);
    // as summary.json names it, with `path` absolute as well
    let mut scene = crate::output::Summary::scene_of(setup, scene_record);
    scene.path = scene.absolute_path.clone();
    let kept = last.as_ref().map(|(k, p)| -> Result<()> {
        let opts = crate::render::RenderOptions::default();
        let outlines = crate::render::wall_outlines(setup, *k as f64 * setup.dt, opts.view);
        crate::render::render_file(p, &outlines, opts, &out_dir.join(RENDER_PNG))?;
        Ok(())
    });
    let record = serde_json::json!({
        "scene": scene,
        "stopped_at_step": step,
        "particle": particle,
        "last_good_snapshot": last.as_ref().map(|(_, p)| format!("snapshots/{}", p.file_name().unwrap_or_default().to_string_lossy())),
        "message": message,
    });
    let written = crate::output::write_atomic(&out_dir.join(STOPPED_JSON), format!("{record:#}\n").as_bytes());
    let note = match (kept, written) {
        (Some(Ok(())), Ok(())) => format!("; {} holds {RENDER_PNG} of the last good state and {STOPPED_JSON} (the scene: `talus render {}` draws it with its walls)", out_dir.display(), out_dir.display()),
        (None, Ok(())) => format!("; no snapshot to render; {} names the scene", out_dir.join(STOPPED_JSON).display()),
        (Some(Err(w)), _) | (_, Err(w)) => format!("; the stop record could not be written: {w}"),
    };
    TalusError::BlowUp { step, particle, message: message + &note }
}

/// A run that stops before its first step (the backend refused the start state, e.g. an
/// overlap beyond the limit): write the scene's start state as the step-0 snapshot (with
/// `particles.pvd`) into `out_dir`, then `record_stop`. Other errors pass through.
pub fn record_start_stop(setup: &Setup, scene_record: Option<&SceneRecord>, out_dir: &Path, e: TalusError) -> TalusError {
    if !matches!(e, TalusError::BlowUp { .. }) {
        return e;
    }
    let p = &setup.particles;
    let s = crate::backend::Snapshot {
        step: 0,
        time: 0.0,
        position: p.position.clone(),
        velocity: p.velocity.clone(),
        angular_velocity: p.angular_velocity.clone(),
        force: vec![[0.0; 3]; p.len()],
        torque: vec![[0.0; 3]; p.len()],
        radius: p.radius.clone(),
        bodies: setup.bodies.clone(),
    };
    let file = snapshot_file(0);
    let written = create_dir_all(&out_dir.join("snapshots")).and_then(|()| write_vtu(&out_dir.join(&file), &s, VtuEncoding::Base64)).and_then(|()| {
        let mut pvd = PvdIndex::new(out_dir.join("particles.pvd"));
        pvd.push(0.0, &file)
    });
    match written {
        Ok(()) => record_stop(setup, scene_record, out_dir, e),
        Err(w) => match e {
            TalusError::BlowUp { step, particle, message } => TalusError::BlowUp { step, particle, message: format!("{message}; the start state could not be written: {w}") },
            e => e,
        },
    }
}

