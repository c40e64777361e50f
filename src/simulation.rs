//! The run loop as a type: `Simulation` owns (or borrows) a set-up and a backend and steps it
//! at the scene's output cadence, doing at every output what `talus run` does there: wall
//! loads, particles leaving and entering (`crate::flow`), energies and their checks, the energy
//! sentinel, `energy.csv`/`walls.csv`/`outflow.csv`, measurements, the rest watch, snapshots and
//! checkpoints. `talus run` and `talus resume` (`crate::run`), and the Python module
//! (`python/`), are thin drivers over it: they choose the backend, say what runs, show
//! progress, watch for signals and decide when to stop.
//!
//! The cadence: outputs fall every `Setup::output_every` steps counted from the step the
//! simulation started at, and at its end step (`end_step`, `set_end_step`). `advance(limit)`
//! steps to the next output or to `limit`, whichever comes first; a simulation stepped to a
//! step between two outputs (Python's `step(n)`) does nothing there but step, so how the steps
//! are split into calls changes no result.
//!
//! Without an output directory (`None`), the logs are kept in memory only (a checkpoint still
//! carries them) and no snapshots are written.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::backend::{Backend, Energies, WallLoad};
use crate::checkpoint::inputs::InputFile;
use crate::checkpoint::{Checkpoint, RestProgress, RunProgress, SceneRecord, SentinelProgress, CHECKPOINT_FILE};
use crate::error::{Result, TalusError};
use crate::flow::FlowDriver;
use crate::measure::Measurements;
use crate::output::atomic::create_dir_all;
use crate::output::summary::TimeStepSummary;
use crate::output::{write_vtu, EnergyCsv, EnergySummary, FlowSummary, OutflowCsv, PvdIndex, RestSummary, Summary, VtuEncoding, WallsCsv};
use crate::setup::{RestCriterion, Setup, TimeStepChoice};

/// The energy chart a finished run writes into the output directory (`plot::energy_chart`).
pub const ENERGY_PNG: &str = "energy.png";
/// The picture of the final state a finished run writes (`render::render_png`, default view and colour).
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

/// What a simulation's checkpoints record besides the state: the scene and the files it reads.
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

/// The backend a simulation steps: its own (Python) or the caller's (`talus run`).
pub enum BackendSlot<'a> {
    Owned(Box<dyn Backend + Send>),
    Borrowed(&'a mut dyn Backend),
}

impl BackendSlot<'_> {
    fn get(&mut self) -> &mut dyn Backend {
        match self {
            BackendSlot::Owned(b) => b.as_mut(),
            BackendSlot::Borrowed(b) => &mut **b,
        }
    }
}

/// The writers of a run's logs (in memory only without an output directory).
struct Logs {
    csv: EnergyCsv,
    walls: Option<WallsCsv>,
    outflow: Option<OutflowCsv>,
    pvd: PvdIndex,
}

/// The run loop of one scene on one backend (see the module notes).
pub struct Simulation<'a> {
    setup: Cow<'a, Setup>,
    backend: BackendSlot<'a>,
    out: Option<PathBuf>,
    checkpoint: Option<CheckpointOptions>,
    checkpoint_every: u64,
    last_checkpoint: Option<u64>,
    flow: Option<FlowDriver>,
    measurements: Measurements,
    rest: Option<RestWatch>,
    at_rest: bool,
    sentinel: Option<EnergySentinel>,
    logs: Logs,
    /// Particles held (changes with insertions and outlets).
    n: usize,
    start_step: u64,
    end_step: u64,
    outputs: u64,
    last_snapshot: u64,
    energies: Energies,
    loads: Vec<WallLoad>,
    particle_steps: f64,
    t0: Instant,
}

impl<'a> Simulation<'a> {
    /// Start at the backend's current step. `steps`: the steps to its end (`None`: the scene's
    /// `steps`); `out`: the output directory (created; `None`: logs in memory only, no
    /// snapshots); `checkpoint`: what checkpoints record (`None`: none are written);
    /// `progress`: a checkpoint's loop state to continue from (`talus resume`), else a new run
    /// (its start notes are printed, and step 0 is logged and snapshotted).
    pub fn start(setup: Cow<'a, Setup>, backend: BackendSlot<'a>, out: Option<&Path>, steps: Option<u64>, checkpoint: Option<CheckpointOptions>, progress: Option<RunProgress>) -> Result<Simulation<'a>> {
        let mut backend = backend;
        let total = steps.unwrap_or(setup.steps);
        if progress.is_none() {
            for note in crate::scene::start_notes(&setup, steps) {
                eprintln!("talus: {note}");
            }
        }
        let mut n = setup.particles.len();
        let mut flow = FlowDriver::new(&setup)?;
        if let Some(dir) = out {
            create_dir_all(dir)?;
            if setup.snapshot_every > 0 {
                create_dir_all(&dir.join("snapshots"))?;
            }
        }
        // the logs' files ("" when there is no directory: kept in memory, `CsvLog`)
        let file = |name: &str| out.map(|d| d.join(name)).unwrap_or_default();
        let has_walls = !setup.load_points().is_empty();
        let mut measurements = Measurements::new(&setup);
        let b = backend.get();
        let start_step = b.steps_done();
        let end_step = start_step + total;
        let t0 = Instant::now();
        let (mut outputs, mut last_snapshot) = (0u64, start_step);
        let mut rest = setup.until_rest.map(|c| RestWatch::new(c, start_step as f64 * setup.dt, 0.0));
        let energies = b.energies()?;
        check_energies(&energies, start_step)?;
        let sentinel = EnergySentinel::new(&setup, &energies, start_step, progress.as_ref().and_then(|p| p.sentinel));
        let kept = crate::output::energy_csv::Kept::of(&setup);
        let snapshot_now;
        let logs = match progress {
            None => {
                let mut csv = EnergyCsv::new(file("energy.csv"), kept);
                let walls = has_walls.then(|| WallsCsv::new(file("walls.csv")));
                let mut outflow = flow.as_ref().map(|_| OutflowCsv::new(file("outflow.csv"), &setup));
                rest = rest.map(|r| RestWatch { peak: energies.kinetic(), ..r });
                csv.push(start_step, start_step as f64 * setup.dt, &energies)?;
                if let (Some(f), Some(c)) = (&flow, &mut outflow) {
                    c.push(start_step, start_step as f64 * setup.dt, f.totals())?;
                }
                snapshot_now = true;
                Logs { csv, walls, outflow, pvd: PvdIndex::new(file("particles.pvd")) }
            }
            Some(p) => {
                let mismatch = |what: &str| TalusError::Other(format!("the run's saved progress does not fit the scene: {what}"));
                let csv = EnergyCsv::continued(file("energy.csv"), &p.energy_csv, kept)?;
                let walls = match (has_walls, &p.walls_csv) {
                    (false, None) => None,
                    (true, Some(text)) => Some(WallsCsv::continued(file("walls.csv"), text)?),
                    _ => return Err(mismatch("walls.csv")),
                };
                let outflow = match (&mut flow, p.flow) {
                    (None, None) => None,
                    (Some(f), Some(state)) => {
                        f.restore(state)?;
                        n = f.totals().held_count as usize;
                        Some(OutflowCsv::continued(file("outflow.csv"), p.outflow_csv.as_deref().ok_or_else(|| mismatch("outflow.csv"))?)?)
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
                let kept: Vec<(f64, String)> = match out {
                    Some(dir) => p.pvd.into_iter().filter(|(_, f)| dir.join(f).is_file()).collect(),
                    None => Vec::new(),
                };
                let pvd = PvdIndex::continued(file("particles.pvd"), kept)?;
                // (an earlier run's snapshot of this step, listed as `../run/snapshots/…`, counts)
                let this_step = snapshot_file(start_step);
                let this_step = this_step.rsplit('/').next().unwrap_or_default();
                snapshot_now = !pvd.entries().iter().any(|(_, f)| f.rsplit('/').next() == Some(this_step));
                Logs { csv, walls, outflow, pvd }
            }
        };
        let checkpoint_every = checkpoint.as_ref().map(|c| c.every.unwrap_or(setup.checkpoint_every)).unwrap_or(0);
        let mut sim = Simulation {
            setup,
            backend,
            out: out.map(Path::to_path_buf),
            checkpoint,
            checkpoint_every,
            last_checkpoint: None,
            flow,
            measurements,
            rest,
            at_rest: false,
            sentinel,
            logs,
            n,
            start_step,
            end_step,
            outputs,
            last_snapshot,
            energies,
            loads: Vec::new(),
            particle_steps: 0.0,
            t0,
        };
        if snapshot_now && sim.setup.snapshot_every > 0 {
            sim.write_snapshot()?;
        }
        Ok(sim)
    }

    pub fn setup(&self) -> &Setup {
        &self.setup
    }

    pub fn backend(&mut self) -> &mut dyn Backend {
        self.backend.get()
    }

    /// The output directory, if any.
    pub fn out_dir(&self) -> Option<&Path> {
        self.out.as_deref()
    }

    pub fn steps_done(&mut self) -> u64 {
        self.backend.get().steps_done()
    }

    /// The step the simulation started at (the output cadence counts from it).
    pub fn start_step(&self) -> u64 {
        self.start_step
    }

    /// The step the run ends at: an output falls on it, and the last snapshot.
    pub fn end_step(&self) -> u64 {
        self.end_step
    }

    /// Move the run's end (Python's `run(steps=…)`); it is recorded in checkpoints.
    pub fn set_end_step(&mut self, step: u64) {
        self.end_step = step;
    }

    /// Particles held now.
    pub fn particle_count(&self) -> usize {
        self.n
    }

    /// The energies read at the last output.
    pub fn last_energies(&self) -> Energies {
        self.energies
    }

    /// Particle-steps since the start (throughput).
    pub fn particle_steps(&self) -> f64 {
        self.particle_steps
    }

    /// Seconds since the start.
    pub fn elapsed(&self) -> f64 {
        self.t0.elapsed().as_secs_f64()
    }

    /// Outputs since the run started (a resumed run counts on from its checkpoint's).
    pub fn outputs(&self) -> u64 {
        self.outputs
    }

    /// Whether the `until_rest` criterion held at the last output.
    pub fn at_rest(&self) -> bool {
        self.at_rest
    }

    /// Whether the run is over: at or past its end step, or at rest.
    pub fn is_done(&mut self) -> bool {
        self.at_rest || self.steps_done() >= self.end_step
    }

    /// The running measurements.
    pub fn measurements(&self) -> &Measurements {
        &self.measurements
    }

    /// The insertions' and outlets' totals, for scenes with them.
    pub fn flow(&self) -> Option<&FlowDriver> {
        self.flow.as_ref()
    }

    /// The step of the next output after the current step.
    pub fn next_output_step(&mut self) -> u64 {
        let done = self.steps_done();
        let every = self.setup.output_every.max(1);
        let cadence = self.start_step + ((done.saturating_sub(self.start_step)) / every + 1) * every;
        if self.end_step > done { cadence.min(self.end_step) } else { cadence }
    }

    /// Step to the next output or to step `limit`, whichever comes first (nothing when the
    /// current step is at or past `limit`); at an output, do its work (see the module notes).
    /// Returns whether an output fell. A blow-up keeps the last good state as a snapshot
    /// (with an output directory) and says so in its message.
    pub fn advance(&mut self, limit: u64) -> Result<bool> {
        let done = self.steps_done();
        if done >= limit {
            return Ok(false);
        }
        let next = self.next_output_step();
        let target = next.min(limit);
        let batch = target - done;
        if let Err(e) = self.backend.get().step(batch) {
            return Err(self.keep_last_good(e));
        }
        self.particle_steps += (self.n as u64 * batch) as f64;
        if target < next {
            return Ok(false);
        }
        self.output()?;
        Ok(true)
    }

    /// The work of an output at the current step.
    fn output(&mut self) -> Result<()> {
        self.outputs += 1;
        let setup: &Setup = &self.setup;
        let backend = self.backend.get();
        let step = backend.steps_done();
        let time = step as f64 * setup.dt;
        // loads of the batch's last step, before particles leave or enter
        self.loads = match self.logs.walls {
            Some(_) => backend.wall_loads()?,
            None => Vec::new(),
        };
        if let (Some(f), Some(c)) = (&mut self.flow, &mut self.logs.outflow) {
            f.exchange(setup, backend)?;
            self.n = f.totals().held_count as usize;
            c.push(step, time, f.totals())?;
        }
        self.energies = backend.energies()?;
        check_energies(&self.energies, step)?;
        if let Some(s) = &mut self.sentinel {
            s.observe(setup, &self.energies, step, &self.logs.pvd)?;
        }
        self.logs.csv.push(step, time, &self.energies)?;
        if let Some(w) = &mut self.logs.walls {
            w.push(step, time, &setup.load_points(), &self.loads)?;
        }
        self.measurements.observe(step, time, backend, self.flow.as_ref().map(|f| f.totals()))?;
        self.at_rest = self.rest.as_mut().is_some_and(|r| r.observe(time, self.energies.kinetic()));
        let at_rest = self.at_rest;
        if setup.snapshot_every > 0 && (self.outputs.is_multiple_of(setup.snapshot_every) || step == self.end_step || at_rest) && step != self.last_snapshot {
            self.write_snapshot()?;
            self.last_snapshot = step;
        }
        if self.checkpoint_every > 0 && self.outputs.is_multiple_of(self.checkpoint_every) && step != self.end_step && !at_rest {
            self.write_checkpoint()?;
        }
        Ok(())
    }

    /// A snapshot of the current state into the output directory, listed in `particles.pvd`
    /// (nothing without an output directory).
    fn write_snapshot(&mut self) -> Result<()> {
        let Some(dir) = self.out.clone() else { return Ok(()) };
        let setup: &Setup = &self.setup;
        let mut s = self.backend.get().snapshot()?;
        // a snapshot with a non-finite value is never written
        check_snapshot(setup, &s)?;
        // snapshots hold unwrapped positions; files show the particles inside the periodic box
        if setup.periodic.iter().any(|&p| p) {
            s.position.iter_mut().for_each(|x| *x = setup.wrap(glam::DVec3::from(*x)).0.to_array());
        }
        let file = snapshot_file(s.step);
        create_dir_all(&dir.join("snapshots"))?;
        write_vtu(&dir.join(&file), &s, VtuEncoding::Base64)?;
        if !s.bodies.is_empty() {
            crate::output::bodies_csv::write_bodies_csv(&dir.join(bodies_file(s.step)), &s.bodies, &setup.clump_template_names())?;
        }
        self.logs.pvd.push(s.step as f64 * setup.dt, &file)
    }

    /// The loop state at this output boundary (what a checkpoint keeps besides the backend's).
    pub fn progress(&self) -> RunProgress {
        RunProgress {
            end_step: self.end_step,
            outputs: self.outputs,
            last_snapshot: self.last_snapshot,
            rest: self.rest.as_ref().map(|r| RestProgress { peak: r.peak, peak_time: r.peak_time, below: r.below }),
            energy_csv: self.logs.csv.text().to_string(),
            walls_csv: self.logs.walls.as_ref().map(|w| w.text().to_string()),
            outflow_csv: self.logs.outflow.as_ref().map(|o| o.text().to_string()),
            pvd: self.logs.pvd.entries().to_vec(),
            flow: self.flow.as_ref().map(|f| f.state()),
            measurements: self.measurements.state(),
            sentinel: self.sentinel.as_ref().map(|s| s.state),
        }
    }

    /// The whole state now, with `scene` and `inputs` recorded (Python's `save_checkpoint`).
    pub fn capture(&mut self, scene: &SceneRecord, inputs: &[InputFile]) -> Result<Checkpoint> {
        let run = self.progress();
        Checkpoint::capture(&self.setup, scene, inputs, self.backend.get(), run)
    }

    /// `checkpoint.talus` in the output directory, when the simulation writes checkpoints.
    fn write_checkpoint(&mut self) -> Result<()> {
        let (Some(c), Some(dir)) = (&self.checkpoint, &self.out) else { return Ok(()) };
        let (c, path) = (c.clone(), dir.join(CHECKPOINT_FILE));
        self.capture(&c.scene, &c.inputs)?.write(&path)?;
        self.last_checkpoint = Some(self.steps_done());
        Ok(())
    }

    /// Stop here (a signal): write the checkpoint unless the current step has one, and return
    /// the `Interrupted` error to report.
    pub fn interrupt(&mut self) -> TalusError {
        let step = self.steps_done();
        let checkpoint = match (&self.checkpoint, &self.out) {
            (Some(_), Some(dir)) => Some(dir.join(CHECKPOINT_FILE)),
            _ => None,
        };
        if checkpoint.is_some() && self.last_checkpoint != Some(step) {
            if let Err(e) = self.write_checkpoint() {
                return e;
            }
        }
        TalusError::Interrupted { step, checkpoint }
    }

    /// The end of a run: the checkpoint (unless this step has one), then `summary.json` and the
    /// pictures into the output directory. Returns the summary (written only with a directory).
    pub fn finish(&mut self) -> Result<Summary> {
        let step = self.steps_done();
        if self.last_checkpoint != Some(step) {
            self.write_checkpoint()?;
        }
        let summary = self.summary()?;
        if let Some(dir) = self.out.clone() {
            summary.write(&dir.join("summary.json"))?;
            write_pictures(&self.setup, self.backend.get(), &dir)?;
        }
        Ok(summary)
    }

    /// The run's summary so far (what `summary.json` holds).
    pub fn summary(&mut self) -> Result<Summary> {
        let contacts = self.backend.get().contact_count()?;
        let wall = self.elapsed();
        let setup: &Setup = &self.setup;
        let backend = self.backend.get();
        let steps = backend.steps_done() - self.start_step;
        Ok(Summary {
            scene: Summary::scene_of(setup, self.checkpoint.as_ref().map(|c| &c.scene)),
            backend: backend.kind().to_string(),
            adapter: backend.adapter(),
            particles: self.n,
            steps,
            dt: setup.dt,
            time_step: TimeStepSummary::from(&setup.dt_choice),
            simulated_time: backend.steps_done() as f64 * setup.dt,
            wall_seconds: wall,
            particle_steps_per_second: if wall > 0.0 { self.particle_steps / wall } else { 0.0 },
            contacts,
            energy_tracking: setup.energy_tracking(),
            energies: EnergySummary::of(&self.energies, setup.has_adhesion()),
            flow: self.flow.as_ref().map(|f| FlowSummary::of(setup, f.totals())),
            measurements: self.measurements.finish(),
            rest: self.rest.as_ref().map(|r| r.summary(self.energies.kinetic())),
        })
    }

    /// After a caught blow-up (`TalusError::BlowUp`; the backend holds the last good state, the
    /// start of the failed batch): write that state as a snapshot unless it was the last one
    /// written, and say where it is. Other errors pass through.
    fn keep_last_good(&mut self, e: TalusError) -> TalusError {
        let TalusError::BlowUp { step, particle, message } = e else { return e };
        if self.out.is_none() {
            return TalusError::BlowUp { step, particle, message };
        }
        let good = self.steps_done();
        let kept = if good == self.last_snapshot && !self.logs.pvd.is_empty() { Ok(()) } else { self.write_snapshot() };
        let note = match kept {
            Ok(()) => format!("; last good state (step {good}) kept in {}; outputs up to it are complete", snapshot_file(good)),
            Err(w) => format!("; the last good state (step {good}) could not be written: {w}"),
        };
        TalusError::BlowUp { step, particle, message: message + &note }
    }

    /// Change the backend's state from outside the loop (Python's `set_velocities`, …) with
    /// `edit`. The energy the change brings in or takes out is booked nowhere, so the energy
    /// sentinel measures the drift from the total after the change (its start moves by the
    /// jump); `energy.csv`'s total shows the jump.
    pub fn edit_state(&mut self, edit: impl FnOnce(&mut dyn Backend) -> Result<()>) -> Result<()> {
        let before = self.backend.get().energies()?;
        edit(self.backend.get())?;
        let after = self.backend.get().energies()?;
        check_energies(&after, self.steps_done())?;
        if let Some(s) = &mut self.sentinel {
            s.state.start_total += after.total() - before.total();
            let in_play = s.in_play(&after);
            s.state.peak = s.state.peak.max(in_play);
        }
        Ok(())
    }

    /// Hand the backend back (Python, to rebuild it around a changed set-up).
    pub fn into_parts(self) -> (Cow<'a, Setup>, BackendSlot<'a>) {
        (self.setup, self.backend)
    }

    /// Replace the set-up and the backend (same particles, same step: the caller moved the
    /// state over), keeping the loop state. Used to change a wall's motion from Python.
    pub fn replace(&mut self, setup: Setup, backend: Box<dyn Backend + Send>) {
        self.setup = Cow::Owned(setup);
        self.backend = BackendSlot::Owned(backend);
    }
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
pub struct RestWatch {
    criterion: RestCriterion,
    peak: f64,
    peak_time: f64,
    below: u64,
}

impl RestWatch {
    pub fn new(criterion: RestCriterion, time: f64, kinetic: f64) -> Self {
        RestWatch { criterion, peak: kinetic, peak_time: time, below: 0 }
    }

    /// One output: true once the criterion holds (never while the peak is 0: a scene that
    /// starts at rest runs until something moves, or to its `steps`).
    pub fn observe(&mut self, time: f64, kinetic: f64) -> bool {
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

/// The energy sentinel (docs/scenes.md, "Checks"): with every partition booked (energy tracking
/// on for every pair), the total energy may not move from its value at the run's start by more
/// than `energy_drift` × the energy in play: the peak, over the outputs so far, of kinetic +
/// strain energy + the gravitational energy released (or gained) since the start. Kinetic +
/// strain alone is the measure every shipped scene keeps within 1e-3 (`tests/energy_closure.rs`),
/// but outputs sample it: a grain that falls and comes to rest between two outputs showed only
/// its rest state, and a sound run was stopped; the released gravitational energy is that fall's
/// kinetic energy. A run past its stability limit gains orders of magnitude more. Checked at the
/// output cadence from the energies already read.
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
        let state = saved.unwrap_or(SentinelProgress { start_total: energies.total(), start_step: step, peak: energies.kinetic() + energies.strain, start_gravitational: Some(energies.gravitational) });
        Some(EnergySentinel { bound, state })
    }

    /// Kinetic + strain energy + the gravitational energy released or gained since the start.
    fn in_play(&self, e: &crate::backend::Energies) -> f64 {
        e.kinetic() + e.strain + self.state.start_gravitational.map_or(0.0, |g| (e.gravitational - g).abs())
    }

    /// The energies of the output at `step`: a blow-up (exit status 3) when the drift is beyond
    /// the bound, naming the drift, the step and the likely cause; `pvd` tells the last snapshot.
    pub fn observe(&mut self, setup: &Setup, e: &crate::backend::Energies, step: u64, pvd: &PvdIndex) -> Result<()> {
        let in_play = self.in_play(e);
        let s = &mut self.state;
        s.peak = s.peak.max(in_play);
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
                "the total energy {} by {:.3e} J since step {} ({:.3e} J to {:.3e} J), {:.3} × the energy in play {:.3e} J (the peak of kinetic + strain energy + the gravitational energy released since then; energy_drift = {}): with every energy booked, the run no longer conserves energy. Likely cause: the time step ({}) or a stiffness too high for it (docs/scenes.md, \"Checks\"). energy.csv ends at the last good output; {last}",
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
