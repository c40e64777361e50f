//! Particle snapshots as VTK XML UnstructuredGrid files (`.vtu`) and a ParaView collection
//! index (`.pvd`).
//!
//! Each particle is a point with one `VTK_VERTEX` cell. Arrays are `Float64` (`Int64` for ids
//! and cell connectivity/offsets, `UInt8` for cell types), written inline either as ASCII or as
//! base64 "binary": one base64 stream of a `UInt64` byte count followed by the little-endian
//! array bytes (`header_type="UInt64"`, uncompressed), as the VTK XML format specifies.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::atomic::write_atomic;
use crate::backend::Snapshot;
use crate::error::Result;

/// VTK cell type id of a single point.
pub const VTK_VERTEX: u8 = 1;

/// How DataArrays are encoded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum VtuEncoding {
    /// Decimal text, shortest round-trip representation (exact, larger files).
    Ascii,
    /// Inline base64 of raw little-endian values (exact, ≈ 1.33 × 8 bytes per value).
    #[default]
    Base64,
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding.
pub fn base64_encode(bytes: &[u8], out: &mut String) {
    out.reserve(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        out.push(B64[(n >> 18) as usize & 63] as char);
        out.push(B64[(n >> 12) as usize & 63] as char);
        out.push(if chunk.len() > 1 { B64[(n >> 6) as usize & 63] as char } else { '=' });
        out.push(if chunk.len() > 2 { B64[n as usize & 63] as char } else { '=' });
    }
}

/// Values a DataArray can hold.
trait VtkScalar: Copy {
    const TYPE: &'static str;
    fn le_bytes(self, out: &mut Vec<u8>);
    fn ascii(self, out: &mut String);
}
impl VtkScalar for f64 {
    const TYPE: &'static str = "Float64";
    fn le_bytes(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn ascii(self, out: &mut String) {
        // VTK's ASCII parser reads C-style decimals; `{:e}` is exact and round-trips.
        let _ = write!(out, "{self:e}");
    }
}
impl VtkScalar for i64 {
    const TYPE: &'static str = "Int64";
    fn le_bytes(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn ascii(self, out: &mut String) {
        let _ = write!(out, "{self}");
    }
}
impl VtkScalar for u8 {
    const TYPE: &'static str = "UInt8";
    fn le_bytes(self, out: &mut Vec<u8>) {
        out.push(self);
    }
    fn ascii(self, out: &mut String) {
        let _ = write!(out, "{self}");
    }
}

/// Append one `<DataArray>` element.
fn data_array<T: VtkScalar>(out: &mut String, name: &str, components: usize, values: impl ExactSizeIterator<Item = T>, enc: VtuEncoding, indent: &str) {
    let format = match enc {
        VtuEncoding::Ascii => "ascii",
        VtuEncoding::Base64 => "binary",
    };
    let _ = write!(out, "{indent}<DataArray type=\"{}\" Name=\"{name}\" NumberOfComponents=\"{components}\" format=\"{format}\">\n{indent}  ", T::TYPE);
    match enc {
        VtuEncoding::Ascii => {
            for (k, v) in values.enumerate() {
                if k > 0 {
                    out.push(if k % (components.max(1) * 4) == 0 { '\n' } else { ' ' });
                }
                v.ascii(out);
            }
        }
        VtuEncoding::Base64 => {
            let mut bytes = Vec::with_capacity(8 + values.len() * 8);
            bytes.extend_from_slice(&0u64.to_le_bytes());
            for v in values {
                v.le_bytes(&mut bytes);
            }
            let n = (bytes.len() - 8) as u64;
            bytes[..8].copy_from_slice(&n.to_le_bytes());
            base64_encode(&bytes, out);
        }
    }
    let _ = writeln!(out, "\n{indent}</DataArray>");
}

fn vec3s(v: &[[f64; 3]]) -> impl ExactSizeIterator<Item = f64> + '_ {
    // flat_map is not ExactSize; index instead.
    (0..v.len() * 3).map(move |k| v[k / 3][k % 3])
}

/// The text of a `.vtu` file for a snapshot. Point data: `id`, `radius`, `velocity`,
/// `angular_velocity`, `force`, `torque`, and with rigid bodies `body_id` (the body each
/// component sphere belongs to; colour or threshold by it to see the shapes).
pub fn vtu_text(s: &Snapshot, enc: VtuEncoding) -> String {
    let n = s.position.len();
    let mut out = String::with_capacity(256 + n * 200);
    out.push_str("<?xml version=\"1.0\"?>\n");
    out.push_str("<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n");
    out.push_str("  <UnstructuredGrid>\n");
    let _ = writeln!(out, "    <Piece NumberOfPoints=\"{n}\" NumberOfCells=\"{n}\">");
    let i6 = "        ";
    out.push_str("      <PointData Scalars=\"radius\" Vectors=\"velocity\">\n");
    data_array(&mut out, "id", 1, (0..n).map(|i| i as i64), enc, i6);
    data_array(&mut out, "radius", 1, s.radius.iter().copied(), enc, i6);
    data_array(&mut out, "velocity", 3, vec3s(&s.velocity), enc, i6);
    data_array(&mut out, "angular_velocity", 3, vec3s(&s.angular_velocity), enc, i6);
    data_array(&mut out, "force", 3, vec3s(&s.force), enc, i6);
    data_array(&mut out, "torque", 3, vec3s(&s.torque), enc, i6);
    if !s.bodies.is_empty() {
        data_array(&mut out, "body_id", 1, s.bodies.body_of.iter().map(|&b| b as i64), enc, i6);
    }
    out.push_str("      </PointData>\n");
    out.push_str("      <Points>\n");
    data_array(&mut out, "position", 3, vec3s(&s.position), enc, i6);
    out.push_str("      </Points>\n");
    out.push_str("      <Cells>\n");
    data_array(&mut out, "connectivity", 1, (0..n).map(|i| i as i64), enc, i6);
    data_array(&mut out, "offsets", 1, (0..n).map(|i| i as i64 + 1), enc, i6);
    data_array(&mut out, "types", 1, std::iter::repeat_n(VTK_VERTEX, n), enc, i6);
    out.push_str("      </Cells>\n");
    out.push_str("    </Piece>\n");
    out.push_str("  </UnstructuredGrid>\n");
    out.push_str("</VTKFile>\n");
    out
}

/// Write a snapshot to `path` atomically.
pub fn write_vtu(path: &Path, s: &Snapshot, enc: VtuEncoding) -> Result<()> {
    write_atomic(path, vtu_text(s, enc).as_bytes())
}

/// Escape a string for an XML attribute value.
fn xml_attr(s: &str) -> String {
    s.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;").replace('>', "&gt;")
}

/// A ParaView collection (`.pvd`) listing snapshot files with their simulated times.
pub struct PvdIndex {
    path: PathBuf,
    /// (time, file path relative to the `.pvd`'s directory)
    entries: Vec<(f64, String)>,
}

impl PvdIndex {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        PvdIndex { path: path.into(), entries: Vec::new() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// An index listing `entries` (time, file) first, written at once (not with an empty
    /// `path`: a simulation without an output directory).
    pub fn continued(path: impl Into<PathBuf>, entries: Vec<(f64, String)>) -> Result<Self> {
        let index = PvdIndex { path: path.into(), entries };
        if !index.path.as_os_str().is_empty() {
            write_atomic(&index.path, index.text().as_bytes())?;
        }
        Ok(index)
    }

    /// The datasets listed: (time, file relative to the `.pvd`).
    pub fn entries(&self) -> &[(f64, String)] {
        &self.entries
    }

    /// Datasets listed.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Add a dataset (`file` relative to the `.pvd`, with `/` separators) and rewrite the index atomically.
    pub fn push(&mut self, time: f64, file: &str) -> Result<()> {
        self.entries.push((time, file.to_string()));
        write_atomic(&self.path, self.text().as_bytes())
    }

    pub fn text(&self) -> String {
        let mut out = String::from("<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n  <Collection>\n");
        for (t, f) in &self.entries {
            let _ = writeln!(out, "    <DataSet timestep=\"{t:e}\" group=\"\" part=\"0\" file=\"{}\"/>", xml_attr(f));
        }
        out.push_str("  </Collection>\n</VTKFile>\n");
        out
    }
}
