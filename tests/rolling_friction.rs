//! Rolling resistance (hertz-mindlin-musen "Rolling friction", src/contact/rolling.rs).
//!
//! Derivation for a solid sphere (I = 2/5 m R²) rolling on a plane along +x, ω = ω_y ŷ with
//! v = ω_y R: the rolling torque is −μ_r m g R ŷ, the friction force f x̂ at the contact point
//! (−R ẑ) adds the torque −R f ŷ. Then m v̇ = f and I ω̇ = −R f − μ_r m g R; rolling without slip
//! (v̇ = R ω̇) gives (I/R² + m) v̇ = −μ_r m g, so a = μ_r g/(1 + 2/5) = 5/7 μ_r g, carried by a
//! friction force |f| = 5/7 μ_r m g (static as long as μ ≥ 5/7 μ_r). All the kinetic energy goes
//! into the rolling-friction work (counted in `slip`); friction at a non-slipping contact does
//! no work.

mod common;

use common::*;
use glam::DVec3;
use talus::contact::geometry::ball_wall_geometry;
use talus::contact::params::{ContactModel, PairParams};
use talus::contact::rolling::{previous_rolling_power, rolling_resistance, rolling_torque};
use talus::setup::Particles;

#[test]
fn torque_opposes_own_spin_and_vanishes_without_spin_or_coefficient() {
    let w = DVec3::new(1.0, -2.0, 3.0);
    let t = rolling_torque(0.1, 5.0, 0.01, w);
    assert!((t.length() - 0.1 * 5.0 * 0.01).abs() < 1e-15 && t.dot(w) < 0.0 && t.cross(w).length() < 1e-15);
    assert_eq!(rolling_torque(0.1, 5.0, 0.01, DVec3::ZERO), DVec3::ZERO);
    assert_eq!(rolling_torque(0.0, 5.0, 0.01, w), DVec3::ZERO);
    // ball–wall: nothing on the wall; the work is the trapezoid ½ μ_r (|F_n| + |F_n|₀) r |ω| Δt
    let g = ball_wall_geometry(0.0099, DVec3::Z, 0.01, 1.0, DVec3::ZERO, w, DVec3::ZERO);
    let p = PairParams { rolling_fric: 0.1, ..PairParams::default() };
    let r = rolling_resistance(&p, &g, 5.0, 3.0, 1e-3);
    assert_eq!(r.torque_j, DVec3::ZERO);
    assert!((r.work - 0.1 * 0.5 * (5.0 + 3.0) * g.arm_i * w.length() * 1e-3).abs() < 1e-15);
    assert!((previous_rolling_power(&p, &g, 3.0) - 0.1 * 3.0 * g.arm_i * w.length()).abs() < 1e-12);
}

#[test]
fn rolling_ball_decelerates_at_five_sevenths_mu_r_g_and_stops() {
    let (r, density, shear, poisson, mu, mu_r, g, v0) = (0.01, 2500.0, 1e8, 0.3, 0.5, 0.1, 9.81, 0.2);
    let m = density * 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
    // static overlap under the weight: 4/3 E* √R δ^{3/2} = m g
    let e_star = shear / (1.0 - poisson);
    let delta = (m * g / (4.0 / 3.0 * e_star * r.sqrt())).powf(2.0 / 3.0);
    let lever = r - 0.5 * delta;
    let mut particles = Particles::default();
    particles.push([0.0, 0.0, r - delta], [v0, 0.0, 0.0], [0.0, v0 / lever, 0.0], r, 0);
    let base = PairParams { model: ContactModel::HertzMindlin, restitution: 0.3, rolling_fric: mu_r, ..PairParams::default() };
    let setup = setup_with(material("glass", density, shear, poisson, mu), base, particles, vec![floor(0.0)], [0.0, 0.0, -g], 2e-5, cube(1.0));
    let a_theory = 5.0 / 7.0 * mu_r * g;
    let t_stop = v0 / a_theory;
    let kinetic0 = 0.5 * m * v0 * v0 * (1.0 + 0.4 * (r / lever).powi(2));
    for mut backend in both_backends(&setup) {
        let kind = backend.kind();
        let (t1, t2) = (0.2 * t_stop, 0.8 * t_stop);
        let n1 = (t1 / setup.dt).round() as u64;
        let n2 = (t2 / setup.dt).round() as u64;
        backend.step(n1).unwrap();
        let s1 = backend.snapshot().unwrap();
        backend.step(n2 - n1).unwrap();
        let s2 = backend.snapshot().unwrap();
        let a = (s1.velocity[0][0] - s2.velocity[0][0]) / ((n2 - n1) as f64 * setup.dt);
        println!("{kind}: a = {a:.6} m/s² (5/7 μ_r g = {a_theory:.6}), v(t1) = {:.6}, v(t2) = {:.6}", s1.velocity[0][0], s2.velocity[0][0]);
        assert!((a - a_theory).abs() < 0.01 * a_theory, "{kind}: deceleration {a} vs {a_theory}");
        for s in [&s1, &s2] {
            let slip = s.velocity[0][0] - s.angular_velocity[0][1] * lever;
            assert!(slip.abs() < 1e-3 * v0, "{kind}: not rolling: v − ωR = {slip}");
        }
        backend.step(((1.3 * t_stop - t2) / setup.dt) as u64).unwrap();
        let s3 = backend.snapshot().unwrap();
        let (v, w) = (s3.velocity[0][0], s3.angular_velocity[0][1]);
        println!("{kind}: after 1.3 t_stop: v = {v:.3e} m/s, ωR = {:.3e} m/s", w * lever);
        assert!(v.abs() < 2e-3 * v0 && (w * lever).abs() < 2e-3 * v0, "{kind}: did not stop: v = {v}, ωR = {}", w * lever);
        let e = backend.energies().unwrap();
        println!("{kind}: rolling+slip work {:.6e} J, dashpot {:.3e} J, initial kinetic {kinetic0:.6e} J", e.slip, e.dashpot);
        assert!((e.slip - kinetic0).abs() < 0.01 * kinetic0, "{kind}: rolling work {} vs initial kinetic energy {kinetic0}", e.slip);
    }
}

#[test]
fn no_rolling_resistance_without_coefficient() {
    let (r, v0) = (0.01, 0.2);
    let mut particles = Particles::default();
    let delta = 1.1e-6;
    particles.push([0.0, 0.0, r - delta], [v0, 0.0, 0.0], [0.0, v0 / (r - 0.5 * delta), 0.0], r, 0);
    let base = PairParams { model: ContactModel::HertzMindlin, restitution: 0.3, ..PairParams::default() };
    let setup = setup_with(material("glass", 2500.0, 1e8, 0.3, 0.5), base, particles, vec![floor(0.0)], [0.0, 0.0, -9.81], 2e-5, cube(1.0));
    for mut backend in both_backends(&setup) {
        backend.step(5000).unwrap();
        let v = backend.snapshot().unwrap().velocity[0][0];
        assert!((v - v0).abs() < 1e-3 * v0, "{}: v = {v}", backend.kind());
    }
}
