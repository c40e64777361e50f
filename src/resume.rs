//! `talus resume CHECKPOINT`: continue a run from its checkpoint (`crate::checkpoint`), on
//! either backend, into a new output directory unless told otherwise (docs/output.md,
//! "Resuming").
//!
//! The set-up is rebuilt from the scene text the checkpoint carries (the files the scene reads
//! must be as they were: `checkpoint::inputs::check`), a backend is opened for it and given the
//! saved state (`import_state`, then `import_exact`: bit for bit on the backend that wrote it,
//! the work sums otherwise) and the carried energies, and the run loop goes on from the saved
//! progress (`run::continue_run`).

use std::path::{Path, PathBuf};

use crate::backend::Backend;
use crate::checkpoint::{inputs, Checkpoint};
use crate::error::{Result, TalusError};
use crate::run::{open_backend, BackendChoice};
use crate::setup::Setup;

/// The checkpoint `talus resume ARG` reads: ARG itself, or a run directory's
/// `checkpoint.talus` (`CHECKPOINT_FILE`); a directory without one is an error naming both.
pub fn checkpoint_path(arg: &Path) -> Result<PathBuf> {
    if !arg.is_dir() {
        return Ok(arg.to_path_buf());
    }
    let file = arg.join(crate::checkpoint::CHECKPOINT_FILE);
    if file.is_file() {
        return Ok(file);
    }
    Err(TalusError::Other(format!(
        "{}: a directory without {}: give a checkpoint written by `talus run` or `talus resume` (a run writes one at its end and on Ctrl-C, and every `checkpoint_every` outputs)",
        arg.display(),
        crate::checkpoint::CHECKPOINT_FILE
    )))
}

/// How far a resumed run goes: `--steps N` more steps, `--until T` (simulated time, s), or,
/// with neither, to the step the checkpointed run was to end at.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Extent {
    pub steps: Option<u64>,
    pub until: Option<f64>,
}

/// The steps to run from checkpoint `file`, and what to say about them. `every` is the run's
/// output cadence (`Setup::output_every`): `--until T` lands on it, ending at the whole number
/// of outputs from the checkpoint nearest T (at least one), and the note says so when T is
/// not on it; `--steps N` runs exactly N steps.
pub fn steps_to_run(file: &Path, c: &Checkpoint, extent: Extent, every: u64) -> Result<(u64, Option<String>)> {
    let bad = |m: String| TalusError::checkpoint(file, m);
    let (step, dt) = (c.meta.step, c.meta.dt);
    let at = format!("the checkpoint is at step {step} (t = {} s)", crate::error::fmt_sci(c.time()));
    match (extent.steps, extent.until) {
        (Some(n), Some(t)) => Err(bad(format!("give --steps or --until, not both (got --steps {n} and --until {t})"))),
        (Some(n), None) => Ok((n, None)),
        (None, Some(t)) => {
            if !t.is_finite() {
                return Err(bad(format!("--until {t}: not a time")));
            }
            // the step at time t, or the first after it (the rounding of `duration` in scenes)
            let x = t / dt;
            let n = x.round();
            let end = if (x - n).abs() <= 1e-9 * n.max(1.0) { n } else { x.ceil() };
            if end <= step as f64 {
                return Err(bad(format!("--until {t} s is not after the checkpoint: {at}")));
            }
            let asked = end as u64 - step;
            let every = every.max(1);
            let outputs = ((asked as f64 / every as f64).round() as u64).max(1);
            let n = outputs * every;
            let note = (n != asked).then(|| {
                let sci = crate::error::fmt_sci;
                format!(
                    "--until {} s is not on the output cadence (every {every} steps from the checkpoint's step {step}): the run ends at step {} (t = {} s), after {outputs} outputs, the nearest whole number",
                    crate::error::fmt_num(t),
                    step + n,
                    sci((step + n) as f64 * dt)
                )
            });
            Ok((n, note))
        }
        (None, None) => {
            let end = c.meta.run.end_step;
            if end <= step {
                return Err(bad(format!("the run already reached its last step {end}: {at}; give --steps N or --until T to go on")));
            }
            Ok((end - step, None))
        }
    }
}

/// The checkpoint's saved progress for a run that goes on in `out_dir`: the snapshots
/// `particles.pvd` listed (relative to the checkpoint's directory, the earlier run's) are
/// listed relative to `out_dir` (e.g. `../run/snapshots/particles_0000000100.vtu`), so the
/// resumed run's index shows the whole run as one series in ParaView; snapshots no longer
/// there are left out.
pub fn progress_in(file: &Path, c: &Checkpoint, out_dir: &Path) -> crate::checkpoint::RunProgress {
    let mut run = c.meta.run.clone();
    let earlier = file.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    run.pvd = run
        .pvd
        .into_iter()
        .filter_map(|(t, f)| {
            let target = earlier.join(&f);
            if !target.is_file() {
                return None;
            }
            Some((t, relative_path(&target, out_dir).unwrap_or(f)))
        })
        .collect();
    run
}

/// `target` relative to the directory `base`, with `/` separators (both made absolute and
/// `.`/`..` resolved by their names; `None` where they share no root).
pub fn relative_path(target: &Path, base: &Path) -> Option<String> {
    use std::path::Component;
    let norm = |p: &Path| -> Option<Vec<std::ffi::OsString>> {
        let abs = std::path::absolute(p).ok()?;
        let mut parts: Vec<std::ffi::OsString> = Vec::new();
        for c in abs.components() {
            match c {
                Component::ParentDir => {
                    parts.pop();
                }
                Component::CurDir => {}
                other => parts.push(other.as_os_str().to_os_string()),
            }
        }
        Some(parts)
    };
    let (t, b) = (norm(target)?, norm(base)?);
    if t.first() != b.first() {
        return None;
    }
    let common = t.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out: Vec<String> = vec!["..".to_string(); b.len() - common];
    out.extend(t[common..].iter().map(|p| p.to_string_lossy().into_owned()));
    Some(out.join("/"))
}

/// The set-up of checkpoint `file`'s run: its scene text parsed again, against the scene's
/// original location (for the files it names, which must be unchanged).
pub fn setup_of(file: &Path, c: &Checkpoint) -> Result<Setup> {
    inputs::check(file, &c.meta.inputs)?;
    let scene = &c.meta.scene;
    let mut setup = crate::scene::overrides::parse_with(&scene.text, &scene.resolved, &scene.overrides).map_err(|e| TalusError::checkpoint(file, format!("its scene no longer loads: {e}")))?;
    setup.source = scene.path.clone();
    let bad = |m: String| Err(TalusError::checkpoint(file, format!("its scene gives another set-up now ({m}); was it written by another Talus version?")));
    if setup.dt.to_bits() != c.meta.dt.to_bits() {
        let (now, then) = crate::error::fmt_apart(setup.dt, c.meta.dt);
        return bad(format!("time step {now} s, the checkpoint's {then} s"));
    }
    let materials: Vec<String> = setup.materials.iter().map(|m| m.name.clone()).collect();
    let walls: Vec<String> = setup.walls.iter().map(|w| w.name.clone()).collect();
    let meshes: Vec<(String, u32)> = setup.meshes.iter().map(|m| (m.name.clone(), m.mesh.group_count)).collect();
    let saved_meshes: Vec<(String, u32)> = c.meta.meshes.iter().map(|m| (m.name.clone(), m.groups)).collect();
    if materials != c.meta.materials || walls != c.meta.walls || meshes != saved_meshes {
        return bad(format!("materials {materials:?}, walls {walls:?}, meshes {meshes:?}; the checkpoint's {:?}, {:?}, {saved_meshes:?}", c.meta.materials, c.meta.walls));
    }
    Ok(setup)
}

/// Open `choice` for `setup` and give it the checkpoint's state. The second value is `Auto`'s
/// notice, as from `open_backend`.
pub fn open_at(setup: &Setup, c: &Checkpoint, choice: BackendChoice) -> Result<(Box<dyn Backend + Send>, Option<String>)> {
    let (mut backend, notice) = open_backend(setup, choice)?;
    backend.import_state(&c.state)?;
    backend.import_exact(&c.exact)?;
    backend.set_carried(c.meta.carried);
    Ok((backend, notice))
}

/// Where `talus resume` writes without `--out`: beside the checkpoint's run directory,
/// `<run dir>-resume-<step>` (`out/<scene>-resume-<step>` for a checkpoint with no directory).
pub fn default_out_dir(file: &Path, c: &Checkpoint, scene_name: &str) -> PathBuf {
    let step = c.meta.step;
    match file.parent().filter(|d| d.file_name().is_some()) {
        Some(dir) => dir.with_file_name(format!("{}-resume-{step}", dir.file_name().expect("checked").to_string_lossy())),
        None => PathBuf::from("out").join(format!("{scene_name}-resume-{step}")),
    }
}

/// The output directory: `out` when given (the run's own directory continues it in place),
/// else `default_out_dir`, which must not hold a run's outputs yet.
pub fn out_dir(file: &Path, c: &Checkpoint, scene_name: &str, out: Option<PathBuf>) -> Result<PathBuf> {
    if let Some(out) = out {
        return Ok(out);
    }
    let dir = default_out_dir(file, c, scene_name);
    if dir.join("energy.csv").exists() {
        return Err(TalusError::checkpoint(
            file,
            format!("{} already holds a run's outputs; give --out DIR to choose where the resumed run writes (its own directory continues it in place)", dir.display()),
        ));
    }
    Ok(dir)
}
