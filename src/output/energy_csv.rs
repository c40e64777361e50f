//! `energy.csv`: one row per output with every energy partition and the balance total. A
//! scene with `energy_tracking` off books no slip, dashpot or stiffness work, so those columns
//! and the total (no longer a balance) are left out; the surface and bond-break columns are
//! written only where some pair has adhesion.
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
pub const COLUMNS: [&str; 16] = [
    "step",
    "time",
    "kinetic",
    "kinetic_translational",
    "kinetic_rotational",
    "gravitational",
    "strain",
    "surface",
    "slip",
    "dashpot",
    "stiffness_work",
    "bond_break",
    "wall_work",
    "inserted",
    "removed",
    "total",
];

/// The columns only a run with energy tracking has (`Setup::energy_tracking`).
pub const TRACKED_ONLY: [&str; 4] = ["slip", "dashpot", "stiffness_work", "total"];

/// The columns only a run with adhesion has (`Setup::has_adhesion`).
pub const ADHESION_ONLY: [&str; 2] = ["surface", "bond_break"];

/// Which of the columns a run writes: `tracking` = the scene's energy tracking, `adhesion` =
/// whether some pair has adhesion.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kept {
    pub tracking: bool,
    pub adhesion: bool,
}

impl Kept {
    pub fn of(setup: &crate::setup::Setup) -> Kept {
        Kept { tracking: setup.energy_tracking(), adhesion: setup.has_adhesion() }
    }

    fn keeps(&self, name: &str) -> bool {
        (self.tracking || !TRACKED_ONLY.contains(&name)) && (self.adhesion || !ADHESION_ONLY.contains(&name))
    }
}

/// The columns of a run, in order.
pub fn columns(kept: Kept) -> Vec<&'static str> {
    COLUMNS.into_iter().filter(|c| kept.keeps(c)).collect()
}

/// One CSV row (no trailing newline) with the columns of `columns(kept)`.
pub fn format_row(step: u64, time: f64, e: &Energies, kept: Kept) -> String {
    let values = [
        e.kinetic(),
        e.kinetic_translational,
        e.kinetic_rotational,
        e.gravitational,
        e.strain,
        e.surface,
        e.slip,
        e.dashpot,
        e.stiffness_work,
        e.bond_break,
        e.wall_work,
        e.inserted,
        e.removed,
        e.total(),
    ];
    let mut row = format!("{step},{time:e}");
    for (name, x) in COLUMNS[2..].iter().zip(values) {
        if kept.keeps(name) {
            row.push_str(&format!(",{x:e}"));
        }
    }
    row
}

/// The energy log of a run, rewritten atomically on every `push`.
pub struct EnergyCsv {
    log: CsvLog,
    kept: Kept,
}

impl EnergyCsv {
    /// Start a log at `path` (written on the first `push`) with the columns `kept`.
    pub fn new(path: impl Into<PathBuf>, kept: Kept) -> Self {
        EnergyCsv { log: CsvLog::new(path, &columns(kept)), kept }
    }

    /// A log continuing `text` (an earlier part of the run), written at once.
    pub fn continued(path: impl Into<PathBuf>, text: &str, kept: Kept) -> Result<Self> {
        Ok(EnergyCsv { log: CsvLog::continued(path, text)?, kept })
    }

    pub fn path(&self) -> &Path {
        self.log.path()
    }

    /// Append a row and replace the file.
    pub fn push(&mut self, step: u64, time: f64, e: &Energies) -> Result<()> {
        self.log.append(&format!("{}\n", format_row(step, time, e, self.kept)))
    }

    /// The current file contents.
    pub fn text(&self) -> &str {
        self.log.text()
    }
}
