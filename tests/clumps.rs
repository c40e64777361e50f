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
    println!("torque-free dumbbell: worst relative rotational energy error over 2000 steps {worst:.3e}");
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
        run_on(BackendChoice::Cpu, scene, steps, out)
    }

    pub fn run_on(choice: BackendChoice, scene: &Path, steps: u64, out: &Path) -> Summary {
        let record = SceneRecord::read(scene).unwrap();
        let setup = talus::scene::parse_str(&record.text, scene).unwrap();
        let checkpoint = Some(CheckpointOptions::for_scene(record, &setup, None).unwrap());
        let (mut backend, _) = open_backend(&setup, choice).unwrap();
        run_scene(&setup, backend.as_mut(), out, RunOptions { steps: Some(steps), checkpoint, ..Default::default() }).unwrap()
    }

    pub fn resume(dir: &Path, steps: u64, out: &Path) -> Summary {
        resume_on(BackendChoice::Cpu, dir, steps, out)
    }

    pub fn resume_on(choice: BackendChoice, dir: &Path, steps: u64, out: &Path) -> Summary {
        let file = dir.join(CHECKPOINT_FILE);
        let c = Checkpoint::read(&file).unwrap();
        let setup = talus::resume::setup_of(&file, &c).unwrap();
        let (mut backend, _) = talus::resume::open_at(&setup, &c, choice).unwrap();
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

// ---- insertion and outlets of clumps (src/flow/) ----

/// Capsule tablets (and a few plain spheres) inserted into a bin whose floor has a drain: an
/// outlet region over the floor's low-x strip takes every body whose centre of mass comes into
/// it, often while it still touches others.
const TABLET_FEED: &str = r#"{
  "gravity": [0, 0, -9.81],
  "time_step": "auto",
  "time_step_fraction": 0.2,
  "steps": 6000,
  "output": { "every_steps": 200 },
  "snapshot_every": 10,
  "materials": { "tablet": { "density": 1300, "youngsModulus": 1e7, "poissonsRatio": 0.3, "fric": 0.4 } },
  "contacts": { "default": { "model": "hertz_mindlin", "coefficientRestitution": 0.4 } },
  "clump_templates": [
    { "name": "capsule", "material": "tablet", "spheres": [[-0.003, 0, 0, 0.002], [-0.001, 0, 0, 0.002], [0.001, 0, 0, 0.002], [0.003, 0, 0, 0.002]] }
  ],
  "insert": [
    { "name": "tablets", "clump": "capsule", "scale": { "distribution": "uniform", "min": 0.9, "max": 1.1 },
      "region": { "type": "box", "min": [0.0, 0.0, 0.04], "max": [0.04, 0.04, 0.07] },
      "rate": 1500, "count": 70, "velocity": [0, 0, -0.5], "seed": 4 },
    { "name": "beads", "region": { "type": "box", "min": [0.0, 0.0, 0.04], "max": [0.04, 0.04, 0.07] },
      "rate": 500, "count": 20, "radius": 0.0022, "angular_velocity": [0, 30, 0], "velocity": [0, 0, -0.5], "seed": 9 }
  ],
  "outlets": [ { "name": "drain", "region": { "type": "box", "min": [-0.01, -0.01, -0.01], "max": [0.014, 0.05, 0.0035] } } ],
  "walls": [ { "type": "box", "name": "bin", "min": [0, 0, 0], "max": [0.04, 0.04, 0.08], "material": "tablet", "open": ["+z"] } ]
}"#;

/// max |total − total(0)| / max(kinetic + strain) over the rows of `energy.csv`
/// (tests/energy_closure.rs).
fn closure(csv: &std::path::Path) -> f64 {
    let text = std::fs::read_to_string(csv).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (kinetic, strain, total) = (col("kinetic"), col("strain"), col("total"));
    let rows: Vec<Vec<f64>> = lines.map(|l| l.split(',').map(|v| v.parse::<f64>().unwrap()).collect()).collect();
    let t0 = rows[0][total];
    let peak = rows.iter().map(|r| r[kinetic] + r[strain]).fold(0.0, f64::max);
    let drift = rows.iter().map(|r| (r[total] - t0).abs()).fold(0.0, f64::max);
    assert!(peak > 0.0);
    drift / peak
}

/// The last row of a CSV as numbers, by column name.
fn last_row(csv: &std::path::Path) -> std::collections::HashMap<String, f64> {
    let text = std::fs::read_to_string(csv).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let last: Vec<f64> = text.lines().last().unwrap().split(',').map(|v| v.parse().unwrap()).collect();
    header.iter().map(|h| h.to_string()).zip(last).collect()
}

#[test]
fn inserted_clumps_drain_through_an_outlet_closing_energy_and_resuming_byte_identically() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("feed.json");
    std::fs::write(&scene, TABLET_FEED).unwrap();
    let setup = talus::scene::load(&scene).unwrap();
    assert!(setup.has_bodies() && setup.bodies.is_empty() && setup.particles.is_empty());
    let (whole, part, rest) = (dir.path().join("whole"), dir.path().join("part"), dir.path().join("rest"));
    let s = run::run(&scene, 6000, &whole);
    assert!(s.contacts > 0, "the tablets must touch");
    let c = closure(&whole.join("energy.csv"));
    let flow = last_row(&whole.join("outflow.csv"));
    let e = last_row(&whole.join("energy.csv"));
    println!("tablet feed: closure {c:.3e}; {} tablets and {} beads in, {} bodies drained ({:.4e} kg), {} held; inserted {:.4e} J, removed {:.4e} J", flow["tablets_count"], flow["beads_count"], flow["drain_count"], flow["drain_mass"], flow["held_count"], e["inserted"], e["removed"]);
    assert_eq!((flow["tablets_count"], flow["beads_count"]), (70.0, 20.0), "both insertions must finish");
    assert!(flow["drain_count"] >= 10.0, "the drain must take bodies ({})", flow["drain_count"]);
    assert!(c < 1e-3, "energy closure {c:.3e}");

    // the held table: bodies counted once with their masses; in − out = held
    let ck = talus::checkpoint::Checkpoint::read(&whole.join("checkpoint.talus")).unwrap();
    let b = &ck.state.bodies;
    b.check(ck.state.particles.len()).unwrap();
    assert_eq!(flow["held_count"], b.len() as f64);
    assert_eq!(flow["tablets_count"] + flow["beads_count"] - flow["drain_count"], flow["held_count"]);
    let held: f64 = b.mass.iter().sum();
    assert!((flow["held_mass"] - held).abs() <= 1e-6 * held, "held mass {} vs bodies {held}", flow["held_mass"]);
    let balance = flow["tablets_mass"] + flow["beads_mass"] - flow["drain_mass"] - flow["held_mass"];
    assert!(balance.abs() <= 1e-6 * held, "in - out - held = {balance:e} kg");
    assert!(b.template.contains(&0) && b.template.contains(&talus::model::body::NO_BODY));

    // the split run through a checkpoint is byte-identical
    run::run(&scene, 3000, &part);
    run::resume(&part, 3000, &rest);
    for f in ["energy.csv", "outflow.csv", "snapshots/particles_0000006000.vtu", "snapshots/bodies_0000006000.csv"] {
        let (a, b) = (std::fs::read(whole.join(f)).unwrap(), std::fs::read(rest.join(f)).unwrap());
        assert!(a == b, "{f} differs between the whole run and the split one");
    }
    let r = talus::checkpoint::Checkpoint::read(&rest.join("checkpoint.talus")).unwrap();
    assert!(ck.state == r.state && ck.exact == r.exact, "final state differs");
}

/// The first exchange of the tablet feed, by hand: every inserted body is its scaled
/// template, where nothing overlaps, counted once with its body mass and booked with its
/// energy as the backend sums it.
#[test]
fn clump_insertion_books_body_mass_and_energy() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("feed.json");
    std::fs::write(&scene, TABLET_FEED).unwrap();
    let setup = talus::scene::load(&scene).unwrap();
    let mut cpu = talus::cpu::CpuBackend::new(&setup).unwrap();
    let mut flow = talus::flow::FlowDriver::new(&setup).unwrap().unwrap();
    cpu.step(400).unwrap();
    let before = cpu.energies().unwrap();
    flow.exchange(&setup, &mut cpu).unwrap();
    let after = cpu.energies().unwrap();
    let s = cpu.export_state().unwrap();
    let t = flow.totals().clone();
    let b = &s.bodies;
    b.check(s.len()).unwrap();
    let tablets = (0..b.len()).filter(|&k| b.template[k] == 0).count();
    assert_eq!((tablets as u64, (b.len() - tablets) as u64), (t.inserted_count[0], t.inserted_count[1]));
    assert!(tablets >= 10, "{tablets} tablets");
    assert_eq!((t.held_count, t.held_mass), (b.len() as u64, b.mass.iter().fold(0.0, |a, m| a + m)));
    let tpl = &setup.clump_templates[0];
    let mut tablet_mass = 0.0;
    for k in 0..b.len() {
        let (first, n) = (b.first[k] as usize, b.count[k] as usize);
        if b.template[k] == talus::model::body::NO_BODY {
            // a bead: a one-component body with 2/5 m r², spinning as inserted
            let r = s.particles.radius[first];
            let m = setup.mass_of(0, r);
            assert_eq!((n, b.mass[k], b.moments[k]), (1, m, [0.4 * m * r * r; 3]));
            let w = talus::model::body::omega(b.orientation[k], b.moments[k], b.angular_momentum[k]);
            assert!((w[0].abs() + (w[1] - 30.0).abs() + w[2].abs()) < 1e-12, "bead spin {w:?}");
            continue;
        }
        // a scaled capsule: components where the template puts them, mass × s³, moments × s⁵
        assert_eq!(n, 4);
        let scale = s.particles.radius[first] / 0.002;
        assert!((0.9 - 1e-12..=1.1 + 1e-12).contains(&scale), "scale {scale}");
        assert!((b.mass[k] / (tpl.mass * scale.powi(3)) - 1.0).abs() < 1e-12);
        for a in 0..3 {
            assert!((b.moments[k][a] / (tpl.principal_moments[a] * scale.powi(5)) - 1.0).abs() < 1e-12);
        }
        assert_eq!((b.velocity[k], b.angular_momentum[k]), ([0.0, 0.0, -0.5], [0.0; 3]));
        for (c, sph) in tpl.spheres.iter().enumerate() {
            let i = first + c;
            let arm = talus::model::body::rotate(b.orientation[k], sph.offset.map(|o| o * scale));
            let x = s.particles.position[i];
            assert!((0..3).all(|a| (x[a] - b.position[k][a] - arm[a]).abs() < 1e-14));
            assert!((s.particles.radius[i] - sph.radius * scale).abs() < 1e-15);
            assert_eq!(s.particles.velocity[i], [0.0, 0.0, -0.5]);
        }
        tablet_mass += b.mass[k];
    }
    assert!((t.inserted_mass[0] - tablet_mass).abs() <= 1e-14 * tablet_mass, "inserted {} vs bodies {tablet_mass}", t.inserted_mass[0]);
    // a clump's sphere masses overcount it (its spheres overlap)
    let spheres: f64 = (0..s.len()).filter(|&i| b.template[b.body_of[i] as usize] == 0).map(|i| setup.mass_of(0, s.particles.radius[i])).sum();
    assert!(spheres > 1.1 * tablet_mass, "sphere masses {spheres} vs bodies {tablet_mass}");
    // nothing overlaps across bodies or with the walls
    let p = &s.particles;
    for i in 0..p.len() {
        for j in i + 1..p.len() {
            let d = (0..3).map(|a| (p.position[i][a] - p.position[j][a]).powi(2)).sum::<f64>().sqrt();
            if b.body_of[i] != b.body_of[j] {
                assert!(d >= p.radius[i] + p.radius[j], "components {i} and {j} of different bodies overlap");
            }
        }
        for w in &setup.walls {
            let gap: f64 = (0..3).map(|a| (p.position[i][a] - w.point[a]) * w.normal[a]).sum::<f64>() - p.radius[i];
            assert!(gap >= 0.0);
        }
    }
    // the energy brought is the new bodies' kinetic + gravitational energy, as the backend
    // sums it, and the balance is unchanged across the exchange
    let g = glam::DVec3::from(setup.gravity);
    let brought: f64 = (0..b.len()).map(|k| talus::flow::driver::body_energy(b, k, g, setup.period())).sum();
    assert!((after.inserted - before.inserted - brought).abs() <= 1e-12 * brought.abs(), "{} vs {brought}", after.inserted - before.inserted);
    assert!((after.mechanical() - before.mechanical() - brought).abs() <= 1e-12 * brought.abs());
    assert!((after.total() - before.total()).abs() <= 1e-12 * brought.abs());
}

/// An outlet takes a body by its centre of mass, whole: a dumbbell whose centre is in the
/// outlet goes (its spin's energy with it), one with only a component in it stays.
#[test]
fn outlets_take_whole_bodies_by_their_centres() {
    let h = 0.5f64.sqrt();
    let (r, a) = (0.004, 0.005);
    // body 0: centre at x = 0.1, one component across the outlet plane x = 0.098 → stays;
    // body 1: centre at x = 0.095 (in), spinning; body 2 far away
    let centres = [[0.1, 0.0, 0.0], [0.095, 0.1, 0.0], [0.3, 0.0, 0.0]];
    let q = [[1.0, 0.0, 0.0, 0.0], [h, 0.0, 0.0, h], [h, h, 0.0, 0.0]];
    let (p, b) = dumbbells(&centres, &q, &[[0.3, 0.0, 0.1], [0.2, -0.1, 0.4], [0.0; 3]], &[[0.0; 3], [50.0, -200.0, 90.0], [1.0, 2.0, 3.0]], r, a, 2500.0);
    let mut setup = setup_with(material("glass", 2500.0, 1e8, 0.25, 0.3), PairParams::default(), p, vec![], [0.0, -3.0, -9.81], 1e-5, cube(1.0));
    setup.bodies = b;
    setup.outlets.push(talus::model::flow::Outlet { name: "x".into(), shape: talus::model::flow::OutletShape::Plane { point: glam::DVec3::new(0.098, 0.0, 0.0), normal: glam::DVec3::X } });
    let mut cpu = talus::cpu::CpuBackend::new(&setup).unwrap();
    let s0 = cpu.export_state().unwrap();
    // a component of body 0 is behind the plane, its centre is not
    assert!(s0.particles.position[0][0] < 0.098 && s0.bodies.position[0][0] > 0.098);
    let sel = talus::flow::outlet::select(&setup.outlets, &s0, &setup);
    assert_eq!(sel.keep, vec![true, true, false, false, true, true]);
    assert_eq!((sel.count[0], sel.mass[0]), (1, s0.bodies.mass[1]));

    let mut flow = talus::flow::FlowDriver::new(&setup).unwrap().unwrap();
    let before = cpu.energies().unwrap();
    let g = glam::DVec3::from(setup.gravity);
    let gone = talus::flow::driver::body_energy(&s0.bodies, 1, g, setup.period());
    let (t1, r1) = s0.bodies.kinetic(1);
    assert!(r1 > 0.1 * t1, "the removed body spins");
    flow.exchange(&setup, &mut cpu).unwrap();
    let after = cpu.energies().unwrap();
    let t = flow.totals();
    assert_eq!((t.outlet_count[0], t.outlet_mass[0], t.held_count), (1, s0.bodies.mass[1], 2));
    assert_eq!(t.held_mass, s0.bodies.mass[0] + s0.bodies.mass[2]);
    assert!((after.removed - before.removed - gone).abs() <= 1e-12 * gone.abs().max(t1 + r1), "removed {} vs body energy {gone}", after.removed - before.removed);
    assert!((after.total() - before.total()).abs() <= 1e-12 * before.total().abs().max(t1 + r1));
    let s = cpu.export_state().unwrap();
    s.bodies.check(s.len()).unwrap();
    assert_eq!(s.bodies.position, vec![s0.bodies.position[0], s0.bodies.position[2]]);
}

#[test]
fn bad_clump_insertions_are_refused_with_file_key_and_value() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (r#""clump": "capsule""#, r#""clump": "pill""#, "insert[0].clump", "no clump template named \"pill\""),
        (r#""scale": { "distribution": "uniform", "min": 0.9, "max": 1.1 }"#, r#""scale": -2"#, "insert[0].scale", "-2"),
        (r#""scale": { "distribution": "uniform", "min": 0.9, "max": 1.1 }"#, r#""scale": { "distribution": "uniform", "min": 1.2, "max": 1.1 }"#, "insert[0].scale.max", "1.1"),
        (r#""seed": 4 },"#, r#""seed": 4, "orientation": "sideways" },"#, "insert[0].orientation", "sideways"),
        (r#""seed": 4 },"#, r#""seed": 4, "radius": 0.002 },"#, "insert[0].radius", ""),
        (r#""scale": { "distribution": "uniform", "min": 0.9, "max": 1.1 }"#, r#""scale": 4"#, "insert[0].region", "too small"),
    ];
    for (from, to, key, value) in cases {
        assert!(TABLET_FEED.contains(from), "{from}");
        let path = dir.path().join("bad.json");
        std::fs::write(&path, TABLET_FEED.replacen(from, to, 1)).unwrap();
        let e = talus::scene::load(&path).err().unwrap_or_else(|| panic!("{to} accepted")).to_string();
        assert!(e.contains("bad.json") && e.contains(key) && e.contains(value), "{to}: {e}");
    }
}

// ---- the GPU backend (f32; `src/gpu/bodies.rs`) ----

fn gpu(setup: &Setup) -> talus::gpu::GpuBackend {
    talus::gpu::GpuBackend::new(setup, talus::gpu::GpuOptions::default()).unwrap_or_else(|e| panic!("GPU backend unavailable ({e}); GPU tests need a Vulkan driver (apt-get install mesa-vulkan-drivers)"))
}

/// `fingerprint` without the energies and wall loads (the contact count kept): what a run
/// stored in another order gives bit for bit (`gpu::order`: the f32 energy and wall-load sums
/// are grouped by storage index).
fn trajectory(b: &mut dyn Backend) -> Vec<u64> {
    let mut f = fingerprint(b);
    let walls = 6 * b.wall_loads().unwrap().len();
    let count = f.pop().unwrap();
    f.truncate(f.len() - 8 - walls);
    f.push(count);
    f
}

/// The energies of two runs stored in different orders: the same to 1e-6 of the mechanical
/// energies' scale.
fn energies_close(a: &mut dyn Backend, b: &mut dyn Backend, what: &str) {
    let (ea, eb) = (a.energies().unwrap(), b.energies().unwrap());
    let scale = ea.kinetic_translational + ea.kinetic_rotational + ea.gravitational.abs() + ea.strain;
    for (name, x, y) in [("kinetic", ea.kinetic_translational, eb.kinetic_translational), ("rotational", ea.kinetic_rotational, eb.kinetic_rotational), ("gravitational", ea.gravitational, eb.gravitational), ("strain", ea.strain, eb.strain), ("dashpot", ea.dashpot, eb.dashpot), ("slip", ea.slip, eb.slip)] {
        assert!((x - y).abs() <= 1e-6 * scale, "{what}: {name} {x} against {y}");
    }
}

#[test]
fn elastic_dumbbells_conserve_energy_on_the_gpu() {
    let setup = dumbbell_box(5);
    let mut g = gpu(&setup);
    let e0 = g.energies().unwrap();
    assert!(e0.kinetic_rotational > 0.0);
    let (mut drift, mut strain, mut touched): (f64, f64, u64) = (0.0, 0.0, 0);
    for _ in 0..100 {
        g.step(200).unwrap();
        let e = g.energies().unwrap();
        drift = drift.max(((e.total() - e0.total()) / e0.total()).abs());
        strain = strain.max(e.strain);
        touched += g.contact_count().unwrap();
    }
    println!("dumbbell box on the GPU: max relative drift of total energy over 20000 steps: {drift:.3e} (largest strain {strain:.3e} J, {touched} contacts seen at outputs)");
    assert!(touched > 10 && strain > 1e-4 * e0.total(), "the dumbbells must collide: {touched} contacts, strain {strain:e}");
    assert!(drift < 1e-3, "energy drift {drift:.3e}");
}

#[test]
fn free_fall_on_the_gpu_does_not_spin() {
    let h = 0.5f64.sqrt();
    let (p, b) = dumbbells(&[[0.0, 0.0, 0.0]], &[[h, 0.0, h, 0.0]], &[[0.1, 0.0, 0.0]], &[[0.0; 3]], 0.01, 0.008, 2500.0);
    let mut setup = setup_with(material("glass", 2500.0, 1e8, 0.25, 0.3), PairParams::default(), p, vec![], [0.0, 0.0, -9.81], 1e-5, cube(1.0));
    setup.bodies = b;
    let mut g = gpu(&setup);
    let s0 = g.export_state().unwrap();
    g.step(1).unwrap();
    // the first step normalises q in f32 (a change of an ulp at most); then it stays
    let s1 = g.export_state().unwrap();
    for c in 0..4 {
        assert!((s1.bodies.orientation[0][c] - s0.bodies.orientation[0][c]).abs() < 2e-7);
    }
    g.step(999).unwrap();
    let s = g.export_state().unwrap();
    let t = 1000.0 * 1e-5;
    let x = s.bodies.position[0];
    // f32 positions of a centre at the origin: the block offsets carry ~1e-9 m
    assert!((x[0] - 0.1 * t).abs() < 1e-7, "x = {}", x[0]);
    assert!((x[2] + 0.5 * 9.81 * t * t).abs() < 1e-7, "z = {} vs {}", x[2], -0.5 * 9.81 * t * t);
    assert_eq!(s.bodies.orientation[0], s1.bodies.orientation[0], "the orientation turned without spin");
    assert_eq!(s.bodies.angular_momentum[0], [0.0; 3]);
    for w in &s.particles.angular_velocity {
        assert_eq!(*w, [0.0; 3]);
    }
    // the components keep their distance (to f32 rounding) and move with the body
    let (a, c) = (s.particles.position[0], s.particles.position[1]);
    let d: f64 = (0..3).map(|k| (a[k] - c[k]).powi(2)).sum::<f64>().sqrt();
    assert!((d - 0.016).abs() < 1e-7, "component distance {d}");
    for v in &s.particles.velocity {
        // 2000 f32 half kicks of 5e-5 m/s: rounding of ~4e-9 m/s each
        assert!((v[0] - 0.1).abs() < 1e-6 && (v[2] + 9.81 * t).abs() < 1e-5, "component velocity {v:?}");
    }
}

#[test]
fn torque_free_body_on_the_gpu_keeps_its_angular_momentum() {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(9);
    let q = random_unit_quaternion(&mut rng);
    let (p, b) = dumbbells(&[[0.0; 3]], &[q], &[[0.0; 3]], &[[3.0, 40.0, -7.0]], 0.01, 0.008, 2500.0);
    let mut setup = setup_with(material("glass", 2500.0, 1e8, 0.25, 0.3), PairParams::default(), p, vec![], [0.0; 3], 1e-4, cube(1.0));
    setup.bodies = b;
    let mut g = gpu(&setup);
    let (l0, e0) = (g.export_state().unwrap().bodies.angular_momentum[0], g.energies().unwrap().kinetic_rotational);
    let (mut worst, mut worst_q): (f64, f64) = (0.0, 0.0);
    // 2,000 steps: the benchmark's GPU rows (`talus verify --benchmark clumps`, below) follow a
    // torque-free body over 20,000
    for _ in 0..20 {
        g.step(100).unwrap();
        let s = g.export_state().unwrap();
        // no torque: L += 0 leaves every bit
        assert_eq!(s.bodies.angular_momentum[0], l0, "L changed without torque");
        let q = s.bodies.orientation[0];
        worst_q = worst_q.max((q.iter().map(|c| c * c).sum::<f64>() - 1.0).abs());
        worst = worst.max((g.energies().unwrap().kinetic_rotational / e0 - 1.0).abs());
    }
    println!("torque-free dumbbell on the GPU: worst |q|² − 1 {worst_q:.3e}, worst relative rotational energy error over 2000 steps {worst:.3e}");
    assert!(worst_q < 1e-6, "|q|² − 1 = {worst_q:.3e}");
    // f32 rounding of q in five turns a step, a random walk: ~1e-5 after 10⁴ steps (the CPU's
    // f64 splitting error is 3e-7 here); the limit holds for the benchmark's 2·10⁴ as well
    assert!(worst < 1e-4, "rotational energy error {worst:.3e}");
}

/// Largest difference of the bodies' centres (m), velocities (m/s), angular momenta (relative
/// to the largest |L|) and orientations (quaternion components, sign-aligned).
fn body_differences(a: &Bodies, b: &Bodies) -> [f64; 4] {
    let mut d = [0.0f64; 4];
    let lmax = a.angular_momentum.iter().map(|l| l.iter().map(|c| c * c).sum::<f64>().sqrt()).fold(0.0, f64::max);
    for k in 0..a.len() {
        for x in 0..3 {
            d[0] = d[0].max((a.position[k][x] - b.position[k][x]).abs());
            d[1] = d[1].max((a.velocity[k][x] - b.velocity[k][x]).abs());
            d[2] = d[2].max((a.angular_momentum[k][x] - b.angular_momentum[k][x]).abs() / lmax);
        }
        let dot: f64 = (0..4).map(|c| a.orientation[k][c] * b.orientation[k][c]).sum();
        let s = dot.signum();
        for c in 0..4 {
            d[3] = d[3].max((a.orientation[k][c] - s * b.orientation[k][c]).abs());
        }
    }
    d
}

#[test]
fn cpu_and_gpu_agree_on_a_short_run() {
    let setup = dumbbell_box(5);
    let mut cpu = talus::cpu::CpuBackend::new(&setup).unwrap();
    let mut g = gpu(&setup);
    let mut seen = 0;
    for _ in 0..10 {
        cpu.step(200).unwrap();
        g.step(200).unwrap();
        seen += g.contact_count().unwrap();
    }
    let (a, b) = (cpu.export_state().unwrap().bodies, g.export_state().unwrap().bodies);
    let d = body_differences(&a, &b);
    let (ec, eg) = (cpu.energies().unwrap(), g.energies().unwrap());
    println!("CPU vs GPU after 2000 steps ({seen} contacts seen): centres {:.2e} m, velocities {:.2e} m/s, L {:.2e} (relative), q {:.2e}; total energy {:.6e} vs {:.6e} J", d[0], d[1], d[2], d[3], ec.total(), eg.total());
    assert!(seen > 0, "no collision in the compared run");
    assert!(d[0] < 1e-6 && d[1] < 1e-3 && d[2] < 1e-3 && d[3] < 1e-4, "CPU and GPU differ: {d:?}");
    assert!(((ec.total() - eg.total()) / ec.total()).abs() < 1e-4);
}

#[test]
fn gpu_runs_with_bodies_are_bit_identical_and_continue_from_an_export() {
    let setup = dumbbell_box(7);
    let run = |steps: u64| {
        let mut g = gpu(&setup);
        g.step(steps).unwrap();
        g
    };
    let (mut a, mut b) = (run(1500), run(1500));
    let (sa, sb) = (a.export_state().unwrap(), b.export_state().unwrap());
    assert_eq!(sa.bodies, sb.bodies, "two GPU runs differ");
    assert_eq!(sa.particles.position, sb.particles.position);
    // a fresh backend continues from a's state (state + exact device arrays, as a checkpoint)
    // and matches a run that never stopped
    let exact = a.export_exact().unwrap();
    let mut c = gpu(&setup);
    c.import_state(&sa).unwrap();
    c.import_exact(&exact).unwrap();
    assert_eq!(c.export_state().unwrap().bodies, sa.bodies, "the bodies do not round-trip");
    a.step(1500).unwrap();
    c.step(1500).unwrap();
    let (ea, ec) = (a.export_state().unwrap(), c.export_state().unwrap());
    assert_eq!(ea.bodies, ec.bodies, "the resumed run differs");
    assert_eq!(ea.particles.position, ec.particles.position);
    assert_eq!(ea.particles.velocity, ec.particles.velocity);
    assert_eq!(a.energies().unwrap(), c.energies().unwrap());
    // and from the state alone (forces refreshed on import, the exported totals kept)
    let mut d = gpu(&setup);
    d.import_state(&sb).unwrap();
    b.step(1500).unwrap();
    d.step(1500).unwrap();
    assert_eq!(b.export_state().unwrap().bodies, d.export_state().unwrap().bodies, "the run resumed from the state alone differs");
}

#[test]
fn gpu_bodies_do_not_depend_on_batches_or_list_growth() {
    // batches of 7 steps (the bodies' closing passes and first steps at other places) and a
    // list that starts at 64 slots (grown and redone on overflow) give the same bits
    let setup = dumbbell_box(11);
    let run = |opts: talus::gpu::GpuOptions| {
        let mut g = talus::gpu::GpuBackend::new(&setup, opts).unwrap();
        for _ in 0..4 {
            g.step(300).unwrap();
        }
        (g.export_state().unwrap(), g.energies().unwrap(), g.late_rebuilds(), g.list_capacity())
    };
    let a = run(Default::default());
    let b = run(talus::gpu::GpuOptions { steps_per_submit: 7, list_capacity: Some(1), ..Default::default() });
    println!("late rebuilds {} and {}, list capacity {} and {}", a.2, b.2, a.3, b.3);
    assert!(b.3 > 1, "the small list never overflowed");
    assert_eq!(a.0.bodies, b.0.bodies);
    assert_eq!(a.0.particles.position, b.0.particles.position);
    assert_eq!(a.0.particles.angular_velocity, b.0.particles.angular_velocity);
    assert_eq!(a.1, b.1);
}

#[test]
fn bodies_cross_a_periodic_boundary_alike_on_both_backends() {
    // dumbbells spinning and moving both ways along the periodic x axis (period 0.12 m), in
    // rows that do not touch, wrapping about once: centres, components and their images on CPU
    // and GPU
    let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
    let (mut c, mut q, mut v, mut w) = (vec![], vec![], vec![], vec![]);
    for iy in 0..3 {
        for iz in 0..2 {
            c.push([-0.05 + 0.03 * iy as f64, -0.03 + 0.036 * iy as f64, -0.02 + 0.04 * iz as f64]);
            q.push(random_unit_quaternion(&mut rng));
            v.push([if iz == 0 { 25.0 } else { -20.0 }, 0.0, 0.0]);
            w.push(std::array::from_fn(|_| rng.random_range(-300.0..300.0)));
        }
    }
    let (particles, bodies) = dumbbells(&c, &q, &v, &w, 0.008, 0.006, 2500.0);
    let mut setup = setup_with(material("glass", 2500.0, 1e8, 0.25, 0.0), PairParams::default(), particles, vec![], [0.0; 3], 2e-6, cube(0.06));
    setup.periodic = [true, false, false];
    setup.bodies = bodies;
    let mut cpu = talus::cpu::CpuBackend::new(&setup).unwrap();
    let mut g = gpu(&setup);
    for _ in 0..10 {
        cpu.step(500).unwrap();
        g.step(500).unwrap();
    }
    let (a, b) = (cpu.export_state().unwrap(), g.export_state().unwrap());
    assert!(a.bodies.image.iter().any(|k| k[0] >= 1) && a.bodies.image.iter().any(|k| k[0] <= -1), "the bodies did not wrap: {:?}", a.bodies.image);
    assert_eq!(a.bodies.image, b.bodies.image);
    assert_eq!(a.image, b.image, "component images");
    let d = body_differences(&a.bodies, &b.bodies);
    let dx = (0..a.len()).flat_map(|i| (0..3).map(move |k| (i, k))).map(|(i, k)| (a.particles.position[i][k] - b.particles.position[i][k]).abs()).fold(0.0, f64::max);
    println!("periodic dumbbells CPU vs GPU after 5000 steps: centres {:.2e} m, components {dx:.2e} m, velocities {:.2e} m/s, q {:.2e}", d[0], d[1], d[3]);
    assert!(d[0] < 1e-6 && dx < 1e-6 && d[1] < 1e-3 && d[3] < 1e-4, "{d:?}, components {dx:e}");
}

#[test]
fn gpu_bodies_with_arrays_split_across_bindings_give_the_same_bits() {
    // the smallest binding cap (2304 bytes) cuts `motion` of the 54 components in two (the
    // body passes' split accessors), as `tests/gpu_split.rs` does for spheres
    let setup = dumbbell_box(13);
    let run = |opts: talus::gpu::GpuOptions| {
        let mut g = talus::gpu::GpuBackend::new(&setup, opts).unwrap();
        g.step(800).unwrap();
        let note = g.split_layout().describe();
        (g.export_state().unwrap(), g.energies().unwrap(), note)
    };
    let a = run(Default::default());
    let b = run(talus::gpu::GpuOptions { max_binding_bytes: Some(2304), ..Default::default() });
    println!("split: {:?}", b.2);
    assert!(a.2.is_none() && b.2.is_some(), "the cap did not split any array");
    assert_eq!(a.0.bodies, b.0.bodies);
    assert_eq!(a.0.particles.velocity, b.0.particles.velocity);
    assert_eq!(a.1, b.1);
}

/// `talus verify --benchmark clumps` on each backend (two tests, so that the test threads share
/// them): every analytic check within its tolerance (docs/verification.md, "Benchmark against
/// theory: rigid clumps").
fn clumps_benchmark_passes_on(backend: &'static str) {
    let t = std::time::Instant::now();
    let report = talus::clump_bench::run_benchmark(&[backend], &talus::chung_ooi::open_backend).unwrap();
    print!("{}", report.table());
    println!("in {:.1} s", t.elapsed().as_secs_f64());
    assert!(report.rows.len() >= 15, "{} rows", report.rows.len());
    assert!(report.rows.iter().all(|r| r.backend == backend || r.backend == "host"), "rows of another backend");
    assert!(report.passed(), "{} rows beyond tolerance", report.failures().len());
    let dir = tempfile::tempdir().unwrap();
    let files = talus::clump_bench::write_outputs(&report, dir.path()).unwrap();
    assert!(files.iter().any(|f| f == "clumps_torque_free.png") && dir.path().join("clumps.csv").exists());
}

#[test]
fn clumps_benchmark_passes_on_the_cpu() {
    clumps_benchmark_passes_on("cpu");
}

#[test]
fn clumps_benchmark_passes_on_the_gpu() {
    clumps_benchmark_passes_on("gpu");
}

// ---- the shipped clump scenes ----

fn shipped(name: &str) -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes").join(name)
}

/// `scenes/tablet_pour.json` run 400 steps on the CPU, once for the two tests that need it
/// (the whole run of the resume test and the checkpoint that starts a scene): its energy.csv
/// and checkpoint.talus, written into `out`.
fn tablet_pour_400_steps_on_the_cpu(out: &std::path::Path) {
    static RUN: std::sync::OnceLock<(Vec<u8>, Vec<u8>)> = std::sync::OnceLock::new();
    let (energy, checkpoint) = RUN.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        run::run(&shipped("tablet_pour.json"), 400, dir.path());
        (std::fs::read(dir.path().join("energy.csv")).unwrap(), std::fs::read(dir.path().join("checkpoint.talus")).unwrap())
    });
    std::fs::create_dir_all(out).unwrap();
    std::fs::write(out.join("energy.csv"), energy).unwrap();
    std::fs::write(out.join("checkpoint.talus"), checkpoint).unwrap();
}

/// `scenes/tablet_pour.json` run 400 steps whole and 200 + 200 through a checkpoint file
/// (`talus resume`'s path; 200 steps is its output cadence) on `choice`: the outputs and the
/// final state are the same bytes.
fn tablet_pour_resumes_byte_identically(choice: talus::run::BackendChoice) {
    let dir = tempfile::tempdir().unwrap();
    let scene = shipped("tablet_pour.json");
    let (whole, part, rest) = (dir.path().join("whole"), dir.path().join("part"), dir.path().join("rest"));
    if choice == talus::run::BackendChoice::Cpu {
        tablet_pour_400_steps_on_the_cpu(&whole);
    } else {
        run::run_on(choice, &scene, 400, &whole);
    }
    run::run_on(choice, &scene, 200, &part);
    run::resume_on(choice, &part, 200, &rest);
    let read = |d: &std::path::Path, f: &str| std::fs::read(d.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
    assert!(read(&whole, "energy.csv") == read(&rest, "energy.csv"), "{choice}: energy.csv differs");
    let (a, b) = (talus::checkpoint::Checkpoint::read(&whole.join("checkpoint.talus")).unwrap(), talus::checkpoint::Checkpoint::read(&rest.join("checkpoint.talus")).unwrap());
    assert_eq!(a.state.bodies.len(), 400);
    assert!(a.state == b.state, "{choice}: the final state differs");
    assert!(a.exact == b.exact, "{choice}: the final exact state differs");
}

#[test]
fn shipped_tablet_pour_resumes_byte_identically_on_the_cpu() {
    tablet_pour_resumes_byte_identically(talus::run::BackendChoice::Cpu);
}

#[test]
fn shipped_tablet_pour_resumes_byte_identically_on_the_gpu() {
    tablet_pour_resumes_byte_identically(talus::run::BackendChoice::Gpu);
}

/// Skin 0 (a list built every step) and the default skin give the same bits with bodies, on
/// both backends: the tablets at a moment when they collide.
#[test]
fn clumps_are_bit_identical_with_and_without_skin() {
    let mut setup = talus::scene::load(&shipped("tablet_pour.json")).unwrap();
    // start where the tablets are landing: many contacts form and end within the run
    let mut pre = talus::cpu::CpuBackend::new(&setup).unwrap();
    pre.step(1600).unwrap();
    let st = pre.export_state().unwrap();
    setup.particles = st.particles.clone();
    setup.bodies = st.bodies.clone();
    let fingerprint = |b: &mut dyn Backend| {
        let s = b.export_state().unwrap();
        (s.bodies.position.clone(), s.bodies.orientation.clone(), s.bodies.velocity.clone(), s.bodies.angular_momentum.clone(), s.history.len(), b.energies().unwrap().total().to_bits())
    };
    for kind in ["cpu", "gpu"] {
        let mut runs = Vec::new();
        for skin in [Some(0.0), None] {
            setup.skin = skin;
            let mut b = talus::chung_ooi::open_backend(&setup, kind).unwrap();
            let mut prints = Vec::new();
            for _ in 0..4 {
                b.step(50).unwrap();
                prints.push(fingerprint(b.as_mut()));
            }
            runs.push(prints);
        }
        assert!(runs[0].iter().any(|p| p.4 > 100), "{kind}: the tablets must be in contact");
        assert!(runs[0] == runs[1], "{kind}: skin 0 and the default skin differ");
    }
}

/// A checkpoint with bodies as a scene's `initial_state`: the bodies go on from it.
#[test]
fn a_clump_checkpoint_starts_a_scene() {
    let dir = tempfile::tempdir().unwrap();
    tablet_pour_400_steps_on_the_cpu(&dir.path().join("first"));
    let c = talus::checkpoint::Checkpoint::read(&dir.path().join("first/checkpoint.talus")).unwrap();
    let text = std::fs::read_to_string(shipped("tablet_pour.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("generators");
    o.remove("clump_templates");
    o.insert("initial_state".into(), serde_json::json!({ "format": "checkpoint", "file": "first/checkpoint.talus" }));
    let scene = dir.path().join("next.json");
    std::fs::write(&scene, serde_json::to_string(&v).unwrap()).unwrap();
    let setup = talus::scene::load(&scene).unwrap();
    assert!(setup.bodies == c.state.bodies, "the scene's bodies are the checkpoint's");
    let mut cpu = talus::cpu::CpuBackend::new(&setup).unwrap();
    cpu.step(100).unwrap();
    let s = cpu.export_state().unwrap();
    assert_eq!(s.bodies.len(), 400);
    s.bodies.check(s.particles.len()).unwrap();
    // a scene adding particles to such a start is refused, naming the key
    let mut v2 = v.clone();
    v2.as_object_mut().unwrap().insert("particles".into(), serde_json::json!([{ "position": [0.03, 0.03, 0.12], "radius": 0.002, "material": "tablet" }]));
    std::fs::write(&scene, serde_json::to_string(&v2).unwrap()).unwrap();
    let e = talus::scene::load(&scene).err().expect("refused").to_string();
    assert!(e.contains("initial_state") && e.contains("rigid bodies"), "{e}");
}

/// The GPU plans the body buffers with the rest (`gpu::check_fits` refuses what does not fit):
/// the planned bytes, body buffers included, are the bytes made (which count them).
#[test]
fn gpu_plans_the_body_buffers() {
    let setup = dumbbell_box(5);
    let g = gpu(&setup);
    let (planned, made) = g.buffer_bytes();
    assert_eq!(planned, made);
    // 16 B per component and 144 B per body (the body rows), and the body count's uniform
    let body = talus::gpu::bodies::planned_bytes(54, 27);
    assert!(body >= 16 * 54 + 144 * 27, "{body}");
    assert!(g.device_bytes() >= made);
}

/// The tablet feed on the GPU: its exchanges of bodies run on the device (`gpu::flow`): the
/// bodies near the drain and the insertion region handed out whole (`exchange_view`), the
/// survivors' body rows closed up and the new ones appended (`exchange_body_compact`), with no
/// full-state readback after the first exchange (which brings the first bodies: the body table
/// is made then, through the whole state). Every output is bit for bit what the exchanges
/// through the whole state give with the driver deciding on the bodies handed out; with the
/// driver deciding on the whole exported state, which an import stores again in the cell order
/// of its bodies (`gpu::order::for_state`), the trajectories, bodies, contacts and flow totals
/// are bit for bit the same and the energies, summed in other groups, agree to 1e-6.
#[test]
fn gpu_exchanges_of_clumps_run_on_the_device_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("feed.json");
    std::fs::write(&scene, TABLET_FEED).unwrap();
    let setup = talus::scene::load(&scene).unwrap();
    let make = || gpu(&setup);
    let mut device = make();
    let mut through_host = WholeStateExchange(make(), true);
    let mut whole = WholeStateExchange(make(), false);
    let mut flows: Vec<talus::flow::FlowDriver> = (0..3).map(|_| talus::flow::FlowDriver::new(&setup).unwrap().unwrap()).collect();
    let mut readbacks_after_first = None;
    for output in 1..=30 {
        for (b, f) in [&mut device as &mut dyn Backend, &mut through_host, &mut whole].into_iter().zip(flows.iter_mut()) {
            b.step(setup.output_every).unwrap();
            f.exchange(&setup, b).unwrap();
        }
        readbacks_after_first.get_or_insert(device.full_state_readbacks());
        assert_eq!(flows[0].totals(), flows[1].totals(), "output {output}");
        assert_eq!(flows[0].totals(), flows[2].totals(), "output {output}");
        let print = fingerprint(&mut device);
        assert!(print == fingerprint(&mut through_host), "output {output}: the exchanges on the device and through the whole state differ");
        // an import of the whole state stores it in the cell order of its bodies (`gpu::order`),
        // the device keeps the survivors in place and appends: the same trajectory, energies
        // summed in other groups
        assert!(trajectory(&mut device) == trajectory(&mut whole), "output {output}: the exchanges on the device and those decided on the whole state differ");
        energies_close(&mut device, &mut whole, &format!("output {output}"));
    }
    let t = flows[0].totals();
    let how = device.device_exchanges();
    println!("{:?} bodies in, {} drained, {} held; exchanges {how:?}; full-state readbacks: device {}, through the host {}", t.inserted_count, t.outlet_count[0], t.held_count, device.full_state_readbacks(), through_host.0.full_state_readbacks());
    assert_eq!(t.inserted_count, vec![70, 20], "both insertions must finish");
    assert!(t.outlet_count[0] >= 5, "the drain must take bodies: {t:?}");
    assert_eq!(how.through_host, 1, "only the exchange that makes the body table goes through the host: {how:?}");
    assert!(how.in_place + how.regrown >= 10, "{how:?}");
    assert!(readbacks_after_first.unwrap() > 0 && device.full_state_readbacks() == readbacks_after_first.unwrap(), "an exchange on the device reads no whole state");

    // `talus run` on the GPU closes the feed's energy, and a run split by a checkpoint at an
    // exchange on the device continues it byte for byte
    let (whole, part, rest) = (dir.path().join("whole"), dir.path().join("part"), dir.path().join("rest"));
    let gpu = talus::run::BackendChoice::Gpu;
    run::run_on(gpu, &scene, 4000, &whole);
    let c = closure(&whole.join("energy.csv"));
    println!("GPU tablet feed over 4000 steps: energy closure {c:.3e}");
    assert!(c < 1e-3, "energy closure {c:.3e}");
    run::run_on(gpu, &scene, 2000, &part);
    run::resume_on(gpu, &part, 2000, &rest);
    for f in ["energy.csv", "outflow.csv", "snapshots/particles_0000004000.vtu", "snapshots/bodies_0000004000.csv"] {
        let (a, b) = (std::fs::read(whole.join(f)).unwrap(), std::fs::read(rest.join(f)).unwrap());
        assert!(a == b, "{f} differs between the whole GPU run and the split one");
    }
}

/// Tablets shot upwards out of an open bin and past the scene's `domain`, with
/// `"lost_particles": "remove"`: the GPU's view finds the bodies whose centres of mass left it
/// (the query's outside test shrunk by the largest component offset) and the exchanges on the
/// device remove them whole, bit for bit as the driver does on the whole exported state (the
/// energies, summed in the groups of another storage order, to 1e-6).
#[test]
fn gpu_exchanges_remove_lost_clumps_by_their_centres_bit_for_bit() {
    let mut scene: serde_json::Value = serde_json::from_str(TABLET_FEED).unwrap();
    let o = scene.as_object_mut().unwrap();
    o.insert("domain".into(), serde_json::json!({ "min": [-0.01, -0.01, -0.01], "max": [0.05, 0.05, 0.075] }));
    o.insert("lost_particles".into(), serde_json::json!("remove"));
    o.remove("outlets");
    for ins in o["insert"].as_array_mut().unwrap() {
        ins["velocity"] = serde_json::json!([0.3, 0, 1.5]);
        ins["region"] = serde_json::json!({ "type": "box", "min": [0.0, 0.0, 0.01], "max": [0.04, 0.04, 0.04] });
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fountain.json");
    std::fs::write(&path, serde_json::to_string(&scene).unwrap()).unwrap();
    let setup = talus::scene::load(&path).unwrap();
    let mut device = gpu(&setup);
    let mut whole = WholeStateExchange(gpu(&setup), false);
    let mut flows: Vec<talus::flow::FlowDriver> = (0..2).map(|_| talus::flow::FlowDriver::new(&setup).unwrap().unwrap()).collect();
    for output in 1..=16 {
        for (b, f) in [&mut device as &mut dyn Backend, &mut whole].into_iter().zip(flows.iter_mut()) {
            b.step(setup.output_every).unwrap();
            f.exchange(&setup, b).unwrap();
        }
        assert_eq!(flows[0].totals(), flows[1].totals(), "output {output}");
        assert!(trajectory(&mut device) == trajectory(&mut whole), "output {output}: the exchanges on the device and those decided on the whole state differ");
        energies_close(&mut device, &mut whole, &format!("output {output}"));
    }
    let t = flows[0].totals();
    println!("fountain: {:?} bodies in, {} lost ({:.3e} kg, {:.3e} J), {} held; exchanges {:?}; full-state readbacks {}", t.inserted_count, t.lost_count, t.lost_mass, t.lost_energy, t.held_count, device.device_exchanges(), device.full_state_readbacks());
    assert!(t.lost_count >= 5, "bodies must leave the domain: {t:?}");
    assert_eq!(device.device_exchanges().through_host, 1, "{:?}", device.device_exchanges());
    assert_eq!(device.full_state_readbacks(), 1, "only the exchange that makes the body table reads the whole state");
}

/// The GPU stores a scene with bodies body by body in the cell order of their centres
/// (`gpu::order::for_state`): each body's components one run of storage indices, in id order.
/// The physics keeps the ids' order, so the tablets of `scenes/tablet_pour.json` (placed at
/// random, so their ids are scattered in space) step bit for bit as when stored in id order:
/// particles, bodies and contacts; only the f32 energy sums, grouped by storage index, may
/// differ in their last bits. Renumbered on the device every 64 steps, keyed by their bodies'
/// centres (`shaders/body/order.wgsl`), the bodies stay whole runs in storage and the
/// trajectories the same. A run resumed from its exported state and device arrays is stored as
/// it was saved and continues in every bit, energies included.
#[test]
fn gpu_bodies_stored_in_cell_order_step_as_in_id_order() {
    let mut setup = talus::scene::load(&shipped("tablet_pour.json")).unwrap();
    // thrown down and about, so that tablets meet the floor and each other within the run
    let mut rng = rand_pcg::Pcg64::seed_from_u64(5);
    for v in setup.bodies.velocity.iter_mut() {
        *v = [rng.random_range(-1.5..1.5), rng.random_range(-1.5..1.5), rng.random_range(-4.0..-2.0)];
    }
    let n = setup.particles.len();
    let with = |cell_order: bool| talus::gpu::GpuBackend::new(&setup, talus::gpu::GpuOptions { cell_order: Some(cell_order), ..Default::default() }).unwrap();
    let (mut cells, mut ids) = (with(true), with(false));
    // and renumbered on the device every 64 steps (`shaders/body/order.wgsl`)
    let mut moving = talus::gpu::GpuBackend::new(&setup, talus::gpu::GpuOptions { cell_order: Some(true), renumber_every: Some(64), ..Default::default() }).unwrap();
    let stored = cells.stored_ids().unwrap();
    assert_eq!(ids.stored_ids().unwrap(), (0..n as u32).collect::<Vec<_>>());
    // whole bodies, in the Z-order of their centres: consecutive stored bodies lie far closer
    // together than consecutive body ids
    let b = &setup.bodies;
    let mut bodies_stored = Vec::new();
    for run in stored.chunks(4) {
        let k = b.body_of[run[0] as usize];
        assert_eq!(run, (b.first[k as usize]..b.first[k as usize] + 4).collect::<Vec<_>>(), "body {k} is not stored as one run in id order");
        bodies_stored.push(k);
    }
    let gap = |order: &[u32]| order.windows(2).map(|w| glam::DVec3::from(b.position[w[0] as usize]).distance(glam::DVec3::from(b.position[w[1] as usize]))).sum::<f64>() / (order.len() - 1) as f64;
    let by_id: Vec<u32> = (0..b.len() as u32).collect();
    let (g_cells, g_ids) = (gap(&bodies_stored), gap(&by_id));
    assert!(g_cells < 0.5 * g_ids, "consecutive stored tablets lie {g_cells} m apart, consecutive ids {g_ids} m");

    // each body one run of storage indices, in id order
    let whole_bodies = |stored: &[u32]| {
        for run in stored.chunks(4) {
            let k = b.body_of[run[0] as usize] as usize;
            assert_eq!(run, (b.first[k]..b.first[k] + 4).collect::<Vec<_>>(), "body {k} is split in storage");
        }
    };
    let mut orders = vec![moving.stored_ids().unwrap()];
    for k in 1..=2u64 {
        cells.step(300).unwrap();
        ids.step(300).unwrap();
        moving.step(300).unwrap();
        assert!(trajectory(&mut cells) == trajectory(&mut ids), "the storage orders differ after {} steps", 300 * k);
        assert!(trajectory(&mut moving) == trajectory(&mut ids), "the run renumbered on the device differs after {} steps", 300 * k);
        energies_close(&mut cells, &mut ids, &format!("cell order against id order after {} steps", 300 * k));
        let now = moving.stored_ids().unwrap();
        whole_bodies(&now);
        orders.push(now);
    }
    assert!(orders.windows(2).all(|w| w[0] != w[1]), "the device did not renumber the tablets");
    let contacts = cells.contact_count().unwrap();
    println!("tablets in cell order and in id order: {contacts} contacts after 600 steps, consecutive stored tablets {g_cells:.4} m apart (ids: {g_ids:.4} m)");
    assert!(contacts > 50, "only {contacts} contacts after 600 steps: the comparison proves little");
    // resumed from the state and the device arrays: stored as saved, every bit continued
    let (state, exact) = (cells.export_state().unwrap(), cells.export_exact().unwrap());
    assert!(exact.raw("order").is_ok(), "a GPU state of bodies stored in cell order saves its order");
    let mut resumed = with(false);
    resumed.import_state(&state).unwrap();
    resumed.import_exact(&exact).unwrap();
    assert_eq!(resumed.stored_ids().unwrap(), cells.stored_ids().unwrap());
    cells.step(200).unwrap();
    resumed.step(200).unwrap();
    assert!(fingerprint(&mut cells) == fingerprint(&mut resumed), "the resumed run differs, energies included");
    // and the run renumbered on the device, resumed between renumberings, renumbers as it
    let (state, exact) = (moving.export_state().unwrap(), moving.export_exact().unwrap());
    let mut resumed = talus::gpu::GpuBackend::new(&setup, talus::gpu::GpuOptions { cell_order: Some(true), renumber_every: Some(64), ..Default::default() }).unwrap();
    resumed.import_state(&state).unwrap();
    resumed.import_exact(&exact).unwrap();
    moving.step(200).unwrap();
    resumed.step(200).unwrap();
    assert_eq!(moving.stored_ids().unwrap(), resumed.stored_ids().unwrap());
    assert!(fingerprint(&mut moving) == fingerprint(&mut resumed), "the resumed run renumbered on the device differs, energies included");
}
