//! Running a scene: choose a backend, step it in batches of `output_every`, let particles
//! enter and leave between batches (`crate::flow`), and write the outputs (`energy.csv`,
//! `walls.csv`, `outflow.csv`, VTU snapshots + `particles.pvd`, `summary.json`, and
//! `checkpoint.talus` when asked). `talus run` is a thin layer over `open_backend` and
//! `run_scene`; `talus resume` continues a checkpoint's run with `continue_run`
//! (`crate::resume`).

use std::io::IsTerminal;
use std::path::Path;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use crate::backend::Backend;
use crate::checkpoint::inputs::InputFile;
use crate::checkpoint::{Checkpoint, RestProgress, RunProgress, SceneRecord, SentinelProgress, CHECKPOINT_FILE};
use crate::cpu::CpuBackend;
use crate::error::{Result, TalusError};
use crate::measure::Measurements;
use crate::gpu::{GpuBackend, GpuOptions};
use crate::output::atomic::create_dir_all;
use crate::output::summary::TimeStepSummary;
use crate::flow::FlowDriver;
use crate::output::{write_vtu, EnergyCsv, EnergySummary, FlowSummary, OutflowCsv, PvdIndex, RestSummary, Summary, VtuEncoding, WallsCsv};
use crate::setup::{RestCriterion, Setup, TimeStepChoice};

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
pub fn open_backend(setup: &Setup, choice: BackendChoice) -> Result<(Box<dyn Backend>, Option<String>)> {
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

/// One line describing the time step, e.g. `dt = 1.2e-6 s (auto: 0.2 × Rayleigh step 6e-6 s)`.
pub fn describe_time_step(setup: &Setup) -> String {
    match &setup.dt_choice {
        TimeStepChoice::Explicit => format!("dt = {} s (explicit)", crate::error::fmt_sci(setup.dt)),
        TimeStepChoice::Auto { fraction, rayleigh } => {
            let sci = crate::error::fmt_sci;
            format!("dt = {} s (auto: {} × Rayleigh step {} s)", sci(setup.dt), crate::error::fmt_num(*fraction), sci(*rayleigh))
        }
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

/// What a run's checkpoints record besides the state: the scene and the files it reads.
#[derive(Clone, Debug)]
pub struct CheckpointOptions {
    pub scene: SceneRecord,
    pub inputs: Vec<InputFile>,
    /// Outputs between checkpoints (0: only at the end and when stopped); `None`: the scene's
    /// `checkpoint_every`.
    pub every: Option<u64>,
}

impl CheckpointOptions {
    /// For the scene file `scene` of `setup`: its text and the files it read, by checksum.
    pub fn for_scene(scene: SceneRecord, setup: &Setup, every: Option<u64>) -> Result<CheckpointOptions> {
        Ok(CheckpointOptions { scene, inputs: crate::checkpoint::inputs::record(&setup.input_files)?, every })
    }
}

/// The energy chart `run_scene` writes into the output directory (`plot::energy_chart`).
pub const ENERGY_PNG: &str = "energy.png";
/// The picture of the final state `run_scene` writes (`render::render_png`, default view and colour).
pub const RENDER_PNG: &str = "render.png";

/// File name of the snapshot at `step`, relative to the output directory.
pub fn snapshot_file(step: u64) -> String {
    format!("snapshots/particles_{step:010}.vtu")
}

/// The bodies file beside snapshot `step` (scenes with rigid clumps), relative to the run
/// directory.
pub fn bodies_file(step: u64) -> String {
    format!("snapshots/bodies_{step:010}.csv")
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
    let every = setup.output_every.max(1);
    if progress.is_none() {
        for note in crate::scene::start_notes(setup, opts.steps) {
            eprintln!("talus: {note}");
        }
    }
    let mut n = setup.particles.len();
    let mut flow = FlowDriver::new(setup)?;
    create_dir_all(out_dir)?;
    if setup.snapshot_every > 0 {
        create_dir_all(&out_dir.join("snapshots"))?;
    }
    let load_points = setup.load_points();
    let mut measurements = Measurements::new(setup);
    let snapshot = |backend: &mut dyn Backend, pvd: &mut PvdIndex| -> Result<()> {
        let mut s = backend.snapshot()?;
        // a snapshot with a non-finite value is never written
        check_snapshot(setup, &s)?;
        // snapshots hold unwrapped positions; files show the particles inside the periodic box
        if setup.periodic.iter().any(|&p| p) {
            s.position.iter_mut().for_each(|x| *x = setup.wrap(glam::DVec3::from(*x)).0.to_array());
        }
        let file = snapshot_file(s.step);
        create_dir_all(&out_dir.join("snapshots"))?;
        write_vtu(&out_dir.join(&file), &s, VtuEncoding::Base64)?;
        if !s.bodies.is_empty() {
            crate::output::bodies_csv::write_bodies_csv(&out_dir.join(bodies_file(s.step)), &s.bodies, &setup.clump_template_names())?;
        }
        pvd.push(s.step as f64 * setup.dt, &file)
    };

    let start_step = backend.steps_done();
    let end_step = start_step + total;
    let t0 = Instant::now();
    let mut outputs = 0u64;
    let mut last_snapshot = start_step;
    let mut rest = setup.until_rest.map(|c| RestWatch::new(c, start_step as f64 * setup.dt, 0.0));
    let (mut csv, mut walls_csv, mut outflow_csv, mut pvd);
    let mut energies = backend.energies()?;
    check_energies(&energies, start_step)?;
    let mut sentinel = EnergySentinel::new(setup, &energies, start_step, progress.as_ref().and_then(|p| p.sentinel));
    match progress {
        None => {
            csv = EnergyCsv::new(out_dir.join("energy.csv"), crate::output::energy_csv::Kept::of(&setup));
            walls_csv = (!load_points.is_empty()).then(|| WallsCsv::new(out_dir.join("walls.csv")));
            outflow_csv = flow.as_ref().map(|_| OutflowCsv::new(out_dir.join("outflow.csv"), setup));
            pvd = PvdIndex::new(out_dir.join("particles.pvd"));
            rest = rest.map(|r| RestWatch { peak: energies.kinetic(), ..r });
            csv.push(start_step, start_step as f64 * setup.dt, &energies)?;
            if let (Some(f), Some(c)) = (&flow, &mut outflow_csv) {
                c.push(start_step, start_step as f64 * setup.dt, f.totals())?;
            }
            if setup.snapshot_every > 0 {
                snapshot(backend, &mut pvd)?;
            }
        }
        Some(p) => {
            let mismatch = |what: &str| TalusError::Other(format!("the run's saved progress does not fit the scene: {what}"));
            csv = EnergyCsv::continued(out_dir.join("energy.csv"), &p.energy_csv, crate::output::energy_csv::Kept::of(&setup))?;
            walls_csv = match (load_points.is_empty(), &p.walls_csv) {
                (true, None) => None,
                (false, Some(text)) => Some(WallsCsv::continued(out_dir.join("walls.csv"), text)?),
                _ => return Err(mismatch("walls.csv")),
            };
            outflow_csv = match (&mut flow, p.flow) {
                (None, None) => None,
                (Some(f), Some(state)) => {
                    f.restore(state)?;
                    n = f.totals().held_count as usize;
                    Some(OutflowCsv::continued(out_dir.join("outflow.csv"), p.outflow_csv.as_deref().ok_or_else(|| mismatch("outflow.csv"))?)?)
                }
                _ => return Err(mismatch("insertions and outlets")),
            };
            measurements.restore(&p.measurements)?;
            (outputs, last_snapshot) = (p.outputs, p.last_snapshot);
            rest = match (rest, p.rest) {
                (Some(r), Some(saved)) => Some(RestWatch { peak: saved.peak, peak_time: saved.peak_time, below: saved.below, ..r }),
                (None, None) => None,
                _ => return Err(mismatch("until_rest")),
            };
            // the earlier snapshots that are there stay listed (paths relative to this
            // directory: `talus resume` lists an earlier run's as `../run/snapshots/…`,
            // `crate::resume::progress_in`)
            let kept = p.pvd.into_iter().filter(|(_, f)| out_dir.join(f).is_file()).collect();
            pvd = PvdIndex::continued(out_dir.join("particles.pvd"), kept)?;
            // (an earlier run's snapshot of this step, listed as `../run/snapshots/…`, counts)
            let this_step = snapshot_file(start_step);
            let this_step = this_step.rsplit('/').next().unwrap_or_default();
            if setup.snapshot_every > 0 && !pvd.entries().iter().any(|(_, f)| f.rsplit('/').next() == Some(this_step)) {
                snapshot(backend, &mut pvd)?;
            }
        }
    }

    let checkpoint_every = opts.checkpoint.as_ref().map(|c| c.every.unwrap_or(setup.checkpoint_every)).unwrap_or(0);
    let checkpoint_path = out_dir.join(CHECKPOINT_FILE);
    let mut last_checkpoint = None;
    // the whole state at this output boundary into `checkpoint.talus` (with `opts.checkpoint`)
    #[allow(clippy::too_many_arguments)]
    let write_checkpoint = |backend: &mut dyn Backend, outputs: u64, last_snapshot: u64, rest: &Option<RestWatch>, logs: (&EnergyCsv, &Option<WallsCsv>, &Option<OutflowCsv>, &PvdIndex), flow: &Option<FlowDriver>, measurements: &Measurements, sentinel: &Option<EnergySentinel>| -> Result<()> {
        let Some(c) = &opts.checkpoint else { return Ok(()) };
        let run = RunProgress {
            end_step,
            outputs,
            last_snapshot,
            rest: rest.as_ref().map(|r| RestProgress { peak: r.peak, peak_time: r.peak_time, below: r.below }),
            energy_csv: logs.0.text().to_string(),
            walls_csv: logs.1.as_ref().map(|w| w.text().to_string()),
            outflow_csv: logs.2.as_ref().map(|o| o.text().to_string()),
            pvd: logs.3.entries().to_vec(),
            flow: flow.as_ref().map(|f| f.state()),
            measurements: measurements.state(),
            sentinel: sentinel.as_ref().map(|s| s.state),
        };
        Checkpoint::capture(setup, &c.scene, &c.inputs, backend, run)?.write(&checkpoint_path)
    };

    let bar = if opts.progress && std::io::stderr().is_terminal() { progress_bar(total) } else { None };
    let mut particle_steps = 0.0;
    while backend.steps_done() < end_step {
        if opts.stop.as_ref().is_some_and(|s| s.load(Ordering::SeqCst)) {
            if let Some(bar) = &bar {
                bar.finish_and_clear();
            }
            let step = backend.steps_done();
            if opts.checkpoint.is_some() && last_checkpoint != Some(step) {
                write_checkpoint(backend, outputs, last_snapshot, &rest, (&csv, &walls_csv, &outflow_csv, &pvd), &flow, &measurements, &sentinel)?;
            }
            return Err(TalusError::Interrupted { step, checkpoint: opts.checkpoint.as_ref().map(|_| checkpoint_path.clone()) });
        }
        let batch = every.min(end_step - backend.steps_done());
        if let Err(e) = backend.step(batch) {
            return Err(keep_last_good(e, backend, &mut pvd, last_snapshot, &snapshot));
        }
        particle_steps += (n as u64 * batch) as f64;
        outputs += 1;
        let step = backend.steps_done();
        let time = step as f64 * setup.dt;
        // loads of the batch's last step, before particles leave or enter
        let loads = match walls_csv {
            Some(_) => backend.wall_loads()?,
            None => Vec::new(),
        };
        if let (Some(f), Some(c)) = (&mut flow, &mut outflow_csv) {
            f.exchange(setup, backend)?;
            n = f.totals().held_count as usize;
            c.push(step, time, f.totals())?;
        }
        energies = backend.energies()?;
        check_energies(&energies, step)?;
        if let Some(s) = &mut sentinel {
            s.observe(setup, &energies, step, &pvd)?;
        }
        csv.push(step, time, &energies)?;
        if let Some(w) = &mut walls_csv {
            w.push(step, time, &load_points, &loads)?;
        }
        measurements.observe(step, time, backend, flow.as_ref().map(|f| f.totals()))?;
        let at_rest = rest.as_mut().is_some_and(|r| r.observe(time, energies.kinetic()));
        if setup.snapshot_every > 0 && (outputs % setup.snapshot_every == 0 || step == end_step || at_rest) && step != last_snapshot {
            snapshot(backend, &mut pvd)?;
            last_snapshot = step;
        }
        if checkpoint_every > 0 && outputs.is_multiple_of(checkpoint_every) && step != end_step && !at_rest {
            write_checkpoint(backend, outputs, last_snapshot, &rest, (&csv, &walls_csv, &outflow_csv, &pvd), &flow, &measurements, &sentinel)?;
            last_checkpoint = Some(step);
        }
        if let Some(bar) = &bar {
            bar.set_position(step - start_step);
            let secs = t0.elapsed().as_secs_f64();
            if secs > 0.0 {
                let rate = particle_steps / secs;
                bar.set_message(format!("{rate:.3e} particle-steps/s"));
            }
        }
        if at_rest {
            break;
        }
    }
    if last_checkpoint != Some(backend.steps_done()) {
        write_checkpoint(backend, outputs, last_snapshot, &rest, (&csv, &walls_csv, &outflow_csv, &pvd), &flow, &measurements, &sentinel)?;
    }
    let contacts = backend.contact_count()?;
    let wall = t0.elapsed().as_secs_f64();
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }

    let steps = backend.steps_done() - start_step;
    let summary = Summary {
        scene: Summary::scene_of(setup, opts.checkpoint.as_ref().map(|c| &c.scene)),
        backend: backend.kind().to_string(),
        adapter: backend.adapter(),
        particles: n,
        steps,
        dt: setup.dt,
        time_step: TimeStepSummary::from(&setup.dt_choice),
        simulated_time: backend.steps_done() as f64 * setup.dt,
        wall_seconds: wall,
        particle_steps_per_second: if wall > 0.0 { particle_steps / wall } else { 0.0 },
        contacts,
        energy_tracking: setup.energy_tracking(),
        energies: EnergySummary::of(&energies, setup.has_adhesion()),
        flow: flow.as_ref().map(|f| FlowSummary::of(setup, f.totals())),
        measurements: measurements.finish(),
        rest: rest.map(|r| r.summary(energies.kinetic())),
    };
    summary.write(&out_dir.join("summary.json"))?;
    write_pictures(setup, backend, out_dir)?;
    Ok(summary)
}

/// `energy.png` from `energy.csv`, and `render.png` of the final state (the last snapshot when
/// snapshots are written), with the walls' outlines.
fn write_pictures(setup: &Setup, backend: &mut dyn Backend, out_dir: &Path) -> Result<()> {
    let csv = out_dir.join("energy.csv");
    let table = crate::output::read::read_energy_csv(&csv)?;
    crate::plot::energy_chart(&out_dir.join(ENERGY_PNG), &csv, &table)?;
    let mut s = backend.snapshot()?;
    if setup.periodic.iter().any(|&p| p) {
        s.position.iter_mut().for_each(|x| *x = setup.wrap(glam::DVec3::from(*x)).0.to_array());
    }
    let opts = crate::render::RenderOptions::default();
    let outlines = crate::render::wall_outlines(setup, s.step as f64 * setup.dt, opts.view);
    let points = crate::output::read::VtuPoints::from_snapshot(&s);
    crate::render::render_png(&points, &out_dir.join(RENDER_PNG), &outlines, opts, &out_dir.join(RENDER_PNG))?;
    Ok(())
}

/// `until_rest`: the peak kinetic energy so far and how many consecutive outputs were below
/// the fraction of it.
struct RestWatch {
    criterion: RestCriterion,
    peak: f64,
    peak_time: f64,
    below: u64,
}

impl RestWatch {
    fn new(criterion: RestCriterion, time: f64, kinetic: f64) -> Self {
        RestWatch { criterion, peak: kinetic, peak_time: time, below: 0 }
    }

    /// One output: true once the criterion holds (never while the peak is 0: a scene that
    /// starts at rest runs until something moves, or to its `steps`).
    fn observe(&mut self, time: f64, kinetic: f64) -> bool {
        if kinetic > self.peak {
            self.peak = kinetic;
            self.peak_time = time;
        }
        if self.peak > 0.0 && kinetic < self.criterion.kinetic_fraction * self.peak {
            self.below += 1;
        } else {
            self.below = 0;
        }
        self.below >= self.criterion.outputs
    }

    fn summary(&self, final_kinetic: f64) -> RestSummary {
        RestSummary {
            reached: self.below >= self.criterion.outputs,
            kinetic_fraction: self.criterion.kinetic_fraction,
            outputs: self.criterion.outputs,
            peak_kinetic: self.peak,
            peak_time: self.peak_time,
            final_kinetic,
            final_ratio: if self.peak > 0.0 { final_kinetic / self.peak } else { 0.0 },
        }
    }
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

/// After a caught blow-up (`TalusError::BlowUp`; the backend holds the last good state, the
/// start of the failed batch): write that state as a snapshot unless it was the last one
/// written, and say where it is. Other errors pass through.
fn keep_last_good(
    e: TalusError,
    backend: &mut dyn Backend,
    pvd: &mut PvdIndex,
    last_snapshot: u64,
    snapshot: &dyn Fn(&mut dyn Backend, &mut PvdIndex) -> Result<()>,
) -> TalusError {
    let TalusError::BlowUp { step, particle, message } = e else { return e };
    let good = backend.steps_done();
    let kept = if good == last_snapshot && !pvd.is_empty() {
        Ok(())
    } else {
        snapshot(backend, pvd)
    };
    let note = match kept {
        Ok(()) => format!("; last good state (step {good}) kept in {}; outputs up to it are complete", snapshot_file(good)),
        Err(w) => format!("; the last good state (step {good}) could not be written: {w}"),
    };
    TalusError::BlowUp { step, particle, message: message + &note }
}

/// The energy sentinel (docs/scenes.md, "Checks"): with every partition booked (energy tracking
/// on for every pair), the total energy may not move from its value at the run's start by more
/// than `energy_drift` × the peak of kinetic + strain energy so far, the measure every shipped
/// scene keeps within 1e-3 (`tests/energy_closure.rs`). A run past its stability limit gains
/// orders of magnitude more. Checked at the output cadence from the energies already read.
pub struct EnergySentinel {
    bound: f64,
    state: SentinelProgress,
}

impl EnergySentinel {
    /// The sentinel of `setup` from `energies` at `step` (or from a resumed run's `saved`
    /// state); `None` where it is off or some pair books no energy.
    pub fn new(setup: &Setup, energies: &crate::backend::Energies, step: u64, saved: Option<SentinelProgress>) -> Option<Self> {
        let bound = setup.checks.energy_drift.filter(|&b| b > 0.0)?;
        if !setup.energy_tracking() {
            return None;
        }
        let state = saved.unwrap_or(SentinelProgress { start_total: energies.total(), start_step: step, peak: energies.kinetic() + energies.strain });
        Some(EnergySentinel { bound, state })
    }

    /// The energies of the output at `step`: a blow-up (exit status 3) when the drift is beyond
    /// the bound, naming the drift, the step and the likely cause; `pvd` tells the last snapshot.
    pub fn observe(&mut self, setup: &Setup, e: &crate::backend::Energies, step: u64, pvd: &PvdIndex) -> Result<()> {
        let s = &mut self.state;
        s.peak = s.peak.max(e.kinetic() + e.strain);
        let drift = e.total() - s.start_total;
        // (the energies are finite: `check_energies` ran first)
        if drift.abs() <= self.bound * s.peak {
            return Ok(());
        }
        let last = match pvd.entries().last() {
            Some((_, file)) => format!("the last snapshot written, {file}, is the last good state"),
            None => "no snapshot was written".to_string(),
        };
        Err(TalusError::BlowUp {
            step,
            particle: None,
            message: format!(
                "the total energy {} by {:.3e} J since step {} ({:.3e} J to {:.3e} J), {:.3} × the peak kinetic + strain energy {:.3e} J (energy_drift = {}): with every energy booked, the run no longer conserves energy. Likely cause: the time step ({}) or a stiffness too high for it (docs/scenes.md, \"Checks\"). energy.csv ends at the last good output; {last}",
                if drift > 0.0 { "rose" } else { "fell" },
                drift.abs(),
                s.start_step,
                s.start_total,
                e.total(),
                drift.abs() / s.peak,
                s.peak,
                self.bound,
                describe_time_step(setup),
            ),
        })
    }
}

/// Energies must be finite before they go into `energy.csv`.
fn check_energies(e: &crate::backend::Energies, step: u64) -> Result<()> {
    let parts = [
        ("kinetic", e.kinetic()),
        ("gravitational", e.gravitational),
        ("strain", e.strain),
        ("slip", e.slip),
        ("dashpot", e.dashpot),
        ("stiffness work", e.stiffness_work),
        ("surface", e.surface),
        ("bond break", e.bond_break),
        ("wall work", e.wall_work),
    ];
    match parts.iter().find(|(_, x)| !x.is_finite()) {
        None => Ok(()),
        Some((name, x)) => Err(TalusError::BlowUp { step, particle: None, message: format!("{name} energy is {x:e} J (not finite); energy.csv ends at the last good output") }),
    }
}

/// A snapshot must be finite (and, with the `error` policy, inside the domain) to be written.
fn check_snapshot(setup: &Setup, s: &crate::backend::Snapshot) -> Result<()> {
    use crate::model::checks::{first_problem, LostParticles};
    use glam::DVec3;
    let lost = match setup.checks.lost_particles {
        LostParticles::Error => setup.lost_bounds(),
        LostParticles::Remove => None,
    };
    let v = |a: &[[f64; 3]], i: usize| DVec3::from(a[i]);
    // positions are unwrapped; the periodic axes are not tested for leaving
    match first_problem(s.position.len(), |i| [v(&s.position, i), v(&s.velocity, i), v(&s.angular_velocity, i), v(&s.force, i), v(&s.torque, i)], lost, setup.periodic) {
        None => Ok(()),
        Some(p) => {
            let (lo, hi, margin) = lost.unwrap_or((DVec3::ZERO, DVec3::ZERO, 0.0));
            Err(TalusError::BlowUp { step: s.step, particle: Some(p.index as u32), message: format!("{}; snapshot not written", p.describe((lo, hi), margin)) })
        }
    }
}
