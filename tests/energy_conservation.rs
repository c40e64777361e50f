//! An elastic, frictionless many-particle run with gravity in a closed box: the total
//! energy (kinetic + gravitational + strain) must stay constant. CPU: drift < 1e-4 relative.
//! GPU (f32 state): the figure is printed and bounded by 1e-3 (docs/verification.md).

mod common;

use common::*;
use rand::{Rng, SeedableRng};
use talus::contact::params::PairParams;
use talus::setup::Particles;

#[test]
fn elastic_frictionless_box_conserves_energy() {
    let (r, h) = (0.01, 0.05);
    let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
    let mut particles = Particles::default();
    for ix in 0..4 {
        for iy in 0..4 {
            for iz in 0..4 {
                let x = [-0.033 + ix as f64 * 0.022, -0.033 + iy as f64 * 0.022, -0.033 + iz as f64 * 0.022];
                let v = [rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0)];
                particles.push(x, v, [0.0; 3], r, 0);
            }
        }
    }
    let setup = setup_with(material("glass", 2500.0, 1e8, 0.25, 0.0), PairParams::default(), particles, box_walls(h), [0.0, 0.0, -9.81], 2e-6, cube(h));
    for mut backend in both_backends(&setup) {
        let drift = max_energy_drift(backend.as_mut(), 100, 100);
        let contacts = backend.contact_count().unwrap();
        println!("{}: max relative drift of total energy over 10000 steps: {drift:.3e} ({contacts} contacts at the end)", backend.kind());
        let bound = if backend.kind() == "cpu" { 1e-4 } else { 1e-3 };
        assert!(drift < bound, "{}: energy drift {drift:.3e} ≥ {bound:e}", backend.kind());
    }
}
