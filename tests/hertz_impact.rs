//! Elastic Hertz head-on impacts against theory, on both backends: contact duration and peak
//! force within 1 % (spec `hertz-pfc.txt` eqs (4)–(6)).

mod common;

use common::*;
use talus::contact::normal::hertz_coefficient;
use talus::contact::params::PairParams;
use talus::setup::Particles;
use talus::{Backend, Setup};

const R: f64 = 0.01;
const DENSITY: f64 = 2500.0;
const DT: f64 = 2e-7;

fn ball_mass() -> f64 {
    DENSITY * 4.0 / 3.0 * std::f64::consts::PI * R.powi(3)
}

/// Step one at a time, recording the contact force on particle 0; returns (duration, peak).
fn measure(backend: &mut dyn Backend, max_steps: u64, dt: f64) -> (f64, f64) {
    let mut in_contact = 0u64;
    let mut peak: f64 = 0.0;
    let mut seen = false;
    for _ in 0..max_steps {
        backend.step(1).unwrap();
        let s = backend.snapshot().unwrap();
        let f = s.force[0];
        let magnitude = (f[0] * f[0] + f[1] * f[1] + f[2] * f[2]).sqrt();
        if magnitude > 0.0 {
            in_contact += 1;
            seen = true;
            peak = peak.max(magnitude);
        } else if seen {
            break;
        }
    }
    assert!(seen, "{}: the bodies never touched", backend.kind());
    (in_contact as f64 * dt, peak)
}

fn check(setup: &Setup, m_eff: f64, r_bar: f64, v: f64) {
    let p = setup.pairs.get(0, 0);
    let (t_theory, f_theory) = hertz_theory(hertz_coefficient(p, r_bar), m_eff, v);
    for mut backend in both_backends(setup) {
        let (t, f) = measure(backend.as_mut(), (3.0 * t_theory / DT) as u64, DT);
        let (et, ef) = ((t - t_theory) / t_theory, (f - f_theory) / f_theory);
        println!("{}: duration {t:.6e} s (theory {t_theory:.6e}, error {:+.4}%), peak {f:.6e} N (theory {f_theory:.6e}, error {:+.4}%)", backend.kind(), et * 100.0, ef * 100.0);
        assert!(et.abs() < 0.01, "{}: duration error {:.3}%", backend.kind(), et * 100.0);
        assert!(ef.abs() < 0.01, "{}: peak force error {:.3}%", backend.kind(), ef * 100.0);
    }
}

#[test]
fn two_balls_head_on_match_hertz_theory() {
    let v = 0.5;
    let mut particles = Particles::default();
    particles.push([-R - 1e-6, 0.0, 0.0], [v, 0.0, 0.0], [0.0; 3], R, 0);
    particles.push([R + 1e-6, 0.0, 0.0], [-v, 0.0, 0.0], [0.0; 3], R, 0);
    let setup = setup_with(material("glass", DENSITY, 1e9, 0.25, 0.0), PairParams::default(), particles, vec![], [0.0; 3], DT, cube(0.05));
    // eq (6): 1/R̄ = ½ (1/R + 1/R) → R̄ = R; relative approach speed 2v
    check(&setup, ball_mass() / 2.0, R, 2.0 * v);
}

#[test]
fn ball_on_wall_matches_hertz_theory() {
    let v = 0.5;
    let mut particles = Particles::default();
    particles.push([0.001, 0.002, R + 1e-6], [0.0, 0.0, -v], [0.0; 3], R, 0);
    let setup = setup_with(material("glass", DENSITY, 1e9, 0.25, 0.0), PairParams::default(), particles, vec![floor(0.0)], [0.0; 3], DT, cube(0.05));
    // eq (6) with a facet radius ∞: R̄ = 2R; effective mass = the ball's
    check(&setup, ball_mass(), 2.0 * R, v);
}
