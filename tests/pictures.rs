//! Pictures and the demo (issue 12): `talus run` writes `energy.png` and `render.png`;
//! `talus render` and `talus plot` draw them again, and name the file and the problem when the
//! input is missing or not what Talus writes; `until_rest` stops a run at rest; the README's
//! run command is the demo scene, and that scene loads as described. CPU only.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn talus(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_talus")).args(args).env("NO_COLOR", "1").output().expect("run the talus binary")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Width and height of a PNG file (decoded in full, so a truncated file fails).
fn png_size(path: &Path) -> (u32, u32) {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut reader = png::Decoder::new(std::io::BufReader::new(file)).read_info().unwrap_or_else(|e| panic!("{}: not a PNG: {e}", path.display()));
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap_or_else(|e| panic!("{}: bad PNG data: {e}", path.display()));
    // not a blank picture: more than one colour
    let px = info.color_type.samples();
    let first = &buf[..px];
    assert!(buf[..info.buffer_size()].chunks_exact(px).any(|p| p != first), "{}: every pixel is the same", path.display());
    (info.width, info.height)
}

/// Nine balls in a box, dropped onto the floor with strong damping: at rest well within 1 s.
const SETTLE: &str = r#"{
  "gravity": [0, 0, -9.81],
  "time_step": "auto",
  "duration": 1.0,
  "until_rest": { "kinetic_fraction": 1e-4 },
  "output": { "interval": 0.005 },
  "snapshot_every": 10,
  "materials": { "glass": { "density": 2500, "youngsModulus": 1e7, "poissonsRatio": 0.25, "fric": 0.5 } },
  "contacts": { "default": { "model": "hertz_mindlin", "coefficientRestitution": 0.2, "rolling_fric": 0.1 } },
  "generators": [
    { "type": "lattice", "origin": [0.003, 0.003, 0.004], "count": [3, 3, 1], "spacing": 0.004, "radius": 0.0015, "material": "glass" }
  ],
  "walls": [ { "type": "box", "name": "bin", "min": [0, 0, 0], "max": [0.014, 0.014, 0.02], "material": "glass", "open": ["+z"] } ]
}"#;

/// Run SETTLE on the CPU into `dir/out`; returns the output directory.
fn run_settle(dir: &Path) -> PathBuf {
    let scene = dir.join("settle.json");
    std::fs::write(&scene, SETTLE).unwrap();
    let out = dir.join("out");
    let o = talus(&["run", scene.to_str().unwrap(), "--backend", "cpu", "--no-progress", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "run failed\nstdout: {}\nstderr: {}", text(&o.stdout), text(&o.stderr));
    let stdout = text(&o.stdout);
    // the end of the run says where to look
    for line in ["energy chart:", "energy.png", "final state:", "render.png", "snapshots:", "particles.pvd", "at rest:"] {
        assert!(stdout.contains(line), "stdout lacks {line:?}:\n{stdout}");
    }
    out
}

#[test]
fn run_writes_pictures_and_stops_at_rest() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_settle(dir.path());
    assert_eq!(png_size(&out.join("energy.png")), (900, 700));
    assert_eq!(png_size(&out.join("render.png")), (800, 800));

    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let rest = &summary["rest"];
    assert_eq!(rest["reached"], true, "summary: {summary}");
    let ratio = rest["final_ratio"].as_f64().unwrap();
    assert!(ratio < 1e-4, "final kinetic / peak = {ratio}");
    let t = summary["simulated_time"].as_f64().unwrap();
    assert!(t < 0.99, "stopped at rest before the 1 s limit, ran {t} s");
    assert!(rest["peak_kinetic"].as_f64().unwrap() > 0.0);
    // the last snapshot is the state at rest
    let step = summary["steps"].as_u64().unwrap();
    assert!(out.join(format!("snapshots/particles_{step:010}.vtu")).is_file(), "no snapshot of the final step {step}");
}

#[test]
fn render_and_plot_draw_again() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_settle(dir.path());
    let o_dir = out.to_str().unwrap();

    // a run directory: its last snapshot, default file name beside the outputs
    let o = talus(&["render", o_dir, "--view", "iso", "--color", "radius"]);
    assert!(o.status.success(), "stderr: {}", text(&o.stderr));
    assert_eq!(png_size(&out.join("render_iso_radius.png")), (800, 800));
    assert!(text(&o.stdout).contains("9 particles"), "stdout: {}", text(&o.stdout));
    assert!(text(&o.stderr).is_empty(), "walls come from the run's scene, no note expected: {}", text(&o.stderr));

    // a snapshot file, every view and colour, a chosen size and file
    let first = out.join("snapshots/particles_0000000000.vtu");
    for (view, color) in [("x", "speed"), ("y", "force"), ("z", "id")] {
        let png = dir.path().join(format!("{view}_{color}.png"));
        let o = talus(&["render", first.to_str().unwrap(), "--view", view, "--color", color, "--size", "300", "-o", png.to_str().unwrap()]);
        assert!(o.status.success(), "render --view {view} --color {color}: {}", text(&o.stderr));
        assert_eq!(png_size(&png), (300, 300));
    }

    // plot: energy.png again, here to another file
    let png = dir.path().join("again.png");
    let o = talus(&["plot", o_dir, "-o", png.to_str().unwrap()]);
    assert!(o.status.success(), "stderr: {}", text(&o.stderr));
    assert_eq!(png_size(&png), (900, 700));
    assert!(text(&o.stdout).contains("again.png"));
}

#[test]
fn bad_inputs_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let fail = |args: &[&str], must: &[&str]| {
        let o = talus(args);
        assert_eq!(o.status.code(), Some(2), "{args:?} should fail with status 2; stdout: {}", text(&o.stdout));
        let err = text(&o.stderr);
        for m in must {
            assert!(err.contains(m), "{args:?}: stderr lacks {m:?}: {err}");
        }
    };
    let missing = d.join("missing.vtu");
    fail(&["render", missing.to_str().unwrap()], &["missing.vtu", "no such file"]);

    let garbage = d.join("garbage.vtu");
    std::fs::write(&garbage, "hello, not a snapshot\n").unwrap();
    fail(&["render", garbage.to_str().unwrap()], &["garbage.vtu", "not a VTK UnstructuredGrid"]);

    // a VTU whose binary data is cut short
    let cut = d.join("cut.vtu");
    std::fs::write(
        &cut,
        "<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\"><UnstructuredGrid><Piece NumberOfPoints=\"2\" NumberOfCells=\"2\"><PointData>\
         <DataArray type=\"Float64\" Name=\"radius\" NumberOfComponents=\"1\" format=\"binary\">EAAAAAAAAAA=</DataArray></PointData>\
         </Piece></UnstructuredGrid></VTKFile>\n",
    )
    .unwrap();
    fail(&["render", cut.to_str().unwrap()], &["cut.vtu", "radius", "16 bytes"]);

    let empty_dir = d.join("empty_run");
    std::fs::create_dir(&empty_dir).unwrap();
    fail(&["render", empty_dir.to_str().unwrap()], &["empty_run", "snapshots"]);
    fail(&["plot", empty_dir.to_str().unwrap()], &["energy.csv"]);

    let csv_dir = d.join("bad_csv");
    std::fs::create_dir(&csv_dir).unwrap();
    std::fs::write(csv_dir.join("energy.csv"), "step,time,kinetic\n0,0e0,1e0\n1,1e-3,oops\n").unwrap();
    fail(&["plot", csv_dir.to_str().unwrap()], &["energy.csv", "line 3", "kinetic", "oops"]);
    std::fs::write(csv_dir.join("energy.csv"), "step,time\n0,0e0\n").unwrap();
    fail(&["plot", csv_dir.to_str().unwrap()], &["energy.csv", "no column `", "in the header"]);

    fail(&["render", d.to_str().unwrap(), "--view", "w"], &["w"]);
}

#[test]
fn readme_runs_the_demo_scene() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(readme.contains("cargo run --release -- run scenes/demo_pour.json"), "README's run command is not the demo");
    assert!(readme.contains("cargo test --release"), "README's test command is gone");

    // the demo as the README promises: ~20,000 particles, until at rest, snapshots, a safe dt
    // (running it takes ~30 s on 2 cores: not done here)
    let s = talus::scene::load(&root.join("scenes/demo_pour.json")).expect("demo scene loads");
    assert!((19_000..=21_000).contains(&s.particles.len()), "{} particles", s.particles.len());
    let rest = s.until_rest.expect("the demo stops at rest");
    assert!(rest.kinetic_fraction <= 1e-4);
    assert!(s.snapshot_every > 0, "the demo writes snapshots");
    match s.dt_choice {
        talus::setup::TimeStepChoice::Auto { fraction, .. } => assert!(fraction <= 0.2),
        talus::setup::TimeStepChoice::Explicit => panic!("the demo uses an auto time step"),
    }
    // the budget: at most ~30,000 steps of 20,000 particles (≤ 2 min at the CPU backend's ~5e6
    // particle-steps/s on 2 cores)
    assert!(s.steps <= 30_000, "{} steps", s.steps);
}
