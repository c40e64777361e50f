//! CPU/GPU twins of the rigid-body rotation integrator: every function of
//! `src/rigid/integrate.rs` and of its WGSL twin `shaders/rigid/integrate.wgsl` agrees on 4096
//! seeded random body states (random unit q, moments over ten decades with near-symmetric,
//! symmetric and degenerate bodies, L and Δt turning the body by up to 1 rad a step) within a
//! tolerance set by f32 arithmetic. The GPU evaluates `tests/shaders/rigid_twins.wgsl`; the
//! inputs are rounded to f32 first so both sides see the same numbers. A second test checks
//! that the two files hold the same functions in the same order.

mod common;

use common::random::{f, unit};
use glam::{DQuat, DVec3, DVec4};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use talus::contact::params::PairParamsGpu;
use talus::rigid::integrate::{
    angular_velocity, body_to_space, cos_sin, inverse_moments, quat_mul, quat_normalize, rotation_drift, rotational_energy, rotor_substep, space_to_body,
    RotorState,
};

const CASES: usize = 4096;
const IN_STRIDE: usize = 19;
const OUT_STRIDE: usize = 31;

/// f32 machine epsilon (2⁻²³).
const EPS32: f64 = f32::EPSILON as f64;

/// Allowed GPU − CPU difference, in units of `EPS32` times each quantity's scale (below: 1 for
/// quaternions and cos/sin, |L| for momenta, |L| max(1/I) for ω, ½ |L|² max(1/I) for the energy,
/// |v| for a rotated offset). The CPU side is exact to f64 here, so the difference is the f32
/// rounding of the GPU side. The longest chain is the drift: Rᵀ L, then five substeps (angle,
/// series, the Lb turn, a quaternion product), then the normalisation; every step is a
/// rotation or a product of bounded factors, so each rounding adds about ½ ε of the scale and
/// an error in Lb reaches q only through angles below 1 rad (no amplification). Measured on
/// lavapipe: at most 3.5 ε (the energy; the drift 1.9 ε). 32 ε leaves room for a GPU whose
/// division, square root and sin/cos are a few ulp off (WGSL allows 2.5 ulp for division).
const TOLERANCE_EPS: f64 = 32.0;

/// A random unit quaternion rounded to f32 (uniform direction in 4D).
fn random_quat(rng: &mut Pcg64) -> DQuat {
    loop {
        let v = DVec4::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0));
        if v.length_squared() > 0.01 && v.length_squared() < 1.0 {
            let v = v.normalize();
            return DQuat::from_xyzw(f(v.x), f(v.y), f(v.z), f(v.w));
        }
    }
}

/// Principal moments: a base over ten decades (DEM grains to boulders) times shape factors;
/// 15 % near-symmetric (I2 = I1 (1 ± 1e-6)), 10 % exactly symmetric, 3 % with one zero moment.
fn random_moments(rng: &mut Pcg64) -> DVec3 {
    let base = 10f64.powf(rng.random_range(-12.0..-2.0));
    let mut m = DVec3::new(rng.random_range(0.2..5.0), rng.random_range(0.2..5.0), rng.random_range(0.2..5.0)) * base;
    let kind: f64 = rng.random();
    if kind < 0.15 {
        m.y = m.x * (1.0 + rng.random_range(-1e-6..1e-6));
    } else if kind < 0.25 {
        m.y = m.x;
    } else if kind < 0.28 {
        m[rng.random_range(0..3)] = 0.0;
    }
    DVec3::new(f(m.x), f(m.y), f(m.z))
}

fn random_case(rng: &mut Pcg64) -> [f64; IN_STRIDE] {
    let mut x = [0.0; IN_STRIDE];
    let q = random_quat(rng);
    let moments = random_moments(rng);
    let dt = f(10f64.powf(rng.random_range(-7.0..-3.0)));
    // the fastest axis turns by up to 1 rad a step
    let smallest = moments.to_array().into_iter().filter(|&m| m > 0.0).fold(f64::INFINITY, f64::min);
    let turn = 10f64.powf(rng.random_range(-6.0..0.0));
    let l = unit(rng) * (turn * smallest / dt);
    let v = unit(rng) * rng.random_range(1e-4..1e-1);
    let q2 = random_quat(rng);
    x[0..4].copy_from_slice(&[q.x, q.y, q.z, q.w]);
    x[4..7].copy_from_slice(&moments.to_array());
    x[7..10].copy_from_slice(&[f(l.x), f(l.y), f(l.z)]);
    x[10] = dt;
    x[11..14].copy_from_slice(&[f(v.x), f(v.y), f(v.z)]);
    x[14..18].copy_from_slice(&[q2.x, q2.y, q2.z, q2.w]);
    x[18] = f(rng.random_range(-1.0..1.0));
    x
}

fn v3(x: &[f64], i: usize) -> DVec3 {
    DVec3::new(x[i], x[i + 1], x[i + 2])
}

fn quat(x: &[f64], i: usize) -> DQuat {
    DQuat::from_xyzw(x[i], x[i + 1], x[i + 2], x[i + 3])
}

/// The CPU twin of the test kernel, same output layout.
fn cpu_outputs(x: &[f64]) -> Vec<f64> {
    let (q, moments, l, dt, v, q2, phi) = (quat(x, 0), v3(x, 4), v3(x, 7), x[10], v3(x, 11), quat(x, 14), x[18]);
    let mut out = Vec::with_capacity(OUT_STRIDE);
    let drift = rotation_drift(q, l, moments, dt);
    out.extend([drift.x, drift.y, drift.z, drift.w]);
    out.extend(angular_velocity(q, moments, l).to_array());
    out.push(rotational_energy(q, moments, l));
    out.extend(body_to_space(q, v).to_array());
    out.extend(space_to_body(q, l).to_array());
    let p = quat_mul(q, q2);
    out.extend([p.x, p.y, p.z, p.w]);
    let s = rotor_substep(RotorState { q, lb: space_to_body(q, l) }, inverse_moments(moments), DVec3::Y, dt);
    out.extend([s.q.x, s.q.y, s.q.z, s.q.w]);
    out.extend(s.lb.to_array());
    out.extend(cos_sin(phi).to_array());
    let n = quat_normalize(q2);
    out.extend([n.x, n.y, n.z, n.w]);
    assert_eq!(out.len(), OUT_STRIDE);
    out
}

/// Each output group: (name, first index, length, its scale for the tolerance).
fn groups(x: &[f64]) -> Vec<(&'static str, usize, usize, f64)> {
    let l = v3(x, 7).length();
    let inv_max = inverse_moments(v3(x, 4)).max_element();
    vec![
        ("rotation_drift", 0, 4, 1.0),
        ("angular_velocity", 4, 3, l * inv_max),
        ("rotational_energy", 7, 1, 0.5 * l * l * inv_max),
        ("body_to_space", 8, 3, v3(x, 11).length()),
        ("space_to_body", 11, 3, l),
        ("quat_mul", 14, 4, 1.0),
        ("rotor_substep q", 18, 4, 1.0),
        ("rotor_substep lb", 22, 3, l),
        ("cos_sin", 25, 2, 1.0),
        ("quat_normalize", 27, 4, 1.0),
    ]
}

#[test]
fn rigid_twins_agree() {
    let mut rng = Pcg64::seed_from_u64(0x5249_4749_4432);
    let cases: Vec<[f64; IN_STRIDE]> = (0..CASES).map(|_| random_case(&mut rng)).collect();
    let inputs: Vec<f32> = cases.iter().flat_map(|c| c.iter().map(|&v| v as f32)).collect();
    let kernel = format!("{}\n{}", talus::gpu::shader::RIGID_INTEGRATE, include_str!("shaders/rigid_twins.wgsl"));
    let gpu = common::twin::run_twin_kernel(&kernel, &inputs, &vec![PairParamsGpu::default(); CASES], OUT_STRIDE);
    let mut worst: Vec<(&str, f64)> = Vec::new();
    for (c, x) in cases.iter().enumerate() {
        let cpu = cpu_outputs(x);
        let g = &gpu[c * OUT_STRIDE..(c + 1) * OUT_STRIDE];
        for (name, at, len, scale) in groups(x) {
            let diff = (at..at + len).map(|k| (g[k] as f64 - cpu[k]).powi(2)).sum::<f64>().sqrt();
            assert!(g[at..at + len].iter().all(|v| v.is_finite()), "case {c}: GPU {name} not finite: {:?}", &g[at..at + len]);
            let in_eps = diff / (scale * EPS32);
            assert!(in_eps <= TOLERANCE_EPS, "case {c}: {name} differs by {in_eps:.1} ε (CPU {:?}, GPU {:?}, inputs {x:?})", &cpu[at..at + len], &g[at..at + len]);
            match worst.iter_mut().find(|(n, _)| *n == name) {
                Some(w) => w.1 = w.1.max(in_eps),
                None => worst.push((name, in_eps)),
            }
        }
    }
    for (name, w) in &worst {
        eprintln!("{name}: worst GPU − CPU {w:.2} ε of its scale");
    }
}

/// The names after `fn ` in a source text, in order (up to `stop`, if it occurs).
fn function_names(src: &str, stop: &str) -> Vec<String> {
    let src = src.split(stop).next().unwrap_or(src);
    src.lines()
        .filter_map(|line| {
            let rest = line.trim_start().strip_prefix("pub fn ").or_else(|| line.trim_start().strip_prefix("fn "))?;
            Some(rest.split(['(', '<']).next()?.trim().to_string())
        })
        .collect()
}

#[test]
fn twins_have_the_same_functions_in_the_same_order() {
    let rust = function_names(include_str!("../src/rigid/integrate.rs"), "#[cfg(test)]");
    let wgsl = function_names(talus::gpu::shader::RIGID_INTEGRATE, "\0");
    assert!(rust.len() >= 10, "{rust:?}");
    assert_eq!(rust, wgsl, "src/rigid/integrate.rs vs shaders/rigid/integrate.wgsl");
}
