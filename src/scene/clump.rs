//! A scene's `"clump_templates"`: rigid multi-sphere templates, their spheres given inline or
//! in a CSV file next to the scene, and optionally their mass properties
//! (`crate::model::clump` computes them otherwise). Documented in `docs/scenes.md`.
//!
//! ```json
//! "clump_templates": [
//!   { "name": "dumbbell", "material": "glass", "spheres": [[0, 0, 0, 0.001], [0.0015, 0, 0, 0.001]] },
//!   { "name": "tablet", "material": "glass", "file": "tablet.csv",
//!     "override": { "mass": 2e-4, "moments": [1e-9, 1.2e-9, 2e-9], "orientation": [1, 0, 0, 0] } }
//! ]
//! ```

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::parse::{fmt_num, index, show, Cx, Obj};
use super::{material_ref, mesh};
use crate::error::Result;
use crate::model::clump::{check_moments, ClumpTemplate, MassOverride};
use crate::model::material::Material;

pub(super) const TEMPLATE_KEYS: &[&str] = &["name", "material", "spheres", "file", "override"];
const OVERRIDE_KEYS: &[&str] = &["mass", "moments", "orientation"];

/// The templates of `"clump_templates"` (`path` is its key), in order. Every CSV file read is
/// appended to `files`.
pub(super) fn templates(cx: &Cx, list: &[Value], path: &str, materials: &[Material], files: &mut Vec<PathBuf>) -> Result<Vec<ClumpTemplate>> {
    let mut out: Vec<ClumpTemplate> = Vec::with_capacity(list.len());
    for (i, v) in list.iter().enumerate() {
        let here = index(path, i);
        let o = cx.object(v, &here)?;
        o.allow(TEMPLATE_KEYS)?;
        let name = cx.string(o.req("name")?, &o.key("name"))?;
        if name.trim().is_empty() {
            return Err(cx.err(&o.key("name"), format!("must be a non-empty name, got {}", show(o.req("name")?))));
        }
        if let Some(j) = out.iter().position(|t| t.name == name) {
            return Err(cx.err(&o.key("name"), format!("template \"{name}\" is already defined by {}", index(path, j))));
        }
        let material = material_ref(cx, materials, &o, "material")?;
        let spheres = match (o.get("spheres"), o.get("file")) {
            (Some(_), Some(f)) => {
                return Err(cx.err(&o.key("file"), format!("give either spheres or file, not both (file = {})", show(f))))
            }
            (None, None) => {
                return Err(cx.err(&o.key("spheres"), "missing: give spheres ([[x, y, z, r], ...]) or file (a CSV file of x,y,z,r lines)"))
            }
            (Some(s), None) => inline_spheres(cx, s, &o.key("spheres"))?,
            (None, Some(f)) => {
                let key = o.key("file");
                let file = mesh::resolve(cx.file, cx.string(f, &key)?);
                let spheres = csv_spheres(cx, &key, &file)?;
                files.push(file);
                spheres
            }
        };
        let over = match o.obj_opt("override")? {
            Some(ov) => Some(mass_override(cx, &ov)?),
            None => None,
        };
        let density = materials[material as usize].density;
        let t = ClumpTemplate::with_mass_properties(name, material, &spheres, density, over.as_ref()).map_err(|e| cx.err(&here, e))?;
        out.push(t);
    }
    Ok(out)
}

/// `"spheres": [[x, y, z, r], ...]`.
fn inline_spheres(cx: &Cx, v: &Value, path: &str) -> Result<Vec<[f64; 4]>> {
    let list = cx.array(v, path)?;
    if list.is_empty() {
        return Err(cx.err(path, "a clump template needs at least one sphere, got []"));
    }
    let mut out = Vec::with_capacity(list.len());
    for (i, s) in list.iter().enumerate() {
        let p = index(path, i);
        let a = match s {
            Value::Array(a) if a.len() == 4 => a,
            _ => return Err(cx.err(&p, format!("expected an array of 4 numbers [x, y, z, r], got {}", show(s)))),
        };
        let mut x = [0.0; 4];
        for k in 0..4 {
            x[k] = cx.number(&a[k], &index(&p, k))?;
        }
        cx.positive(x[3], &index(&p, 3))?;
        out.push(x);
    }
    Ok(out)
}

/// A CSV file of `x,y,z,r` lines; `#` starts a comment, blank lines are skipped and the first
/// line that is not may be the header `x,y,z,r`. Errors name the scene key, the file and the
/// line.
fn csv_spheres(cx: &Cx, key: &str, file: &Path) -> Result<Vec<[f64; 4]>> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| cx.err(key, format!("cannot read clump template file {}: {e}", file.display())))?;
    let bad = |line: usize, what: String| cx.err(key, format!("{} line {}: {what}", file.display(), line + 1));
    let mut out = Vec::new();
    let mut first = true;
    for (ln, raw) in text.lines().enumerate() {
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if std::mem::take(&mut first) && fields.len() == 4 && fields.iter().zip(["x", "y", "z", "r"]).all(|(f, h)| f.eq_ignore_ascii_case(h)) {
            continue;
        }
        let nums: Vec<Option<f64>> = fields.iter().map(|f| f.parse::<f64>().ok()).collect();
        if nums.len() != 4 || nums.iter().any(Option::is_none) {
            return Err(bad(ln, format!("expected 4 numbers x,y,z,r, got \"{}\"", raw.trim())));
        }
        let x = [nums[0].unwrap(), nums[1].unwrap(), nums[2].unwrap(), nums[3].unwrap()];
        if let Some(k) = x.iter().position(|v| !v.is_finite()) {
            return Err(bad(ln, format!("{} must be a finite number, got \"{}\"", ["x", "y", "z", "r"][k], fields[k])));
        }
        if x[3] <= 0.0 {
            return Err(bad(ln, format!("radius r must be > 0, got {}", fmt_num(x[3]))));
        }
        out.push(x);
    }
    if out.is_empty() {
        return Err(cx.err(key, format!("{} holds no spheres (a clump template needs at least one x,y,z,r line)", file.display())));
    }
    Ok(out)
}

/// `"override": {"mass": m, "moments": [I1, I2, I3], "orientation": [w, x, y, z]}`.
fn mass_override(cx: &Cx, o: &Obj) -> Result<MassOverride> {
    o.allow(OVERRIDE_KEYS)?;
    let mass = cx.positive(o.f64_req("mass")?, &o.key("mass"))?;
    let moments = o.vec3_req("moments")?;
    check_moments(moments).map_err(|e| cx.err(&o.key("moments"), e))?;
    let orientation = match o.get("orientation") {
        None => None,
        Some(v) => {
            let key = o.key("orientation");
            let a = match v {
                Value::Array(a) if a.len() == 4 => a,
                _ => return Err(cx.err(&key, format!("expected a quaternion [w, x, y, z] (4 numbers), got {}", show(v)))),
            };
            let mut q = [0.0; 4];
            for k in 0..4 {
                q[k] = cx.number(&a[k], &index(&key, k))?;
            }
            let n = q.iter().map(|x| x * x).sum::<f64>().sqrt();
            if n <= 1e-12 {
                return Err(cx.err(&key, format!("must be a non-zero quaternion [w, x, y, z], got {}", show(v))));
            }
            Some(q)
        }
    };
    Ok(MassOverride { mass, moments, orientation })
}
