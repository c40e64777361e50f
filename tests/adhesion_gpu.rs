//! Whole scenes with adhesion on both backends: two soft JKR balls colliding (the scene of
//! docs/contact-models.md's JKR card), a capillary bridge pulled apart, and a ball striking a
//! wall with each adhesion. The GPU agrees with the CPU on the velocities after the contact
//! and on the bond-break energy, its energy balance closes to 1e-3 of the peak kinetic energy,
//! and a rerun is bit-identical. These tests need a GPU adapter (lavapipe counts).
//!
//! The tolerance on velocities is 2e-3 of the approach speed: an adhesive contact's force
//! jumps at touch (JKR's jump-in, DMT's constant pull, the bridge), so where a step lands
//! against the touching point moves the result by up to F·v·Δt; f32 positions shift that
//! point by a fraction of a step (on the JKR scene e differs by 1.6e-3 between the backends,
//! and by as much on the CPU alone when the balls start 1e-8 m apart more).

use std::path::Path;

use talus::gpu::{GpuBackend, GpuOptions};
use talus::{Backend, Energies, Setup};

fn scene(text: &str) -> Setup {
    talus::scene::parse_str(text, Path::new("adhesion_gpu.json")).unwrap_or_else(|e| panic!("scene: {e}"))
}

fn gpu(setup: &Setup) -> GpuBackend {
    GpuBackend::new(setup, GpuOptions::default()).unwrap_or_else(|e| panic!("GPU backend unavailable ({e}); GPU tests need a Vulkan driver (apt-get install mesa-vulkan-drivers)"))
}

/// Runs `steps` in batches of `batch`: (final velocities, final energies, peak kinetic
/// energy, largest |total − total₀|), and a fingerprint of the final state (bits).
fn run(b: &mut dyn Backend, steps: u64, batch: u64) -> (Vec<[f64; 3]>, Energies, f64, f64, Vec<u64>) {
    let e0 = b.energies().unwrap();
    let (mut peak, mut drift) = (e0.kinetic(), 0.0f64);
    for _ in 0..steps / batch {
        b.step(batch).unwrap();
        let e = b.energies().unwrap();
        peak = peak.max(e.kinetic());
        drift = drift.max((e.total() - e0.total()).abs());
    }
    let s = b.snapshot().unwrap();
    let e = b.energies().unwrap();
    let mut bits: Vec<u64> = [&s.position, &s.velocity, &s.angular_velocity, &s.force].iter().flat_map(|v| v.iter().flatten().map(|x| x.to_bits())).collect();
    bits.extend([e.kinetic(), e.strain, e.surface, e.slip, e.dashpot, e.stiffness_work, e.bond_break].map(f64::to_bits));
    (s.velocity.clone(), e, peak, drift, bits)
}

/// Both backends on `setup`; checks and returns (CPU energies, GPU energies).
fn compare(name: &str, setup: &Setup, steps: u64, batch: u64, speed: f64) -> (Energies, Energies) {
    let mut cpu = talus::cpu::CpuBackend::new(setup).expect("CPU backend");
    let (v_cpu, e_cpu, _, _, _) = run(&mut cpu, steps, batch);
    let mut g = gpu(setup);
    let (v_gpu, e_gpu, peak, drift, bits) = run(&mut g, steps, batch);
    for (k, (a, b)) in v_cpu.iter().zip(&v_gpu).enumerate() {
        let d = ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
        assert!(d <= 2e-3 * speed, "{name}: particle {k}: velocity cpu {a:?} gpu {b:?} (|Δ| = {d:e}, approach speed {speed})");
    }
    let tol = 2e-3 * e_cpu.bond_break.abs() + 1e-4 * peak;
    assert!((e_cpu.bond_break - e_gpu.bond_break).abs() <= tol, "{name}: bond_break cpu {:e} gpu {:e}", e_cpu.bond_break, e_gpu.bond_break);
    assert!(drift <= 1e-3 * peak, "{name}: GPU energy total moved by {drift:e}, peak kinetic {peak:e}");
    let mut again = gpu(setup);
    let (_, _, _, _, bits_again) = run(&mut again, steps, batch);
    assert!(bits == bits_again, "{name}: the GPU rerun differs");
    println!("{name}: cpu bond_break {:e} surface {:e}; gpu bond_break {:e} surface {:e}; drift {:.2e} of peak kinetic", e_cpu.bond_break, e_cpu.surface, e_gpu.bond_break, e_gpu.surface, drift / peak);
    (e_cpu, e_gpu)
}

const SOFT: &str = r#""materials": {"soft": {"density": 2500, "hz_shear": 1e7, "hz_poiss": 0.25, "fric": 0.3}}"#;

#[test]
fn jkr_balls_collide_alike_on_both_backends() {
    let setup = scene(&format!(
        r#"{{ "gravity": [0,0,0], "time_step": 2e-6, "duration": 0.05, "output": {{"every_steps": 250}}, "snapshot_every": 0, {SOFT},
        "contacts": {{"default": {{"model": "hertz_mindlin", "coefficientRestitution": 1.0, "adhesion": "jkr", "surface_energy": 0.5}}}},
        "particles": [ {{"position": [-0.01001,0,0], "radius": 0.01, "velocity": [0.005,0,0], "material": "soft"}},
                       {{"position": [0.01001,0,0], "radius": 0.01, "velocity": [-0.005,0,0], "material": "soft"}} ] }}"#
    ));
    // the contact has formed and broken by step 5000 (2.5 of its 25 thousand)
    let (cpu, gpu) = compare("jkr pair", &setup, 6000, 500, 0.01);
    assert!(cpu.bond_break > 1e-7 && gpu.bond_break > 1e-7, "the JKR neck broke: cpu {:e} gpu {:e}", cpu.bond_break, gpu.bond_break);
}

#[test]
fn capillary_bridge_pulled_apart_alike_on_both_backends() {
    // two balls meet at 0.1 m/s and rebound (e = 0.5); the bridge (V = 1e-9 m³, rupture at
    // 1.1 mm) formed at touch holds them while they part, slows them and breaks
    let setup = scene(&format!(
        r#"{{ "gravity": [0,0,0], "time_step": 5e-6, "duration": 0.03, "output": {{"every_steps": 250}}, "snapshot_every": 0, {SOFT},
        "contacts": {{"default": {{"model": "hertz_mindlin", "coefficientRestitution": 0.5, "adhesion": "capillary", "liquid_volume": 1e-9, "surface_tension": 0.072, "contact_angle": 0.2}}}},
        "particles": [ {{"position": [-0.01001,0,0], "radius": 0.01, "velocity": [0.05,0,0], "material": "soft"}},
                       {{"position": [0.01001,0,0], "radius": 0.01, "velocity": [-0.05,0,0], "material": "soft"}} ] }}"#
    ));
    let (cpu, gpu) = compare("capillary pair", &setup, 6000, 500, 0.1);
    assert!(cpu.bond_break > 0.0 && gpu.bond_break > 0.0, "the bridge ruptured: cpu {:e} gpu {:e}", cpu.bond_break, gpu.bond_break);
}

#[test]
fn ball_on_wall_alike_on_both_backends_with_each_adhesion() {
    for adhesion in [
        r#""adhesion": "jkr", "surface_energy": 0.5"#,
        r#""adhesion": "dmt", "surface_energy": 0.2"#,
        r#""adhesion": "sjkr", "cohesion_energy_density": 2e4"#,
        r#""adhesion": "sjkr2", "cohesion_energy_density": 2e4"#,
        r#""adhesion": "capillary", "liquid_volume": 1e-10, "surface_tension": 0.072, "contact_angle": 0.3"#,
    ] {
        let setup = scene(&format!(
            r#"{{ "gravity": [0,0,0], "time_step": 2e-6, "duration": 0.01, "output": {{"every_steps": 250}}, "snapshot_every": 0, {SOFT},
            "contacts": {{"default": {{"model": "hertz_mindlin", "coefficientRestitution": 0.8, {adhesion}}}}},
            "particles": [ {{"position": [0,0,0.01001], "radius": 0.01, "velocity": [0.01,0,-0.05], "material": "soft"}} ],
            "walls": [ {{"type": "plane", "name": "floor", "point": [0,0,0], "normal": [0,0,1], "material": "soft"}} ] }}"#
        ));
        compare(adhesion, &setup, 3000, 500, 0.05);
    }
}

/// A run split by a checkpoint while a capillary bridge holds the balls apart (step 2000 of
/// 3000: a bonded-apart history record, positive surface energy): the resumed GPU run writes
/// the same bytes as the whole one (the adhesion rows of `work_step` and `dissipation` travel
/// in the checkpoint).
#[test]
fn gpu_run_split_while_bonded_apart_is_byte_identical() {
    use talus::checkpoint::{Checkpoint, SceneRecord, CHECKPOINT_FILE};
    use talus::run::{continue_run, open_backend, run_scene, BackendChoice, CheckpointOptions, RunOptions};
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("bridge.json");
    std::fs::write(
        &scene,
        format!(
            r#"{{ "gravity": [0,0,0], "time_step": 5e-6, "duration": 0.03, "output": {{"every_steps": 250}}, "snapshot_every": 0, {SOFT},
            "contacts": {{"default": {{"model": "hertz_mindlin", "coefficientRestitution": 0.5, "adhesion": "capillary", "liquid_volume": 1e-9, "surface_tension": 0.072, "contact_angle": 0.2}}}},
            "particles": [ {{"position": [-0.01001,0,0], "radius": 0.01, "velocity": [0.05,0,0], "material": "soft"}},
                           {{"position": [0.01001,0,0], "radius": 0.01, "velocity": [-0.05,0,0], "material": "soft"}} ] }}"#
        ),
    )
    .unwrap();
    let run = |steps: u64, out: &Path| {
        let record = SceneRecord::read(&scene).unwrap();
        let setup = talus::scene::parse_str(&record.text, &scene).unwrap();
        let checkpoint = Some(CheckpointOptions::for_scene(record, &setup, None).unwrap());
        let (mut backend, _) = open_backend(&setup, BackendChoice::Gpu).unwrap();
        run_scene(&setup, backend.as_mut(), out, RunOptions { steps: Some(steps), checkpoint, ..Default::default() }).unwrap()
    };
    let (whole, part, rest) = (dir.path().join("whole"), dir.path().join("part"), dir.path().join("rest"));
    run(3000, &whole);
    run(2000, &part);
    let file = part.join(CHECKPOINT_FILE);
    let c = Checkpoint::read(&file).unwrap();
    assert!(c.state.history.iter().any(|h| h.history.established == talus::contact::adhesion::BONDED_APART), "no bonded-apart contact at the split");
    let setup = talus::resume::setup_of(&file, &c).unwrap();
    let (mut backend, _) = talus::resume::open_at(&setup, &c, BackendChoice::Gpu).unwrap();
    let checkpoint = Some(CheckpointOptions { scene: c.meta.scene.clone(), inputs: c.meta.inputs.clone(), every: None });
    continue_run(&setup, backend.as_mut(), &rest, RunOptions { steps: Some(1000), checkpoint, ..Default::default() }, c.meta.run).unwrap();
    let read = |p: &Path| std::fs::read(p).unwrap();
    assert!(read(&whole.join("energy.csv")) == read(&rest.join("energy.csv")), "energy.csv differs between the whole run and the split one");
    let (a, b) = (Checkpoint::read(&whole.join(CHECKPOINT_FILE)).unwrap(), Checkpoint::read(&rest.join(CHECKPOINT_FILE)).unwrap());
    assert!(a.state == b.state && a.exact == b.exact, "final state differs");
    assert!(a.exact.raw("adhesion").is_ok(), "the GPU state carries its adhesion energies for a CPU resume");
}
