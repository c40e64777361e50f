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
