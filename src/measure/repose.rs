//! Dynamic angle of repose of a bed in a rotating drum (method: docs/measurements.md).
//!
//! Particle centres are projected onto the plane perpendicular to the drum axis. In that plane
//! `up` is minus gravity's component perpendicular to the axis and `across` = axis × down.
//! Particles are binned along `across`; each bin holding at least `min_bin_count` particles
//! gives one surface point, its highest particle top (centre height + radius). A least-squares
//! line through the surface points of the middle `surface_fraction` of the occupied width gives
//! the slope; the angle is atan(|slope|). The signed angle is positive when the surface rises
//! towards +`across`, where a drum turning with positive angular velocity about `axis` lifts
//! the bed.

use glam::DVec3;
use serde_json::json;

use super::{MeasurementResult, Observation, Sampler};
use crate::model::measure::ReposeAngle;
use crate::error::Result;

/// The in-plane frame: `across` (= axis × down) and `up` (= −down), both unit vectors
/// perpendicular to `axis`. `None` when gravity is (nearly) parallel to the axis.
pub fn frame(axis: DVec3, gravity: DVec3) -> Option<(DVec3, DVec3)> {
    let a = axis.normalize();
    let perp = gravity - gravity.dot(a) * a;
    if perp.length() <= 1e-9 * gravity.length() || perp.length() == 0.0 {
        return None;
    }
    let down = perp.normalize();
    Some((a.cross(down), -down))
}

/// One fitted free surface.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SurfaceFit {
    /// atan(slope) in degrees, positive when the surface rises towards +across.
    pub signed_angle: f64,
    /// Root-mean-square distance of the fitted surface points from the line, m (vertical).
    pub rms_residual: f64,
    /// Surface points (bins) in the fit.
    pub bins: usize,
}

/// Fit the free surface of particles at `position` with `radius`; `None` when fewer than 3
/// bins qualify in the fitted part.
pub fn fit_surface(cfg: &ReposeAngle, gravity: DVec3, position: &[[f64; 3]], radius: &[f64]) -> Option<SurfaceFit> {
    let (across, up) = frame(cfg.axis, gravity)?;
    let r_max = radius.iter().cloned().fold(0.0, f64::max);
    let width = cfg.bin_width.unwrap_or(2.0 * r_max);
    if position.is_empty() || width <= 0.0 {
        return None;
    }
    // (u, top) of every particle; bins keyed by floor(u / width)
    let pts: Vec<(f64, f64)> = position
        .iter()
        .zip(radius)
        .map(|(x, &r)| {
            let d = DVec3::from(*x) - cfg.center;
            (d.dot(across), d.dot(up) + r)
        })
        .collect();
    let lo = pts.iter().map(|p| (p.0 / width).floor()).fold(f64::INFINITY, f64::min);
    let hi = pts.iter().map(|p| (p.0 / width).floor()).fold(f64::NEG_INFINITY, f64::max);
    let n_bins = (hi - lo) as usize + 1;
    if n_bins > 1_000_000 {
        return None;
    }
    let mut count = vec![0u64; n_bins];
    let mut top: Vec<Option<(f64, f64)>> = vec![None; n_bins];
    for &(u, t) in &pts {
        let b = ((u / width).floor() - lo) as usize;
        count[b] += 1;
        if top[b].is_none_or(|(_, best)| t > best) {
            top[b] = Some((u, t));
        }
    }
    let full: Vec<usize> = (0..n_bins).filter(|&b| count[b] >= cfg.min_bin_count).collect();
    let (first, last) = (*full.first()?, *full.last()?);
    // occupied width: from the left edge of the first full bin to the right edge of the last
    let (left, right) = ((lo + first as f64) * width, (lo + last as f64 + 1.0) * width);
    let mid = 0.5 * (left + right);
    let half = 0.5 * cfg.surface_fraction * (right - left);
    let surface: Vec<(f64, f64)> = full
        .iter()
        .filter(|&&b| ((lo + b as f64 + 0.5) * width - mid).abs() <= half)
        .filter_map(|&b| top[b])
        .collect();
    let (slope, rms) = fit_line(&surface)?;
    Some(SurfaceFit { signed_angle: slope.atan().to_degrees(), rms_residual: rms, bins: surface.len() })
}

/// Least-squares line t = a + b u through at least 3 points: (b, rms residual).
fn fit_line(p: &[(f64, f64)]) -> Option<(f64, f64)> {
    if p.len() < 3 {
        return None;
    }
    let n = p.len() as f64;
    let (mu, mt) = (p.iter().map(|q| q.0).sum::<f64>() / n, p.iter().map(|q| q.1).sum::<f64>() / n);
    let suu: f64 = p.iter().map(|q| (q.0 - mu).powi(2)).sum();
    let sut: f64 = p.iter().map(|q| (q.0 - mu) * (q.1 - mt)).sum();
    if suu <= 0.0 {
        return None;
    }
    let b = sut / suu;
    let rss: f64 = p.iter().map(|q| (q.1 - mt - b * (q.0 - mu)).powi(2)).sum();
    Some((b, (rss / n).sqrt()))
}

/// Collects the fitted angles of the samples.
pub struct ReposeSampler {
    cfg: ReposeAngle,
    gravity: DVec3,
    fits: Vec<SurfaceFit>,
    /// Samples where no surface could be fitted.
    failed: u64,
}

impl ReposeSampler {
    pub fn new(cfg: ReposeAngle, gravity: DVec3) -> ReposeSampler {
        ReposeSampler { cfg, gravity, fits: Vec::new(), failed: 0 }
    }
}

fn mean_std(x: impl Iterator<Item = f64> + Clone) -> (f64, f64) {
    let n = x.clone().count() as f64;
    let mean = x.clone().sum::<f64>() / n;
    let var = if n > 1.0 { x.map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0) } else { 0.0 };
    (mean, var.sqrt())
}

impl Sampler for ReposeSampler {
    fn sample(&mut self, obs: &Observation) -> Result<()> {
        let Some(snapshot) = obs.snapshot else { return Ok(()) };
        match fit_surface(&self.cfg, self.gravity, &snapshot.position, &snapshot.radius) {
            Some(f) => self.fits.push(f),
            None => self.failed += 1,
        }
        Ok(())
    }

    fn finish(&self, name: &str) -> MeasurementResult {
        let n = self.fits.len();
        let mut r = MeasurementResult::new(name, "repose_angle", "deg");
        r.details = json!({ "samples": n, "failed_samples": self.failed });
        if n == 0 {
            return r;
        }
        let (mean, std) = mean_std(self.fits.iter().map(|f| f.signed_angle.abs()));
        let (signed, _) = mean_std(self.fits.iter().map(|f| f.signed_angle));
        let (rms, _) = mean_std(self.fits.iter().map(|f| f.rms_residual));
        let (bins, _) = mean_std(self.fits.iter().map(|f| f.bins as f64));
        r.value = Some(mean);
        r.details = json!({
            "samples": n,
            "failed_samples": self.failed,
            "std": std,
            "min": self.fits.iter().map(|f| f.signed_angle.abs()).fold(f64::INFINITY, f64::min),
            "max": self.fits.iter().map(|f| f.signed_angle.abs()).fold(0.0, f64::max),
            "signed_mean": signed,
            "mean_rms_residual_m": rms,
            "mean_bins": bins,
        });
        r
    }

    fn save(&self) -> serde_json::Value {
        json!({ "fits": self.fits, "failed": self.failed })
    }

    fn restore(&mut self, saved: &serde_json::Value) -> Result<()> {
        #[derive(serde::Deserialize)]
        struct Saved {
            fits: Vec<SurfaceFit>,
            failed: u64,
        }
        let s: Saved = serde_json::from_value(saved.clone()).map_err(|e| crate::error::TalusError::Other(format!("saved repose samples: {e}")))?;
        (self.fits, self.failed) = (s.fits, s.failed);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::backend::Snapshot;
    use super::*;
    use crate::model::measure::{DEFAULT_MIN_BIN_COUNT, DEFAULT_SURFACE_FRACTION};

    const R_DRUM: f64 = 0.1;
    const R: f64 = 0.002;

    fn cfg(axis: DVec3, center: DVec3) -> ReposeAngle {
        ReposeAngle { axis, center, surface_fraction: DEFAULT_SURFACE_FRACTION, bin_width: None, min_bin_count: DEFAULT_MIN_BIN_COUNT }
    }

    /// A hexagonally packed bed of grains (radius `R`, jittered ±5 %) filling a drum of radius
    /// `R_DRUM` below a surface through the axis tilted by `tilt` degrees, 5 layers along the
    /// axis. The lattice rows are turned 17° against the frame: rows parallel to the surface
    /// would make it a staircase of a few steps, which no poured bed is. `across`, `up`, `axis`
    /// are the in-plane frame written out by hand; with `rim`, three layers of grains also line
    /// the drum wall up to 0.5 `R_DRUM` above the axis.
    fn bed(tilt: f64, center: DVec3, across: DVec3, up: DVec3, axis: DVec3, rim: bool) -> (Vec<[f64; 3]>, Vec<f64>) {
        let d = 2.0 * R;
        let slope = tilt.to_radians().tan();
        let (sin, cos) = 17f64.to_radians().sin_cos();
        let mut seed = 12345u64;
        let mut jitter = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 0.1
        };
        let (mut pos, mut rad) = (Vec::new(), Vec::new());
        let rows = (1.5 * R_DRUM / (d * 0.866)).ceil() as i64;
        let cols = (1.5 * R_DRUM / d).ceil() as i64;
        for k in 0..5 {
            for j in -rows..=rows {
                for i in -cols - 1..=cols {
                    let (a, b) = ((i as f64 + 0.5 * (j & 1) as f64) * d, j as f64 * d * 0.866);
                    let (u, v) = (cos * a - sin * b, sin * a + cos * b);
                    let rho = (u * u + v * v).sqrt();
                    let below = v <= slope * u;
                    let on_rim = rim && rho > R_DRUM - 3.0 * d && v < 0.5 * R_DRUM;
                    if rho < R_DRUM - R && (below || on_rim) {
                        let x = center + across * (u + jitter() * R) + up * (v + jitter() * R) + axis * (k as f64 * d);
                        pos.push(x.to_array());
                        rad.push(R * (1.0 + jitter()));
                    }
                }
            }
        }
        (pos, rad)
    }

    #[test]
    fn tilted_beds_give_their_angle_in_several_orientations() {
        let c = DVec3::new(0.3, -0.2, 0.1);
        // (axis, gravity, across, up) with across = axis × down written out by hand
        let cases = [
            (DVec3::Z, DVec3::new(0.0, -9.81, 0.0), DVec3::X, DVec3::Y),
            (DVec3::X, DVec3::new(0.0, 0.0, -9.81), DVec3::Y, DVec3::Z),
            // gravity not perpendicular to the axis: only its in-plane part points down
            (DVec3::new(0.0, 0.6, 0.8), DVec3::new(0.0, 0.0, -9.81), DVec3::new(-1.0, 0.0, 0.0), DVec3::new(0.0, -0.8, 0.6)),
        ];
        for (axis, g, across, up) in cases {
            let (a, u) = frame(axis, g).unwrap();
            assert!((a - across).length() < 1e-12 && (u - up).length() < 1e-12, "frame {a} {u} for axis {axis}, g {g}");
            for tilt in [30.0, -30.0, 40.0, 0.0] {
                let (pos, rad) = bed(tilt, c, across, up, axis, false);
                let f = fit_surface(&cfg(axis, c), g, &pos, &rad).unwrap();
                assert!((f.signed_angle - tilt).abs() < 1.0, "axis {axis}, g {g}, tilt {tilt}: fitted {f:?} ({} grains)", pos.len());
                assert!(f.bins >= 10, "{f:?}");
                assert!(f.rms_residual < R, "{f:?}");
            }
        }
    }

    #[test]
    fn grains_lining_the_wall_are_left_out() {
        let (axis, g) = (DVec3::Z, DVec3::new(0.0, -9.81, 0.0));
        let (pos, rad) = bed(30.0, DVec3::ZERO, DVec3::X, DVec3::Y, axis, true);
        let f = fit_surface(&cfg(axis, DVec3::ZERO), g, &pos, &rad).unwrap();
        assert!((f.signed_angle - 30.0).abs() < 1.0, "{f:?}");
        // fitted over the whole width the rim bends the line well away from 30 degrees
        let all = ReposeAngle { surface_fraction: 1.0, ..cfg(axis, DVec3::ZERO) };
        let f = fit_surface(&all, g, &pos, &rad).unwrap();
        assert!((f.signed_angle - 30.0).abs() > 3.0, "{f:?}");
    }

    #[test]
    fn no_surface_without_enough_bins_or_a_down_direction() {
        assert!(frame(DVec3::Z, DVec3::new(0.0, 0.0, -9.81)).is_none());
        let c = cfg(DVec3::Z, DVec3::ZERO);
        assert!(fit_surface(&c, DVec3::new(0.0, -9.81, 0.0), &[], &[]).is_none());
        let few = [[0.0, 0.0, 0.0], [0.01, 0.0, 0.0], [0.02, 0.0, 0.0]];
        assert!(fit_surface(&c, DVec3::new(0.0, -9.81, 0.0), &few, &[R; 3]).is_none(), "single grains per bin");
    }

    #[test]
    fn sampler_averages_the_samples() {
        let (axis, g) = (DVec3::Z, DVec3::new(0.0, -9.81, 0.0));
        let mut s = ReposeSampler::new(cfg(axis, DVec3::ZERO), g);
        let mut fits = Vec::new();
        for tilt in [26.0, 34.0, -30.0] {
            let (position, radius) = bed(tilt, DVec3::ZERO, DVec3::X, DVec3::Y, axis, false);
            fits.push(fit_surface(&cfg(axis, DVec3::ZERO), g, &position, &radius).unwrap().signed_angle);
            let snap = Snapshot { position, radius, ..Snapshot::default() };
            s.sample(&Observation { time: 0.0, snapshot: Some(&snap), flow: None }).unwrap();
        }
        s.sample(&Observation { time: 0.0, snapshot: Some(&Snapshot::default()), flow: None }).unwrap();
        let r = s.finish("drum");
        let abs: Vec<f64> = fits.iter().map(|a| a.abs()).collect();
        let mean = abs.iter().sum::<f64>() / 3.0;
        let std = (abs.iter().map(|a| (a - mean).powi(2)).sum::<f64>() / 2.0).sqrt();
        assert_eq!((r.name.as_str(), r.kind.as_str(), r.unit.as_str()), ("drum", "repose_angle", "deg"));
        assert!((r.value.unwrap() - mean).abs() < 1e-12 && (mean - 30.0).abs() < 1.0, "{r:?}");
        assert!((r.details["std"].as_f64().unwrap() - std).abs() < 1e-12 && (std - 4.0).abs() < 1.0, "{r:?}");
        assert_eq!(r.details["samples"], 3);
        assert_eq!(r.details["failed_samples"], 1);
        assert!((r.details["signed_mean"].as_f64().unwrap() - fits.iter().sum::<f64>() / 3.0).abs() < 1e-12);
    }
}
