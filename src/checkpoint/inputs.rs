//! The files a scene reads besides itself (mesh STL files, an `initial_state` file), recorded in
//! a checkpoint by absolute path, size and CRC-32, so that `talus resume` rebuilds exactly the
//! set-up the run had, or refuses, naming the file that changed or went away.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Result, TalusError};

/// One input file as it was when the checkpoint was written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InputFile {
    /// Absolute path.
    pub path: PathBuf,
    pub bytes: u64,
    /// CRC-32 (IEEE) of the contents.
    pub crc32: u32,
}

/// Record `files` (paths as the scene parser resolved them).
pub fn record(files: &[PathBuf]) -> Result<Vec<InputFile>> {
    files
        .iter()
        .map(|f| {
            let path = std::fs::canonicalize(f).map_err(|e| TalusError::io(f, e))?;
            let data = std::fs::read(&path).map_err(|e| TalusError::io(&path, e))?;
            Ok(InputFile { path, bytes: data.len() as u64, crc32: crc32fast::hash(&data) })
        })
        .collect()
}

/// Every input of `checkpoint` must be as recorded.
pub fn check(checkpoint: &Path, inputs: &[InputFile]) -> Result<()> {
    for f in inputs {
        let then = format!("{} bytes, CRC-32 {:08x}", f.bytes, f.crc32);
        let data = std::fs::read(&f.path)
            .map_err(|e| TalusError::checkpoint(checkpoint, format!("the scene's input file {} cannot be read ({e}); resuming needs it as it was ({then})", f.path.display())))?;
        let crc = crc32fast::hash(&data);
        if data.len() as u64 != f.bytes || crc != f.crc32 {
            return Err(TalusError::checkpoint(
                checkpoint,
                format!("the scene's input file {} changed since the checkpoint was written (then {then}, now {} bytes, CRC-32 {crc:08x}); restore it to resume", f.path.display(), data.len()),
            ));
        }
    }
    Ok(())
}
