//! Issue 37, items 5 and 6: `talus run --set PATH=VALUE` (the run changes, summary.json and
//! the checkpoint record it, errors name the path), summary.json's absolute scene path and
//! checksum (`talus render` from another directory draws the walls), and the measurement
//! lines `talus run` prints.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{json, Value};
use talus::measure::MeasurementResult;

/// A ball sliding on a floor (friction matters), 300 steps, a snapshot at every output.
const SCENE: &str = r#"{
  "time_step": "auto",
  "steps": 300,
  "output": { "every_steps": 50 },
  "snapshot_every": 1,
  "materials": { "glass": { "density": 2500, "hz_shear": 1e8, "hz_poiss": 0.25, "fric": 0.5 } },
  "particles": [ { "position": [0, 0, 0.00499], "radius": 0.005, "velocity": [0.5, 0, 0], "material": "glass" } ],
  "walls": [ { "type": "plane", "name": "floor", "point": [0, 0, 0], "normal": [0, 0, 1] } ],
  "domain": { "min": [-0.1, -0.1, -0.01], "max": [0.1, 0.1, 0.1] }
}"#;

fn talus(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_talus")).current_dir(cwd).args(args).env("XDG_RUNTIME_DIR", std::env::temp_dir()).output().unwrap()
}

fn run(cwd: &Path, out: &str, set: &[&str]) -> Output {
    let mut args = vec!["run", "case.json", "--backend", "cpu", "--no-progress", "--out", out];
    for s in set {
        args.extend(["--set", s]);
    }
    talus(cwd, &args)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn summary(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
}

fn scene_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("case.json"), SCENE).unwrap();
    dir
}

#[test]
fn set_changes_the_run_and_summary_records_it() {
    let dir = scene_dir();
    let plain = run(dir.path(), "plain", &[]);
    assert!(plain.status.success(), "{}", stderr(&plain));
    let set = run(dir.path(), "set", &["materials.glass.fric=0.1"]);
    assert!(set.status.success(), "{}", stderr(&set));
    assert!(stderr(&set).contains("talus: --set materials.glass.fric=0.1\n"), "{}", stderr(&set));
    let energy = |d: &str| std::fs::read_to_string(dir.path().join(d).join("energy.csv")).unwrap();
    assert_ne!(energy("plain"), energy("set"), "friction 0.1 slides the ball as friction 0.5 does");

    let (a, b) = (summary(&dir.path().join("plain")), summary(&dir.path().join("set")));
    assert!(a["scene"].get("overrides").is_none(), "no --set, no overrides: {a}");
    assert_eq!(b["scene"]["overrides"], json!({ "materials.glass.fric": 0.1 }));
    for s in [&a, &b] {
        assert_eq!(s["scene"]["path"], json!("case.json"));
        let abs = Path::new(s["scene"]["absolute_path"].as_str().unwrap());
        assert!(abs.is_absolute() && abs.ends_with("case.json") && abs.is_file(), "{s}");
        let sum = s["scene"]["checksum"].as_str().unwrap();
        assert_eq!(sum, format!("fnv1a-64:{}", talus::scene::overrides::fnv1a64(SCENE.as_bytes())));
    }
    // the checksum is of the file: the same with or without --set
    assert_eq!(a["scene"]["checksum"], b["scene"]["checksum"]);
}

#[test]
fn set_travels_with_the_checkpoint() {
    let dir = scene_dir();
    let sets = ["materials.glass.fric=0.1", "particles.0.velocity=[0.3, 0, 0]"];
    assert!(run(dir.path(), "full", &sets).status.success());
    let mut args = vec!["run", "case.json", "--backend", "cpu", "--no-progress", "--out", "part", "--steps", "150"];
    for s in &sets {
        args.extend(["--set", s]);
    }
    assert!(talus(dir.path(), &args).status.success());
    let o = talus(dir.path(), &["resume", "part/checkpoint.talus", "--backend", "cpu", "--no-progress", "--out", "part", "--steps", "150"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let energy = |d: &str| std::fs::read_to_string(dir.path().join(d).join("energy.csv")).unwrap();
    assert_eq!(energy("full"), energy("part"), "the resumed run goes on with the overridden scene");
    assert_eq!(summary(&dir.path().join("part"))["scene"]["overrides"], json!({ "materials.glass.fric": 0.1, "particles.0.velocity": [0.3, 0, 0] }));
}

#[test]
fn bad_paths_and_values_name_the_path() {
    let dir = scene_dir();
    let cases: &[(&str, &str)] = &[
        ("materials.glas.fric=0.1", "case.json: --set materials.glas.fric: `materials` has no key \"glas\"; did you mean \"glass\"? (its keys: glass)"),
        ("materials.glass.fric=-1", "case.json: materials.glass.fric: must be >= 0, got -1 (set by --set materials.glass.fric=-1)"),
        ("materials.glass.fric=abc", "materials.glass.fric: expected a number, got string \"abc\" (set by --set materials.glass.fric=\"abc\")"),
        ("materials.glass.frc=0.1", "materials.glass.frc: unknown key \"frc\"; did you mean \"fric\"?"),
        ("particles.3.radius=0.01", "case.json: --set particles.3.radius: `particles` is a list of 1: it has no entry 3 (0 to 0)"),
        ("particles.first.radius=0.01", "--set particles.first.radius: `particles` is a list of 1: give an entry's number, 0 to 0, not \"first\""),
        ("steps.x=1", "--set steps.x: `steps` is 300, not an object or a list: it has no \"x\""),
        ("materials.glass.fric", "invalid value 'materials.glass.fric' for '--set <PATH=VALUE>': `materials.glass.fric`: expected PATH=VALUE"),
        ("duration=0.01", "case.json: duration: give exactly one of duration and steps, got both (duration = 0.01, steps = 300) (set by --set duration=0.01)"),
        ("steps=null", "case.json: duration: missing: give exactly one of duration (s) or steps (with --set steps=null)"),
        ("contacts={ \"default\": { \"model\": \"hooke\", \"dp_nratio\": 0.3 } }", "contacts.default.dp_nratio: unknown key \"dp_nratio\" for contact model hooke"),
    ];
    for (set, expected) in cases {
        let o = run(dir.path(), "bad", &[set]);
        assert_eq!(o.status.code(), Some(2), "--set {set}: {}", stderr(&o));
        assert!(stderr(&o).contains(expected), "--set {set}: expected {expected:?} in\n{}", stderr(&o));
    }
    // `null` takes a key out: a scene of steps becomes one of duration
    let o = run(dir.path(), "duration", &["steps=null", "duration=1e-4"]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn render_from_another_directory_draws_the_walls() {
    let dir = scene_dir();
    // a relative scene path and output directory, as a user types them
    let o = run(dir.path(), "out", &["walls.0.point=[0, 0, -0.0001]"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let elsewhere = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = talus(elsewhere.path(), &["render", out.to_str().unwrap(), "--view", "y"]);
    let (stdout, err) = (String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(o.status.success(), "{err}");
    assert!(stdout.contains("outline segments") && !stdout.contains(" 0 outline segments"), "{stdout}");
    assert!(!err.contains("walls not drawn") && !err.contains("no scene path"), "{err}");

    // the file changed since the run: drawn as it is now, and said so
    std::fs::write(dir.path().join("case.json"), SCENE.replace("\"steps\": 300", "\"steps\": 301")).unwrap();
    let o = talus(elsewhere.path(), &["render", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("changed since the run (its checksum differs from"), "{}", stderr(&o));
}

#[test]
fn measurement_lines_have_units() {
    let mut d = MeasurementResult::new("rate", "discharge", "kg/s");
    d.value = Some(0.083104);
    d.details = json!({ "outlet": "orifice", "samples": 30, "window": [0.205, 0.35], "beverloo": 0.0815, "ratio_to_beverloo": 0.083104 / 0.0815 });
    assert_eq!(d.line(), "discharge 0.0831 kg/s, Beverloo 0.0815 kg/s (1.02), window 0.205–0.35 s (measure \"rate\", outlet \"orifice\", 30 samples)");
    let mut none = MeasurementResult::new("rate", "discharge", "kg/s");
    none.details = json!({ "outlet": "orifice", "samples": 1, "beverloo": 0.0815 });
    assert_eq!(none.line(), "discharge no value, Beverloo 0.0815 kg/s (measure \"rate\", outlet \"orifice\", 1 samples)");
    let mut r = MeasurementResult::new("dynamic_angle", "repose_angle", "deg");
    r.value = Some(31.2345);
    r.details = json!({ "samples": 40, "failed_samples": 2, "std": 1.93, "min": 28.41, "max": 34.06 });
    assert_eq!(r.line(), "repose_angle 31.23 deg ± 1.93 deg, min 28.41 deg, max 34.06 deg (measure \"dynamic_angle\", 40 samples, 2 failed)");
}
