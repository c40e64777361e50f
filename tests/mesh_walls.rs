//! Triangle-mesh walls in both step loops: a tessellated floor gives the analytic plane's
//! trajectories (drops, oblique impacts, sliding, rolling across edges and vertices), contact
//! history survives crossing between triangles, an STL file through a scene gives the
//! generated mesh's result, a 100,000-triangle floor carries resting balls with the right
//! loads, a rotating drum spins a ball as friction predicts, GPU runs are bit-identical, and a
//! GPU thread that would have to drop contacts stops the run with an error naming the mesh.

mod common;

use std::sync::Arc;
use std::time::Instant;

use common::*;
use glam::{DVec2, DVec3};
use talus::contact::params::PairParams;
use talus::mesh::closest::closest_point_on_triangle;
use talus::mesh::generate::{self, Facing};
use talus::mesh::{MeshTransform, TriangleMesh};
use talus::motion::{Profile, WallMotion};
use talus::setup::{mesh_group_bases, MeshWall, Particles, Setup, Wall};
use talus::{Backend, Snapshot};

const R: f64 = 0.005;
const DENSITY: f64 = 2500.0;
const G: f64 = 9.81;
const DT: f64 = 1e-5;

fn mass() -> f64 {
    Setup::sphere_mass(DENSITY, R)
}

/// A ball's initial state: position, velocity, angular velocity.
type Ball = ([f64; 3], [f64; 3], [f64; 3]);

/// 2 × 2 m floor at z = 0 of n × n squares (2 n² triangles), diagonals alternating.
fn floor_mesh(n: usize) -> TriangleMesh {
    TriangleMesh::new("floor", generate::floor(DVec2::splat(-1.0), DVec2::splat(1.0), 0.0, n, n, true)).expect("floor mesh")
}

/// Balls of radius R on the analytic floor z = 0 (friction `fric`, damped Hertz contacts).
fn plane_setup(balls: &[Ball], gravity: [f64; 3], fric: f64) -> Setup {
    let mut particles = Particles::default();
    for &(x, v, w) in balls {
        particles.push(x, v, w, R, 0);
    }
    let base = PairParams { dp_nratio: 0.3, dp_sratio: 0.3, ..PairParams::default() };
    setup_with(material("glass", DENSITY, 1e8, 0.25, fric), base, particles, vec![floor(0.0)], gravity, DT, cube(1.5))
}

/// The same set-up with the plane replaced by `mesh` (loads about the same point).
fn with_mesh(plane: &Setup, mesh: TriangleMesh) -> Setup {
    let mut s = plane.clone();
    s.walls.clear();
    let mut wall = MeshWall::new("floor", mesh, 0);
    wall.load_point = plane.walls[0].load_point;
    s.meshes.push(wall);
    s
}

/// Largest differences between two runs, each relative to the largest magnitude of that
/// quantity (over all balls and outputs) in the reference run.
#[derive(Clone, Copy, Debug, Default)]
struct Diff {
    position: f64,
    velocity: f64,
    spin: f64,
}

impl Diff {
    fn max(&self) -> f64 {
        self.position.max(self.velocity).max(self.spin)
    }
}

/// `outputs` snapshots `every` steps apart of a backend (after each batch).
fn run(backend: &mut dyn Backend, outputs: usize, every: u64) -> Vec<Snapshot> {
    (0..outputs)
        .map(|_| {
            backend.step(every).unwrap();
            backend.snapshot().unwrap()
        })
        .collect()
}

/// Largest |a − b| of one quantity over all outputs and balls, over the largest |b|.
fn relative(a: &[Snapshot], b: &[Snapshot], field: fn(&Snapshot) -> &Vec<[f64; 3]>) -> f64 {
    let (mut diff, mut scale) = (0.0f64, 0.0f64);
    for (sa, sb) in a.iter().zip(b) {
        for (x, y) in field(sa).iter().zip(field(sb)) {
            diff = diff.max((DVec3::from(*x) - DVec3::from(*y)).length());
            scale = scale.max(DVec3::from(*y).length());
        }
    }
    if scale > 0.0 { diff / scale } else { diff }
}

fn compare(a: &[Snapshot], b: &[Snapshot]) -> Diff {
    Diff { position: relative(a, b, |s| &s.position), velocity: relative(a, b, |s| &s.velocity), spin: relative(a, b, |s| &s.angular_velocity) }
}

/// The triangle of `mesh` under the point (x, y) (the first that contains it).
fn triangle_under(mesh: &TriangleMesh, x: [f64; 3]) -> u32 {
    let q = DVec3::new(x[0], x[1], 0.0);
    let t = mesh.triangles.iter().position(|t| closest_point_on_triangle(q, t[0], t[1], t[2]).point.distance(q) < 1e-12);
    t.expect("a point of the floor") as u32
}

/// Smallest distance of (x, y) from a vertex of `mesh` over a path.
fn closest_vertex_approach(mesh: &TriangleMesh, path: &[[f64; 3]]) -> f64 {
    let d = |p: &[f64; 3]| mesh.triangles.iter().flatten().map(|v| DVec2::new(v.x - p[0], v.y - p[1]).length()).fold(f64::INFINITY, f64::min);
    path.iter().map(d).fold(f64::INFINITY, f64::min)
}

/// Four balls far apart on a floor, each its own case: (1) dropped normally onto a vertex,
/// (2) dropped obliquely with friction next to an edge, (3) sliding across a vertex region,
/// (4) rolling along a diagonal edge through a vertex. On a mesh floor of 200 triangles they
/// follow the analytic plane's trajectories: bit for bit on the CPU (f64) and on the GPU (f32;
/// the face contact's distance is the plane's arithmetic and the f32 tolerance keeps every
/// neighbouring edge contact strictly farther, see src/gpu/meshes.rs).
#[test]
fn mesh_floor_gives_the_plane_trajectories() {
    let balls: [Ball; 4] = [
        ([-0.6, -0.6, R + 0.002], [0.0, 0.0, -0.3], [0.0; 3]),
        ([-0.41, 0.39, R + 0.001], [0.4, 0.25, -0.4], [0.0, 0.0, 5.0]),
        ([0.39, -0.41, R], [0.6, 0.35, 0.0], [0.0; 3]),
        ([0.18, 0.18, R], [0.3, 0.3, 0.0], [-0.3 / R, 0.3 / R, 0.0]),
    ];
    let plane = plane_setup(&balls, [0.0, 0.0, -G], 0.5);
    let mesh = floor_mesh(10);
    assert_eq!(mesh.len(), 200);
    let meshed = with_mesh(&plane, mesh.clone());
    let (outputs, every) = (50, 200);
    for (mut p, mut m) in both_backends(&plane).into_iter().zip(both_backends(&meshed)) {
        let kind = p.kind();
        let t = Instant::now();
        let (sp, sm) = (run(p.as_mut(), outputs, every), run(m.as_mut(), outputs, every));
        let d = compare(&sm, &sp);
        println!("{kind}: mesh vs plane over {} steps: max relative difference position {:.1e}, velocity {:.1e}, spin {:.1e} ({:.1} s)", outputs as u64 * every, d.position, d.velocity, d.spin, t.elapsed().as_secs_f64());
        assert!(d.max() <= 1e-6, "{kind}: mesh and plane trajectories differ: {d:?}");
        let (lp, lm) = (p.wall_loads().unwrap(), m.wall_loads().unwrap());
        assert_eq!(lm.len(), 1);
        assert!((DVec3::from(lm[0].force) - DVec3::from(lp[0].force)).length() <= 1e-6 * DVec3::from(lp[0].force).length(), "{kind}: loads {lm:?} vs {lp:?}");
        if kind == "cpu" {
            // the paths cross edges and vertices
            let paths: Vec<Vec<[f64; 3]>> = (0..4).map(|b| sm.iter().map(|s| s.position[b]).collect()).collect();
            let visited: Vec<usize> = paths.iter().map(|path| {
                let mut ts: Vec<u32> = path.iter().map(|x| triangle_under(&mesh, *x)).collect();
                ts.dedup();
                ts.len()
            }).collect();
            let approach = closest_vertex_approach(&mesh, &paths[0]);
            println!("triangles visited per ball {visited:?}; ball 1 lands {approach:.1e} m from a vertex");
            assert!(visited[1] >= 2 && visited[2] >= 3 && visited[3] >= 2, "the sliding and rolling balls cross triangles: {visited:?}");
            assert!(approach < 1e-9, "ball 1 lands on a vertex");
            // ball 4 rolls along the diagonal edge y = x and through the vertex (0.2, 0.2)
            let on_edge = paths[3].iter().all(|x| (x[0] - x[1]).abs() < 1e-9);
            assert!(on_edge && paths[3][0][0] < 0.2 && paths[3][outputs - 1][0] > 0.2, "ball 4 rolls along the edge across the vertex");
            let touched = |b: usize| sm.iter().any(|s| s.force[b][2] > 0.0);
            assert!((0..4).all(touched), "every ball touches the floor");
        }
    }
}

/// A ball rolling down a slope (gravity tilted) sticks at its contact: the shear spring holds
/// the friction force (2/7) m g_t. The ball crosses the diagonal between two triangles of the
/// floor's single facet group; the history, keyed by the group, survives: the tangential force
/// stays continuous step by step through the crossing and equals the plane run's.
#[test]
fn contact_history_survives_crossing_between_triangles() {
    let g_t = 2.0;
    let gravity = [-g_t / 2f64.sqrt(), g_t / 2f64.sqrt(), -G];
    // in the square [0, 0.2]², below its diagonal y = x, heading across it
    let balls: [Ball; 1] = [([0.121, 0.115, R], [0.0; 3], [0.0; 3])];
    let plane = plane_setup(&balls, gravity, 0.5);
    let mesh = floor_mesh(10);
    let meshed = with_mesh(&plane, mesh.clone());
    // the step after which the ball centre is over the other triangle (CPU reference)
    let mut probe = talus::cpu::CpuBackend::new(&meshed).unwrap();
    let first = triangle_under(&mesh, probe.snapshot().unwrap().position[0]);
    let mut crossing = 0;
    while triangle_under(&mesh, probe.snapshot().unwrap().position[0]) == first {
        probe.step(1).unwrap();
        crossing += 1;
        assert!(crossing < 40_000, "the ball did not cross the diagonal");
    }
    println!("the ball crosses the diagonal in step {crossing}");
    let window = 40;
    let f_expect = 2.0 / 7.0 * mass() * g_t;
    for (mut p, mut m) in both_backends(&plane).into_iter().zip(both_backends(&meshed)) {
        let kind = p.kind();
        p.step(crossing - window / 2).unwrap();
        m.step(crossing - window / 2).unwrap();
        let (sp, sm) = (run(p.as_mut(), window as usize, 1), run(m.as_mut(), window as usize, 1));
        let shear = |s: &Snapshot| DVec2::new(s.force[0][0], s.force[0][1]).length();
        let ft: Vec<f64> = sm.iter().map(shear).collect();
        let jump = ft.windows(2).map(|w| (w[1] - w[0]).abs()).fold(0.0, f64::max);
        let d = compare(&sm, &sp);
        let plane_ft: Vec<f64> = sp.iter().map(shear).collect();
        let vs_plane = ft.iter().zip(&plane_ft).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        println!("{kind}: tangential force {:.6e} N ((2/7) m g_t = {f_expect:.6e}), largest step-to-step change {:.1e} of it, |mesh − plane| {vs_plane:.1e} N, state {d:?}", ft[window as usize / 2], jump / ft[0]);
        assert!(triangle_under(&mesh, sm[0].position[0]) != triangle_under(&mesh, sm[window as usize - 1].position[0]), "{kind}: the window spans the crossing");
        assert!(ft.iter().all(|f| (f - f_expect).abs() < 0.02 * f_expect), "{kind}: the contact sticks with F_t = (2/7) m g_t: {ft:?}");
        assert!(jump < 1e-3 * f_expect, "{kind}: the tangential force jumps by {jump:e} N at the crossing");
        assert!(vs_plane <= 1e-6 * f_expect && d.max() <= 1e-6, "{kind}: differs from the plane: {vs_plane:e} N, {d:?}");
    }
}

/// A floor written as binary STL into a temporary directory and placed by a scene's transform
/// (scale 2, a quarter turn about z, translation) gives the same trajectories and loads as the
/// generated floor at that place, on both backends.
#[test]
fn stl_mesh_through_a_scene_gives_the_generated_mesh_result() {
    let dir = tempfile::tempdir().unwrap();
    // a unit floor of 8 × 8 squares: every vertex is a multiple of 1/8, exact in f32
    let unit = generate::floor(DVec2::splat(-0.5), DVec2::splat(0.5), 0.0, 8, 8, true);
    talus::mesh::stl::write_stl_binary(&dir.path().join("floor.stl"), &unit).unwrap();
    let z0 = -0.25;
    let scene = format!(
        r#"{{
      "time_step": {DT}, "steps": 4000, "output": {{ "every_steps": 1000 }}, "snapshot_every": 0,
      "gravity": [0, 0, -9.81],
      "materials": {{ "glass": {{ "density": {DENSITY}, "hz_shear": 1e8, "hz_poiss": 0.25, "fric": 0.5 }} }},
      "contacts": {{ "default": {{ "dp_nratio": 0.3, "dp_sratio": 0.3 }} }},
      "particles": [
        {{ "position": [0.26, 0.24, {}], "radius": {R}, "velocity": [0.4, -0.3, -0.2] }},
        {{ "position": [-0.5, 0.5, {}], "radius": {R} }}
      ],
      "walls": [ {{ "type": "mesh", "name": "floor", "file": "floor.stl", "material": "glass",
                   "transform": {{ "scale": 2, "axis": [0, 0, 1], "angle": 90, "translation": [0, 0, {z0}] }} }} ]
    }}"#,
        z0 + R + 0.001,
        z0 + R
    );
    let scene_path = dir.path().join("stl_floor.json");
    std::fs::write(&scene_path, scene).unwrap();
    let loaded = talus::scene::load(&scene_path).unwrap();
    assert_eq!(loaded.meshes.len(), 1);
    let wall = &loaded.meshes[0];
    let (lo, hi) = wall.mesh.bounds();
    assert_eq!((wall.name.as_str(), wall.mesh.len(), wall.mesh.group_count), ("floor", 128, 1));
    assert!((lo - DVec3::new(-1.0, -1.0, z0)).length() < 1e-12 && (hi - DVec3::new(1.0, 1.0, z0)).length() < 1e-12, "placed at [{lo}, {hi}]");
    assert!((DVec3::from(wall.load_point) - DVec3::new(0.0, 0.0, z0)).length() < 1e-12, "default load point: the box centre");
    assert!(loaded.domain.min[0] <= -1.0 && loaded.domain.max[1] >= 1.0, "the default domain holds the mesh: {:?}", loaded.domain);
    let mut generated = loaded.clone();
    generated.meshes = vec![MeshWall { mesh: Arc::new(TriangleMesh::new("generated", generate::floor(DVec2::splat(-1.0), DVec2::splat(1.0), z0, 8, 8, false)).unwrap()), ..wall.clone() }];
    for (mut a, mut b) in both_backends(&loaded).into_iter().zip(both_backends(&generated)) {
        let kind = a.kind();
        let (sa, sb) = (run(a.as_mut(), 40, 100), run(b.as_mut(), 40, 100));
        let d = compare(&sa, &sb);
        let (la, lb) = (a.wall_loads().unwrap(), b.wall_loads().unwrap());
        println!("{kind}: STL scene vs generated mesh: {d:?}, loads {:?} vs {:?}", la[0].force, lb[0].force);
        assert!(d.max() <= 1e-9, "{kind}: {d:?}");
        assert!((DVec3::from(la[0].force) - DVec3::from(lb[0].force)).length() <= 1e-9 * DVec3::from(lb[0].force).length().max(1e-12));
        assert!(sa.last().unwrap().force.iter().all(|f| f[2] > 0.0), "{kind}: both balls rest on the floor");
    }
    // `talus run` writes the mesh's loads to walls.csv
    let out = dir.path().join("out");
    let mut cpu = talus::cpu::CpuBackend::new(&loaded).unwrap();
    talus::run::run_scene(&loaded, &mut cpu, &out, talus::run::RunOptions::default()).unwrap();
    let csv = std::fs::read_to_string(out.join("walls.csv")).unwrap();
    let rows: Vec<Vec<&str>> = csv.lines().skip(1).map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 4, "one row per output: {csv}");
    assert_eq!((rows[3][0], rows[3][2], rows[3][11]), ("4000", "floor", "-2.5e-1"));
    assert_eq!(rows[3][5].parse::<f64>().unwrap(), cpu.wall_loads().unwrap()[0].force[2]);
}

/// A floor of 100,352 triangles (224 × 224 squares, 9 mm) carries four resting balls, one on a
/// vertex: the mesh's load is their weight, with the torque about the origin. The GPU bins the
/// triangles on the device at start (time printed).
#[test]
fn floor_of_100k_triangles_carries_resting_balls() {
    let t = Instant::now();
    let mesh = floor_mesh(224);
    let built = t.elapsed().as_secs_f64();
    assert!(mesh.len() >= 100_000);
    let spots = [[0.0, 0.0], [0.3, -0.2], [-0.5, 0.5], [0.1234, 0.4567]];
    let balls: Vec<Ball> = spots.iter().map(|s| ([s[0], s[1], R], [0.0; 3], [0.0; 3])).collect();
    let mut plane = plane_setup(&balls, [0.0, 0.0, -G], 0.5);
    plane.pairs.entries[0].dp_nratio = 0.9;
    let setup = with_mesh(&plane, mesh);
    let weight = mass() * G;
    let force = DVec3::new(0.0, 0.0, -4.0 * weight);
    let torque: DVec3 = spots.iter().map(|s| DVec3::new(s[0], s[1], 0.0).cross(DVec3::new(0.0, 0.0, -weight))).sum();
    println!("mesh of {} triangles built in {built:.2} s", setup.meshes[0].mesh.len());
    let t = Instant::now();
    let cpu = talus::cpu::CpuBackend::new(&setup).unwrap();
    println!("cpu: backend (triangle grid) {:.2} s", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let gpu = talus::gpu::GpuBackend::new(&setup, Default::default()).unwrap_or_else(|e| panic!("GPU backend unavailable ({e})"));
    let (bin_seconds, entries) = gpu.mesh_binning();
    println!("gpu: backend {:.2} s, of which uploading and binning the triangles on the device {bin_seconds:.3} s ({entries} triangle-cell entries, {})", t.elapsed().as_secs_f64(), gpu.adapter());
    for mut backend in [Box::new(cpu) as Box<dyn Backend>, Box::new(gpu)] {
        let kind = backend.kind();
        let t = Instant::now();
        backend.step(4000).unwrap();
        let loads = backend.wall_loads().unwrap();
        let s = backend.snapshot().unwrap();
        let (f, tq) = (DVec3::from(loads[0].force), DVec3::from(loads[0].torque));
        println!("{kind}: 4000 steps in {:.1} s; force {f:?} (weight {force:?}), torque {tq:?} (expected {torque:?})", t.elapsed().as_secs_f64());
        assert!((f - force).length() < 1e-3 * force.length(), "{kind}: force {f}");
        assert!((tq - torque).length() < 1e-3 * torque.length(), "{kind}: torque {tq}");
        for (b, x) in s.position.iter().enumerate() {
            assert!((x[2] - R).abs() < 1e-3 * R && (x[0] - spots[b][0]).abs() < 1e-6, "{kind}: ball {b} rests where it was put: {x:?}");
        }
        assert_eq!(backend.contact_count().unwrap(), 4, "{kind}: one contact per ball");
    }
}

/// A drum (axis z, radius 0.1 m, 64 facets, one facet flat at the bottom) rotating at
/// Ω = 2 rad/s under gravity −y, a ball resting on the bottom facet: Coulomb friction drags it
/// (|F_t| = μ |F_n| while the contact slips; the shear dashpot is cut during slip, dp_mode 2)
/// until its contact point moves with the drum surface, at about v = (2/7) Ω R_d like a ball on
/// a belt (the slip ends after 2 U/(7 μ g) ≈ 12 ms; the facet tilts by Ω t meanwhile, so
/// gravity along it changes v by a few per cent). While the ball is on that facet (25 ms) the
/// rotating mesh gives the trajectory, energies and wall work of an analytic plane rotating
/// with the facet: within 1e-9 on the CPU (only the f64 rounding of the two frame transforms
/// differs); on the GPU within 1e-4 (measured 1.5e-5 in velocity: the f32 rounding of the
/// contact arithmetic, the ball's position in the drum's frame itself being exact to ~1e-6 of a
/// block, see `gpu_rotates_block_vectors_exactly`). CPU and GPU agree to 1e-7 in position and
/// 1e-4 in velocity and spin (measured 4e-9, 1e-5, 4e-6), each relative to its largest
/// magnitude in the run.
#[test]
fn rotating_drum_drags_a_ball_as_friction_predicts() {
    let (omega, fric) = (2.0, 0.5);
    let u = omega * R_DRUM;
    let ball = [0.0, -(R_DRUM * (std::f64::consts::PI / 64.0).cos() - R), 0.0];
    let base = PairParams { dp_nratio: 0.3, dp_sratio: 0.3, dp_mode: 2, ..PairParams::default() };
    let meshed = drum_setup(&[ball], omega, base);
    let plane = rotating_facet_plane(&meshed);
    let (outputs, every) = (25, 100);
    let mut mesh_runs = Vec::new();
    for (mut m, mut p) in both_backends(&meshed).into_iter().zip(both_backends(&plane)) {
        let kind = m.kind();
        let (sm, sp) = (run(m.as_mut(), outputs, every), run(p.as_mut(), outputs, every));
        let (em, ep) = (m.energies().unwrap(), p.energies().unwrap());
        // per output: (slip speed at the contact, |F_t| / |F_n|)
        let contact: Vec<(f64, f64)> = sm.iter().map(|x| drum_contact(x, omega)).collect();
        let slipping: Vec<f64> = contact.iter().zip(&sm).filter(|(c, x)| c.0 > 0.1 * u && x.time > 0.005).map(|(c, _)| c.1).collect();
        let (last, end) = (sm.last().unwrap(), contact[outputs - 1]);
        let v = DVec3::from(last.velocity[0]);
        let d = compare(&sm, &sp);
        let energy = ((em.total() - ep.total()).abs() + (em.wall_work - ep.wall_work).abs()) / ep.wall_work;
        println!("{kind}: friction ratio while slipping {slipping:.4?}; after {:.0} ms: slip {:.2e} m/s, ratio {:.3}, v = {v:.5?} (2/7 Ω R_d = {:.5}); vs the rotating plane: {d:?}, energies {energy:.1e} of the wall work {:.3e} J", last.time * 1e3, end.0, end.1, 2.0 / 7.0 * u, ep.wall_work);
        assert!(slipping.len() >= 3 && slipping.iter().all(|r| (r - fric).abs() < 0.02 * fric), "{kind}: |F_t| = μ |F_n| while slipping: {slipping:?}");
        assert!(end.0 < 0.01 * u && end.1 < fric, "{kind}: the ball rolls with the drum surface: {end:?}");
        assert!((v.x - 2.0 / 7.0 * u).abs() < 0.1 * 2.0 / 7.0 * u, "{kind}: v_x = {}", v.x);
        let tol = if kind == "cpu" { 1e-9 } else { 1e-4 };
        assert!(d.max() <= tol && energy <= tol, "{kind}: the drum's facet and the rotating plane differ: {d:?}, energies {energy:e}");
        mesh_runs.push(sm);
    }
    let d = compare(&mesh_runs[1], &mesh_runs[0]);
    println!("drum, GPU vs CPU over {} steps: {d:?}", outputs as u64 * every);
    assert!(d.position <= 1e-7 && d.velocity <= 1e-4 && d.spin <= 1e-4, "CPU and GPU disagree: {d:?}");
}

/// The set-up with the drum replaced by the plane of its bottom facet, rotating with it.
fn rotating_facet_plane(drum: &Setup) -> Setup {
    let mut s = drum.clone();
    let mesh = s.meshes.remove(0);
    let y = -R_DRUM * (std::f64::consts::PI / 64.0).cos();
    s.walls.push(Wall { motion: mesh.motion.clone(), load_point: mesh.load_point, ..Wall::plane("facet", [0.0, y, 0.0], [0.0, 1.0, 0.0], 0) });
    s
}

/// Slip speed of ball 0's contact with the drum's bottom facet (its contact point against the
/// drum surface there) and the ratio of the tangential to the normal contact force on it; the
/// facet's normal turns with the drum, n(t) = (−sin Ωt, cos Ωt, 0).
fn drum_contact(s: &Snapshot, omega: f64) -> (f64, f64) {
    let (x, v, w, f) = (DVec3::from(s.position[0]), DVec3::from(s.velocity[0]), DVec3::from(s.angular_velocity[0]), DVec3::from(s.force[0]));
    let n = DVec3::new(-(omega * s.time).sin(), (omega * s.time).cos(), 0.0);
    let branch = -n * R;
    let slip = (v + w.cross(branch)) - DVec3::Z.cross(x + branch) * omega;
    let f_n = f.dot(n);
    ((slip - n * slip.dot(n)).length(), (f - n * f_n).length() / f_n.abs().max(1e-300))
}

/// Drum radius, m.
const R_DRUM: f64 = 0.1;

/// The drum (axis z, radius `R_DRUM`, 64 facets, end caps closed, length 0.04 m, 2 rings;
/// turned by half a facet so that one lies flat at the bottom) spinning at `omega` about z, with
/// balls at `positions`, gravity −y, μ 0.5.
fn drum_setup(positions: &[[f64; 3]], omega: f64, base: PairParams) -> Setup {
    let mut particles = Particles::default();
    for &x in positions {
        particles.push(x, [0.0; 3], [0.0; 3], R, 0);
    }
    let mut s = setup_with(material("glass", DENSITY, 1e8, 0.25, 0.5), base, particles, vec![], [0.0, -G, 0.0], DT, cube(0.2));
    let mut tris = generate::drum(R_DRUM, 0.04, 64, 2, true);
    MeshTransform::identity().with_rotation(DVec3::Z, 180.0 / 64.0).apply_all(&mut tris);
    let drum = TriangleMesh::new("drum", tris).unwrap();
    let motion = WallMotion { angular_speed: Profile::constant(omega), axis: DVec3::Z, center: DVec3::ZERO, ..WallMotion::default() };
    s.meshes.push(MeshWall { motion, load_point: [0.0; 3], ..MeshWall::new("drum", drum, 0) });
    s
}

/// Two GPU runs of 36 balls tumbling in a rotating drum (a moving mesh, many contacts) give
/// bit-identical states, energies and loads.
#[test]
fn two_gpu_runs_with_a_moving_mesh_are_bit_identical() {
    let positions: Vec<[f64; 3]> = (0..36).map(|k| [-0.0275 + 0.011 * (k % 6) as f64, -0.088 + 0.011 * (k / 6) as f64, 0.0]).collect();
    let base = PairParams { dp_nratio: 0.3, dp_sratio: 0.3, ..PairParams::default() };
    let mut setup = drum_setup(&positions, 3.0, base);
    setup.particles.velocity.iter_mut().for_each(|v| *v = [0.0, -0.3, 0.0]);
    let mut runs = Vec::new();
    for _ in 0..2 {
        let mut gpu = talus::gpu::GpuBackend::new(&setup, Default::default()).unwrap_or_else(|e| panic!("GPU backend unavailable ({e})"));
        let s = run(&mut gpu, 3, 1000);
        runs.push((s, gpu.energies().unwrap(), gpu.wall_loads().unwrap(), gpu.contact_count().unwrap()));
    }
    let ((a, ea, la, ca), (b, eb, lb, cb)) = (&runs[0], &runs[1]);
    println!("{ca} contacts, drum load {:?}", la[0]);
    assert!(*ca > 6 && la[0].force[1] < 0.0, "the balls touch the drum and each other");
    for (x, y) in a.iter().zip(b) {
        assert_eq!((&x.position, &x.velocity, &x.angular_velocity, &x.force), (&y.position, &y.velocity, &y.angular_velocity, &y.force));
    }
    assert_eq!((ea, la, ca), (eb, lb, cb));
}

/// One ball next to each of 64 small box meshes (2 cm, 1 cm squares): outside boxes facing out,
/// the ball over a convex edge or corner (or a face near one) with a random overlap; inside
/// boxes facing in, the ball in a concave corner. Rule 2 of the contact selection (an edge or
/// vertex point merges into one contact, or gives way to a face) runs on the GPU as on the CPU:
/// the same contact count and the same initial forces up to f32 rounding.
#[test]
fn gpu_contact_selection_matches_cpu_at_edges_and_corners() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_pcg::Pcg64::seed_from_u64(43);
    let half = 0.01;
    let mut particles = Particles::default();
    let mut meshes = Vec::new();
    for k in 0..64 {
        let centre = DVec3::new((k % 4) as f64, ((k / 4) % 4) as f64, (k / 16) as f64) * 0.1;
        let inward = k % 4 == 3;
        let facing = if inward { Facing::Inward } else { Facing::Outward };
        let tris = generate::box_mesh(centre - DVec3::splat(half), centre + DVec3::splat(half), 2, facing);
        meshes.push(MeshWall::new(format!("box{k}"), TriangleMesh::new(format!("box{k}"), tris).unwrap(), 0));
        // a corner (signs s) or an edge (one sign zero) of the box, and a direction out of it
        let s = DVec3::new(rng.random_range(-1..=1) as f64, rng.random_range(-1..=1) as f64, 1.0) * if rng.random_bool(0.5) { 1.0 } else { -1.0 };
        let feature = centre + s * half;
        let overlap = rng.random_range(0.0..0.2) * R;
        let x = if inward {
            // into the concave corner: the ball touches the three faces (or two at an edge)
            feature - s * (R - overlap)
        } else {
            let mut d = common::random::unit(&mut rng).abs() * s.signum();
            d = DVec3::new(if s.x == 0.0 { d.x * rng.random_range(-0.3..0.3) } else { d.x }, if s.y == 0.0 { d.y * rng.random_range(-0.3..0.3) } else { d.y }, d.z);
            feature + d.normalize() * (R - overlap)
        };
        particles.push(x.to_array(), [0.0; 3], [0.0; 3], R, 0);
    }
    let mut setup = setup_with(material("glass", DENSITY, 1e8, 0.25, 0.5), PairParams::default(), particles, vec![], [0.0; 3], DT, cube(0.5));
    setup.meshes = meshes;
    let mut results = Vec::new();
    for mut backend in both_backends(&setup) {
        let s = backend.snapshot().unwrap();
        results.push((backend.kind(), backend.contact_count().unwrap(), s.force));
    }
    let ((_, cpu_count, cpu_f), (_, gpu_count, gpu_f)) = (&results[0], &results[1]);
    let scale = cpu_f.iter().map(|f| DVec3::from(*f).length()).fold(0.0, f64::max);
    let diff = cpu_f.iter().zip(gpu_f).map(|(a, b)| (DVec3::from(*a) - DVec3::from(*b)).length()).fold(0.0, f64::max);
    println!("{cpu_count} contacts on the CPU, {gpu_count} on the GPU; largest force difference {:.1e} of the largest force {scale:.3e} N", diff / scale);
    assert!(*cpu_count >= 64, "every ball touches its box");
    assert_eq!(cpu_count, gpu_count, "the same contacts on both backends");
    assert!(diff <= 1e-4 * scale, "forces differ by {diff:e} N");
}

/// `rotate_blocks` (shaders/mesh/data.wgsl) carries a ball into a moving mesh's t = 0 frame:
/// Rᵀ times a vector of up to 2²² blocks plus an offset, in integer arithmetic with Rᵀ split by
/// `split_entry`. On 4096 random rotations and vectors it matches f64 to 4e-6 of a block
/// (6e-11 m at BLOCK = 2⁻¹⁶ m), where a plain f32 product errs by up to ~1e-7 of the length.
#[test]
fn gpu_rotates_block_vectors_exactly() {
    use glam::{DMat3, DQuat};
    use rand::{Rng, SeedableRng};
    use talus::gpu::meshes::split_entry;
    let block = 2f64.powi(-16);
    let mut rng = rand_pcg::Pcg64::seed_from_u64(47);
    let cases = 4096;
    let (mut inputs, mut expected) = (Vec::new(), Vec::new());
    for _ in 0..cases {
        let r = DMat3::from_quat(DQuat::from_axis_angle(common::random::unit(&mut rng), rng.random_range(-7.0..7.0)));
        let rows = [r.x_axis, r.y_axis, r.z_axis].map(|row| row.to_array().map(split_entry));
        let k = [0; 3].map(|_| (rng.random_range(-1.0..1.0) * 10f64.powf(rng.random_range(0.0..6.6))).round());
        let f = [0; 3].map(|_| rng.random_range(-block..block) as f32);
        inputs.extend(rows.iter().flat_map(|row| row.iter().map(|e| e.0 as f32)));
        inputs.extend(rows.iter().flat_map(|row| row.iter().map(|e| e.1 as f32)));
        inputs.extend(rows.iter().flat_map(|row| row.iter().map(|e| e.2)));
        inputs.extend(k.map(|x| x as f32));
        inputs.extend(f);
        inputs.push(block as f32);
        let d = DVec3::from(k) * block + DVec3::new(f[0] as f64, f[1] as f64, f[2] as f64);
        expected.push(r.transpose() * d);
    }
    let kernel = format!("{}\n{}", talus::gpu::shader::MESH_DATA, include_str!("shaders/mesh_rotate_twin.wgsl"));
    let out = common::twin::run_twin_kernel(&kernel, &inputs, &vec![talus::contact::params::PairParamsGpu::from(&PairParams::default()); cases], 6);
    let mut worst = 0.0f64;
    for (c, want) in expected.iter().enumerate() {
        let o = &out[6 * c..6 * c + 6];
        let got = DVec3::new(o[0] as f64 * block + o[3] as f64, o[1] as f64 * block + o[4] as f64, o[2] as f64 * block + o[5] as f64);
        assert!((0..3).all(|a| o[3 + a] >= 0.0 && (o[3 + a] as f64) < block), "case {c}: offset {:?} outside [0, BLOCK)", &o[3..]);
        worst = worst.max((got - *want).abs().max_element() / block);
    }
    println!("rotate_blocks: largest error {worst:.1e} of a block over {cases} cases");
    assert!(worst <= 4e-6, "rotate_blocks errs by {worst:e} blocks");
}

/// Twenty small separate triangles (each its own facet group) around one ball: the CPU keeps all
/// twenty contacts; a GPU thread keeps at most MESH_GROUPS_MAX = 16 groups, so the GPU backend
/// stops with an error naming the mesh instead of dropping contacts.
#[test]
fn too_many_facet_groups_for_a_gpu_thread_is_a_clear_error() {
    let mut tris = Vec::new();
    for k in 0..20 {
        let a = std::f64::consts::TAU * k as f64 / 20.0;
        let (d, e) = (DVec3::new(a.cos(), a.sin(), 0.0), DVec3::new(-a.sin(), a.cos(), 0.0));
        // a small triangle 0.99 R from the centre, facing it
        let c = d * 0.99 * R;
        tris.push([c + e * 0.001 + DVec3::Z * 0.001, c - e * 0.001 + DVec3::Z * 0.001, c - DVec3::Z * 0.001]);
    }
    let mut mesh = TriangleMesh::new("spiky", tris).unwrap();
    // face the centre: flip the winding where the normal points away
    for t in 0..mesh.len() {
        if mesh.normals[t].dot(-mesh.triangles[t][0]) < 0.0 {
            mesh.triangles[t].swap(1, 2);
        }
    }
    let mesh = TriangleMesh::new("spiky", mesh.triangles).unwrap();
    assert_eq!(mesh.group_count, 20);
    let mut particles = Particles::default();
    particles.push([0.0; 3], [0.0; 3], [0.0; 3], R, 0);
    let mut setup = setup_with(material("glass", DENSITY, 1e8, 0.25, 0.5), PairParams::default(), particles, vec![], [0.0; 3], DT, cube(0.1));
    setup.meshes.push(MeshWall::new("spiky", mesh, 0));
    let mut cpu = talus::cpu::CpuBackend::new(&setup).unwrap();
    assert_eq!(cpu.contact_count().unwrap(), 20, "the CPU keeps every contact");
    match talus::gpu::GpuBackend::new(&setup, Default::default()) {
        Err(talus::TalusError::Device(msg)) => {
            println!("{msg}");
            assert!(msg.contains("spiky") && msg.contains("facet groups") && msg.contains("16") && msg.contains("particle 0"), "{msg}");
        }
        Err(talus::TalusError::NoAdapter(why)) => panic!("this test needs a GPU adapter: {why}"),
        Err(e) => panic!("expected a device error, got {e}"),
        Ok(_) => panic!("the GPU must not silently drop contacts"),
    }
}

/// Global facet groups (history keys) must stay below MESH_KEY_BIT.
#[test]
fn too_many_facet_groups_in_all_meshes_is_an_error() {
    let mut big = TriangleMesh::new("a", generate::box_mesh(DVec3::ZERO, DVec3::ONE, 1, Facing::Inward)).unwrap();
    big.group_count = 1 << 29;
    let walls = vec![MeshWall::new("first", big.clone(), 0), MeshWall::new("second", big.clone(), 0)];
    assert_eq!(mesh_group_bases(&walls).unwrap(), vec![0, 1 << 29]);
    let walls = vec![MeshWall::new("first", big.clone(), 0), MeshWall::new("second", big.clone(), 0), MeshWall::new("third", big, 0)];
    let msg = mesh_group_bases(&walls).unwrap_err().to_string();
    assert!(msg.contains("third") && msg.contains("facet groups"), "{msg}");
}

/// The GPU lists a triangle only in the grid cells its plane passes near (`shaders/mesh/bin.wgsl`,
/// cells at the ball's scale): every ball within reach of a long, tilted triangle still finds
/// it. A fan of twelve long triangles in a plane tilted against every axis, and a single large
/// triangle tilted the other way, with 300 balls at rest at random places along them, each
/// between 0.8 and 1.2 radii from its plane (about half touching), no gravity: after one step
/// the GPU has the CPU's contacts (counted) and every ball's force within 1e-4 of the largest,
/// and a ball the GPU missed would have none.
#[test]
fn gpu_binning_finds_every_long_tilted_triangle_in_reach() {
    use rand::{Rng, SeedableRng};
    let n = DVec3::new(0.3, -0.4, 0.866).normalize();
    let u = n.cross(DVec3::X).normalize();
    let v = n.cross(u);
    let centre = DVec3::new(0.05, -0.02, 0.1);
    let mut triangles = Vec::new();
    for k in 0..12 {
        let (a, b) = (k as f64 * std::f64::consts::TAU / 12.0, (k + 1) as f64 * std::f64::consts::TAU / 12.0);
        triangles.push([centre, centre + 0.6 * (u * a.cos() + v * a.sin()), centre + 0.6 * (u * b.cos() + v * b.sin())]);
    }
    // a second plate, tilted the other way, apart from the fan
    let m = DVec3::new(-0.5, 0.2, 0.8).normalize();
    let (p, q) = (m.cross(DVec3::Y).normalize(), m.cross(m.cross(DVec3::Y).normalize()));
    let far = DVec3::new(1.0, 1.0, 0.5);
    triangles.push([far, far + 0.9 * p, far + 0.9 * q]);
    let mesh = TriangleMesh::new("tilted", triangles.clone()).expect("mesh").with_two_sided(true);
    let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
    let mut balls: Vec<Ball> = Vec::new();
    while balls.len() < 300 {
        let t = &triangles[rng.random_range(0..triangles.len())];
        let (s, r) = (rng.random::<f64>(), rng.random::<f64>());
        let (s, r) = if s + r > 1.0 { (1.0 - s, 1.0 - r) } else { (s, r) };
        let on = t[0] + s * (t[1] - t[0]) + r * (t[2] - t[0]);
        let normal = (t[1] - t[0]).cross(t[2] - t[0]).normalize();
        let side = if rng.random::<bool>() { 1.0 } else { -1.0 };
        let x = on + normal * side * R * rng.random_range(0.8..1.2);
        if balls.iter().all(|b| (DVec3::from(b.0) - x).length() > 2.5 * R) {
            balls.push((x.into(), [0.0; 3], [0.0; 3]));
        }
    }
    // the analytic floor of plane_setup replaced by the mesh (two-sided: balls on both sides)
    let setup = with_mesh(&plane_setup(&balls, [0.0; 3], 0.5), mesh);
    let mut runs = Vec::new();
    for mut backend in [Box::new(talus::cpu::CpuBackend::new(&setup).unwrap()) as Box<dyn Backend>, Box::new(talus::gpu::GpuBackend::new(&setup, Default::default()).unwrap())] {
        backend.step(1).unwrap();
        runs.push((backend.contact_count().unwrap(), backend.snapshot().unwrap()));
    }
    let (cpu, gpu) = (&runs[0], &runs[1]);
    assert!(cpu.0 > 100 && cpu.0 < 300, "about half of the balls touch: {}", cpu.0);
    assert_eq!(cpu.0, gpu.0, "contacts");
    let largest = cpu.1.force.iter().map(|f| DVec3::from(*f).length()).fold(0.0, f64::max);
    for (b, (f, g)) in cpu.1.force.iter().zip(&gpu.1.force).enumerate() {
        assert!((DVec3::from(*f) - DVec3::from(*g)).length() < 1e-4 * largest, "ball {b}: CPU force {f:?}, GPU {g:?}");
    }
}
