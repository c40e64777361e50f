//! A CSV log kept in memory and rewritten atomically after every append, so an interrupted run
//! keeps every complete row it wrote and never a partial one (`energy.csv`, `walls.csv`).

use std::path::{Path, PathBuf};

use super::atomic::write_atomic;
use crate::error::Result;

pub struct CsvLog {
    path: PathBuf,
    text: String,
}

impl CsvLog {
    /// A log with a header line, written on the first `append`. An empty `path` keeps the
    /// log in memory only (a simulation without an output directory).
    pub fn new(path: impl Into<PathBuf>, columns: &[&str]) -> Self {
        let mut text = columns.join(",");
        text.push('\n');
        CsvLog { path: path.into(), text }
    }

    /// A log that continues `text` (header and rows of an earlier part of the run, e.g. from a
    /// checkpoint), written at once.
    pub fn continued(path: impl Into<PathBuf>, text: &str) -> Result<Self> {
        let log = CsvLog { path: path.into(), text: text.to_string() };
        log.write()?;
        Ok(log)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Append complete lines (each ending in '\n') and replace the file.
    pub fn append(&mut self, lines: &str) -> Result<()> {
        self.text.push_str(lines);
        self.write()
    }

    fn write(&self) -> Result<()> {
        if self.path.as_os_str().is_empty() {
            return Ok(());
        }
        write_atomic(&self.path, self.text.as_bytes())
    }

    /// The current file contents.
    pub fn text(&self) -> &str {
        &self.text
    }
}
