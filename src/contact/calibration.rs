//! `limit_damping` keeps the restitution the user asked for (issue 38): the damping of a pair is
//! chosen so that a binary collision's normal restitution is the specified e.
//!
//! With `limit_damping` the normal force is never attractive. The dashpots of `hooke` (linear),
//! `hertz_mindlin` (Tsuji) and `hertz_viscous` (Antypov) were calibrated with the pull they exert
//! at the end of a contact, so with the pull cut the ball leaves faster: e = 0.5 rebounds at
//! 0.550. Each of these laws makes e a function of one dimensionless damping number only (not of
//! the impact speed, mass or stiffness):
//! - linear: x'' = −x − 2ζ x', ζ = |ln e_d| / √(π² + ln² e_d) (`normal_hooke::restitution_damping`);
//! - Hertz with a δ^{1/4} dashpot: x'' = −x^{3/2} − c x^{1/4} x' (time and overlap scaled by the
//!   impact), c = 1.8257 √(3/2) |α(e_d)| for `hertz_mindlin` and √5 |ln e_d| / √(π² + ln² e_d)
//!   for `hertz_viscous` (2e-5 apart).
//!
//! So the pair keeps the laws' own formulas and gets a *damping restitution* e_d in place of e:
//! the value whose dashpot, cut at zero force, rebounds at e. `damping_restitution` finds it by
//! bisection on `capped_restitution`, which integrates the scaled equation once (RK4, about 6,000
//! steps a contact; a fraction of a millisecond); the results are cached by (law, e). Host side
//! only: the GPU pair table carries e_d (`PairParamsGpu::damping_restitution`). Not calibrated:
//! `hooke` with `viscous` (its e comes from each contact's Stokes number).

use std::collections::HashMap;
use std::sync::Mutex;

/// A dashpot law whose restitution depends on one number (module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DampingLaw {
    /// `hooke`: linear spring, γ = 2ζ√(m* k).
    Linear,
    /// `hertz_mindlin`: Tsuji, 1.8257 α √(k_n m*) with k_n = 3/2 k_n0 δ^{1/2}.
    Tsuji,
    /// `hertz_viscous`: Antypov, α(ε) √(m* k_n0) δ^{1/4}.
    Antypov,
}

impl DampingLaw {
    /// The dimensionless damping number of the law at damping restitution `e_d` (ζ for the
    /// linear law, c for the Hertz ones).
    pub fn damping_number(self, e_d: f64) -> f64 {
        let l = e_d.max(1e-20).ln();
        let shape = if e_d >= 1.0 { 0.0 } else { l.abs() / (std::f64::consts::PI.powi(2) + l * l).sqrt() };
        match self {
            DampingLaw::Linear => shape,
            DampingLaw::Tsuji => super::normal_mindlin::TSUJI_FACTOR * 1.5f64.sqrt() * super::params::tsuji_alpha(e_d).abs(),
            DampingLaw::Antypov => 5f64.sqrt() * shape,
        }
    }
}

/// Steps of the scaled contact per unit of scaled time (the contact lasts about π for the linear
/// law and 3.2 for Hertz at unit impact speed).
const STEPS_PER_UNIT: f64 = 2000.0;

/// The normal restitution of a binary collision under `law` at damping restitution `e_d`, with
/// the force cut at zero (`limit_damping`): the scaled overlap starts at 0 with unit speed and
/// the contact ends when the force, spring plus dashpot, first reaches zero while the bodies
/// separate (after that it stays zero) or the overlap closes; e = the separation speed then.
pub fn capped_restitution(law: DampingLaw, e_d: f64) -> f64 {
    let d = law.damping_number(e_d);
    let force = |x: f64, v: f64| -> f64 {
        let x = x.max(0.0);
        match law {
            DampingLaw::Linear => x + 2.0 * d * v,
            DampingLaw::Tsuji | DampingLaw::Antypov => x * x.sqrt() + d * x.sqrt().sqrt() * v,
        }
    };
    let h = 1.0 / STEPS_PER_UNIT;
    let (mut x, mut v) = (0.0f64, 1.0f64);
    // (the dashpot's sign: v > 0 compresses; the force opposes compression)
    let accel = |x: f64, v: f64| -force(x, v);
    for _ in 0..(100.0 * STEPS_PER_UNIT) as usize {
        let (k1x, k1v) = (v, accel(x, v));
        let (k2x, k2v) = (v + 0.5 * h * k1v, accel(x + 0.5 * h * k1x, v + 0.5 * h * k1v));
        let (k3x, k3v) = (v + 0.5 * h * k2v, accel(x + 0.5 * h * k2x, v + 0.5 * h * k2v));
        let (k4x, k4v) = (v + h * k3v, accel(x + h * k3x, v + h * k3v));
        let (x1, v1) = (x + h / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x), v + h / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v));
        if v1 < 0.0 {
            // separating: the first zero of the force or of the overlap ends the contact
            let (f0, f1) = (force(x, v), force(x1, v1));
            if f1 <= 0.0 || x1 <= 0.0 {
                // the crossing inside the step, linearly
                let s = if f1 <= 0.0 && f0 > 0.0 { f0 / (f0 - f1) } else if x1 <= 0.0 && x > 0.0 { x / (x - x1) } else { 1.0 };
                return -(v + s * (v1 - v));
            }
        }
        (x, v) = (x1, v1);
    }
    // an overdamped contact that never separates: it ends at rest
    0.0
}

/// The least restitution a capped collision reaches under `law`: that of the critically damped
/// dashpot (e_d → 0), 0.1358 for all three laws (the curves of the linear and the Hertz laws
/// agree to 1e-5). A pair cannot be calibrated below it; the scene loader refuses such a pair.
pub fn least_capped_restitution(law: DampingLaw) -> f64 {
    capped_restitution(law, 0.0)
}

static CACHE: Mutex<Option<HashMap<(DampingLaw, u64), f64>>> = Mutex::new(None);

/// The damping restitution e_d under `law` whose capped collision rebounds at `e`
/// (`capped_restitution(law, e_d)` = e to 1e-8): e itself for e ≥ 1 (no dashpot), and 0 (the
/// laws' critical damping) for e ≤ 0 or below `least_capped_restitution`; results cached by
/// (law, e).
pub fn damping_restitution(law: DampingLaw, e: f64) -> f64 {
    if e >= 1.0 || e <= 0.0 {
        return e.clamp(0.0, 1.0);
    }
    let key = (law, e.to_bits());
    if let Some(v) = CACHE.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert_with(HashMap::new).get(&key) {
        return *v;
    }
    // the cut only raises e: e_d lies in (0, e]; bisected in ln e_d, since near the critical
    // dashpot e moves by 1e-3 per decade of e_d
    if e <= least_capped_restitution(law) {
        return 0.0;
    }
    let (mut lo, mut hi) = (1e-20f64.ln(), e.ln());
    for _ in 0..80 {
        let mid = 0.5 * (lo + hi);
        if capped_restitution(law, mid.exp()) < e {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-9 {
            break;
        }
    }
    let e_d = (0.5 * (lo + hi)).exp();
    CACHE.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert_with(HashMap::new).insert(key, e_d);
    e_d
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cut raises e = 0.5 to the 0.550 measured before the calibration (docs/contact-models.md,
    /// "limit_damping"), and the damping restitution brings it back to e.
    #[test]
    fn the_cut_and_its_calibration() {
        for law in [DampingLaw::Linear, DampingLaw::Tsuji, DampingLaw::Antypov] {
            let cut = capped_restitution(law, 0.5);
            assert!((cut - 0.550).abs() < 0.005, "{law:?}: e = 0.5 cut at zero force rebounds at {cut}");
            let least = least_capped_restitution(law);
            assert!((least - 0.1358).abs() < 1e-4, "{law:?}: the critical dashpot cut at zero force rebounds at {least}");
            // below it the calibration gives the critical dashpot
            assert_eq!(damping_restitution(law, 0.1), 0.0);
            for e in [0.14, 0.3, 0.5, 0.8, 0.95] {
                let e_d = damping_restitution(law, e);
                assert!(e_d < e && e_d > 0.0, "{law:?} e {e}: e_d {e_d}");
                assert!((capped_restitution(law, e_d) - e).abs() < 1e-8, "{law:?} e {e}");
            }
        }
        assert_eq!(damping_restitution(DampingLaw::Tsuji, 1.0), 1.0);
        assert_eq!(damping_restitution(DampingLaw::Linear, 0.0), 0.0);
    }
}
