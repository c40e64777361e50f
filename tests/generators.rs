//! Particle generators: random_fill and lattice.

use std::path::Path;
use std::time::Instant;

use talus::scene;
use talus::setup::Particles;

fn parse(text: &str) -> talus::Result<talus::Setup> {
    scene::parse_str(text, Path::new("gen.json"))
}

fn fill_scene(count: usize, radius: &str, seed: u64, extra_particles: &str) -> String {
    format!(
        r#"{{ "time_step": 1e-6, "steps": 1,
  "materials": {{ "m": {{ "density": 2500, "hz_shear": 1e8, "hz_poiss": 0.3 }} }},
  "particles": [ {extra_particles} ],
  "generators": [ {{ "type": "random_fill", "box": {{ "min": [0, 0, 0], "max": [0.1, 0.05, 0.08] }},
     "count": {count}, "radius": {radius}, "velocity": [0, 0, -1], "seed": {seed} }} ] }}"#
    )
}

/// Every pair checked through a sort along x (sweep); returns the first overlapping pair.
fn find_overlap(p: &Particles) -> Option<(usize, usize)> {
    let mut order: Vec<usize> = (0..p.len()).collect();
    order.sort_by(|&a, &b| p.position[a][0].total_cmp(&p.position[b][0]));
    let r_max = p.radius.iter().cloned().fold(0.0, f64::max);
    for (k, &i) in order.iter().enumerate() {
        for &j in &order[k + 1..] {
            let (x, y) = (p.position[i], p.position[j]);
            if y[0] - x[0] > 2.0 * r_max {
                break;
            }
            let d2 = (0..3).map(|a| (x[a] - y[a]).powi(2)).sum::<f64>();
            let s = p.radius[i] + p.radius[j];
            if d2 < s * s * (1.0 - 1e-12) {
                return Some((i, j));
            }
        }
    }
    None
}

fn assert_inside(p: &Particles, min: [f64; 3], max: [f64; 3], skip: usize) {
    for i in skip..p.len() {
        for a in 0..3 {
            let (x, r) = (p.position[i][a], p.radius[i]);
            assert!(x - r >= min[a] - 1e-15 && x + r <= max[a] + 1e-15, "particle {i} outside: {x} ± {r}");
        }
    }
}

#[test]
fn random_fill_uniform_no_overlap_inside_box() {
    let s = parse(&fill_scene(5000, r#"{"distribution": "uniform", "min": 0.001, "max": 0.002}"#, 7, "")).unwrap();
    let p = &s.particles;
    assert_eq!(p.len(), 5000);
    assert_eq!(find_overlap(p), None);
    assert_inside(p, [0.0; 3], [0.1, 0.05, 0.08], 0);
    assert!(p.radius.iter().all(|&r| (0.001..=0.002).contains(&r)));
    assert!(p.velocity.iter().all(|v| *v == [0.0, 0.0, -1.0]));
    // radii actually spread over the range
    let lo = p.radius.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = p.radius.iter().cloned().fold(0.0, f64::max);
    assert!(lo < 0.00105 && hi > 0.00195, "{lo} {hi}");
}

#[test]
fn random_fill_lognormal_within_bounds() {
    let d = r#"{"distribution": "lognormal", "median": 0.0015, "sigma": 0.4, "min": 0.001, "max": 0.0025}"#;
    let s = parse(&fill_scene(3000, d, 3, "")).unwrap();
    let p = &s.particles;
    assert_eq!(p.len(), 3000);
    assert!(p.radius.iter().all(|&r| (0.001..=0.0025).contains(&r)));
    assert_eq!(find_overlap(p), None);
    assert_inside(p, [0.0; 3], [0.1, 0.05, 0.08], 0);
    // median roughly right
    let mut r = p.radius.clone();
    r.sort_by(f64::total_cmp);
    let med = r[r.len() / 2];
    assert!((med - 0.0015).abs() < 0.0002, "median {med}");
}

#[test]
fn same_seed_same_particles() {
    let d = r#"{"distribution": "uniform", "min": 0.001, "max": 0.002}"#;
    let a = parse(&fill_scene(2000, d, 42, "")).unwrap();
    let b = parse(&fill_scene(2000, d, 42, "")).unwrap();
    let c = parse(&fill_scene(2000, d, 43, "")).unwrap();
    assert_eq!(a.particles, b.particles);
    for i in 0..a.particles.len() {
        assert_eq!(a.particles.position[i].map(f64::to_bits), b.particles.position[i].map(f64::to_bits));
    }
    assert_ne!(a.particles, c.particles);
}

#[test]
fn random_fill_avoids_explicit_particles() {
    let big = r#"{ "position": [0.05, 0.025, 0.04], "radius": 0.02 }"#;
    let s = parse(&fill_scene(3000, "0.0015", 5, big)).unwrap();
    let p = &s.particles;
    assert_eq!(p.len(), 3001);
    assert_eq!(p.radius[0], 0.02);
    assert_eq!(find_overlap(p), None);
    assert_inside(p, [0.0; 3], [0.1, 0.05, 0.08], 1);
}

#[test]
fn random_fill_100k_is_fast() {
    // φ ≈ 0.2, monodisperse r = 1 in a 128³ box
    let text = r#"{ "time_step": 1e-6, "steps": 1,
      "materials": { "m": { "density": 2500, "hz_shear": 1e8 } },
      "generators": [ { "type": "random_fill", "box": { "min": [0, 0, 0], "max": [128, 128, 128] },
        "count": 100000, "radius": { "distribution": "uniform", "min": 0.8, "max": 1.1 } } ] }"#;
    let t = Instant::now();
    let s = parse(text).unwrap();
    let secs = t.elapsed().as_secs_f64();
    eprintln!("random_fill of 100,000 particles: {secs:.3} s");
    assert_eq!(s.particles.len(), 100_000);
    assert_eq!(find_overlap(&s.particles), None);
    assert!(secs < 2.0, "took {secs} s (expected ~0.2 s in release)");
}

#[test]
fn overpacked_fill_fails_with_packing_fraction() {
    let msg = parse(&fill_scene(200_000, "0.002", 1, "")).unwrap_err().to_string();
    assert!(msg.contains("generators[0]") && msg.contains("packing fraction"), "{msg}");
}

#[test]
fn lattice_count_and_spacing() {
    let text = r#"{ "time_step": 1e-6, "steps": 1,
      "materials": { "m": { "density": 2500, "hz_shear": 1e8 } },
      "generators": [ { "type": "lattice", "origin": [1, 2, 3], "count": [4, 3, 2], "spacing": 0.5,
        "radius": { "distribution": "uniform", "min": 0.1, "max": 0.25 }, "velocity": [1, 0, 0], "seed": 9 } ] }"#;
    let s = parse(text).unwrap();
    let p = &s.particles;
    assert_eq!(p.len(), 24);
    // x fastest, then y, then z
    let mut n = 0;
    for k in 0..2 {
        for j in 0..3 {
            for i in 0..4 {
                let want = [1.0 + 0.5 * i as f64, 2.0 + 0.5 * j as f64, 3.0 + 0.5 * k as f64];
                assert_eq!(p.position[n], want);
                assert!((0.1..=0.25).contains(&p.radius[n]));
                assert_eq!(p.velocity[n], [1.0, 0.0, 0.0]);
                n += 1;
            }
        }
    }
    assert_eq!(find_overlap(p), None);
    // same seed → same radii
    assert_eq!(parse(text).unwrap().particles, s.particles);
}

#[test]
fn lattice_then_random_fill_no_overlap() {
    let text = r#"{ "time_step": 1e-6, "steps": 1,
      "materials": { "m": { "density": 2500, "hz_shear": 1e8 } },
      "generators": [
        { "type": "lattice", "origin": [0.1, 0.1, 0.1], "count": [5, 5, 5], "spacing": 0.2, "radius": 0.09 },
        { "type": "random_fill", "box": { "min": [0, 0, 0], "max": [1, 1, 1] }, "count": 2000, "radius": 0.02 } ] }"#;
    let s = parse(text).unwrap();
    assert_eq!(s.particles.len(), 125 + 2000);
    assert_eq!(find_overlap(&s.particles), None);
}
