//! Scene files (JSON, SI units) → [`Setup`]. The format is documented in `docs/scenes.md`.
//!
//! Every error is a `TalusError::Scene` naming the file, the key path
//! (`materials.glass.density`, `generators[1].radius.min`) and the offending value.

mod checkpoint_state;
mod checks;
mod clump_place;
mod clump;
mod contacts;
mod distribution;
mod flow;
mod generate;
mod geometry;
mod lammps_data;
mod vtu_state;
mod measure;
mod mesh;
mod motion;
pub mod override_arg;
pub mod overrides;
mod parse;
pub mod timestep;

use std::path::Path;

use serde_json::Value;

pub use checks::{time_step_report, TimeStepReport, CONTACT_ERROR_FRACTION, CONTACT_WARN_FRACTION, RAYLEIGH_ERROR_FRACTION, RAYLEIGH_WARN_FRACTION};
pub use timestep::{rayleigh_for_setup, rayleigh_time_step, rayleigh_time_step_single};

use crate::contact::params::{inherit, ContactModel, PairParams};
use crate::error::Result;
use crate::model::distribution::RadiusDist;
use crate::model::checks::{LostParticles, RunChecks};
use crate::model::material::Material;
use crate::model::overlap::Grid;
use crate::setup::{mesh_group_bases, Aabb, PairTable, Particles, RestCriterion, Setup, TimeStepChoice, Wall};
use generate::{Common, Sources};
use parse::{did_you_mean, fmt_num, fmt_vec, index, show, Cx, Obj};


/// Default fraction of the Rayleigh step for `"time_step": "auto"`.
pub const DEFAULT_TIME_STEP_FRACTION: f64 = 0.2;
/// Default VTU snapshot period, in outputs.
pub const DEFAULT_SNAPSHOT_EVERY: u64 = 10;
/// Default `until_rest.outputs`: consecutive outputs below the kinetic fraction.
pub const DEFAULT_REST_OUTPUTS: u64 = 2;
/// Default gravity, m/s².
pub const DEFAULT_GRAVITY: [f64; 3] = [0.0, 0.0, -9.81];

const TOP_KEYS: &[&str] = &[
    "description",
    "gravity",
    "time_step",
    "time_step_fraction",
    "duration",
    "steps",
    "output",
    "snapshot_every",
    "domain",
    "materials",
    "contacts",
    "particles",
    "generators",
    "walls",
    "insert",
    "outlets",
    "measure",
    "skin",
    "initial_state",
    "time_step_check",
    "lost_particles",
    "until_rest",
    "checkpoint_every",
    "energy_tracking",
    "energy_drift",
    "clump_templates",
    "decomposition",
];
const DECOMPOSITION_KEYS: &[&str] = &["bricks", "balance"];
const INITIAL_STATE_KEYS: &[&str] = &["file", "format", "material"];
const OUTPUT_KEYS: &[&str] = &["every_steps", "interval"];
const UNTIL_REST_KEYS: &[&str] = &["kinetic_fraction", "outputs"];
const DOMAIN_KEYS: &[&str] = &["min", "max", "periodic"];
const MATERIAL_KEYS: &[&str] = &["density", "hz_shear", "hz_poiss", "youngsModulus", "poissonsRatio", "fric"];
/// Pair keys that are inherited from the materials (not allowed in `contacts.default`).
const INHERITED_KEYS: &[&str] = &["hz_shear", "hz_poiss", "fric"];
const PARTICLE_KEYS: &[&str] = &["position", "radius", "velocity", "angular_velocity", "material"];
const LATTICE_KEYS: &[&str] =
    &["type", "origin", "count", "spacing", "jitter", "radius", "material", "velocity", "angular_velocity", "seed"];
const RANDOM_FILL_KEYS: &[&str] =
    &["type", "box", "count", "radius", "material", "velocity", "angular_velocity", "seed"];
/// A generator of rigid clumps (`"clump"`: a template's name) takes these instead of
/// `radius`, `material`, `angular_velocity` and `jitter` (the template has its spheres and
/// material).
const CLUMP_LATTICE_KEYS: &[&str] = &["type", "origin", "count", "spacing", "clump", "scale", "orientation", "velocity", "seed"];
const CLUMP_RANDOM_FILL_KEYS: &[&str] = &["type", "box", "count", "clump", "scale", "orientation", "velocity", "seed"];
const PLANE_KEYS: &[&str] = &["type", "name", "point", "normal", "material", "motion", "load_point"];
const BOX_KEYS: &[&str] = &["type", "name", "min", "max", "material", "open", "motion", "load_point"];
const FACES: [&str; 6] = ["-x", "+x", "-y", "+y", "-z", "+z"];

/// The keys the parser accepts in each context of a scene file, one list per context
/// (docs/scenes.md names them; `tests/scene_keys.rs` compares the two): `top`, `output`,
/// `until_rest`, `domain`, `initial_state`, `materials`, `particles`, `generators`,
/// `walls`, `walls.transform`, `insert`, `outlets`, `clump_templates`, `contacts.default`
/// and `contacts.pairs` per model (`contacts.pairs (hooke)`).
pub fn accepted_keys() -> Vec<(String, Vec<&'static str>)> {
    let union = |lists: &[&[&'static str]]| {
        let mut v: Vec<&'static str> = lists.concat();
        v.sort_unstable();
        v.dedup();
        v
    };
    let mut out: Vec<(String, Vec<&'static str>)> = [
        ("top", union(&[TOP_KEYS])),
        ("output", union(&[OUTPUT_KEYS])),
        ("until_rest", union(&[UNTIL_REST_KEYS])),
        ("decomposition", union(&[DECOMPOSITION_KEYS])),
        ("domain", union(&[DOMAIN_KEYS])),
        ("initial_state", union(&[INITIAL_STATE_KEYS])),
        ("materials", union(&[MATERIAL_KEYS])),
        ("particles", union(&[PARTICLE_KEYS])),
        ("generators", union(&[LATTICE_KEYS, RANDOM_FILL_KEYS, CLUMP_LATTICE_KEYS, CLUMP_RANDOM_FILL_KEYS])),
        ("walls", union(&[PLANE_KEYS, BOX_KEYS, mesh::MESH_KEYS])),
        ("walls.transform", union(&[mesh::TRANSFORM_KEYS])),
        ("insert", union(&[flow::INSERT_KEYS, flow::CLUMP_INSERT_KEYS])),
        ("outlets", union(&[flow::OUTLET_KEYS])),
        ("clump_templates", union(&[clump::TEMPLATE_KEYS])),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    for m in ContactModel::ALL {
        out.push((format!("contacts.default ({})", m.name()), contacts::allowed_keys(m, &[], INHERITED_KEYS)));
        out.push((format!("contacts.pairs ({})", m.name()), contacts::allowed_keys(m, &["materials"], &[])));
    }
    out
}

/// Read and parse a scene file.
pub fn load(path: &Path) -> Result<Setup> {
    parse_str(&crate::checkpoint::read_scene_text(path)?, path)
}

/// Parse a scene from text. `source` is used in messages and for `Setup::name` (its stem).
pub fn parse_str(text: &str, source: &Path) -> Result<Setup> {
    parse_value(&parse_json(text, source)?, source)
}

/// The JSON of a scene's text; a syntax error names the line and column.
pub fn parse_json(text: &str, source: &Path) -> Result<Value> {
    let cx = Cx { file: source };
    serde_json::from_str(text).map_err(|e| cx.err("(json)", format!("malformed JSON at line {}, column {}: {e}", e.line(), e.column())))
}

/// A scene's set-up from its JSON (`parse_str` after the syntax; `--set` overrides edit the
/// JSON in between, `overrides::parse_with`).
pub fn parse_value(root: &Value, source: &Path) -> Result<Setup> {
    let cx = Cx { file: source };
    let top = cx.object(root, "")?;
    top.allow(TOP_KEYS)?;
    if let Some(d) = top.get("description") {
        cx.string(d, "description")?;
    }

    // ---- time settings first (cheap errors before generating particles) ----
    let ts = top.req("time_step")?;
    let explicit_dt = match ts {
        Value::String(s) if s == "auto" => None,
        Value::Number(_) => Some(cx.positive(cx.number(ts, "time_step")?, "time_step")?),
        _ => {
            return Err(cx.err(
                "time_step",
                format!("expected a positive number of seconds or \"auto\", got {}", show(ts)),
            ))
        }
    };
    let fraction = match top.f64_opt("time_step_fraction")? {
        Some(f) => {
            if explicit_dt.is_some() {
                return Err(cx.err(
                    "time_step_fraction",
                    format!("only allowed with \"time_step\": \"auto\" (got {} with time_step {})", fmt_num(f), show(ts)),
                ));
            }
            cx.in_half_open(f, 0.0, 1.0, "time_step_fraction")?
        }
        None => DEFAULT_TIME_STEP_FRACTION,
    };
    enum Length {
        Duration(f64),
        Steps(u64),
    }
    let length = match (top.get("duration"), top.get("steps")) {
        (Some(d), Some(s)) => {
            return Err(cx.err(
                "duration",
                format!("give exactly one of duration and steps, got both (duration = {}, steps = {})", show(d), show(s)),
            ))
        }
        (None, None) => return Err(cx.err("duration", "missing: give exactly one of duration (s) or steps")),
        (Some(d), None) => Length::Duration(cx.positive(cx.number(d, "duration")?, "duration")?),
        (None, Some(s)) => {
            let n = cx.uint(s, "steps")?;
            if n == 0 {
                return Err(cx.err("steps", "must be >= 1, got 0"));
            }
            Length::Steps(n)
        }
    };
    enum Output {
        Default,
        Every(u64),
        Interval(f64),
    }
    let output = match top.obj_opt("output")? {
        None => Output::Default,
        Some(o) => {
            o.allow(OUTPUT_KEYS)?;
            match (o.get("every_steps"), o.get("interval")) {
                (Some(e), Some(i)) => {
                    return Err(cx.err(
                        &o.key("every_steps"),
                        format!("give at most one of every_steps and interval, got both ({} and {})", show(e), show(i)),
                    ))
                }
                (Some(e), None) => {
                    let n = cx.uint(e, &o.key("every_steps"))?;
                    if n == 0 {
                        return Err(cx.err(&o.key("every_steps"), "must be >= 1, got 0"));
                    }
                    Output::Every(n)
                }
                (None, Some(i)) => Output::Interval(cx.positive(cx.number(i, &o.key("interval"))?, &o.key("interval"))?),
                (None, None) => Output::Default,
            }
        }
    };
    let snapshot_every = top.u64_opt("snapshot_every")?.unwrap_or(DEFAULT_SNAPSHOT_EVERY);
    let until_rest = match top.obj_opt("until_rest")? {
        None => None,
        Some(o) => {
            o.allow(UNTIL_REST_KEYS)?;
            let key = o.key("kinetic_fraction");
            let f = o.f64_req("kinetic_fraction")?;
            if !(f > 0.0 && f < 1.0) {
                return Err(cx.err(&key, format!("must be in (0, 1): the fraction of the peak kinetic energy, got {}", fmt_num(f))));
            }
            let outputs = o.u64_opt("outputs")?.unwrap_or(DEFAULT_REST_OUTPUTS);
            if outputs == 0 {
                return Err(cx.err(&o.key("outputs"), "must be >= 1, got 0"));
            }
            Some(RestCriterion { kinetic_fraction: f, outputs })
        }
    };
    let checkpoint_every = top.u64_opt("checkpoint_every")?.unwrap_or(0);
    let gravity = top.vec3_opt("gravity")?.unwrap_or(DEFAULT_GRAVITY);

    // ---- materials ----
    let mats = top.obj_req("materials")?;
    if mats.map.is_empty() {
        return Err(cx.err("materials", "at least one material is required, got {}"));
    }
    let mut materials = Vec::new();
    for (name, v) in mats.map {
        let o = cx.object(v, &mats.key(name))?;
        o.allow(MATERIAL_KEYS)?;
        let density = cx.positive(o.f64_req("density")?, &o.key("density"))?;
        // Elasticity as the PFC specs name it (hz_shear, hz_poiss) or as the others do
        // (youngsModulus, poissonsRatio; G = E / (2 (1 + ν))), not both.
        let (hz_shear, hz_poiss) = match (o.get("youngsModulus"), o.get("hz_shear")) {
            (Some(_), Some(_)) => return Err(cx.err(&o.key("youngsModulus"), "give either youngsModulus/poissonsRatio or hz_shear/hz_poiss, not both")),
            (Some(_), None) => {
                if o.get("hz_poiss").is_some() {
                    return Err(cx.err(&o.key("hz_poiss"), "with youngsModulus, give Poisson's ratio as poissonsRatio"));
                }
                let young = cx.positive(o.f64_req("youngsModulus")?, &o.key("youngsModulus"))?;
                let nu = match o.f64_opt("poissonsRatio")? {
                    Some(x) => check_poisson(&cx, x, &o.key("poissonsRatio"))?,
                    None => 0.0,
                };
                (young / (2.0 * (1.0 + nu)), nu)
            }
            (None, _) => {
                if o.get("poissonsRatio").is_some() {
                    return Err(cx.err(&o.key("poissonsRatio"), "poissonsRatio goes with youngsModulus; with hz_shear use hz_poiss"));
                }
                let g = cx.positive(o.f64_req("hz_shear")?, &o.key("hz_shear"))?;
                let nu = match o.f64_opt("hz_poiss")? {
                    Some(x) => check_poisson(&cx, x, &o.key("hz_poiss"))?,
                    None => 0.0,
                };
                (g, nu)
            }
        };
        let fric = match o.f64_opt("fric")? {
            Some(x) => cx.non_negative(x, &o.key("fric"))?,
            None => 0.0,
        };
        materials.push(Material { name: name.clone(), density, hz_shear, hz_poiss, fric });
    }
    let mat_ref = |o: &Obj, k: &str| -> Result<u32> { material_ref(&cx, &materials, o, k) };

    // ---- contacts ----
    let mut base = PairParams::default();
    let mut pair_entries: Vec<(u32, u32, Obj, ContactModel)> = Vec::new();
    if let Some(c) = top.obj_opt("contacts")? {
        c.allow(&["default", "pairs"])?;
        if let Some(d) = c.obj_opt("default")? {
            let model = contacts::model_of(&cx, &d, ContactModel::Hertz)?;
            if let Some(k) = INHERITED_KEYS.iter().find(|k| d.get(k).is_some()) {
                return Err(cx.err(&d.key(k), format!("is inherited from the materials (spec eqs 18-20); set it per material or per pair in contacts.pairs, got {}", show(d.get(k).unwrap()))));
            }
            contacts::check_keys(&cx, &d, model, &[], INHERITED_KEYS)?;
            contacts::apply_pair_keys(&cx, &d, &mut base, model)?;
        }
        if let Some(pairs) = c.array_opt("pairs")? {
            for (i, v) in pairs.iter().enumerate() {
                let p = cx.object(v, &index(&c.key("pairs"), i))?;
                let model = contacts::model_of(&cx, &p, base.model)?;
                contacts::check_keys(&cx, &p, model, &["materials"], &[])?;
                let mv = p.req("materials")?;
                let mp = p.key("materials");
                let names = match mv {
                    Value::Array(a) if a.len() == 2 => a,
                    _ => return Err(cx.err(&mp, format!("expected an array of 2 material names, got {}", show(mv)))),
                };
                let mut ids = [0u32; 2];
                for k in 0..2 {
                    let kp = index(&mp, k);
                    ids[k] = lookup_material(&cx, &materials, cx.string(&names[k], &kp)?, &kp)?;
                }
                let (a, b) = (ids[0].min(ids[1]), ids[0].max(ids[1]));
                if let Some(j) = pair_entries.iter().position(|e| e.0 == a && e.1 == b) {
                    return Err(cx.err(
                        &mp,
                        format!(
                            "pair {} is already given by {}",
                            show(mv),
                            pair_entries[j].2.path
                        ),
                    ));
                }
                pair_entries.push((a, b, p, model));
            }
        }
    }
    // every pair's contacts book their work unless the scene turns energy tracking off
    let energy_tracking = match top.get("energy_tracking") {
        Some(v) => contacts::switch(&cx, v, "energy_tracking")?,
        None => true,
    };
    let nm = materials.len();
    let mut entries = vec![PairParams::default(); nm * nm];
    for a in 0..nm {
        for b in a..nm {
            let mut pp = inherit(&materials[a], &materials[b], base);
            let mut path = "contacts.default".to_string();
            if let Some(e) = pair_entries.iter().find(|e| e.0 as usize == a && e.1 as usize == b) {
                contacts::apply_pair_keys(&cx, &e.2, &mut pp, e.3)?;
                path = e.2.path.clone();
            }
            contacts::check_resolved(&cx, &pp, &path)?;
            pp.energy_tracking = energy_tracking;
            entries[a * nm + b] = pp.prepared();
            entries[b * nm + a] = pp.prepared();
        }
    }
    let pairs = PairTable { n_materials: nm, entries };

    // ---- clump templates ----
    let mut input_files = Vec::new();
    let clump_templates = match top.array_opt("clump_templates")? {
        Some(list) => clump::templates(&cx, list, "clump_templates", &materials, &mut input_files)?,
        None => Vec::new(),
    };

    // ---- walls ----
    let mut walls = Vec::new();
    let mut meshes = Vec::new();
    let mut wall_boxes: Vec<Aabb> = Vec::new();
    // (the mesh files go into `input_files` after the initial state's file)
    let mut mesh_files = Vec::new();
    let mut mesh_keys = Vec::new();
    if let Some(list) = top.array_opt("walls")? {
        for (i, v) in list.iter().enumerate() {
            let o = cx.object(v, &index("walls", i))?;
            let ty = cx.string(o.req("type")?, &o.key("type"))?;
            let name = o.str_opt("name")?.map(str::to_string).unwrap_or_else(|| format!("wall{i}"));
            match ty {
                "plane" => {
                    o.allow(PLANE_KEYS)?;
                    let point = o.vec3_req("point")?;
                    let n = o.vec3_req("normal")?;
                    let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
                    if len.is_nan() || len <= 1e-300 || !len.is_finite() {
                        return Err(cx.err(&o.key("normal"), format!("must be a non-zero vector, got {}", fmt_vec(n))));
                    }
                    let material = mat_ref(&o, "material")?;
                    let motion = motion::wall_motion(&o, point)?;
                    let load_point = o.vec3_opt("load_point")?.unwrap_or(point);
                    walls.push(Wall { name, point, normal: [n[0] / len, n[1] / len, n[2] / len], material, motion, load_point });
                }
                "box" => {
                    o.allow(BOX_KEYS)?;
                    let (min, max) = (o.vec3_req("min")?, o.vec3_req("max")?);
                    cx.ordered_box(min, max, &o.key("min"))?;
                    let material = mat_ref(&o, "material")?;
                    let center = std::array::from_fn(|k| 0.5 * (min[k] + max[k]));
                    let motion = motion::wall_motion(&o, center)?;
                    let load_point = o.vec3_opt("load_point")?.unwrap_or(center);
                    let mut open = [false; 6];
                    if let Some(list) = o.array_opt("open")? {
                        for (k, f) in list.iter().enumerate() {
                            let fp = index(&o.key("open"), k);
                            let f = cx.string(f, &fp)?;
                            match FACES.iter().position(|&x| x == f) {
                                Some(j) => open[j] = true,
                                None => {
                                    return Err(cx.err(
                                        &fp,
                                        format!("unknown face \"{f}\"{}; allowed: {}", did_you_mean(f, FACES), FACES.join(", ")),
                                    ))
                                }
                            }
                        }
                    }
                    for (j, face) in FACES.iter().enumerate() {
                        if open[j] {
                            continue;
                        }
                        let axis = j / 2;
                        let mut normal = [0.0; 3];
                        let mut point = min;
                        if j % 2 == 0 {
                            normal[axis] = 1.0; // the -x face at min.x faces +x, into the box
                        } else {
                            normal[axis] = -1.0;
                            point = max;
                        }
                        walls.push(Wall { name: format!("{name}{face}"), point, normal, material, motion: motion.clone(), load_point });
                    }
                    wall_boxes.push(Aabb { min, max });
                }
                "mesh" => {
                    o.allow(mesh::MESH_KEYS)?;
                    let material = mat_ref(&o, "material")?;
                    let wall = mesh::mesh_wall(&o, name, material)?;
                    mesh_keys.push(index("walls", i));
                    mesh_files.push(wall.mesh.source.clone());
                    let (min, max) = mesh::bounds(&wall.mesh);
                    wall_boxes.push(Aabb { min, max });
                    meshes.push(wall);
                    if let Err(e) = mesh_group_bases(&meshes) {
                        return Err(cx.err(&index("walls", i), e.to_string()));
                    }
                }
                other => {
                    return Err(cx.err(
                        &o.key("type"),
                        format!("unknown wall type \"{other}\"{}; allowed: plane, box, mesh", did_you_mean(other, ["plane", "box", "mesh"])),
                    ))
                }
            }
        }
    }

    let wall_grids = geometry::grids(&meshes)?;
    let obstacles = geometry::Obstacles::new(&walls, &meshes, &wall_grids);

    // ---- explicit particles ----
    let mut particles = Particles::default();
    let mut clump_runs = Vec::new();
    let mut grid = Grid::new();
    let mut sources = Sources::default();
    sources.begin(0, None);
    let mut saved_contacts = None;
    if let Some(o) = top.obj_opt("initial_state")? {
        o.allow(INITIAL_STATE_KEYS)?;
        let format = cx.string(o.req("format")?, &o.key("format"))?;
        if !["lammps_data", "vtu", "checkpoint"].contains(&format) {
            return Err(cx.err(&o.key("format"), format!("unknown format \"{format}\"{}; allowed: lammps_data, vtu, checkpoint", did_you_mean(format, ["lammps_data", "vtu", "checkpoint"]))));
        }
        let file = cx.string(o.req("file")?, &o.key("file"))?;
        let path = mesh::resolve(cx.file, file);
        match format {
            "vtu" => vtu_state::read(&cx, &o.key("file"), &path, mat_ref(&o, "material")?, &mut particles)?,
            "lammps_data" => {
                let m = mat_ref(&o, "material")?;
                lammps_data::read(&cx, &o.key("file"), &path, m, materials[m as usize].density, &mut particles)?
            }
            _ => {
                let m = o.get("material").map(|_| mat_ref(&o, "material")).transpose()?;
                saved_contacts = Some(checkpoint_state::read(&cx, &o.key("file"), &path, m, &materials, &mut particles)?);
            }
        }
        input_files.push(path);
    }
    input_files.append(&mut mesh_files);
    if let Some(list) = top.array_opt("particles")? {
        let mut parsed = Vec::with_capacity(list.len());
        for (i, v) in list.iter().enumerate() {
            let o = cx.object(v, &index("particles", i))?;
            o.allow(PARTICLE_KEYS)?;
            let x = o.vec3_req("position")?;
            let r = cx.positive(o.f64_req("radius")?, &o.key("radius"))?;
            let vel = o.vec3_opt("velocity")?.unwrap_or([0.0; 3]);
            let w = o.vec3_opt("angular_velocity")?.unwrap_or([0.0; 3]);
            let m = mat_ref(&o, "material")?;
            parsed.push((x, vel, w, r, m));
        }
        let r_max = parsed.iter().map(|p| p.3).fold(0.0, f64::max);
        grid.prepare(&particles, r_max);
        for (i, (x, vel, w, r, m)) in parsed.into_iter().enumerate() {
            if let Some(j) = grid.overlap(&particles, x, r) {
                let y = particles.position[j];
                let d = ((x[0] - y[0]).powi(2) + (x[1] - y[1]).powi(2) + (x[2] - y[2]).powi(2)).sqrt();
                return Err(cx.err(
                    &index("particles", i),
                    format!(
                        "overlaps particles[{j}]: centre distance {} < sum of radii {} (positions {} and {})",
                        fmt_num(d),
                        fmt_num(r + particles.radius[j]),
                        fmt_vec(x),
                        fmt_vec(y)
                    ),
                ));
            }
            if let Some(hit) = obstacles.cut(x, r) {
                let key = index("particles", i);
                let fix = format!("move {key}.position to at least its radius {} m in front of it, or shrink the radius", fmt_num(r));
                return Err(geometry::cut_error(&cx, &key, &obstacles, &hit, &key, x, r, &fix));
            }
            particles.push(x, vel, w, r, m);
            grid.sync(&particles);
        }
    }

    // ---- generators ----
    if let Some(list) = top.array_opt("generators")? {
        for (g, v) in list.iter().enumerate() {
            let path = index("generators", g);
            let o = cx.object(v, &path)?;
            let ty = o.req("type")?;
            let ty = cx.string(ty, &o.key("type"))?;
            let clump = o.str_opt("clump")?;
            let keys = match ty {
                "lattice" if clump.is_some() => CLUMP_LATTICE_KEYS,
                "random_fill" if clump.is_some() => CLUMP_RANDOM_FILL_KEYS,
                "lattice" => LATTICE_KEYS,
                "random_fill" => RANDOM_FILL_KEYS,
                other => {
                    return Err(cx.err(
                        &o.key("type"),
                        format!("unknown generator type \"{other}\"{}; allowed: lattice, random_fill", did_you_mean(other, ["lattice", "random_fill"])),
                    ))
                }
            };
            o.allow(keys)?;
            if let Some(name) = clump {
                let Some(t) = clump_templates.iter().position(|t| t.name == name) else {
                    let known: Vec<&str> = clump_templates.iter().map(|t| t.name.as_str()).collect();
                    return Err(cx.err(&o.key("clump"), format!("no clump template named \"{name}\"{} (clump_templates has: {})", did_you_mean(name, clump_templates.iter().map(|t| t.name.as_str())), if known.is_empty() { "none".to_string() } else { known.join(", ") })));
                };
                let scale = match o.get("scale") {
                    Some(v) => RadiusDist::parse(&cx, v, &o.key("scale"))?,
                    None => RadiusDist::Monodisperse(1.0),
                };
                let orientation = match o.str_opt("orientation")? {
                    None | Some("random") => clump_place::Orientation::Random,
                    Some("template") => clump_place::Orientation::Template,
                    Some(other) => return Err(cx.err(&o.key("orientation"), format!("unknown orientation \"{other}\"{}; allowed: random, template", did_you_mean(other, ["random", "template"])))),
                };
                let cg = clump_place::ClumpGen { template: &clump_templates[t], template_index: t as u32, scale, orientation, velocity: o.vec3_opt("velocity")?.unwrap_or([0.0; 3]), seed: o.u64_opt("seed")?.unwrap_or(1) };
                sources.begin(particles.len(), Some(g));
                if ty == "lattice" {
                    let origin = o.vec3_req("origin")?;
                    let count = lattice_count(&cx, &o)?;
                    let spacing = cx.positive(o.f64_req("spacing")?, &o.key("spacing"))?;
                    clump_place::lattice(&cx, &path, origin, count, spacing, &cg, &mut particles, &mut clump_runs, &mut grid, &sources, &obstacles)?;
                } else {
                    let (min, max, count) = fill_box(&cx, &o)?;
                    clump_place::random_fill(&cx, &path, min, max, count, &cg, &mut particles, &mut clump_runs, &mut grid, &obstacles)?;
                }
                continue;
            }
            let common = Common {
                radius: RadiusDist::parse(&cx, o.req("radius")?, &o.key("radius"))?,
                material: mat_ref(&o, "material")?,
                velocity: o.vec3_opt("velocity")?.unwrap_or([0.0; 3]),
                angular_velocity: o.vec3_opt("angular_velocity")?.unwrap_or([0.0; 3]),
                seed: o.u64_opt("seed")?.unwrap_or(1),
            };
            sources.begin(particles.len(), Some(g));
            if ty == "lattice" {
                let origin = o.vec3_req("origin")?;
                let count = lattice_count(&cx, &o)?;
                let spacing = cx.positive(o.f64_req("spacing")?, &o.key("spacing"))?;
                let jitter = match o.f64_opt("jitter")? {
                    Some(j) => cx.non_negative(j, &o.key("jitter"))?,
                    None => 0.0,
                };
                generate::lattice(&cx, &path, origin, count, spacing, jitter, &common, &mut particles, &mut grid, &sources, &obstacles)?;
            } else {
                let (min, max, count) = fill_box(&cx, &o)?;
                generate::random_fill(&cx, &path, min, max, count, &common, &mut particles, &mut grid, &obstacles)?;
            }
        }
    }
    drop(grid);
    drop(obstacles);
    // insertions are parsed before the body table: an insertion of clumps makes every
    // particle a body from the start
    let (inserts, outlets) = flow::parse(&top, mat_ref, &clump_templates)?;
    let clumps_inserted = inserts.iter().any(|s| s.clump.is_some());
    if meshes.iter().any(|m| !m.mesh.two_sided) {
        // where the particles are: up to 256 centres and the insertion regions' centres
        let stride = particles.len().div_ceil(256).max(1);
        let mut at: Vec<glam::DVec3> = particles.position.iter().step_by(stride).map(|&x| glam::DVec3::from(x)).collect();
        at.extend(inserts.iter().map(|s| {
            let (lo, hi) = s.region.bounds();
            0.5 * (lo + hi)
        }));
        for w in geometry::winding_warnings(&cx, &meshes, &mesh_keys, &at) {
            warn(&w);
        }
    }
    let mut bodies = clump_place::bodies(&particles, &clump_runs, &clump_templates, |m| materials[m as usize].density, clumps_inserted);
    if let Some(saved) = saved_contacts.as_mut().filter(|s| !s.bodies.is_empty()) {
        if saved.bodies.body_of.len() != particles.len() {
            return Err(cx.err("initial_state", format!("the checkpoint holds {} rigid bodies; a scene that starts from it may not add particles ({} added)", saved.bodies.len(), particles.len() - saved.bodies.body_of.len())));
        }
        bodies = std::mem::take(&mut saved.bodies);
    }
    if particles.is_empty() && inserts.is_empty() {
        return Err(cx.err("particles", "the scene has no particles (no explicit particles, no generators and no insert)"));
    }

    // ---- domain ----
    let r_max = particles.radius.iter().cloned().chain(inserts.iter().map(|s| s.radius.max())).fold(0.0, f64::max);
    for s in &inserts {
        let (min, max) = s.region.bounds();
        wall_boxes.push(Aabb { min: min.to_array(), max: max.to_array() });
    }
    let mut periodic = [false; 3];
    let explicit_domain = top.get("domain").is_some();
    let domain = match top.obj_opt("domain")? {
        Some(d) => {
            d.allow(DOMAIN_KEYS)?;
            let (min, max) = (d.vec3_req("min")?, d.vec3_req("max")?);
            cx.ordered_box(min, max, &d.key("min"))?;
            let domain = Aabb { min, max };
            if let Some(list) = d.array_opt("periodic")? {
                let max_rgap = crate::contact::adhesion::max_reach_gap(&pairs.entries, r_max);
                periodic = periodic_axes(&cx, list, &d.key("periodic"), &domain, &particles, 2.0 * r_max + max_rgap)?;
            }
            domain
        }
        None => {
            let mut min = [f64::INFINITY; 3];
            let mut max = [f64::NEG_INFINITY; 3];
            for (x, r) in particles.position.iter().zip(&particles.radius) {
                for k in 0..3 {
                    min[k] = min[k].min(x[k] - r);
                    max[k] = max[k].max(x[k] + r);
                }
            }
            for b in &wall_boxes {
                for k in 0..3 {
                    min[k] = min[k].min(b.min[k]);
                    max[k] = max[k].max(b.max[k]);
                }
            }
            for k in 0..3 {
                min[k] -= 2.0 * r_max;
                max[k] += 2.0 * r_max;
            }
            Aabb { min, max }
        }
    };

    // ---- time step, steps, output ----
    let (dt, dt_choice) = match explicit_dt {
        Some(dt) => (dt, TimeStepChoice::Explicit),
        None => {
            let mut used = vec![false; materials.len()];
            for &m in particles.material.iter().chain(inserts.iter().map(|s| &s.material)) {
                used[m as usize] = true;
            }
            let r_min = particles.radius.iter().cloned().chain(inserts.iter().map(|s| s.radius.min())).fold(f64::INFINITY, f64::min);
            let rayleigh =
                rayleigh_time_step(materials.iter().zip(&used).filter(|(_, &u)| u).map(|(m, _)| m), r_min);
            (fraction * rayleigh, TimeStepChoice::Auto { fraction, rayleigh })
        }
    };
    let steps = match length {
        Length::Steps(n) => n,
        Length::Duration(d) => {
            let x = d / dt;
            if x > 1e13 {
                return Err(cx.err(
                    "duration",
                    format!("duration {} at time step {} s needs {} steps, too many", fmt_num(d), fmt_num(dt), fmt_num(x)),
                ));
            }
            let n = x.round();
            let n = if (x - n).abs() <= 1e-9 * n.max(1.0) { n } else { x.ceil() };
            (n as u64).max(1)
        }
    };
    let cadence = output_cadence(
        match output {
            Output::Default => OutputAsked::Default,
            Output::Every(n) => OutputAsked::Steps(n),
            Output::Interval(t) => OutputAsked::Interval(t),
        },
        match length {
            Length::Steps(_) => None,
            Length::Duration(d) => Some(d),
        },
        steps,
        dt,
    );
    let (output_every, steps) = (cadence.every, cadence.steps);
    let notes: Vec<String> = cadence.note.into_iter().collect();

    let measures = match top.array_opt("measure")? {
        Some(list) => measure::measures(&cx, list, gravity, &outlets)?,
        None => Vec::new(),
    };

    let skin = match top.get("skin") {
        Some(v) => {
            let x = cx.number(v, "skin")?;
            if !(x >= 0.0) || !x.is_finite() {
                return Err(cx.err("skin", format!("must be a finite length >= 0 m, got {}", show(v))));
            }
            Some(x)
        }
        None => None,
    };

    // the brick of MPI subdomains (`cpu::decomposed`; checked against the rank count there)
    let mut balance = false;
    let bricks = match top.obj_opt("decomposition")? {
        None => None,
        Some(o) => {
            o.allow(DECOMPOSITION_KEYS)?;
            balance = match o.str_opt("balance")? {
                None | Some("none") => false,
                Some("shift") => true,
                Some(other) => return Err(cx.err(&o.key("balance"), format!("unknown balance \"{other}\"{}; allowed: none, shift", did_you_mean(other, ["none", "shift"])))),
            };
            match o.get("bricks") {
                None => None,
                Some(v) => {
                    let key = o.key("bricks");
                    let a = cx.array(v, &key)?;
                    if a.len() != 3 {
                        return Err(cx.err(&key, format!("must be 3 counts [px, py, pz] (bricks along x, y, z), got {}", show(v))));
                    }
                    let mut d = [0u32; 3];
                    for (k, x) in a.iter().enumerate() {
                        let n = cx.uint(x, &format!("{key}[{k}]"))?;
                        if n == 0 || n > 1 << 20 {
                            return Err(cx.err(&format!("{key}[{k}]"), format!("must be a count of bricks from 1 to 2^20, got {n}")));
                        }
                        d[k] = n as u32;
                    }
                    Some(d)
                }
            }
        }
    };

    let time_step_check = match top.get("time_step_check") {
        None => checks::TimeStepCheck::Error,
        Some(v) => match cx.string(v, "time_step_check")? {
            "error" => checks::TimeStepCheck::Error,
            "warn" => checks::TimeStepCheck::Warn,
            other => return Err(cx.err("time_step_check", format!("unknown value \"{other}\"{}; allowed: error, warn", did_you_mean(other, ["error", "warn"])))),
        },
    };
    let lost_particles = match top.get("lost_particles") {
        None => LostParticles::Error,
        Some(v) => match cx.string(v, "lost_particles")? {
            "error" => LostParticles::Error,
            "remove" => LostParticles::Remove,
            other => return Err(cx.err("lost_particles", format!("unknown value \"{other}\"{}; allowed: error, remove", did_you_mean(other, ["error", "remove"])))),
        },
    };
    let energy_drift = match top.f64_opt("energy_drift")? {
        None => crate::model::checks::ENERGY_DRIFT_DEFAULT,
        Some(x) => cx.non_negative(x, "energy_drift")?,
    };
    // an explicit domain is the region particles must stay in; a derived one behaves like a
    // shrink-wrapped box: only a particle 10 extents away from it is lost
    let largest_extent = (0..3).map(|a| domain.max[a] - domain.min[a]).fold(0.0, f64::max);
    let lost_margin = if explicit_domain { 0.0 } else { LOST_MARGIN_EXTENTS * largest_extent };

    let initial_contacts = match saved_contacts {
        Some(saved) => saved.for_walls(&walls, &meshes).map_err(|e| cx.err("initial_state", e.to_string()))?,
        None => Vec::new(),
    };
    let name = source.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "scene".to_string());
    let setup = Setup {
        name,
        source: source.to_path_buf(),
        gravity,
        dt,
        dt_choice,
        steps,
        output_every,
        snapshot_every,
        materials,
        pairs,
        particles,
        walls,
        meshes,
        domain,
        periodic,
        inserts,
        outlets,
        measures,
        skin,
        bricks,
        balance,
        checks: RunChecks { lost_particles, lost_margin: Some(lost_margin), energy_drift: Some(energy_drift) },
        until_rest,
        checkpoint_every,
        initial_contacts,
        input_files,
        bodies,
        clump_templates,
        notes,
    };
    checks::check_ranges(&cx, &setup)?;
    if explicit_domain {
        let (lo, hi) = (glam::DVec3::from(setup.domain.min), glam::DVec3::from(setup.domain.max));
        for (i, x) in setup.particles.position.iter().enumerate() {
            if crate::model::checks::outside(glam::DVec3::from(*x), lo, hi, 0.0, setup.periodic) {
                return Err(cx.err(
                    &sources.key(i),
                    format!("{}starts at {} outside the domain [{}, {}]", Some(sources.label(i)).filter(|l| *l != sources.key(i)).map(|l| l + " ").unwrap_or_default(), fmt_vec(*x), fmt_vec(setup.domain.min), fmt_vec(setup.domain.max)),
                ));
            }
        }
    }
    for w in checks::check_time_step(&cx, &setup, time_step_check)? {
        warn(&w);
    }
    Ok(setup)
}

/// The output cadence a scene asks for: the default (`steps / 100`), `every_steps`, or
/// `interval` (s).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OutputAsked {
    Default,
    Steps(u64),
    Interval(f64),
}

/// The output cadence of a run and its length in steps (`Setup::output_every`, `Setup::steps`).
#[derive(Clone, Debug, PartialEq)]
pub struct Cadence {
    /// Steps between outputs.
    pub every: u64,
    /// Steps the run takes: a whole number of outputs.
    pub steps: u64,
    /// What was snapped, to say at the start of the run (`Setup::notes`); `None` where the
    /// scene's numbers were whole already.
    pub note: Option<String>,
}

/// Output times fall on the cadence (docs/output.md, "Output cadence"): an `interval` that is
/// not a whole number of time steps `dt` is snapped to the nearest whole number (at least 1),
/// and a length of `steps` (from `duration` when given, else the scene's `steps`) that is not a
/// whole number of outputs is snapped to the nearest whole number of outputs (at least one), so
/// that no last short batch adds a row (and snapshot) just after the one before. Either snap is
/// said in `note`.
pub fn output_cadence(asked: OutputAsked, duration: Option<f64>, steps: u64, dt: f64) -> Cadence {
    let sci = crate::error::fmt_sci;
    let mut said: Vec<String> = Vec::new();
    let every = match asked {
        OutputAsked::Default => (steps / 100).max(1),
        OutputAsked::Steps(n) => n.max(1),
        OutputAsked::Interval(t) => {
            let x = t / dt;
            let n = (x.round().min(1e15) as u64).max(1);
            if (x - n as f64).abs() > 1e-9 * x.max(1.0) {
                said.push(format!(
                    "output.interval {} s is {} time steps of {} s: snapped to {n} steps ({} s); every output time is a multiple of it",
                    fmt_num(t),
                    crate::error::fmt_sig(x, 7),
                    sci(dt),
                    crate::error::fmt_sig(n as f64 * dt, 7)
                ));
            }
            n
        }
    };
    let outputs = ((steps as f64 / every as f64).round() as u64).max(1);
    let snapped = outputs.saturating_mul(every);
    if snapped != steps {
        let asked = match duration {
            Some(d) => format!("duration {} s ({steps} steps)", fmt_num(d)),
            None => format!("steps {steps}"),
        };
        said.push(format!(
            "{asked} is not a whole number of outputs of {every} steps: the run ends at step {snapped} (t = {} s), after {outputs} outputs, the nearest whole number (--steps N runs exactly N)",
            sci(snapped as f64 * dt)
        ));
    }
    Cadence { every, steps: snapped, note: (!said.is_empty()).then(|| said.join("; ")) }
}

/// The part of a `Cadence` note that is about the run's length (it does not hold under
/// `--steps N`) starts with this.
pub const LENGTH_NOTE_MARK: &str = "(--steps N runs exactly N)";

/// The notes of `setup` to say at the start of a run of `steps` steps (`None`: the scene's):
/// under `--steps` the part about where the scene's run ends is left out.
pub fn start_notes(setup: &Setup, steps: Option<u64>) -> Vec<String> {
    setup
        .notes
        .iter()
        .filter_map(|n| match steps {
            None => Some(n.clone()),
            Some(_) => {
                let kept: Vec<&str> = n.split("; ").filter(|p| !p.ends_with(LENGTH_NOTE_MARK)).collect();
                (!kept.is_empty()).then(|| kept.join("; "))
            }
        })
        .collect()
}

/// A particle farther than this many of the largest domain extents outside a domain the loader
/// derived from the scene's contents is lost.
pub const LOST_MARGIN_EXTENTS: f64 = 10.0;

/// `domain.periodic`: axis names ("x", "y", "z"). Each period must hold at least 3 grid cells
/// of the largest interaction distance `reach` (so the 27 neighbour cells are distinct), and
/// every particle must start inside [min, max) on a periodic axis.
fn periodic_axes(cx: &Cx, list: &[Value], path: &str, domain: &Aabb, particles: &Particles, reach: f64) -> Result<[bool; 3]> {
    const AXES: [&str; 3] = ["x", "y", "z"];
    let mut periodic = [false; 3];
    for (k, v) in list.iter().enumerate() {
        let p = index(path, k);
        let name = cx.string(v, &p)?;
        let Some(a) = AXES.iter().position(|&x| x == name) else {
            return Err(cx.err(&p, format!("unknown axis \"{name}\"; allowed: x, y, z")));
        };
        if periodic[a] {
            return Err(cx.err(&p, format!("axis \"{name}\" listed twice")));
        }
        let period = domain.max[a] - domain.min[a];
        if period < 3.0 * reach {
            return Err(cx.err(
                &p,
                format!("period {} m on {name} is shorter than 3 neighbour cells (3 × {} m, twice the largest radius plus the largest positive rgap)", fmt_num(period), fmt_num(reach)),
            ));
        }
        for (i, x) in particles.position.iter().enumerate() {
            if x[a] < domain.min[a] || x[a] >= domain.max[a] {
                return Err(cx.err(
                    &p,
                    format!("particle {i} starts at {name} = {} outside the periodic range [{}, {})", fmt_num(x[a]), fmt_num(domain.min[a]), fmt_num(domain.max[a])),
                ));
            }
        }
        periodic[a] = true;
    }
    Ok(periodic)
}

pub(crate) fn check_poisson(cx: &Cx, x: f64, path: &str) -> Result<f64> {
    cx.in_half_open(x, -1.0, 0.5, path)
}

fn lookup_material(cx: &Cx, materials: &[Material], name: &str, path: &str) -> Result<u32> {
    match materials.iter().position(|m| m.name == name) {
        Some(i) => Ok(i as u32),
        None => {
            let names: Vec<&str> = materials.iter().map(|m| m.name.as_str()).collect();
            Err(cx.err(path, format!("unknown material \"{name}\"{}; defined materials: {}", did_you_mean(name, names.iter().copied()), names.join(", "))))
        }
    }
}

/// The `material` key of a particle, generator or wall; optional when exactly one material
/// is defined.
fn material_ref(cx: &Cx, materials: &[Material], o: &Obj, k: &str) -> Result<u32> {
    match o.get(k) {
        Some(v) => lookup_material(cx, materials, cx.string(v, &o.key(k))?, &o.key(k)),
        None if materials.len() == 1 => Ok(0),
        None => Err(cx.err(&o.key(k), "missing required key (required when more than one material is defined)")),
    }
}

/// An integer mode in 0..=max.
pub(crate) fn mode(cx: &Cx, v: &Value, path: &str, max: u32) -> Result<u32> {
    let allowed: Vec<String> = (0..=max).map(|m| m.to_string()).collect();
    let bad = || cx.err(path, format!("must be one of {}, got {}", allowed.join(", "), show(v)));
    if !v.is_number() {
        return Err(cx.err(path, format!("expected an integer mode ({}), got {}", allowed.join(", "), show(v))));
    }
    let n = cx.uint(v, path).map_err(|_| bad())?;
    if n > max as u64 {
        return Err(bad());
    }
    Ok(n as u32)
}

/// A lattice generator's `count`: three integers ≥ 1.
fn lattice_count(cx: &Cx, o: &Obj) -> Result<[u64; 3]> {
    let cv = o.req("count")?;
    let cp = o.key("count");
    let ca = match cv {
        Value::Array(a) if a.len() == 3 => a,
        _ => return Err(cx.err(&cp, format!("expected an array of 3 positive integers, got {}", show(cv)))),
    };
    let mut count = [0u64; 3];
    for k in 0..3 {
        count[k] = cx.uint(&ca[k], &index(&cp, k))?;
        if count[k] == 0 {
            return Err(cx.err(&index(&cp, k), "must be >= 1, got 0"));
        }
    }
    Ok(count)
}

/// A random fill's `box` (min, max) and `count` (≥ 1).
fn fill_box(cx: &Cx, o: &Obj) -> Result<([f64; 3], [f64; 3], u64)> {
    let b = o.obj_req("box")?;
    b.allow(&["min", "max"])?;
    let (min, max) = (b.vec3_req("min")?, b.vec3_req("max")?);
    cx.ordered_box(min, max, &b.key("min"))?;
    let count = cx.uint(o.req("count")?, &o.key("count"))?;
    if count == 0 {
        return Err(cx.err(&o.key("count"), "must be >= 1, got 0"));
    }
    Ok((min, max, count))
}

/// Whether this process keeps the scene's warnings to itself: the ranks other than 0 of a run
/// under `mpirun`, which read the same scene as rank 0 (`quiet_warnings`).
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// From now on this process prints no scene warnings (rank 0 prints them for all ranks).
pub fn quiet_warnings() {
    QUIET.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// A warning about the scene, on standard error.
fn warn(w: &str) {
    if !QUIET.load(std::sync::atomic::Ordering::Relaxed) {
        eprintln!("talus: {w}");
    }
}
