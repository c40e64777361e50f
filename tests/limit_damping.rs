//! `limit_damping` (hooke, hertz_mindlin, hertz_viscous): in an impact that slides throughout,
//! the tangential impulse equals the rigid-body sliding value μ(1+e)m v_n (e the measured normal
//! restitution) within 1 % on both backends; without it the specs' laws miss it by the
//! documented amounts (docs/contact-models.md, "limit_damping").

mod common;

use common::impacts::{ball_mass, contact_time, DENSITY, POISSON, RADIUS, SHEAR_MODULUS};
use talus::contact::params::{ContactModel, PairParams};
use talus::setup::{Particles, Setup};

const ANGLE_DEG: f64 = 80.0;
const SPEED: f64 = 1.0;
const FRIC: f64 = 0.1;
/// Hooke stiffness (N/m): t_c ≈ 0.36 ms for the 1.3 g ball.
const K_N: f64 = 1e5;
const PER_CONTACT: f64 = 1000.0;

fn sliding_impact(base: PairParams) -> Setup {
    impact(base, ANGLE_DEG)
}

/// A ball on the floor at `angle_deg` from the normal, 1 m/s.
fn impact(base: PairParams, angle_deg: f64) -> Setup {
    let a = angle_deg.to_radians();
    let v_n = SPEED * a.cos();
    let t_c = if base.model == ContactModel::Hooke { std::f64::consts::PI * (ball_mass() / K_N).sqrt() } else { contact_time(true, v_n) };
    let dt = t_c / PER_CONTACT;
    let mut particles = Particles::default();
    // Touching the floor (gap 0), so the first step already books the contact.
    particles.push([0.0, 0.0, RADIUS], [SPEED * a.sin(), 0.0, -v_n], [0.0; 3], RADIUS, 0);
    let mat = common::material("ball", DENSITY, SHEAR_MODULUS, POISSON, FRIC);
    common::setup_with(mat, base, particles, vec![common::floor(0.0)], [0.0; 3], dt, common::cube(0.1))
}

/// Returns, per backend, (tangential impulse / μ(1+e) m v_n − 1, e).
fn impulse_excess(base: PairParams) -> Vec<(String, f64, f64)> {
    let setup = sliding_impact(base);
    let m = ball_mass();
    let mut out = Vec::new();
    for mut backend in common::both_backends(&setup) {
        let s0 = backend.snapshot().unwrap();
        let (vt0, vn0) = (s0.velocity[0][0], -s0.velocity[0][2]);
        let (e, _) = common::restitution(backend.as_mut(), 2, 10, 20 * PER_CONTACT as u64);
        let s = backend.snapshot().unwrap();
        let j_t = m * (vt0 - s.velocity[0][0]);
        let theory = FRIC * (1.0 + e) * m * vn0;
        out.push((backend.kind().to_string(), j_t / theory - 1.0, e));
    }
    out
}

fn check(name: &str, base: PairParams, without_at_least: f64) {
    for (kind, excess, e) in impulse_excess(PairParams { limit_damping: false, ..base }) {
        println!("{name} {kind} without limit_damping: e = {e:.4}, tangential impulse / μ(1+e)m v_n − 1 = {:+.3} %", 100.0 * excess);
        assert!(excess.abs() > without_at_least, "{name} {kind}: expected the spec's deviation (> {without_at_least}), got {excess:e}");
    }
    for (kind, excess, e) in impulse_excess(PairParams { limit_damping: true, ..base }) {
        println!("{name} {kind} with limit_damping: e = {e:.4}, tangential impulse / μ(1+e)m v_n − 1 = {:+.4} %", 100.0 * excess);
        assert!(excess.abs() < 0.01, "{name} {kind}: limit_damping misses the sliding impulse by {excess:e}");
    }
}

#[test]
fn hertz_mindlin_sliding_impulse_matches_theory() {
    check("hertz_mindlin", PairParams { model: ContactModel::HertzMindlin, restitution: 0.5, ..PairParams::default() }, 0.02);
}

#[test]
fn hooke_sliding_impulse_matches_theory() {
    let base = PairParams { model: ContactModel::Hooke, elastic_stiffness: K_N, restitution: 0.5, limit_force: true, ..PairParams::default() };
    check("hooke limitForce", base, 0.05);
}

#[test]
fn hertz_viscous_sliding_impulse_matches_theory() {
    // noAttraction (the default) already keeps the normal force compressive: limit_damping
    // changes nothing there; without either, the attraction at the end of contact shows.
    let base = PairParams { model: ContactModel::HertzViscous, restitution: 0.5, no_attraction: false, ..PairParams::default() };
    check("hertz_viscous", base, 0.02);
}

/// limit_damping keeps the restitution asked for (issue 38; `contact::calibration`): a head-on
/// impact on the floor rebounds at the specified e within 1 % on both backends, where the
/// dashpot cut at zero force without the calibration gave 0.550 for e = 0.5.
#[test]
fn limit_damping_keeps_the_specified_restitution() {
    for model in [ContactModel::HertzMindlin, ContactModel::Hooke, ContactModel::HertzViscous] {
        for e in [0.2, 0.5, 0.8] {
            let base = PairParams { model, elastic_stiffness: K_N, restitution: e, no_attraction: false, limit_damping: true, ..PairParams::default() };
            for mut backend in common::both_backends(&impact(base, 0.0)) {
                let (measured, _) = common::restitution(backend.as_mut(), 2, 10, 20 * PER_CONTACT as u64);
                println!("{} {} e = {e}: rebounds at {measured:.5}", model.name(), backend.kind());
                assert!((measured / e - 1.0).abs() < 0.01, "{} {}: e = {e} asked, {measured} measured", model.name(), backend.kind());
            }
        }
    }
}

/// `hysteretic` takes e as `dp_en`; with `limit_damping` its Hunt–Crossley dashpot is calibrated
/// too, in each dashpot mode: mode 0's Gonthier approximation, which misses e by a few per cent
/// without it, rebounds at `dp_en` within 1 % on both backends (mode 2 from 0.3 up: below, its
/// dashpot cannot damp enough and such a scene is refused).
#[test]
fn limit_damping_keeps_the_hysteretic_restitution() {
    for (mode, e) in [(0u32, 0.2), (0, 0.5), (0, 0.8), (2, 0.5)] {
        let base = PairParams { model: ContactModel::Hysteretic, dp_mode: mode, dp_en: e, limit_damping: true, ..PairParams::default() };
        for mut backend in common::both_backends(&impact(base, 0.0)) {
            let (measured, _) = common::restitution(backend.as_mut(), 2, 10, 20 * PER_CONTACT as u64);
            println!("hysteretic mode {mode} {} e = {e}: rebounds at {measured:.5}", backend.kind());
            assert!((measured / e - 1.0).abs() < 0.01, "hysteretic mode {mode} {}: e = {e} asked, {measured} measured", backend.kind());
        }
    }
}

/// limit_damping keeps the total normal force on the ball repulsive in every step.
#[test]
fn limit_damping_never_attracts() {
    for model in [ContactModel::HertzMindlin, ContactModel::Hooke, ContactModel::HertzViscous] {
        let base = PairParams { model, elastic_stiffness: K_N, restitution: 0.15, no_attraction: false, limit_damping: true, ..PairParams::default() };
        let setup = sliding_impact(base);
        for mut backend in common::both_backends(&setup) {
            let mut min_fz = f64::MAX;
            let mut touched = false;
            for _ in 0..20 * PER_CONTACT as u64 {
                backend.step(1).unwrap();
                let active = backend.contact_count().unwrap() > 0;
                touched |= active;
                if active {
                    min_fz = min_fz.min(backend.snapshot().unwrap().force[0][2]);
                }
                if touched && !active {
                    break;
                }
            }
            println!("{} {}: min normal force on the ball {min_fz:e} N", model.name(), backend.kind());
            assert!(touched && min_fz >= 0.0, "{} {}: attractive normal force {min_fz:e}", model.name(), backend.kind());
        }
    }
}
