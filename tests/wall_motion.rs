//! Moving walls and wall loads on both backends: a translating floor carries a resting ball to
//! 2/7 of its speed (then rolls with it), a turntable makes a resting ball orbit its axis at
//! 2/7 of its angular speed, a piston reflects a ball at twice its speed with the work booked
//! as `wall_work`, and the load on a floor under a resting ball is its weight, with the torque
//! about the stated point.

mod common;

use common::*;
use glam::DVec3;
use talus::contact::params::PairParams;
use talus::motion::{Profile, WallMotion};
use talus::setup::{Particles, Setup, Wall};
use talus::Backend;

const R: f64 = 0.005;
const DENSITY: f64 = 2500.0;
const G: f64 = 9.81;
const DT: f64 = 5e-6;

fn mass() -> f64 {
    Setup::sphere_mass(DENSITY, R)
}

/// One ball resting on (just touching) `floor`, gravity −z, Hertz with normal damping.
fn resting_ball(position: [f64; 3], floor: Wall, fric: f64) -> Setup {
    let mut particles = Particles::default();
    particles.push(position, [0.0; 3], [0.0; 3], R, 0);
    // the shear dashpot damps the stick oscillation of the tangential spring
    let base = PairParams { dp_nratio: 0.5, dp_sratio: 0.5, ..PairParams::default() };
    setup_with(material("glass", DENSITY, 1e8, 0.25, fric), base, particles, vec![floor], [0.0, 0.0, -G], DT, cube(0.2))
}

fn moving_floor(velocity: [f64; 3]) -> Wall {
    Wall { motion: WallMotion { velocity: Profile::constant(DVec3::from(velocity)), ..WallMotion::default() }, ..floor(0.0) }
}

/// Horizontal velocity of the ball's lowest point (where it touches the floor).
fn contact_point_velocity(s: &talus::Snapshot) -> DVec3 {
    let v = DVec3::from(s.velocity[0]) + DVec3::from(s.angular_velocity[0]).cross(DVec3::new(0.0, 0.0, -R));
    DVec3::new(v.x, v.y, 0.0)
}

/// Friction impulse J = m v on the ball and −R ω = (5/2) J/m until the contact point moves
/// with the belt: v = 2U/7, ω_y = −5U/(7R), whatever the normal force did meanwhile.
#[test]
fn translating_floor_carries_a_resting_ball_to_two_sevenths_of_its_speed() {
    let u = 0.1;
    let setup = resting_ball([0.0, 0.0, R], moving_floor([u, 0.0, 0.0]), 0.5);
    // slip lasts 2U/(7 μ g) = 5.8 ms; run 20 ms
    for mut backend in both_backends(&setup) {
        let e0 = backend.energies().unwrap();
        backend.step(4_000).unwrap();
        let s = backend.snapshot().unwrap();
        let e = backend.energies().unwrap();
        let kind = backend.kind();
        let (v, w) = (s.velocity[0][0], s.angular_velocity[0][1]);
        let slip = contact_point_velocity(&s) - DVec3::new(u, 0.0, 0.0);
        println!("{kind}: v = {v:.6} (2U/7 = {:.6}), ω_y = {w:.4} ({:.4}), contact slip {:.2e} m/s, wall work {:.4e} J", 2.0 * u / 7.0, -5.0 * u / (7.0 * R), slip.length(), e.wall_work);
        assert!((v - 2.0 * u / 7.0).abs() < 0.01 * 2.0 * u / 7.0, "{kind}: v = {v}");
        assert!((w + 5.0 * u / (7.0 * R)).abs() < 0.01 * 5.0 * u / (7.0 * R), "{kind}: ω_y = {w}");
        assert!(slip.length() < 1e-3 * u, "{kind}: the ball does not roll with the floor (slip {slip})");
        // the belt did work: kinetic energy gained + slip work; the balance holds
        let k_gain = e.kinetic() - e0.kinetic();
        assert!(e.wall_work > k_gain && e.slip > 0.0, "{kind}: wall work {} vs kinetic gain {k_gain}", e.wall_work);
        let drift = (e.total() - e0.total()).abs() / e.wall_work;
        println!("{kind}: energy balance error {drift:.2e} of the wall work");
        assert!(drift < 1e-2, "{kind}: energy balance off by {drift:e} of the wall work");
    }
}

/// On a turntable spinning at Ω a rolling ball obeys dv/dt = (2/7) Ω ẑ × v: starting at rest at
/// radius d, after a short slip it moves at (2/7) Ω d on the circle of radius d about the axis.
#[test]
fn turntable_makes_a_resting_ball_orbit_at_two_sevenths_of_its_speed() {
    let (omega, d) = (2.0, 0.05);
    let turntable = Wall { motion: WallMotion { angular_speed: Profile::constant(omega), axis: DVec3::Z, center: DVec3::ZERO, ..WallMotion::default() }, ..floor(0.0) };
    let setup = resting_ball([d, 0.0, R], turntable, 0.5);
    for mut backend in both_backends(&setup) {
        backend.step(20_000).unwrap(); // 0.1 s: a twentieth of the orbit
        let s = backend.snapshot().unwrap();
        let kind = backend.kind();
        let x = DVec3::from(s.position[0]);
        let v = DVec3::from(s.velocity[0]);
        let surface = DVec3::Z.cross(DVec3::new(x.x, x.y, 0.0)) * omega;
        let slip = contact_point_velocity(&s) - surface;
        let radius = x.truncate().length();
        println!("{kind}: speed {:.6} (2/7 Ω d = {:.6}), radius {radius:.6} (d = {d}), contact slip {:.2e} m/s", v.length(), 2.0 / 7.0 * omega * d, slip.length());
        assert!((v.length() - 2.0 / 7.0 * omega * d).abs() < 0.01 * 2.0 / 7.0 * omega * d, "{kind}: speed {}", v.length());
        assert!((radius - d).abs() < 0.01 * d, "{kind}: radius {radius}");
        assert!(v.dot(x.truncate().extend(0.0)).abs() < 0.02 * v.length() * radius, "{kind}: velocity not tangential");
        assert!(slip.length() < 1e-3 * omega * d, "{kind}: the ball does not roll on the turntable (slip {slip})");
    }
}

/// An elastic frictionless ball at rest hit by a piston moving at V leaves at 2V; the piston's
/// work equals the kinetic energy it gave (wall_work).
#[test]
fn piston_reflects_a_ball_at_twice_its_speed_and_books_its_work() {
    let v_wall = 0.5;
    let piston = Wall {
        motion: WallMotion { velocity: Profile { keys: vec![(0.0, DVec3::ZERO), (1e-4, DVec3::new(v_wall, 0.0, 0.0))] }, ..WallMotion::default() },
        ..Wall::plane("piston", [-R - 1e-4, 0.0, 0.0], [1.0, 0.0, 0.0], 0)
    };
    let mut particles = Particles::default();
    particles.push([0.0; 3], [0.0; 3], [0.0; 3], R, 0);
    let setup = setup_with(material("glass", DENSITY, 1e8, 0.25, 0.0), PairParams::default(), particles, vec![piston], [0.0; 3], 1e-7, cube(0.2));
    for mut backend in both_backends(&setup) {
        // the piston accelerates over 0.1 ms, meets the ball at 0.25 ms, contact lasts 0.28 ms
        backend.step(10_000).unwrap();
        let s = backend.snapshot().unwrap();
        let e = backend.energies().unwrap();
        let kind = backend.kind();
        assert_eq!(backend.contact_count().unwrap(), 0, "{kind}: still in contact");
        let v = s.velocity[0][0];
        println!("{kind}: ball speed {v:.7} (2V = {}), wall work {:.6e} J, kinetic {:.6e} J", 2.0 * v_wall, e.wall_work, e.kinetic());
        assert!((v - 2.0 * v_wall).abs() < 1e-3 * 2.0 * v_wall, "{kind}: v = {v}");
        assert!((e.wall_work - e.kinetic()).abs() < 1e-3 * e.kinetic(), "{kind}: wall work {} vs kinetic {}", e.wall_work, e.kinetic());
        // the wall's pose: it moved ∫v dt
        let x_wall = setup.walls[0].state_at(s.time).point.x;
        let expect = -R - 1e-4 + v_wall * (s.time - 0.5e-4);
        assert!((x_wall - expect).abs() < 1e-12, "wall at {x_wall}, expected {expect}");
    }
}

/// A settled ball at (x, y) on a floor: the floor carries its weight, torque (x, y, 0) × F
/// about the origin; CPU and GPU report it through `wall_loads` and `walls.csv`.
#[test]
fn floor_load_under_a_resting_ball_is_its_weight() {
    let (x, y) = (0.03, -0.02);
    let mut floor_wall = floor(0.0);
    floor_wall.load_point = [0.0; 3];
    let mut setup = resting_ball([x, y, R], floor_wall, 0.5);
    setup.pairs.entries[0].dp_nratio = 0.9;
    let weight = mass() * G;
    for mut backend in both_backends(&setup) {
        backend.step(8_000).unwrap();
        let kind = backend.kind();
        let loads = backend.wall_loads().unwrap();
        assert_eq!(loads.len(), 1);
        let (f, t) = (DVec3::from(loads[0].force), DVec3::from(loads[0].torque));
        let t_expect = DVec3::new(x, y, 0.0).cross(DVec3::new(0.0, 0.0, -weight));
        println!("{kind}: force {f:?} (weight {weight:.6e}), torque {t:?} (expected {t_expect:?})");
        assert!((f - DVec3::new(0.0, 0.0, -weight)).length() < 1e-3 * weight, "{kind}: force {f}");
        assert!((t - t_expect).length() < 1e-3 * t_expect.length(), "{kind}: torque {t}");
    }
    // walls.csv: one row per wall and output, the same numbers
    let dir = tempfile::tempdir().unwrap();
    setup.steps = 200;
    setup.output_every = 100;
    let mut cpu = talus::cpu::CpuBackend::new(&setup).unwrap();
    talus::run::run_scene(&setup, &mut cpu, dir.path(), talus::run::RunOptions::default()).unwrap();
    let csv = std::fs::read_to_string(dir.path().join("walls.csv")).expect("walls.csv");
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "step,time,wall,fx,fy,fz,tx,ty,tz,px,py,pz");
    assert_eq!(lines.len(), 3, "one row per output: {csv}");
    let last: Vec<&str> = lines[2].split(',').collect();
    assert_eq!((last[0], last[2]), ("200", "floor"));
    let fz: f64 = last[5].parse().unwrap();
    assert_eq!(fz, cpu.wall_loads().unwrap()[0].force[2]);
}

/// The `motion` and `load_point` keys become the wall's `WallMotion` (box: every face alike,
/// centred on the box by default).
#[test]
fn scene_motion_keys_parse() {
    let text = r#"{
      "time_step": 1e-6, "steps": 10,
      "materials": { "glass": { "density": 2500, "hz_shear": 1e9 } },
      "particles": [ { "position": [0, 0, 0.05], "radius": 0.01 } ],
      "walls": [
        { "type": "plane", "point": [0, 0, 0], "normal": [0, 0, 1],
          "motion": { "velocity": [[0, [0, 0, 0]], [0.5, [1, 0, 0]]] }, "load_point": [1, 2, 3] },
        { "type": "box", "min": [-1, -1, -1], "max": [1, 1, 3], "open": ["+z"],
          "motion": { "angular_velocity": 3.0, "axis": [0, 0, 2] } }
      ]
    }"#;
    let s = talus::scene::parse_str(text, std::path::Path::new("m.json")).unwrap();
    assert_eq!(s.walls.len(), 1 + 5);
    let plane = &s.walls[0];
    assert_eq!(plane.load_point, [1.0, 2.0, 3.0]);
    assert_eq!(plane.motion.velocity.keys, vec![(0.0, DVec3::ZERO), (0.5, DVec3::X)]);
    // ∫v over 1 s: 0.25 (ramp) + 0.5 (held)
    assert!((plane.state_at(1.0).point - DVec3::new(0.75, 0.0, 0.0)).length() < 1e-12);
    for face in &s.walls[1..] {
        assert_eq!(face.motion.center, DVec3::new(0.0, 0.0, 1.0));
        assert_eq!(face.motion.axis, DVec3::Z);
        assert_eq!(face.motion.angular_speed.value(7.0), 3.0);
        assert_eq!(face.load_point, [0.0, 0.0, 1.0]);
    }
    // the -x face (x = -1) after a quarter turn about z through (0, 0, 1) sits at y = -1, facing +y
    let now = s.walls[1].state_at(std::f64::consts::FRAC_PI_2 / 3.0);
    assert!((now.point.y + 1.0).abs() < 1e-12 && (now.normal - DVec3::Y).length() < 1e-12, "{now:?}");
}
