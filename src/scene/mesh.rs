//! `{"type": "mesh"}` walls (docs/scenes.md, "Mesh walls"):
//!
//! ```json
//! { "type": "mesh", "name": "hopper", "file": "hopper.stl",
//!   "transform": { "scale": 0.001, "axis": [1, 0, 0], "angle": 90, "translation": [0, 0, 0.2] },
//!   "material": "steel", "two_sided": false,
//!   "motion": { "angular_velocity": 1.0, "axis": [0, 0, 1] }, "load_point": [0, 0, 0] }
//! ```
//!
//! `file` is relative to the scene file's directory. The transform is scale, then rotation by
//! `angle` degrees about `axis` (through the origin), then translation (`MeshTransform`).

use std::path::{Path, PathBuf};

use glam::DVec3;
use serde_json::Value;

use super::motion::wall_motion;
use super::parse::{index, show, Obj};
use crate::error::Result;
use crate::mesh::{MeshTransform, TriangleMesh};
use crate::setup::{mesh_centre, MeshWall};

/// Keys of a mesh wall.
pub const MESH_KEYS: &[&str] = &["type", "name", "file", "transform", "material", "motion", "load_point", "two_sided"];
pub(super) const TRANSFORM_KEYS: &[&str] = &["scale", "axis", "angle", "translation"];

/// Parse the mesh wall `o` (its keys already checked against `MESH_KEYS`), read its STL file
/// and place it. `material` is the resolved material index.
pub fn mesh_wall(o: &Obj, name: String, material: u32) -> Result<MeshWall> {
    let cx = o.cx;
    let file = cx.string(o.req("file")?, &o.key("file"))?;
    let transform = transform(o)?;
    let two_sided = match o.get("two_sided") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(v) => return Err(cx.err(&o.key("two_sided"), format!("expected true or false, got {}", show(v)))),
    };
    let path = resolve(cx.file, file);
    let mesh = TriangleMesh::from_stl(&path, &transform, &o.key("transform"))
        .map_err(|e| cx.err(&o.key("file"), format!("mesh \"{file}\" ({}): {e}", path.display())))?
        .with_two_sided(two_sided);
    let centre = mesh_centre(&mesh);
    let mut motion = wall_motion(o, centre)?;
    if o.get("motion").is_none() {
        // static, but keep the box centre as the (unused) rotation centre, like `MeshWall::new`
        motion.center = DVec3::from(centre);
    }
    let load_point = o.vec3_opt("load_point")?.unwrap_or(centre);
    Ok(MeshWall { name, mesh: std::sync::Arc::new(mesh), material, motion, load_point })
}

/// `file` relative to the directory of the scene file `scene` (absolute paths stay).
pub(super) fn resolve(scene: &Path, file: &str) -> PathBuf {
    scene.parent().map(|d| d.join(file)).unwrap_or_else(|| PathBuf::from(file))
}

/// The `transform` object (identity when absent), checked value by value.
fn transform(o: &Obj) -> Result<MeshTransform> {
    let Some(t) = o.obj_opt("transform")? else {
        return Ok(MeshTransform::identity());
    };
    t.allow(TRANSFORM_KEYS)?;
    let cx = t.cx;
    let scale = match t.get("scale") {
        None => DVec3::ONE,
        Some(v @ Value::Array(_)) => {
            let s = cx.vec3(v, &t.key("scale"))?;
            for (k, x) in s.iter().enumerate() {
                cx.positive(*x, &index(&t.key("scale"), k))?;
            }
            DVec3::from(s)
        }
        Some(v) => DVec3::splat(cx.positive(cx.number(v, &t.key("scale"))?, &t.key("scale"))?),
    };
    let axis = DVec3::from(t.vec3_opt("axis")?.unwrap_or([0.0, 0.0, 1.0]));
    let angle = t.f64_opt("angle")?.unwrap_or(0.0);
    let translation = DVec3::from(t.vec3_opt("translation")?.unwrap_or([0.0; 3]));
    let m = MeshTransform::identity().with_scale(scale).with_rotation(axis, angle).with_translation(translation);
    m.validate(cx.file, &t.path)?;
    Ok(m)
}

/// Bounding box of a placed mesh as (min, max) arrays (for the default domain).
pub fn bounds(mesh: &TriangleMesh) -> ([f64; 3], [f64; 3]) {
    let (lo, hi) = mesh.bounds();
    (lo.to_array(), hi.to_array())
}
