//! Checkpoints and `talus resume` (docs/output.md, "checkpoint.talus"): a run split by a
//! checkpoint gives byte-identical outputs and final state on the CPU and on the GPU
//! (lavapipe counts), a checkpoint continues on the other backend within `talus verify`'s
//! tolerances, Ctrl-C writes a checkpoint that continues exactly, a bad checkpoint or bad flags
//! are refused with the file and the fault named and nothing written, and a scene's
//! `initial_state` may be a checkpoint, contact history included.
//!
//! The scene: grains inserted at 1e5/s into a rotating conical hopper (a moving mesh wall),
//! through whose orifice they fall into an outlet; split at step 200 of 400, when grains are
//! still being inserted and the outlet has started taking them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use talus::backend::Backend;
use talus::checkpoint::{Checkpoint, SceneRecord, CHECKPOINT_FILE};
use talus::layout::consts::{MESH_KEY_BIT, WALL_KEY_BIT};
use talus::output::Summary;
use talus::run::{continue_run, open_backend, run_scene, BackendChoice, CheckpointOptions, RunOptions};

const FUNNEL: &str = r#"{
  "time_step": "auto",
  "steps": 400,
  "output": { "every_steps": 25 },
  "snapshot_every": 4,
  "domain": { "min": [-0.022, -0.022, -0.01], "max": [0.022, 0.022, 0.04] },
  "materials": {
    "glass": { "density": 2500, "hz_shear": 1e7, "hz_poiss": 0.3, "fric": 0.5 },
    "steel": { "density": 7800, "hz_shear": 8e10, "hz_poiss": 0.3, "fric": 0.4 }
  },
  "contacts": { "default": { "dp_nratio": 0.3, "dp_sratio": 0.3 } },
  "walls": [
    { "type": "mesh", "name": "hopper", "file": "hopper.stl", "material": "steel", "load_point": [0, 0, 0],
      "motion": { "angular_velocity": 30, "axis": [0, 0, 1], "center": [0, 0, 0] } }
  ],
  "insert": [
    { "name": "fill", "region": { "type": "cylinder", "base": [0, 0, 0.002], "axis": [0, 0, 1], "length": 0.012, "radius": 0.010 },
      "rate": 100000, "count": 300, "radius": { "distribution": "uniform", "min": 0.0009, "max": 0.0011 },
      "material": "glass", "velocity": [0.5, 0, -4], "seed": 5 }
  ],
  "outlets": [ { "name": "out", "plane": { "point": [0, 0, -0.002], "normal": [0, 0, 1] } } ]
}"#;

const SPLIT: u64 = 200;
const TOTAL: u64 = 400;

/// A temporary directory holding the funnel scene and its mesh.
fn funnel_dir(steps: u64) -> (tempfile::TempDir, PathBuf) {
    scene_dir(&FUNNEL.replace("\"steps\": 400", &format!("\"steps\": {steps}")))
}

/// A temporary directory holding `scene` (as funnel.json) and the hopper mesh.
fn scene_dir(scene: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/meshes/hopper.stl"), dir.path().join("hopper.stl")).unwrap();
    let path = dir.path().join("funnel.json");
    std::fs::write(&path, scene).unwrap();
    (dir, path)
}

/// The funnel fed gently: grains enter at 1 m/s just above the orifice of a hopper turning at
/// 5 rad/s, and the outlet sits just below it. At 4 m/s the flow is too violent for f32 and f64
/// to stay within `talus verify`'s tolerances even from step 0; this one passes them from step
/// 0, so it shows what a hand-over through a checkpoint adds.
fn gentle_funnel() -> String {
    let s = FUNNEL.replace("\"velocity\": [0.5, 0, -4]", "\"velocity\": [0, 0, -1]").replace("\"angular_velocity\": 30", "\"angular_velocity\": 5");
    let s = s.replace("\"base\": [0, 0, 0.002], \"axis\": [0, 0, 1], \"length\": 0.012, \"radius\": 0.010", "\"base\": [0, 0, 0.001], \"axis\": [0, 0, 1], \"length\": 0.012, \"radius\": 0.009");
    let s = s.replace("\"point\": [0, 0, -0.002]", "\"point\": [0, 0, -0.0005]");
    assert_ne!(s, FUNNEL);
    s
}

/// `talus run` through the library: `steps` steps of `scene` into `out`, checkpoint at the end.
fn run(scene: &Path, choice: BackendChoice, steps: u64, out: &Path) -> Summary {
    let record = SceneRecord::read(scene).unwrap();
    let setup = talus::scene::parse_str(&record.text, scene).unwrap();
    let checkpoint = Some(CheckpointOptions::for_scene(record, &setup, None).unwrap());
    let (mut backend, _) = open_backend(&setup, choice).unwrap();
    run_scene(&setup, backend.as_mut(), out, RunOptions { steps: Some(steps), checkpoint, ..Default::default() }).unwrap()
}

/// `talus resume` through the library: `steps` more steps from `file` into `out`.
fn resume(file: &Path, choice: BackendChoice, steps: u64, out: &Path) -> Summary {
    let c = Checkpoint::read(file).unwrap();
    let setup = talus::resume::setup_of(file, &c).unwrap();
    let (mut backend, _) = talus::resume::open_at(&setup, &c, choice).unwrap();
    assert_eq!(backend.steps_done(), c.meta.step);
    let checkpoint = Some(CheckpointOptions { scene: c.meta.scene.clone(), inputs: c.meta.inputs.clone(), every: None });
    let progress = talus::resume::progress_in(file, &c, out);
    continue_run(&setup, backend.as_mut(), out, RunOptions { steps: Some(steps), checkpoint, ..Default::default() }, progress).unwrap()
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Run 400 steps whole, and 200 + 200 through a checkpoint on the same backend: every output
/// and the final state must be the same bytes.
fn split_run_is_byte_identical(choice: BackendChoice) {
    let (dir, scene) = funnel_dir(TOTAL);
    let (whole, part, rest) = (dir.path().join("whole"), dir.path().join("part"), dir.path().join("rest"));
    let t = std::time::Instant::now();
    let s_whole = run(&scene, choice, TOTAL, &whole);
    run(&scene, choice, SPLIT, &part);
    let saved = Checkpoint::read(&part.join(CHECKPOINT_FILE)).unwrap();
    let s_rest = resume(&part.join(CHECKPOINT_FILE), choice, TOTAL - SPLIT, &rest);
    println!("{choice}: whole and split runs in {:.2} s", t.elapsed().as_secs_f64());

    // the split falls where grains are still entering, the outlet is taking them and contacts
    // with the moving mesh carry history
    let flow = saved.meta.run.flow.as_ref().expect("flow state");
    assert!(flow.totals.inserted_count[0] > 0 && flow.totals.inserted_count[0] < 300, "{:?}", flow.totals);
    assert!(flow.totals.outlet_count[0] > 0 && s_whole.flow.as_ref().unwrap().outlets[0].count > flow.totals.outlet_count[0], "{:?}", flow.totals);
    assert!(saved.state.history.iter().any(|c| c.between_particles()), "no ball-ball history at the split");
    assert!(saved.state.history.iter().any(|c| c.partner & (WALL_KEY_BIT | MESH_KEY_BIT) == WALL_KEY_BIT | MESH_KEY_BIT), "no mesh history at the split");
    assert_eq!(saved.meta.backend, choice.to_string());

    for f in ["energy.csv", "outflow.csv", "walls.csv", "snapshots/particles_0000000400.vtu"] {
        assert!(read(&whole.join(f)) == read(&rest.join(f)), "{choice}: {f} differs between the whole run and the split one");
    }
    // the final state, every array and accumulator, bit for bit
    let (a, b) = (Checkpoint::read(&whole.join(CHECKPOINT_FILE)).unwrap(), Checkpoint::read(&rest.join(CHECKPOINT_FILE)).unwrap());
    assert_eq!(a.meta.step, TOTAL);
    assert!(a.state == b.state, "{choice}: final particle state or contact history differs");
    assert!(a.exact == b.exact, "{choice}: final exact backend state differs");
    assert_eq!(a.meta.carried, b.meta.carried);
    assert_eq!(a.meta.run.flow, b.meta.run.flow);
    assert_eq!(a.meta.run.energy_csv, b.meta.run.energy_csv);
    // the energy sentinel measures the resumed run from the first run's start, with its peak
    assert!(a.meta.run.sentinel.is_some_and(|s| s.start_step == 0 && s.peak > 0.0), "{:?}", a.meta.run.sentinel);
    assert_eq!(a.meta.run.sentinel, b.meta.run.sentinel);
    assert_eq!((s_whole.energies, s_whole.flow, s_whole.contacts), (s_rest.energies, s_rest.flow, s_rest.contacts));
    // the resumed directory's particles.pvd lists the earlier run's snapshots (up to the
    // checkpoint's step, by relative path) and then its own: one series in ParaView
    let pvd: Vec<String> = b.meta.run.pvd.iter().map(|(_, f)| f.clone()).collect();
    assert_eq!(
        pvd,
        [
            "../part/snapshots/particles_0000000000.vtu",
            "../part/snapshots/particles_0000000100.vtu",
            "../part/snapshots/particles_0000000200.vtu",
            "snapshots/particles_0000000300.vtu",
            "snapshots/particles_0000000400.vtu"
        ]
    );
    let index = std::fs::read_to_string(rest.join("particles.pvd")).unwrap();
    for f in &pvd {
        assert!(rest.join(f).is_file(), "{f} listed in the resumed particles.pvd is not there");
        assert!(index.contains(&format!("file=\"{f}\"")), "{f} not in particles.pvd:\n{index}");
    }
    assert_eq!(entries(&rest.join("snapshots")), ["particles_0000000300.vtu", "particles_0000000400.vtu"]);
}

#[test]
fn cpu_run_split_by_a_checkpoint_is_byte_identical() {
    split_run_is_byte_identical(BackendChoice::Cpu);
}

#[test]
fn gpu_run_split_by_a_checkpoint_is_byte_identical() {
    split_run_is_byte_identical(BackendChoice::Gpu);
}

/// A checkpoint of either backend continues on both; they agree as `talus verify` asks.
#[test]
fn checkpoint_continues_on_the_other_backend_within_verify_tolerances() {
    let (dir, scene) = scene_dir(&gentle_funnel());
    for writer in [BackendChoice::Cpu, BackendChoice::Gpu] {
        let out = dir.path().join(format!("part-{writer}"));
        run(&scene, writer, SPLIT, &out);
        let file = out.join(CHECKPOINT_FILE);
        let c = Checkpoint::read(&file).unwrap();
        let setup = talus::resume::setup_of(&file, &c).unwrap();
        let (mut cpu, _) = talus::resume::open_at(&setup, &c, BackendChoice::Cpu).unwrap();
        let (mut gpu, _) = talus::resume::open_at(&setup, &c, BackendChoice::Gpu).unwrap();
        // the saved work partitions arrive on both (to f32 rounding on the GPU)
        let (ec, eg) = (cpu.energies().unwrap(), gpu.energies().unwrap());
        for (a, b) in [(ec.slip, eg.slip), (ec.dashpot, eg.dashpot), (ec.wall_work, eg.wall_work), (ec.removed, eg.removed)] {
            assert!((a - b).abs() <= 1e-5 * a.abs().max(b.abs()), "{writer}: {a:e} vs {b:e}");
        }
        let mut flows = (talus::flow::FlowDriver::new(&setup).unwrap(), talus::flow::FlowDriver::new(&setup).unwrap());
        for f in [&mut flows.0, &mut flows.1] {
            f.as_mut().unwrap().restore(c.meta.run.flow.clone().unwrap()).unwrap();
        }
        let report = talus::verify::verify_from(&setup, cpu.as_mut(), gpu.as_mut(), flows, TOTAL - SPLIT, &talus::verify::Tolerances::default()).unwrap();
        println!("written on {writer}:\n{report}");
        assert!(report.passed(), "resumed from a {writer} checkpoint: {:?}", report.failures());
        assert_eq!(*report.checkpoints.first().unwrap(), SPLIT);
        // after the split grains went on entering, touched the turning mesh and left
        let (mut a, _) = talus::resume::open_at(&setup, &c, writer).unwrap();
        let mut flow = talus::flow::FlowDriver::new(&setup).unwrap().unwrap();
        flow.restore(c.meta.run.flow.clone().unwrap()).unwrap();
        let before = flow.totals().clone();
        while a.steps_done() < TOTAL {
            a.step(setup.output_every).unwrap();
            flow.exchange(&setup, a.as_mut()).unwrap();
        }
        let t = flow.totals();
        assert!(t.inserted_count[0] > before.inserted_count[0] && t.outlet_count[0] > before.outlet_count[0], "{before:?} -> {t:?}");
        assert!(a.export_state().unwrap().history.iter().any(|h| h.partner & MESH_KEY_BIT != 0 && !h.between_particles()), "no mesh contact");
    }
}

fn talus(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_talus")).args(args).current_dir(cwd).env("XDG_RUNTIME_DIR", cwd).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// Ctrl-C stops `talus run` after a batch: the checkpoint holds that batch's state (the last
/// row of energy.csv), the exit status is 130, and resuming gives the rows of a run that was
/// never stopped. `--checkpoint-every` writes one while the run goes on.
#[test]
fn ctrl_c_writes_a_checkpoint_that_resumes_exactly() {
    let (dir, _) = funnel_dir(1_000_000);
    let d = dir.path();
    let mut child = Command::new(env!("CARGO_BIN_EXE_talus"))
        .args(["run", "funnel.json", "--backend", "cpu", "--out", "long", "--checkpoint-every", "4", "--no-progress"])
        .current_dir(d)
        .env("XDG_RUNTIME_DIR", d)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let file = d.join("long").join(CHECKPOINT_FILE);
    let t = std::time::Instant::now();
    while !file.exists() {
        assert!(t.elapsed().as_secs() < 120, "no periodic checkpoint after 120 s");
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // a periodic one: written after every 4th output (100 steps), complete (atomic rename)
    let periodic = Checkpoint::read(&file).unwrap();
    assert_eq!(periodic.meta.step % 100, 0);
    assert!(periodic.meta.step > 0);
    let kill = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted at step") && err.contains(&format!("long/{CHECKPOINT_FILE}")), "{err}");

    let c = Checkpoint::read(&file).unwrap();
    let k = c.meta.step;
    assert!(k >= periodic.meta.step && k.is_multiple_of(25), "{k}");
    let energy = std::fs::read_to_string(d.join("long/energy.csv")).unwrap();
    let last = energy.lines().last().unwrap();
    assert!(last.starts_with(&format!("{k},")), "checkpoint at {k}, energy.csv ends with {last}");
    assert_eq!(c.meta.run.energy_csv, energy);
    assert_eq!(c.meta.run.end_step, 1_000_000);

    // k + 50 steps in one go, and resumed
    let whole = talus(&["run", "funnel.json", "--backend", "cpu", "--out", "whole", "--steps", &(k + 50).to_string(), "--no-progress"], d);
    assert!(whole.status.success(), "{}", stderr(&whole));
    let resumed = talus(&["resume", "long/checkpoint.talus", "--backend", "cpu", "--steps", "50", "--no-progress"], d);
    assert!(resumed.status.success(), "{}", stderr(&resumed));
    let rdir = d.join(format!("long-resume-{k}"));
    for f in ["energy.csv", "outflow.csv", "walls.csv"] {
        assert!(read(&d.join("whole").join(f)) == read(&rdir.join(f)), "{f} of the resumed run differs");
    }
}

/// Bad checkpoints and bad flags: the error names the file and the fault, the exit status is
/// 2, and nothing is written.
#[test]
fn bad_checkpoints_and_flags_are_refused_naming_the_file() {
    let (dir, _) = funnel_dir(TOTAL);
    let d = dir.path();
    let ok = talus(&["run", "funnel.json", "--backend", "cpu", "--steps", "50", "--out", "base", "--no-progress"], d);
    assert!(ok.status.success(), "{}", stderr(&ok));
    let good = read(&d.join("base").join(CHECKPOINT_FILE));
    let bad = d.join("bad");
    std::fs::create_dir(&bad).unwrap();

    let refuse = |name: &str, bytes: &[u8], extra: &[&str], want: &[&str]| {
        let file = bad.join(name);
        std::fs::write(&file, bytes).unwrap();
        let before = entries(d);
        let rel = format!("bad/{name}");
        let mut args = vec!["resume", rel.as_str()];
        args.extend_from_slice(extra);
        args.push("--no-progress");
        let o = talus(&args, d);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(&rel), "{name}: the error does not name the file: {err}");
        for w in want {
            assert!(err.contains(w), "{name}: expected {w:?} in: {err}");
        }
        assert_eq!(entries(d), before, "{name}: something was written");
        assert_eq!(entries(&bad), vec![name.to_string()]);
        std::fs::remove_file(&file).unwrap();
    };
    refuse("truncated.talus", &good[..good.len() - 100], &[], &["truncated"]);
    refuse("header_only.talus", &good[..20], &[], &["truncated"]);
    let mut flipped = good.clone();
    let at = flipped.len() / 2;
    flipped[at] ^= 0x04;
    refuse("flipped.talus", &flipped, &[], &["corrupt", "checksum"]);
    let mut v7 = good.clone();
    v7[8..12].copy_from_slice(&7u32.to_le_bytes());
    refuse("version.talus", &v7, &[], &["version 7", "reads version 3"]);
    refuse("scene.talus", FUNNEL.as_bytes(), &[], &["not a Talus checkpoint"]);
    refuse("both.talus", &good, &["--steps", "10", "--until", "0.1"], &["--steps", "--until", "not both"]);
    refuse("past.talus", &good, &["--until", "1e-4"], &["--until", "not after", "step 50"]);
    refuse("done.talus", &good, &[], &["already reached its last step 50"]);

    // a mesh file that changed since: refused, naming it
    let stl = d.join("hopper.stl");
    let mesh = read(&stl);
    std::fs::write(&stl, [&mesh[..], &[0u8][..]].concat()).unwrap();
    let o = talus(&["resume", "base/checkpoint.talus", "--steps", "25", "--no-progress"], d);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("hopper.stl") && stderr(&o).contains("changed since the checkpoint"), "{}", stderr(&o));
    assert!(!d.join("base-resume-50").exists());
    std::fs::write(&stl, &mesh).unwrap();

    // the default directory is never written twice; --out says where
    let base_energy = read(&d.join("base/energy.csv"));
    let o = talus(&["resume", "base/checkpoint.talus", "--backend", "cpu", "--steps", "25", "--no-progress"], d);
    assert!(o.status.success(), "{}", stderr(&o));
    let again = talus(&["resume", "base/checkpoint.talus", "--backend", "cpu", "--steps", "25", "--no-progress"], d);
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr(&again).contains("already holds a run's outputs") && stderr(&again).contains("--out"), "{}", stderr(&again));
    assert_eq!(read(&d.join("base/energy.csv")), base_energy, "the checkpoint's run directory was touched");
    // continuing in place, as --out says
    let o = talus(&["resume", "base/checkpoint.talus", "--backend", "cpu", "--steps", "25", "--out", "base", "--no-progress"], d);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(read(&d.join("base/energy.csv")), read(&d.join("base-resume-50/energy.csv")));
    assert_eq!(Checkpoint::read(&d.join("base").join(CHECKPOINT_FILE)).unwrap().meta.step, 75);
    // the run directory stands for its checkpoint; a directory without one is refused
    let o = talus(&["resume", "base", "--backend", "cpu", "--steps", "25", "--out", "by_dir", "--no-progress"], d);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(Checkpoint::read(&d.join("by_dir").join(CHECKPOINT_FILE)).unwrap().meta.step, 100);
    std::fs::create_dir_all(d.join("empty")).unwrap();
    let o = talus(&["resume", "empty", "--steps", "25", "--no-progress"], d);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("empty") && stderr(&o).contains("without checkpoint.talus"), "{}", stderr(&o));

    // --until lands on the output cadence (every 25 steps): 37 steps after the checkpoint's
    // step 75 is off it, so the run ends at the nearest output, step 100, and says so
    let dt = Checkpoint::read(&d.join("base").join(CHECKPOINT_FILE)).unwrap().meta.dt;
    let until = format!("{:e}", (75.0 + 37.0) * dt);
    let o = talus(&["resume", "base/checkpoint.talus", "--backend", "cpu", "--until", &until, "--out", "until", "--no-progress"], d);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("is not on the output cadence (every 25 steps from the checkpoint's step 75): the run ends at step 100"), "{}", stderr(&o));
    let rows = std::fs::read_to_string(d.join("until/energy.csv")).unwrap();
    let steps: Vec<u64> = rows.lines().skip(1).filter_map(|l| l.split(',').next()?.parse().ok()).collect();
    assert_eq!(steps.last(), Some(&100), "{rows}");
    assert!(steps.iter().all(|k| k % 25 == 0), "{steps:?}");
    // on the cadence: no note
    let until = format!("{:e}", 125.0 * dt);
    let o = talus(&["resume", "until/checkpoint.talus", "--backend", "cpu", "--until", &until, "--out", "until2", "--no-progress"], d);
    assert!(o.status.success() && !stderr(&o).contains("cadence"), "{}", stderr(&o));
    assert!(std::fs::read_to_string(d.join("until2/energy.csv")).unwrap().lines().last().unwrap().starts_with("125,"));
}

/// A bed settled in an open box, saved, then the start of other scenes: particles and every
/// contact's history come from the checkpoint, wall contacts follow the walls by name.
const BED: &str = r#"{
  "time_step": 1e-5,
  "steps": 1200,
  "output": { "every_steps": 200 },
  "snapshot_every": 0,
  "materials": { "glass": { "density": 2500, "hz_shear": 1e7, "hz_poiss": 0.3, "fric": 0.5 } },
  "contacts": { "default": { "dp_nratio": 0.5, "dp_sratio": 0.5 } },
  "walls": [ { "type": "box", "name": "bin", "min": [0, 0, 0], "max": [0.012, 0.012, 0.03], "open": ["+z"] } ],
  "PARTICLES"
}"#;
const BED_LATTICE: &str = r#""generators": [ { "type": "lattice", "origin": [0.0015, 0.0015, 0.0012], "count": [4, 4, 3], "spacing": 0.0024,
                    "jitter": 0.0002, "radius": 0.001, "velocity": [0.05, 0, 0], "seed": 3 } ]"#;
const FROM_BED: &str = r#""initial_state": { "file": "bed/checkpoint.talus", "format": "checkpoint" }"#;

#[test]
fn initial_state_from_a_checkpoint_keeps_particles_and_contact_history() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("bed.json"), BED.replace("\"PARTICLES\"", BED_LATTICE)).unwrap();
    run(&d.join("bed.json"), BackendChoice::Cpu, 1200, &d.join("bed"));
    let c = Checkpoint::read(&d.join("bed").join(CHECKPOINT_FILE)).unwrap();
    let wall_contacts: Vec<_> = c.state.history.iter().filter(|h| !h.between_particles()).collect();
    assert!(c.state.history.iter().any(|h| h.between_particles() && h.history.shear.length() > 0.0), "no sheared ball-ball contact in the bed");
    assert!(!wall_contacts.is_empty());

    // the same scene from the checkpoint: forces from the saved history are the saved forces
    let same = BED.replace("\"PARTICLES\"", FROM_BED);
    let setup = talus::scene::parse_str(&same, &d.join("same.json")).unwrap();
    assert_eq!(setup.particles, c.state.particles);
    assert_eq!(setup.initial_contacts, c.state.history);
    assert_eq!(setup.input_files, vec![d.join("bed/checkpoint.talus")]);
    // the first forces are those of the saved state evaluated again from its history (with
    // full-step velocities in the dashpots), as when the whole state is imported
    let mut cpu = talus::cpu::CpuBackend::new(&setup).unwrap();
    let start = cpu.export_state().unwrap();
    assert_eq!(start.history, c.state.history, "the CPU did not start from the saved history");
    let mut imported = talus::cpu::CpuBackend::new(&setup).unwrap();
    imported.import_state(&talus::model::state::ParticleState { step: 0, image: vec![[0; 3]; c.state.len()], refresh: vec![true; c.state.len()], ..c.state.clone() }).unwrap();
    assert!(start.force == imported.export_state().unwrap().force);
    // without the history (a VTU start) the shear forces are missing
    let fmax = c.state.force.iter().map(|f| glam::DVec3::from(*f).length()).fold(0.0, f64::max);
    let mut fresh = setup.clone();
    fresh.initial_contacts.clear();
    let f0 = talus::cpu::CpuBackend::new(&fresh).unwrap().export_state().unwrap().force;
    let missing = f0.iter().zip(&start.force).map(|(a, b)| (glam::DVec3::from(*a) - glam::DVec3::from(*b)).length()).fold(0.0, f64::max);
    assert!(missing > 1e-3 * fmax, "history made no difference ({missing:e} N of {fmax:e} N)");
    let mut gpu = talus::gpu::GpuBackend::new(&setup, Default::default()).unwrap_or_else(|e| panic!("GPU backend unavailable ({e})"));
    let g = gpu.export_state().unwrap();
    assert_eq!(g.history.len(), c.state.history.len());
    for (a, b) in g.history.iter().zip(&c.state.history) {
        assert_eq!((a.owner, a.partner), (b.owner, b.partner));
        assert!((a.history.shear - b.history.shear).length() <= 1e-6 * b.history.shear.length().max(1e-12), "{a:?} vs {b:?}");
    }

    // new walls and a new contact model: the gate is new, the box lost its -y face, so the
    // floor (bin-z) moves from wall 4 to wall 3 and contacts with bin-y are dropped
    let discharge = r#"{
  "time_step": 1e-5, "steps": 100, "output": { "every_steps": 50 }, "snapshot_every": 0,
  "materials": { "glass": { "density": 2500, "youngsModulus": 2.6e7, "poissonsRatio": 0.3, "fric": 0.3 } },
  "contacts": { "default": { "model": "hooke", "coefficientRestitution": 0.5, "characteristicVelocity": 0.5 } },
  "walls": [ { "type": "box", "name": "bin", "min": [0, 0, 0], "max": [0.012, 0.012, 0.03], "open": ["-y", "+z"] },
             { "type": "plane", "name": "gate", "point": [0, -0.001, 0], "normal": [0, 1, 0] } ],
  "initial_state": { "file": "bed/checkpoint.talus", "format": "checkpoint" }
}"#;
    let setup = talus::scene::parse_str(discharge, &d.join("discharge.json")).unwrap();
    let names: Vec<&str> = setup.walls.iter().map(|w| w.name.as_str()).collect();
    assert_eq!(names, ["bin-x", "bin+x", "bin+y", "bin-z", "gate"]);
    let old_names = &c.meta.walls;
    let expected: Vec<_> = (c.state.history.iter())
        .filter_map(|h| {
            if h.between_particles() {
                return Some(*h);
            }
            let name = &old_names[(h.partner & !WALL_KEY_BIT) as usize];
            names.iter().position(|n| n == name).map(|w| talus::model::state::ContactRecord { partner: WALL_KEY_BIT | w as u32, ..*h })
        })
        .collect();
    assert!(expected.len() < c.state.history.len() || !c.state.history.iter().any(|h| h.partner == WALL_KEY_BIT | 2), "nothing touched bin-y");
    assert!(expected.iter().any(|h| h.partner == WALL_KEY_BIT | 3), "no floor contact kept");
    let mut sorted = expected.clone();
    sorted.sort_by_key(|h| (h.owner, h.partner));
    assert_eq!(setup.initial_contacts, sorted);
    let mut cpu = talus::cpu::CpuBackend::new(&setup).unwrap();
    cpu.step(100).unwrap();
    assert!(cpu.energies().unwrap().total().is_finite());

    // materials by name: a scene without "glass" must say which to use
    let other = discharge.replace("\"glass\"", "\"sand\"");
    let e = talus::scene::parse_str(&other, &d.join("other.json")).unwrap_err().to_string();
    assert!(e.contains("initial_state.file") && e.contains("\"glass\"") && e.contains("bed/checkpoint.talus"), "{e}");
    let named = other.replace("\"format\": \"checkpoint\"", "\"format\": \"checkpoint\", \"material\": \"sand\"");
    assert_eq!(talus::scene::parse_str(&named, &d.join("named.json")).unwrap().particles.len(), c.state.len());
    // a corrupt checkpoint is a scene error naming the key and the file
    let mut bytes = read(&d.join("bed").join(CHECKPOINT_FILE));
    let n = bytes.len();
    bytes[n - 9] ^= 1;
    std::fs::write(d.join("bad.talus"), bytes).unwrap();
    let e = talus::scene::parse_str(&discharge.replace("bed/checkpoint.talus", "bad.talus"), &d.join("x.json")).unwrap_err().to_string();
    assert!(e.contains("initial_state.file") && e.contains("bad.talus") && e.contains("checksum"), "{e}");
}
