//! Throughput benchmark: a box of N polydisperse particles settling under gravity.
//!
//! The set-up is built as scene JSON and parsed by `scene::parse_str`, so the particle generator
//! is the scene loader's (one implementation). `talus bench` and `benches/throughput.rs` call
//! `bench`.
//!
//! Memory-traffic model (bytes moved per particle-step and per contact-step): the GPU backend
//! reports its own (`GpuBackend::traffic_model`, f32 buffers); for the CPU backend it is
//! `cpu_traffic_model` below, counted from the f64 state arrays each step touches.
//! Both are models (every array element read or written once per pass), not measurements.

use std::fmt;
use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use crate::backend::Backend;
use crate::contact::params::{Adhesion, ContactModel};
use crate::cpu::CpuBackend;
use crate::error::{Result, TalusError};
use crate::gpu::{GpuBackend, GpuOptions};
use crate::run::{AutoPick, BackendChoice};
use crate::setup::Setup;

/// Smallest and largest particle radius, m (uniform distribution).
pub const RADIUS_RANGE: (f64, f64) = (1.0e-3, 1.5e-3);
/// Initial solid fraction of the random fill (below the ≈ 0.38 jamming limit of random
/// sequential addition, so the non-overlapping fill is quick). Particles start at 0.5 m/s downward.
pub const FILL_FRACTION: f64 = 0.35;

/// The most of the room left to the particles' centres (the fill box less a largest radius at
/// every face) that the bench settling box's solid takes (`bench_scene_json`).
pub const CENTRE_FILL_MAX: f64 = 0.55;

/// Scene JSON for a settling box of `particles` particles (see `bench_setup`).
pub fn bench_scene_json(particles: usize, seed: u64, model: ContactModel) -> String {
    settling_json(particles, seed, model_contacts(model))
}

/// The settling box's scene JSON with `contacts.default` = `contacts`.
fn settling_json(particles: usize, seed: u64, contacts: serde_json::Value) -> String {
    let (r0, r1) = RADIUS_RANGE;
    // Mean particle volume for r ~ U(r0, r1): 4/3 π E[r³], E[r³] = (r1⁴ − r0⁴) / (4 (r1 − r0)).
    let mean_r3 = (r1.powi(4) - r0.powi(4)) / (4.0 * (r1 - r0));
    let solid = particles.max(1) as f64 * 4.0 / 3.0 * std::f64::consts::PI * mean_r3;
    // Fill region: square base of side w, height 2 w.
    let mut w = (solid / FILL_FRACTION / 2.0).cbrt().max(4.0 * r1);
    // A small box leaves the centres little room (they keep r from its faces): widened until
    // the solid fills at most CENTRE_FILL_MAX of the room its centres have, so a random fill
    // places every particle (a bench of 100 did not fit; from about 500 up the box is as before).
    let room = |w: f64| (w - 2.0 * r1).max(0.0).powi(2) * (2.0 * w - 2.0 * r1).max(0.0);
    while solid > CENTRE_FILL_MAX * room(w) {
        w *= 1.02;
    }
    let h = 2.0 * w;
    serde_json::json!({
        "description": "talus bench: polydisperse particles settling in a box open at +z",
        "gravity": [0.0, 0.0, -9.81],
        "time_step": "auto",
        "time_step_fraction": 0.2,
        "steps": 1000,
        "output": { "every_steps": 100 },
        "snapshot_every": 0,
        "materials": {
            "glass": { "density": 2500.0, "hz_shear": 5.0e7, "hz_poiss": 0.3, "fric": 0.5 }
        },
        "contacts": { "default": contacts },
        "generators": [
            {
                "type": "random_fill",
                "box": { "min": [0.0, 0.0, 0.0], "max": [w, w, h] },
                "count": particles,
                "radius": { "distribution": "uniform", "min": r0, "max": r1 },
                "material": "glass",
                "velocity": [0.0, 0.0, -0.5],
                "seed": seed
            }
        ],
        "walls": [
            { "type": "box", "name": "bin", "min": [0.0, 0.0, 0.0], "max": [w, w, 1.5 * h], "material": "glass", "open": ["+z"] }
        ]
    })
    .to_string()
}

/// Which bench scene.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Packing {
    /// Particles falling into a box (`bench_scene_json`): few contacts, measures the
    /// per-particle cost (integration, grid, neighbour search).
    Settling,
    /// A packed bed (`bed_setup`): every particle in contact with about half of its six
    /// lattice neighbours, so the contact models dominate.
    Bed,
    /// Rigid clumps (`clump_setup`): four-sphere tablets falling from a lattice into a box;
    /// `particles` counts component spheres, so particle-steps are component-steps.
    Clumps,
    /// A rotating drum (`drum_setup`): a triangle-mesh cylinder turning about its axis, its
    /// lower half packed as the bed is: the moving-mesh contact path at scale.
    Drum,
}

impl Packing {
    pub fn name(self) -> &'static str {
        match self {
            Packing::Settling => "settling",
            Packing::Bed => "bed",
            Packing::Clumps => "clumps",
            Packing::Drum => "drum",
        }
    }
}

impl std::str::FromStr for Packing {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "settling" => Ok(Packing::Settling),
            "bed" => Ok(Packing::Bed),
            "clumps" => Ok(Packing::Clumps),
            "drum" => Ok(Packing::Drum),
            _ => Err(format!("unknown packing `{s}`; use settling, bed, clumps or drum")),
        }
    }
}

/// How the bench scene numbers its particles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ids {
    /// In the order the generator places them (the bed and the settling box: row by row).
    Placed,
    /// Shuffled (`shuffle_ids`, a fixed seed): neighbours in space scattered in id order, as in
    /// a poured or randomly filled scene; what the GPU's cell order and force-pass schedule are
    /// for. Clumps are shuffled body by body.
    Shuffled,
}

impl std::str::FromStr for Ids {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "placed" => Ok(Ids::Placed),
            "shuffled" => Ok(Ids::Shuffled),
            _ => Err(format!("unknown id order `{s}`; use placed or shuffled")),
        }
    }
}

/// The seed of `--ids shuffled` (the one `benches/gpu_schedule.rs` and `tests/gpu_order.rs` use).
pub const SHUFFLE_SEED: u64 = 0x9e37_79b9_7f4a_7c15;

/// Spheres of the bench's clump template: four spheres of radius 1 mm, 1 mm apart in a line
/// (a 5 mm tablet, 2 mm wide; bounding radius 2.5 mm).
pub const CLUMP_SPHERES: [[f64; 4]; 4] = [[-0.0015, 0.0, 0.0, 0.001], [-0.0005, 0.0, 0.0, 0.001], [0.0005, 0.0, 0.0, 0.001], [0.0015, 0.0, 0.0, 0.001]];

/// About `particles` component spheres in four-sphere tablets (`CLUMP_SPHERES`, random
/// orientations) on a lattice of spacing 5.1 mm (just apart) in a box open at +z, falling
/// under gravity with the damping of `model_contacts`: they land and pile up, so the timed
/// steps see both free bodies and contacts.
pub fn clump_setup(particles: usize, model: ContactModel) -> Setup {
    clumps_with(particles, model_contacts(model)).unwrap_or_else(|e| panic!("{e}"))
}

/// `clump_setup` with `contacts.default` = `contacts`; the scene's own error where the contacts
/// are refused (e.g. JKR without `hertz_mindlin`).
fn clumps_with(particles: usize, contacts: serde_json::Value) -> Result<Setup> {
    let bodies = particles.max(4) / 4;
    let nx = ((bodies as f64).cbrt().round() as usize).max(1);
    let nz = bodies.div_ceil(nx * nx);
    let s = 5.1e-3;
    let w = nx as f64 * s;
    let text = serde_json::json!({
        "description": "talus bench: rigid four-sphere tablets falling into a box",
        "gravity": [0.0, 0.0, -9.81],
        "time_step": "auto",
        "time_step_fraction": 0.2,
        "steps": 1000,
        "output": { "every_steps": 100 },
        "snapshot_every": 0,
        "materials": { "glass": { "density": 2500.0, "hz_shear": 5.0e7, "hz_poiss": 0.3, "fric": 0.5 } },
        "contacts": { "default": contacts },
        "clump_templates": [ { "name": "tablet", "material": "glass", "spheres": CLUMP_SPHERES } ],
        "generators": [ { "type": "lattice", "clump": "tablet", "origin": [0.5 * s, 0.5 * s, 0.5 * s], "count": [nx, nx, nz], "spacing": s, "velocity": [0.0, 0.0, -0.5], "seed": 1 } ],
        "walls": [ { "type": "box", "name": "bin", "min": [0.0, 0.0, 0.0], "max": [w, w, (nz as f64 + 2.0) * s], "material": "glass", "open": ["+z"] } ]
    })
    .to_string();
    crate::scene::parse_str(&text, Path::new("<bench>")).map_err(|e| TalusError::Other(format!("the clump bench scene cannot be made: {e}")))
}

/// Lattice spacing of the packed bed, m.
pub const BED_SPACING: f64 = 2.0e-3;

/// A packed bed of about `particles` particles: a cubic lattice of spacing `BED_SPACING` in a box
/// open at +z, radii uniform in [0.995, 1.0] mm, then all radii scaled by 1.0025 so that a
/// neighbour pair overlaps when r_i + r_j > spacing (about half of them, by at most 5 µm) and the
/// outer particles touch the walls. Gravity and the damping of `model_contacts` settle it.
pub fn bed_setup(particles: usize, model: ContactModel) -> Setup {
    bed_with(particles, model_contacts(model)).unwrap_or_else(|e| panic!("{e}"))
}

/// `bed_setup` with `contacts.default` = `contacts`; the scene's own error where the contacts are
/// refused.
fn bed_with(particles: usize, contacts: serde_json::Value) -> Result<Setup> {
    let nx = ((particles.max(1) as f64).cbrt().round() as usize).max(1);
    let nz = particles.max(1).div_ceil(nx * nx);
    let s = BED_SPACING;
    let text = serde_json::json!({
        "description": "talus bench: packed bed",
        "gravity": [0.0, 0.0, -9.81],
        "time_step": "auto",
        "time_step_fraction": 0.2,
        "steps": 1000,
        "output": { "every_steps": 100 },
        "snapshot_every": 0,
        "materials": {
            "glass": { "density": 2500.0, "hz_shear": 5.0e7, "hz_poiss": 0.3, "fric": 0.5 }
        },
        "contacts": { "default": contacts },
        "generators": [
            {
                "type": "lattice",
                "origin": [0.5 * s, 0.5 * s, 0.5 * s],
                "count": [nx, nx, nz],
                "spacing": s,
                "radius": { "distribution": "uniform", "min": 0.995e-3, "max": 1.0e-3 },
                "material": "glass",
                "seed": 1
            }
        ],
        "walls": [
            { "type": "box", "name": "bin", "min": [0.0, 0.0, 0.0], "max": [nx as f64 * s, nx as f64 * s, 2.0 * nz as f64 * s], "material": "glass", "open": ["+z"] }
        ]
    })
    .to_string();
    let mut setup = crate::scene::parse_str(&text, Path::new("<bench bed>")).map_err(|e| TalusError::Other(format!("the bench bed cannot be made: {e}")))?;
    for r in &mut setup.particles.radius {
        *r *= 1.0025;
    }
    Ok(setup)
}

/// Facet width of the bench drum's mesh, m: four lattice spacings around and along (a coarse
/// CAD drum beside 2 mm grains).
pub const DRUM_FACET: f64 = 4.0 * BED_SPACING;
/// The bench drum's turning speed, rad/s (a rolling regime at the drum sizes of 10k–10M grains).
pub const DRUM_OMEGA: f64 = 1.0;

/// About `particles` grains in a rotating drum: a closed cylinder mesh about z (radius R, length
/// R, facets `DRUM_FACET` wide, `generate::drum`) turning at `DRUM_OMEGA` rad/s, gravity −y, its
/// lower half (y < 0) filled with the bed's lattice and radii (`bed_with`): every lattice point
/// whose grain lies inside the drum, with half a spacing to spare. R is chosen so that the half
/// holds about `particles` grains. The grains start at rest and packed, so the timed steps see
/// the bed's contacts, and the ones next to the drum touch its turning mesh; every grain's
/// force pass searches the moving mesh (`mesh_ball`).
pub fn drum_setup(particles: usize, model: ContactModel) -> Setup {
    drum_with(particles, model_contacts(model)).unwrap_or_else(|e| panic!("{e}"))
}

/// `drum_setup` with `contacts.default` = `contacts`.
fn drum_with(particles: usize, contacts: serde_json::Value) -> Result<Setup> {
    use crate::mesh::{generate, TriangleMesh};
    use crate::motion::{Profile, WallMotion};
    use crate::setup::MeshWall;
    use glam::DVec3;
    let s = BED_SPACING;
    // the lower half of the cylinder of radius R and length R holds π R³ / 2 / s³ lattice points
    let n = particles.max(1) as f64;
    let radius = (s * (2.0 * n / std::f64::consts::PI).cbrt() + s).max(8.0 * s);
    let length = radius;
    let nx = (2.0 * radius / s).ceil() as usize;
    let nz = (length / s).ceil() as usize;
    let text = serde_json::json!({
        "description": "talus bench: a rotating drum, half full",
        "gravity": [0.0, -9.81, 0.0],
        "time_step": "auto",
        "time_step_fraction": 0.2,
        "steps": 1000,
        "output": { "every_steps": 100 },
        "snapshot_every": 0,
        "domain": { "min": [-radius, -radius, -0.5 * length], "max": [radius, radius, 0.5 * length] },
        "materials": {
            "glass": { "density": 2500.0, "hz_shear": 5.0e7, "hz_poiss": 0.3, "fric": 0.5 },
            "steel": { "density": 7800.0, "hz_shear": 8.0e10, "hz_poiss": 0.3, "fric": 0.4 }
        },
        "contacts": { "default": contacts },
        "generators": [
            {
                "type": "lattice",
                "origin": [-0.5 * nx as f64 * s + 0.5 * s, -radius + 0.5 * s, -0.5 * nz as f64 * s + 0.5 * s],
                "count": [nx, nx / 2, nz],
                "spacing": s,
                "radius": { "distribution": "uniform", "min": 0.995e-3, "max": 1.0e-3 },
                "material": "glass",
                "seed": 1
            }
        ]
    })
    .to_string();
    let mut setup = crate::scene::parse_str(&text, Path::new("<bench drum>")).map_err(|e| TalusError::Other(format!("the bench drum cannot be made: {e}")))?;
    // the grains inside the drum, half a spacing clear of its facets (chords of the circle)
    let inside = |x: &[f64; 3], r: f64| (x[0] * x[0] + x[1] * x[1]).sqrt() + r <= radius - 0.5 * s && x[2].abs() + r <= 0.5 * length - 0.5 * s && x[1] < 0.0;
    let p = std::mem::take(&mut setup.particles);
    for i in 0..p.len() {
        let r = p.radius[i] * 1.0025;
        if inside(&p.position[i], r) {
            setup.particles.push(p.position[i], p.velocity[i], p.angular_velocity[i], r, p.material[i]);
        }
    }
    let segments = ((std::f64::consts::TAU * radius / DRUM_FACET).ceil() as usize).max(16);
    let rings = ((length / DRUM_FACET).ceil() as usize).max(1);
    let mesh = TriangleMesh::new("<bench drum>", generate::drum(radius, length, segments, rings, true))?;
    let steel = setup.materials.iter().position(|m| m.name == "steel").expect("the drum's material") as u32;
    let motion = WallMotion { angular_speed: Profile::constant(DRUM_OMEGA), axis: DVec3::Z, center: DVec3::ZERO, ..WallMotion::default() };
    setup.meshes.push(MeshWall { motion, load_point: [0.0; 3], ..MeshWall::new("drum", mesh, steel) });
    Ok(setup)
}

/// `setup`'s particles renumbered by a seeded random permutation: neighbours in space get
/// scattered ids, as in a poured or randomly filled scene (the lattice generators number row by
/// row). Positions, velocities and the rest move with their particles. With rigid bodies the
/// bodies are shuffled, each keeping its components one run of ids in their order.
pub fn shuffle_ids(setup: &mut Setup, seed: u64) {
    use rand::seq::SliceRandom;
    use rand::SeedableRng;
    let p = &setup.particles;
    let b = &setup.bodies;
    let units = if b.is_empty() { p.len() } else { b.len() };
    let mut perm: Vec<usize> = (0..units).collect();
    perm.shuffle(&mut rand_pcg::Pcg64::seed_from_u64(seed));
    let mut shuffled = crate::setup::Particles::default();
    let mut bodies = crate::model::body::Bodies::default();
    for &u in &perm {
        let run = match b.is_empty() {
            true => u..u + 1,
            false => b.first[u] as usize..(b.first[u] + b.count[u]) as usize,
        };
        if !b.is_empty() {
            bodies.push(b.position[u], b.orientation[u], b.velocity[u], b.angular_momentum[u], b.mass[u], b.moments[u], b.template[u], shuffled.len() as u32, &b.offset[run.clone()]);
            let k = bodies.len() - 1;
            bodies.image[k] = b.image[u];
        }
        for i in run {
            shuffled.push(p.position[i], p.velocity[i], p.angular_velocity[i], p.radius[i], p.material[i]);
        }
    }
    setup.particles = shuffled;
    if !b.is_empty() {
        setup.bodies = bodies;
    }
}

/// `contacts.default` of the bench scene for `model`: comparable damping (restitution ≈ 0.5).
pub fn model_contacts(model: ContactModel) -> serde_json::Value {
    match model {
        ContactModel::Hertz => serde_json::json!({ "dp_nratio": 0.3, "dp_sratio": 0.3 }),
        ContactModel::Hysteretic => serde_json::json!({ "model": "hysteretic", "dp_en": 0.5 }),
        ContactModel::Hooke => serde_json::json!({ "model": "hooke", "characteristicVelocity": 1.0, "coefficientRestitution": 0.5 }),
        ContactModel::HertzMindlin => serde_json::json!({ "model": "hertz_mindlin", "coefficientRestitution": 0.5, "rolling_fric": 0.05 }),
        ContactModel::HertzViscous => serde_json::json!({ "model": "hertz_viscous", "coefficientRestitution": 0.5 }),
    }
}

/// `model_contacts(model)` with the adhesion part `adhesion` (`talus bench --adhesion`), its
/// parameters those of the shipped cohesive scenes: JKR and DMT γ = 0.05 J/m² (as
/// `cohesive_heap`), SJKR and SJKR2 k_c = 3e5 J/m³, liquid bridges of 1e-11 m³ of water
/// (γ_l = 0.072 N/m, θ = 0, as `wet_granules`). JKR and DMT need `hertz_mindlin`: with another
/// model the scene refuses them, as it does in a scene file.
pub fn bench_contacts(model: ContactModel, adhesion: Adhesion) -> serde_json::Value {
    let mut c = model_contacts(model);
    let part = match adhesion {
        Adhesion::None => return c,
        Adhesion::Jkr | Adhesion::Dmt => serde_json::json!({ "surface_energy": 0.05 }),
        Adhesion::Sjkr | Adhesion::Sjkr2 => serde_json::json!({ "cohesion_energy_density": 3.0e5 }),
        Adhesion::Capillary => serde_json::json!({ "liquid_volume": 1.0e-11, "surface_tension": 0.072, "contact_angle": 0.0 }),
    };
    let map = c.as_object_mut().expect("model_contacts is an object");
    map.insert("adhesion".into(), adhesion.name().into());
    map.extend(part.as_object().expect("an object").clone());
    c
}

/// A settling box of `particles` polydisperse particles (radius uniform 1–1.5 mm, random
/// non-overlapping fill at solid fraction `FILL_FRACTION`), soft glass-like material
/// (G = 50 MPa, as scenes/settle_box.json), gravity and dashpot damping (β = 0.3).
pub fn bench_setup(particles: usize, seed: u64, model: ContactModel) -> Setup {
    try_bench_setup(particles, seed, model).unwrap_or_else(|e| panic!("{e}"))
}

/// `bench_setup`, an error where the scene cannot be made.
pub fn try_bench_setup(particles: usize, seed: u64, model: ContactModel) -> Result<Setup> {
    settling_with(particles, seed, model_contacts(model))
}

/// The settling box with `contacts.default` = `contacts`; an error where it cannot be made.
fn settling_with(particles: usize, seed: u64, contacts: serde_json::Value) -> Result<Setup> {
    let text = settling_json(particles, seed, contacts);
    crate::scene::parse_str(&text, Path::new("<bench>")).map_err(|e| TalusError::Other(format!("the bench settling box of {particles} particles cannot be made: {e}")))
}

/// Memory traffic per step, bytes.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Traffic {
    pub bytes_per_particle_step: f64,
    pub bytes_per_contact_step: f64,
}

/// Traffic model of the f64 CPU backend (neighbour lists with a skin, pair-once forces,
/// `src/cpu/`), counting what a step between list builds touches.
///
/// Per particle and step: the force pass reads position and radius (32 B), the list offsets
/// (8 B) and writes the particle's own sums and work (`Owned`, 96 B); the fused gather, kick
/// and drift read and write position, velocity, angular velocity, force and torque (2 × 120 B),
/// read 1/m and 1/I (16 B), the own sums (48 B), the incoming offset (4 B) and the position at
/// the last build (24 B). Total 32 + 8 + 96 + 240 + 16 + 48 + 4 + 24 = 468 B.
///
/// Per contact and step: the owner reads the partner's position, velocity, angular velocity,
/// radius, mass and material (92 B) and its own velocity, angular velocity and mass (56 B),
/// the slot's partner and incoming position (8 B); reads and writes the slot's history
/// (2 × 56 B); writes the partner's share, which the gather reads (2 × 48 B); the pair
/// parameters stay in cache. Total 92 + 56 + 8 + 112 + 96 = 364 B. List builds (every
/// skin/2 of motion) are not counted.
pub fn cpu_traffic_model() -> Traffic {
    Traffic { bytes_per_particle_step: 468.0, bytes_per_contact_step: 364.0 }
}

/// Traffic model of the CPU backend's step of a scene with rigid bodies (`src/cpu/rigid.rs`),
/// per component-step, for bodies of `c` components on average:
///
/// * the force pass as for spheres (32 + 8 + 96 B);
/// * `place`: the component's id, body and offset (4 + 4 + 24 B), its body's centre, image,
///   orientation, velocity and ω (24 + 12 + 32 + 24 + 24 B, shared by its c components), and
///   writes position, velocity, spin and image (24 + 24 + 24 + 12 B);
/// * `gather_only`: the own sums (48 B), the incoming offset (4 B), writes force and torque
///   (48 B);
/// * `gather_kick`: per component its index (4 B), offset (24 B), force and torque (48 B); per
///   body its state and totals read and written (2 × (24 + 24 + 24 + 24 + 24) B) and its
///   moments, 1/M, first and count (24 + 8 + 8 B);
/// * `kick_drift`: per body centre, image, orientation, velocity, L, ω read and written
///   (2 × 140 B) and the totals, moments and 1/M read (48 + 24 + 8 B);
/// * `place_velocities`: id, body, offset (32 B), the body's v and ω (48 B / c), writes v and
///   spin (48 B).
///
/// Contacts as for spheres. List builds are not counted.
pub fn cpu_clump_traffic_model(setup: &Setup) -> Traffic {
    let c = setup.particles.len() as f64 / setup.bodies.len().max(1) as f64;
    let per_component = 136.0 + (32.0 + 116.0 / c + 84.0) + 100.0 + 76.0 + 280.0 / c + (360.0 + 80.0) / c + 80.0 + 48.0 / c;
    Traffic { bytes_per_particle_step: per_component, bytes_per_contact_step: 364.0 }
}

/// Result of one benchmark.
#[derive(Clone, Debug, Serialize)]
pub struct BenchResult {
    /// The bench scene: packing and contact model, e.g. "bed, hooke".
    pub scene: String,
    pub backend: String,
    pub adapter: String,
    pub particles: usize,
    /// Timed steps (after warm-up).
    pub steps: u64,
    pub warmup: u64,
    /// Wall-clock seconds of the timed steps (ending with a device sync).
    pub seconds: f64,
    pub particle_steps_per_second: f64,
    /// Active contacts / particles after the timed steps.
    pub contacts_per_particle: f64,
    /// Traffic model of the backend (see the module docs).
    pub bytes_per_particle_step: f64,
    pub bytes_per_contact_step: f64,
    /// Modelled traffic / seconds, GB/s.
    pub effective_bandwidth_gb_s: f64,
    /// Peak resident host memory of the process (Linux `VmHWM`), bytes.
    pub peak_host_memory_bytes: Option<u64>,
    /// GPU only: device memory of all buffers per particle, bytes.
    pub device_bytes_per_particle: Option<f64>,
    /// Neighbour-list slots per particle and steps per list build (the GPU; the CPU with
    /// `--scene`, over the timed steps: ∞ when they built none, null in JSON).
    pub list_slots_per_particle: Option<f64>,
    pub steps_per_list_build: Option<f64>,
    /// GPU only, with `--profile`: milliseconds per step of each named pass, and how they were
    /// timed (device timestamps, or each pass submitted and waited for: `gpu::profile`).
    pub pass_ms_per_step: Vec<(String, f64)>,
    pub pass_timing: Option<String>,
    /// GPU only, with `--profile`: the traffic model per named pass, (bytes per particle-step,
    /// bytes per contact-step).
    pub pass_bytes_per_step: Vec<(String, f64, f64)>,
    /// GPU only, with `--profile`: each pass's modelled bytes over its measured time, GB/s.
    pub pass_gb_per_s: Vec<(String, f64)>,
    /// The card's peak memory bandwidth, GB/s, where the user gave it (`--peak-bandwidth`):
    /// each pass's share of it is printed.
    pub peak_bandwidth_gb_s: Option<f64>,
    /// GPU only: the adapter's device-local memory (Vulkan), bytes, and the most particles that
    /// fit in it at this run's device bytes per particle (`gpu::particles_that_fit`).
    pub device_memory_bytes: Option<u64>,
    pub particles_that_fit: Option<u64>,
    /// `--scene` with insertions or outlets: the exchanges of the timed steps.
    pub exchanges: Option<ExchangeStats>,
    /// GPU only: how the device lays the particles out and schedules the force pass at the end
    /// of the timed steps (`GpuBackend::layout`).
    pub gpu_layout: Option<crate::gpu::GpuLayout>,
    /// GPU only, with `--profile`: how the force pass's SIMD groups touch the active contacts'
    /// records in the list at the end (`gpu::access`).
    pub record_access: Option<crate::gpu::access::RecordAccess>,
}

/// The exchanges (insertions and outlets) of a benchmark's timed steps (`talus bench --scene`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct ExchangeStats {
    pub count: u64,
    /// Wall-clock seconds spent in them (part of `BenchResult::seconds`).
    pub seconds: f64,
    /// The GPU backend: how they went (in place, into buffers made again, through the host).
    pub gpu: Option<crate::gpu::DeviceExchanges>,
}

impl BenchResult {
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("bench result serialises");
        s.push('\n');
        s
    }
}

impl fmt::Display for BenchResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "scene                 {}", self.scene)?;
        writeln!(f, "backend               {} ({})", self.backend, self.adapter)?;
        writeln!(f, "particles             {}", self.particles)?;
        writeln!(f, "steps                 {} (after {} warm-up)", self.steps, self.warmup)?;
        writeln!(f, "seconds               {:.4}", self.seconds)?;
        writeln!(f, "particle-steps/s      {:.4e}", self.particle_steps_per_second)?;
        writeln!(f, "contacts/particle     {:.3}", self.contacts_per_particle)?;
        writeln!(f, "bytes/particle-step   {:.0} (model)", self.bytes_per_particle_step)?;
        writeln!(f, "bytes/contact-step    {:.0} (model)", self.bytes_per_contact_step)?;
        writeln!(f, "effective bandwidth   {:.3} GB/s (model)", self.effective_bandwidth_gb_s)?;
        match self.peak_host_memory_bytes {
            Some(b) => write!(f, "peak host memory      {:.1} MiB", b as f64 / (1024.0 * 1024.0))?,
            None => write!(f, "peak host memory      unknown")?,
        }
        if let Some(b) = self.device_bytes_per_particle {
            write!(f, "\ndevice memory         {b:.0} B/particle")?;
            match (self.device_memory_bytes, self.particles_that_fit) {
                (Some(m), Some(fit)) => write!(f, "\nfits on this adapter  {fit} particles ({:.1} GB of device memory at {b:.0} B/particle, within the binding limits)", m as f64 / 1e9)?,
                _ => write!(f, "\nfits on this adapter  unknown (the backend reports no device memory size)")?,
            }
        }
        match (self.list_slots_per_particle, self.steps_per_list_build) {
            (Some(slots), Some(every)) if every.is_finite() => write!(f, "\nneighbour list        {slots:.2} slots/particle, built every {every:.1} steps")?,
            (Some(slots), Some(_)) => write!(f, "\nneighbour list        {slots:.2} slots/particle, not rebuilt in the timed steps")?,
            _ => {}
        }
        if let Some(l) = &self.gpu_layout {
            write!(f, "\ngpu layout            {l}")?;
        }
        if let Some(x) = &self.exchanges {
            write!(f, "\nexchanges             {} in {:.3} s", x.count, x.seconds)?;
            if x.count > 0 {
                write!(f, " ({:.1} ms each)", 1e3 * x.seconds / x.count as f64)?;
            }
            if let Some(g) = &x.gpu {
                write!(f, ": {} in place, {} into buffers made again, {} through the host", g.in_place, g.regrown, g.through_host)?;
            }
        }
        if let Some(a) = &self.record_access {
            write!(
                f,
                "\nforce-pass records    {:.2} lines (128 B) and {:.2} sectors (32 B) per active contact's record read, SIMD groups of 32 (model; {:.2} and {:.2} with each record at its slot)",
                a.lines_per_record, a.sectors_per_record, a.lines_per_record_at_slots, a.sectors_per_record_at_slots
            )?;
            write!(f, "\nforce-pass words      {:.3} lines per slot's partner word (model; {:.3} with each word at its slot)", a.word_lines_per_slot, a.word_lines_per_slot_at_slots)?;
        }
        if let Some(timing) = &self.pass_timing {
            write!(f, "\npasses timed by       {timing}")?;
        }
        for (name, ms) in &self.pass_ms_per_step {
            write!(f, "\n  pass {name:<22} {ms:9.3} ms/step")?;
            if let Some((_, p, c)) = self.pass_bytes_per_step.iter().find(|(n, ..)| n == name) {
                write!(f, "  {p:6.1} B/particle-step + {c:5.1} B/contact-step (model)")?;
            }
            if let Some((_, gbs)) = self.pass_gb_per_s.iter().find(|(n, _)| n == name) {
                write!(f, "  {gbs:7.1} GB/s")?;
                if let Some(peak) = self.peak_bandwidth_gb_s {
                    write!(f, " ({:4.1} % of {peak:.0})", 100.0 * gbs / peak)?;
                }
            }
        }
        Ok(())
    }
}

/// Peak resident set size of this process, from `/proc/self/status` (Linux only).
pub fn peak_host_memory() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Time `steps` steps of `backend` after `warmup` steps. Both phases end with an energy readback,
/// which waits for the device to finish.
pub fn time_backend(backend: &mut dyn Backend, particles: usize, steps: u64, warmup: u64, traffic: Traffic) -> Result<BenchResult> {
    if warmup > 0 {
        backend.step(warmup)?;
    }
    backend.energies()?;
    let t0 = Instant::now();
    backend.step(steps)?;
    backend.energies()?;
    let seconds = t0.elapsed().as_secs_f64();
    let contacts = backend.contact_count()?;
    let n = particles as f64;
    let bytes = (traffic.bytes_per_particle_step * n + traffic.bytes_per_contact_step * contacts as f64) * steps as f64;
    Ok(BenchResult {
        scene: String::new(),
        backend: backend.kind().to_string(),
        adapter: backend.adapter(),
        particles,
        steps,
        warmup,
        seconds,
        particle_steps_per_second: if seconds > 0.0 { n * steps as f64 / seconds } else { 0.0 },
        contacts_per_particle: if particles > 0 { contacts as f64 / n } else { 0.0 },
        bytes_per_particle_step: traffic.bytes_per_particle_step,
        bytes_per_contact_step: traffic.bytes_per_contact_step,
        effective_bandwidth_gb_s: if seconds > 0.0 { bytes / seconds / 1e9 } else { 0.0 },
        peak_host_memory_bytes: peak_host_memory(),
        device_bytes_per_particle: None,
        list_slots_per_particle: None,
        steps_per_list_build: None,
        pass_ms_per_step: Vec::new(),
        pass_timing: None,
        pass_bytes_per_step: Vec::new(),
        pass_gb_per_s: Vec::new(),
        peak_bandwidth_gb_s: None,
        device_memory_bytes: None,
        particles_that_fit: None,
        gpu_layout: None,
        record_access: None,
        exchanges: None,
    })
}

impl BenchResult {
    /// Replace the traffic model (and the bandwidth it implies).
    pub fn with_traffic(mut self, traffic: Traffic) -> Self {
        let n = self.particles as f64;
        let bytes = (traffic.bytes_per_particle_step * n + traffic.bytes_per_contact_step * self.contacts_per_particle * n) * self.steps as f64;
        self.bytes_per_particle_step = traffic.bytes_per_particle_step;
        self.bytes_per_contact_step = traffic.bytes_per_contact_step;
        self.effective_bandwidth_gb_s = if self.seconds > 0.0 { bytes / self.seconds / 1e9 } else { 0.0 };
        self
    }
}

/// The GPU backend `choice` asks for, or `None` for the CPU: `Auto` is decided by
/// `run::resolve_auto` (no adapter or only a software one: the CPU, its notice printed to
/// stderr); other GPU errors are returned.
pub fn gpu_for(choice: BackendChoice, setup: &Setup) -> Result<Option<GpuBackend>> {
    match choice {
        BackendChoice::Cpu => Ok(None),
        BackendChoice::Gpu => Ok(Some(GpuBackend::new(setup, GpuOptions::default())?)),
        BackendChoice::Auto => match crate::run::resolve_auto() {
            AutoPick::Cpu { notice } => {
                eprintln!("{notice}");
                Ok(None)
            }
            AutoPick::Gpu => Ok(Some(GpuBackend::new(setup, GpuOptions::default())?)),
        },
    }
}

/// The most particles for which `--profile` computes the force pass's access model
/// (`gpu::access`).
pub const RECORD_ACCESS_MAX_PARTICLES: usize = 20_000_000;

/// Per-pass times and traffic of `g` into `result`: `steps` more steps timed pass by pass
/// (`GpuBackend::profile_passes`), as milliseconds per step, how they were timed, and the
/// traffic model per pass (bytes per particle-step, per contact-step).
pub fn profile_gpu(g: &mut GpuBackend, steps: u64, result: &mut BenchResult) -> Result<()> {
    let model = g.traffic_model()?;
    let (totals, timing) = g.profile_passes(steps)?;
    result.pass_ms_per_step = totals.into_iter().map(|(name, s)| (name.to_string(), s * 1e3 / steps.max(1) as f64)).collect();
    result.pass_bytes_per_step = model.passes.iter().map(|&(name, p, c)| (name.to_string(), p, c)).collect();
    result.pass_timing = Some(timing.describe().to_string());
    // (the access model reads the whole list back and walks it: skipped past 20M particles,
    // where it would take the profile's host seconds and gigabytes)
    if result.particles <= RECORD_ACCESS_MAX_PARTICLES {
        result.record_access = Some(g.record_access()?);
    }
    let n = result.particles as f64;
    let contacts = result.contacts_per_particle * n;
    result.pass_gb_per_s = result
        .pass_ms_per_step
        .iter()
        .filter_map(|(name, ms)| {
            let &(_, p, c) = model.passes.iter().find(|(m, ..)| m == name)?;
            // the rebuild passes' bytes are amortised over the run's builds, their time over the
            // profiled steps (often none): no rate
            (*ms > 0.0 && !name.contains("rebuild")).then(|| (name.clone(), (p * n + c * contacts) / (ms * 1e-3) / 1e9))
        })
        .collect();
    Ok(())
}

/// The device memory `g` plans with (the adapter's, or the lower `TALUS_GPU_MAX_DEVICE_BYTES`)
/// and how many particles fit in it at `g`'s device bytes per particle, into `result`.
pub fn fit_gpu(g: &GpuBackend, result: &mut BenchResult) {
    let n = result.particles.max(1) as f64;
    let per = g.device_bytes() as f64 / n;
    result.device_memory_bytes = g.memory_budget();
    result.particles_that_fit = g.memory_budget().map(|m| crate::gpu::particles_that_fit(m, per, g.split_layout().cap_bytes));
    result.gpu_layout = g.layout().ok();
}

/// Benchmark `choice` on `bench_setup(particles, 1)`. `Auto` falls back to the CPU (printing the
/// notice to stderr) when no hardware GPU adapter is found (`run::resolve_auto`).
/// With `profile`, the GPU also runs `steps` more steps pass by pass and reports their times;
/// `tracked` = false turns every pair's energy tracking off (`PairParams::energy_tracking`);
/// `adhesion` gives every pair that adhesion part (`bench_contacts`).
#[allow(clippy::too_many_arguments)]
pub fn bench(choice: BackendChoice, particles: usize, steps: u64, warmup: u64, profile: bool, model: ContactModel, adhesion: Adhesion, packing: Packing, ids: Ids, tracked: bool) -> Result<BenchResult> {
    if particles == 0 {
        return Err(TalusError::Other("bench needs at least 1 particle".into()));
    }
    let contacts = bench_contacts(model, adhesion);
    let mut setup = match packing {
        Packing::Settling => settling_with(particles, 1, contacts)?,
        Packing::Bed => bed_with(particles, contacts)?,
        Packing::Clumps => clumps_with(particles, contacts)?,
        Packing::Drum => drum_with(particles, contacts)?,
    };
    if ids == Ids::Shuffled {
        shuffle_ids(&mut setup, SHUFFLE_SEED);
    }
    if !tracked {
        setup.pairs.entries.iter_mut().for_each(|p| p.energy_tracking = false);
    }
    let n = setup.particles.len();
    let glue = if adhesion == Adhesion::None { String::new() } else { format!(" with {} adhesion", adhesion.name()) };
    let scene = format!("{}, {}{glue}{}{}", packing.name(), model.name(), if ids == Ids::Shuffled { ", ids shuffled" } else { "" }, if tracked { "" } else { ", untracked" });
    let gpu = gpu_for(choice, &setup)?;
    match gpu {
        Some(mut g) => {
            let mut result = time_backend(&mut g, n, steps, warmup, Traffic { bytes_per_particle_step: 0.0, bytes_per_contact_step: 0.0 })?;
            let m = g.traffic_model()?;
            result = result.with_traffic(Traffic { bytes_per_particle_step: m.bytes_per_particle_step, bytes_per_contact_step: m.bytes_per_contact_step });
            result.device_bytes_per_particle = Some(g.device_bytes() as f64 / n.max(1) as f64);
            result.list_slots_per_particle = Some(m.slots_per_particle);
            result.steps_per_list_build = Some(m.steps_per_rebuild);
            result.scene = scene;
            fit_gpu(&g, &mut result);
            if profile {
                profile_gpu(&mut g, steps, &mut result)?;
            }
            Ok(result)
        }
        None => {
            let mut c = CpuBackend::new(&setup)?;
            let traffic = if setup.bodies.is_empty() { cpu_traffic_model() } else { cpu_clump_traffic_model(&setup) };
            let mut result = time_backend(&mut c, n, steps, warmup, traffic)?;
            result.scene = scene;
            Ok(result)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The settling box: a small bench fits (100 and 200 particles did not), and from 500 up
    /// the box is the one every earlier figure was measured in (its side `(V / 2)^(1/3)`).
    #[test]
    fn settling_box_fits_small_and_keeps_large() {
        for n in [1, 10, 100, 200, 300] {
            let s = try_bench_setup(n, 1, ContactModel::Hertz).unwrap_or_else(|e| panic!("{n}: {e}"));
            assert_eq!(s.particles.len(), n);
        }
        let (r0, r1) = RADIUS_RANGE;
        for n in [500usize, 1000, 10_000, 1_000_000] {
            let mean_r3 = (r1.powi(4) - r0.powi(4)) / (4.0 * (r1 - r0));
            let w = (n as f64 * 4.0 / 3.0 * std::f64::consts::PI * mean_r3 / FILL_FRACTION / 2.0).cbrt();
            let v: serde_json::Value = serde_json::from_str(&bench_scene_json(n, 1, ContactModel::Hertz)).unwrap();
            assert_eq!(v["generators"][0]["box"]["max"][0].as_f64().unwrap(), w, "{n}");
        }
    }

    /// The bench drum: about the grains asked for, every one in the lower half of the drum and
    /// half a lattice spacing clear of its facets (chords of the circle, end caps), the drum
    /// turning about its axis; no grain starts overlapping another by more than the bed's 5 µm.
    #[test]
    fn drum_holds_its_grains_inside_the_turning_mesh() {
        for n in [2000usize, 20_000, 100_000] {
            let s = drum_setup(n, ContactModel::HertzMindlin);
            let got = s.particles.len();
            assert!((got as f64 - n as f64).abs() < 0.15 * n as f64, "{n} asked, {got} made");
            assert_eq!(s.meshes.len(), 1);
            let drum = &s.meshes[0];
            assert_eq!(drum.motion.angular_speed.value(0.0), DRUM_OMEGA);
            assert_eq!(drum.motion.axis, glam::DVec3::Z);
            let (lo, hi) = drum.mesh.bounds();
            let radius = drum.mesh.triangles.iter().flatten().map(|v| v.truncate().length()).fold(0.0, f64::max);
            let half = hi.z;
            assert!((lo.z + half).abs() < 1e-12 && (radius - 2.0 * half).abs() < 1e-12, "{lo} {hi}: radius {radius}");
            for (x, &r) in s.particles.position.iter().zip(&s.particles.radius) {
                assert!(x[1] < 0.0, "{x:?} above the axis");
                assert!((x[0] * x[0] + x[1] * x[1]).sqrt() + r <= radius - 0.5 * BED_SPACING + 1e-12, "{x:?} too near the side");
                assert!(x[2].abs() + r <= half - 0.5 * BED_SPACING + 1e-12, "{x:?} too near a cap");
            }
            let r_max = s.particles.radius.iter().cloned().fold(0.0, f64::max);
            assert!(2.0 * r_max - BED_SPACING < 5.1e-6, "largest overlap {} m", 2.0 * r_max - BED_SPACING);
        }
    }

    #[test]
    fn shuffled_clumps_are_the_same_bodies_each_one_run() {
        let placed = clump_setup(400, ContactModel::Hertz);
        let mut shuffled = placed.clone();
        shuffle_ids(&mut shuffled, SHUFFLE_SEED);
        let (a, b) = (&placed.bodies, &shuffled.bodies);
        b.check(shuffled.particles.len()).unwrap();
        assert_eq!(a.len(), b.len());
        assert_ne!(a.position, b.position, "the bodies were not shuffled");
        // every shuffled body is a placed one, with its components' rows in their order
        for k in 0..b.len() {
            let j = a.position.iter().position(|x| *x == b.position[k]).expect("a body that was not placed");
            assert_eq!((a.orientation[j], a.velocity[j], a.mass[j], a.count[j]), (b.orientation[k], b.velocity[k], b.mass[k], b.count[k]));
            let (ra, rb) = (a.first[j] as usize..(a.first[j] + a.count[j]) as usize, b.first[k] as usize..(b.first[k] + b.count[k]) as usize);
            assert_eq!(a.offset[ra.clone()], b.offset[rb.clone()]);
            assert_eq!(placed.particles.position[ra.clone()], shuffled.particles.position[rb.clone()]);
            assert_eq!(placed.particles.radius[ra], shuffled.particles.radius[rb]);
        }
    }
}
