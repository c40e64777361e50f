//! The `talus` Python module: scenes, simulations stepped from Python, state as numpy arrays.
//! The run loop is the engine's `simulation::Simulation`, the one `talus run` drives; this file
//! only converts between Python and Rust. See docs/python.md.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use pyo3::exceptions::{PyStopIteration, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::GILOnceCell;
use pyo3::types::{PyBytes, PyDict, PyList, PyModule};

use engine::backend::{Backend, Snapshot};
use engine::checkpoint::inputs::InputFile;
use engine::checkpoint::{Checkpoint, SceneRecord};
use engine::error::TalusError as Error;
use engine::model::state::ParticleState;
use engine::run::BackendChoice;
use engine::scene::overrides::Override;
use engine::setup::Setup;
use engine::simulation::{BackendSlot, CheckpointOptions, Simulation as Sim};

type R<T> = std::result::Result<T, Error>;

// ---------------------------------------------------------------------------------------------
// Exceptions: defined in Python so that `SceneError` is both a `TalusError` and a `ValueError`.

const EXCEPTIONS: &str = r#"
class TalusError(Exception):
    """Base class of the errors Talus raises."""


class SceneError(TalusError, ValueError):
    """A scene that does not load or a bad override: ``key`` names the offending key (dotted,
    e.g. ``materials.glass.fric``), ``file`` the scene."""

    def __init__(self, message, key=None, file=None):
        super().__init__(message)
        self.key = key
        self.file = file


class CheckpointError(TalusError):
    """A checkpoint that cannot be read or used; ``file`` names it."""

    def __init__(self, message, file=None):
        super().__init__(message)
        self.file = file


class BackendError(TalusError):
    """No GPU adapter, or the device refused a request."""


class BlowUpError(TalusError):
    """A run stopped by a check (non-finite state, a lost particle, energy drift): ``step`` and
    ``particle`` (or None) say where; the simulation holds the last good state."""

    def __init__(self, message, step=None, particle=None):
        super().__init__(message)
        self.step = step
        self.particle = particle
"#;

static EXC: GILOnceCell<Py<PyModule>> = GILOnceCell::new();

fn exceptions(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    Ok(EXC
        .get_or_try_init(py, || -> PyResult<Py<PyModule>> {
            let code = std::ffi::CString::new(EXCEPTIONS).expect("no NUL");
            Ok(PyModule::from_code(py, &code, c"talus_exceptions.py", c"talus._exceptions")?.unbind())
        })?
        .bind(py))
}

/// A parser key path (`generators[1].radius.min`, `--set materials.glass.fric`) in dotted form.
fn dotted_key(key: &str) -> String {
    let key = key.strip_prefix("--set ").unwrap_or(key);
    key.replace('[', ".").replace(']', "")
}

/// A Talus error as the Python exception of its kind.
fn to_py(e: Error) -> PyErr {
    Python::with_gil(|py| {
        let make = || -> PyResult<PyErr> {
            let m = exceptions(py)?;
            let msg = e.to_string();
            let obj = match &e {
                Error::Scene { file, key, .. } => m.getattr("SceneError")?.call1((msg, dotted_key(key), file.display().to_string()))?,
                Error::Checkpoint { file, .. } => m.getattr("CheckpointError")?.call1((msg, file.display().to_string()))?,
                Error::NoAdapter(_) | Error::Device(_) => m.getattr("BackendError")?.call1((msg,))?,
                Error::BlowUp { step, particle, .. } => m.getattr("BlowUpError")?.call1((msg, *step, *particle))?,
                _ => m.getattr("TalusError")?.call1((msg,))?,
            };
            Ok(PyErr::from_value(obj))
        };
        make().unwrap_or_else(|err| err)
    })
}

trait OrPy<T> {
    fn py_err(self) -> PyResult<T>;
}

impl<T> OrPy<T> for R<T> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}

fn json_to_py(py: Python<'_>, v: &serde_json::Value) -> PyResult<PyObject> {
    let json = py.import("json")?;
    Ok(json.call_method1("loads", (v.to_string(),))?.unbind())
}

fn py_to_json(py: Python<'_>, obj: &Bound<'_, PyAny>) -> PyResult<serde_json::Value> {
    let json = py.import("json")?;
    let text: String = json.call_method1("dumps", (obj,))?.extract()?;
    serde_json::from_str(&text).map_err(|e| PyValueError::new_err(format!("not JSON: {e}")))
}

// ---------------------------------------------------------------------------------------------
// Scene

/// A scene: its JSON text (and where it came from) plus overrides, checked when made.
///
/// ``Scene.from_json(path_or_text)``, ``Scene.from_dict(d)``; ``to_dict()``, ``to_json()``;
/// ``with_overrides({"materials.glass.fric": 0.3})`` (the ``talus run --set`` paths).
#[pyclass(module = "talus", frozen)]
#[derive(Clone)]
struct Scene {
    record: SceneRecord,
}

impl Scene {
    fn setup(&self) -> R<Setup> {
        engine::scene::overrides::parse_with(&self.record.text, &self.record.path, &self.record.overrides)
    }

    /// The JSON with the overrides applied.
    fn value(&self) -> R<serde_json::Value> {
        let mut root = engine::scene::parse_json(&self.record.text, &self.record.path)?;
        for o in &self.record.overrides {
            engine::scene::overrides::apply(&mut root, o, &self.record.path)?;
        }
        Ok(root)
    }

    fn from_text(text: String, name: &str, base_dir: Option<PathBuf>) -> PyResult<Scene> {
        let dir = match base_dir {
            Some(d) => d,
            None => std::env::current_dir().map_err(|e| PyValueError::new_err(format!("the current directory: {e}")))?,
        };
        let path = std::path::absolute(dir.join(format!("{name}.json"))).unwrap_or_else(|_| dir.join(format!("{name}.json")));
        let scene = Scene { record: SceneRecord { path: path.clone(), resolved: path, text, overrides: Vec::new() } };
        scene.setup().py_err()?;
        Ok(scene)
    }
}

#[pymethods]
impl Scene {
    /// A scene from a file path, or from JSON text (a string starting with ``{``). Text scenes
    /// are named ``name`` and read the files they name relative to ``base_dir`` (default: the
    /// current directory). Raises ``SceneError`` naming the key of a bad value.
    #[staticmethod]
    #[pyo3(signature = (path_or_text, name = "scene", base_dir = None))]
    fn from_json(path_or_text: &Bound<'_, PyAny>, name: &str, base_dir: Option<PathBuf>) -> PyResult<Scene> {
        if let Ok(s) = path_or_text.extract::<String>() {
            if s.trim_start().starts_with('{') {
                return Scene::from_text(s, name, base_dir);
            }
        }
        let path: PathBuf = path_or_text.extract()?;
        let scene = Scene { record: SceneRecord::read(&path).py_err()? };
        scene.setup().py_err()?;
        Ok(scene)
    }

    /// A scene from a dict of the scene file's keys (docs/scenes.md).
    #[staticmethod]
    #[pyo3(signature = (d, name = "scene", base_dir = None))]
    fn from_dict(py: Python<'_>, d: &Bound<'_, PyDict>, name: &str, base_dir: Option<PathBuf>) -> PyResult<Scene> {
        let value = py_to_json(py, d.as_any())?;
        let text = serde_json::to_string_pretty(&value).expect("JSON serialises") + "\n";
        Scene::from_text(text, name, base_dir)
    }

    /// The scene, overrides applied, as JSON text (``talus run`` of it runs the same scene).
    fn to_json(&self) -> PyResult<String> {
        Ok(serde_json::to_string_pretty(&self.value().py_err()?).expect("JSON serialises") + "\n")
    }

    /// The scene, overrides applied, as a dict.
    fn to_dict(&self, py: Python<'_>) -> PyResult<PyObject> {
        json_to_py(py, &self.value().py_err()?)
    }

    /// A copy with values changed, by dotted path (``talus run --set``): e.g.
    /// ``{"materials.glass.fric": 0.3, "generators.0.count": 500}``. ``None`` removes a key.
    /// Raises ``SceneError`` (``.key`` = the path) when a path or value is wrong.
    fn with_overrides(&self, py: Python<'_>, overrides: &Bound<'_, PyDict>) -> PyResult<Scene> {
        let mut all = self.record.overrides.clone();
        for (k, v) in overrides.iter() {
            let path: String = k.extract()?;
            all.push(Override { path, value: py_to_json(py, &v)? });
        }
        let mut record = self.record.clone();
        record.overrides = engine::scene::overrides::effective(all);
        let scene = Scene { record };
        scene.setup().py_err()?;
        Ok(scene)
    }

    /// The scene's name (its file stem).
    #[getter]
    fn name(&self) -> PyResult<String> {
        Ok(self.setup().py_err()?.name)
    }

    /// The scene file (for a text scene: the name it was given, in ``base_dir``).
    #[getter]
    fn path(&self) -> PathBuf {
        self.record.path.clone()
    }

    /// The overrides, as a dict of path to value.
    #[getter]
    fn overrides(&self, py: Python<'_>) -> PyResult<PyObject> {
        let d = PyDict::new(py);
        for o in &self.record.overrides {
            d.set_item(&o.path, json_to_py(py, &o.value)?)?;
        }
        Ok(d.into_any().unbind())
    }

    /// Particles at the start, the time step and the run length the scene asks for.
    fn summary(&self, py: Python<'_>) -> PyResult<PyObject> {
        let s = self.setup().py_err()?;
        let d = PyDict::new(py);
        d.set_item("name", &s.name)?;
        d.set_item("particles", s.particles.len())?;
        d.set_item("dt", s.dt)?;
        d.set_item("steps", s.steps)?;
        d.set_item("output_every", s.output_every)?;
        Ok(d.into_any().unbind())
    }

    fn __repr__(&self) -> String {
        format!("Scene({:?}, overrides={})", self.record.path.display().to_string(), self.record.overrides.len())
    }
}

// ---------------------------------------------------------------------------------------------
// Simulation

/// What one Python `Simulation` holds.
struct Inner {
    sim: Sim<'static>,
    scene: SceneRecord,
    inputs: Vec<InputFile>,
    /// The particle state now (GPU: one readback), dropped by any change.
    cache: Option<Snapshot>,
    /// Where the scene's run ends (`run()` without arguments goes there).
    scene_end: u64,
}

/// `Sim<'static>` only ever holds an owned set-up and an owned `Box<dyn Backend + Send>`
/// (`BackendSlot::Owned`; the borrowed variant needs a caller's lifetime), both `Send`: the
/// simulation may move to the thread that steps it while the GIL is released.
struct SendInner(Inner);
// SAFETY: see above; `Setup` is plain data (Arc'd meshes), the backend is `Send`.
unsafe impl Send for SendInner {}

/// A scene stepped on one backend (see docs/python.md).
///
/// ``Simulation(scene, backend="auto", out=None)``: ``backend`` is ``"auto"`` (a hardware GPU,
/// else the CPU), ``"cpu"`` or ``"gpu"``; with ``out`` (a directory) ``run()`` writes the files
/// ``talus run`` writes. ``Simulation.from_checkpoint(path)`` continues a checkpoint.
#[pyclass(module = "talus")]
struct Simulation {
    inner: Mutex<SendInner>,
    #[pyo3(get)]
    notice: Option<String>,
}

fn parse_choice(backend: &str) -> PyResult<BackendChoice> {
    backend.parse::<BackendChoice>().map_err(|e| PyValueError::new_err(e.to_string()))
}

impl Simulation {
    fn lock(&self) -> MutexGuard<'_, SendInner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn with<T>(&self, f: impl FnOnce(&mut Inner) -> R<T>) -> PyResult<T> {
        let mut g = self.lock();
        f(&mut g.0).py_err()
    }

    fn snapshot<T>(&self, f: impl FnOnce(&Snapshot) -> T) -> PyResult<T> {
        self.with(|i| {
            if i.cache.is_none() {
                i.cache = Some(i.sim.backend().snapshot()?);
            }
            Ok(f(i.cache.as_ref().expect("read above")))
        })
    }

    /// Step to `limit` or the next output (one batch) with the GIL released; Python signals
    /// are checked after it. A blow-up with an output directory leaves its stop record.
    fn batch(&self, py: Python<'_>, limit: u64) -> PyResult<()> {
        let r = py.allow_threads(|| {
            let mut g = self.lock();
            let i = &mut g.0;
            i.cache = None;
            i.sim.advance(limit).map_err(|e| match i.sim.out_dir().map(Path::to_path_buf) {
                Some(dir) => engine::run::record_stop(i.sim.setup(), Some(&i.scene), &dir, e),
                None => e,
            })
        });
        r.py_err()?;
        if let Err(e) = py.check_signals() {
            // Ctrl-C: stop here; with an output directory, the checkpoint as `talus run` writes it
            let _ = self.with(|i| Ok(i.sim.interrupt()));
            return Err(e);
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn make(scene: SceneRecord, inputs: Vec<InputFile>, setup: Setup, backend: Box<dyn Backend + Send>, out: Option<PathBuf>, steps: Option<u64>, progress: Option<engine::checkpoint::RunProgress>, every: Option<u64>) -> R<Inner> {
        let checkpoint = Some(CheckpointOptions { scene: scene.clone(), inputs: inputs.clone(), every });
        let sim = Sim::start(Cow::Owned(setup), BackendSlot::Owned(backend), out.as_deref(), steps, checkpoint, progress)?;
        let scene_end = sim.end_step();
        Ok(Inner { sim, scene, inputs, cache: None, scene_end })
    }

    /// The end step of `run(steps, until)` from the current step.
    fn end_of(i: &mut Inner, steps: Option<u64>, until: Option<f64>) -> PyResult<u64> {
        let done = i.sim.steps_done();
        match (steps, until) {
            (Some(_), Some(_)) => Err(PyValueError::new_err("give steps or until, not both")),
            (Some(n), None) => Ok(done + n),
            (None, Some(t)) => {
                if !t.is_finite() {
                    return Err(PyValueError::new_err(format!("until = {t}: not a time")));
                }
                let x = t / i.sim.setup().dt;
                let n = x.round();
                let end = if (x - n).abs() <= 1e-9 * n.max(1.0) { n } else { x.ceil() };
                Ok((end.max(0.0) as u64).max(done))
            }
            (None, None) => Ok(i.scene_end.max(done)),
        }
    }

    /// Edit the particle state (id order) and give it back to the backend before the next
    /// step: the backend's state is exported, changed and imported (its work sums kept).
    fn edit(&self, what: &str, f: impl FnOnce(&mut ParticleState) -> PyResult<bool>) -> PyResult<()> {
        let mut g = self.lock();
        let i = &mut g.0;
        if i.sim.setup().has_bodies() {
            return Err(to_py(Error::Other(format!("{what}: the scene has rigid clumps, whose components move with their bodies; setting the state of clumps is not supported"))));
        }
        let mut user_err = None;
        let r = i.sim.edit_state(|b| {
            let mut state = b.export_state()?;
            let mut exact = b.export_exact()?;
            let carried = b.carried();
            let setup_refresh = f(&mut state);
            let refresh = match setup_refresh {
                Ok(r) => r,
                Err(e) => {
                    user_err = Some(e);
                    return Ok(());
                }
            };
            if refresh {
                state.refresh.iter_mut().for_each(|r| *r = true);
            }
            // The CPU's own arrays (strain, contact counts, last spins) do not depend on the
            // velocities: after a velocity edit they go back as they were. Otherwise (moved
            // particles; the GPU's arrays, which hold the velocities) only the per-particle
            // work and bond-break energy go back, and the import re-evaluates the rest.
            if refresh || exact.kind != "cpu" {
                exact.kind = format!("{} (edited)", exact.kind);
            }
            b.import_state(&state)?;
            b.import_exact(&exact)?;
            b.set_carried(carried);
            Ok(())
        });
        i.cache = None;
        r.py_err()?;
        match user_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// `arr` as an (m, 3) float64 array with m = the particles or `ids`, and the ids it sets.
    fn rows(py: Python<'_>, what: &str, n: usize, arr: &Bound<'_, PyAny>, ids: Option<&Bound<'_, PyAny>>) -> PyResult<(Vec<[f64; 3]>, Vec<usize>)> {
        let np = py.import("numpy")?;
        let ids: Vec<usize> = match ids {
            None => (0..n).collect(),
            Some(ids) => {
                let a = np.call_method1("asarray", (ids,))?;
                if a.getattr("ndim")?.extract::<usize>()? != 1 || !a.getattr("dtype")?.getattr("kind")?.extract::<String>()?.starts_with(['i', 'u']) {
                    return Err(PyValueError::new_err(format!("{what}: ids must be a 1-D array of integer particle ids")));
                }
                let a = np.call_method1("ascontiguousarray", (a, "<i8"))?;
                let bytes: Vec<u8> = a.call_method0("tobytes")?.extract()?;
                let v: Vec<i64> = bytes.chunks(8).map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes"))).collect();
                let mut out = Vec::with_capacity(v.len());
                for id in v {
                    if id < 0 || id as usize >= n {
                        return Err(PyValueError::new_err(format!("{what}: id {id} is not a particle (ids are 0 to {})", n as i64 - 1)));
                    }
                    out.push(id as usize);
                }
                out
            }
        };
        let m = ids.len();
        let a = np.call_method1("asarray", (arr, "float64"))?;
        let shape: Vec<usize> = a.getattr("shape")?.extract()?;
        if shape[..] != [m, 3] {
            let whose = if m == n { "one row per particle" } else { "one row per id" };
            return Err(PyValueError::new_err(format!("{what}: expected an array of shape ({m}, 3) ({whose}: x, y, z), got shape {shape:?}")));
        }
        let a = np.call_method1("ascontiguousarray", (a, "<f8"))?;
        let bytes: Vec<u8> = a.call_method0("tobytes")?.extract()?;
        let flat: Vec<f64> = bytes.chunks(8).map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes"))).collect();
        if let Some(k) = flat.iter().position(|x| !x.is_finite()) {
            return Err(PyValueError::new_err(format!("{what}: row {} holds {} (not finite)", k / 3, flat[k])));
        }
        Ok((flat.chunks(3).map(|c| [c[0], c[1], c[2]]).collect(), ids))
    }

    fn set_rows(&self, py: Python<'_>, what: &str, arr: &Bound<'_, PyAny>, ids: Option<&Bound<'_, PyAny>>, which: u8) -> PyResult<()> {
        let (n, setup) = {
            let g = self.lock();
            (g.0.sim.particle_count(), g.0.sim.setup().clone())
        };
        let (rows, ids) = Self::rows(py, what, n, arr, ids)?;
        self.edit(what, |state| {
            if state.len() != n {
                return Err(PyValueError::new_err(format!("{what}: the backend holds {} particles, not {n}", state.len())));
            }
            let p = &mut state.particles;
            for (row, &id) in rows.iter().zip(&ids) {
                match which {
                    0 => p.velocity[id] = *row,
                    1 => p.angular_velocity[id] = *row,
                    _ => {
                        let (w, image) = setup.wrap(glam::DVec3::from(*row));
                        p.position[id] = w.to_array();
                        state.image[id] = image;
                    }
                }
            }
            // moved particles get their forces evaluated again (Δt = 0, from their history)
            Ok(which == 2)
        })
    }
}

/// A read-only numpy array (a copy: numpy reads the bytes of an immutable `bytes` object) of
/// little-endian values with `shape`.
fn np_array<'py>(py: Python<'py>, bytes: Vec<u8>, dtype: &str, shape: &[usize]) -> PyResult<Bound<'py, PyAny>> {
    let np = py.import("numpy")?;
    let b = PyBytes::new(py, &bytes);
    let a = np.call_method1("frombuffer", (b, dtype))?;
    a.call_method1("reshape", (shape.to_vec(),))
}

/// An (n, 3) float64 array.
fn arr3<'py>(py: Python<'py>, v: &[[f64; 3]]) -> PyResult<Bound<'py, PyAny>> {
    np_array(py, v.iter().flatten().flat_map(|x| x.to_le_bytes()).collect(), "<f8", &[v.len(), 3])
}

/// An (n,) float64 array.
fn arr1<'py>(py: Python<'py>, v: &[f64]) -> PyResult<Bound<'py, PyAny>> {
    np_array(py, v.iter().flat_map(|x| x.to_le_bytes()).collect(), "<f8", &[v.len()])
}

/// An (n,) int64 array.
fn arr1i<'py>(py: Python<'py>, v: &[i64]) -> PyResult<Bound<'py, PyAny>> {
    np_array(py, v.iter().flat_map(|x| x.to_le_bytes()).collect(), "<i8", &[v.len()])
}

fn energies_dict<'py>(py: Python<'py>, e: &engine::backend::Energies) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in [
        ("kinetic", e.kinetic()),
        ("kinetic_translational", e.kinetic_translational),
        ("kinetic_rotational", e.kinetic_rotational),
        ("gravitational", e.gravitational),
        ("strain", e.strain),
        ("surface", e.surface),
        ("slip", e.slip),
        ("dashpot", e.dashpot),
        ("stiffness_work", e.stiffness_work),
        ("bond_break", e.bond_break),
        ("wall_work", e.wall_work),
        ("inserted", e.inserted),
        ("removed", e.removed),
        ("mechanical", e.mechanical()),
        ("dissipated", e.dissipated()),
        ("total", e.total()),
    ] {
        d.set_item(k, v)?;
    }
    Ok(d)
}

#[pymethods]
impl Simulation {
    #[new]
    #[pyo3(signature = (scene, backend = "auto", out = None, checkpoint_every = None))]
    fn new(py: Python<'_>, scene: &Scene, backend: &str, out: Option<PathBuf>, checkpoint_every: Option<u64>) -> PyResult<Simulation> {
        let choice = parse_choice(backend)?;
        let record = scene.record.clone();
        let (inner, notice) = py
            .allow_threads(|| -> R<(SendInner, Option<String>)> {
                let setup = scene.setup()?;
                let inputs = engine::checkpoint::inputs::record(&setup.input_files)?;
                let (b, notice) = engine::run::open_backend(&setup, choice)?;
                Ok((SendInner(Self::make(record, inputs, setup, b, out, None, None, checkpoint_every)?), notice))
            })
            .py_err()?;
        Ok(Simulation { inner: Mutex::new(inner), notice })
    }

    /// Continue checkpoint ``path`` (from ``talus run``, ``talus resume`` or
    /// ``save_checkpoint``) on ``backend``; with ``out`` the outputs continue there.
    #[staticmethod]
    #[pyo3(signature = (path, backend = "auto", out = None, checkpoint_every = None))]
    fn from_checkpoint(py: Python<'_>, path: PathBuf, backend: &str, out: Option<PathBuf>, checkpoint_every: Option<u64>) -> PyResult<Simulation> {
        let choice = parse_choice(backend)?;
        let (inner, notice) = py
            .allow_threads(|| -> R<(SendInner, Option<String>)> {
                let c = Checkpoint::read(&path)?;
                let setup = engine::resume::setup_of(&path, &c)?;
                let (b, notice) = engine::resume::open_at(&setup, &c, choice)?;
                let progress = match &out {
                    Some(dir) => engine::resume::progress_in(&path, &c, dir),
                    None => c.meta.run.clone(),
                };
                let steps = c.meta.run.end_step.saturating_sub(c.meta.step);
                let inner = Self::make(c.meta.scene.clone(), c.meta.inputs.clone(), setup, b, out, Some(steps), Some(progress), checkpoint_every)?;
                Ok((SendInner(inner), notice))
            })
            .py_err()?;
        Ok(Simulation { inner: Mutex::new(inner), notice })
    }

    /// Advance ``n`` steps. Outputs (energies, logs, insertions and outlets, measurements)
    /// fall at the scene's output cadence, so ``step(a); step(b)`` equals ``step(a + b)``.
    #[pyo3(signature = (n = 1))]
    fn step(&self, py: Python<'_>, n: u64) -> PyResult<()> {
        let target = self.lock().0.sim.steps_done() + n;
        while self.lock().0.sim.steps_done() < target {
            self.batch(py, target)?;
        }
        Ok(())
    }

    /// Run to the scene's end (``steps``/``duration``, or ``until_rest``), or ``steps`` more
    /// steps, or to simulated time ``until`` (s; these two ignore ``until_rest``). ``callback(sim)`` is called every ``every``
    /// steps (default: every output); returning ``False`` stops the run. Ends like ``talus
    /// run``: with ``out``, the checkpoint, ``summary.json`` and pictures are written. Returns
    /// the summary as a dict.
    #[pyo3(signature = (steps = None, until = None, every = None, callback = None))]
    fn run(slf: &Bound<'_, Self>, py: Python<'_>, steps: Option<u64>, until: Option<f64>, every: Option<u64>, callback: Option<PyObject>) -> PyResult<PyObject> {
        let it = RunIter::new(slf, steps, until, every)?;
        let mut it = it;
        while let Some(_step) = it.next_chunk(py)? {
            {
                if let Some(cb) = &callback {
                    let r = cb.call1(py, (slf,))?;
                    let r = r.bind(py);
                    if r.is_instance_of::<pyo3::types::PyBool>() && !r.extract::<bool>()? {
                        break;
                    }
                }
            }
        }
        it.finish(py)
    }

    /// An iterator over a run (as ``run``, without a callback): yields the step count every
    /// ``every`` steps (default: every output), e.g. for a progress bar. ``len()`` is the
    /// number of yields if the run is not ended early by ``until_rest``.
    #[pyo3(signature = (steps = None, until = None, every = None))]
    fn iter_run(slf: &Bound<'_, Self>, steps: Option<u64>, until: Option<f64>, every: Option<u64>) -> PyResult<RunIter> {
        RunIter::new(slf, steps, until, every)
    }

    /// Simulated time, s.
    #[getter]
    fn time(&self) -> f64 {
        let mut g = self.lock();
        let i = &mut g.0;
        i.sim.steps_done() as f64 * i.sim.setup().dt
    }

    /// Steps taken since step 0 of the scene.
    #[getter]
    fn step_count(&self) -> u64 {
        self.lock().0.sim.steps_done()
    }

    /// The time step, s.
    #[getter]
    fn dt(&self) -> f64 {
        self.lock().0.sim.setup().dt
    }

    /// Particles held now.
    #[getter]
    fn n_particles(&self) -> usize {
        self.lock().0.sim.particle_count()
    }

    /// "cpu" or "gpu".
    #[getter]
    fn backend(&self) -> String {
        self.lock().0.sim.backend().kind().to_string()
    }

    /// The device (adapter name, threads).
    #[getter]
    fn adapter(&self) -> String {
        self.lock().0.sim.backend().adapter()
    }

    /// The step the scene's run ends at (``run()`` without arguments goes there).
    #[getter]
    fn end_step(&self) -> u64 {
        self.lock().0.scene_end
    }

    /// The output directory, or None.
    #[getter]
    fn out(&self) -> Option<PathBuf> {
        self.lock().0.sim.out_dir().map(Path::to_path_buf)
    }

    /// The scene this simulation runs.
    #[getter]
    fn scene(&self) -> Scene {
        Scene { record: self.lock().0.scene.clone() }
    }

    /// Positions (n, 3) float64, m, by particle id; unwrapped on periodic axes. A read-only copy.
    #[getter]
    fn positions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.snapshot(|s| s.position.clone()).and_then(|v| arr3(py, &v))
    }

    /// Velocities (n, 3) float64, m/s. A read-only copy.
    #[getter]
    fn velocities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.snapshot(|s| s.velocity.clone()).and_then(|v| arr3(py, &v))
    }

    /// Angular velocities (n, 3) float64, rad/s. A read-only copy.
    #[getter]
    fn angular_velocities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.snapshot(|s| s.angular_velocity.clone()).and_then(|v| arr3(py, &v))
    }

    /// Contact forces (n, 3) float64, N, of the last step (gravity excluded). A read-only copy.
    #[getter]
    fn forces<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.snapshot(|s| s.force.clone()).and_then(|v| arr3(py, &v))
    }

    /// Contact torques (n, 3) float64, N·m. A read-only copy.
    #[getter]
    fn torques<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.snapshot(|s| s.torque.clone()).and_then(|v| arr3(py, &v))
    }

    /// Radii (n,) float64, m.
    #[getter]
    fn radii<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.snapshot(|s| s.radius.clone()).and_then(|v| arr1(py, &v))
    }

    /// Masses (n,) float64, kg: each sphere's (density × volume; for clumps, the component
    /// spheres').
    #[getter]
    fn masses<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let m = self.with(|i| {
            let state = i.sim.backend().export_state()?;
            let setup = i.sim.setup();
            Ok(state.particles.radius.iter().zip(&state.particles.material).map(|(&r, &mat)| setup.mass_of(mat, r)).collect::<Vec<f64>>())
        })?;
        arr1(py, &m)
    }

    /// Particle ids (n,) int64: 0 to n-1, the row order of every array (outlets renumber).
    #[getter]
    fn ids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let n = self.lock().0.sim.particle_count();
        arr1i(py, &(0..n as i64).collect::<Vec<_>>())
    }

    /// Set velocities (m/s), an (n, 3) array, or (len(ids), 3) with ``ids``; applied before
    /// the next step, on either backend.
    #[pyo3(signature = (arr, ids = None))]
    fn set_velocities(&self, py: Python<'_>, arr: &Bound<'_, PyAny>, ids: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        self.set_rows(py, "set_velocities", arr, ids, 0)
    }

    /// Set angular velocities (rad/s), as ``set_velocities``.
    #[pyo3(signature = (arr, ids = None))]
    fn set_angular_velocities(&self, py: Python<'_>, arr: &Bound<'_, PyAny>, ids: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        self.set_rows(py, "set_angular_velocities", arr, ids, 1)
    }

    /// Set positions (m), as ``set_velocities``; the moved particles' contact forces are
    /// evaluated again from their history before the next step.
    #[pyo3(signature = (arr, ids = None))]
    fn set_positions(&self, py: Python<'_>, arr: &Bound<'_, PyAny>, ids: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        self.set_rows(py, "set_positions", arr, ids, 2)
    }

    /// Give wall ``name`` (a plane, box face or mesh wall) the translation velocity
    /// ``velocity`` (m/s, 3 values) from now on: its velocity goes linearly from the current
    /// value to this one over the next step, then holds (its prescribed motion from now on is
    /// replaced). Applied before the next step, on either backend.
    fn set_wall_velocity(&self, name: &str, velocity: [f64; 3]) -> PyResult<()> {
        if velocity.iter().any(|v| !v.is_finite()) {
            return Err(PyValueError::new_err(format!("set_wall_velocity: {velocity:?} is not a velocity")));
        }
        let mut g = self.lock();
        let i = &mut g.0;
        let mut setup = i.sim.setup().clone();
        let t = i.sim.steps_done() as f64 * setup.dt;
        let motion = match (setup.walls.iter_mut().find(|w| w.name == name), setup.meshes.iter_mut().find(|m| m.name == name)) {
            (Some(w), _) => &mut w.motion,
            (None, Some(m)) => &mut m.motion,
            (None, None) => {
                let names: Vec<&str> = i.sim.setup().walls.iter().map(|w| w.name.as_str()).chain(i.sim.setup().meshes.iter().map(|m| m.name.as_str())).collect();
                return Err(PyValueError::new_err(format!("set_wall_velocity: no wall `{name}` (the walls: {})", names.join(", "))));
            }
        };
        let now = motion.velocity.value(t);
        motion.velocity.keys.retain(|(k, _)| *k < t);
        motion.velocity.keys.push((t, now));
        motion.velocity.keys.push((t + setup.dt, glam::DVec3::from(velocity)));
        let kind: BackendChoice = i.sim.backend().kind().parse().expect("cpu or gpu");
        let r = (|| -> R<()> {
            let b = i.sim.backend();
            let (state, exact, carried) = (b.export_state()?, b.export_exact()?, b.carried());
            let (mut nb, _) = engine::run::open_backend(&setup, kind)?;
            nb.import_state(&state)?;
            nb.import_exact(&exact)?;
            nb.set_carried(carried);
            i.sim.replace(setup, nb);
            i.cache = None;
            Ok(())
        })();
        r.py_err()
    }

    /// Every energy partition now (J), with ``kinetic``, ``mechanical``, ``dissipated`` and
    /// the balance ``total`` (docs/output.md, energy.csv).
    fn energies<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let e = self.with(|i| i.sim.backend().energies())?;
        energies_dict(py, &e)
    }

    /// Active contacts after the last step. Ball–ball: ``pairs`` (m, 2) int64 (ids, lower
    /// first), ``overlaps`` (m,) m, ``normal_forces`` (m,) N (magnitude) and ``shear_forces``
    /// (m, 3) N (on the second particle). Ball–wall: ``wall_particles`` (k,) int64,
    /// ``walls`` (a list of k wall names; a mesh wall once per facet group touched),
    /// ``wall_normal_forces`` (k,), ``wall_shear_forces`` (k, 3).
    fn contacts<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (state, snap) = self.with(|i| {
            let state = i.sim.backend().export_state()?;
            let snap = i.sim.backend().snapshot()?;
            Ok((state, snap))
        })?;
        let (mut pairs, mut overlaps, mut fnormal, mut fshear) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut wp, mut wk, mut wn, mut ws) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let g = self.lock();
        let setup = g.0.sim.setup();
        let bases = engine::setup::mesh_group_bases(&setup.meshes).py_err()?;
        let wall_name = |key: u32| -> String {
            use engine::layout::consts::{MESH_KEY_BIT, WALL_KEY_BIT};
            let k = key & !WALL_KEY_BIT;
            if k & MESH_KEY_BIT == 0 {
                return setup.walls.get(k as usize).map(|w| w.name.clone()).unwrap_or_default();
            }
            let group = k & !MESH_KEY_BIT;
            let m = bases.iter().rposition(|&b| b <= group).unwrap_or(0);
            setup.meshes.get(m).map(|w| w.name.clone()).unwrap_or_default()
        };
        for c in &state.history {
            let h = &c.history;
            if c.between_particles() {
                let (a, b) = (c.owner as usize, c.partner as usize);
                let d = setup.minimum_image(glam::DVec3::from(snap.position[b]) - glam::DVec3::from(snap.position[a]));
                pairs.push([a as i64, b as i64]);
                overlaps.push(snap.radius[a] + snap.radius[b] - d.length());
                fnormal.push(h.normal_force);
                fshear.push(h.shear.to_array());
            } else {
                wp.push(c.owner as i64);
                wk.push(wall_name(c.partner));
                wn.push(h.normal_force);
                ws.push(h.shear.to_array());
            }
        }
        drop(g);
        let d = PyDict::new(py);
        let flat: Vec<u8> = pairs.iter().flatten().flat_map(|x| x.to_le_bytes()).collect();
        d.set_item("pairs", np_array(py, flat, "<i8", &[pairs.len(), 2])?)?;
        d.set_item("overlaps", arr1(py, &overlaps)?)?;
        d.set_item("normal_forces", arr1(py, &fnormal)?)?;
        d.set_item("shear_forces", arr3(py, &fshear)?)?;
        d.set_item("wall_particles", arr1i(py, &wp)?)?;
        d.set_item("walls", PyList::new(py, &wk)?)?;
        d.set_item("wall_normal_forces", arr1(py, &wn)?)?;
        d.set_item("wall_shear_forces", arr3(py, &ws)?)?;
        Ok(d)
    }

    /// Force (N) and torque about its load point (N·m) on every wall in the last step, by
    /// wall name: ``{"floor": {"force": array(3), "torque": array(3), "load_point": array(3)}}``.
    fn wall_loads<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (loads, points) = self.with(|i| {
            let loads = i.sim.backend().wall_loads()?;
            let points: Vec<(String, [f64; 3])> = i.sim.setup().load_points().into_iter().map(|(n, p)| (n.to_string(), p)).collect();
            Ok((loads, points))
        })?;
        let d = PyDict::new(py);
        for ((name, p), l) in points.iter().zip(&loads) {
            let w = PyDict::new(py);
            w.set_item("force", arr1(py, &l.force)?)?;
            w.set_item("torque", arr1(py, &l.torque)?)?;
            w.set_item("load_point", arr1(py, p)?)?;
            d.set_item(name, w)?;
        }
        Ok(d)
    }

    /// The scene's measurements so far (``"measure"`` in the scene), as ``summary.json``
    /// gives them: a list of dicts with ``name``, ``type``, ``value``, ``unit``, ``details``.
    fn measurements(&self, py: Python<'_>) -> PyResult<PyObject> {
        let m = self.lock().0.sim.measurements().finish();
        json_to_py(py, &serde_json::to_value(&m).expect("serialises"))
    }

    /// What ``summary.json`` holds for the run so far, as a dict.
    fn summary(&self, py: Python<'_>) -> PyResult<PyObject> {
        let s = self.with(|i| i.sim.summary())?;
        json_to_py(py, &serde_json::from_str(&s.to_json()).expect("summary is JSON"))
    }

    /// Write the current state as a VTU snapshot (ParaView) to ``path``.
    fn write_snapshot(&self, path: PathBuf) -> PyResult<()> {
        self.with(|i| {
            let mut s = i.sim.backend().snapshot()?;
            let setup = i.sim.setup();
            if setup.periodic.iter().any(|&p| p) {
                s.position.iter_mut().for_each(|x| *x = setup.wrap(glam::DVec3::from(*x)).0.to_array());
            }
            engine::output::write_vtu(&path, &s, engine::output::VtuEncoding::Base64)
        })
    }

    /// Write the whole state to checkpoint ``path`` (``talus resume`` and
    /// ``Simulation.from_checkpoint`` continue it; bit for bit on the same backend kind).
    fn save_checkpoint(&self, path: PathBuf) -> PyResult<()> {
        self.with(|i| {
            let (scene, inputs) = (i.scene.clone(), i.inputs.clone());
            i.sim.capture(&scene, &inputs)?.write(&path)
        })
    }

    fn __repr__(&self) -> String {
        let mut g = self.lock();
        let i = &mut g.0;
        let (kind, step) = (i.sim.backend().kind(), i.sim.steps_done());
        format!("Simulation({:?}, backend={kind:?}, step={step}, particles={})", i.sim.setup().name, i.sim.particle_count())
    }
}

/// A run in progress (``Simulation.iter_run``): yields the step count every ``every`` steps.
#[pyclass(module = "talus")]
struct RunIter {
    sim: Py<Simulation>,
    end: u64,
    every: u64,
    from: u64,
    /// Whether the scene's `until_rest` ends the run (a run to the scene's end; not one of
    /// `steps` or `until`).
    rest: bool,
    finished: bool,
    summary: Option<PyObject>,
}

impl RunIter {
    fn new(slf: &Bound<'_, Simulation>, steps: Option<u64>, until: Option<f64>, every: Option<u64>) -> PyResult<RunIter> {
        let s = slf.borrow();
        let mut g = s.lock();
        let i = &mut g.0;
        let end = Simulation::end_of(i, steps, until)?;
        i.sim.set_end_step(end);
        let every = match every {
            Some(0) => return Err(PyValueError::new_err("every must be at least 1")),
            Some(k) => k,
            None => i.sim.setup().output_every.max(1),
        };
        let from = i.sim.steps_done();
        let rest = steps.is_none() && until.is_none();
        Ok(RunIter { sim: slf.clone().unbind(), end, every, from, rest, finished: false, summary: None })
    }

    /// Step to the next call point (a multiple of `every` from the run's start, or the end);
    /// `None` once the run is over.
    fn next_chunk(&mut self, py: Python<'_>) -> PyResult<Option<u64>> {
        let sim = self.sim.bind(py).borrow();
        let (done, over) = {
            let mut g = sim.lock();
            let i = &mut g.0;
            let done = i.sim.steps_done();
            (done, self.rest && i.sim.at_rest() && done > self.from || done >= self.end)
        };
        if over {
            return Ok(None);
        }
        let target = (self.from + ((done - self.from) / self.every + 1) * self.every).min(self.end);
        loop {
            sim.batch(py, target)?;
            let mut g = sim.lock();
            let i = &mut g.0;
            let now = i.sim.steps_done();
            if now >= target || (self.rest && i.sim.at_rest()) {
                return Ok(Some(now));
            }
        }
    }

    /// The end of the run: with an output directory, the checkpoint, summary and pictures.
    fn finish(&mut self, py: Python<'_>) -> PyResult<PyObject> {
        if let Some(s) = &self.summary {
            return Ok(s.clone_ref(py));
        }
        let sim = self.sim.bind(py).borrow();
        let s = sim.with(|i| i.sim.finish())?;
        let s = json_to_py(py, &serde_json::from_str(&s.to_json()).expect("summary is JSON"))?;
        self.summary = Some(s.clone_ref(py));
        self.finished = true;
        Ok(s)
    }
}

#[pymethods]
impl RunIter {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<u64> {
        if self.finished {
            return Err(PyStopIteration::new_err(()));
        }
        match self.next_chunk(py)? {
            Some(step) => Ok(step),
            None => {
                self.finish(py)?;
                Err(PyStopIteration::new_err(()))
            }
        }
    }

    fn __len__(&self) -> usize {
        (self.end.saturating_sub(self.from)).div_ceil(self.every) as usize
    }

    /// Steps in the run (for a progress bar's total).
    #[getter]
    fn total_steps(&self) -> u64 {
        self.end.saturating_sub(self.from)
    }

    /// The run's summary (a dict) once it has ended, else None.
    #[getter]
    fn summary(&self, py: Python<'_>) -> Option<PyObject> {
        self.summary.as_ref().map(|s| s.clone_ref(py))
    }
}

// ---------------------------------------------------------------------------------------------
// The machine

/// Whether ``backend="gpu"`` finds an adapter (software ones such as lavapipe included; see
/// ``info()`` for which).
#[pyfunction]
fn gpu_available(py: Python<'_>) -> bool {
    py.allow_threads(|| engine::gpu::context::preferred_adapter().is_ok())
}

/// The version, the GPU adapters (name, backend, type, whether software) and what
/// ``backend="auto"`` picks, and the CPU threads.
#[pyfunction]
fn info(py: Python<'_>) -> PyResult<PyObject> {
    let (adapters, auto) = py.allow_threads(|| (engine::gpu::context::list_adapters(), engine::run::resolve_auto()));
    let d = PyDict::new(py);
    d.set_item("version", env!("CARGO_PKG_VERSION"))?;
    let list = PyList::empty(py);
    for a in &adapters {
        let x = PyDict::new(py);
        x.set_item("name", &a.name)?;
        x.set_item("backend", &a.backend)?;
        x.set_item("device_type", &a.device_type)?;
        x.set_item("software", a.software)?;
        x.set_item("driver", &a.driver)?;
        list.append(x)?;
    }
    d.set_item("adapters", list)?;
    let auto = match auto {
        engine::run::AutoPick::Gpu => "gpu".to_string(),
        engine::run::AutoPick::Cpu { .. } => "cpu".to_string(),
    };
    d.set_item("auto_backend", auto)?;
    d.set_item("cpu_threads", std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1))?;
    Ok(d.into_any().unbind())
}

/// Talus: a discrete-element-method engine (GPU through wgpu, f64 CPU reference), from Python.
/// See docs/python.md.
#[pymodule]
#[pyo3(name = "talus")]
fn talus_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    let exc = exceptions(py)?;
    for name in ["TalusError", "SceneError", "CheckpointError", "BackendError", "BlowUpError"] {
        let cls = exc.getattr(name)?;
        cls.setattr("__module__", "talus")?;
        m.add(name, cls)?;
    }
    m.add_class::<Scene>()?;
    m.add_class::<Simulation>()?;
    m.add_class::<RunIter>()?;
    m.add_function(wrap_pyfunction!(gpu_available, m)?)?;
    m.add_function(wrap_pyfunction!(info, m)?)?;
    Ok(())
}
