//! Radius distributions of generators and insertions, and their sampling.

use rand::Rng;
use rand_distr::{Distribution, LogNormal};

/// Resampling budget of the truncated lognormal.
pub const MAX_RESAMPLES: usize = 10_000;

#[derive(Clone, Debug, PartialEq)]
pub enum RadiusDist {
    Monodisperse(f64),
    Uniform { min: f64, max: f64 },
    /// Lognormal with the given median and log-standard-deviation, truncated to [min, max]
    /// by resampling.
    LogNormal { median: f64, sigma: f64, min: f64, max: f64 },
}

impl RadiusDist {
    pub fn min(&self) -> f64 {
        match *self {
            RadiusDist::Monodisperse(r) => r,
            RadiusDist::Uniform { min, .. } | RadiusDist::LogNormal { min, .. } => min,
        }
    }

    pub fn max(&self) -> f64 {
        match *self {
            RadiusDist::Monodisperse(r) => r,
            RadiusDist::Uniform { max, .. } | RadiusDist::LogNormal { max, .. } => max,
        }
    }

    /// Draw one radius; `None` when a truncated lognormal gave no value in [min, max] after
    /// `MAX_RESAMPLES` draws.
    pub fn sample<R: Rng>(&self, rng: &mut R) -> Option<f64> {
        match *self {
            RadiusDist::Monodisperse(r) => Some(r),
            RadiusDist::Uniform { min, max } => {
                let u: f64 = rng.random();
                Some((min + (max - min) * u).clamp(min, max))
            }
            RadiusDist::LogNormal { median, sigma, min, max } => {
                if sigma == 0.0 {
                    return Some(median);
                }
                let d = LogNormal::new(median.ln(), sigma).ok()?;
                (0..MAX_RESAMPLES).map(|_| d.sample(rng)).find(|r| (min..=max).contains(r))
            }
        }
    }
}
