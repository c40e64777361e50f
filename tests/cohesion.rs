//! Adhesion through whole runs (issue 33): every part closes its energy in a pair impact and a
//! wall impact, JKR rebounds at the analytic restitution of Talus's break rule, bonds survive
//! a checkpoint, and bad adhesion input is refused naming file, key and value.

mod common;

use std::path::Path;

use talus::backend::{Backend, Energies};
use talus::checkpoint::{Checkpoint, SceneRecord, CHECKPOINT_FILE};
use talus::run::{continue_run, open_backend, run_scene, BackendChoice, CheckpointOptions, RunOptions};

/// Two soft balls (R = 10 mm, ρ = 2500, G = 1e7 Pa, ν = 0.25) meeting head-on at ±`v` along
/// x (centres 20.02 mm apart), and a third falling sideways onto a wall at x = 0.05 m with
/// `v`; contacts `contact` (JSON members of `contacts.default`).
fn impact_scene(contact: &str, v: f64, duration: f64, dt: f64) -> String {
    format!(
        r#"{{
  "gravity": [0, 0, 0], "time_step": {dt}, "duration": {duration},
  "output": {{ "every_steps": 100 }}, "snapshot_every": 0,
  "materials": {{ "soft": {{ "density": 2500, "hz_shear": 1e7, "hz_poiss": 0.25, "fric": 0.3 }} }},
  "contacts": {{ "default": {{ {contact} }} }},
  "particles": [
    {{ "position": [-0.01001, 0, 0], "radius": 0.01, "velocity": [{v}, 0, 0], "material": "soft" }},
    {{ "position": [0.01001, 0, 0], "radius": 0.01, "velocity": [-{v}, 0, 0], "material": "soft" }},
    {{ "position": [0.03999, 0.05, 0], "radius": 0.01, "velocity": [{v}, 0, 0], "material": "soft" }}
  ],
  "walls": [ {{ "type": "plane", "name": "side", "point": [0.05, 0.05, 0], "normal": [-1, 0, 0], "material": "soft" }} ]
}}"#
    )
}

const JKR: &str = r#""model": "hertz_mindlin", "coefficientRestitution": 1.0, "adhesion": "jkr", "surface_energy": 0.5"#;
const DMT: &str = r#""model": "hertz_mindlin", "coefficientRestitution": 1.0, "adhesion": "dmt", "surface_energy": 0.05"#;
const SJKR: &str = r#""model": "hertz_mindlin", "coefficientRestitution": 0.9, "adhesion": "sjkr", "cohesion_energy_density": 2e4"#;
const SJKR2: &str = r#""model": "hertz", "hz_alpha": 1.5, "dp_nratio": 0.1, "adhesion": "sjkr2", "cohesion_energy_density": 2e4"#;
const CAPILLARY: &str = r#""model": "hooke", "elasticStiffness": 2e3, "coefficientRestitution": 0.8, "adhesion": "capillary", "liquid_volume": 1e-10, "surface_tension": 0.072, "contact_angle": 0.2"#;

fn setup(text: &str) -> talus::setup::Setup {
    talus::scene::parse_str(text, Path::new("cohesion.json")).unwrap()
}

/// Steps `setup` in batches of `every`: (the largest |total − total₀| over the peak of kinetic +
/// strain, the final energies).
fn closure(backend: &mut dyn Backend, steps: u64, every: u64) -> (f64, Energies) {
    let e0 = backend.energies().unwrap();
    let (mut drift, mut peak) = (0.0f64, e0.kinetic() + e0.strain);
    let mut e = e0;
    for _ in 0..steps / every {
        backend.step(every).unwrap();
        e = backend.energies().unwrap();
        drift = drift.max((e.total() - e0.total()).abs());
        peak = peak.max(e.kinetic() + e.strain);
    }
    (drift / peak, e)
}

#[test]
fn every_adhesion_closes_its_energy_in_pair_and_wall_impacts_cpu() {
    for (name, contact, v) in [("jkr", JKR, 0.01), ("dmt", DMT, 0.01), ("sjkr", SJKR, 0.05), ("sjkr2", SJKR2, 0.05), ("capillary", CAPILLARY, 0.05)] {
        let s = setup(&impact_scene(contact, v, 0.05, 2e-6));
        let (mut b, _) = open_backend(&s, BackendChoice::Cpu).unwrap();
        let (drift, e) = closure(b.as_mut(), 25_000, 500);
        assert!(drift < 1e-3, "{name}: energy total drifts {drift:e} of the peak");
        // adhesion acted: surface energy while bonded or bond-break work after
        assert!(e.surface != 0.0 || e.bond_break != 0.0 || e.stiffness_work != 0.0, "{name}: no adhesion energy booked: {e:?}");
        if name == "jkr" || name == "capillary" {
            assert!(e.bond_break > 0.0, "{name}: bonds broke but booked no work: {e:?}");
        }
    }
}

/// JKR's elastic adhesive impact: the balls part at e = √(1 − (V_s/V)²), V_s = √(2W/m*) with
/// W the work of Talus's break rule (formed at touch, broken at the branch's least overlap).
#[test]
fn jkr_pair_rebounds_at_the_analytic_restitution_cpu() {
    use std::f64::consts::PI;
    use talus::contact::adhesion::{jkr_beta, jkr_break_gap, jkr_contact_radius, jkr_energy};
    let s = setup(&impact_scene(JKR, 0.005, 0.05, 2e-6));
    let (mut b, _) = open_backend(&s, BackendChoice::Cpu).unwrap();
    b.step(25_000).unwrap();
    let snap = b.snapshot().unwrap();
    let v_rel = snap.velocity[1][0] - snap.velocity[0][0];
    let e_sim = v_rel / 0.01;
    let (e_star, r_star, gamma) = (1e7 / 0.75, 0.005, 0.5);
    let beta = jkr_beta(gamma, e_star);
    let work = jkr_energy(e_star, r_star, beta, jkr_contact_radius(r_star, beta, -jkr_break_gap(r_star, beta))) - jkr_energy(e_star, r_star, beta, jkr_contact_radius(r_star, beta, 0.0));
    let m_star = 0.5 * 2500.0 * 4.0 / 3.0 * PI * 1e-6;
    let v_s = (2.0 * work / m_star).sqrt();
    let e_theory = (1.0 - (v_s / 0.01).powi(2)).sqrt();
    assert!((e_sim / e_theory - 1.0).abs() < 2e-3, "restitution {e_sim} vs {e_theory}");
    let e = b.energies().unwrap();
    assert!((e.bond_break / work - 1.0).abs() < 2e-2, "bond break {} vs W {work}", e.bond_break);
}

/// A JKR neck and a capillary bridge held apart at the split: the whole run and the run split
/// by a checkpoint write the same bytes.
fn split_run_keeps_its_bonds(choice: BackendChoice) {
    // the JKR pair parts at 0.005 m/s; the capillary pair and the wall ball stretch a bridge
    let text = impact_scene(JKR, 0.005, 0.05, 2e-6);
    let text = text.replace(r#""contacts": { "default": {"#, r#""contacts": { "pairs": [ { "materials": ["soft", "soft"], "#);
    let text = text.replace(r#""surface_energy": 0.5 } },"#, r#""surface_energy": 0.5 } ] },"#);
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("bonds.json");
    std::fs::write(&scene, &text).unwrap();
    let (whole, part, rest) = (dir.path().join("whole"), dir.path().join("part"), dir.path().join("rest"));
    // the pair touches at step ~1000 (20 µm apart, closing at 0.01 m/s) and its neck breaks
    // at step ~3290, stretched beyond touch for the last few hundred steps
    let (split, total) = (3_200u64, 4_000u64);
    run(&scene, choice, total, &whole);
    run(&scene, choice, split, &part);
    let saved = Checkpoint::read(&part.join(CHECKPOINT_FILE)).unwrap();
    // the JKR pair is bonded and apart at the split
    let pair = saved.state.history.iter().find(|c| c.between_particles()).expect("a bonded pair at the split");
    let p = &saved.state.particles.position;
    let gap = (p[1][0] - p[0][0]) - 0.02;
    assert!(gap > 0.0, "the pair is still pressed ({gap:e}) at the split: {pair:?}");
    resume(&part.join(CHECKPOINT_FILE), choice, total - split, &rest);
    for f in ["energy.csv", "walls.csv"] {
        assert!(read(&whole.join(f)) == read(&rest.join(f)), "{choice}: {f} differs between the whole run and the split one");
    }
    let (a, b) = (Checkpoint::read(&whole.join(CHECKPOINT_FILE)).unwrap(), Checkpoint::read(&rest.join(CHECKPOINT_FILE)).unwrap());
    assert!(a.state == b.state && a.exact == b.exact, "{choice}: final state differs");
}

#[test]
fn cpu_run_split_with_a_jkr_neck_held_apart_is_byte_identical() {
    split_run_keeps_its_bonds(BackendChoice::Cpu);
}

/// A bridge stretched beyond touch is carried by a checkpoint (`BONDED_APART`).
#[test]
fn cpu_checkpoint_carries_a_stretched_capillary_bridge() {
    let text = impact_scene(CAPILLARY, 0.05, 0.05, 2e-6);
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("bridge.json");
    std::fs::write(&scene, &text).unwrap();
    let (whole, part, rest) = (dir.path().join("whole"), dir.path().join("part"), dir.path().join("rest"));
    let (split, total) = (3_000u64, 6_000u64);
    run(&scene, BackendChoice::Cpu, total, &whole);
    run(&scene, BackendChoice::Cpu, split, &part);
    let saved = Checkpoint::read(&part.join(CHECKPOINT_FILE)).unwrap();
    assert!(saved.state.history.iter().any(|c| c.history.established == talus::contact::adhesion::BONDED_APART), "no stretched bridge at the split: {:?}", saved.state.history);
    resume(&part.join(CHECKPOINT_FILE), BackendChoice::Cpu, total - split, &rest);
    assert!(read(&whole.join("energy.csv")) == read(&rest.join("energy.csv")));
}

#[test]
fn bad_adhesion_input_names_file_key_and_value() {
    let base = impact_scene(JKR, 0.01, 0.01, 2e-6);
    let cases: [(&str, &str, &[&str]); 7] = [
        (r#""surface_energy": 0.5"#, r#""surface_energy": -0.5"#, &["surface_energy", "-0.5"]),
        (JKR, r#""model": "hertz", "adhesion": "jkr", "surface_energy": 0.5"#, &["adhesion jkr", "hertz_mindlin", "hertz"]),
        (JKR, r#""model": "hooke", "elasticStiffness": 1e3, "adhesion": "capillary", "liquid_volume": 1e-10, "contact_angle": 0.2"#, &["liquid_volume", "surface_tension"]),
        (JKR, r#""model": "hooke", "elasticStiffness": 1e3, "adhesion": "capillary", "liquid_volume": 1e-10, "surface_tension": 0.07, "contact_angle": 2.0"#, &["contact_angle", "2"]),
        (JKR, r#""model": "hertz_mindlin", "adhesion": "sjkr", "surface_energy": 0.5, "cohesion_energy_density": 1e4"#, &["surface_energy", "sjkr"]),
        (JKR, r#""model": "hertz_mindlin", "adhesion": "glue""#, &["adhesion", "glue", "jkr"]),
        (JKR, r#""model": "hertz_mindlin", "adhesion": "jkr", "surface_energy": 0.5, "limit_damping": true"#, &["limit_damping", "jkr"]),
    ];
    for (from, to, words) in cases {
        let text = base.replace(from, to);
        assert_ne!(text, base);
        let err = talus::scene::parse_str(&text, Path::new("sticky.json")).err().unwrap_or_else(|| panic!("accepted: {to}")).to_string();
        assert!(err.contains("sticky.json"), "{err}");
        for w in words {
            assert!(err.contains(w), "error for {to} does not name {w}: {err}");
        }
    }
}

/// A dry scene writes no adhesion column and the same `summary.json` keys as before.
#[test]
fn dry_runs_have_no_adhesion_columns() {
    let text = impact_scene(r#""model": "hertz_mindlin", "coefficientRestitution": 0.9"#, 0.05, 0.001, 2e-6);
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("dry.json");
    std::fs::write(&scene, &text).unwrap();
    run(&scene, BackendChoice::Cpu, 200, &dir.path().join("o"));
    let csv = std::fs::read_to_string(dir.path().join("o/energy.csv")).unwrap();
    assert!(!csv.contains("surface") && !csv.contains("bond_break"), "{}", csv.lines().next().unwrap());
    let summary = std::fs::read_to_string(dir.path().join("o/summary.json")).unwrap();
    assert!(!summary.contains("bond_break"));
    let wet = impact_scene(CAPILLARY, 0.05, 0.001, 2e-6);
    std::fs::write(&scene, &wet).unwrap();
    run(&scene, BackendChoice::Cpu, 200, &dir.path().join("w"));
    let csv = std::fs::read_to_string(dir.path().join("w/energy.csv")).unwrap();
    assert!(csv.lines().next().unwrap().contains(",surface,") && csv.contains("bond_break"));
}

fn run(scene: &Path, choice: BackendChoice, steps: u64, out: &Path) {
    let record = SceneRecord::read(scene).unwrap();
    let setup = talus::scene::parse_str(&record.text, scene).unwrap();
    let checkpoint = Some(CheckpointOptions::for_scene(record, &setup, None).unwrap());
    let (mut backend, _) = open_backend(&setup, choice).unwrap();
    run_scene(&setup, backend.as_mut(), out, RunOptions { steps: Some(steps), checkpoint, ..Default::default() }).unwrap();
}

fn resume(file: &Path, choice: BackendChoice, steps: u64, out: &Path) {
    let c = Checkpoint::read(file).unwrap();
    let setup = talus::resume::setup_of(file, &c).unwrap();
    let (mut backend, _) = talus::resume::open_at(&setup, &c, choice).unwrap();
    let checkpoint = Some(CheckpointOptions { scene: c.meta.scene.clone(), inputs: c.meta.inputs.clone(), every: None });
    continue_run(&setup, backend.as_mut(), out, RunOptions { steps: Some(steps), checkpoint, ..Default::default() }, c.meta.run).unwrap();
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A settling box of `n` grains whose pairs are `adhesion` (the other keys from `set`), run
/// `batches` × 50 steps on the backend `open` makes: skin 0 (a list built every step) and the
/// default skin give the same bits, energies of the bonds included, so the lists keep every
/// bonded pair apart within the tensile range; bonds did hold.
fn assert_adhesive_skin_independent(name: &str, n: usize, batches: usize, open: &dyn Fn(&talus::setup::Setup) -> Box<dyn Backend>, set: impl Fn(&mut talus::contact::params::PairParams)) {
    let mut setup = common::lowered_settling_box(n);
    for p in &mut setup.pairs.entries {
        set(p);
    }
    assert!(setup.has_adhesion());
    setup.skin = Some(0.0);
    let mut every_step = open(&setup);
    setup.skin = None;
    let mut skinned = open(&setup);
    let print = |b: &mut Box<dyn Backend>| {
        let e = b.energies().unwrap();
        let mut f = common::fingerprint(b.as_mut());
        f.extend([e.surface.to_bits(), e.bond_break.to_bits()]);
        f
    };
    for batch in 0..batches {
        every_step.step(50).unwrap();
        skinned.step(50).unwrap();
        assert!(print(&mut every_step) == print(&mut skinned), "{name} on {}: skin 0 and the default skin differ after {} steps", skinned.kind(), (batch + 1) * 50);
    }
    let e = skinned.energies().unwrap();
    assert!(e.surface != 0.0, "{name}: no bond held: {e:?}");
}

fn cpu(setup: &talus::setup::Setup) -> Box<dyn Backend> {
    Box::new(talus::cpu::CpuBackend::new(setup).unwrap())
}

fn gpu(setup: &talus::setup::Setup) -> Box<dyn Backend> {
    Box::new(talus::gpu::GpuBackend::new(setup, talus::gpu::GpuOptions::default()).unwrap())
}

fn capillary(p: &mut talus::contact::params::PairParams) {
    (p.adhesion, p.liquid_volume, p.surface_tension, p.contact_angle) = (talus::contact::params::Adhesion::Capillary, 1e-12, 0.072, 0.3);
}

fn jkr(p: &mut talus::contact::params::PairParams) {
    (p.adhesion, p.surface_energy) = (talus::contact::params::Adhesion::Jkr, 0.05);
}

#[test]
fn adhesive_settling_boxes_are_bit_identical_with_and_without_skin() {
    assert_adhesive_skin_independent("capillary", 1500, 6, &cpu, capillary);
    assert_adhesive_skin_independent("jkr", 1500, 6, &cpu, jkr);
}

#[test]
fn gpu_adhesive_settling_boxes_are_bit_identical_with_and_without_skin() {
    assert_adhesive_skin_independent("capillary", 600, 3, &gpu, capillary);
    assert_adhesive_skin_independent("jkr", 600, 3, &gpu, jkr);
}
