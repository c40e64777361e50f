//! Atomic file replacement: write a temporary file in the destination's directory, then rename
//! it over the destination. Readers (and a run interrupted at any moment) see either the old
//! complete file or the new complete file, never a half-written one.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Result, TalusError};

/// Temporary name beside `path`: `.<name>.<pid>.tmp` (same directory, so `rename` is atomic).
fn temp_path(path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

/// Replace `path` with `bytes` atomically. The parent directory must exist.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = temp_path(path);
    let result = (|| -> std::io::Result<()> {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.flush()?;
        drop(f);
        fs::rename(&tmp, path)
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(TalusError::io(path, e));
    }
    Ok(())
}

/// `create_dir_all` with the path in the error; where a file stands in the way (the
/// directory itself, or one above it), the error names that file.
pub fn create_dir_all(dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).map_err(|e| match dir.ancestors().find(|a| a.is_file()) {
        Some(file) => TalusError::Other(format!("cannot make the output directory {}: {} is a file, not a directory (name a directory, new or existing)", dir.display(), file.display())),
        None => TalusError::io(dir, e),
    })
}
