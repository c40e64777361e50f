//! `"insert"` and `"outlets"` (docs/scenes.md, "Insertion and outlets"):
//!
//! ```json
//! "insert": [{ "name": "feed", "region": { "type": "cylinder", "base": [0, 0, 0.3], "axis": [0, 0, 1],
//!              "length": 0.05, "radius": 0.04 },
//!              "rate": 5000, "count": 20000, "start": 0, "stop": 1.0,
//!              "radius": { "distribution": "uniform", "min": 0.002, "max": 0.0025 },
//!              "material": "glass", "velocity": [0, 0, -0.5], "seed": 3 }],
//! "outlets": [{ "name": "bin", "plane": { "point": [0, 0, -0.05], "normal": [0, 0, 1] } }]
//! ```
//!
//! `rate` is particles per second (limit `count`), `mass_rate` kilograms per second (limit
//! `mass`). An insertion may feed rigid clumps instead of spheres: `"clump": "<template>"`
//! with an optional `"scale"` (a distribution like `radius`, default 1) and `"orientation"`
//! (`"random"`, the default, or `"template"`) in place of `radius`, `material` and
//! `angular_velocity`; `rate` and `count` then count bodies. An outlet takes a particle whose centre is in its `region`, or behind its `plane`
//! (on the side opposite to the normal).

use glam::DVec3;
use rand::SeedableRng;

use super::parse::{fmt_num, fmt_vec, index, show, Cx, Obj};
use crate::error::Result;
use crate::model::clump::ClumpTemplate;
use crate::model::flow::{ClumpInsert, ClumpOrientation, Insertion, Outlet, OutletShape, Rate};
use crate::model::region::Region;
use crate::model::distribution::RadiusDist;

pub const INSERT_KEYS: &[&str] = &["name", "region", "rate", "mass_rate", "count", "mass", "start", "stop", "radius", "material", "velocity", "angular_velocity", "seed"];
pub const CLUMP_INSERT_KEYS: &[&str] = &["name", "region", "rate", "mass_rate", "count", "mass", "start", "stop", "clump", "scale", "orientation", "velocity", "seed"];
pub const OUTLET_KEYS: &[&str] = &["name", "region", "plane"];
const BOX_KEYS: &[&str] = &["type", "min", "max"];
const CYLINDER_KEYS: &[&str] = &["type", "base", "axis", "length", "radius"];

/// A non-zero direction, normalised.
fn direction(cx: &Cx, o: &Obj, k: &str) -> Result<DVec3> {
    let v = DVec3::from(o.vec3_req(k)?);
    let len = v.length();
    if !(len.is_finite() && len > 1e-300) {
        return Err(cx.err(&o.key(k), format!("must be a non-zero vector, got {}", fmt_vec(v.to_array()))));
    }
    Ok(v / len)
}

/// `{"type": "box", "min", "max"}` or `{"type": "cylinder", "base", "axis", "length", "radius"}`.
pub fn region(o: &Obj) -> Result<Region> {
    let cx = &o.cx;
    let ty = cx.string(o.req("type")?, &o.key("type"))?;
    match ty {
        "box" => {
            o.allow(BOX_KEYS)?;
            let (min, max) = (o.vec3_req("min")?, o.vec3_req("max")?);
            cx.ordered_box(min, max, &o.key("min"))?;
            Ok(Region::Box { min: DVec3::from(min), max: DVec3::from(max) })
        }
        "cylinder" => {
            o.allow(CYLINDER_KEYS)?;
            let base = DVec3::from(o.vec3_req("base")?);
            let axis = direction(cx, o, "axis")?;
            let length = cx.positive(o.f64_req("length")?, &o.key("length"))?;
            let radius = cx.positive(o.f64_req("radius")?, &o.key("radius"))?;
            Ok(Region::Cylinder { base, axis, length, radius })
        }
        other => Err(cx.err(&o.key("type"), format!("unknown region type \"{other}\"{}; allowed: box, cylinder", super::parse::did_you_mean(other, ["box", "cylinder"])))),
    }
}

/// One entry of `"insert"`; `material` resolves a material key of `o`, `templates` are the
/// scene's clump templates (for `"clump"`).
pub fn insertion(o: &Obj, i: usize, material: impl Fn(&Obj, &str) -> Result<u32>, templates: &[ClumpTemplate]) -> Result<Insertion> {
    let cx = &o.cx;
    let clump_name = o.str_opt("clump")?;
    o.allow(if clump_name.is_some() { CLUMP_INSERT_KEYS } else { INSERT_KEYS })?;
    let name = o.str_opt("name")?.map(str::to_string).unwrap_or_else(|| format!("insert{i}"));
    let region = region(&o.obj_req("region")?)?;
    let (rate, limit) = match (o.get("rate"), o.get("mass_rate")) {
        (Some(r), None) => {
            if o.get("mass").is_some() {
                return Err(cx.err(&o.key("mass"), "a mass limit goes with mass_rate; with rate (particles/s) give count"));
            }
            let r = cx.positive(cx.number(r, &o.key("rate"))?, &o.key("rate"))?;
            let limit = o.u64_opt("count")?.map(|c| c as f64);
            (Rate::Count(r), limit)
        }
        (None, Some(r)) => {
            if o.get("count").is_some() {
                return Err(cx.err(&o.key("count"), "a count limit goes with rate; with mass_rate (kg/s) give mass"));
            }
            let r = cx.positive(cx.number(r, &o.key("mass_rate"))?, &o.key("mass_rate"))?;
            let limit = o.f64_opt("mass")?.map(|m| cx.positive(m, &o.key("mass"))).transpose()?;
            (Rate::Mass(r), limit)
        }
        (Some(a), Some(b)) => return Err(cx.err(&o.key("rate"), format!("give one of rate (particles/s) and mass_rate (kg/s), got both ({} and {})", show(a), show(b)))),
        (None, None) => return Err(cx.err(&o.key("rate"), "missing: give rate (particles/s) or mass_rate (kg/s)")),
    };
    let start = o.f64_opt("start")?.map(|s| cx.non_negative(s, &o.key("start"))).transpose()?.unwrap_or(0.0);
    let stop = o.f64_opt("stop")?;
    if let Some(s) = stop {
        if s <= start {
            return Err(cx.err(&o.key("stop"), format!("must be > start ({}), got {}", fmt_num(start), fmt_num(s))));
        }
    }
    let (radius, material, clump) = match clump_name {
        None => {
            let radius_path = o.key("radius");
            let radius = RadiusDist::parse(cx, o.req("radius")?, &radius_path)?;
            if radius.sample(&mut rand_pcg::Pcg64::seed_from_u64(0)).is_none() {
                return Err(radius.unsampleable(cx, &radius_path));
            }
            if region.sample_centre(radius.max(), &mut rand_pcg::Pcg64::seed_from_u64(0)).is_none() {
                return Err(cx.err(&o.key("region"), format!("too small to hold a particle of the largest radius {}", fmt_num(radius.max()))));
            }
            (radius, material(o, "material")?, None)
        }
        Some(name) => {
            let Some(t) = templates.iter().position(|t| t.name == name) else {
                let known: Vec<&str> = templates.iter().map(|t| t.name.as_str()).collect();
                return Err(cx.err(&o.key("clump"), format!("no clump template named \"{name}\" (clump_templates has: {})", if known.is_empty() { "none".to_string() } else { known.join(", ") })));
            };
            let template = &templates[t];
            let scale_path = o.key("scale");
            let scale = match o.get("scale") {
                Some(v) => RadiusDist::parse(cx, v, &scale_path)?,
                None => RadiusDist::Monodisperse(1.0),
            };
            if scale.sample(&mut rand_pcg::Pcg64::seed_from_u64(0)).is_none() {
                return Err(scale.unsampleable(cx, &scale_path));
            }
            let orientation = match o.str_opt("orientation")? {
                None | Some("random") => ClumpOrientation::Random,
                Some("template") => ClumpOrientation::Template,
                Some(other) => return Err(cx.err(&o.key("orientation"), format!("unknown orientation \"{other}\"{}; allowed: random, template", super::parse::did_you_mean(other, ["random", "template"])))),
            };
            let reach = template.bounding_radius * scale.max();
            if region.sample_centre(reach, &mut rand_pcg::Pcg64::seed_from_u64(0)).is_none() {
                return Err(cx.err(&o.key("region"), format!("too small to hold a clump \"{name}\" of the largest scale {} (bounding radius {})", fmt_num(scale.max()), fmt_num(reach))));
            }
            let radii = template.spheres.iter().map(|c| c.radius);
            let (r_lo, r_hi) = (radii.clone().fold(f64::INFINITY, f64::min) * scale.min(), radii.fold(0.0, f64::max) * scale.max());
            let radius = if r_lo == r_hi { RadiusDist::Monodisperse(r_lo) } else { RadiusDist::Uniform { min: r_lo, max: r_hi } };
            (radius, template.material, Some(ClumpInsert { template: t as u32, scale, orientation }))
        }
    };
    Ok(Insertion {
        name,
        region,
        rate,
        start,
        stop,
        limit,
        radius,
        material,
        clump,
        velocity: DVec3::from(o.vec3_opt("velocity")?.unwrap_or([0.0; 3])),
        angular_velocity: DVec3::from(o.vec3_opt("angular_velocity")?.unwrap_or([0.0; 3])),
        seed: o.u64_opt("seed")?.unwrap_or(1),
    })
}

/// One entry of `"outlets"`.
pub fn outlet(o: &Obj, i: usize) -> Result<Outlet> {
    let cx = &o.cx;
    o.allow(OUTLET_KEYS)?;
    let name = o.str_opt("name")?.map(str::to_string).unwrap_or_else(|| format!("outlet{i}"));
    let shape = match (o.obj_opt("region")?, o.obj_opt("plane")?) {
        (Some(r), None) => OutletShape::Region(region(&r)?),
        (None, Some(p)) => {
            p.allow(&["point", "normal"])?;
            OutletShape::Plane { point: DVec3::from(p.vec3_req("point")?), normal: direction(cx, &p, "normal")? }
        }
        (Some(_), Some(_)) => return Err(cx.err(&o.key("region"), "give one of region and plane, got both")),
        (None, None) => return Err(cx.err(&o.key("region"), "missing: give a region or a plane")),
    };
    Ok(Outlet { name, shape })
}

/// Parse the `"insert"` and `"outlets"` arrays of the scene's top object.
pub fn parse(top: &Obj, material: impl Fn(&Obj, &str) -> Result<u32>, templates: &[ClumpTemplate]) -> Result<(Vec<Insertion>, Vec<Outlet>)> {
    let cx = &top.cx;
    let mut inserts = Vec::new();
    if let Some(list) = top.array_opt("insert")? {
        for (i, v) in list.iter().enumerate() {
            inserts.push(insertion(&cx.object(v, &index("insert", i))?, i, &material, templates)?);
        }
    }
    let mut outlets: Vec<Outlet> = Vec::new();
    if let Some(list) = top.array_opt("outlets")? {
        for (i, v) in list.iter().enumerate() {
            let o = outlet(&cx.object(v, &index("outlets", i))?, i)?;
            if outlets.iter().any(|p| p.name == o.name) {
                return Err(cx.err(&index("outlets", i), format!("duplicate outlet name \"{}\"", o.name)));
            }
            outlets.push(o);
        }
    }
    Ok((inserts, outlets))
}
