//! `energy_tracking: false` (scene key, copied into every pair's parameters) skips the booking
//! of slip, dashpot and stiffness work and changes nothing else: positions, velocities, spins,
//! forces, torques, strain energy, wall loads and contacts stay bit-identical to the tracked
//! run, on the CPU for every contact model and on the GPU. The run's outputs say the work was
//! not booked: `energy.csv` has no slip, dashpot, stiffness-work or total column and
//! `summary.json` says `"energy_tracking": false`. A value that is not a switch is refused.
//! The GPU tests need a Vulkan driver (lavapipe is enough) and fail without one.

use std::path::Path;

use talus::backend::Backend;
use talus::contact::params::ContactModel;
use talus::cpu::CpuBackend;
use talus::gpu::{GpuBackend, GpuOptions};
use talus::Setup;

mod common;
use common::shipped_scene;

/// `setup` as a scene with `"energy_tracking": false` loads it.
fn untracked(mut setup: Setup) -> Setup {
    setup.pairs.entries.iter_mut().for_each(|p| p.energy_tracking = false);
    assert!(!setup.energy_tracking());
    setup
}

/// Everything but the booked work, as bits.
fn trajectory(b: &mut dyn Backend) -> Vec<u64> {
    let s = b.snapshot().unwrap();
    let mut out = Vec::new();
    for v in [&s.position, &s.velocity, &s.angular_velocity, &s.force, &s.torque] {
        out.extend(v.iter().flatten().map(|x| x.to_bits()));
    }
    let e = b.energies().unwrap();
    out.extend([e.kinetic_translational, e.kinetic_rotational, e.gravitational, e.strain, e.wall_work].map(f64::to_bits));
    for l in b.wall_loads().unwrap() {
        out.extend(l.force.iter().chain(&l.torque).map(|x| x.to_bits()));
    }
    out.push(b.contact_count().unwrap());
    out
}

/// Runs both backends made by `make` (tracked, then untracked) for `batches` × `every` steps
/// and compares them after every batch; the tracked run must have booked work and formed
/// contacts, the untracked one none.
fn assert_tracking_changes_only_the_books(name: &str, setup: Setup, make: &dyn Fn(&Setup) -> Box<dyn Backend>, batches: usize, every: u64) {
    let mut tracked = make(&setup);
    let mut untracked_run = make(&untracked(setup));
    let mut contacts = 0;
    for batch in 1..=batches {
        tracked.step(every).unwrap();
        untracked_run.step(every).unwrap();
        let (a, b) = (trajectory(tracked.as_mut()), trajectory(untracked_run.as_mut()));
        assert!(a == b, "{name}: tracked and untracked runs differ after {} steps", batch as u64 * every);
        contacts = contacts.max(*a.last().unwrap());
    }
    let (t, u) = (tracked.energies().unwrap(), untracked_run.energies().unwrap());
    assert!(contacts > 0, "{name}: no contacts formed, the comparison proves nothing");
    assert!(t.slip != 0.0 || t.dashpot != 0.0, "{name}: the tracked run booked no work (slip {:e}, dashpot {:e})", t.slip, t.dashpot);
    assert_eq!((u.slip, u.dashpot, u.stiffness_work), (0.0, 0.0, 0.0), "{name}: the untracked run booked work");
}

fn cpu(setup: &Setup) -> Box<dyn Backend> {
    Box::new(CpuBackend::new(setup).unwrap())
}

fn gpu(setup: &Setup) -> Box<dyn Backend> {
    Box::new(GpuBackend::new(setup, GpuOptions::default()).unwrap_or_else(|e| panic!("GPU backend (a Vulkan driver such as lavapipe is needed): {e}")))
}

#[test]
fn cpu_trajectories_do_not_depend_on_tracking_for_any_model() {
    for model in ContactModel::ALL {
        let mut setup = talus::bench::bed_setup(600, model);
        if matches!(model, ContactModel::HertzMindlin | ContactModel::HertzViscous) {
            setup.pairs.entries.iter_mut().for_each(|p| p.rolling_fric = 0.1);
        }
        assert_tracking_changes_only_the_books(model.name(), setup, &cpu, 4, 40);
    }
    assert_tracking_changes_only_the_books("mixed_models_box", shipped_scene("mixed_models_box.json"), &cpu, 3, 300);
}

#[test]
fn gpu_trajectories_do_not_depend_on_tracking() {
    assert_tracking_changes_only_the_books("hertz_mindlin bed", talus::bench::bed_setup(600, ContactModel::HertzMindlin), &gpu, 3, 40);
    assert_tracking_changes_only_the_books("mixed_models_box", shipped_scene("mixed_models_box.json"), &gpu, 2, 200);
}

#[test]
fn scene_key_is_a_switch() {
    let text = |v: &str| format!(r#"{{"steps": 10, "time_step": 1e-6, "energy_tracking": {v}, "materials": {{"m": {{"density": 2500, "youngsModulus": 1e7, "poissonsRatio": 0.3}}}}, "particles": [{{"position": [0, 0, 0], "radius": 0.001, "material": "m"}}]}}"#);
    let load = |v: &str| talus::scene::parse_str(&text(v), Path::new("tracking.json"));
    assert!(!load("false").unwrap().energy_tracking());
    assert!(!load("\"off\"").unwrap().energy_tracking());
    assert!(load("true").unwrap().energy_tracking());
    let err = match load("3") {
        Ok(_) => panic!("a number is not a switch"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("tracking.json") && err.contains("energy_tracking") && err.contains('3'), "unclear error: {err}");
}

#[test]
fn untracked_run_writes_no_work_columns() {
    let dir = tempfile::tempdir().unwrap();
    let scene_file = dir.path().join("untracked.json");
    let mut json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/mixed_models_box.json")).unwrap()).unwrap();
    json["energy_tracking"] = false.into();
    json["steps"] = 200.into();
    std::fs::write(&scene_file, json.to_string()).unwrap();
    let out = dir.path().join("out");
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_talus"))
        .args(["run", scene_file.to_str().unwrap(), "--backend", "cpu", "--no-progress", "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(run.status.success(), "talus run failed: {}", String::from_utf8_lossy(&run.stderr));
    let csv = std::fs::read_to_string(out.join("energy.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    for gone in ["slip", "dashpot", "stiffness_work", "total"] {
        assert!(!header.contains(&gone), "energy.csv of an untracked run has a `{gone}` column: {header:?}");
    }
    for kept in ["kinetic", "gravitational", "strain", "wall_work"] {
        assert!(header.contains(&kept), "energy.csv lost `{kept}`: {header:?}");
    }
    assert!(csv.lines().skip(1).all(|l| l.split(',').count() == header.len()), "rows and header differ in length");
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["energy_tracking"], false);
    assert!(out.join("energy.png").is_file(), "no energy.png for an untracked run");
}
