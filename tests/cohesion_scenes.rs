//! The shipped cohesive scenes (scenes/cohesive_heap.json: JKR glass beads; scenes/wet_granules.json:
//! Willett capillary bridges), run as shipped scenes are checked: energy closes within 1e-3 of
//! the peak of kinetic + strain energy, a run split by a checkpoint gives the same bytes as the
//! whole run, and the measured trend holds: the slumped heap's angle of repose rises with the
//! surface energy, and wet beads stand steeper than dry ones (docs/measurements.md, "Angle of
//! repose against adhesion").
//!
//! Every check runs on both backends through the same code: the CPU tests as they are named,
//! the GPU twins with the suffix `_gpu` (they need a GPU adapter, lavapipe counts, and a GPU
//! backend that runs adhesion: until that lands it refuses adhesive scenes and the `_gpu` tests
//! fail saying so).
//!
//! The CI runs are reduced (`reduced`): 600 beads in a column 20 mm wide instead of 1,200 in
//! 40 mm (same fill height, so a more slender column that slumps as fully), the gate opened at
//! 0.2 s, 0.75 s in all, sampling from 0.6 s: 36,492 steps, about 15–40 s per run on 2 shared
//! cores. The full scenes are measured in docs/measurements.md.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use talus::checkpoint::{Checkpoint, SceneRecord, CHECKPOINT_FILE};
use talus::output::Summary;
use talus::run::{continue_run, open_backend, run_scene, BackendChoice, CheckpointOptions, RunOptions};

/// The 0.1 % of issue 14.
const CLOSURE: f64 = 1e-3;

fn shipped(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes").join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The CI version of a heap scene: half the beads (600) in a column half as wide (20 mm, the
/// gate at x = 20 mm), from the same fill height, so that the column is twice as slender and
/// slumps as fully as the shipped one; the gate opened at 0.2 s (the beads have landed and
/// settled), the heap sampled from 0.6 s to 0.75 s.
fn reduced(mut s: Value) -> Value {
    let g = &mut s["generators"][0];
    g["count"] = json!(600);
    g["box"]["max"][0] = json!(0.02);
    let gate = s["walls"].as_array_mut().unwrap().iter_mut().find(|w| w["name"] == "gate").expect("a gate");
    gate["point"][0] = json!(0.02);
    gate["motion"]["velocity"] = json!([[0, [0, 0, 0]], [0.2, [0, 0, 0]], [0.21, [1, 0, 0]]]);
    s["duration"] = json!(0.75);
    s["measure"][0]["from_time"] = json!(0.6);
    s["snapshot_every"] = json!(0);
    s
}

/// The heap with JKR surface energy `gamma` (J/m²); 0: no adhesion at all (dry glass).
fn with_surface_energy(mut s: Value, gamma: f64) -> Value {
    let d = s["contacts"]["default"].as_object_mut().unwrap();
    assert_eq!(d["adhesion"], "jkr");
    if gamma == 0.0 {
        d.remove("adhesion");
        d.remove("surface_energy");
    } else {
        d.insert("surface_energy".into(), json!(gamma));
    }
    s
}

/// Wet granules without their bridges.
fn dry(mut s: Value) -> Value {
    let d = s["contacts"]["default"].as_object_mut().unwrap();
    assert_eq!(d["adhesion"], "capillary");
    for k in ["adhesion", "liquid_volume", "surface_tension", "contact_angle"] {
        d.remove(k);
    }
    s
}

/// `scene` written into a fresh temporary directory.
fn write(scene: &Value, name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("{name}.json"));
    std::fs::write(&path, serde_json::to_string_pretty(scene).unwrap()).unwrap();
    (dir, path)
}

/// `talus run` through the library: `steps` steps (the scene's when `None`) into `out`, with a
/// checkpoint at the end.
fn run(scene: &Path, choice: BackendChoice, steps: Option<u64>, out: &Path) -> Summary {
    let record = SceneRecord::read(scene).unwrap();
    let setup = talus::scene::parse_str(&record.text, scene).unwrap_or_else(|e| panic!("{}: {e}", scene.display()));
    let checkpoint = Some(CheckpointOptions::for_scene(record, &setup, None).unwrap());
    let (mut backend, _) = open_backend(&setup, choice).unwrap_or_else(|e| panic!("{}: {choice} backend: {e}", scene.display()));
    run_scene(&setup, backend.as_mut(), out, RunOptions { steps, checkpoint, ..Default::default() }).unwrap_or_else(|e| panic!("{} on {choice}: {e}", scene.display()))
}

/// `talus resume` through the library: `steps` more steps from `file` into `out`.
fn resume(file: &Path, choice: BackendChoice, steps: u64, out: &Path) -> Summary {
    let c = Checkpoint::read(file).unwrap();
    let setup = talus::resume::setup_of(file, &c).unwrap();
    let (mut backend, _) = talus::resume::open_at(&setup, &c, choice).unwrap();
    assert_eq!(backend.steps_done(), c.meta.step);
    let checkpoint = Some(CheckpointOptions { scene: c.meta.scene.clone(), inputs: c.meta.inputs.clone(), every: None });
    continue_run(&setup, backend.as_mut(), out, RunOptions { steps: Some(steps), checkpoint, ..Default::default() }, c.meta.run).unwrap()
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// What energy.csv says of a run: max |total − total(0)| / max(kinetic + strain), and the last
/// row's surface and bond-break energies (`None` where the columns are absent: no adhesion).
#[derive(Clone)]
struct EnergyRecord {
    closure: f64,
    surface: Option<f64>,
    bond_break: Option<f64>,
}

fn energy_record(csv: &Path) -> EnergyRecord {
    let text = String::from_utf8(read(csv)).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("energy.csv header").split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name);
    let (kinetic, strain, total) = (col("kinetic").unwrap(), col("strain").unwrap(), col("total").unwrap());
    let rows: Vec<Vec<f64>> = lines.map(|l| l.split(',').map(|v| v.parse::<f64>().unwrap()).collect()).collect();
    assert!(rows.len() >= 2, "{}: fewer than two rows", csv.display());
    let t0 = rows[0][total];
    let peak = rows.iter().map(|r| r[kinetic] + r[strain]).fold(0.0, f64::max);
    assert!(peak > 0.0);
    let drift = rows.iter().map(|r| (r[total] - t0).abs()).fold(0.0, f64::max);
    let last = rows.last().unwrap();
    EnergyRecord { closure: drift / peak, surface: col("surface").map(|c| last[c]), bond_break: col("bond_break").map(|c| last[c]) }
}

/// One reduced heap run: its angle of repose (deg) and energies, after the checks every run
/// must pass: every sample fitted, the surface rising towards the back wall (−x), the energy
/// closed, and the adhesion columns present exactly when the scene has adhesion.
fn heap_angle(scene: &Value, name: &str, choice: BackendChoice) -> (f64, EnergyRecord) {
    let (dir, path) = write(scene, name);
    let out = dir.path().join("out");
    let s = run(&path, choice, None, &out);
    let m = &s.measurements[0];
    println!("{choice} {name}: {} steps, {}", s.steps, m.line());
    assert_eq!(m.kind, "repose_angle");
    assert!(m.details["samples"].as_u64().unwrap() >= 10 && m.details["failed_samples"] == 0, "{name}: {}", m.details);
    let angle = m.value.expect("an angle");
    let signed = m.details["signed_mean"].as_f64().unwrap();
    assert!((signed + angle).abs() < 1e-9, "{name}: every sample should fall away from the back wall (−x): {}", m.details);
    let e = energy_record(&out.join("energy.csv"));
    println!("{choice} {name}: closure {:.3e}, surface {:?} J, bond_break {:?} J", e.closure, e.surface, e.bond_break);
    assert!(e.closure <= CLOSURE, "{choice} {name}: energy closes to {:.3e} > {CLOSURE:.0e} of the peak", e.closure);
    let adhesive = scene["contacts"]["default"].get("adhesion").is_some();
    assert_eq!(e.surface.is_some(), adhesive, "{name}: the surface column comes with adhesion only");
    assert_eq!(e.bond_break.is_some(), adhesive, "{name}: the bond_break column comes with adhesion only");
    (angle, e)
}

/// The reduced column dry (no adhesion): `cohesive_heap.json` at γ = 0 and `wet_granules.json`
/// without its bridges are the same scene (only the description and the measurement's name
/// differ), so the angle test of each scene shares this one run on the CPU. A scene that is no
/// longer the same dry runs on its own (`same_dry_column`).
fn dry_column(scene: &Value, name: &str, choice: BackendChoice) -> (f64, EnergyRecord) {
    static CPU: std::sync::OnceLock<(Value, (f64, EnergyRecord))> = std::sync::OnceLock::new();
    if choice != BackendChoice::Cpu {
        return heap_angle(scene, name, choice);
    }
    let (shared, (angle, e)) = CPU.get_or_init(|| (scene.clone(), heap_angle(scene, name, choice)));
    if !same_dry_column(shared, scene) {
        return heap_angle(scene, name, choice);
    }
    println!("{choice} {name}: the shared dry run");
    (*angle, e.clone())
}

/// Whether two scenes run the same simulation: equal but for the description and the names of
/// their measurements.
fn same_dry_column(a: &Value, b: &Value) -> bool {
    let strip = |s: &Value| {
        let mut s = s.clone();
        s.as_object_mut().unwrap().remove("description");
        for m in s["measure"].as_array_mut().into_iter().flatten() {
            m.as_object_mut().unwrap().remove("name");
        }
        s
    };
    strip(a) == strip(b)
}

/// The reduced heap at surface energies 0, 0.05 and 0.1 J/m² (JKR pull-off force 3πγR* of
/// about 0, 1 and 2 bead weights): the angle rises at each step, and bonds break in the slump
/// (bond_break > 0; surface energy < 0 at rest: bonded beads sit in their JKR wells). Stronger
/// adhesion (0.2 J/m²) stops steepening the full scene's slope: the column breaks off in
/// clusters and the surface is no longer straight (docs/measurements.md), so it is not tested.
fn angle_rises_with_surface_energy(choice: BackendChoice) {
    let base = reduced(shipped("cohesive_heap.json"));
    let runs: Vec<(f64, (f64, EnergyRecord))> = [0.0, 0.05, 0.1]
        .into_iter()
        .map(|g| {
            let (scene, name) = (with_surface_energy(base.clone(), g), format!("heap_gamma_{g}"));
            (g, if g == 0.0 { dry_column(&scene, &name, choice) } else { heap_angle(&scene, &name, choice) })
        })
        .collect();
    let angles: Vec<f64> = runs.iter().map(|r| r.1 .0).collect();
    println!("{choice}: angles {angles:?} at surface energies 0, 0.05, 0.1 J/m²");
    assert!(angles[1] > angles[0] + 3.0, "{choice}: JKR at 0.05 J/m² should stand at least 3° steeper than dry: {angles:?}");
    assert!(angles[2] > angles[1] + 1.0, "{choice}: JKR at 0.1 J/m² should stand at least 1° steeper than at 0.05: {angles:?}");
    for (g, (_, e)) in &runs[1..] {
        assert!(e.bond_break.unwrap() > 0.0, "{choice} γ {g}: no bond broke in the slump");
        assert!(e.surface.unwrap() < 0.0, "{choice} γ {g}: beads at rest in JKR contact hold negative surface energy");
    }
}

/// The reduced wet column against the same column dry: the bridges hold the slope at least 4°
/// steeper, and bridges rupture in the slump.
fn wet_stands_steeper_than_dry(choice: BackendChoice) {
    let wet = reduced(shipped("wet_granules.json"));
    let (a_dry, _) = dry_column(&dry(wet.clone()), "dry", choice);
    let (a_wet, e) = heap_angle(&wet, "wet", choice);
    println!("{choice}: dry {a_dry:.2}°, wet {a_wet:.2}°");
    assert!(a_wet > a_dry + 4.0, "{choice}: wet beads should stand at least 4° steeper than dry: dry {a_dry:.2}°, wet {a_wet:.2}°");
    assert!(e.bond_break.unwrap() > 0.0, "{choice}: no bridge ruptured in the slump");
}

/// The scene run `total` steps whole, and `total`/2 + `total`/2 through a checkpoint on the
/// same backend: energy.csv, walls.csv, the last snapshot and the final state (contact history,
/// bonds and the adhesion energies included) are the same bytes. The split falls while beads
/// are still landing and bouncing (bonds forming and breaking).
fn split_run_is_byte_identical(scene: Value, name: &str, total: u64, choice: BackendChoice) {
    split_run(scene, name, total, choice, true);
}

/// `split_run_is_byte_identical`, where `breaks` asks that bonds broke before `total` (a
/// shorter GPU run holds bonds that formed, across the split, and none may have broken yet).
fn split_run(scene: Value, name: &str, total: u64, choice: BackendChoice, breaks: bool) {
    let mut scene = scene;
    scene["snapshot_every"] = json!(1);
    scene["output"] = json!({ "every_steps": 500 });
    let (dir, path) = write(&scene, name);
    let (whole, part, rest) = (dir.path().join("whole"), dir.path().join("part"), dir.path().join("rest"));
    let half = total / 2;
    let s_whole = run(&path, choice, Some(total), &whole);
    run(&path, choice, Some(half), &part);
    let saved = Checkpoint::read(&part.join(CHECKPOINT_FILE)).unwrap();
    assert!(saved.state.history.iter().any(|c| c.between_particles()), "{name}: no bead–bead contact at the split");
    let s_rest = resume(&part.join(CHECKPOINT_FILE), choice, total - half, &rest);
    let last = format!("snapshots/particles_{total:010}.vtu");
    for f in ["energy.csv", "walls.csv", last.as_str()] {
        assert!(read(&whole.join(f)) == read(&rest.join(f)), "{choice} {name}: {f} differs between the whole run and the split one");
    }
    let (a, b) = (Checkpoint::read(&whole.join(CHECKPOINT_FILE)).unwrap(), Checkpoint::read(&rest.join(CHECKPOINT_FILE)).unwrap());
    assert_eq!(a.meta.step, total);
    assert!(a.state == b.state, "{choice} {name}: final particle state or contact history differs");
    assert!(a.exact == b.exact, "{choice} {name}: final exact backend state differs");
    assert_eq!(a.meta.run.energy_csv, b.meta.run.energy_csv);
    assert_eq!(a.meta.run.sentinel, b.meta.run.sentinel);
    assert_eq!((s_whole.energies, s_whole.contacts), (s_rest.energies, s_rest.contacts));
    let e = energy_record(&whole.join("energy.csv"));
    assert!(!breaks || e.bond_break.unwrap() > 0.0, "{choice} {name}: no bond broke in the first {total} steps, so the split tests little");
    assert!(e.surface.unwrap() != 0.0, "{choice} {name}: no bond held at the end");
    assert!(e.closure <= CLOSURE, "{choice} {name}: closure {:.3e}", e.closure);
}

/// Steps of the split runs: 6,000 (0.12 s of the reduced scene), split at 3,000, where the
/// lower beads have landed and the upper ones are still falling onto them.
const SPLIT_TOTAL: u64 = 6_000;

#[test]
fn cohesive_heap_angle_rises_with_surface_energy() {
    angle_rises_with_surface_energy(BackendChoice::Cpu);
}

#[test]
fn wet_granules_stand_steeper_than_dry() {
    wet_stands_steeper_than_dry(BackendChoice::Cpu);
}

#[test]
fn cohesive_heap_split_run_is_byte_identical() {
    split_run_is_byte_identical(reduced(shipped("cohesive_heap.json")), "cohesive_heap", SPLIT_TOTAL, BackendChoice::Cpu);
}

#[test]
fn wet_granules_split_run_is_byte_identical() {
    split_run_is_byte_identical(reduced(shipped("wet_granules.json")), "wet_granules", SPLIT_TOTAL, BackendChoice::Cpu);
}

// The angle trends are CPU runs only: each is three or two runs of 36,492 steps (the dry run
// shared by the two), minutes on
// lavapipe. The GPU's share of the scenes is held by the split runs below, the scenes' GPU
// closure windows (tests/energy_closure.rs) and `talus verify` of both scenes (CPU against
// GPU; docs/measurements.md, "Adhesion").

/// Steps of the GPU split runs (lavapipe runs the reduced scene at about a tenth of the
/// CPU's speed): 3,000, split at 1,500, where the lowest beads have landed (first contacts
/// near step 1,000) and bonds have formed between them (the split asserts a bead–bead contact
/// and the end a bond held).
const GPU_SPLIT_TOTAL: u64 = 3_000;

#[test]
fn cohesive_heap_split_run_is_byte_identical_gpu() {
    split_run(reduced(shipped("cohesive_heap.json")), "cohesive_heap", GPU_SPLIT_TOTAL, BackendChoice::Gpu, false);
}

#[test]
fn wet_granules_split_run_is_byte_identical_gpu() {
    split_run(reduced(shipped("wet_granules.json")), "wet_granules", GPU_SPLIT_TOTAL, BackendChoice::Gpu, false);
}
