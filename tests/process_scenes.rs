//! The process scenes (scenes/periodic_chute.json, scenes/rotating_drum.json) on the GPU:
//! two runs through `run_scene` write byte-identical energy.csv and walls.csv; on the chute
//! the GPU agrees with the CPU reference as `talus verify` has it (docs/verification.md); on the
//! drum the runs part in the pile-up (grains hitting the wall at 0.8 m/s with about 10 steps per
//! soft contact amplify f32 rounding), so its energies are compared as means after that. The
//! hopper is in tests/hopper.rs. The runs are cut short (a few hundred to 1500 steps) so that
//! each GPU run takes well under a minute on lavapipe. These tests need a GPU adapter (lavapipe
//! counts; `.ci/run` installs it) and fail with a clear message without one.

use talus::run::{run_scene, RunOptions};
use talus::verify::{verify, Tolerances, Window};
use talus::{Setup, TalusError};

mod common;

/// Steps of the shortened chute: 1000 steps (4.8 ms); the grains of the lowest 2.4 mm reach
/// the base.
const CHUTE_STEPS: u64 = 1000;
/// Steps of the shortened drum: 1500 steps (0.16 s); the lowest grains reach the drum wall
/// after about 800 steps and the pile forms in the rest.
const DRUM_STEPS: u64 = 1500;

fn scene(name: &str) -> Setup {
    let mut s = common::shipped_scene(name);
    s.snapshot_every = 0;
    s
}

/// The chute with every grain moved 1 mm towards the base and falling onto it at 0.5 m/s: the
/// generator keeps grains ≥ 1 mm above it, so the lowest touch it at once and more arrive
/// (in the scene as written they fall from rest for about 20,000 steps).
fn chute_in_contact() -> Setup {
    let mut s = scene("periodic_chute.json");
    s.particles.position.iter_mut().for_each(|p| p[2] -= 0.001);
    s.particles.velocity.iter_mut().for_each(|v| v[2] = -0.5);
    s.output_every = 100;
    s
}

fn drum() -> Setup {
    let mut s = scene("rotating_drum.json");
    s.output_every = 100;
    s
}

fn no_adapter(e: &TalusError) -> ! {
    panic!("this test needs a GPU adapter (run .ci/run to install lavapipe): {e}")
}

fn gpu(setup: &Setup) -> talus::gpu::GpuBackend {
    match talus::gpu::GpuBackend::new(setup, talus::gpu::GpuOptions::default()) {
        Ok(g) => g,
        Err(e @ TalusError::NoAdapter(_)) => no_adapter(&e),
        Err(e) => panic!("GPU backend failed: {e}"),
    }
}

/// Two GPU runs of `steps` steps: energy.csv and walls.csv byte for byte equal, with contacts.
fn two_gpu_runs_agree(setup: &Setup, steps: u64) {
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    for d in &dirs {
        let mut g = gpu(setup);
        let s = run_scene(setup, &mut g, d.path(), RunOptions { steps: Some(steps), progress: false, ..Default::default() }).expect("GPU run");
        assert!(s.contacts > 0, "{}: no contacts after {steps} steps", setup.name);
    }
    for file in ["energy.csv", "walls.csv"] {
        let [a, b] = [0, 1].map(|k| std::fs::read(dirs[k].path().join(file)).unwrap());
        let rows = a.iter().filter(|&&c| c == b'\n').count() as u64;
        assert!(rows > steps / setup.output_every, "{}: {file} has {rows} lines", setup.name);
        assert!(a == b, "{}: two GPU runs give different {file}:\n{}\n---\n{}", setup.name, String::from_utf8_lossy(&a), String::from_utf8_lossy(&b));
    }
}

/// CPU vs GPU over `steps`: `talus verify` passes (state over the early window, energies at
/// every checkpoint while the runs are one trajectory and as means after they parted, all
/// with the default tolerances), and contacts at the end within `contact_tol`.
fn cpu_and_gpu_agree(setup: &Setup, steps: u64, contact_tol: f64) -> talus::verify::VerifyReport {
    let report = match verify(setup, steps, &Tolerances::default()) {
        Ok(r) => r,
        Err(e @ TalusError::NoAdapter(_)) => no_adapter(&e),
        Err(e) => panic!("verify failed to run: {e}"),
    };
    println!("{}:\n{report}", setup.name);
    for q in ["position", "velocity", "angular_velocity", "force", "torque"] {
        let r = report.row(q, Window::Early).unwrap();
        assert!(r.ok(), "{}: {q}: {:.3e} > {:.1e}\n{report}", setup.name, r.max_rel, r.tolerance.unwrap());
    }
    assert_eq!(report.rows.iter().filter(|r| r.window == Window::Coherent).count(), 13);
    assert!(report.passed(), "{}:\n{report}", setup.name);
    let (c, g) = report.final_contacts;
    assert!(c > 0, "{}: no contacts", setup.name);
    let dev = (c as f64 - g as f64).abs() / c as f64;
    assert!(dev <= contact_tol, "{}: contacts CPU {c}, GPU {g}: {dev:.3} > {contact_tol}", setup.name);
    report
}

#[test]
fn chute_two_gpu_runs_are_identical() {
    two_gpu_runs_agree(&chute_in_contact(), CHUTE_STEPS);
}

#[test]
fn drum_two_gpu_runs_are_identical() {
    two_gpu_runs_agree(&drum(), DRUM_STEPS);
}

#[test]
fn chute_cpu_and_gpu_agree() {
    // Grains land on the base one by one; bounces amplify f32 rounding (docs/verification.md),
    // so the count of grains touching the base at the last step may differ by a few: 5 %.
    cpu_and_gpu_agree(&chute_in_contact(), CHUTE_STEPS, 0.05);
}

#[test]
fn drum_cpu_and_gpu_agree_statistically() {
    // The early window holds the default tolerances (the grains are still falling); the pile-up
    // that follows amplifies f32 rounding at every soft impact on the wall, so the runs part and
    // their energies are compared as means after that (docs/verification.md); contacts within 10 %.
    let report = cpu_and_gpu_agree(&drum(), DRUM_STEPS, 0.10);
    assert!(report.parted_at.is_some(), "the drum's pile-up parts the runs\n{report}");
}
