//! `"discharge"`: the steady mass-flow rate W through an outlet, the least-squares slope of
//! the outlet's cumulative mass (`outflow.csv`) over the sampled outputs, compared with
//! Beverloo's correlation for the discharge of a flat-bottomed bin (or a hopper whose walls are
//! shallow enough to hold stagnant zones):
//!
//!   W_B = C ρ_b √g (D − k d)^{5/2}
//!
//! C (default 0.58) and k (default 1.5) are Beverloo's constants, ρ_b the bulk density of the
//! flowing bed, g |gravity|, D the orifice diameter and d the particle diameter.

use serde_json::json;

use super::{MeasurementResult, Observation, Sampler};
use crate::model::measure::Discharge;
use crate::error::{Result, TalusError};

/// Least-squares line through (t, m): (slope, intercept, rms residual).
pub fn fit_line(points: &[(f64, f64)]) -> Option<(f64, f64, f64)> {
    let n = points.len() as f64;
    if points.len() < 2 {
        return None;
    }
    let (mt, mm) = (points.iter().map(|p| p.0).sum::<f64>() / n, points.iter().map(|p| p.1).sum::<f64>() / n);
    let stt: f64 = points.iter().map(|p| (p.0 - mt).powi(2)).sum();
    if stt <= 0.0 {
        return None;
    }
    let slope = points.iter().map(|p| (p.0 - mt) * (p.1 - mm)).sum::<f64>() / stt;
    let intercept = mm - slope * mt;
    let rms = (points.iter().map(|p| (p.1 - intercept - slope * p.0).powi(2)).sum::<f64>() / n).sqrt();
    Some((slope, intercept, rms))
}

/// Collects (time, outlet mass) at the sampled outputs.
pub struct DischargeSampler {
    cfg: Discharge,
    g: f64,
    points: Vec<(f64, f64)>,
}

impl DischargeSampler {
    pub fn new(cfg: Discharge, g: f64) -> DischargeSampler {
        DischargeSampler { cfg, g, points: Vec::new() }
    }
}

impl Sampler for DischargeSampler {
    fn needs_snapshot(&self) -> bool {
        false
    }

    fn sample(&mut self, obs: &Observation) -> Result<()> {
        let flow = obs.flow.ok_or_else(|| TalusError::Other(format!("discharge measurement of outlet \"{}\": the run has no flow totals", self.cfg.outlet_name)))?;
        if self.cfg.to_time.is_none_or(|t| obs.time <= t) {
            self.points.push((obs.time, flow.outlet_mass[self.cfg.outlet]));
        }
        Ok(())
    }

    fn finish(&self, name: &str) -> MeasurementResult {
        let mut r = MeasurementResult::new(name, "discharge", "kg/s");
        let b = &self.cfg.beverloo;
        let predicted = b.rate(self.g);
        let inputs = json!({ "C": b.c, "k": b.k, "bulk_density": b.bulk_density, "orifice_diameter": b.orifice_diameter, "particle_diameter": b.particle_diameter, "g": self.g });
        r.details = json!({ "outlet": self.cfg.outlet_name, "samples": self.points.len(), "beverloo": predicted, "beverloo_inputs": inputs });
        let Some((slope, _, rms)) = fit_line(&self.points) else { return r };
        let (t0, t1) = (self.points[0].0, self.points[self.points.len() - 1].0);
        let (m0, m1) = (self.points[0].1, self.points[self.points.len() - 1].1);
        r.value = Some(slope);
        r.details = json!({
            "outlet": self.cfg.outlet_name,
            "samples": self.points.len(),
            "window": [t0, t1],
            "mass_in_window": m1 - m0,
            "fit_rms_residual_kg": rms,
            "beverloo": predicted,
            "ratio_to_beverloo": if predicted > 0.0 { slope / predicted } else { f64::NAN },
            "beverloo_inputs": inputs,
        });
        r
    }

    fn save(&self) -> serde_json::Value {
        json!({ "points": self.points })
    }

    fn restore(&mut self, saved: &serde_json::Value) -> Result<()> {
        let points = saved.get("points").cloned().unwrap_or_default();
        self.points = serde_json::from_value(points).map_err(|e| TalusError::Other(format!("saved discharge samples: {e}")))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::FlowTotals;
    use crate::model::measure::Beverloo;

    #[test]
    fn beverloo_rate_by_hand() {
        let b = Beverloo { c: 0.58, k: 1.5, bulk_density: 1500.0, orifice_diameter: 0.014, particle_diameter: 0.002 };
        // 0.58 · 1500 · √9.81 · 0.011^2.5
        let want = 0.58 * 1500.0 * 9.81f64.sqrt() * 0.011f64.powf(2.5);
        assert!((b.rate(9.81) - want).abs() < 1e-15 && (b.rate(9.81) - 0.03456).abs() < 1e-4, "{}", b.rate(9.81));
        assert_eq!(Beverloo { orifice_diameter: 0.002, ..b }.rate(9.81), 0.0);
    }

    #[test]
    fn slope_of_a_steady_discharge_within_its_window() {
        let cfg = Discharge { outlet: 1, outlet_name: "o".into(), to_time: Some(0.5), beverloo: Beverloo { c: 0.58, k: 1.5, bulk_density: 1500.0, orifice_diameter: 0.014, particle_diameter: 0.002 } };
        let mut s = DischargeSampler::new(cfg, 9.81);
        for k in 0..=100 {
            let time = 0.01 * k as f64;
            // 0.02 kg/s up to t = 0.5 s, then the bin runs empty (outside the window)
            let m = 0.02 * time.min(0.5) + 1e-4 * if k % 2 == 0 { 1.0 } else { -1.0 };
            let flow = FlowTotals { outlet_mass: vec![0.0, m], ..Default::default() };
            s.sample(&Observation { time, snapshot: None, flow: Some(&flow) }).unwrap();
        }
        let r = s.finish("d");
        let w = r.value.unwrap();
        assert!((w - 0.02).abs() < 2e-4, "{w}");
        assert_eq!(r.details["samples"], 51);
        assert!((r.details["ratio_to_beverloo"].as_f64().unwrap() - w / 0.03456).abs() < 1e-2);
    }
}
