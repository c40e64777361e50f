//! `talus`: command-line front end. Every subcommand is a thin layer over the library
//! (`talus::run`, `talus::verify`, `talus::bench`, `talus::gpu::list_adapters`).
//! Errors print `talus: <error>` and exit with status 2; a failed verification exits with 1; a
//! run stopped by a caught blow-up (`TalusError::BlowUp`) exits with 3; a run stopped by Ctrl-C
//! or SIGTERM (`TalusError::Interrupted`, after writing its checkpoint) exits with 130.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use clap::{Parser, Subcommand, ValueEnum};
use talus::checkpoint::{Checkpoint, SceneRecord};
use talus::run::{BackendChoice, CheckpointOptions, RunOptions};
use talus::backend::Backend;
use talus::ranks::Ranks;
use talus::scene::overrides::Override;
use talus::{Result, TalusError};

#[derive(Parser)]
#[command(name = "talus", version, about = "Discrete-element-method engine: wgpu GPU step loop with an f64 CPU reference")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum BackendArg {
    /// A hardware GPU when one is found, else CPU with a notice (software GPUs such as llvmpipe count as none)
    Auto,
    /// GPU only, any adapter, software ones included (fails without an adapter)
    Gpu,
    /// f64 CPU reference
    Cpu,
}

impl From<BackendArg> for BackendChoice {
    fn from(b: BackendArg) -> Self {
        match b {
            BackendArg::Auto => BackendChoice::Auto,
            BackendArg::Gpu => BackendChoice::Gpu,
            BackendArg::Cpu => BackendChoice::Cpu,
        }
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum BenchmarkArg {
    /// Chung & Ooi (2011), Granular Matter 13:643–656: eight impact tests
    ChungOoi,
    /// Rigid clumps against analytic results: template mass properties, a torque-free flip,
    /// a tilted impact, rolling down an incline, free fall
    Clumps,
    /// Adhesion (JKR, DMT, SJKR, SJKR2, capillary bridge) against analytic two-body results
    Cohesion,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum VerifyBackendArg {
    Cpu,
    Gpu,
    Both,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scene and write energy.csv, summary.json and VTU snapshots
    Run {
        /// Scene file (JSON, see docs/scenes.md)
        scene: PathBuf,
        #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
        backend: BackendArg,
        /// Output directory [default: out/<scene name>]
        #[arg(long)]
        out: Option<PathBuf>,
        /// Number of steps (overrides the scene's `steps`)
        #[arg(long)]
        steps: Option<u64>,
        /// Change a scene value without editing the file (repeatable): PATH is keys joined by
        /// dots, list entries by number; VALUE is JSON or else a string (null takes the key
        /// out); e.g. --set materials.glass.fric=0.2 --set generators.0.count=500; a later one
        /// wins. Recorded in summary.json and the checkpoint (docs/scenes.md, "Changing values
        /// from the command line")
        #[arg(long = "set", value_name = "PATH=VALUE", value_parser = parse_override)]
        set: Vec<Override>,
        /// Write checkpoint.talus every N outputs besides at the end and on Ctrl-C (0: only
        /// then) [default: the scene's checkpoint_every]
        #[arg(long, value_name = "N")]
        checkpoint_every: Option<u64>,
        /// Do not draw a progress bar
        #[arg(long)]
        no_progress: bool,
    },
    /// Continue a run from its checkpoint.talus (docs/output.md, "Resuming")
    Resume {
        /// A checkpoint written by `talus run` or `talus resume`, or the run directory that
        /// holds it (its checkpoint.talus)
        checkpoint: PathBuf,
        /// Run N more steps [default: to the step the checkpointed run was to end at]
        #[arg(long, value_name = "N")]
        steps: Option<u64>,
        /// Run until this simulated time, s
        #[arg(long, value_name = "T")]
        until: Option<f64>,
        /// Output directory [default: <run dir>-resume-<step> beside the checkpoint's directory;
        /// the checkpoint's own directory continues the run in place]
        #[arg(long)]
        out: Option<PathBuf>,
        #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
        backend: BackendArg,
        /// Write checkpoint.talus every N outputs besides at the end and on Ctrl-C (0: only
        /// then) [default: the scene's checkpoint_every]
        #[arg(long, value_name = "N")]
        checkpoint_every: Option<u64>,
        /// Do not draw a progress bar
        #[arg(long)]
        no_progress: bool,
    },
    /// Run the CPU and GPU backends side by side and compare them (docs/verification.md)
    /// With --benchmark chung-ooi: the eight impact tests of Chung & Ooi (2011) against theory;
    /// with --benchmark clumps: rigid clumps against analytic results; with --benchmark
    /// cohesion: the adhesion models against analytic two-body results
    Verify {
        /// Scene file (not with --benchmark)
        #[arg(required_unless_present = "benchmark")]
        scene: Option<PathBuf>,
        /// Number of steps (default: the scene's `steps`)
        #[arg(long)]
        steps: Option<u64>,
        /// Change a scene value without editing the file, as `talus run --set` (not with
        /// --benchmark)
        #[arg(long = "set", value_name = "PATH=VALUE", value_parser = parse_override, conflicts_with = "benchmark")]
        set: Vec<Override>,
        /// Run a benchmark against analytic results instead of comparing backends on a scene
        #[arg(long, value_enum, conflicts_with = "scene")]
        benchmark: Option<BenchmarkArg>,
        /// Backends the benchmark runs on
        #[arg(long, value_enum, default_value_t = VerifyBackendArg::Both)]
        backend: VerifyBackendArg,
        /// Where the benchmark writes its CSV tables and PNG figures [default: out/chung-ooi, out/clumps or out/cohesion]
        #[arg(long)]
        out: Option<PathBuf>,
        /// Also write both backends' energies and their particles' distance at every checkpoint
        /// to this CSV file (not with --benchmark)
        #[arg(long, value_name = "FILE", conflicts_with = "benchmark")]
        trace: Option<PathBuf>,
    },
    /// Measure throughput on a settling box of polydisperse particles, a packed bed, or a scene
    Bench {
        #[arg(long, default_value_t = 10_000)]
        particles: usize,
        #[arg(long, default_value_t = 200)]
        steps: u64,
        /// Steps run before timing starts
        #[arg(long, default_value_t = 20)]
        warmup: u64,
        #[arg(long, value_enum, default_value_t = BackendArg::Auto)]
        backend: BackendArg,
        /// Also write the result as JSON to this file
        #[arg(long)]
        json: Option<PathBuf>,
        /// GPU: also time every pass of the step on its own
        #[arg(long)]
        profile: bool,
        /// Contact model of the bench scene (hertz, hysteretic, hooke, hertz_mindlin, hertz_viscous)
        #[arg(long, default_value = "hertz", value_parser = parse_model)]
        model: talus::contact::ContactModel,
        /// Adhesion part of every pair of the bench scene (none, jkr, dmt, sjkr, sjkr2,
        /// capillary), with the parameters of the shipped cohesive scenes; jkr and dmt need
        /// --model hertz_mindlin
        #[arg(long, default_value = "none", value_parser = parse_adhesion)]
        adhesion: talus::contact::params::Adhesion,
        /// settling: particles falling into a box (few contacts); bed: a packed bed (~3 contacts per particle); clumps: rigid four-sphere tablets falling into a box (--particles counts their spheres); drum: a turning mesh drum, its lower half packed as the bed (the moving-mesh contact search at scale)
        #[arg(long, default_value = "settling")]
        packing: talus::bench::Packing,
        /// placed: the bench scenes number their particles (clumps: their bodies) row by row as
        /// placed; shuffled: ids shuffled (a fixed seed; clumps body by body), neighbours in
        /// space scattered in id order as in a poured scene (what the GPU's cell order and
        /// force-pass schedule are for)
        #[arg(long, default_value = "placed")]
        ids: talus::bench::Ids,
        /// Energy tracking off (forces, torques and history only, as DEME and LIGGGHTS run),
        /// for the bench scenes; a scene file says it with its own `energy_tracking`
        #[arg(long)]
        untracked: bool,
        /// Time a scene file instead (insertions and outlets included); --particles, --model,
        /// --adhesion, --packing, --ids and --untracked do not apply
        #[arg(long)]
        scene: Option<PathBuf>,
        /// With --scene: the CPU reference runs the scene to this time (s) and the chosen
        /// backend continues from its state
        #[arg(long, default_value_t = 0.0)]
        from: f64,
        /// With --profile: the card's peak memory bandwidth in GB/s (e.g. 3350 for an H100 SXM,
        /// 4800 for an H200), to print each pass's share of it
        #[arg(long)]
        peak_bandwidth: Option<f64>,
    },
    /// List GPU adapters with their limits, the CPU thread count and the MPI rank count
    Info {
        /// Also compile the step's passes on the preferred adapter and print what its driver
        /// reports of each (registers, instructions, spills; Vulkan drivers with
        /// VK_KHR_pipeline_executable_properties: NVIDIA, Mesa's RADV). Honours
        /// TALUS_GPU_SHADER_CHECKS, TALUS_GPU_EARLY_LOADS, TALUS_GPU_RELOAD_OWN and
        /// TALUS_GPU_SLOT_PLACES as a run does.
        /// Without an AMD GPU, RADV_FORCE_FAMILY=navi21 (with VK_DRIVER_FILES naming RADV's ICD)
        /// compiles for an AMD RX 6800-class GPU without one
        #[arg(long)]
        shaders: bool,
    },
    /// Draw a snapshot as a PNG: shaded discs, orthographic, coloured by a field (docs/output.md)
    Render {
        /// A snapshot (.vtu written by `talus run`) or a run directory (its last snapshot)
        input: PathBuf,
        /// Look along this axis (x, y: z up; z: top down) or isometrically
        #[arg(long, value_enum, default_value_t = ViewArg::Y)]
        view: ViewArg,
        /// The field the colours show
        #[arg(long, value_enum, default_value_t = ColorArg::Speed)]
        color: ColorArg,
        /// Width and height of the picture, pixels
        #[arg(long, default_value_t = 800)]
        size: u32,
        /// Output file [default: render_<view>_<color>.png beside the run's outputs]
        #[arg(short, long)]
        out: Option<PathBuf>,
    },
    /// Draw RUN_DIR/energy.csv as energy.png: the partitions against time and the total's drift
    Plot {
        /// A run directory (or an energy.csv)
        run_dir: PathBuf,
        /// Output file [default: energy.png beside energy.csv]
        #[arg(short, long)]
        out: Option<PathBuf>,
    },
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ViewArg {
    X,
    Y,
    Z,
    Iso,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ColorArg {
    Speed,
    Radius,
    Id,
    Force,
    /// Each rigid body (clump) its own colour
    Body,
}

/// glibc raises its mmap threshold to the size of every large block that is freed; blocks of
/// that size then come from the heap and stay resident after they are freed. The CPU backend
/// frees and allocates such blocks at neighbour-list rebuilds (the history hand-over), which
/// kept ~45 MB more resident on the 100k dense settle box. A fixed threshold keeps the peak at
/// the working set (docs/performance.md).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn fix_mmap_threshold() {
    // SAFETY: mallopt only changes an allocator parameter; called before any thread starts.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn fix_mmap_threshold() {}

/// Mesa's drivers (llvmpipe, lavapipe) print "XDG_RUNTIME_DIR is invalid or not set in the
/// environment." to stderr, once per instance they are loaded into, when that variable does not
/// name a directory; Talus creates such instances to look at the adapters, so a new user on a
/// machine without a GPU saw the line twice before Talus said a word. Talus never uses the
/// directory (no window, no Wayland socket): give the process a private empty one (mode 0700,
/// under the temp dir, as the XDG spec asks of a runtime dir) so the driver stays quiet. An
/// existing directory is left alone.
fn quiet_mesa_runtime_dir() {
    let valid = std::env::var_os("XDG_RUNTIME_DIR").map(|d| !d.is_empty() && std::path::Path::new(&d).is_dir()).unwrap_or(false);
    if valid {
        return;
    }
    let dir = std::env::temp_dir().join(format!("talus-runtime-{}", std::process::id()));
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    if builder.create(&dir).is_ok() || dir.is_dir() {
        // Called first thing in `main`, before any thread exists (set_var is not thread-safe).
        std::env::set_var("XDG_RUNTIME_DIR", &dir);
        RUNTIME_DIR.with(|d| *d.borrow_mut() = Some(dir));
    }
}

thread_local! {
    /// The directory `quiet_mesa_runtime_dir` made, removed when `main` returns.
    static RUNTIME_DIR: std::cell::RefCell<Option<PathBuf>> = const { std::cell::RefCell::new(None) };
}

fn main() -> ExitCode {
    fix_mmap_threshold();
    quiet_mesa_runtime_dir();
    let code = talus_main();
    if let Some(dir) = RUNTIME_DIR.with(|d| d.borrow_mut().take()) {
        let _ = std::fs::remove_dir(dir);
    }
    code
}

fn talus_main() -> ExitCode {
    let cli = Cli::parse();
    // the MPI world with the `mpi` feature (one rank started alone), else one rank; held to the
    // end of the process (MPI is finalised when it drops)
    let ranks = match Ranks::init() {
        Ok(ranks) => Arc::new(ranks),
        Err(e) => {
            eprintln!("talus: {e}");
            return ExitCode::from(2);
        }
    };
    if ranks.size() > 1 && !matches!(cli.command, Command::Info { .. } | Command::Run { .. } | Command::Resume { .. }) {
        // every rank reaches this with the same verdict, so all stop alike and none waits;
        // rank 0 says why
        if ranks.is_root() {
            eprintln!(
                "talus: {} MPI ranks: `talus run`, `talus resume` and `talus info` run on several ranks; the other commands run on one (no mpirun, or -np 1)",
                ranks.size()
            );
        }
        return ExitCode::from(2);
    }
    if ranks.size() > 1 {
        // a rank that panics ends every rank (MPI_Abort) instead of leaving them waiting
        // (a weak handle: the world must drop, and MPI finalise, at the end of a good run)
        let (world, report) = (Arc::downgrade(&ranks), std::panic::take_hook());
        std::panic::set_hook(Box::new(move |info| {
            report(info);
            if let Some(world) = world.upgrade() {
                world.abort(101);
            }
        }));
    }
    let result = if ranks.size() > 1 && !matches!(cli.command, Command::Info { .. }) { run_on_ranks(cli.command, &ranks) } else { dispatch(cli.command, &ranks) };
    match result {
        Ok(code) => code,
        // on several ranks rank 0 says what went wrong (all ranks hold the same error)
        Err(e) if !ranks.is_root() => ExitCode::from(exit_status(&e)),
        Err(e) => {
            eprintln!("talus: {e}");
            ExitCode::from(exit_status(&e))
        }
    }
}

/// The exit status of a run that stopped with `e`.
fn exit_status(e: &TalusError) -> u8 {
    match e {
        TalusError::BlowUp { .. } => talus::error::BLOW_UP_EXIT_STATUS,
        TalusError::Interrupted { .. } => talus::error::INTERRUPTED_EXIT_STATUS,
        _ => 2,
    }
}

/// `talus run` and `talus resume` under `mpirun -np N` (N > 1): the CPU backend (or with
/// `--backend gpu` the GPU backend, a device per rank) decomposed over the ranks
/// (`talus::cpu::decomposed`, `talus::gpu::decomposed`). Every rank reads the scene or checkpoint; rank 0 runs
/// the loop and writes every output, the others serve its commands and exit with its status.
fn run_on_ranks(command: Command, ranks: &Arc<Ranks>) -> Result<ExitCode> {
    use talus::cpu::decomposed::{serve, Decomposed, RankPart, Root};
    // `auto` takes the CPU on several ranks (a GPU per rank is asked for by name)
    let on_gpu = |b: &BackendArg| matches!(BackendChoice::from(*b), BackendChoice::Gpu);
    // a device's capacity notices name the rank whose device grew
    talus::error::set_notice_rank(ranks.rank());
    if !ranks.is_root() {
        // rank 0 prints what the scene warns of, once
        talus::scene::quiet_warnings();
        // Ctrl-C under mpirun reaches every rank: rank 0 stops the run and writes the
        // checkpoint, which needs the others to go on serving it
        let _ = ctrlc::set_handler(|| {});
    }
    let (setup, out, opts, progress, start, gpu) = match command {
        Command::Run { scene, backend, out, steps, set, checkpoint_every, no_progress } => {
            let gpu = on_gpu(&backend);
            let mut record = SceneRecord::read(&scene)?;
            record.overrides = talus::scene::overrides::effective(set);
            let setup = talus::scene::overrides::parse_with(&record.text, &scene, &record.overrides)?;
            let checkpoint = CheckpointOptions::for_scene(record, &setup, checkpoint_every)?;
            let out = out.unwrap_or_else(|| PathBuf::from("out").join(&setup.name));
            let note = format!("{} ({} particles, {} steps)", scene.display(), setup.particles.len(), steps.unwrap_or(setup.steps));
            let opts = RunOptions { steps, progress: !no_progress, checkpoint: Some(checkpoint), stop: None };
            (setup, out, opts, None, (note, None), gpu)
        }
        Command::Resume { checkpoint: file, steps, until, out, backend, checkpoint_every, no_progress } => {
            let gpu = on_gpu(&backend);
            let file = talus::resume::checkpoint_path(&file)?;
            let c = Checkpoint::read(&file)?;
            let setup = talus::resume::setup_of(&file, &c)?;
            let (steps, until_note) = talus::resume::steps_to_run(&file, &c, talus::resume::Extent { steps, until }, setup.output_every)?;
            let out = talus::resume::out_dir(&file, &c, &setup.name, out)?;
            let checkpoint = CheckpointOptions { scene: c.meta.scene.clone(), inputs: c.meta.inputs.clone(), every: checkpoint_every };
            let opts = RunOptions { steps: Some(steps), progress: !no_progress, checkpoint: Some(checkpoint), stop: None };
            let progress = talus::resume::progress_in(&file, &c, &out);
            let note = format!("{} at step {} ({} particles, written on {}): {steps} more steps", file.display(), c.meta.step, c.state.len(), c.meta.backend);
            (setup, out, opts, Some(progress), (note, Some((c, until_note))), gpu)
        }
        _ => unreachable!("only run and resume are decomposed"),
    };
    let d: Result<Box<dyn RankPart>> = if gpu {
        talus::gpu::decomposed::GpuDecomposed::new(&setup, ranks.clone()).map(|d| Box::new(d) as Box<dyn RankPart>)
    } else {
        Decomposed::new(&setup, ranks.clone()).map(|d| Box::new(d) as Box<dyn RankPart>)
    };
    if !ranks.is_root() {
        // (rank 0 reports a failed start; every rank holds the same error)
        return Ok(ExitCode::from(serve(d?.as_mut()) as u8));
    }
    let scene_record = opts.checkpoint.as_ref().map(|c| c.scene.clone());
    let mut root = Root::new(d.map_err(|e| talus::run::record_start_stop(&setup, scene_record.as_ref(), &out, e))?);
    let (note, resumed) = start;
    let result = (|| -> Result<talus::output::summary::Summary> {
        let progress = match (resumed, progress) {
            (Some((c, until_note)), Some(progress)) => {
                root.import_state(&c.state)?;
                root.import_exact(&c.exact)?;
                root.set_carried(c.meta.carried);
                if let Some(note) = until_note {
                    eprintln!("talus: {note}");
                }
                Some(progress)
            }
            _ => None,
        };
        eprintln!("talus: {note} on {} [{}]", root.kind(), root.adapter());
        eprintln!("talus: {}", talus::run::describe_time_step(&setup));
        let opts = RunOptions { stop: stop_on_signal(), ..opts };
        match progress {
            None => talus::run::run_scene(&setup, &mut root, &out, opts),
            Some(p) => talus::run::continue_run(&setup, &mut root, &out, opts, p),
        }
    })();
    root.finish(match &result {
        Ok(_) => 0,
        Err(e) => exit_status(e) as i32,
    });
    let s = result?;
    report_run(&setup, &s, &out);
    Ok(ExitCode::SUCCESS)
}

fn dispatch(command: Command, ranks: &Arc<Ranks>) -> Result<ExitCode> {
    match command {
        Command::Run { scene, backend, out, steps, set, checkpoint_every, no_progress } => {
            let mut record = SceneRecord::read(&scene)?;
            record.overrides = talus::scene::overrides::effective(set);
            let setup = talus::scene::overrides::parse_with(&record.text, &scene, &record.overrides)?;
            let checkpoint = CheckpointOptions::for_scene(record, &setup, checkpoint_every)?;
            let out = out.unwrap_or_else(|| PathBuf::from("out").join(&setup.name));
            // a start the backend refuses still leaves the start state to look at
            let (mut backend, notice) = talus::run::open_backend(&setup, backend.into()).map_err(|e| talus::run::record_start_stop(&setup, Some(&checkpoint.scene), &out, e))?;
            if let Some(notice) = notice {
                eprintln!("{notice}");
            }
            let steps_to_run = steps.unwrap_or(setup.steps);
            eprintln!(
                "talus: {} ({} particles, {} steps) on {} [{}]",
                scene.display(),
                setup.particles.len(),
                steps_to_run,
                backend.kind(),
                backend.adapter()
            );
            for o in &checkpoint.scene.overrides {
                eprintln!("talus: --set {}", o.arg());
            }
            eprintln!("talus: {}", talus::run::describe_time_step(&setup));
            if let Some(note) = backend.layout_note() {
                eprintln!("talus: {note}");
            }
            let opts = RunOptions { steps, progress: !no_progress, checkpoint: Some(checkpoint), stop: stop_on_signal() };
            let s = talus::run::run_scene(&setup, backend.as_mut(), &out, opts)?;
            report_run(&setup, &s, &out);
            Ok(ExitCode::SUCCESS)
        }
        Command::Resume { checkpoint: file, steps, until, out, backend, checkpoint_every, no_progress } => {
            let file = talus::resume::checkpoint_path(&file)?;
            let c = Checkpoint::read(&file)?;
            let setup = talus::resume::setup_of(&file, &c)?;
            let (steps, until_note) = talus::resume::steps_to_run(&file, &c, talus::resume::Extent { steps, until }, setup.output_every)?;
            let out = talus::resume::out_dir(&file, &c, &setup.name, out)?;
            let (mut backend, notice) = talus::resume::open_at(&setup, &c, backend.into())?;
            if let Some(notice) = notice {
                eprintln!("{notice}");
            }
            eprintln!(
                "talus: {} at step {} ({} particles, written on {}): {steps} more steps on {} [{}]",
                file.display(),
                c.meta.step,
                c.state.len(),
                c.meta.backend,
                backend.kind(),
                backend.adapter()
            );
            let checkpoint = CheckpointOptions { scene: c.meta.scene.clone(), inputs: c.meta.inputs.clone(), every: checkpoint_every };
            let opts = RunOptions { steps: Some(steps), progress: !no_progress, checkpoint: Some(checkpoint), stop: stop_on_signal() };
            if let Some(note) = until_note {
                eprintln!("talus: {note}");
            }
            let progress = talus::resume::progress_in(&file, &c, &out);
            let s = talus::run::continue_run(&setup, backend.as_mut(), &out, opts, progress)?;
            report_run(&setup, &s, &out);
            Ok(ExitCode::SUCCESS)
        }
        Command::Verify { scene: None, benchmark: Some(BenchmarkArg::ChungOoi), backend, out, .. } => {
            let report = talus::chung_ooi::run_benchmark(verify_backends(backend), &talus::chung_ooi::open_backend, &talus::chung_ooi::Variant::all())?;
            print!("{}", report.table());
            let out = out.unwrap_or_else(|| PathBuf::from("out").join("chung-ooi"));
            let files = talus::chung_ooi::write_outputs(&report, &out)?;
            println!("output: {} ({})", out.display(), files.join(", "));
            if report.passed() {
                Ok(ExitCode::SUCCESS)
            } else {
                eprintln!("talus: {}", TalusError::Verify(format!("chung-ooi: {} rows beyond tolerance", report.failures().len())));
                Ok(ExitCode::from(1))
            }
        }
        Command::Verify { scene: None, benchmark: Some(BenchmarkArg::Clumps), backend, out, .. } => {
            let report = talus::clump_bench::run_benchmark(verify_backends(backend), &talus::chung_ooi::open_backend)?;
            print!("{}", report.table());
            let out = out.unwrap_or_else(|| PathBuf::from("out").join("clumps"));
            let files = talus::clump_bench::write_outputs(&report, &out)?;
            println!("output: {} ({})", out.display(), files.join(", "));
            if report.passed() {
                Ok(ExitCode::SUCCESS)
            } else {
                eprintln!("talus: {}", TalusError::Verify(format!("clumps: {} rows beyond tolerance", report.failures().len())));
                Ok(ExitCode::from(1))
            }
        }
        Command::Verify { scene: None, benchmark: Some(BenchmarkArg::Cohesion), backend, out, .. } => {
            let report = talus::cohesion_bench::run_benchmark(verify_backends(backend), &talus::chung_ooi::open_backend)?;
            print!("{}", report.table());
            let out = out.unwrap_or_else(|| PathBuf::from("out").join("cohesion"));
            let files = talus::cohesion_bench::write_outputs(&report, &out)?;
            println!("output: {} ({})", out.display(), files.join(", "));
            if report.passed() {
                Ok(ExitCode::SUCCESS)
            } else {
                eprintln!("talus: {}", TalusError::Verify(format!("cohesion: {} rows beyond tolerance", report.failures().len())));
                Ok(ExitCode::from(1))
            }
        }
        Command::Verify { scene: None, .. } => Err(TalusError::Verify("give a scene file or --benchmark".into())),
        Command::Verify { scene: Some(scene), steps, set, trace, .. } => {
            let mut record = SceneRecord::read(&scene)?;
            record.overrides = talus::scene::overrides::effective(set);
            let setup = talus::scene::overrides::parse_with(&record.text, &scene, &record.overrides)?;
            for o in &record.overrides {
                eprintln!("talus: --set {}", o.arg());
            }
            let steps = steps.unwrap_or(setup.steps);
            eprintln!("talus: {}", talus::run::describe_time_step(&setup));
            let report = talus::verify::verify(&setup, steps, &talus::verify::Tolerances::default())?;
            println!("{report}");
            if let Some(path) = trace {
                talus::output::atomic::write_atomic(&path, report.trace_csv(("cpu", "gpu")).as_bytes())?;
                eprintln!("talus: wrote {}", path.display());
            }
            if report.passed() {
                Ok(ExitCode::SUCCESS)
            } else {
                let names: Vec<String> = report.failures().iter().map(|r| format!("{} ({:.3e} > {:.1e})", r.quantity, r.max_rel, r.tolerance.unwrap_or(0.0))).collect();
                eprintln!("talus: {}", TalusError::Verify(format!("beyond tolerance: {}", names.join(", "))));
                Ok(ExitCode::from(1))
            }
        }
        Command::Bench { particles, steps, warmup, backend, json, profile, model, adhesion, packing, ids, untracked, scene, from, peak_bandwidth } => {
            if let Some(p) = peak_bandwidth.filter(|p| !(p.is_finite() && *p > 0.0)) {
                return Err(talus::TalusError::Other(format!("--peak-bandwidth {p}: a bandwidth in GB/s above 0")));
            }
            if steps == 0 {
                return Err(talus::TalusError::Other("--steps 0: a bench times at least 1 step".into()));
            }
            let mut r = match scene {
                Some(path) => talus::bench_scene::bench_scene(backend.into(), &path, from, steps, warmup, profile)?,
                None => talus::bench::bench(backend.into(), particles, steps, warmup, profile, model, adhesion, packing, ids, !untracked)?,
            };
            r.peak_bandwidth_gb_s = peak_bandwidth;
            println!("{r}");
            if let Some(path) = json {
                talus::output::write_atomic(&path, r.to_json().as_bytes())?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Render { input, view, color, size, out } => {
            use talus::render::{ColorBy, RenderOptions, View};
            let view = match view {
                ViewArg::X => View::X,
                ViewArg::Y => View::Y,
                ViewArg::Z => View::Z,
                ViewArg::Iso => View::Iso,
            };
            let color = match color {
                ColorArg::Speed => ColorBy::Speed,
                ColorArg::Radius => ColorBy::Radius,
                ColorArg::Id => ColorBy::Id,
                ColorArg::Body => ColorBy::Body,
                ColorArg::Force => ColorBy::Force,
            };
            let vtu = talus::render::snapshot_of(&input)?;
            // the run directory: the input, or the folder above `snapshots/`
            let run_dir = if input.is_dir() { Some(input.clone()) } else { vtu.parent().and_then(|p| p.parent()).map(PathBuf::from) };
            let (outlines, note) = outlines_for(run_dir.as_deref(), &vtu, view);
            let out = out.unwrap_or_else(|| {
                run_dir.clone().filter(|d| d.join("summary.json").is_file() || d.join(talus::run::STOPPED_JSON).is_file()).unwrap_or_else(|| vtu.parent().map(PathBuf::from).unwrap_or_default()).join(format!("render_{}_{}.png", view.name(), color.name()))
            });
            let info = talus::render::render_file(&vtu, &outlines, RenderOptions { view, color, size }, &out)?;
            if let Some(note) = note {
                eprintln!("talus: {note}");
            }
            println!("{}: {}", vtu.display(), info.describe(color));
            println!("picture: {}", out.display());
            Ok(ExitCode::SUCCESS)
        }
        Command::Plot { run_dir, out } => {
            let png = talus::plot::plot_run(&run_dir, out.as_deref())?;
            println!("picture: {}", png.display());
            Ok(ExitCode::SUCCESS)
        }
        Command::Info { shaders } => {
            // rank 0 speaks for the run
            if !ranks.is_root() {
                return Ok(ExitCode::SUCCESS);
            }
            // a report read through a pipe that closes early (`talus info | head -1`) ends
            // quietly, as other command-line tools do, instead of panicking in `println!`
            #[cfg(unix)]
            // SAFETY: setting a signal's action to its default, before any other thread of this
            // command writes, changes no memory of this program
            unsafe {
                libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            }
            print_ranks(ranks);
            let adapters = talus::gpu::list_adapters();
            if adapters.is_empty() {
                println!("GPU adapters: none found (install a Vulkan driver, e.g. `apt-get install mesa-vulkan-drivers libvulkan1`)");
            } else {
                println!("GPU adapters:");
                for a in &adapters {
                    let software = if a.software { " [software emulation: `--backend auto` runs on the CPU instead]" } else { "" };
                    println!("  {} ({}, {}; driver {}){software}", a.name, a.backend, a.device_type, a.driver);
                    println!("    max_storage_buffer_binding_size        {}", a.max_storage_buffer_binding_size);
                    println!("    max_storage_buffers_per_shader_stage   {}", a.max_storage_buffers_per_shader_stage);
                    println!("    max_compute_invocations_per_workgroup  {}", a.max_compute_invocations_per_workgroup);
                    println!("    max_compute_workgroups_per_dimension   {}", a.max_compute_workgroups_per_dimension);
                    println!("    max_buffer_size                        {}", a.max_buffer_size);
                    match a.device_memory {
                        Some(m) => {
                            let per = talus::gpu::default_bytes_per_particle(1_000_000);
                            let cap = a.max_storage_buffer_binding_size.min(a.max_buffer_size);
                            println!("    device memory                          {:.2} GB", m as f64 / 1e9);
                            println!("    particles that fit                     {} (at {per:.0} B/particle: the default list of 3.5 slots/particle; the binding limit allows {})", talus::gpu::particles_that_fit(m, per, cap), cap / 16);
                        }
                        None => println!("    device memory                          not reported by this backend"),
                    }
                    if std::env::var_os(talus::gpu::MAX_DEVICE_ENV).is_some() {
                        match talus::gpu::memory_budget(a.device_memory, None) {
                            Ok(Some(m)) => println!("    memory budget ({})  {:.2} GB: about {} particles", talus::gpu::MAX_DEVICE_ENV, m as f64 / 1e9, talus::gpu::particles_that_fit(m, talus::gpu::default_bytes_per_particle(1_000_000), a.max_storage_buffer_binding_size.min(a.max_buffer_size))),
                            Ok(None) => {}
                            Err(e) => println!("    memory budget: {e}"),
                        }
                    }
                }
            }
            println!("CPU threads: {}", rayon::current_num_threads());
            if shaders {
                print_shader_statistics()?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `talus info --shaders`: the driver's statistics of the step's passes on the preferred
/// adapter (`gpu::shader_stats`), and on NVIDIA the warps an SM keeps resident at each pass's
/// register count.
fn print_shader_statistics() -> talus::error::Result<()> {
    use talus::gpu::shader_stats;
    // the adapter alone: the passes are compiled on a device of its own (`shader_stats`), so
    // this also runs where wgpu cannot open a device (RADV's null device, `RADV_FORCE_FAMILY`)
    let (_instance, adapter) = talus::gpu::preferred_adapter_handle()?;
    let target = shader_stats::CompileTarget::for_adapter(&adapter)?;
    let cap = talus::gpu::split::binding_cap_for(&adapter.limits(), None)?;
    // the arrays cut for a million particles at the default list (3.5 slots a particle), no
    // rolling work booked and no periodic axis (the settle box; the bed's rows of
    // `STEP_PASSES`, which books rolling work, take three motion rows, `shader_stats::Layout`),
    // the list slots placed where TALUS_GPU_SLOT_PLACES says
    let (n, slots) = (shader_stats::STATS_PARTICLES, shader_stats::STATS_SLOTS);
    let split = talus::gpu::split::SplitLayout::new(cap, n, slots, talus::gpu::split::motion_rows(false)).with_images(false).with_places(n, slots, talus::gpu::slot_places_wanted()?);
    let checks = if target.shader_checks { "with naga's runtime checks" } else { "without naga's runtime checks" };
    let own = if target.reload_own { "own state read again at each contact" } else { "own state kept in registers" };
    println!("Compiled passes on {} ({checks}, {}; force pass: {own}, {}), as the driver reports them:", target.describe(), talus::gpu::SHADER_CHECKS_ENV, talus::gpu::RELOAD_OWN_ENV);
    let nvidia = adapter.get_info().vendor == 0x10de;
    for e in shader_stats::pass_statistics(&target, &split, shader_stats::STEP_PASSES)? {
        let Some(stats) = &e.statistics else {
            println!("  {:<16} workgroup {:>3}: compiled; the driver reports no statistics (no VK_KHR_pipeline_executable_properties)", e.pass, e.workgroup_size);
            continue;
        };
        let stats: Vec<String> = stats.iter().map(|s| format!("{} {}", s.name, s.value)).collect();
        println!("  {:<16} subgroup {:>2}, workgroup {:>3}: {}", e.pass, e.subgroup_size, e.workgroup_size, stats.join(", "));
        if let (true, Some(r)) = (nvidia, e.registers()) {
            println!(
                "  {:<16} resident warps per SM at {r} registers: {} of 64 (H100, H200, A100), {} of 48 (desktop Ampere, Ada)",
                "",
                shader_stats::resident_warps(r as u32, e.workgroup_size, 64),
                shader_stats::resident_warps(r as u32, e.workgroup_size, 48)
            );
        }
    }
    Ok(())
}

/// `talus info`: the MPI rank count (1 without the `mpi` feature or outside mpirun).
fn print_ranks(ranks: &Ranks) {
    if Ranks::mpi_built() {
        println!("MPI ranks: {} (built with the `mpi` feature)", ranks.size());
        return;
    }
    println!("MPI ranks: 1 (built without the `mpi` feature: `cargo build --release --features mpi`, docs/mpi.md)");
    // a build without MPI started by mpirun is several independent one-rank processes
    let launched = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE"].iter().find_map(|v| std::env::var(v).ok().map(|n| (*v, n)));
    if let Some((var, n)) = launched.filter(|(_, n)| n != "1") {
        println!("  note: {var}={n}: started by mpirun, but each of the {n} processes runs alone");
    }
}

/// The wall outlines of the run that wrote `vtu`: its `summary.json` names the scene, which is
/// loaded again for its walls (at the snapshot's time). Without them the picture has no
/// outlines, and the note says why.
fn outlines_for(run_dir: Option<&std::path::Path>, vtu: &std::path::Path, view: talus::render::View) -> (Vec<[glam::DVec3; 2]>, Option<String>) {
    let Some(dir) = run_dir else { return (Vec::new(), Some("no run directory: drawn without wall outlines".into())) };
    // a finished run's summary.json, or a stopped run's stopped.json, names the scene
    let summary = [dir.join("summary.json"), dir.join(talus::run::STOPPED_JSON)].into_iter().find(|p| p.is_file()).unwrap_or_else(|| dir.join("summary.json"));
    let record = std::fs::read_to_string(&summary).ok().and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok()).unwrap_or_default();
    let record = &record["scene"];
    // the absolute path (summaries before it have the path as typed, relative to where the
    // run was started)
    let scene = record["absolute_path"].as_str().or_else(|| record["path"].as_str()).map(PathBuf::from);
    let Some(scene) = scene else {
        return (Vec::new(), Some(format!("{}: no scene path to take the walls from: drawn without wall outlines", summary.display())));
    };
    // the run's --set overrides, which may move or add walls
    let overrides: Vec<Override> = record["overrides"].as_object().map(|m| m.iter().map(|(path, value)| Override { path: path.clone(), value: value.clone() }).collect()).unwrap_or_default();
    let text = match std::fs::read_to_string(&scene) {
        Ok(text) => text,
        Err(e) => return (Vec::new(), Some(format!("walls not drawn: the run's scene {} cannot be read ({e})", scene.display()))),
    };
    let changed = record["checksum"]
        .as_str()
        .filter(|&c| c != format!("fnv1a-64:{}", talus::scene::overrides::fnv1a64(text.as_bytes())))
        .map(|_| format!("{} changed since the run (its checksum differs from {}): walls drawn as the file has them now", scene.display(), summary.display()));
    match talus::scene::overrides::parse_with(&text, &scene, &overrides) {
        Ok(setup) => {
            let time = talus::render::snapshot_step(vtu).map(|s| s as f64 * setup.dt).unwrap_or(0.0);
            (talus::render::wall_outlines(&setup, time, view), changed)
        }
        Err(e) => (Vec::new(), Some(format!("walls not drawn: the run's scene does not load ({e})"))),
    }
}

/// What `talus run` and `talus resume` print at the end: speed, measurements, rest, and where
/// the outputs are.
fn report_run(setup: &talus::Setup, s: &talus::output::Summary, out: &Path) {
    println!(
        "{} steps ({:e} s simulated) in {:.3} s: {:.4e} particle-steps/s, {} contacts, total energy {:e} J",
        s.steps, s.simulated_time, s.wall_seconds, s.particle_steps_per_second, s.contacts, s.energies.total
    );
    for m in &s.measurements {
        println!("{}", m.line());
    }
    if let Some(r) = &s.rest {
        if r.reached {
            println!("at rest: kinetic energy {:.3e} J = {:.2e} of its peak {:.3e} J (at {:.4} s)", r.final_kinetic, r.final_ratio, r.peak_kinetic, r.peak_time);
        } else {
            println!("not at rest after {} steps: kinetic energy {:.3e} J = {:.2e} of its peak (until_rest asks < {:e})", s.steps, r.final_kinetic, r.final_ratio, r.kinetic_fraction);
        }
    }
    println!("output: {}", out.display());
    println!("  energy chart:   {}", out.join(talus::run::ENERGY_PNG).display());
    println!("  final state:    {}", out.join(talus::run::RENDER_PNG).display());
    if setup.snapshot_every > 0 {
        println!("  snapshots:      {} (ParaView: {})", out.join("snapshots").display(), out.join("particles.pvd").display());
        println!("  other views:    talus render {} --view iso --color radius", out.display());
    }
    println!("  checkpoint:     {} (continue with `talus resume`)", out.join(talus::checkpoint::CHECKPOINT_FILE).display());
}

/// A flag Ctrl-C (SIGINT) and SIGTERM set, so the run loop stops after the current batch and
/// writes its checkpoint; a second signal exits at once. `None` when no handler could be set.
fn stop_on_signal() -> Option<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    let seen = flag.clone();
    let handler = move || {
        if seen.swap(true, Ordering::SeqCst) {
            eprintln!("talus: stopped at once, without a checkpoint");
            std::process::exit(talus::error::INTERRUPTED_EXIT_STATUS as i32);
        }
        eprintln!("\ntalus: stopping after the current batch to write a checkpoint (again to stop at once)");
    };
    match ctrlc::set_handler(handler) {
        Ok(()) => Some(flag),
        Err(e) => {
            eprintln!("talus: cannot catch Ctrl-C ({e}); an interrupted run writes no checkpoint");
            None
        }
    }
}

fn parse_override(arg: &str) -> std::result::Result<Override, String> {
    Override::parse(arg)
}

fn parse_model(name: &str) -> std::result::Result<talus::contact::ContactModel, String> {
    talus::contact::ContactModel::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = talus::contact::ContactModel::ALL.iter().map(|m| m.name()).collect();
        format!("unknown contact model `{name}`; the models are {}", names.join(", "))
    })
}

fn parse_adhesion(name: &str) -> std::result::Result<talus::contact::params::Adhesion, String> {
    talus::contact::params::Adhesion::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = talus::contact::params::Adhesion::ALL.iter().map(|m| m.name()).collect();
        format!("unknown adhesion `{name}`; the adhesion parts are {}", names.join(", "))
    })
}

/// The backends `--backend` names, in the order the benchmarks run them.
fn verify_backends(backend: VerifyBackendArg) -> &'static [&'static str] {
    match backend {
        VerifyBackendArg::Cpu => &["cpu"],
        VerifyBackendArg::Gpu => &["gpu"],
        VerifyBackendArg::Both => &["cpu", "gpu"],
    }
}
