//! `walls.csv`: one row per wall and output with the force the contacts put on the wall and the
//! torque about the wall's fixed load point (`load_point` in the scene; the plane's point, the
//! box centre or the mesh's bounding-box centre by default). Plane walls come first (box faces
//! included), then mesh walls, in scene order (`Setup::load_points`). Same number format and
//! atomic rewrite as `energy.csv`.

use std::fmt::Write as _;
use std::path::PathBuf;

use super::csv_log::CsvLog;
use crate::backend::WallLoad;
use crate::error::Result;

/// Column names, in order.
pub const COLUMNS: [&str; 12] = ["step", "time", "wall", "fx", "fy", "fz", "tx", "ty", "tz", "px", "py", "pz"];

/// The wall-load log of a run, rewritten atomically on every `push`.
pub struct WallsCsv {
    log: CsvLog,
}

impl WallsCsv {
    /// Start a log at `path` (written on the first `push`).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        WallsCsv { log: CsvLog::new(path, &COLUMNS) }
    }

    /// A log continuing `text` (an earlier part of the run), written at once.
    pub fn continued(path: impl Into<PathBuf>, text: &str) -> crate::error::Result<Self> {
        Ok(WallsCsv { log: CsvLog::continued(path, text)? })
    }

    /// Append one row per wall, given as (name, load point) in `loads` order, and replace the
    /// file.
    pub fn push(&mut self, step: u64, time: f64, walls: &[(&str, [f64; 3])], loads: &[WallLoad]) -> Result<()> {
        let mut rows = String::new();
        for ((name, p), l) in walls.iter().zip(loads) {
            let (f, t) = (l.force, l.torque);
            let _ = writeln!(rows, "{step},{time:e},{name},{:e},{:e},{:e},{:e},{:e},{:e},{:e},{:e},{:e}", f[0], f[1], f[2], t[0], t[1], t[2], p[0], p[1], p[2]);
        }
        self.log.append(&rows)
    }

    /// The current file contents.
    pub fn text(&self) -> &str {
        self.log.text()
    }
}
