//! Periodic boundaries on both backends: a contact pair crossing the boundary keeps its
//! contacts and shear history (it moves exactly as the same pair in a domain without the
//! boundary), a periodic lattice moves exactly as the centre copy of the lattice surrounded by
//! its images, scene errors name the key, and the shipped periodic chute agrees CPU vs GPU.

mod common;

use std::path::Path;

use common::*;
use glam::DVec3;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use talus::contact::params::PairParams;
use talus::setup::{Aabb, Particles, Setup};

const R: f64 = 0.005;

/// The largest difference of positions (relative to R) and of velocities (relative to `v_scale`)
/// between two snapshots, over the particles `ids_b` of `b` matched with `0..` of `a`.
fn max_deviation(a: &talus::Snapshot, b: &talus::Snapshot, ids_b: &[usize], shift: DVec3, v_scale: f64) -> (f64, f64) {
    let (mut dx, mut dv) = (0.0f64, 0.0f64);
    for (k, &j) in ids_b.iter().enumerate() {
        let xa = DVec3::from(a.position[k]);
        let xb = DVec3::from(b.position[j]) - shift;
        dx = dx.max((xa - xb).length() / R);
        dv = dv.max((DVec3::from(a.velocity[k]) - DVec3::from(b.velocity[j])).length() / v_scale);
        dv = dv.max((DVec3::from(a.angular_velocity[k]) - DVec3::from(b.angular_velocity[j])).length() * R / v_scale);
    }
    (dx, dv)
}

/// Ball B rests on ball A, A on a frictional floor; both slide along x (B faster, so the A–B
/// contact carries a loaded shear spring) across the periodic boundary at x = 0.1 m. The same
/// stack in a domain three periods long, never crossing, is the reference.
fn crossing_stack(periodic: bool) -> Setup {
    let mut particles = Particles::default();
    let x0 = 0.0995;
    // start near the static overlaps (A on the floor 1.0 µm, B on A 1.3 µm)
    particles.push([x0, 0.0, R - 1.0e-6], [1.0, 0.0, 0.0], [0.0; 3], R, 0);
    particles.push([x0, 0.0, 3.0 * R - 2.3e-6], [1.05, 0.0, 0.0], [0.0; 3], R, 0);
    // no shear dashpot: in dp_mode 0 it is not Coulomb-capped and would kick B off A
    let base = PairParams { dp_nratio: 0.5, ..PairParams::default() };
    let (len, periodic) = if periodic { (0.1, [true, false, false]) } else { (0.3, [false; 3]) };
    let domain = Aabb { min: [0.0, -0.02, -0.01], max: [len, 0.02, 0.05] };
    let mut s = setup_with(material("glass", 2500.0, 1e8, 0.25, 0.5), base, particles, vec![floor(0.0)], [0.0, 0.0, -9.81], 2e-6, domain);
    s.periodic = periodic;
    s
}

#[test]
fn stack_crossing_the_boundary_keeps_contacts_and_history() {
    let (periodic, open) = (crossing_stack(true), crossing_stack(false));
    let backends = both_backends(&periodic).into_iter().zip(both_backends(&open));
    for (mut p, mut o) in backends {
        let kind = p.kind();
        let (mut worst_x, mut worst_v, mut crossed, mut friction) = (0.0f64, 0.0f64, false, 0.0f64);
        for _ in 0..20 {
            p.step(100).unwrap();
            o.step(100).unwrap();
            let (sp, so) = (p.snapshot().unwrap(), o.snapshot().unwrap());
            // the periodic snapshot is unwrapped: the same coordinates as the open run
            let (dx, dv) = max_deviation(&sp, &so, &[0, 1], DVec3::ZERO, 1.0);
            worst_x = worst_x.max(dx);
            worst_v = worst_v.max(dv);
            crossed |= sp.position[0][0] > 0.1 && sp.position[1][0] > 0.1;
            assert_eq!(p.contact_count().unwrap(), 2, "{kind}: the stack lost a contact at step {}", sp.step);
            // the only force along x on B is the shear force of the A–B contact
            friction = friction.max(sp.force[1][0].abs());
        }
        let weight_b = 2500.0 * 4.0 / 3.0 * std::f64::consts::PI * R.powi(3) * 9.81;
        assert!(friction > 1e-3 * weight_b, "{kind}: the A–B shear spring never carried load ({friction} N)");
        println!("{kind}: periodic vs open over 2000 steps: positions {worst_x:.2e} R, velocities {worst_v:.2e} m/s");
        assert!(crossed, "{kind}: the stack did not cross the boundary");
        let (tol_x, tol_v) = if kind == "cpu" { (1e-9, 1e-9) } else { (1e-5, 1e-5) };
        assert!(worst_x < tol_x && worst_v < tol_v, "{kind}: periodic run deviates: {worst_x:e} R, {worst_v:e} m/s");
    }
}

/// A lattice of balls 5 µm apart with random velocities, periodic in x and y, vs the same
/// lattice with its 24 images around it in an open domain: the centre copy moves like the
/// periodic lattice until the open edge of the 5×5 block makes itself felt (a collision chain
/// of eight balls; compared over 300 steps).
#[test]
fn periodic_lattice_moves_as_its_images() {
    let (n, spacing) = (4usize, 2.0 * R + 5e-6);
    let period = n as f64 * spacing;
    let mut rng = Pcg64::seed_from_u64(11);
    let mut cell = Vec::new();
    for i in 0..n {
        for j in 0..n {
            let x = [(i as f64 + 0.5) * spacing, (j as f64 + 0.5) * spacing, R];
            let v = [rng.random_range(-0.2..0.2), rng.random_range(-0.2..0.2), 0.0];
            cell.push((x, v));
        }
    }
    let base = PairParams { dp_nratio: 0.2, ..PairParams::default() };
    let mat = material("glass", 2500.0, 1e8, 0.25, 0.3);
    let mut lattice = Particles::default();
    for (x, v) in &cell {
        lattice.push(*x, *v, [0.0; 3], R, 0);
    }
    let box_z = |lo: f64, hi: f64| Aabb { min: [lo, lo, -R], max: [hi, hi, 3.0 * R] };
    let mut periodic = setup_with(mat.clone(), base, lattice, vec![floor(0.0)], [0.0, 0.0, -9.81], 2e-6, box_z(0.0, period));
    periodic.periodic = [true, true, false];
    // images: the centre copy first (ids 0..n²), then the 24 shifted copies
    let mut images = Particles::default();
    let shifts: Vec<(i32, i32)> = std::iter::once((0, 0)).chain((-2..=2).flat_map(|a| (-2..=2).map(move |b| (a, b))).filter(|&s| s != (0, 0))).collect();
    for &(a, b) in &shifts {
        for (x, v) in &cell {
            images.push([x[0] + a as f64 * period, x[1] + b as f64 * period, x[2]], *v, [0.0; 3], R, 0);
        }
    }
    let open = setup_with(mat, base, images, vec![floor(0.0)], [0.0, 0.0, -9.81], 2e-6, box_z(-2.0 * period, 3.0 * period));
    let centre: Vec<usize> = (0..n * n).collect();
    for (mut p, mut o) in both_backends(&periodic).into_iter().zip(both_backends(&open)) {
        let kind = p.kind();
        let (mut dx, mut dv, mut across) = (0.0f64, 0.0f64, 0usize);
        for _ in 0..15 {
            p.step(20).unwrap();
            o.step(20).unwrap();
            let (sp, so) = (p.snapshot().unwrap(), o.snapshot().unwrap());
            let (x, v) = max_deviation(&sp, &so, &centre, DVec3::ZERO, 0.2);
            (dx, dv) = (dx.max(x), dv.max(v));
            across = across.max(contacts_across_boundary(&periodic, &sp));
        }
        println!("{kind}: up to {across} contacts across the boundary; periodic vs centre copy over 300 steps: positions {dx:.2e} R, velocities {dv:.2e} of 0.2 m/s");
        assert!(across >= 2, "{kind}: only {across} contacts across the periodic boundary");
        let tol = if kind == "cpu" { 1e-9 } else { 1e-4 };
        assert!(dx < tol && dv < tol, "{kind}: periodic lattice deviates from its images: {dx:e} R, {dv:e}");
    }
}

/// Ball pairs touching through the periodic boundary (nearest image closer than the direct
/// separation).
fn contacts_across_boundary(setup: &Setup, s: &talus::Snapshot) -> usize {
    let x: Vec<DVec3> = s.position.iter().map(|p| setup.wrap(DVec3::from(*p)).0).collect();
    let mut n = 0;
    for i in 0..x.len() {
        for j in i + 1..x.len() {
            let direct = x[j] - x[i];
            let image = setup.minimum_image(direct);
            n += (image.length() < 2.0 * R && direct.length() > 2.0 * R) as usize;
        }
    }
    n
}

fn chute() -> Setup {
    talus::scene::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/periodic_chute.json")).expect("load periodic_chute.json")
}

/// The shipped chute: periodic in x and y; CPU and GPU agree over the first 100 steps with the
/// tolerances of `talus verify`, and grains wrap (their unwrapped x leaves the domain).
#[test]
fn periodic_chute_agrees_on_cpu_and_gpu() {
    let setup = chute();
    assert_eq!(setup.periodic, [true, true, false]);
    let tol = talus::verify::Tolerances::default();
    let report = talus::verify::verify(&setup, tol.early_steps, &tol).unwrap_or_else(|e| panic!("verify needs a GPU adapter (apt-get install mesa-vulkan-drivers): {e}"));
    println!("{report}");
    for q in ["position", "velocity", "angular_velocity", "force", "torque"] {
        let r = report.row(q, talus::verify::Window::Early).unwrap();
        assert!(r.ok(), "{q}: {:.3e} > {:.1e}\n{report}", r.max_rel, r.tolerance.unwrap());
    }
}

#[test]
fn periodic_scene_errors_name_the_key() {
    let scene = |periodic: &str, x: f64| {
        format!(
            r#"{{ "time_step": 1e-6, "steps": 10,
                "materials": {{ "glass": {{ "density": 2500, "hz_shear": 1e9 }} }},
                "domain": {{ "min": [0, 0, 0], "max": [0.1, 0.1, 0.1], "periodic": {periodic} }},
                "particles": [ {{ "position": [{x}, 0.05, 0.05], "radius": 0.005 }} ] }}"#
        )
    };
    let err = |text: String| talus::scene::parse_str(&text, Path::new("p.json")).unwrap_err().to_string();
    let cases = [
        (scene(r#"["w"]"#, 0.05), vec!["p.json", "domain.periodic[0]", "\"w\"", "x, y, z"]),
        (scene(r#"["x", "x"]"#, 0.05), vec!["domain.periodic[1]", "twice"]),
        (scene(r#"["x"]"#, 0.1), vec!["domain.periodic[0]", "particle 0", "x = 0.1", "[0, 0.1)"]),
        (scene(r#""x""#, 0.05), vec!["domain.periodic", "array"]),
    ];
    for (text, expect) in cases {
        let e = err(text);
        for part in expect {
            assert!(e.contains(part), "error {e:?} lacks {part:?}");
        }
    }
    let short = r#"{ "time_step": 1e-6, "steps": 10,
        "materials": { "glass": { "density": 2500, "hz_shear": 1e9 } },
        "domain": { "min": [0, 0, 0], "max": [0.025, 0.1, 0.1], "periodic": ["x"] },
        "particles": [ { "position": [0.01, 0.05, 0.05], "radius": 0.005 } ] }"#;
    let e = talus::scene::parse_str(short, Path::new("p.json")).unwrap_err().to_string();
    assert!(e.contains("domain.periodic[0]") && e.contains("0.025") && e.contains("3 neighbour cells"), "{e}");
}
