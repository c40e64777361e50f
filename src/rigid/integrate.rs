//! Rotation of a rigid body over one step: the symmetric splitting of the free rigid rotor into
//! exact rotations about the principal axes (Dullweber, Leimkuhler & McLachlan 1997, the
//! NO_SQUISH integrator of Miller et al. 2002). Twin of `shaders/rigid/integrate.wgsl` (same
//! functions, same statement order, f32 there).
//!
//! A step is velocity-Verlet style: the caller kicks the space-frame angular momentum,
//! L += τ Δt/2, then `rotation_drift` turns q over Δt with L held fixed, then the caller kicks
//! again with the torque at the new orientation. The drift applies, with body-frame momentum
//! Lb = Rᵀ(q) L, rotations about body axis 1 for Δt/2, axis 2 for Δt/2, axis 3 for Δt, axis 2
//! for Δt/2 and axis 1 for Δt/2. A rotation about axis k over h turns the body by
//! θ = Lb_k h / I_k: Lb by −θ about e_k and q ← q ⊗ (cos θ/2, sin θ/2 e_k). Each of these is an
//! exact flow of part of the rotor's energy, so the composition is time-reversible and second
//! order; L in space is untouched (it is constant in free rotation), so |L| is conserved
//! exactly under zero torque, and q is normalised at the end. A zero (or negative) principal
//! moment gives zero rate about its axis.
//!
//! Quaternions: `DQuat` with scalar part `w` and vector part (x, y, z), body → space. The
//! products are written out here (not glam's operators) so that both twins hold the same
//! arithmetic.

use glam::{DQuat, DVec2, DVec3, DVec4};

/// Half angles below this use the series of `cos_sin` (the GPU's `sin`/`cos` builtins are only
/// accurate in absolute terms, not relative to a small angle).
pub const ROTOR_SERIES_LIMIT: f64 = 0.25;

/// A body's orientation and body-frame angular momentum inside the drift.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RotorState {
    /// Orientation, body → space.
    pub q: DQuat,
    /// Angular momentum in the body (principal) frame.
    pub lb: DVec3,
}

/// The vector part (x, y, z) of a quaternion.
fn vector_part(q: DQuat) -> DVec3 {
    DVec3::new(q.x, q.y, q.z)
}

/// The Hamilton product a ⊗ b.
pub fn quat_mul(a: DQuat, b: DQuat) -> DQuat {
    let av = vector_part(a);
    let bv = vector_part(b);
    let w = a.w * b.w - av.dot(bv);
    let v = bv * a.w + av * b.w + av.cross(bv);
    DQuat::from_xyzw(v.x, v.y, v.z, w)
}

/// The conjugate (the inverse of a unit quaternion).
pub fn quat_conj(q: DQuat) -> DQuat {
    DQuat::from_xyzw(-q.x, -q.y, -q.z, q.w)
}

/// q / |q|.
pub fn quat_normalize(q: DQuat) -> DQuat {
    let v = DVec4::from(q);
    DQuat::from_vec4(v / v.dot(v).sqrt())
}

/// R(q) v: a body-frame vector (a component sphere's offset, a body-frame momentum) in space.
pub fn body_to_space(q: DQuat, v: DVec3) -> DVec3 {
    let u = vector_part(q);
    let t = u.cross(v) * 2.0;
    v + t * q.w + u.cross(t)
}

/// Rᵀ(q) v: a space-frame vector in the body frame.
pub fn space_to_body(q: DQuat, v: DVec3) -> DVec3 {
    body_to_space(quat_conj(q), v)
}

/// 1/I per principal axis, 0 where the moment is not positive.
pub fn inverse_moments(moments: DVec3) -> DVec3 {
    let positive = moments.cmpgt(DVec3::ZERO);
    let safe = DVec3::select(positive, moments, DVec3::ONE);
    DVec3::select(positive, DVec3::ONE / safe, DVec3::ZERO)
}

/// Space-frame angular velocity ω = R diag(1/I) Rᵀ L.
pub fn angular_velocity(q: DQuat, moments: DVec3, l: DVec3) -> DVec3 {
    let lb = space_to_body(q, l);
    body_to_space(q, inverse_moments(moments) * lb)
}

/// Rotational kinetic energy ½ L·ω (summed in the body frame: ½ Σ Lb_k²/I_k).
pub fn rotational_energy(q: DQuat, moments: DVec3, l: DVec3) -> f64 {
    let lb = space_to_body(q, l);
    0.5 * lb.dot(inverse_moments(moments) * lb)
}

/// (cos φ, sin φ): Taylor series to φ¹⁴ and φ¹³ for |φ| < `ROTOR_SERIES_LIMIT` (truncation below
/// 1e-19 relative), the builtins beyond.
pub fn cos_sin(phi: f64) -> DVec2 {
    if phi.abs() < ROTOR_SERIES_LIMIT {
        let p2 = phi * phi;
        let s = phi * (1.0 - p2 / 6.0 * (1.0 - p2 / 20.0 * (1.0 - p2 / 42.0 * (1.0 - p2 / 72.0 * (1.0 - p2 / 110.0 * (1.0 - p2 / 156.0))))));
        let c = 1.0 - p2 / 2.0 * (1.0 - p2 / 12.0 * (1.0 - p2 / 30.0 * (1.0 - p2 / 56.0 * (1.0 - p2 / 90.0 * (1.0 - p2 / 132.0 * (1.0 - p2 / 182.0))))));
        return DVec2::new(c, s);
    }
    DVec2::new(phi.cos(), phi.sin())
}

/// The exact rotation about principal axis `axis` (a unit basis vector e_k) over time h:
/// θ = Lb_k h / I_k, Lb turned by −θ about e_k, q ← q ⊗ (cos θ/2, sin θ/2 e_k). Lb_k is carried
/// over exactly.
pub fn rotor_substep(s: RotorState, inv_moments: DVec3, axis: DVec3, h: f64) -> RotorState {
    let lb_k = axis.dot(s.lb);
    let theta = lb_k * axis.dot(inv_moments) * h;
    let half = cos_sin(0.5 * theta);
    let cos_t = 1.0 - 2.0 * half.y * half.y;
    let sin_t = 2.0 * half.y * half.x;
    let along = axis * lb_k;
    let lb = along + (s.lb - along) * cos_t - axis.cross(s.lb) * sin_t;
    let turn = axis * half.y;
    let q = quat_mul(s.q, DQuat::from_xyzw(turn.x, turn.y, turn.z, half.x));
    RotorState { q, lb }
}

/// The rotational drift over `dt` with space-frame momentum `l` held fixed: axis 1 for dt/2,
/// axis 2 for dt/2, axis 3 for dt, axis 2 for dt/2, axis 1 for dt/2, then q normalised.
pub fn rotation_drift(q: DQuat, l: DVec3, moments: DVec3, dt: f64) -> DQuat {
    let inv = inverse_moments(moments);
    let half = 0.5 * dt;
    let mut s = RotorState { q, lb: space_to_body(q, l) };
    s = rotor_substep(s, inv, DVec3::X, half);
    s = rotor_substep(s, inv, DVec3::Y, half);
    s = rotor_substep(s, inv, DVec3::Z, dt);
    s = rotor_substep(s, inv, DVec3::Y, half);
    s = rotor_substep(s, inv, DVec3::X, half);
    quat_normalize(s.q)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rigid::analytic::flip_period;

    /// One velocity-Verlet rotation step with torque `torque(q)`: kick, drift, kick.
    fn step(q: DQuat, l: DVec3, moments: DVec3, dt: f64, torque: impl Fn(DQuat) -> DVec3) -> (DQuat, DVec3) {
        let l = l + torque(q) * (0.5 * dt);
        let q = rotation_drift(q, l, moments, dt);
        let l = l + torque(q) * (0.5 * dt);
        (q, l)
    }

    fn free(_: DQuat) -> DVec3 {
        DVec3::ZERO
    }

    fn sample_q() -> DQuat {
        DQuat::from_axis_angle(DVec3::new(0.3, -0.8, 0.5).normalize(), 1.1)
    }

    #[test]
    fn products_match_glam() {
        let a = sample_q();
        let b = DQuat::from_axis_angle(DVec3::new(-0.2, 0.1, 0.9).normalize(), -2.3);
        let v = DVec3::new(0.7, -1.3, 2.1);
        assert!((quat_mul(a, b) - a * b).length() < 1e-15);
        assert!((quat_conj(a) - a.conjugate()).length() == 0.0);
        assert!((body_to_space(a, v) - a * v).length() < 1e-14);
        assert!((space_to_body(a, body_to_space(a, v)) - v).length() < 1e-14);
    }

    #[test]
    fn series_matches_builtins() {
        for k in 0..=1000 {
            let phi = (k as f64 / 1000.0 - 0.5) * 2.0 * ROTOR_SERIES_LIMIT * 0.999_999;
            let cs = cos_sin(phi);
            // a few ulp of rounding in the polynomial, no truncation error
            assert!((cs.x - phi.cos()).abs() <= 4.0 * f64::EPSILON, "cos {phi}");
            assert!((cs.y - phi.sin()).abs() <= 4.0 * f64::EPSILON * phi.abs(), "sin {phi}");
        }
        assert_eq!(cos_sin(1e-30).y, 1e-30);
    }

    #[test]
    fn zero_moment_gives_zero_rate() {
        let moments = DVec3::new(0.0, 2.0, 3.0);
        let l = DVec3::new(1.0, 2.0, -1.0);
        let q = sample_q();
        let w = angular_velocity(q, moments, l);
        assert!(w.is_finite());
        assert!(space_to_body(q, w).x.abs() < 1e-15);
        let q1 = rotation_drift(q, l, moments, 0.01);
        assert!(DVec4::from(q1).is_finite());
        assert!(rotational_energy(q1, moments, l).is_finite());
    }

    #[test]
    fn quaternion_stays_unit_and_momentum_is_exact() {
        let moments = DVec3::new(1.0, 2.3, 3.1);
        let mut q = sample_q();
        let l0 = DVec3::new(0.4, -1.2, 0.9);
        let mut l = l0;
        for _ in 0..100_000 {
            (q, l) = step(q, l, moments, 0.01, free);
        }
        assert!((q.length() - 1.0).abs() < 1e-14, "|q| - 1 = {}", q.length() - 1.0);
        assert_eq!(l.length().to_bits(), l0.length().to_bits());
        assert_eq!(l, l0);
    }

    /// Largest |E − E0| over `t_end` of free rotation.
    fn max_energy_error(dt: f64, t_end: f64) -> f64 {
        let moments = DVec3::new(1.0, 2.0, 3.5);
        let mut q = sample_q();
        let l = DVec3::new(0.3, 1.0, -0.6);
        let e0 = rotational_energy(q, moments, l);
        let mut worst: f64 = 0.0;
        for _ in 0..(t_end / dt).round() as usize {
            q = rotation_drift(q, l, moments, dt);
            worst = worst.max((rotational_energy(q, moments, l) - e0).abs());
        }
        worst / e0
    }

    #[test]
    fn energy_error_is_second_order() {
        let coarse = max_energy_error(0.02, 40.0);
        let fine = max_energy_error(0.01, 40.0);
        let ratio = coarse / fine;
        assert!(coarse < 1e-4, "relative energy error {coarse}");
        assert!((3.6..4.4).contains(&ratio), "halving dt divided the energy error by {ratio} ({coarse} → {fine})");
    }

    #[test]
    fn time_reversible() {
        let moments = DVec3::new(0.8, 1.7, 2.9);
        let q0 = sample_q();
        let l0 = DVec3::new(-0.5, 1.3, 0.7);
        let torque = |q: DQuat| body_to_space(q, DVec3::new(0.0, 0.0, 0.2)).cross(DVec3::new(0.0, 0.0, -1.0));
        let (mut q, mut l) = (q0, l0);
        for _ in 0..1000 {
            (q, l) = step(q, l, moments, 0.01, torque);
        }
        assert!((q - q0).length() > 0.1, "the body turned");
        l = -l;
        for _ in 0..1000 {
            (q, l) = step(q, l, moments, 0.01, torque);
        }
        l = -l;
        assert!((q - q0).length() < 1e-12, "q back within {}", (q - q0).length());
        assert!((l - l0).length() < 1e-12, "L back within {}", (l - l0).length());
    }

    #[test]
    fn symmetric_top_precesses_at_the_analytic_rate() {
        // I1 = I2: the symmetry axis a = R e3 turns about L at |L|/I1
        let moments = DVec3::new(2.0, 2.0, 0.7);
        let l = DVec3::new(0.0, 0.0, 1.5);
        let q0 = DQuat::from_axis_angle(DVec3::X, 0.5);
        let a0 = body_to_space(q0, DVec3::Z);
        let rate = l.length() / moments.x;
        let mut worst: f64 = 0.0;
        for dt in [0.01, 0.005] {
            let mut q = q0;
            let n = (4.0 * std::f64::consts::TAU / rate / dt).round() as usize;
            worst = 0.0;
            for s in 1..=n {
                q = rotation_drift(q, l, moments, dt);
                let exact = DQuat::from_axis_angle(l.normalize(), rate * s as f64 * dt) * a0;
                worst = worst.max((body_to_space(q, DVec3::Z) - exact).length());
            }
            assert!(worst < 4e-5 * (dt / 0.01) * (dt / 0.01), "dt {dt}: axis off by {worst}");
        }
        assert!(worst > 0.0);
    }

    #[test]
    fn intermediate_axis_flips_at_the_analytic_period() {
        let moments = DVec3::new(1.0, 2.0, 3.0);
        let l = DVec3::new(0.01, 1.0, 0.02);
        let mut q = DQuat::IDENTITY;
        let dt = 0.01;
        let period = flip_period(moments, l.length(), rotational_energy(q, moments, l));
        // upward zero crossings of Lb_2 (one per period; the body flips twice per period)
        let mut crossings = Vec::new();
        let mut prev = space_to_body(q, l).y;
        let mut t = 0.0;
        while crossings.len() < 4 {
            q = rotation_drift(q, l, moments, dt);
            t += dt;
            let now = space_to_body(q, l).y;
            if prev < 0.0 && now >= 0.0 {
                crossings.push(t - dt * now / (now - prev));
            }
            prev = now;
            assert!(t < 10.0 * period, "no flips");
        }
        let measured = (crossings[3] - crossings[0]) / 3.0;
        let rel = (measured / period - 1.0).abs();
        assert!(rel < 1e-3, "flip period {measured} vs analytic {period} ({rel:e})");
    }
}
