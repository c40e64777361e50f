//! A ball launched without spin along a plane slides, friction slows it and spins it up,
//! and it then rolls without slipping at 5/7 of its initial speed (solid sphere, I = 2/5 m R²).

mod common;

use common::*;
use talus::contact::params::PairParams;
use talus::setup::Particles;

#[test]
fn sliding_ball_ends_rolling_at_five_sevenths() {
    let (r, v0, mu, g) = (0.01, 1.0, 0.3, 9.81);
    let mut particles = Particles::default();
    // resting overlap under its own weight is ~1e-6 m; start just touching
    particles.push([0.0, 0.0, r], [v0, 0.0, 0.0], [0.0; 3], r, 0);
    // slip-cut dashpot (mode 3): pure Coulomb friction while sliding, damped spring while rolling
    let base = PairParams { dp_nratio: 0.7, dp_sratio: 0.7, dp_mode: 3, ..PairParams::default() };
    let setup = setup_with(material("steel", 7800.0, 1e8, 0.3, mu), base, particles, vec![floor(0.0)], [0.0, 0.0, -g], 2e-5, cube(1.0));
    // sliding lasts 2 v0 / (7 μ g) ≈ 0.068 s; run 0.12 s
    let t_slide = 2.0 * v0 / (7.0 * mu * g);
    for mut backend in both_backends(&setup) {
        let steps = (0.12 / setup.dt) as u64;
        // halfway through the sliding phase the ball still slips: v > ω R
        backend.step((0.5 * t_slide / setup.dt) as u64).unwrap();
        let s = backend.snapshot().unwrap();
        assert!(s.velocity[0][0] - s.angular_velocity[0][1] * r > 0.2 * v0, "{}: should still be sliding", backend.kind());
        backend.step(steps - (0.5 * t_slide / setup.dt) as u64).unwrap();
        let s = backend.snapshot().unwrap();
        let v = s.velocity[0][0];
        let rolling_speed = s.angular_velocity[0][1] * r;
        println!("{}: final v = {v:.6} m/s (5/7 v0 = {:.6}), ω R = {rolling_speed:.6}", backend.kind(), 5.0 / 7.0 * v0);
        assert!((v - 5.0 / 7.0 * v0).abs() < 0.005 * v0, "{}: v = {v}", backend.kind());
        assert!((v - rolling_speed).abs() < 0.002 * v0, "{}: not rolling: v = {v}, ωR = {rolling_speed}", backend.kind());
        let e = backend.energies().unwrap();
        // the energy lost to slip is ½ m v0² · 2/7
        let m = 7800.0 * 4.0 / 3.0 * std::f64::consts::PI * r.powi(3);
        let expected = 0.5 * m * v0 * v0 * 2.0 / 7.0;
        assert!((e.slip - expected).abs() < 0.02 * expected, "{}: slip work {} vs {expected}", backend.kind(), e.slip);
    }
}
