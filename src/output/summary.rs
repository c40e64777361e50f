//! `summary.json`: what ran, how fast, and where it ended up.

use std::path::Path;

use serde::Serialize;

use super::atomic::write_atomic;
use crate::backend::Energies;
use crate::checkpoint::SceneRecord;
use crate::error::Result;
use crate::measure::MeasurementResult;
use crate::setup::{Setup, TimeStepChoice};

/// Energy partitions plus the derived sums, as written to `summary.json`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct EnergySummary {
    pub kinetic: f64,
    pub kinetic_translational: f64,
    pub kinetic_rotational: f64,
    pub gravitational: f64,
    pub strain: f64,
    pub slip: f64,
    pub dashpot: f64,
    pub stiffness_work: f64,
    /// With adhesion only: the surface energy and the bond-break work.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub surface: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bond_break: Option<f64>,
    pub wall_work: f64,
    pub inserted: f64,
    pub removed: f64,
    pub mechanical: f64,
    pub total: f64,
}

impl EnergySummary {
    /// The summary of a run with adhesion (`Setup::has_adhesion`) carries the surface and
    /// bond-break partitions; a dry run's has neither.
    pub fn of(e: &Energies, adhesion: bool) -> Self {
        let s = EnergySummary::from(e);
        if adhesion { EnergySummary { surface: Some(e.surface), bond_break: Some(e.bond_break), ..s } } else { s }
    }
}

impl From<&Energies> for EnergySummary {
    fn from(e: &Energies) -> Self {
        EnergySummary {
            kinetic: e.kinetic(),
            kinetic_translational: e.kinetic_translational,
            kinetic_rotational: e.kinetic_rotational,
            gravitational: e.gravitational,
            strain: e.strain,
            slip: e.slip,
            dashpot: e.dashpot,
            stiffness_work: e.stiffness_work,
            surface: None,
            bond_break: None,
            wall_work: e.wall_work,
            inserted: e.inserted,
            removed: e.removed,
            mechanical: e.mechanical(),
            total: e.total(),
        }
    }
}

/// How the time step was chosen.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TimeStepSummary {
    /// "explicit" or "auto".
    pub choice: &'static str,
    /// Auto only: fraction of the Rayleigh step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fraction: Option<f64>,
    /// Auto only: Rayleigh critical step, s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rayleigh: Option<f64>,
}

impl From<&TimeStepChoice> for TimeStepSummary {
    fn from(c: &TimeStepChoice) -> Self {
        match c {
            TimeStepChoice::Explicit => TimeStepSummary { choice: "explicit", fraction: None, rayleigh: None },
            TimeStepChoice::Auto { fraction, rayleigh } => {
                TimeStepSummary { choice: "auto", fraction: Some(*fraction), rayleigh: Some(*rayleigh) }
            }
        }
    }
}

/// The scene a run came from.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SceneSummary {
    pub name: String,
    /// The path as given to `talus run`.
    pub path: String,
    /// The same file's absolute path (`talus render` loads it for the walls from any directory).
    pub absolute_path: String,
    /// `fnv1a-64:` and 16 hex digits: the FNV-1a hash of the scene file's text as run (before
    /// any `--set`); absent where the set-up came from no scene file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checksum: Option<String>,
    /// `talus run --set PATH=VALUE`: each PATH and its VALUE, in order; absent without them.
    #[serde(skip_serializing_if = "Overrides::is_empty")]
    pub overrides: Overrides,
}

/// `--set` overrides as a JSON object, PATH to VALUE, in the order given.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Overrides(pub Vec<crate::scene::overrides::Override>);

impl Overrides {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for Overrides {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for o in &self.0 {
            map.serialize_entry(&o.path, &o.value)?;
        }
        map.end()
    }
}

/// Contents of `summary.json`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    pub scene: SceneSummary,
    /// "cpu" or "gpu".
    pub backend: String,
    pub adapter: String,
    /// Particles held at the end.
    pub particles: usize,
    /// Steps run by this invocation.
    pub steps: u64,
    /// s
    pub dt: f64,
    pub time_step: TimeStepSummary,
    /// Simulated time at the end, s.
    pub simulated_time: f64,
    /// Wall-clock seconds of the step loop including outputs.
    pub wall_seconds: f64,
    /// Σ (particles held × steps) / wall_seconds.
    pub particle_steps_per_second: f64,
    /// Active contacts (ball–ball and ball–wall) after the last step.
    pub contacts: u64,
    /// The scene's `energy_tracking`: when false, contacts booked no slip, dashpot or
    /// stiffness work (those partitions read 0 and `total` is not a balance).
    pub energy_tracking: bool,
    pub energies: EnergySummary,
    /// One entry per scene measurement (`"measure"`), in scene order.
    pub measurements: Vec<MeasurementResult>,
    /// Runs with insertions or outlets: what entered and left (`outflow.csv` has the history).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flow: Option<FlowSummary>,
    /// Scenes with `until_rest`: whether and when the run reached rest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rest: Option<RestSummary>,
}

/// `until_rest` at the end of a run: `reached` false when `steps` ran out first.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RestSummary {
    pub reached: bool,
    /// The criterion: kinetic energy below this fraction of its peak…
    pub kinetic_fraction: f64,
    /// …at this many consecutive outputs.
    pub outputs: u64,
    /// Peak kinetic energy over the outputs, J, and the time of the peak, s.
    pub peak_kinetic: f64,
    pub peak_time: f64,
    /// Kinetic energy at the end, J, and its ratio to the peak.
    pub final_kinetic: f64,
    pub final_ratio: f64,
}

/// Per insertion and per outlet: particles and kilograms, cumulative at the end.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlowSummary {
    pub inserted: Vec<FlowEntry>,
    pub outlets: Vec<FlowEntry>,
    pub held_count: u64,
    pub held_mass: f64,
    /// Particles removed because they left the domain (`"lost_particles": "remove"`); their
    /// energy is also in `energies.removed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_particles: Option<LostSummary>,
}

/// Particles removed as lost: count, mass (kg), mechanical energy when removed (J).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LostSummary {
    pub count: u64,
    pub mass: f64,
    pub energy: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FlowEntry {
    pub name: String,
    pub count: u64,
    pub mass: f64,
    /// Insertions only: particles that were due but found no free place (region full).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deferred: Option<u64>,
}

impl FlowSummary {
    pub fn of(setup: &Setup, t: &crate::flow::FlowTotals) -> FlowSummary {
        let inserted = (setup.inserts.iter().enumerate())
            .map(|(k, s)| FlowEntry { name: s.name.clone(), count: t.inserted_count[k], mass: t.inserted_mass[k], deferred: Some(t.deferred[k]) })
            .collect();
        let outlets = (setup.outlets.iter().enumerate())
            .map(|(k, o)| FlowEntry { name: o.name.clone(), count: t.outlet_count[k], mass: t.outlet_mass[k], deferred: None })
            .collect();
        let lost_particles = (setup.checks.lost_particles == crate::model::checks::LostParticles::Remove)
            .then(|| LostSummary { count: t.lost_count, mass: t.lost_mass, energy: t.lost_energy });
        FlowSummary { inserted, outlets, held_count: t.held_count, held_mass: t.held_mass, lost_particles }
    }
}

impl Summary {
    /// The scene/time-step fields from a set-up; the rest is filled by the caller.
    /// With the run's scene record (`talus run`, `talus resume`): its absolute path, the text's
    /// checksum and the overrides; without one, the absolute path of `setup.source`.
    pub fn scene_of(setup: &Setup, record: Option<&SceneRecord>) -> SceneSummary {
        let path = setup.source.display().to_string();
        match record {
            Some(r) => SceneSummary {
                name: setup.name.clone(),
                path,
                absolute_path: r.resolved.display().to_string(),
                checksum: Some(format!("fnv1a-64:{}", crate::scene::overrides::fnv1a64(r.text.as_bytes()))),
                overrides: Overrides(r.overrides.clone()),
            },
            None => SceneSummary {
                name: setup.name.clone(),
                path,
                absolute_path: std::path::absolute(&setup.source).unwrap_or_else(|_| setup.source.clone()).display().to_string(),
                checksum: None,
                overrides: Overrides::default(),
            },
        }
    }

    pub fn to_json(&self) -> String {
        // Serialising plain data cannot fail.
        let mut s = serde_json::to_string_pretty(self).expect("summary serialises");
        s.push('\n');
        s
    }

    /// Write as pretty JSON, atomically.
    pub fn write(&self, path: &Path) -> Result<()> {
        write_atomic(path, self.to_json().as_bytes())
    }
}
