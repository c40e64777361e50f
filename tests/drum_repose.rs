//! The dynamic angle of repose of scenes/rotating_drum.json, end to end through `run_scene`
//! on the CPU backend: a shortened run (3 s instead of 12 s, sampling from 2 s on, when the
//! drum has turned 1.6 rad and its torque is already steady) must write the measurement into
//! summary.json with a physically sensible angle.

use std::path::Path;

use talus::cpu::CpuBackend;
use talus::run::{run_scene, RunOptions};

#[test]
fn shortened_drum_run_measures_a_sensible_angle() {
    let mut setup = talus::scene::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/rotating_drum.json")).expect("load rotating_drum.json");
    assert_eq!(setup.measures.len(), 1);
    setup.measures[0].from_time = 2.0;
    setup.snapshot_every = 0;
    let steps = (3.0 / setup.dt).ceil() as u64;
    let dir = tempfile::tempdir().unwrap();
    let mut cpu = CpuBackend::new(&setup).unwrap();
    let summary = run_scene(&setup, &mut cpu, dir.path(), RunOptions { steps: Some(steps), progress: false, ..Default::default() }).expect("CPU run");

    // one sample per output (every `output_every` steps and the last step) from 2 s on
    let mut outputs: Vec<u64> = (1..).map(|k| k * setup.output_every).take_while(|&s| s < steps).collect();
    outputs.push(steps);
    let expected_samples = outputs.iter().filter(|&&s| s as f64 * setup.dt >= 2.0).count();
    let m = &summary.measurements;
    assert_eq!(m.len(), 1);
    let r = &m[0];
    println!("{}", r.line());
    assert_eq!((r.name.as_str(), r.kind.as_str(), r.unit.as_str()), ("dynamic_angle", "repose_angle", "deg"));
    assert_eq!(r.details["samples"].as_u64().unwrap() as usize, expected_samples);
    assert_eq!(r.details["failed_samples"], 0);
    let angle = r.value.expect("an angle");
    // Glass-like spheres with mu = 0.5 roll at 25-35 degrees; end-wall friction and the short
    // run widen that to a physical bound.
    assert!((20.0..45.0).contains(&angle), "dynamic angle {angle} deg outside 20-45");
    // the drum turns with +0.8 rad/s about +z, so it lifts the bed on the +x side
    // (across = axis × down = +x): the signed angle is positive
    let signed = r.details["signed_mean"].as_f64().unwrap();
    assert!((signed - angle).abs() < 1e-9, "every sample should rise towards +x: signed {signed}, |angle| {angle}");
    let std = r.details["std"].as_f64().unwrap();
    assert!(std > 0.0 && std < 8.0, "std {std}");
    assert!(r.details["mean_bins"].as_f64().unwrap() >= 8.0, "{}", r.details);

    // summary.json holds the same result
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.path().join("summary.json")).unwrap()).unwrap();
    let on_disk = &json["measurements"][0];
    assert_eq!(on_disk["name"], "dynamic_angle");
    assert_eq!(on_disk["type"], "repose_angle");
    assert_eq!(on_disk["unit"], "deg");
    // (serde_json's default float parsing may differ from the written value in the last bit)
    let close = |a: &serde_json::Value, b: f64| (a.as_f64().unwrap() - b).abs() <= 1e-12 * b.abs();
    assert!(close(&on_disk["value"], angle), "{on_disk}");
    assert_eq!(on_disk["details"]["samples"], r.details["samples"]);
    assert!(close(&on_disk["details"]["std"], std), "{on_disk}");
}
