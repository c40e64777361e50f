//! `energy.csv`: one row per output with every energy partition and the balance total. A
//! scene with `energy_tracking` off books no slip, dashpot or stiffness work, so those columns
//! and the total (no longer a balance) are left out.
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

/// The columns only a run with energy tracking has (`Setup::energy_tracking`).
pub const TRACKED_ONLY: [&str; 4] = ["slip", "dashpot", "stiffness_work", "total"];

/// The columns of a run with or without energy tracking, in order.
pub fn columns(tracking: bool) -> Vec<&'static str> {
    COLUMNS.into_iter().filter(|c| tracking || !TRACKED_ONLY.contains(c)).collect()
}

/// One CSV row (no trailing newline) with the columns of `columns(tracking)`.
pub fn format_row(step: u64, time: f64, e: &Energies, tracking: bool) -> String {
    let values = [
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
        e.total(),
    ];
    let mut row = format!("{step},{time:e}");
    for (name, x) in COLUMNS[2..].iter().zip(values) {
        if tracking || !TRACKED_ONLY.contains(name) {
            row.push_str(&format!(",{x:e}"));
        }
    }
    row
}

/// The energy log of a run, rewritten atomically on every `push`.
pub struct EnergyCsv {
    log: CsvLog,
    tracking: bool,
}

impl EnergyCsv {
    /// Start a log at `path` (written on the first `push`); `tracking` = the scene's
    /// `energy_tracking`.
    pub fn new(path: impl Into<PathBuf>, tracking: bool) -> Self {
        EnergyCsv { log: CsvLog::new(path, &columns(tracking)), tracking }
    }

    /// A log continuing `text` (an earlier part of the run), written at once.
    pub fn continued(path: impl Into<PathBuf>, text: &str, tracking: bool) -> Result<Self> {
        Ok(EnergyCsv { log: CsvLog::continued(path, text)?, tracking })
    }

    pub fn path(&self) -> &Path {
        self.log.path()
    }

    /// Append a row and replace the file.
    pub fn push(&mut self, step: u64, time: f64, e: &Energies) -> Result<()> {
        self.log.append(&format!("{}\n", format_row(step, time, e, self.tracking)))
    }

    /// The current file contents.
    pub fn text(&self) -> &str {
        self.log.text()
    }
}
