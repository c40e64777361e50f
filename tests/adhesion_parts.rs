//! Analytic checks of the adhesion parts (`src/contact/adhesion.rs`): the JKR branch, its
//! first-touch, pull-off and break forces, every part's energy as the integral of its force.

use std::f64::consts::PI;

use talus::contact::adhesion::*;
use talus::contact::geometry::ball_ball_geometry;
use talus::contact::params::{Adhesion, PairParams};
use glam::DVec3;

const E: f64 = 7.0e9;
const R: f64 = 5e-4;
const GAMMA: f64 = 0.05;

fn beta() -> f64 {
    jkr_beta(GAMMA, E)
}

#[test]
fn jkr_radius_solves_the_branch() {
    let b = beta();
    let dc = -jkr_break_gap(R, b);
    for k in 0..200 {
        let overlap = dc + (k as f64 / 199.0) * (1e-5 - dc);
        let a = jkr_contact_radius(R, b, overlap);
        let back = a * a / R - 2.0 * b * a.sqrt();
        assert!((back - overlap).abs() <= 1e-9 * (overlap.abs() + dc.abs()), "δ {overlap}: a {a} gives δ {back}");
        let x_c = (0.5 * b * R).cbrt();
        assert!(a >= x_c * x_c * (1.0 - 1e-12));
    }
}

#[test]
fn jkr_forces_at_touch_pulloff_and_break() {
    let b = beta();
    let fc = jkr_pulloff_force(GAMMA, R);
    // first touch: −8/9 F_c
    let a0 = jkr_contact_radius(R, b, 0.0);
    let f0 = jkr_force(E, R, b, a0);
    assert!((f0 / fc + 8.0 / 9.0).abs() < 1e-9, "force at touch {} F_c", f0 / fc);
    // the largest tension along the branch is F_c (load-controlled pull-off)
    let dc = -jkr_break_gap(R, b);
    let least = (0..20001).map(|k| dc + (k as f64 / 20000.0) * (-dc - dc) ).map(|d| jkr_force(E, R, b, jkr_contact_radius(R, b, d))).fold(f64::INFINITY, f64::min);
    assert!((least / fc + 1.0).abs() < 1e-6, "least force {} F_c", least / fc);
    // the break: −5/9 F_c
    let ab = jkr_contact_radius(R, b, dc);
    // (the break is a double root of the branch: a is found to √ε, the force to ~1e-8)
    assert!((jkr_force(E, R, b, ab) / fc + 5.0 / 9.0).abs() < 1e-6);
    // Johnson's break overlap −(3/4)(π²w²R/E*²)^{1/3} with w = 2γ
    let expect = 0.75 * (4.0 * PI * PI * GAMMA * GAMMA * R / (E * E)).cbrt();
    assert!((jkr_break_gap(R, b) / expect - 1.0).abs() < 1e-12, "{} vs {}", jkr_break_gap(R, b), expect);
}

/// U(g + h) − U(g − h) against 2h F(g): the potential of each part is the integral of its
/// force (U' = F_a over the gap).
fn check_energy(p: &PairParams, r_i: f64, r_j: f64, gaps: &[f64]) {
    for &gap in gaps {
        let d = DVec3::new(r_i + r_j + gap, 0.0, 0.0);
        let g = ball_ball_geometry(d, r_i, r_j, 1.0, 1.0, DVec3::ZERO, DVec3::ZERO, DVec3::ZERO, DVec3::ZERO);
        let h = 1e-4 * gap.abs();
        let up = adhesive_part(p, &g, gap + h).energy;
        let down = adhesive_part(p, &g, gap - h).energy;
        let f = adhesive_part(p, &g, gap).force;
        let slope = (up - down) / (2.0 * h);
        assert!((slope - f).abs() <= 1e-5 * f.abs().max(1e-12), "{:?} at gap {gap}: dU/dg {slope} vs F_a {f}", p.adhesion);
    }
    // zero at touch
    let d = DVec3::new(r_i + r_j, 0.0, 0.0);
    let g = ball_ball_geometry(d, r_i, r_j, 1.0, 1.0, DVec3::ZERO, DVec3::ZERO, DVec3::ZERO, DVec3::ZERO);
    assert!(adhesive_part(p, &g, 0.0).energy.abs() < 1e-30 + 1e-12 * adhesive_part(p, &g, -1e-6).energy.abs());
}

#[test]
fn energies_are_integrals_of_the_forces() {
    let base = PairParams { hz_shear: E * 0.75, hz_poiss: 0.25, ..PairParams::default() };
    let (r_i, r_j) = (4e-4, 6e-4);
    let r_star = r_i * r_j / (r_i + r_j);
    let jkr = PairParams { adhesion: Adhesion::Jkr, surface_energy: GAMMA, ..base };
    let range = tensile_range(&jkr, 2.0 * r_star);
    check_energy(&jkr, r_i, r_j, &[-2e-6, -1e-7, 0.3 * range, 0.9 * range]);
    let dmt = PairParams { adhesion: Adhesion::Dmt, surface_energy: GAMMA, ..base };
    check_energy(&dmt, r_i, r_j, &[-2e-6, -1e-7]);
    let sjkr = PairParams { adhesion: Adhesion::Sjkr, cohesion_energy_density: 3e5, ..base };
    check_energy(&sjkr, r_i, r_j, &[-2e-6, -2e-5]);
    let sjkr2 = PairParams { adhesion: Adhesion::Sjkr2, cohesion_energy_density: 3e5, ..base };
    check_energy(&sjkr2, r_i, r_j, &[-2e-6, -2e-5]);
    let cap = PairParams { adhesion: Adhesion::Capillary, liquid_volume: 1e-12, surface_tension: 0.072, contact_angle: 0.3, ..base };
    let range = tensile_range(&cap, 2.0 * r_star);
    check_energy(&cap, r_i, r_j, &[-2e-6, 0.01 * range, 0.5 * range, 0.99 * range]);
}

#[test]
fn lens_area_is_the_intersection_circle() {
    // equal spheres: a² = Rδ − δ²/4
    let (r, d) = (1e-3, 1e-4);
    assert!((lens_area(r, r, d) / (PI * (r * d - d * d / 4.0)) - 1.0).abs() < 1e-12);
    // a wall: a² = δ(2R − δ)
    assert!((lens_area(r, 0.0, d) / (PI * d * (2.0 * r - d)) - 1.0).abs() < 1e-12);
    // unequal: the circle's radius from the two spheres' equations
    let (ri, rj, delta) = (1e-3, 3e-3, 2e-4);
    let dist = ri + rj - delta;
    let x = (dist * dist + ri * ri - rj * rj) / (2.0 * dist);
    assert!((lens_area(ri, rj, delta) / (PI * (ri * ri - x * x)) - 1.0).abs() < 1e-9);
}

#[test]
fn capillary_force_at_contact_and_rupture() {
    let cap = PairParams { adhesion: Adhesion::Capillary, liquid_volume: 1e-12, surface_tension: 0.072, contact_angle: 0.3, ..PairParams::default() };
    let r_bar = 1e-3;
    let a = capillary_adhesive(&cap, r_bar, -1e-7);
    assert!((a.force / (2.0 * PI * r_bar * 0.072 * 0.3f64.cos()) - 1.0).abs() < 1e-12);
    assert!((capillary_rupture_gap(&cap) / (1.15 * 1e-4) - 1.0).abs() < 1e-12);
}
