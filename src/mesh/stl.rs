//! STL input (ASCII and binary, via `stl_io`) and atomic binary STL output.
//!
//! Reading keeps each facet's vertices in file order (their winding gives the normal, see
//! `super`); the normals stored in the file are ignored. Coordinates are f32 in STL and are
//! widened exactly to f64.

use std::io::Cursor;
use std::path::Path;

use glam::DVec3;

use crate::error::{Result, TalusError};
use crate::output::atomic::write_atomic;

/// The facets of an STL file as triangles. Errors name the file: unreadable, empty, not STL,
/// truncated, no facets, or a non-finite vertex (with its facet index).
pub fn read_stl(path: &Path) -> Result<Vec<[DVec3; 3]>> {
    let bytes = normalise(path, std::fs::read(path).map_err(|e| TalusError::io(path, e))?)?;
    let mut cursor = Cursor::new(bytes);
    let facets = stl_io::create_stl_reader(&mut cursor).map_err(|e| TalusError::scene(path, "stl", format!("not an ASCII or binary STL file: {e}")))?;
    let mut triangles = Vec::new();
    for (t, facet) in facets.enumerate() {
        let facet = facet.map_err(|e| TalusError::scene(path, format!("facet {t}"), format!("cannot read the facet: {e}")))?;
        triangles.push(to_triangle(path, t, &facet)?);
    }
    if triangles.is_empty() {
        return Err(TalusError::scene(path, "stl", "the file holds no facets"));
    }
    Ok(triangles)
}

/// Prepare the bytes for `stl_io`, which tells ASCII from binary by a leading "solid ": a
/// binary file whose size matches its facet count gets its header's first byte cleared (some
/// exporters start binary headers with "solid"), and an ASCII "solid" line without a name gets
/// the space it expects. Empty files and binary files of the wrong size are errors.
fn normalise(path: &Path, mut bytes: Vec<u8>) -> Result<Vec<u8>> {
    if bytes.is_empty() {
        return Err(TalusError::scene(path, "stl", "the file is empty"));
    }
    if let Some(count) = binary_count(&bytes) {
        if bytes.len() as u64 == 84 + 50 * count as u64 {
            bytes[0] = 0;
            return Ok(bytes);
        }
    }
    if !bytes.starts_with(b"solid") {
        let count = binary_count(&bytes).map_or("no facet count".to_string(), |c| format!("a header announcing {c} facets ({} bytes)", 84 + 50 * c as u64));
        return Err(TalusError::scene(path, "stl", format!("not ASCII STL (no \"solid\" line) and not binary STL: {} bytes, {count}", bytes.len())));
    }
    if bytes.get(5).is_some_and(|b| b.is_ascii_whitespace() && *b != b' ') {
        bytes.insert(5, b' ');
    }
    Ok(bytes)
}

/// The facet count of a binary STL header, if the file is long enough to have one.
fn binary_count(bytes: &[u8]) -> Option<u32> {
    bytes.get(80..84).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// One facet as f64 vertices; a NaN or infinite coordinate is an error.
fn to_triangle(path: &Path, t: usize, facet: &stl_io::Triangle) -> Result<[DVec3; 3]> {
    let mut tri = [DVec3::ZERO; 3];
    for (k, v) in facet.vertices.iter().enumerate() {
        let p = DVec3::new(v[0] as f64, v[1] as f64, v[2] as f64);
        if !p.is_finite() {
            return Err(TalusError::scene(path, format!("facet {t}"), format!("vertex {k} is not finite: [{}, {}, {}]", p.x, p.y, p.z)));
        }
        tri[k] = p;
    }
    Ok(tri)
}

/// Binary STL bytes of `triangles` (coordinates rounded to f32, normals from the winding).
pub fn binary_stl_bytes(triangles: &[[DVec3; 3]]) -> Vec<u8> {
    let facets: Vec<stl_io::Triangle> = triangles.iter().map(to_facet).collect();
    let mut bytes = Vec::with_capacity(84 + 50 * facets.len());
    stl_io::write_stl(&mut bytes, facets.iter()).expect("writing STL to memory cannot fail");
    bytes
}

/// One triangle as an STL facet.
fn to_facet(tri: &[DVec3; 3]) -> stl_io::Triangle {
    let n = (tri[1] - tri[0]).cross(tri[2] - tri[0]).normalize_or_zero();
    let f = |v: DVec3| stl_io::Vector::new([v.x as f32, v.y as f32, v.z as f32]);
    stl_io::Triangle { normal: f(n), vertices: [f(tri[0]), f(tri[1]), f(tri[2])] }
}

/// Write `triangles` as binary STL to `path` atomically (temporary file in the same
/// directory, then rename). The directory must exist.
pub fn write_stl_binary(path: &Path, triangles: &[[DVec3; 3]]) -> Result<()> {
    write_atomic(path, &binary_stl_bytes(triangles))
}
