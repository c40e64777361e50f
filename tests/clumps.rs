//! Rigid clumps on the CPU backend (issue 32): bodies built by hand on a sphere set-up (the
//! components are its particles), stepped through the body path of `src/cpu/rigid.rs`.

mod common;

use common::*;
use rand::{Rng, SeedableRng};
use talus::contact::params::PairParams;
use talus::model::body::{angular_momentum, Bodies};
use talus::setup::{Particles, Setup};
use talus::Backend;

/// A dumbbell of two spheres of radius `r` whose centres are `2a` apart along its body x axis.
/// Mass and principal moments of the two spheres (their overlap, if any, counted twice: the
/// checks below need a consistent body, not the union's exact figures).
fn dumbbell(density: f64, r: f64, a: f64) -> (f64, [f64; 3]) {
    let m1 = density * 4.0 / 3.0 * std::f64::consts::PI * r.powi(3);
    let i_own = 0.4 * m1 * r * r;
    (2.0 * m1, [2.0 * i_own, 2.0 * (i_own + m1 * a * a), 2.0 * (i_own + m1 * a * a)])
}

/// Dumbbells at `centres` with orientations `q`, velocities `v` and spins `w` (space frame).
fn dumbbells(centres: &[[f64; 3]], q: &[[f64; 4]], v: &[[f64; 3]], w: &[[f64; 3]], r: f64, a: f64, density: f64) -> (Particles, Bodies) {
    let (mass, moments) = dumbbell(density, r, a);
    let mut p = Particles::default();
    let mut b = Bodies::default();
    for k in 0..centres.len() {
        let offsets = [[-a, 0.0, 0.0], [a, 0.0, 0.0]];
        let l = angular_momentum(q[k], moments, w[k]);
        b.push(centres[k], q[k], v[k], l, mass, moments, 0, p.len() as u32, &offsets);
        for o in offsets {
            let arm = talus::model::body::rotate(q[k], o);
            p.push(std::array::from_fn(|i| centres[k][i] + arm[i]), v[k], w[k], r, 0);
        }
    }
    (p, b)
}

fn random_unit_quaternion(rng: &mut rand_pcg::Pcg64) -> [f64; 4] {
    loop {
        let q: [f64; 4] = std::array::from_fn(|_| rng.random_range(-1.0..1.0));
        let n = q.iter().map(|c| c * c).sum::<f64>().sqrt();
        if n > 0.1 && n < 1.0 {
            return q.map(|c| c / n);
        }
    }
}

/// 27 dumbbells in a closed box, elastic and frictionless, random velocities and spins.
fn dumbbell_box(seed: u64) -> Setup {
    let (r, a, h) = (0.008, 0.006, 0.06);
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
    let (mut c, mut q, mut v, mut w) = (vec![], vec![], vec![], vec![]);
    for ix in 0..3 {
        for iy in 0..3 {
            for iz in 0..3 {
                c.push([-0.036 + ix as f64 * 0.036, -0.036 + iy as f64 * 0.036, -0.036 + iz as f64 * 0.036]);
                q.push(random_unit_quaternion(&mut rng));
                v.push(std::array::from_fn(|_| rng.random_range(-4.0..4.0)));
                w.push(std::array::from_fn(|_| rng.random_range(-50.0..50.0)));
            }
        }
    }
    let (particles, bodies) = dumbbells(&c, &q, &v, &w, r, a, 2500.0);
    let mut setup = setup_with(material("glass", 2500.0, 1e8, 0.25, 0.0), PairParams::default(), particles, box_walls(h), [0.0, 0.0, -9.81], 2e-6, cube(h));
    setup.bodies = bodies;
    setup
}

#[test]
fn elastic_dumbbells_conserve_energy_on_the_cpu() {
    let setup = dumbbell_box(5);
    let mut cpu = talus::cpu::CpuBackend::new(&setup).unwrap();
    let e0 = cpu.energies().unwrap();
    assert!(e0.kinetic_rotational > 0.0);
    let (mut drift, mut strain, mut touched): (f64, f64, u64) = (0.0, 0.0, 0);
    for _ in 0..200 {
        cpu.step(100).unwrap();
        let e = cpu.energies().unwrap();
        drift = drift.max(((e.total() - e0.total()) / e0.total()).abs());
        strain = strain.max(e.strain);
        touched += cpu.contact_count().unwrap();
    }
    println!("dumbbell box: max relative drift of total energy over 20000 steps: {drift:.3e} (largest strain {strain:.3e} J, {touched} contacts seen at outputs)");
    assert!(touched > 10 && strain > 1e-4 * e0.total(), "the dumbbells must collide: {touched} contacts, strain {strain:e}");
    assert!(drift < 1e-4, "energy drift {drift:.3e}");
}

#[test]
fn free_fall_does_not_spin_and_falls_at_g() {
    let h = 0.5f64.sqrt();
    let (p, b) = dumbbells(&[[0.0, 0.0, 0.0]], &[[h, 0.0, h, 0.0]], &[[0.1, 0.0, 0.0]], &[[0.0; 3]], 0.01, 0.008, 2500.0);
    let mut setup = setup_with(material("glass", 2500.0, 1e8, 0.25, 0.3), PairParams::default(), p, vec![], [0.0, 0.0, -9.81], 1e-5, cube(1.0));
    setup.bodies = b;
    let mut cpu = talus::cpu::CpuBackend::new(&setup).unwrap();
    cpu.step(1000).unwrap();
    let s = cpu.export_state().unwrap();
    let t = 1000.0 * 1e-5;
    let x = s.bodies.position[0];
    assert!((x[0] - 0.1 * t).abs() < 1e-15, "x = {}", x[0]);
    assert!((x[2] + 0.5 * 9.81 * t * t).abs() < 1e-12, "z = {} vs {}", x[2], -0.5 * 9.81 * t * t);
    assert_eq!(s.bodies.orientation[0], [h, 0.0, h, 0.0]);
    assert_eq!(s.bodies.angular_momentum[0], [0.0; 3]);
    // the components keep their distance and move with the body
    let (a, c) = (s.particles.position[0], s.particles.position[1]);
    let d: f64 = (0..3).map(|k| (a[k] - c[k]).powi(2)).sum::<f64>().sqrt();
    assert!((d - 0.016).abs() < 1e-15, "component distance {d}");
}

#[test]
fn torque_free_body_keeps_its_angular_momentum_exactly() {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(9);
    let q = random_unit_quaternion(&mut rng);
    let (p, b) = dumbbells(&[[0.0; 3]], &[q], &[[0.0; 3]], &[[3.0, 40.0, -7.0]], 0.01, 0.008, 2500.0);
    let mut setup = setup_with(material("glass", 2500.0, 1e8, 0.25, 0.3), PairParams::default(), p, vec![], [0.0; 3], 1e-4, cube(1.0));
    setup.bodies = b;
    let mut cpu = talus::cpu::CpuBackend::new(&setup).unwrap();
    let (l0, e0) = (cpu.export_state().unwrap().bodies.angular_momentum[0], cpu.energies().unwrap().kinetic_rotational);
    let mut worst: f64 = 0.0;
    for _ in 0..100 {
        cpu.step(100).unwrap();
        let s = cpu.export_state().unwrap();
        assert_eq!(s.bodies.angular_momentum[0], l0, "L changed without torque");
        let q = s.bodies.orientation[0];
        assert!((q.iter().map(|c| c * c).sum::<f64>() - 1.0).abs() < 1e-14);
        worst = worst.max((cpu.energies().unwrap().kinetic_rotational / e0 - 1.0).abs());
    }
    println!("torque-free dumbbell: worst relative rotational energy error over 10000 steps {worst:.3e}");
    assert!(worst < 1e-6, "rotational energy error {worst:.3e}");
}

/// Capsule tablets (four overlapping spheres in a line) poured into a box: a clump scene
/// through the scene parser, the generators and the run loop.
const TABLETS: &str = r#"{
  "gravity": [0, 0, -9.81],
  "time_step": "auto",
  "time_step_fraction": 0.2,
  "steps": 400,
  "output": { "every_steps": 50 },
  "snapshot_every": 2,
  "materials": { "tablet": { "density": 1300, "youngsModulus": 1e7, "poissonsRatio": 0.3, "fric": 0.4 } },
  "contacts": { "default": { "model": "hertz_mindlin", "coefficientRestitution": 0.4 } },
  "clump_templates": [
    { "name": "capsule", "material": "tablet", "spheres": [[-0.003, 0, 0, 0.002], [-0.001, 0, 0, 0.002], [0.001, 0, 0, 0.002], [0.003, 0, 0, 0.002]] }
  ],
  "generators": [
    { "type": "random_fill", "clump": "capsule", "box": { "min": [0, 0, 0.0], "max": [0.04, 0.04, 0.04] }, "count": 60, "velocity": [0, 0, -0.8], "seed": 3 }
  ],
  "walls": [ { "type": "box", "name": "bin", "min": [0, 0, 0], "max": [0.04, 0.04, 0.06], "material": "tablet", "open": ["+z"] } ]
}"#;

mod run {
    use std::path::Path;
    use talus::checkpoint::{Checkpoint, SceneRecord, CHECKPOINT_FILE};
    use talus::output::Summary;
    use talus::run::{continue_run, open_backend, run_scene, BackendChoice, CheckpointOptions, RunOptions};

    pub fn run(scene: &Path, steps: u64, out: &Path) -> Summary {
        let record = SceneRecord::read(scene).unwrap();
        let setup = talus::scene::parse_str(&record.text, scene).unwrap();
        let checkpoint = Some(CheckpointOptions::for_scene(record, &setup, None).unwrap());
        let (mut backend, _) = open_backend(&setup, BackendChoice::Cpu).unwrap();
        run_scene(&setup, backend.as_mut(), out, RunOptions { steps: Some(steps), checkpoint, ..Default::default() }).unwrap()
    }

    pub fn resume(dir: &Path, steps: u64, out: &Path) -> Summary {
        let file = dir.join(CHECKPOINT_FILE);
        let c = Checkpoint::read(&file).unwrap();
        let setup = talus::resume::setup_of(&file, &c).unwrap();
        let (mut backend, _) = talus::resume::open_at(&setup, &c, BackendChoice::Cpu).unwrap();
        let checkpoint = Some(CheckpointOptions { scene: c.meta.scene.clone(), inputs: c.meta.inputs.clone(), every: None });
        continue_run(&setup, backend.as_mut(), out, RunOptions { steps: Some(steps), checkpoint, ..Default::default() }, c.meta.run).unwrap()
    }
}

#[test]
fn tablets_place_by_their_shapes_and_resume_byte_identically_on_the_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("tablets.json");
    std::fs::write(&scene, TABLETS).unwrap();
    let setup = talus::scene::load(&scene).unwrap();
    // 60 bodies of 4 components, each body's components where its template puts them
    assert_eq!((setup.bodies.len(), setup.particles.len()), (60, 240));
    setup.bodies.check(240).unwrap();
    let t = &setup.clump_templates[0];
    for b in 0..60 {
        for (k, c) in t.spheres.iter().enumerate() {
            let i = setup.bodies.first[b] as usize + k;
            let arm = talus::model::body::rotate(setup.bodies.orientation[b], c.offset);
            let x = setup.particles.position[i];
            assert!((0..3).all(|a| (x[a] - setup.bodies.position[b][a] - arm[a]).abs() < 1e-15));
        }
    }
    // no two components of different bodies overlap; the components of one body do
    let p = &setup.particles;
    for i in 0..p.len() {
        for j in i + 1..p.len() {
            let d = (0..3).map(|a| (p.position[i][a] - p.position[j][a]).powi(2)).sum::<f64>().sqrt();
            if setup.bodies.body_of[i] != setup.bodies.body_of[j] {
                assert!(d >= p.radius[i] + p.radius[j], "components {i} and {j} of different bodies overlap");
            }
        }
    }
    let (whole, part, rest) = (dir.path().join("whole"), dir.path().join("part"), dir.path().join("rest"));
    let s = run::run(&scene, 400, &whole);
    assert!(s.contacts > 0, "the tablets must touch");
    run::run(&scene, 200, &part);
    run::resume(&part, 200, &rest);
    for f in ["energy.csv", "snapshots/particles_0000000400.vtu", "snapshots/bodies_0000000400.csv"] {
        let (a, b) = (std::fs::read(whole.join(f)).unwrap(), std::fs::read(rest.join(f)).unwrap());
        assert!(a == b, "{f} differs between the whole run and the split one");
    }
    let (a, b) = (talus::checkpoint::Checkpoint::read(&whole.join("checkpoint.talus")).unwrap(), talus::checkpoint::Checkpoint::read(&rest.join("checkpoint.talus")).unwrap());
    assert_eq!(a.state.bodies.len(), 60);
    assert!(a.state == b.state && a.exact == b.exact, "final state differs");
    // the VTU carries each component's body
    let vtu = std::fs::read_to_string(whole.join("snapshots/particles_0000000400.vtu")).unwrap();
    assert!(vtu.contains("Name=\"body_id\""));
    let bodies = std::fs::read_to_string(whole.join("snapshots/bodies_0000000400.csv")).unwrap();
    assert_eq!(bodies.lines().count(), 61);
    assert!(bodies.lines().nth(1).unwrap().starts_with("0,capsule,"));
}

#[test]
fn clump_scenes_are_refused_by_the_gpu_until_its_passes_exist() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("tablets.json");
    std::fs::write(&scene, TABLETS).unwrap();
    let setup = talus::scene::load(&scene).unwrap();
    let e = talus::gpu::GpuBackend::new(&setup, talus::gpu::GpuOptions::default()).err().expect("refused");
    assert!(e.to_string().contains("CPU backend only"), "{e}");
}

#[test]
fn dumbbells_cross_periodic_boundaries_and_conserve_energy_on_the_cpu() {
    let mut setup = dumbbell_box(11);
    // open the box on x and y: the bodies cross those faces, their components one by one
    setup.walls.retain(|w| w.normal[2] != 0.0);
    setup.periodic = [true, true, false];
    setup.gravity = [0.0; 3];
    let mut cpu = talus::cpu::CpuBackend::new(&setup).unwrap();
    let e0 = cpu.energies().unwrap().total();
    let (mut drift, mut crossed): (f64, bool) = (0.0, false);
    for _ in 0..100 {
        cpu.step(200).unwrap();
        drift = drift.max((cpu.energies().unwrap().total() / e0 - 1.0).abs());
        let s = cpu.export_state().unwrap();
        crossed |= s.bodies.image.iter().any(|k| k[0] != 0 || k[1] != 0);
        // every component stays where its body puts it, across the boundary too
        for b in 0..s.bodies.len() {
            for u in s.bodies.first[b] as usize..(s.bodies.first[b] + s.bodies.count[b]) as usize {
                let arm = talus::model::body::rotate(s.bodies.orientation[b], s.bodies.offset[u]);
                for a in 0..3 {
                    let period = setup.domain.max[a] - setup.domain.min[a];
                    let ub = s.bodies.position[b][a] + s.bodies.image[b][a] as f64 * period;
                    let uc = s.particles.position[u][a] + s.image[u][a] as f64 * period;
                    assert!((ub + arm[a] - uc).abs() < 1e-12, "component {u} of body {b} is off its body on axis {a}");
                }
            }
        }
    }
    println!("periodic dumbbells: max relative energy drift {drift:.3e} over 20000 steps");
    assert!(crossed, "no body crossed a periodic face");
    assert!(drift < 1e-4, "energy drift {drift:.3e}");
}
