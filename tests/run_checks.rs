//! Runs that go wrong stop loudly and keep what was good (docs/scenes.md, "Checks"): the
//! time-step and range checks at load, blow-up and lost-particle detection on both backends,
//! exit status 3, the last good snapshot, and `"lost_particles": "remove"`. The three cases of
//! issue 13 (unstable dt, out-of-range values, dt = 1e30 s) are regression cases here.

use std::path::{Path, PathBuf};
use std::process::Command;

use talus::run::{open_backend, run_scene, BackendChoice, RunOptions};
use talus::scene::parse_str;
use talus::TalusError;

/// 27 glass balls in a closed box; `extra` goes in at the top level.
fn box_scene(dt: &str, extra: &str) -> String {
    format!(
        r#"{{ "time_step": {dt}, "steps": 300, "output": {{ "every_steps": 50 }}, "snapshot_every": 1 {extra},
  "materials": {{ "glass": {{ "density": 2500, "hz_shear": 2.9e10, "hz_poiss": 0.25, "fric": 0.5 }} }},
  "generators": [ {{ "type": "lattice", "origin": [0.005, 0.005, 0.005], "count": [3, 3, 3], "spacing": 0.0105, "radius": 0.005, "material": "glass" }} ],
  "walls": [ {{ "type": "box", "min": [0, 0, 0], "max": [0.04, 0.04, 0.08] }} ] }}"#
    )
}

fn load(text: &str) -> Result<talus::Setup, TalusError> {
    parse_str(text, Path::new("case.json"))
}

/// A fresh temporary directory (removed when the guard drops) and the output directory `name`
/// inside it, not yet created (a run creates it).
fn out_dir(name: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join(name);
    (tmp, d)
}

/// Every position and point-data value of a Talus VTU snapshot is finite (read with the
/// library's own reader, `talus::output::read::read_vtu`).
fn vtu_is_finite(path: &Path) -> bool {
    let points = talus::output::read::read_vtu(path).unwrap_or_else(|e| panic!("{e}"));
    assert!(!points.arrays.is_empty(), "no point arrays in {}", path.display());
    points.position.iter().flatten().all(|x| x.is_finite()) && points.arrays.iter().all(|a| a.values.iter().all(|x| x.is_finite()))
}

#[test]
fn unstable_time_step_is_rejected_with_both_times_and_the_safe_step() {
    // issue case 1: 1e-3 s is ~200 × the Rayleigh step of these 5 mm glass balls
    let e = load(&box_scene("1e-3", "")).unwrap_err().to_string();
    assert!(e.starts_with("case.json: time_step: dt = 0.001 s"), "{e}");
    assert!(e.contains("Rayleigh step") && e.contains("contact time") && e.contains("largest safe time step"), "{e}");
    // the safe step it names passes
    let safe: f64 = e.split("largest safe time step is ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
    let s = load(&box_scene(&format!("{safe}"), "")).expect("the safe step loads");
    let r = talus::scene::time_step_report(&s);
    assert!(safe <= talus::scene::RAYLEIGH_ERROR_FRACTION * r.rayleigh * (1.0 + 1e-12));
    assert!(safe > 0.01 * r.rayleigh);
    // auto is checked too: a fraction above the error fraction of Rayleigh is rejected
    let e = load(&box_scene("\"auto\", \"time_step_fraction\": 0.9", "")).unwrap_err().to_string();
    assert!(e.contains("time_step_fraction") && e.contains("Rayleigh"), "{e}");
    // issue case 3: dt = 1e30 s
    let e = load(&box_scene("1e30", "")).unwrap_err().to_string();
    assert!(e.contains("time_step: dt = 1e30 s"), "{e}");
    // a bad key value names itself
    let e = load(&box_scene("1e-6", r#", "time_step_check": "never""#)).unwrap_err().to_string();
    assert!(e.contains("time_step_check") && e.contains("never"), "{e}");
}

#[test]
fn out_of_range_values_are_rejected_naming_file_key_and_value() {
    // issue case 2
    let one = |p: &str| {
        format!(
            r#"{{ "time_step": 1e-6, "steps": 10, "materials": {{ "m": {{ "density": 2500, "hz_shear": 1e9 }} }},
            "particles": [ {p} ] }}"#
        )
    };
    let e = load(&one(r#"{ "position": [1e300, 0, 0], "radius": 0.001 }"#)).unwrap_err().to_string();
    assert!(e.contains("case.json: particles[0].position") && e.contains("1e300"), "{e}");
    let e = load(&one(r#"{ "position": [0, 0, 0], "radius": 0.001, "velocity": [1e308, 0, 0] }"#)).unwrap_err().to_string();
    assert!(e.contains("case.json: particles[0].velocity") && e.contains("1e308"), "{e}");
    let e = load(&one(r#"{ "position": [0, 0, 0], "radius": 1e-9 }"#)).unwrap_err().to_string();
    assert!(e.contains("particles[0].radius") && e.contains("1e-9"), "{e}");
    let e = load(&one(r#"{ "position": [0, 0, 0], "radius": 0.001 }, { "position": [5, 0, 0], "radius": 2 }"#)).unwrap_err().to_string();
    assert!(e.contains("ratio"), "{e}");
    // a particle outside an explicit domain
    let text = one(r#"{ "position": [0, 0, 0.5], "radius": 0.001 }"#).replace("\"steps\": 10,", "\"steps\": 10, \"domain\": { \"min\": [-0.1, -0.1, -0.1], \"max\": [0.1, 0.1, 0.1] },");
    let e = load(&text).unwrap_err().to_string();
    assert!(e.contains("particles[0]") && e.contains("outside the domain"), "{e}");
}

/// Run the unstable scene anyway ("warn") on `backend`: a caught blow-up with step and particle,
/// exit-worthy error, no NaN written, the last good state kept.
fn unstable_run_is_caught(backend: BackendChoice, name: &str) {
    let setup = load(&box_scene("1e-3", r#", "time_step_check": "warn""#)).expect("warn lets it load");
    let (mut b, _) = open_backend(&setup, backend).expect("backend");
    let (_tmp, out) = out_dir(name);
    let e = run_scene(&setup, b.as_mut(), &out, RunOptions::default()).unwrap_err();
    let TalusError::BlowUp { step, particle, ref message } = e else { panic!("expected a blow-up, got {e}") };
    assert!(step >= 1 && step <= 50, "{e}");
    assert!(particle.is_some(), "{e}");
    assert!(message.contains("last good state (step 0) kept"), "{e}");
    let text = e.to_string();
    assert!(text.starts_with(&format!("run stopped at step {step}, particle ")), "{text}");
    let csv = std::fs::read_to_string(out.join("energy.csv")).unwrap();
    assert!(!csv.contains("NaN") && !csv.contains("inf"), "{csv}");
    assert!(!out.join("summary.json").exists());
    let snaps: Vec<_> = std::fs::read_dir(out.join("snapshots")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(snaps.len(), 1, "{snaps:?}");
    assert!(vtu_is_finite(&snaps[0]));
}

#[test]
fn unstable_run_is_caught_on_the_cpu() {
    unstable_run_is_caught(BackendChoice::Cpu, "cpu");
}

#[test]
fn unstable_run_is_caught_on_the_gpu() {
    unstable_run_is_caught(BackendChoice::Gpu, "gpu");
}

/// One ball flying out of an explicit domain through its open top.
fn flyaway(policy: &str) -> String {
    format!(
        r#"{{ "time_step": 1e-5, "steps": 400, "output": {{ "every_steps": 100 }}, "snapshot_every": 0, "lost_particles": "{policy}",
  "gravity": [0, 0, 0],
  "domain": {{ "min": [0, 0, 0], "max": [0.05, 0.05, 0.05] }},
  "materials": {{ "m": {{ "density": 2500, "hz_shear": 1e8, "hz_poiss": 0.3 }} }},
  "particles": [ {{ "position": [0.025, 0.025, 0.045], "radius": 0.002, "velocity": [0, 0, 2] }},
                 {{ "position": [0.025, 0.025, 0.01], "radius": 0.002 }} ] }}"#
    )
}

fn lost_particle(backend: BackendChoice, name: &str) {
    let setup = load(&flyaway("error")).unwrap();
    let (mut b, _) = open_backend(&setup, backend).unwrap();
    let (_tmp, out) = out_dir(&format!("{name}_err"));
    let e = run_scene(&setup, b.as_mut(), &out, RunOptions::default()).unwrap_err();
    let TalusError::BlowUp { step, particle, ref message } = e else { panic!("expected a blow-up, got {e}") };
    // it crosses z = 0.05 after 0.005 m / 2 m/s = 2.5 ms = 250 steps
    assert!((250..=252).contains(&step), "{e}");
    assert_eq!(particle, Some(0), "{e}");
    assert!(message.contains("left the domain"), "{e}");

    let setup = load(&flyaway("remove")).unwrap();
    let (mut b, _) = open_backend(&setup, backend).unwrap();
    let (_tmp, out) = out_dir(&format!("{name}_rm"));
    let s = run_scene(&setup, b.as_mut(), &out, RunOptions::default()).unwrap();
    let flow = s.flow.expect("a flow summary");
    let lost = flow.lost_particles.expect("lost particles in the summary");
    assert_eq!(lost.count, 1);
    let mass = 2500.0 * 4.0 / 3.0 * std::f64::consts::PI * 0.002f64.powi(3);
    assert!((lost.mass - mass).abs() < 1e-12 * mass);
    let ke = 0.5 * mass * 4.0;
    assert!((lost.energy - ke).abs() < 1e-5 * ke, "{} vs {ke}", lost.energy);
    assert_eq!(flow.held_count, 1);
    // the balance books what left: total stays at its initial value
    assert!((s.energies.removed - ke).abs() < 1e-5 * ke, "{}", s.energies.removed);
    assert!((s.energies.total - ke).abs() < 1e-5 * ke, "{}", s.energies.total);
}

#[test]
fn lost_particle_stops_or_is_removed_on_the_cpu() {
    lost_particle(BackendChoice::Cpu, "lost_cpu");
}

#[test]
fn lost_particle_stops_or_is_removed_on_the_gpu() {
    lost_particle(BackendChoice::Gpu, "lost_gpu");
}

#[test]
fn talus_run_exits_3_on_a_blow_up_and_2_on_a_rejected_scene() {
    let (_tmp, dir) = out_dir("cli");
    std::fs::create_dir_all(&dir).unwrap();
    let scene = dir.join("lost.json");
    std::fs::write(&scene, flyaway("error")).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_talus")).args(["run", scene.to_str().unwrap(), "--backend", "cpu", "--no-progress", "--out", dir.join("o").to_str().unwrap()]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(err.contains("run stopped at step") && err.contains("particle 0") && err.contains("left the domain"), "{err}");
    std::fs::write(&scene, box_scene("1e-3", "")).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_talus")).args(["run", scene.to_str().unwrap(), "--backend", "cpu", "--no-progress", "--out", dir.join("o2").to_str().unwrap()]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("time_step"));
}

#[test]
fn shipped_scenes_pass_the_checks() {
    for e in std::fs::read_dir("scenes").unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            talus::scene::load(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        }
    }
}

/// Two balls of the box pushed 0.8 radius into each other: the run does not start, with the
/// overlap named (beyond `OVERLAP_MAX_FRACTION` = 0.5 of the radius), on `backend`; pushed
/// 0.3 radius in, it runs (they fly apart).
fn deep_overlap_is_caught(backend: BackendChoice) {
    let mut setup = load(&box_scene("2e-6", "")).expect("stable scene");
    let x0 = setup.particles.position[0];
    setup.particles.position[1] = [x0[0] + 0.0085, x0[1], x0[2]];
    let (mut b, _) = open_backend(&setup, backend).expect("an overlap of 0.3 radius runs");
    b.step(10).expect("an overlap of 0.3 radius runs");
    setup.particles.position[1] = [x0[0] + 0.006, x0[1], x0[2]];
    let e = match open_backend(&setup, backend) {
        Err(e) => e,
        Ok((mut b, _)) => b.step(10).unwrap_err(),
    };
    let TalusError::BlowUp { particle, ref message, .. } = e else { panic!("expected a blow-up, got {e}") };
    assert_eq!(particle, Some(0), "{e}");
    assert!(message.contains("overlap") && message.contains("0.5"), "{e}");
}

#[test]
fn deep_overlap_is_caught_on_the_cpu() {
    deep_overlap_is_caught(BackendChoice::Cpu);
}

#[test]
fn deep_overlap_is_caught_on_the_gpu() {
    deep_overlap_is_caught(BackendChoice::Gpu);
}

/// The energy sentinel (issue 38): `two_ball_elastic` at dt = 1e-3 s, 18× its Rayleigh step,
/// run anyway with `"time_step_check": "warn"`, creates energy without any value turning
/// non-finite or any overlap passing the blow-up bound. With every energy booked, the total's
/// jump stops the run with exit status 3 and a message naming the drift, on both backends; the
/// shipped scene at its own step runs to its end (its drift is below 1e-3 of the peak).
#[test]
fn energy_sentinel_stops_a_run_past_its_stability_limit() {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/two_ball_elastic.json");
    let mut scene: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&source).unwrap()).unwrap();
    let (_tmp, dir) = out_dir("sentinel");
    std::fs::create_dir_all(&dir).unwrap();
    let run = |path: &Path, backend: &str, out: &str| {
        Command::new(env!("CARGO_BIN_EXE_talus")).args(["run", path.to_str().unwrap(), "--backend", backend, "--no-progress", "--out", dir.join(out).to_str().unwrap()]).output().unwrap()
    };
    for backend in ["cpu", "gpu"] {
        let o = run(&source, backend, &format!("shipped_{backend}"));
        assert!(o.status.success(), "{backend}: the shipped scene tripped: {}", String::from_utf8_lossy(&o.stderr));
    }
    scene["time_step"] = 1e-3.into();
    scene["time_step_check"] = "warn".into();
    scene["duration"] = 2e-2.into();
    scene["output"]["every_steps"] = 1.into();
    let path = dir.join("two_ball_dt_1e-3.json");
    std::fs::write(&path, serde_json::to_string(&scene).unwrap()).unwrap();
    for backend in ["cpu", "gpu"] {
        let o = run(&path, backend, backend);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(3), "{backend}: {err}");
        assert!(err.contains("the total energy rose by") && err.contains("energy_drift = 0.1") && err.contains("dt = 1e-3 s"), "{backend}: {err}");
        // energy.csv ends at the last good output: its totals all within the bound
        let csv = std::fs::read_to_string(dir.join(backend).join("energy.csv")).unwrap();
        assert!(csv.lines().count() >= 2, "{backend}: energy.csv holds no row");
    }
    // the bound is the scene's: raised out of reach, the broken run's first two steps (the
    // jump is in the first; a ball leaves the domain in the fourth) end with status 0, as
    // they did before the sentinel
    scene["energy_drift"] = 1e12.into();
    std::fs::write(&path, serde_json::to_string(&scene).unwrap()).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_talus")).args(["run", path.to_str().unwrap(), "--backend", "cpu", "--no-progress", "--steps", "2", "--out", dir.join("unbounded").to_str().unwrap()]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// The energy sentinel's scale includes the gravitational energy released: a trimer dropped
/// into a bin comes to rest between the run's two outputs (steps 0 and 4000), so the peak of
/// kinetic + strain energy that the outputs saw is the rest state's, some 1e-7 J, against which
/// the run's sound drift (about 2e-8 J of 2.3e-4 J, within 1e-4 of the fall's energy) looked like
/// a blow-up and stopped the run. It runs to its end on both backends.
#[test]
fn energy_sentinel_counts_the_fall_that_outputs_do_not_see() {
    let scene = serde_json::json!({
        "gravity": [0, 0, -9.81], "time_step": "auto", "time_step_fraction": 0.1, "duration": 1.0,
        "output": { "every_steps": 4000 }, "snapshot_every": 0,
        "materials": { "grain": { "density": 2500, "hz_shear": 2e6, "hz_poiss": 0.3, "fric": 0.5 } },
        "contacts": { "default": { "dp_nratio": 0.3, "dp_sratio": 0.3 } },
        "clump_templates": [{ "name": "trimer", "material": "grain", "spheres": [[-0.0035, 0, 0, 0.0035], [0, 0, 0, 0.0035], [0.0035, 0, 0, 0.0035]] }],
        "generators": [{ "type": "random_fill", "clump": "trimer", "box": { "min": [0.01, 0.01, 0.01], "max": [0.03, 0.03, 0.03] }, "count": 1, "seed": 7 }],
        "walls": [{ "type": "box", "name": "bin", "min": [0, 0, 0], "max": [0.08, 0.08, 0.1], "material": "grain", "open": ["+z"] }]
    });
    let (_tmp, dir) = out_dir("fall");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("trimer_drop.json");
    std::fs::write(&path, serde_json::to_string(&scene).unwrap()).unwrap();
    for backend in ["cpu", "gpu"] {
        let out = dir.join(backend);
        let o = Command::new(env!("CARGO_BIN_EXE_talus")).args(["run", path.to_str().unwrap(), "--backend", backend, "--no-progress", "--steps", "4000", "--out", out.to_str().unwrap()]).output().unwrap();
        assert!(o.status.success(), "{backend}: {}", String::from_utf8_lossy(&o.stderr));
        let csv = std::fs::read_to_string(out.join("energy.csv")).unwrap();
        let head: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
        let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
        let rows: Vec<Vec<f64>> = csv.lines().skip(1).map(|l| l.split(',').map(|x| x.parse().unwrap()).collect()).collect();
        assert_eq!(rows.len(), 2, "{backend}: outputs at steps 0 and 4000 only");
        let drift = (rows[1][col("total")] - rows[0][col("total")]).abs();
        let seen = rows.iter().map(|r| r[col("kinetic")] + r[col("strain")]).fold(0.0, f64::max);
        let released = rows[0][col("gravitational")] - rows[1][col("gravitational")];
        // the case the old scale failed: beyond 0.1 of the kinetic + strain energy seen …
        assert!(drift > 0.1 * seen, "{backend}: drift {drift:e} J, kinetic + strain seen {seen:e} J: the grain did not come to rest, the test proves nothing");
        // … and a sound run against the energy of the fall
        assert!(released > 1e-4 && drift < 1e-3 * released, "{backend}: released {released:e} J, drift {drift:e} J");
    }
}
