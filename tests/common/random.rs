//! Seeded random contact states for the CPU/GPU twin tests: values are rounded to f32 first
//! (`f`) so both sides see the same numbers.

use glam::DVec3;
use rand::Rng;
use rand_pcg::Pcg64;

/// Round to f32 and back.
pub fn f(x: f64) -> f64 {
    x as f32 as f64
}

/// A random unit vector (rejection sampling in the unit ball).
pub fn unit(rng: &mut Pcg64) -> DVec3 {
    loop {
        let v = DVec3::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0));
        if v.length_squared() > 0.01 && v.length_squared() < 1.0 {
            return v.normalize();
        }
    }
}

/// A random vector of length below `scale`, rounded to f32.
pub fn v3(rng: &mut Pcg64, scale: f64) -> DVec3 {
    let v = unit(rng) * rng.random_range(0.0..scale);
    DVec3::new(f(v.x), f(v.y), f(v.z))
}

/// The vector stored at `input[i..i + 3]`.
pub fn at(input: &[f64], i: usize) -> DVec3 {
    DVec3::new(input[i], input[i + 1], input[i + 2])
}

/// Euclidean norm of a slice.
pub fn norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// A stored shear compliance (`History::shear_compliance`) for a random history: the inverse
/// of a stiffness log-uniform in 1e3…1e7 N/m, zero (no spring) one time in ten.
pub fn stored_compliance(rng: &mut Pcg64) -> f64 {
    if rng.random_bool(0.1) { 0.0 } else { f(10f64.powf(-rng.random_range(3.0..7.0))) }
}
