//! `talus verify --benchmark chung-ooi`: the eight Chung & Ooi (2011) tests on both backends,
//! every model, every checked row within its stated tolerance; the CSV tables and PNG figures
//! are written.

use talus::chung_ooi::{open_backend, run_benchmark, write_outputs, Variant};
use talus::contact::ContactModel;

/// The GPU runs two models here, each as its spec has it and with `limit_damping` (to keep CI
/// short): hooke (linear) and hertz_mindlin (Hertz + Mindlin, the tangential part shared with
/// hertz_viscous). `talus verify --benchmark chung-ooi --backend both` runs all ten
/// (docs/verification.md).
const GPU_MODELS: [Variant; 4] = [
    Variant::plain(ContactModel::Hooke),
    Variant::plain(ContactModel::HertzMindlin),
    Variant::limited(ContactModel::Hooke),
    Variant::limited(ContactModel::HertzMindlin),
];

#[test]
fn chung_ooi_benchmark_meets_theory_on_the_cpu() {
    let all = Variant::all();
    assert_eq!(all.len(), 10, "five models, each also with limit_damping");
    let report = run_benchmark(&["cpu"], &open_backend, &all).expect("benchmark runs");
    print!("{}", report.table());
    for test in 1..=8 {
        for &model in &all {
            let checked = report.rows.iter().filter(|r| r.test == test && r.model == model.name() && r.tolerance.is_some()).count();
            assert!(checked > 0, "test {test}, {}: no checked row", model.name());
        }
    }
    let failures = report.failures();
    assert!(failures.is_empty(), "{} rows beyond tolerance: {:?}", failures.len(), failures);
}

#[test]
fn chung_ooi_benchmark_meets_theory_on_both_backends() {
    // GPU tests never skip: without an adapter `open_backend` fails and so does this test.
    let report = run_benchmark(&["cpu", "gpu"], &open_backend, &GPU_MODELS).expect("benchmark runs");
    print!("{}", report.table());
    for test in 1..=8 {
        for model in GPU_MODELS {
            for backend in ["cpu", "gpu"] {
                let checked = report.rows.iter().filter(|r| r.test == test && r.model == model.name() && r.backend == backend && r.tolerance.is_some()).count();
                assert!(checked > 0, "test {test}, {}, {backend}: no checked row", model.name());
            }
        }
    }
    let failures = report.failures();
    assert!(failures.is_empty(), "{} rows beyond tolerance: {:?}", failures.len(), failures);
    // CPU and GPU measure the same physics: every row within 2e-3 of each other (f32)
    let (cpu, gpu): (Vec<_>, Vec<_>) = report.rows.iter().partition(|r| r.backend == "cpu");
    assert_eq!(cpu.len(), gpu.len());
    for (c, g) in cpu.iter().zip(gpu.iter()) {
        assert_eq!((c.test, &c.case, c.model, c.quantity), (g.test, &g.case, g.model, g.quantity));
        let scale = c.theory.abs().max(c.talus.abs()).max(1e-12);
        if c.tolerance.is_some() {
            assert!((c.talus - g.talus).abs() <= 2e-3 * scale, "{} {} {} {}: cpu {} vs gpu {}", c.test, c.case, c.model, c.quantity, c.talus, g.talus);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let files = write_outputs(&report, dir.path()).unwrap();
    let csv = std::fs::read_to_string(dir.path().join("chung_ooi.csv")).unwrap();
    assert_eq!(csv.lines().count(), report.rows.len() + 1);
    for f in files.iter().filter(|f| f.ends_with(".png")) {
        let bytes = std::fs::read(dir.path().join(f)).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{f} is not a PNG");
    }
    assert_eq!(files.iter().filter(|f| f.ends_with(".png")).count(), 5);
}

/// The command line: table on stdout, exit status 0, CSV and figures in --out.
#[test]
fn cli_runs_the_benchmark_on_the_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_talus"))
        .args(["verify", "--benchmark", "chung-ooi", "--backend", "cpu", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "exit {:?}: {stdout}{}", out.status, String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("contact time (s)") && stdout.contains("0 beyond tolerance"), "{stdout}");
    for f in ["chung_ooi.csv", "chung_ooi_points.csv", "tangential_restitution.png", "rebound_angle.png", "psi_recoil.png", "psi_spin.png", "restitution.png"] {
        assert!(dir.path().join(f).is_file(), "{f} missing");
    }
    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_talus")).args(["verify"]).output().unwrap();
    assert!(!bad.status.success());
}
