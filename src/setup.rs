//! The resolved simulation set-up: what a scene file becomes after parsing, validation,
//! particle generation and property inheritance. Both backends start from a `Setup`.
//!
//! Everything here is SI and f64. The GPU backend converts to its own f32 layout.

use std::path::PathBuf;
use std::sync::Arc;

use glam::DVec3;

use crate::error::{Result, TalusError};
use crate::layout::consts::MESH_KEY_BIT;
use crate::mesh::TriangleMesh;
use crate::model::flow::{Insertion, Outlet, Rate};
use crate::model::body::Bodies;
use crate::model::checks::RunChecks;
use crate::model::clump::ClumpTemplate;
use crate::model::contact_record::ContactRecord;
use crate::model::material::Material;
use crate::model::measure::Measure;
use crate::motion::{Pose, WallMotion};

use crate::contact::params::{ContactModel, PairParams};

/// Particle state in structure-of-arrays form. Index = particle id.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Particles {
    pub position: Vec<[f64; 3]>,
    pub velocity: Vec<[f64; 3]>,
    pub angular_velocity: Vec<[f64; 3]>,
    pub radius: Vec<f64>,
    /// Index into `Setup::materials`.
    pub material: Vec<u32>,
}

impl Particles {
    pub fn len(&self) -> usize {
        self.radius.len()
    }
    pub fn is_empty(&self) -> bool {
        self.radius.is_empty()
    }
    pub fn push(&mut self, position: [f64; 3], velocity: [f64; 3], angular_velocity: [f64; 3], radius: f64, material: u32) {
        self.position.push(position);
        self.velocity.push(velocity);
        self.angular_velocity.push(angular_velocity);
        self.radius.push(radius);
        self.material.push(material);
    }
}

/// An infinite plane wall. Particles live on the side the normal points to.
#[derive(Clone, Debug, PartialEq)]
pub struct Wall {
    pub name: String,
    /// A point on the plane at t = 0, m.
    pub point: [f64; 3],
    /// Unit outward normal at t = 0 (pointing into the region where particles are).
    pub normal: [f64; 3],
    /// Index into `Setup::materials`.
    pub material: u32,
    /// Prescribed motion (static by default).
    pub motion: WallMotion,
    /// Fixed point in space about which `walls.csv` reports the torque on the wall, m.
    pub load_point: [f64; 3],
}

/// A plane wall at one time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WallState {
    pub point: DVec3,
    pub normal: DVec3,
    pub pose: Pose,
}

impl Wall {
    /// A static plane; loads reported about `point`.
    pub fn plane(name: impl Into<String>, point: [f64; 3], normal: [f64; 3], material: u32) -> Wall {
        Wall { name: name.into(), point, normal, material, motion: WallMotion::default(), load_point: point }
    }

    /// The plane at time `t`: its point and normal carried by the motion.
    pub fn state_at(&self, t: f64) -> WallState {
        let pose = self.motion.pose(t);
        WallState { point: pose.point(DVec3::from(self.point), self.motion.center), normal: pose.direction(DVec3::from(self.normal)), pose }
    }
}

/// A triangle-mesh wall (`src/mesh/`): the mesh placed at t = 0 and carried by `motion`
/// (the pose maps the t = 0 placement to time t, about `motion.center`).
#[derive(Clone, Debug)]
pub struct MeshWall {
    pub name: String,
    /// The mesh in its t = 0 placement (scene transform applied, `two_sided` set).
    pub mesh: Arc<TriangleMesh>,
    /// Index into `Setup::materials`.
    pub material: u32,
    /// Prescribed motion (static by default).
    pub motion: WallMotion,
    /// Fixed point in space about which `walls.csv` reports the torque on the mesh, m.
    pub load_point: [f64; 3],
}

impl MeshWall {
    /// A static mesh wall; loads reported about (and rotations, if a motion is set later,
    /// default to) the centre of its bounding box.
    pub fn new(name: impl Into<String>, mesh: TriangleMesh, material: u32) -> MeshWall {
        let centre = mesh_centre(&mesh);
        let motion = WallMotion { center: DVec3::from(centre), ..WallMotion::default() };
        MeshWall { name: name.into(), mesh: Arc::new(mesh), material, motion, load_point: centre }
    }

    /// The mesh's pose at time `t` (maps the t = 0 placement to time t).
    pub fn pose_at(&self, t: f64) -> Pose {
        self.motion.pose(t)
    }
}

/// Centre of a mesh's bounding box.
pub fn mesh_centre(mesh: &TriangleMesh) -> [f64; 3] {
    let (lo, hi) = mesh.bounds();
    ((lo + hi) * 0.5).to_array()
}

/// The first global facet group of every mesh (prefix sum of the group counts): the history
/// key of a mesh contact is `WALL_KEY_BIT | MESH_KEY_BIT | (base + group)`, so all groups of
/// all meshes must stay below `MESH_KEY_BIT`.
pub fn mesh_group_bases(meshes: &[MeshWall]) -> Result<Vec<u32>> {
    let mut bases = Vec::with_capacity(meshes.len());
    let mut next = 0u64;
    for m in meshes {
        bases.push(next as u32);
        next += m.mesh.group_count as u64;
        if next > MESH_KEY_BIT as u64 {
            return Err(TalusError::Other(format!(
                "mesh wall `{}` ({}): the meshes up to it have {next} facet groups, more than the {MESH_KEY_BIT} the contact-history keys can hold",
                m.name,
                m.mesh.source.display()
            )));
        }
    }
    Ok(bases)
}

/// Axis-aligned box, m.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    pub min: [f64; 3],
    pub max: [f64; 3],
}

/// `until_rest` of a scene: the run stops once the kinetic energy has been below
/// `kinetic_fraction` × its peak (over the outputs so far) at `outputs` consecutive outputs;
/// `steps` is then the longest the run goes on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RestCriterion {
    pub kinetic_fraction: f64,
    pub outputs: u64,
}

/// How the time step was chosen (printed by `talus run`).
#[derive(Clone, Debug, PartialEq)]
pub enum TimeStepChoice {
    Explicit,
    /// `fraction` × Rayleigh critical step `rayleigh` (s).
    Auto { fraction: f64, rayleigh: f64 },
}

#[derive(Clone, Debug)]
pub struct Setup {
    /// Scene name (file stem).
    pub name: String,
    /// The scene file this came from (for messages).
    pub source: PathBuf,
    /// m/s^2
    pub gravity: [f64; 3],
    /// s
    pub dt: f64,
    pub dt_choice: TimeStepChoice,
    /// Number of steps to run.
    pub steps: u64,
    /// Steps between outputs (energy rows, snapshots). ≥ 1.
    pub output_every: u64,
    /// Snapshots (VTU) every this many outputs; 0 = never.
    pub snapshot_every: u64,
    pub materials: Vec<Material>,
    /// Contact parameters for every material pair, resolved by inheritance
    /// (spec eqs 18–20) unless given for the pair. Symmetric.
    pub pairs: PairTable,
    pub particles: Particles,
    /// Plane walls (box walls are expanded into planes).
    pub walls: Vec<Wall>,
    /// Triangle-mesh walls. Loads are reported planes first, then meshes.
    pub meshes: Vec<MeshWall>,
    /// Region the neighbour grid covers. Particles outside still interact
    /// (they are clamped into the border cells), only less efficiently.
    pub domain: Aabb,
    /// Periodic axes: a particle leaving [min, max) re-enters on the other side and
    /// particles interact with the nearest image across the boundary.
    pub periodic: [bool; 3],
    /// Insertion regions (`"insert"`), applied at batch boundaries (`crate::flow`).
    pub inserts: Vec<Insertion>,
    /// Outlets (`"outlets"`), applied at batch boundaries.
    pub outlets: Vec<Outlet>,
    /// The scene's `"measure"` list (`src/measure/`).
    pub measures: Vec<Measure>,
    /// Neighbour-list skin (`"skin"`, m); `None` for the default (`Setup::skin`).
    pub skin: Option<f64>,
    /// MPI subdomains along x, y, z (`"decomposition": {"bricks": [px, py, pz]}`); `None`: the
    /// decomposed backend chooses (`cpu::decomposed::Bricks::new`). Ignored on one rank.
    pub bricks: Option<[u32; 3]>,
    /// Whether the cut planes between the bricks shift at every list rebuild so that each slab
    /// holds an equal share of the particles (`"decomposition": {"balance": "shift"}`, as LAMMPS
    /// `balance shift`); off: evenly spaced planes.
    pub balance: bool,
    /// Run-time checks: the lost-particle policy and margin (`crate::model::checks`).
    pub checks: RunChecks,
    /// Stop at rest (`until_rest`); `None`: run all `steps`.
    pub until_rest: Option<RestCriterion>,
    /// `talus run` writes a checkpoint every this many outputs (`checkpoint_every`; 0: only
    /// at the end and when interrupted).
    pub checkpoint_every: u64,
    /// Contact history of `particles` to start from (an `initial_state` of format
    /// `checkpoint`), sorted by (owner, partner); empty: every contact starts new.
    pub initial_contacts: Vec<ContactRecord>,
    /// Files the scene read besides itself (mesh STL files, the `initial_state` file), as
    /// resolved; a checkpoint records them with a checksum.
    pub input_files: Vec<PathBuf>,
    /// Rigid bodies (clumps, `crate::model::body`): empty in a scene without clumps; in one
    /// with clumps every particle is a component of one.
    pub bodies: Bodies,
    /// Rigid clump templates (`"clump_templates"`), in scene order; empty for sphere scenes.
    /// Clump generators place them (`bodies`).
    pub clump_templates: Vec<ClumpTemplate>,
    /// What the loader adjusted, said once at the start of a run (`talus run`): e.g. an output
    /// interval that is not a whole number of time steps, snapped to whole steps
    /// (`crate::scene::output_cadence`).
    pub notes: Vec<String>,
}

/// The default neighbour-list skin as a fraction of the largest particle diameter (LIGGGHTS
/// uses 0.1 d).
pub const DEFAULT_SKIN_FRACTION: f64 = 0.1;

/// Symmetric table of `PairParams` indexed by material pair.
#[derive(Clone, Debug, PartialEq)]
pub struct PairTable {
    pub n_materials: usize,
    /// Row-major n×n, entry (a, b) == entry (b, a).
    pub entries: Vec<PairParams>,
}

impl PairTable {
    pub fn get(&self, a: u32, b: u32) -> &PairParams {
        &self.entries[a as usize * self.n_materials + b as usize]
    }

    /// The contact model of every pair, when they all share one (the CPU force pass then calls
    /// that preset directly instead of dispatching per contact).
    pub fn single_model(&self) -> Option<ContactModel> {
        let first = self.entries.first()?.model;
        self.entries.iter().all(|p| p.model == first).then_some(first)
    }
}

impl Setup {
    /// Whether contacts book their slip, dashpot and stiffness work (scene key
    /// `energy_tracking`, copied into every pair; `PairParams::energy_tracking`).
    pub fn energy_tracking(&self) -> bool {
        self.pairs.entries.iter().all(|p| p.energy_tracking)
    }

    /// Whether some pair books rolling-friction work (rolling friction with energy tracking):
    /// the backends then keep each particle's spin of the previous force pass, against which
    /// that pass's rolling torque acted (`contact::rolling::previous_rolling_power`).
    /// The largest gap at which any pair's contact can act (`contact::adhesion::max_reach_gap`:
    /// the largest positive g_r, or an adhesive bond's tensile range): lists and cells reach
    /// this far beyond the radii.
    pub fn max_reach_gap(&self) -> f64 {
        crate::contact::adhesion::max_reach_gap(&self.pairs.entries, self.max_radius())
    }

    /// Whether some pair has adhesion (`PairParams::adhesion`): the contacts then follow the
    /// bonded activity rule, and the energies have the surface and bond-break partitions.
    pub fn has_adhesion(&self) -> bool {
        self.pairs.entries.iter().any(|p| p.adhesion != crate::contact::params::Adhesion::None)
    }

    pub fn rolling_booked(&self) -> bool {
        self.pairs.entries.iter().any(|p| p.rolling_fric != 0.0 && p.energy_tracking)
    }

    /// Period on each axis (the domain's extent; meaningful where `periodic` is set).
    /// The names of the clump templates (the bodies file names each body's).
    pub fn clump_template_names(&self) -> Vec<String> {
        self.clump_templates.iter().map(|t| t.name.clone()).collect()
    }

    pub fn period(&self) -> DVec3 {
        DVec3::from(self.domain.max) - DVec3::from(self.domain.min)
    }

    /// The nearest image of a separation d = x_j − x_i on the periodic axes.
    pub fn minimum_image(&self, mut d: DVec3) -> DVec3 {
        let l = self.period();
        for a in 0..3 {
            if self.periodic[a] {
                d[a] -= l[a] * (d[a] / l[a]).round();
            }
        }
        d
    }

    /// `x` shifted by whole periods into [min, max) on the periodic axes, and the shift in
    /// periods that was removed (x = wrapped + shift·period).
    pub fn wrap(&self, x: DVec3) -> (DVec3, [i32; 3]) {
        let (min, l) = (DVec3::from(self.domain.min), self.period());
        let mut w = x;
        let mut shift = [0i32; 3];
        for a in 0..3 {
            if self.periodic[a] {
                let k = ((x[a] - min[a]) / l[a]).floor();
                w[a] = x[a] - k * l[a];
                shift[a] = k as i32;
            }
        }
        (w, shift)
    }

    /// The lost-particle test of the run-time checks: domain corners and margin, when a
    /// particle can be lost (policy `Error`, for the backends' per-step checks).
    pub fn lost_bounds(&self) -> Option<(DVec3, DVec3, f64)> {
        self.checks.lost_margin.map(|m| (DVec3::from(self.domain.min), DVec3::from(self.domain.max), m))
    }

    /// Mass of a solid sphere of `density` and radius `r`.
    pub fn sphere_mass(density: f64, r: f64) -> f64 {
        density * 4.0 / 3.0 * std::f64::consts::PI * r * r * r
    }
    /// Mass of a sphere of `material` and radius `r` (every particle mass comes from here).
    pub fn mass_of(&self, material: u32, r: f64) -> f64 {
        Setup::sphere_mass(self.materials[material as usize].density, r)
    }
    /// Moment of inertia of a solid sphere of `material` and radius `r`, 2/5 m r².
    pub fn inertia_of(&self, material: u32, r: f64) -> f64 {
        0.4 * self.mass_of(material, r) * r * r
    }
    pub fn particle_mass(&self, i: usize) -> f64 {
        self.mass_of(self.particles.material[i], self.particles.radius[i])
    }
    pub fn particle_inertia(&self, i: usize) -> f64 {
        self.inertia_of(self.particles.material[i], self.particles.radius[i])
    }
    /// Largest radius of the initial particles and of every insertion's distribution.
    /// Neighbour-list skin, m: the scene's `"skin"`, else `DEFAULT_SKIN_FRACTION` of the
    /// largest particle diameter (LIGGGHTS's 0.1 d). Costs speed when small, never correctness.
    pub fn skin(&self) -> f64 {
        self.skin.unwrap_or(DEFAULT_SKIN_FRACTION * 2.0 * self.max_radius())
    }

    pub fn max_radius(&self) -> f64 {
        let inserted = self.inserts.iter().map(|s| s.radius.max());
        self.particles.radius.iter().cloned().chain(inserted).fold(0.0, f64::max)
    }
    /// Most particles the run may hold: the initial ones plus what every insertion can bring
    /// in `steps` (its rate over its active time, capped by its limit; a mass rate counted in
    /// particles of the distribution's smallest radius). Sizes grids, not buffers.
    pub fn particle_capacity(&self) -> usize {
        let end = self.steps as f64 * self.dt;
        let inserted: f64 = self
            .inserts
            .iter()
            .map(|s| match (&s.clump, s.rate) {
                (None, Rate::Count(_)) => s.target(end).ceil(),
                (None, Rate::Mass(_)) => (s.target(end) / self.mass_of(s.material, s.radius.min())).ceil(),
                // bodies of the smallest scale, each its template's spheres
                (Some(c), rate) => {
                    let t = &self.clump_templates[c.template as usize];
                    let bodies = match rate {
                        Rate::Count(_) => s.target(end).ceil(),
                        Rate::Mass(_) => (s.target(end) / (t.mass * c.scale.min().powi(3))).ceil(),
                    };
                    bodies * t.spheres.len() as f64
                }
            })
            .sum();
        self.particles.len() + inserted.min(1e9) as usize
    }
    /// Whether the run steps rigid bodies: the scene has clumps, or an insertion brings them
    /// (then every particle is a body's component, a lone sphere a one-component body).
    pub fn has_bodies(&self) -> bool {
        !self.bodies.is_empty() || self.inserts.iter().any(|s| s.clump.is_some())
    }
    /// Name and load point of every wall in `Backend::wall_loads` order: planes, then meshes.
    pub fn load_points(&self) -> Vec<(&str, [f64; 3])> {
        let planes = self.walls.iter().map(|w| (w.name.as_str(), w.load_point));
        planes.chain(self.meshes.iter().map(|m| (m.name.as_str(), m.load_point))).collect()
    }
}
