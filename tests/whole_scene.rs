//! CPU reference vs GPU on scenes/settle_box.json (10,000 grains), with the tolerances of
//! docs/verification.md, and GPU run-to-run determinism. These tests need a GPU adapter
//! (lavapipe counts; `.ci/run` installs it) and fail with a clear message without one.

use std::path::Path;

use talus::run::{run_scene, RunOptions};
use talus::verify::{verify, Tolerances, Window};
use talus::{Setup, TalusError};

fn settle_box() -> Setup {
    talus::scene::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/settle_box.json")).expect("load settle_box.json")
}

/// settle_box with every grain moved 2 mm down: the generator keeps grains ≥ 2 mm above the
/// floor, so the lowest ones now touch it and contacts form within the first steps (in the
/// scene as written, grains fall for several hundred steps before the first contact).
fn settle_box_in_contact() -> Setup {
    let mut s = settle_box();
    for p in &mut s.particles.position {
        p[2] -= 0.002;
    }
    s
}

fn gpu(setup: &Setup) -> talus::gpu::GpuBackend {
    match talus::gpu::GpuBackend::new(setup, talus::gpu::GpuOptions::default()) {
        Ok(g) => g,
        Err(e @ TalusError::NoAdapter(_)) => panic!("this test needs a GPU adapter (run .ci/run to install lavapipe): {e}"),
        Err(e) => panic!("GPU backend failed: {e}"),
    }
}

fn verify_or_explain(setup: &Setup, steps: u64) -> talus::verify::VerifyReport {
    match verify(setup, steps, &Tolerances::default()) {
        Ok(r) => r,
        Err(e @ TalusError::NoAdapter(_)) => panic!("this test needs a GPU adapter (run .ci/run to install lavapipe): {e}"),
        Err(e) => panic!("verify failed to run: {e}"),
    }
}

#[test]
fn positions_agree_over_first_100_steps() {
    let tol = Tolerances::default();
    for (name, setup) in [("settle_box", settle_box()), ("settle_box moved into contact", settle_box_in_contact())] {
        let report = verify_or_explain(&setup, tol.early_steps);
        println!("{name}:\n{report}");
        for q in ["position", "velocity", "angular_velocity", "force", "torque"] {
            let r = report.row(q, Window::Early).unwrap();
            assert!(r.ok(), "{name}: {q}: max deviation {:.3e} of {} > {:.1e}\n{report}", r.max_rel, r.scale, r.tolerance.unwrap());
        }
        if name != "settle_box" {
            assert!(report.final_contacts.0 > 0, "{name}: expected contacts by step 100");
        }
    }
}

#[test]
fn energies_agree_while_one_trajectory_and_as_means_after() {
    // the scene as shipped: the runs part (by step 900 the f32 free fall has drifted a
    // hundredth of a step's travel from the f64 one), so both energy windows are checked
    let setup = settle_box();
    let report = verify_or_explain(&setup, setup.steps);
    println!("{report}");
    assert_eq!((report.tolerances.energy, report.tolerances.statistical), (0.01, 0.05));
    assert!(report.parted_at.is_some(), "settle_box's runs part before its end\n{report}");
    for window in [Window::Coherent, Window::Parted] {
        let rows: Vec<_> = report.rows.iter().filter(|r| r.window == window).collect();
        assert_eq!(rows.len(), 13, "{window:?}");
        for r in rows {
            assert!(r.ok(), "{window:?} {}: {:.3e} of {} (at step {}) > {:.0e}\n{report}", r.quantity, r.max_rel, r.scale, r.at_step, r.tolerance.unwrap());
        }
    }
    assert!(report.passed(), "{report}");
}

#[test]
fn two_gpu_runs_give_identical_energy_csv() {
    // The scene moved into contact (`settle_box_in_contact`), twice, for 500 steps: contacts
    // form within the first steps, so every step of the window is a bed forming under the
    // falling grains (the scene as shipped falls for about 850 steps before its first contact:
    // 1,200 of its steps twice took 50 s of CI on lavapipe, its whole 2,000 steps 80 s).
    let setup = settle_box_in_contact();
    let steps = 500;
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    for dir in [a.path(), b.path()] {
        let mut g = gpu(&setup);
        run_scene(&setup, &mut g, dir, RunOptions { steps: Some(steps), progress: false, ..Default::default() }).expect("GPU run");
    }
    let ea = std::fs::read(a.path().join("energy.csv")).unwrap();
    let eb = std::fs::read(b.path().join("energy.csv")).unwrap();
    let rows = ea.iter().filter(|&&c| c == b'\n').count();
    assert_eq!(rows as u64, 2 + steps / setup.output_every, "energy.csv: header + a row per output");
    let last = String::from_utf8_lossy(&ea).lines().last().unwrap().to_string();
    assert!(last.split(',').nth(6).unwrap().parse::<f64>().unwrap() > 0.0, "the run must include contacts (strain energy): {last}");
    assert!(ea == eb, "two GPU runs differ:\n{}\n---\n{}", String::from_utf8_lossy(&ea), String::from_utf8_lossy(&eb));
}
