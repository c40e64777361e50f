//! The `"measure"` list of a scene (docs/measurements.md):
//!
//! ```json
//! "measure": [
//!   { "type": "repose_angle", "name": "angle", "axis": [0, 0, 1], "center": [0, 0, 0],
//!     "from_time": 8.0, "every": 1, "surface_fraction": 0.6 }
//! ]
//! ```

use glam::DVec3;
use serde_json::Value;

use super::parse::{fmt_vec, index, show, Cx, Obj};
use crate::error::Result;
use crate::measure::repose;
use crate::model::flow::Outlet;
use crate::model::measure::{self as spec, Beverloo, Discharge, Measure, MeasureKind, ReposeAngle};

/// Keys every measurement type accepts.
const COMMON_KEYS: &[&str] = &["type", "name", "from_time", "every"];
const REPOSE_KEYS: &[&str] = &["axis", "center", "surface_fraction", "bin_width", "min_bin_count"];
const DISCHARGE_KEYS: &[&str] = &["outlet", "to_time", "beverloo"];
const BEVERLOO_KEYS: &[&str] = &["C", "k", "bulk_density", "orifice_diameter", "particle_diameter"];
const TYPES: &[&str] = &["repose_angle", "discharge"];

/// Parse the list; `gravity` and `outlets` are the scene's.
pub(crate) fn measures(cx: &Cx, list: &[Value], gravity: [f64; 3], outlets: &[Outlet]) -> Result<Vec<Measure>> {
    let mut out: Vec<Measure> = Vec::with_capacity(list.len());
    for (i, v) in list.iter().enumerate() {
        let o = cx.object(v, &index("measure", i))?;
        let ty = cx.string(o.req("type")?, &o.key("type"))?;
        let kind = match ty {
            "repose_angle" => {
                allow(&o, REPOSE_KEYS)?;
                MeasureKind::ReposeAngle(repose_angle(cx, &o, gravity)?)
            }
            "discharge" => {
                allow(&o, DISCHARGE_KEYS)?;
                MeasureKind::Discharge(discharge(cx, &o, outlets)?)
            }
            other => {
                return Err(cx.err(&o.key("type"), format!("unknown measurement type \"{other}\"{}; allowed: {}", super::parse::did_you_mean(other, TYPES.iter().copied()), TYPES.join(", "))))
            }
        };
        let name = o.str_opt("name")?.unwrap_or(ty).to_string();
        if let Some(j) = out.iter().position(|m| m.name == name) {
            return Err(cx.err(&o.key("name"), format!("name \"{name}\" is already used by measure[{j}]; give each measurement its own name")));
        }
        let from_time = match o.f64_opt("from_time")? {
            Some(t) => cx.non_negative(t, &o.key("from_time"))?,
            None => 0.0,
        };
        let every = o.u64_opt("every")?.unwrap_or(1);
        if every == 0 {
            return Err(cx.err(&o.key("every"), "must be >= 1 (outputs between samples), got 0"));
        }
        out.push(Measure { name, from_time, every, kind });
    }
    Ok(out)
}

/// Reject keys that are neither common nor the type's own.
fn allow(o: &Obj, own: &[&str]) -> Result<()> {
    let allowed: Vec<&str> = COMMON_KEYS.iter().chain(own).copied().collect();
    o.allow(&allowed)
}

fn repose_angle(cx: &Cx, o: &Obj, gravity: [f64; 3]) -> Result<ReposeAngle> {
    let a = o.vec3_req("axis")?;
    let len = DVec3::from(a).length();
    if len <= 1e-300 {
        return Err(cx.err(&o.key("axis"), format!("must be a non-zero vector, got {}", fmt_vec(a))));
    }
    let axis = DVec3::from(a) / len;
    if repose::frame(axis, DVec3::from(gravity)).is_none() {
        return Err(cx.err(
            &o.key("axis"),
            format!("gravity {} has no component perpendicular to the axis {}, so the bed has no down direction", fmt_vec(gravity), fmt_vec(a)),
        ));
    }
    let center = DVec3::from(o.vec3_req("center")?);
    let surface_fraction = match o.f64_opt("surface_fraction")? {
        Some(f) => cx.in_half_open(f, 0.0, 1.0, &o.key("surface_fraction"))?,
        None => spec::DEFAULT_SURFACE_FRACTION,
    };
    let bin_width = o.f64_opt("bin_width")?.map(|w| cx.positive(w, &o.key("bin_width"))).transpose()?;
    let min_bin_count = o.u64_opt("min_bin_count")?.unwrap_or(spec::DEFAULT_MIN_BIN_COUNT);
    if min_bin_count == 0 {
        return Err(cx.err(&o.key("min_bin_count"), format!("must be >= 1, got {}", show(o.get("min_bin_count").unwrap()))));
    }
    Ok(ReposeAngle { axis, center, surface_fraction, bin_width, min_bin_count })
}

fn discharge(cx: &Cx, o: &Obj, outlets: &[Outlet]) -> Result<Discharge> {
    let name = cx.string(o.req("outlet")?, &o.key("outlet"))?;
    let Some(outlet) = outlets.iter().position(|x| x.name == name) else {
        let names: Vec<&str> = outlets.iter().map(|x| x.name.as_str()).collect();
        return Err(cx.err(&o.key("outlet"), format!("unknown outlet \"{name}\"{}; the scene's outlets: {}", super::parse::did_you_mean(name, names.iter().copied()), if names.is_empty() { "none".to_string() } else { names.join(", ") })));
    };
    let to_time = o.f64_opt("to_time")?.map(|t| cx.positive(t, &o.key("to_time"))).transpose()?;
    let b = o.obj_req("beverloo")?;
    b.allow(BEVERLOO_KEYS)?;
    let positive = |k: &str| -> Result<f64> { cx.positive(b.f64_req(k)?, &b.key(k)) };
    let beverloo = Beverloo {
        c: b.f64_opt("C")?.map(|c| cx.positive(c, &b.key("C"))).transpose()?.unwrap_or(spec::DEFAULT_C),
        k: b.f64_opt("k")?.map(|k| cx.non_negative(k, &b.key("k"))).transpose()?.unwrap_or(spec::DEFAULT_K),
        bulk_density: positive("bulk_density")?,
        orifice_diameter: positive("orifice_diameter")?,
        particle_diameter: positive("particle_diameter")?,
    };
    if beverloo.orifice_diameter <= beverloo.k * beverloo.particle_diameter {
        return Err(cx.err(
            &b.key("orifice_diameter"),
            format!("{} is not wider than k · particle_diameter = {}: Beverloo predicts no flow", show(b.get("orifice_diameter").unwrap()), beverloo.k * beverloo.particle_diameter),
        ));
    }
    Ok(Discharge { outlet, outlet_name: name.to_string(), to_time, beverloo })
}
