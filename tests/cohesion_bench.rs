//! `talus verify --benchmark cohesion`: every adhesion part (JKR, DMT, SJKR, SJKR2, capillary
//! bridge) against analytic two-body results on the CPU, pair and wall; every row within its
//! stated tolerance; the CSV tables and PNG figures are written; the command's exit status.

use talus::chung_ooi::open_backend;
use talus::cohesion_bench::{e_star, run_benchmark, sticking_constant, sticking_velocity, write_outputs, Jkr, RADIUS};

/// The quantities each model has, each as a pair and as a ball on a wall.
const EXPECTED: [(&str, &str); 19] = [
    ("jkr", "JKR curve: max |F - F_JKR| (N)"),
    ("jkr", "pull-off force (N)"),
    ("jkr", "overlap at pull-off (m)"),
    ("jkr", "force at first touch (N)"),
    ("jkr", "break overlap (m)"),
    ("jkr", "restitution at 0.5 V_s"),
    ("jkr", "restitution at 1.25 V_s"),
    ("jkr", "restitution at 5 V_s"),
    ("jkr", "sticking velocity (m/s)"),
    ("dmt", "DMT curve: max |F - F_DMT| (N)"),
    ("dmt", "pull-off force (N)"),
    ("sjkr", "SJKR curve: max |F - F_th| (N)"),
    ("sjkr", "equilibrium overlap (m)"),
    ("sjkr", "peak tension (N)"),
    ("sjkr2", "equilibrium overlap (m)"),
    ("sjkr2", "peak tension (N)"),
    ("capillary", "bridge curve: max |F - F_W| (N)"),
    ("capillary", "force at contact (N)"),
    ("capillary", "rupture distance (m)"),
];

#[test]
fn cohesion_benchmark_meets_theory_on_the_cpu() {
    let report = run_benchmark(&["cpu"], &open_backend).expect("benchmark runs");
    print!("{}", report.table());
    for (model, quantity) in EXPECTED {
        for body in ["pair", "wall"] {
            let n = report.rows.iter().filter(|r| r.model == model && r.quantity == quantity && r.geometry == body && r.backend == "cpu").count();
            assert_eq!(n, 1, "{model} {quantity} {body}: {n} rows");
        }
    }
    assert!(report.rows.iter().any(|r| r.quantity.starts_with("bond_break")), "no bond-break row");
    let failures = report.failures();
    assert!(failures.is_empty(), "{} rows beyond tolerance: {:?}", failures.len(), failures);
    let dir = tempfile::tempdir().unwrap();
    let files = write_outputs(&report, dir.path()).unwrap();
    let csv = std::fs::read_to_string(dir.path().join("cohesion.csv")).unwrap();
    assert_eq!(csv.lines().count(), report.rows.len() + 1);
    let pngs: Vec<&String> = files.iter().filter(|f| f.ends_with(".png")).collect();
    assert_eq!(pngs.len(), 5, "{files:?}");
    for f in pngs {
        let bytes = std::fs::read(dir.path().join(f)).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{f} is not a PNG");
    }
}

/// The sticking constant of Talus's rule (bond at touch, break at δ_c), C = 1.0348, and the
/// benchmark's analytic JKR against the work the contact code books along its branch.
#[test]
fn sticking_constant_and_work_of_adhesion() {
    assert!((sticking_constant() - 1.03484).abs() < 1e-5, "{}", sticking_constant());
    let r = 0.5 * RADIUS;
    let j = Jkr::new(e_star(), r, 0.5);
    assert!((j.force(j.touch_radius()) + 8.0 / 9.0 * j.pulloff()).abs() < 1e-12 * j.pulloff());
    assert!((j.force(j.break_radius()) + 5.0 / 9.0 * j.pulloff()).abs() < 1e-12 * j.pulloff());
    assert!((j.delta(j.break_radius()) - j.break_overlap()).abs() < 1e-12 * j.break_overlap().abs());
    // the work of adhesion of the brief's example (two soft balls, γ = 0.5): W = 1.0784e-7 J
    let w = j.impact_loss();
    assert!((w - 1.0784e-7).abs() < 1e-4 * w, "{w}");
    let beta = talus::contact::adhesion::jkr_beta(0.5, e_star());
    let code = talus::contact::adhesion::jkr_energy(e_star(), r, beta, j.break_radius()) - talus::contact::adhesion::jkr_energy(e_star(), r, beta, j.touch_radius());
    assert!((code - w).abs() < 1e-12 * w);
    let m = 0.5 * 2500.0 * 4.0 / 3.0 * std::f64::consts::PI * RADIUS.powi(3);
    let vs = sticking_velocity(&j, m);
    // the brief's run: ±0.005 m/s gives e = 0.7668 (analytic)
    assert!(((1.0 - (vs / 0.01).powi(2)).sqrt() - 0.7668).abs() < 1e-4);
}

/// Both backends: every GPU row within its f32 tolerance (about 12 s on lavapipe).
#[test]
fn cohesion_benchmark_meets_theory_on_both_backends() {
    let report = run_benchmark(&["cpu", "gpu"], &open_backend).expect("benchmark runs");
    print!("{}", report.table());
    let (cpu, gpu): (Vec<_>, Vec<_>) = report.rows.iter().partition(|r| r.backend == "cpu");
    assert_eq!(cpu.len(), gpu.len());
    let failures = report.failures();
    assert!(failures.is_empty(), "{} rows beyond tolerance: {:?}", failures.len(), failures);
}

/// The command line: table on stdout, exit status 0, CSV and figures in --out.
#[test]
fn cli_runs_the_cohesion_benchmark_on_the_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_talus"))
        .args(["verify", "--benchmark", "cohesion", "--backend", "cpu", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "exit {:?}: {stdout}{}", out.status, String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("pull-off force (N)") && stdout.contains("0 beyond tolerance"), "{stdout}");
    for f in ["cohesion.csv", "cohesion_points.csv", "cohesion_jkr_curve.png", "cohesion_impact.png", "cohesion_sjkr_curve.png", "cohesion_sjkr2_curve.png", "cohesion_capillary_curve.png"] {
        assert!(dir.path().join(f).is_file(), "{f} missing");
    }
}
