//! Parsing of radius distributions (the type and its sampling: `src/model/distribution.rs`).

use rand::Rng;
use serde_json::Value;

use super::parse::{fmt_num, Cx};
use crate::error::Result;
use crate::model::distribution::{RadiusDist, MAX_RESAMPLES};

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
                format!("unknown distribution \"{other}\"{}; allowed: monodisperse, uniform, lognormal", super::parse::did_you_mean(other, ["monodisperse", "uniform", "lognormal"])),
            )),
        }
    }

    /// Draw `n` radii. `path` is the distribution's key path (for the error when a
    /// truncated lognormal cannot be sampled).
    pub(crate) fn sample_n<R: Rng>(&self, n: usize, rng: &mut R, cx: &Cx, path: &str) -> Result<Vec<f64>> {
        (0..n).map(|_| self.sample(rng).ok_or_else(|| self.unsampleable(cx, path))).collect()
    }

    /// The error of a truncated lognormal that yields no value in range.
    pub(crate) fn unsampleable(&self, cx: &Cx, path: &str) -> crate::error::TalusError {
        match *self {
            RadiusDist::LogNormal { median, sigma, min, max } => cx.err(
                path,
                format!(
                    "lognormal (median {}, sigma {}) truncated to [{}, {}] gave no value in range after {MAX_RESAMPLES} draws; widen [min, max] or reduce sigma",
                    fmt_num(median),
                    fmt_num(sigma),
                    fmt_num(min),
                    fmt_num(max)
                ),
            ),
            _ => cx.err(path, "no radius could be drawn"),
        }
    }
}
