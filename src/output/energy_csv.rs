//! `energy.csv`: one row per output with every energy partition and the balance total.
//!
//! Values are printed with Rust's `{:e}` formatting, the shortest decimal that reads back to the
//! same `f64`: no precision is lost and bit-identical energies give identical text. The whole file
//! is rewritten atomically after each row (it is small), so an interrupted run keeps every
//! complete row it wrote and never a partial one.

use std::path::{Path, PathBuf};

use super::csv_log::CsvLog;
use crate::backend::Energies;
use crate::error::Result;

/// Column names, in order.
pub const COLUMNS: [&str; 14] = [
    "step",
    "time",
    "kinetic",
    "kinetic_translational",
    "kinetic_rotational",
    "gravitational",
    "strain",
    "slip",
    "dashpot",
    "stiffness_work",
    "wall_work",
    "inserted",
    "removed",
    "total",
];

/// One CSV row (no trailing newline).
pub fn format_row(step: u64, time: f64, e: &Energies) -> String {
    format!(
        "{step},{time:e},{:e},{:e},{:e},{:e},{:e},{:e},{:e},{:e},{:e},{:e},{:e},{:e}",
        e.kinetic(),
        e.kinetic_translational,
        e.kinetic_rotational,
        e.gravitational,
        e.strain,
        e.slip,
        e.dashpot,
        e.stiffness_work,
        e.wall_work,
        e.inserted,
        e.removed,
        e.total()
    )
}

/// The energy log of a run, rewritten atomically on every `push`.
pub struct EnergyCsv {
    log: CsvLog,
}

impl EnergyCsv {
    /// Start a log at `path` (written on the first `push`).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        EnergyCsv { log: CsvLog::new(path, &COLUMNS) }
    }

    /// A log continuing `text` (an earlier part of the run), written at once.
    pub fn continued(path: impl Into<PathBuf>, text: &str) -> Result<Self> {
        Ok(EnergyCsv { log: CsvLog::continued(path, text)? })
    }

    pub fn path(&self) -> &Path {
        self.log.path()
    }

    /// Append a row and replace the file.
    pub fn push(&mut self, step: u64, time: f64, e: &Energies) -> Result<()> {
        self.log.append(&format!("{}\n", format_row(step, time, e)))
    }

    /// The current file contents.
    pub fn text(&self) -> &str {
        self.log.text()
    }
}
