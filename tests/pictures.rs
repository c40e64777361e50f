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

/// The RGB(A) pixels of a PNG file: (width, height, samples per pixel, data).
fn png_pixels(path: &Path) -> (u32, u32, usize, Vec<u8>) {
    let file = std::fs::File::open(path).unwrap();
    let mut reader = png::Decoder::new(std::io::BufReader::new(file)).read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    (info.width, info.height, info.color_type.samples(), buf)
}

#[test]
fn render_has_a_colour_bar() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_settle(dir.path());
    let (w, h, px, buf) = png_pixels(&out.join("render.png"));
    let bar = talus::render::bar_height(w);
    // the middle row of the bar: viridis from dark blue-violet (left) to yellow (right)
    let y = (h - bar + bar / 4) as usize;
    let at = |x: u32| &buf[(y * w as usize + x as usize) * px..][..3];
    let (left, right) = (at(w / 20 + 3), at(w - w / 20 - 4));
    assert!(left[2] > left[1] && left[0] < 100, "left end of the bar {left:?}");
    assert!(right[0] > 200 && right[1] > 200 && right[2] < 100, "right end of the bar {right:?}");
    // the range and unit are said
    let o = talus(&["render", out.to_str().unwrap(), "--color", "force", "-o", dir.path().join("f.png").to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains(" N (99th percentile"), "{}", text(&o.stdout));
}

#[test]
fn force_colours_are_clipped_at_a_percentile() {
    use talus::render::{ColorBy, ColorRange};
    // 99 grains at 1..2 N and one wedged grain at 1000 N: the outlier does not set the scale
    let values: Vec<f64> = (0..99).map(|i| 1.0 + i as f64 / 98.0).chain([1000.0]).collect();
    let r = ColorRange::of(ColorBy::Force, values.iter().copied());
    assert_eq!((r.lo, r.max, r.clipped, r.percentile), (1.0, 1000.0, 1, Some(99.0)));
    assert!(r.hi < 2.0 + 1e-12, "{r:?}");
    assert_eq!(r.fraction(1000.0), 1.0);
    assert!(r.fraction(1.5) > 0.2, "a typical grain is not at the bottom of the scale: {}", r.fraction(1.5));
    let caption = r.caption(ColorBy::Force);
    assert!(caption.starts_with("force, N: 1 … 2") && caption.contains("99th percentile; 1 above, up to 1000 N, drawn yellow"), "{caption}");
    // speed: the whole range
    let r = ColorRange::of(ColorBy::Speed, values.iter().copied());
    assert_eq!((r.lo, r.hi, r.clipped, r.percentile), (1.0, 1000.0, 0, None));
    assert_eq!(ColorRange::of(ColorBy::Speed, values).caption(ColorBy::Speed), "speed, m/s: 1 … 1000");
}

#[test]
fn energy_partitions_have_their_own_colours_and_an_accurate_title() {
    use talus::plot::{partition_color, ENERGY_TITLE, PARTITION_COLORS};
    for (i, (a, ca)) in PARTITION_COLORS.iter().enumerate() {
        assert_ne!((ca.0, ca.1, ca.2), (0, 0, 0), "{a} is black, the drift's colour");
        for (b, cb) in &PARTITION_COLORS[i + 1..] {
            assert_ne!((ca.0, ca.1, ca.2), (cb.0, cb.1, cb.2), "{a} and {b} share a colour");
        }
    }
    let c = |n: &str| {
        let c = partition_color(n);
        (c.0, c.1, c.2)
    };
    // the legend labels of energy.png
    assert_ne!(c("kinetic"), c("removed"));
    assert_eq!(c("gravitational − initial"), c("gravitational"));
    assert_ne!(c("dissipated (slip + dashpot)"), c("inserted"));
    assert!(ENERGY_TITLE.contains("kinetic and strain as they are") && ENERGY_TITLE.contains("the others as change since the start"), "{ENERGY_TITLE}");
}

/// An output interval of 0.005 s at an automatic time step that does not divide it: snapped to
/// whole steps, said at the start, every row on the snapped cadence and no near-duplicate last
/// row.
#[test]
fn output_interval_is_snapped_to_whole_steps() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("cadence.json");
    let scene_text = SETTLE.replace("\"duration\": 1.0,", "\"duration\": 0.1,").replace("\"until_rest\": { \"kinetic_fraction\": 1e-4 },", "");
    assert_ne!(scene_text, SETTLE);
    std::fs::write(&scene, &scene_text).unwrap();
    let setup = talus::scene::parse_str(&scene_text, &scene).unwrap();
    let every = setup.output_every;
    let x = 0.005 / setup.dt;
    assert!((x - x.round()).abs() > 1e-3, "the time step divides the interval: {x}");
    assert_eq!(every, x.round() as u64);
    assert_eq!(setup.steps % every, 0, "{} steps", setup.steps);
    let asked = (0.1 / setup.dt).ceil() as u64;
    assert!(setup.steps.abs_diff(asked) <= every / 2, "{} steps for {asked}", setup.steps);
    let out = dir.path().join("out");
    let o = talus(&["run", scene.to_str().unwrap(), "--backend", "cpu", "--no-progress", "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(err.contains(&format!("output.interval 0.005 s is {} time steps", talus::error::fmt_sig(x, 7))) && err.contains(&format!("snapped to {every} steps")), "{err}");
    let csv = std::fs::read_to_string(out.join("energy.csv")).unwrap();
    let steps: Vec<u64> = csv.lines().skip(1).map(|l| l.split(',').next().unwrap().parse().unwrap()).collect();
    assert_eq!(steps, (0..=setup.steps / every).map(|k| k * every).collect::<Vec<_>>());
    // the pure rule: a duration one step past a whole number of outputs drops that step
    let c = talus::scene::output_cadence(talus::scene::OutputAsked::Interval(0.005), Some(0.1), 20 * 243 + 1, 0.005 / 243.3);
    assert_eq!((c.every, c.steps), (243, 20 * 243));
    let note = c.note.unwrap();
    assert!(note.contains("snapped to 243 steps") && note.contains("the run ends at step 4860"), "{note}");
    // whole numbers already: nothing to say
    let c = talus::scene::output_cadence(talus::scene::OutputAsked::Steps(25), None, 400, 1e-5);
    assert_eq!((c.every, c.steps, c.note), (25, 400, None));
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
    // the test command CI runs is the README's
    let test_command = "bash tests/all.sh && bash python/test.sh && bash tests/mpi.sh";
    assert!(readme.contains(&format!("```sh\n{test_command}\n```")), "README's test command is not `{test_command}`");
    let ci = std::fs::read_to_string(root.join(".ci/run")).unwrap();
    assert!(ci.lines().any(|l| l == test_command), ".ci/run does not run the README's test command");

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
