//! Reading back what a run wrote, for `talus render` and `talus plot`: a snapshot `.vtu` in
//! exactly the form `vtu.rs` writes (inline `ascii` or base64 `binary` DataArrays, UInt64
//! headers, no compression) and `energy.csv`. Errors name the file and what is wrong in it.

use std::path::Path;

use crate::error::{Result, TalusError};

fn bad(path: &Path, what: impl std::fmt::Display) -> TalusError {
    TalusError::Other(format!("{}: {what}", path.display()))
}

fn read_text(path: &Path) -> Result<String> {
    let bytes = std::fs::read(path).map_err(|e| TalusError::io(path, e))?;
    String::from_utf8(bytes).map_err(|e| bad(path, format!("not a text file (invalid UTF-8 at byte {})", e.utf8_error().valid_up_to())))
}

/// One point-data array of a snapshot: `components` values per particle.
#[derive(Clone, Debug, PartialEq)]
pub struct VtuArray {
    pub name: String,
    pub components: usize,
    pub values: Vec<f64>,
}

/// The particles of a snapshot: positions and the point-data arrays (`id`, `radius`,
/// `velocity`, `angular_velocity`, `force`, `torque` in Talus's files).
#[derive(Clone, Debug, PartialEq)]
pub struct VtuPoints {
    pub position: Vec<[f64; 3]>,
    pub arrays: Vec<VtuArray>,
}

impl VtuPoints {
    /// The arrays `write_vtu` would write for `s` (ids are indices).
    pub fn from_snapshot(s: &crate::backend::Snapshot) -> VtuPoints {
        let flat = |v: &[[f64; 3]]| v.iter().flatten().copied().collect::<Vec<f64>>();
        let arr = |name: &str, components: usize, values: Vec<f64>| VtuArray { name: name.to_string(), components, values };
        VtuPoints {
            position: s.position.clone(),
            arrays: vec![
                arr("id", 1, (0..s.position.len()).map(|i| i as f64).collect()),
                arr("radius", 1, s.radius.clone()),
                arr("velocity", 3, flat(&s.velocity)),
                arr("angular_velocity", 3, flat(&s.angular_velocity)),
                arr("force", 3, flat(&s.force)),
                arr("torque", 3, flat(&s.torque)),
            ]
            .into_iter()
            .chain((!s.bodies.is_empty()).then(|| arr("body_id", 1, s.bodies.body_of.iter().map(|&b| b as f64).collect())))
            .collect(),
        }
    }

    /// The array `name`, or an error naming the file, the array and the arrays there are.
    pub fn array(&self, path: &Path, name: &str, components: usize) -> Result<&[f64]> {
        match self.arrays.iter().find(|a| a.name == name) {
            Some(a) if a.components == components => Ok(&a.values),
            Some(a) => Err(bad(path, format!("point array `{name}` has {} components, expected {components}", a.components))),
            None => {
                let names: Vec<&str> = self.arrays.iter().map(|a| a.name.as_str()).collect();
                Err(bad(path, format!("no point array `{name}` (arrays: {})", names.join(", "))))
            }
        }
    }
}

/// The value of attribute `name` in the start tag `tag` (`<DataArray type="…" …>`).
fn attr<'t>(tag: &'t str, name: &str) -> Option<&'t str> {
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    let len = tag[start..].find('"')?;
    Some(&tag[start..start + len])
}

fn b64_value(c: u8) -> Option<u32> {
    Some(match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    } as u32)
}

/// Standard base64 (padding optional, whitespace skipped).
pub fn base64_decode(text: &str) -> std::result::Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let (mut acc, mut bits) = (0u32, 0u32);
    for (k, c) in text.bytes().enumerate() {
        if c.is_ascii_whitespace() {
            continue;
        }
        if c == b'=' {
            break;
        }
        let v = b64_value(c).ok_or_else(|| format!("invalid base64 character {:?} at offset {k}", c as char))?;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Ok(out)
}

/// The values of one DataArray body, as f64.
fn array_values(path: &Path, name: &str, ty: &str, format: &str, body: &str) -> Result<Vec<f64>> {
    let size = match ty {
        "Float64" | "Int64" | "UInt64" => 8,
        "Float32" | "Int32" | "UInt32" => 4,
        "UInt8" | "Int8" => 1,
        other => return Err(bad(path, format!("DataArray `{name}`: type \"{other}\" is not one Talus writes"))),
    };
    match format {
        "ascii" => body
            .split_ascii_whitespace()
            .map(|t| t.parse::<f64>().map_err(|_| bad(path, format!("DataArray `{name}`: \"{t}\" is not a number"))))
            .collect(),
        "binary" => {
            let bytes = base64_decode(body).map_err(|e| bad(path, format!("DataArray `{name}`: {e}")))?;
            if bytes.len() < 8 {
                return Err(bad(path, format!("DataArray `{name}`: binary data shorter than its 8-byte header")));
            }
            let n = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes")) as usize;
            let data = &bytes[8..];
            if n > data.len() || n % size != 0 {
                return Err(bad(path, format!("DataArray `{name}`: header says {n} bytes, {} present (type {ty})", data.len())));
            }
            let data = &data[..n];
            Ok(match ty {
                "Float64" => data.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().expect("8"))).collect(),
                "Int64" => data.chunks_exact(8).map(|c| i64::from_le_bytes(c.try_into().expect("8")) as f64).collect(),
                "UInt64" => data.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8")) as f64).collect(),
                "Float32" => data.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().expect("4")) as f64).collect(),
                "Int32" => data.chunks_exact(4).map(|c| i32::from_le_bytes(c.try_into().expect("4")) as f64).collect(),
                "UInt32" => data.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().expect("4")) as f64).collect(),
                "Int8" => data.iter().map(|&b| b as i8 as f64).collect(),
                _ => data.iter().map(|&b| b as f64).collect(),
            })
        }
        other => Err(bad(path, format!("DataArray `{name}`: format \"{other}\" not supported (Talus writes ascii or binary)"))),
    }
}

/// Read a snapshot written by Talus (`write_vtu`).
pub fn read_vtu(path: &Path) -> Result<VtuPoints> {
    let text = read_text(path)?;
    if !text.contains("<VTKFile") || !text.contains("type=\"UnstructuredGrid\"") {
        return Err(bad(path, "not a VTK UnstructuredGrid file (no <VTKFile type=\"UnstructuredGrid\">)"));
    }
    if text.contains("compressor=") {
        return Err(bad(path, "compressed VTK data is not supported (Talus writes uncompressed files)"));
    }
    let piece = text.find("<Piece ").ok_or_else(|| bad(path, "no <Piece> element"))?;
    let piece_tag = &text[piece..piece + text[piece..].find('>').ok_or_else(|| bad(path, "unterminated <Piece> tag"))?];
    let n: usize = attr(piece_tag, "NumberOfPoints")
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| bad(path, "<Piece> has no integer NumberOfPoints"))?;
    let mut arrays = Vec::new();
    let mut position = None;
    let mut at = piece;
    while let Some(found) = text[at..].find("<DataArray") {
        let open = at + found;
        let rest = text.as_str();
        let tag_end = rest[open..].find('>').ok_or_else(|| bad(path, "unterminated <DataArray> tag"))? + open;
        let tag = &rest[open..tag_end];
        let close = rest[tag_end..].find("</DataArray>").ok_or_else(|| bad(path, "<DataArray> without </DataArray>"))? + tag_end;
        let body = &rest[tag_end + 1..close];
        let name = attr(tag, "Name").unwrap_or("");
        let ty = attr(tag, "type").ok_or_else(|| bad(path, format!("DataArray `{name}` has no type")))?;
        let format = attr(tag, "format").unwrap_or("ascii");
        let components: usize = attr(tag, "NumberOfComponents").map(|c| c.parse().unwrap_or(0)).unwrap_or(1);
        // point data comes before <Points>; the position array is inside <Points>
        let in_points = rest[..open].rfind("<Points>").is_some_and(|p| rest[p..open].find("</Points>").is_none());
        let is_point_data = rest[..open].rfind("<PointData").is_some_and(|p| rest[p..open].find("</PointData>").is_none());
        if in_points || is_point_data {
            if components == 0 {
                return Err(bad(path, format!("DataArray `{name}`: NumberOfComponents must be a positive integer")));
            }
            let values = array_values(path, name, ty, format, body)?;
            if values.len() != n * components {
                return Err(bad(path, format!("DataArray `{name}` holds {} values, expected {n} points × {components}", values.len())));
            }
            if in_points {
                if components != 3 {
                    return Err(bad(path, format!("<Points> array has {components} components, expected 3")));
                }
                position = Some(values.chunks_exact(3).map(|c| [c[0], c[1], c[2]]).collect());
            } else {
                arrays.push(VtuArray { name: name.to_string(), components, values });
            }
        }
        at = close + "</DataArray>".len();
    }
    let position = position.ok_or_else(|| bad(path, "no <Points> array (the particle positions)"))?;
    Ok(VtuPoints { position, arrays })
}

/// `energy.csv` read back: the column names and one row of numbers per output.
#[derive(Clone, Debug, PartialEq)]
pub struct EnergyTable {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<f64>>,
}

impl EnergyTable {
    /// The column `name`, or an error naming the file and the column.
    pub fn column(&self, path: &Path, name: &str) -> Result<Vec<f64>> {
        let k = self.columns.iter().position(|c| c == name).ok_or_else(|| bad(path, format!("no column `{name}` in the header")))?;
        Ok(self.rows.iter().map(|r| r[k]).collect())
    }
}

/// Read `energy.csv` (header line, then comma-separated numbers; at least one row).
pub fn read_energy_csv(path: &Path) -> Result<EnergyTable> {
    let text = read_text(path)?;
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    let (_, header) = lines.next().ok_or_else(|| bad(path, "empty file (expected a header line and rows)"))?;
    let columns: Vec<String> = header.split(',').map(|c| c.trim().to_string()).collect();
    if !columns.iter().any(|c| c == "time") {
        return Err(bad(path, format!("line 1: not an energy.csv header (no `time` column): \"{}\"", header.chars().take(80).collect::<String>())));
    }
    let mut rows = Vec::new();
    for (k, line) in lines {
        let cells: Vec<&str> = line.split(',').collect();
        if cells.len() != columns.len() {
            return Err(bad(path, format!("line {}: {} fields, the header has {}", k + 1, cells.len(), columns.len())));
        }
        let row = cells
            .iter()
            .zip(&columns)
            .map(|(c, name)| c.trim().parse::<f64>().map_err(|_| bad(path, format!("line {}: column `{name}`: \"{c}\" is not a number", k + 1))))
            .collect::<Result<Vec<f64>>>()?;
        rows.push(row);
    }
    if rows.is_empty() {
        return Err(bad(path, "no rows after the header"));
    }
    Ok(EnergyTable { columns, rows })
}
