//! Radius distributions of generators.

use rand::Rng;
use rand_distr::{Distribution, LogNormal};
use serde_json::Value;

use super::parse::{fmt_num, join, Cx};
use crate::error::Result;

/// Resampling budget of the truncated lognormal.
const MAX_RESAMPLES: usize = 10_000;

#[derive(Clone, Debug, PartialEq)]
pub enum RadiusDist {
    Monodisperse(f64),
    Uniform { min: f64, max: f64 },
    /// Lognormal with the given median and log-standard-deviation, truncated to [min, max]
    /// by resampling.
    LogNormal { median: f64, sigma: f64, min: f64, max: f64 },
}

impl RadiusDist {
    pub(crate) fn parse(cx: &Cx, v: &Value, path: &str) -> Result<RadiusDist> {
        if let Value::Number(_) = v {
            return Ok(RadiusDist::Monodisperse(cx.positive(cx.number(v, path)?, path)?));
        }
        if !v.is_object() {
            return Err(cx.err(
                path,
                format!(
                    "expected a number or a distribution object ({{\"distribution\": \"monodisperse\" | \"uniform\" | \"lognormal\", ...}}), got {}",
                    super::parse::show(v)
                ),
            ));
        }
        let o = cx.object(v, path)?;
        let kind = o.get("distribution").ok_or_else(|| cx.err(&o.key("distribution"), "missing required key"))?;
        let kind = cx.string(kind, &o.key("distribution"))?;
        match kind {
            "monodisperse" => {
                o.allow(&["distribution", "value"])?;
                Ok(RadiusDist::Monodisperse(cx.positive(o.f64_req("value")?, &o.key("value"))?))
            }
            "uniform" => {
                o.allow(&["distribution", "min", "max"])?;
                let min = cx.positive(o.f64_req("min")?, &o.key("min"))?;
                let max = cx.positive(o.f64_req("max")?, &o.key("max"))?;
                if max < min {
                    return Err(cx.err(
                        &o.key("max"),
                        format!("must be >= min ({}), got {}", fmt_num(min), fmt_num(max)),
                    ));
                }
                Ok(RadiusDist::Uniform { min, max })
            }
            "lognormal" => {
                o.allow(&["distribution", "median", "sigma", "min", "max"])?;
                let median = cx.positive(o.f64_req("median")?, &o.key("median"))?;
                let sigma = cx.non_negative(o.f64_req("sigma")?, &o.key("sigma"))?;
                let min = cx.positive(o.f64_req("min")?, &o.key("min"))?;
                let max = cx.positive(o.f64_req("max")?, &o.key("max"))?;
                if max < min {
                    return Err(cx.err(
                        &o.key("max"),
                        format!("must be >= min ({}), got {}", fmt_num(min), fmt_num(max)),
                    ));
                }
                if median < min || median > max {
                    return Err(cx.err(
                        &o.key("median"),
                        format!("must lie in [min, max] = [{}, {}], got {}", fmt_num(min), fmt_num(max), fmt_num(median)),
                    ));
                }
                Ok(RadiusDist::LogNormal { median, sigma, min, max })
            }
            other => Err(cx.err(
                &o.key("distribution"),
                format!("unknown distribution \"{other}\"; allowed: monodisperse, uniform, lognormal"),
            )),
        }
    }

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

    /// Draw `n` radii. `path` is the distribution's key path (for the error when a
    /// truncated lognormal cannot be sampled).
    pub(crate) fn sample_n<R: Rng>(&self, n: usize, rng: &mut R, cx: &Cx, path: &str) -> Result<Vec<f64>> {
        let mut out = Vec::with_capacity(n);
        match *self {
            RadiusDist::Monodisperse(r) => out.resize(n, r),
            RadiusDist::Uniform { min, max } => {
                for _ in 0..n {
                    let u: f64 = rng.random();
                    out.push((min + (max - min) * u).clamp(min, max));
                }
            }
            RadiusDist::LogNormal { median, sigma, min, max } => {
                if sigma == 0.0 {
                    out.resize(n, median);
                    return Ok(out);
                }
                let d = LogNormal::new(median.ln(), sigma)
                    .map_err(|e| cx.err(&join(path, "sigma"), format!("invalid lognormal: {e}")))?;
                for _ in 0..n {
                    let mut got = None;
                    for _ in 0..MAX_RESAMPLES {
                        let r = d.sample(rng);
                        if r >= min && r <= max {
                            got = Some(r);
                            break;
                        }
                    }
                    match got {
                        Some(r) => out.push(r),
                        None => {
                            return Err(cx.err(
                                path,
                                format!(
                                    "lognormal (median {}, sigma {}) truncated to [{}, {}] gave no value in range after {MAX_RESAMPLES} draws; widen [min, max] or reduce sigma",
                                    fmt_num(median),
                                    fmt_num(sigma),
                                    fmt_num(min),
                                    fmt_num(max)
                                ),
                            ))
                        }
                    }
                }
            }
        }
        Ok(out)
    }
}
