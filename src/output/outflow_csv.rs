//! `outflow.csv`: for runs with insertions or outlets, one row per output with the particles
//! held and their mass, and, cumulative since the start, what every insertion brought in and
//! every outlet took out (count and kg). Masses are summed in particle-id order at each
//! exchange, so an outlet's mass is exactly the sum of the masses of the particles it took.
//! Same number format and atomic rewrite as `energy.csv`.

use std::fmt::Write as _;
use std::path::PathBuf;

use super::csv_log::CsvLog;
use crate::error::Result;
use crate::flow::FlowTotals;
use crate::setup::Setup;

/// The flow log of a run, rewritten atomically on every `push`.
pub struct OutflowCsv {
    log: CsvLog,
}

/// Column names for `setup`: step, time, held_count, held_mass, then `<insert>_count`,
/// `<insert>_mass` per insertion and `<outlet>_count`, `<outlet>_mass` per outlet.
pub fn columns(setup: &Setup) -> Vec<String> {
    let mut c: Vec<String> = ["step", "time", "held_count", "held_mass"].map(String::from).to_vec();
    for name in setup.inserts.iter().map(|s| &s.name).chain(setup.outlets.iter().map(|o| &o.name)) {
        c.push(format!("{name}_count"));
        c.push(format!("{name}_mass"));
    }
    c
}

impl OutflowCsv {
    pub fn new(path: impl Into<PathBuf>, setup: &Setup) -> Self {
        let columns = columns(setup);
        let refs: Vec<&str> = columns.iter().map(String::as_str).collect();
        OutflowCsv { log: CsvLog::new(path, &refs) }
    }

    /// A log continuing `text` (an earlier part of the run), written at once.
    pub fn continued(path: impl Into<PathBuf>, text: &str) -> crate::error::Result<Self> {
        Ok(OutflowCsv { log: CsvLog::continued(path, text)? })
    }

    /// Append the row of `totals` at `step` and replace the file.
    pub fn push(&mut self, step: u64, time: f64, t: &FlowTotals) -> Result<()> {
        let mut row = format!("{step},{time:e},{},{:e}", t.held_count, t.held_mass);
        let inserted = t.inserted_count.iter().zip(&t.inserted_mass);
        for (c, m) in inserted.chain(t.outlet_count.iter().zip(&t.outlet_mass)) {
            let _ = write!(row, ",{c},{m:e}");
        }
        row.push('\n');
        self.log.append(&row)
    }

    /// The current file contents.
    pub fn text(&self) -> &str {
        self.log.text()
    }
}
