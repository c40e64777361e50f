//! Checkpoints (`checkpoint.talus`, docs/output.md): the whole state of a run at an output
//! boundary, from which `talus resume` continues as if the run had never stopped, and from
//! which a scene's `initial_state` (format `checkpoint`) can start.
//!
//! A checkpoint holds the scene (its JSON text and path, and the files it reads by checksum,
//! `inputs`), the backend's state (`ParticleState`: particles, images, last forces, every
//! contact's history; `ExactState`: per-particle work and the backend's own arrays), the
//! energies carried by particles no longer held, and the run loop's progress
//! (`RunProgress`: outputs so far, the CSV logs, the snapshot index, insertion and outlet
//! state with their random streams, measurements in progress, the rest watch). The byte
//! layout is `container`'s; the metadata is JSON (f64 values print as the shortest decimal
//! that reads back to the same bits), the arrays are raw little-endian.

pub mod container;
pub mod inputs;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::backend::{Backend, Energies};
use crate::contact::history::{history_of, history_row, HISTORY_VALUES};
use crate::error::{Result, TalusError};
use crate::flow::FlowState;
use crate::measure::MeasurementsState;
use crate::model::body::Bodies;
use crate::model::state::{ContactRecord, ExactState, ParticleState};
use crate::output::atomic::write_atomic;
use crate::setup::{Particles, Setup};
use inputs::InputFile;

/// The file name `talus run` and `talus resume` write into their output directory.
pub const CHECKPOINT_FILE: &str = "checkpoint.talus";

/// The scene a run came from: enough to build its set-up again without the scene file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SceneRecord {
    /// The path as given to `talus run` (messages, `summary.json`).
    pub path: PathBuf,
    /// Its absolute path when read: the files the scene names are resolved against it.
    pub resolved: PathBuf,
    /// The JSON text.
    pub text: String,
    /// `talus run --set PATH=VALUE`, in order: applied to `text` before it is parsed
    /// (`scene::overrides`); absent from checkpoints of runs without them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overrides: Vec<crate::scene::override_arg::Override>,
}

/// The text of the scene file `path`; a directory given for it is an error that says so and
/// names the scene files in it.
pub fn read_scene_text(path: &Path) -> Result<String> {
    if path.is_dir() {
        return Err(TalusError::Other(not_a_scene_file(path)));
    }
    std::fs::read_to_string(path).map_err(|e| TalusError::io(path, e))
}

/// What to say of a directory given where a scene file belongs: the scene files it holds.
fn not_a_scene_file(dir: &Path) -> String {
    let mut scenes: Vec<String> = std::fs::read_dir(dir)
        .map(|r| r.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "json")).map(|p| p.display().to_string()).collect())
        .unwrap_or_default();
    scenes.sort();
    let some = match scenes.len() {
        0 => "it holds no .json file".to_string(),
        n if n <= 4 => format!("it holds {}", scenes.join(", ")),
        n => format!("it holds {}, … ({n} .json files)", scenes[..3].join(", ")),
    };
    format!("{}: a directory, not a scene file; name a scene's .json file ({some})", dir.display())
}

impl SceneRecord {

    /// Read the scene file `path`.
    pub fn read(path: &Path) -> Result<SceneRecord> {
        let text = read_scene_text(path)?;
        let resolved = std::fs::canonicalize(path).map_err(|e| TalusError::io(path, e))?;
        Ok(SceneRecord { path: path.to_path_buf(), resolved, text, overrides: Vec::new() })
    }
}

/// `until_rest` in progress (`run::RestWatch`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RestProgress {
    pub peak: f64,
    pub peak_time: f64,
    pub below: u64,
}

/// The energy sentinel in progress (`run::EnergySentinel`): the total energy and step it
/// measures the drift from, the gravitational energy there, and the peak so far of kinetic +
/// strain energy + the gravitational energy released since then.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SentinelProgress {
    pub start_total: f64,
    pub start_step: u64,
    pub peak: f64,
    /// The gravitational energy at `start_step` (absent in checkpoints written before it
    /// was kept: their sentinel goes on with kinetic + strain energy alone).
    #[serde(default)]
    pub start_gravitational: Option<f64>,
}

/// What the run loop carries from one output to the next (`run::run_scene`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunProgress {
    /// The step the run was to end at: `talus resume` without `--steps` or `--until`
    /// continues to it.
    pub end_step: u64,
    /// Output batches so far (the snapshot and measurement cadence count them).
    pub outputs: u64,
    /// Step of the last snapshot written.
    pub last_snapshot: u64,
    pub rest: Option<RestProgress>,
    /// The text of `energy.csv`, `walls.csv` and `outflow.csv` so far (header included).
    pub energy_csv: String,
    pub walls_csv: Option<String>,
    pub outflow_csv: Option<String>,
    /// The snapshots listed in `particles.pvd`: (time, file relative to the run directory).
    pub pvd: Vec<(f64, String)>,
    pub flow: Option<FlowState>,
    pub measurements: MeasurementsState,
    /// Absent in checkpoints written before the sentinel: it then starts from the resumed state.
    #[serde(default)]
    pub sentinel: Option<SentinelProgress>,
}

/// A mesh wall as history keys see it: its facet groups follow those of the meshes before it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MeshRecord {
    pub name: String,
    pub groups: u32,
}

/// The JSON part of a checkpoint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckpointMeta {
    /// The Talus version that wrote it.
    pub talus_version: String,
    /// `Backend::kind` and adapter of the backend that wrote it.
    pub backend: String,
    pub adapter: String,
    pub scene: SceneRecord,
    pub inputs: Vec<InputFile>,
    /// Steps done and the time step (s); time = step × dt.
    pub step: u64,
    pub dt: f64,
    /// Particles held and contacts with history (the lengths of the arrays).
    pub particles: u64,
    pub contacts: u64,
    /// Rigid bodies held (`ParticleState::bodies`; absent, 0, without clumps).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub bodies: u64,
    /// Names of the scene's materials (particles' `material` indexes them), plane walls and
    /// mesh walls (the keys of wall contacts index them).
    pub materials: Vec<String>,
    pub walls: Vec<String>,
    pub meshes: Vec<MeshRecord>,
    /// `Backend::carried`: the work partitions and flow energies of particles no longer held.
    pub carried: Energies,
    pub run: RunProgress,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A run's state at an output boundary.
#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint {
    pub meta: CheckpointMeta,
    pub state: ParticleState,
    pub exact: ExactState,
}

fn bytes<T: bytemuck::Pod>(v: &[T]) -> Vec<u8> {
    bytemuck::cast_slice(v).to_vec()
}

impl Checkpoint {
    /// The state of `backend` (at an output boundary of a run of `setup`) with the run loop's
    /// `run` progress.
    pub fn capture(setup: &Setup, scene: &SceneRecord, inputs: &[InputFile], backend: &mut dyn Backend, run: RunProgress) -> Result<Checkpoint> {
        let state = backend.export_state()?;
        let exact = backend.export_exact()?;
        let meta = CheckpointMeta {
            talus_version: env!("CARGO_PKG_VERSION").into(),
            backend: backend.kind().into(),
            adapter: backend.adapter(),
            scene: scene.clone(),
            inputs: inputs.to_vec(),
            step: state.step,
            dt: setup.dt,
            particles: state.len() as u64,
            contacts: state.history.len() as u64,
            bodies: state.bodies.len() as u64,
            materials: setup.materials.iter().map(|m| m.name.clone()).collect(),
            walls: setup.walls.iter().map(|w| w.name.clone()).collect(),
            meshes: setup.meshes.iter().map(|m| MeshRecord { name: m.name.clone(), groups: m.mesh.group_count }).collect(),
            carried: backend.carried(),
            run,
        };
        Ok(Checkpoint { meta, state, exact })
    }

    /// The file's bytes (`container` layout).
    pub fn to_bytes(&self) -> Vec<u8> {
        let meta = serde_json::to_vec_pretty(&self.meta).expect("checkpoint metadata serialises");
        let (p, s) = (&self.state.particles, &self.state);
        let h = &s.history;
        let mut arrays: Vec<(String, Vec<u8>)> = vec![
            ("position".into(), bytes(&p.position)),
            ("velocity".into(), bytes(&p.velocity)),
            ("angular_velocity".into(), bytes(&p.angular_velocity)),
            ("radius".into(), bytes(&p.radius)),
            ("material".into(), bytes(&p.material)),
            ("image".into(), bytes(&s.image)),
            ("force".into(), bytes(&s.force)),
            ("torque".into(), bytes(&s.torque)),
            ("contact_owner".into(), bytes(&h.iter().map(|c| c.owner).collect::<Vec<u32>>())),
            ("contact_partner".into(), bytes(&h.iter().map(|c| c.partner).collect::<Vec<u32>>())),
            ("contact_history".into(), bytes(&h.iter().map(|c| history_row(&c.history)).collect::<Vec<_>>())),
            ("work".into(), bytes(&self.exact.work)),
        ];
        let b = &s.bodies;
        if !b.is_empty() {
            arrays.extend([
                ("body_position".into(), bytes(&b.position)),
                ("body_image".into(), bytes(&b.image)),
                ("body_orientation".into(), bytes(&b.orientation)),
                ("body_velocity".into(), bytes(&b.velocity)),
                ("body_angular_momentum".into(), bytes(&b.angular_momentum)),
                ("body_mass".into(), bytes(&b.mass)),
                ("body_moments".into(), bytes(&b.moments)),
                ("body_first".into(), bytes(&b.first)),
                ("body_count".into(), bytes(&b.count)),
                ("body_template".into(), bytes(&b.template)),
                ("body_of".into(), bytes(&b.body_of)),
                ("body_offset".into(), bytes(&b.offset)),
            ]);
        }
        arrays.extend(self.exact.raw.iter().map(|(name, b)| (format!("{}.{name}", self.exact.kind), b.clone())));
        container::encode(&meta, &arrays)
    }

    /// Write to `path` atomically (a temporary file renamed over it).
    pub fn write(&self, path: &Path) -> Result<()> {
        write_atomic(path, &self.to_bytes())
    }

    /// Read and check checkpoint `path`; errors name the file and what is wrong with it.
    pub fn read(path: &Path) -> Result<Checkpoint> {
        let data = std::fs::read(path).map_err(|e| TalusError::io(path, e))?;
        Self::from_bytes(path, &data)
    }

    /// Decode the bytes of checkpoint `file`.
    pub fn from_bytes(file: &Path, data: &[u8]) -> Result<Checkpoint> {
        let c = container::decode(file, data)?;
        let bad = |message: String| TalusError::checkpoint(file, message);
        let meta: CheckpointMeta = serde_json::from_slice(&c.meta).map_err(|e| bad(format!("corrupt metadata: {e}")))?;
        let (n, m) = (meta.particles as usize, meta.contacts as usize);
        let array = |name: &str, count: usize, size: usize| -> Result<&[u8]> {
            let (_, b) = c.arrays.iter().find(|(a, _)| a == name).ok_or_else(|| bad(format!("corrupt: no array `{name}`")))?;
            if b.len() != count * size {
                return Err(bad(format!("corrupt: array `{name}` holds {} bytes, not {count} × {size}", b.len())));
            }
            Ok(b)
        };
        let v3 = |name: &str| -> Result<Vec<[f64; 3]>> { Ok(bytemuck::pod_collect_to_vec(array(name, n, 24)?)) };
        let particles = Particles {
            position: v3("position")?,
            velocity: v3("velocity")?,
            angular_velocity: v3("angular_velocity")?,
            radius: bytemuck::pod_collect_to_vec(array("radius", n, 8)?),
            material: bytemuck::pod_collect_to_vec(array("material", n, 4)?),
        };
        if let Some((i, &k)) = particles.material.iter().enumerate().find(|(_, &k)| k as usize >= meta.materials.len()) {
            return Err(bad(format!("corrupt: particle {i} has material {k}; the scene has {}", meta.materials.len())));
        }
        let owner: Vec<u32> = bytemuck::pod_collect_to_vec(array("contact_owner", m, 4)?);
        let partner: Vec<u32> = bytemuck::pod_collect_to_vec(array("contact_partner", m, 4)?);
        let rows: Vec<[f64; HISTORY_VALUES]> = bytemuck::pod_collect_to_vec(array("contact_history", m, 8 * HISTORY_VALUES)?);
        let history: Vec<ContactRecord> = (0..m).map(|k| ContactRecord { owner: owner[k], partner: partner[k], history: history_of(&rows[k]) }).collect();
        if let Some(c) = history.iter().find(|c| c.owner as usize >= n || (c.between_particles() && c.partner as usize >= n)) {
            return Err(bad(format!("corrupt: a contact between {} and {:#x} names a particle beyond the {n} held", c.owner, c.partner)));
        }
        let nb = meta.bodies as usize;
        let bodies = if nb == 0 {
            Bodies::default()
        } else {
            let b = Bodies {
                position: bytemuck::pod_collect_to_vec(array("body_position", nb, 24)?),
                image: bytemuck::pod_collect_to_vec(array("body_image", nb, 12)?),
                orientation: bytemuck::pod_collect_to_vec(array("body_orientation", nb, 32)?),
                velocity: bytemuck::pod_collect_to_vec(array("body_velocity", nb, 24)?),
                angular_momentum: bytemuck::pod_collect_to_vec(array("body_angular_momentum", nb, 24)?),
                mass: bytemuck::pod_collect_to_vec(array("body_mass", nb, 8)?),
                moments: bytemuck::pod_collect_to_vec(array("body_moments", nb, 24)?),
                first: bytemuck::pod_collect_to_vec(array("body_first", nb, 4)?),
                count: bytemuck::pod_collect_to_vec(array("body_count", nb, 4)?),
                template: bytemuck::pod_collect_to_vec(array("body_template", nb, 4)?),
                body_of: bytemuck::pod_collect_to_vec(array("body_of", n, 4)?),
                offset: bytemuck::pod_collect_to_vec(array("body_offset", n, 24)?),
            };
            if let Err(e) = b.check(n) {
                return Err(bad(format!("corrupt: {e}")));
            }
            b
        };
        let state = ParticleState {
            bodies,
            step: meta.step,
            particles,
            image: bytemuck::pod_collect_to_vec(array("image", n, 12)?),
            force: v3("force")?,
            torque: v3("torque")?,
            refresh: vec![false; n],
            history,
        };
        let prefix = format!("{}.", meta.backend);
        let raw = (c.arrays.iter()).filter_map(|(name, b)| name.strip_prefix(&prefix).map(|short| (short.to_string(), b.clone()))).collect();
        let exact = ExactState { kind: meta.backend.clone(), work: bytemuck::pod_collect_to_vec(array("work", n, 32)?), raw };
        Ok(Checkpoint { meta, state, exact })
    }

    /// Simulated time at the checkpoint, s.
    pub fn time(&self) -> f64 {
        self.meta.step as f64 * self.meta.dt
    }
}
