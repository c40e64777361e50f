//! Measurements taken while a scene runs (the scene's `"measure"` list, docs/measurements.md).
//!
//! A `Measure` is one entry of that list: settings common to every type (name, start time,
//! cadence) plus its `MeasureKind`. `Measurements` runs them: `run_scene` calls `observe` after
//! every output batch, which reads one snapshot when some measurement is due and hands it to
//! each due `Sampler`; `finish` returns a `MeasurementResult` per measurement for
//! `summary.json`. A new type adds a `MeasureKind` variant, its parser in
//! `src/scene/measure.rs` and a `Sampler`.

pub mod discharge;
pub mod repose;

use glam::DVec3;
use serde::Serialize;

use crate::backend::{Backend, Snapshot};
use crate::error::Result;
use crate::flow::FlowTotals;
use crate::model::measure::{Measure, MeasureKind};
use crate::setup::Setup;

impl MeasureKind {
    fn sampler(&self, setup: &Setup) -> Box<dyn Sampler> {
        match self {
            MeasureKind::ReposeAngle(cfg) => Box::new(repose::ReposeSampler::new(cfg.clone(), DVec3::from(setup.gravity))),
            MeasureKind::Discharge(cfg) => Box::new(discharge::DischargeSampler::new(cfg.clone(), DVec3::from(setup.gravity).length())),
        }
    }
}

/// The result of one measurement, as written to `summary.json`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MeasurementResult {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: String,
    /// The measured value (mean over samples); `null` when no sample succeeded.
    pub value: Option<f64>,
    pub unit: String,
    /// Type-specific figures (sample count, spread, fit quality).
    pub details: serde_json::Value,
}

impl MeasurementResult {
    /// A result without value or details.
    pub fn new(name: &str, kind: &str, unit: &str) -> MeasurementResult {
        MeasurementResult { name: name.into(), kind: kind.into(), value: None, unit: unit.into(), details: serde_json::Value::Null }
    }

    /// One line for the terminal, with units and 4 significant figures, e.g.
    /// `discharge 0.0831 kg/s, Beverloo 0.0815 kg/s (1.02), window 0.205–0.35 s (measure "rate", outlet "orifice", 30 samples)`
    /// or `repose_angle 31.2 deg ± 1.9 deg, min 28.4 deg, max 34.1 deg (measure "angle", 40 samples)`.
    /// `summary.json` holds every figure in full.
    pub fn line(&self) -> String {
        use crate::error::fmt_num;
        let d = &self.details;
        let num = |key: &str| d.get(key).and_then(|v| v.as_f64());
        let count = |key: &str| d.get(key).and_then(|v| v.as_u64()).unwrap_or(0);
        let unit = &self.unit;
        let value = self.value.map_or_else(|| "no value".to_string(), |v| format!("{} {unit}", fmt_num(v)));
        let mut tail = vec![format!("measure \"{}\"", self.name)];
        let mut parts = vec![format!("{} {value}", self.kind)];
        match self.kind.as_str() {
            "discharge" => {
                if let Some(b) = num("beverloo") {
                    match num("ratio_to_beverloo").filter(|r| r.is_finite()) {
                        Some(r) => parts.push(format!("Beverloo {} {unit} ({})", fmt_num(b), fmt_num(r))),
                        None => parts.push(format!("Beverloo {} {unit}", fmt_num(b))),
                    }
                }
                if let Some([t0, t1]) = d.get("window").and_then(|w| w.as_array()).and_then(|w| <[serde_json::Value; 2]>::try_from(w.clone()).ok()) {
                    if let (Some(t0), Some(t1)) = (t0.as_f64(), t1.as_f64()) {
                        parts.push(format!("window {}–{} s", fmt_num(t0), fmt_num(t1)));
                    }
                }
                if let Some(o) = d.get("outlet").and_then(|o| o.as_str()) {
                    tail.push(format!("outlet \"{o}\""));
                }
                tail.push(format!("{} samples", count("samples")));
            }
            "repose_angle" => {
                if self.value.is_some() {
                    if let Some(s) = num("std") {
                        parts[0] = format!("{} ± {} {unit}", parts[0], fmt_num(s));
                    }
                    if let (Some(lo), Some(hi)) = (num("min"), num("max")) {
                        parts.push(format!("min {} {unit}, max {} {unit}", fmt_num(lo), fmt_num(hi)));
                    }
                }
                tail.push(format!("{} samples", count("samples")));
                if count("failed_samples") > 0 {
                    tail.push(format!("{} failed", count("failed_samples")));
                }
            }
            _ => {
                if !d.is_null() {
                    tail.push(d.to_string());
                }
            }
        }
        format!("{} ({})", parts.join(", "), tail.join(", "))
    }
}

/// What a sampler sees at an output: the time, the particle state (read only when some due
/// sampler needs it) and, in runs with insertions or outlets, the flow totals.
pub struct Observation<'a> {
    pub time: f64,
    pub snapshot: Option<&'a Snapshot>,
    pub flow: Option<&'a FlowTotals>,
}

/// Accumulates the samples of one measurement.
pub trait Sampler {
    /// Whether `sample` needs the particle state (a readback on the GPU).
    fn needs_snapshot(&self) -> bool {
        true
    }
    /// Take one sample.
    fn sample(&mut self, obs: &Observation) -> Result<()>;
    /// The result over all samples so far.
    fn finish(&self, name: &str) -> MeasurementResult;
    /// The samples so far, for a checkpoint (JSON; f64 values read back exactly).
    fn save(&self) -> serde_json::Value;
    /// Continue from what `save` returned.
    fn restore(&mut self, saved: &serde_json::Value) -> Result<()>;
}

/// The samples of every measurement and the outputs observed, as a checkpoint keeps them.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MeasurementsState {
    pub outputs: u64,
    /// (name, what its sampler saved), in scene order.
    pub samplers: Vec<(String, serde_json::Value)>,
}

/// The running measurements of a scene.
pub struct Measurements {
    items: Vec<(Measure, Box<dyn Sampler>)>,
    /// Output batches observed so far.
    outputs: u64,
}

impl Measurements {
    pub fn new(setup: &Setup) -> Measurements {
        let items = setup.measures.iter().map(|m| (m.clone(), m.kind.sampler(setup))).collect();
        Measurements { items, outputs: 0 }
    }

    /// Called after every output batch, at `time` = `step` × dt; reads one snapshot when a
    /// measurement is due (its `every`-th output at or after its `from_time`).
    pub fn observe(&mut self, step: u64, time: f64, backend: &mut dyn Backend, flow: Option<&FlowTotals>) -> Result<()> {
        self.outputs += 1;
        let outputs = self.outputs;
        let due = |m: &Measure| time >= m.from_time && outputs % m.every == 0;
        if !self.items.iter().any(|(m, _)| due(m)) {
            return Ok(());
        }
        let snapshot = match self.items.iter().any(|(m, s)| due(m) && s.needs_snapshot()) {
            true => Some(backend.snapshot()?),
            false => None,
        };
        debug_assert!(snapshot.as_ref().is_none_or(|s| s.step == step));
        let obs = Observation { time, snapshot: snapshot.as_ref(), flow };
        for (m, s) in &mut self.items {
            if due(m) {
                s.sample(&obs)?;
            }
        }
        Ok(())
    }

    /// The state to continue from (`restore`).
    pub fn state(&self) -> MeasurementsState {
        MeasurementsState { outputs: self.outputs, samplers: self.items.iter().map(|(m, s)| (m.name.clone(), s.save())).collect() }
    }

    /// Continue from `state` (saved by `state` for the same scene).
    pub fn restore(&mut self, state: &MeasurementsState) -> Result<()> {
        let names = |v: Vec<&str>| v.join(", ");
        let saved: Vec<&str> = state.samplers.iter().map(|(n, _)| n.as_str()).collect();
        let ours: Vec<&str> = self.items.iter().map(|(m, _)| m.name.as_str()).collect();
        if saved != ours {
            return Err(crate::error::TalusError::Other(format!("the saved measurements are [{}]; the scene's are [{}]", names(saved), names(ours))));
        }
        for ((m, s), (_, v)) in self.items.iter_mut().zip(&state.samplers) {
            s.restore(v).map_err(|e| crate::error::TalusError::Other(format!("measurement {}: {e}", m.name)))?;
        }
        self.outputs = state.outputs;
        Ok(())
    }

    /// One result per measurement, in scene order.
    pub fn finish(&self) -> Vec<MeasurementResult> {
        self.items.iter().map(|(m, s)| s.finish(&m.name)).collect()
    }
}
