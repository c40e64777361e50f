//! Closed-form torque-free rotation (Euler's equations solved with Jacobi elliptic functions,
//! as in Landau & Lifshitz, *Mechanics*, §37), for the integrator's tests and benchmarks.
//!
//! With principal moments I1 < I2 < I3, |L| = L and rotational energy E (2E I1 ≤ L² ≤ 2E I3),
//! the body-frame momentum moves on a closed curve. For L² > 2E I2 (around axis 3)
//!
//!   λ² = (I3 − I2)(L² − 2E I1) / (I1 I2 I3),  k² = (I2 − I1)(2E I3 − L²) / ((I3 − I2)(L² − 2E I1)),
//!
//! and for L² < 2E I2 (around axis 1) the same with indices 1 and 3 exchanged. Lb_1 and Lb_2
//! (or Lb_3 and Lb_2) are multiples of cn(λt, k) and sn(λt, k), whose period is 4K(k)/λ.

use glam::DVec3;

/// The arithmetic–geometric mean of two non-negative numbers.
pub fn agm(a: f64, b: f64) -> f64 {
    let (mut a, mut b) = (a, b);
    for _ in 0..64 {
        if (a - b).abs() <= 4.0 * f64::EPSILON * a {
            break;
        }
        (a, b) = (0.5 * (a + b), (a * b).sqrt());
    }
    0.5 * (a + b)
}

/// The complete elliptic integral of the first kind K, of parameter m = k² (m < 1):
/// K = π / (2 AGM(1, √(1 − m))). Infinite for m ≥ 1.
pub fn complete_elliptic_k(m: f64) -> f64 {
    if m >= 1.0 {
        return f64::INFINITY;
    }
    std::f64::consts::PI / (2.0 * agm(1.0, (1.0 - m).sqrt()))
}

/// The period 4K(k)/λ of torque-free rotation: the time after which the body-frame angular
/// momentum (and the body's angular velocity) repeats. A body spinning near its intermediate
/// axis flips twice per period (there and back), so this is the time between two flips in the
/// same direction. `moments` in any order (sorted here); `l` = |L|; `energy` = ½ L·ω. Infinite
/// on the separatrix L² = 2E I2; meaningless outside 2E I1 ≤ L² ≤ 2E I3 and for a body turning
/// about a principal axis of a symmetric body (λ = 0).
pub fn flip_period(moments: DVec3, l: f64, energy: f64) -> f64 {
    let mut i = moments.to_array();
    i.sort_by(f64::total_cmp);
    let [i1, i2, i3] = i;
    let l2 = l * l;
    let two_e = 2.0 * energy;
    let (lambda2, m) = if l2 >= two_e * i2 {
        ((i3 - i2) * (l2 - two_e * i1) / (i1 * i2 * i3), (i2 - i1) * (two_e * i3 - l2) / ((i3 - i2) * (l2 - two_e * i1)))
    } else {
        ((i2 - i1) * (two_e * i3 - l2) / (i1 * i2 * i3), (i3 - i2) * (l2 - two_e * i1) / ((i2 - i1) * (two_e * i3 - l2)))
    };
    4.0 * complete_elliptic_k(m) / lambda2.sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elliptic_k_values() {
        // K(0) = π/2; K(1/2) = Γ(1/4)² / (4 √π) = 1.854074677301372
        assert!((complete_elliptic_k(0.0) - std::f64::consts::FRAC_PI_2).abs() < 1e-15);
        assert!((complete_elliptic_k(0.5) - 1.854_074_677_301_372).abs() < 1e-14);
        // near m = 1: K = ln(4/k') + O(k'² ln k') with k' = √(1 − m)
        let m = 1.0 - 1e-12;
        assert!((complete_elliptic_k(m) - (4.0 / (1.0 - m).sqrt()).ln()).abs() < 1e-10);
        assert!(complete_elliptic_k(1.0).is_infinite());
    }

    #[test]
    fn symmetric_body_precesses_at_the_body_rate() {
        // I1 = I2: k = 0 and the body-frame L turns about e3 at (I3 − I1)/I1 · Lb3/I3
        let (i1, i3) = (2.0, 3.0);
        let lb = DVec3::new(0.3, 0.4, 1.2);
        let e = 0.5 * (lb.x * lb.x / i1 + lb.y * lb.y / i1 + lb.z * lb.z / i3);
        let rate = (i3 - i1) / i1 * lb.z / i3;
        let p = flip_period(DVec3::new(i3, i1, i1), lb.length(), e);
        assert!((p * rate / std::f64::consts::TAU - 1.0).abs() < 1e-14, "{p}");
    }

    #[test]
    fn both_sides_of_the_separatrix() {
        // the same body, just above and just below L² = 2E I2: both long, both finite
        let moments = DVec3::new(1.0, 2.0, 3.0);
        for lb in [DVec3::new(0.01, 1.0, 0.02), DVec3::new(0.02, 1.0, 0.01)] {
            let e = 0.5 * (lb * lb / moments).element_sum();
            let p = flip_period(moments, lb.length(), e);
            assert!(p.is_finite() && p > 20.0, "{p}");
        }
    }
}
