//! Scenes built in code for the physics tests, and both backends side by side.
#![allow(dead_code)]

pub mod impacts;
pub mod random;
pub mod twin;

use talus::contact::params::{inherit, PairParams};
use talus::model::material::Material;
use talus::setup::{Aabb, PairTable, Particles, Setup, TimeStepChoice, Wall};
use talus::Backend;

/// A shipped scene of `scenes/`, loaded as `talus run` loads it.
pub fn shipped_scene(name: &str) -> Setup {
    talus::scene::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes").join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

pub fn material(name: &str, density: f64, hz_shear: f64, hz_poiss: f64, fric: f64) -> Material {
    Material { name: name.into(), density, hz_shear, hz_poiss, fric }
}

/// A set-up with one material, pair parameters inherited from it with `base` for the rest.
pub fn setup_with(mat: Material, base: PairParams, particles: Particles, walls: Vec<Wall>, gravity: [f64; 3], dt: f64, domain: Aabb) -> Setup {
    let pairs = PairTable { n_materials: 1, entries: vec![inherit(&mat, &mat, base)] };
    Setup {
        name: "test".into(),
        source: "<test>".into(),
        gravity,
        dt,
        dt_choice: TimeStepChoice::Explicit,
        steps: 0,
        output_every: 1,
        snapshot_every: 0,
        materials: vec![mat],
        pairs,
        particles,
        walls,
        meshes: Vec::new(),
        domain,
        periodic: [false; 3],
        inserts: Vec::new(),
        outlets: Vec::new(),
        measures: Vec::new(),
        skin: None,
        bricks: None,
        balance: false,
        checks: Default::default(),
        until_rest: None,
        checkpoint_every: 0,
        initial_contacts: Vec::new(),
        input_files: Vec::new(),
        bodies: Default::default(),
        clump_templates: Vec::new(),
        notes: Vec::new(),
    }
}

pub fn floor(z: f64) -> Wall {
    Wall::plane("floor", [0.0, 0.0, z], [0.0, 0.0, 1.0], 0)
}

pub fn cube(half: f64) -> Aabb {
    Aabb { min: [-half; 3], max: [half; 3] }
}

/// The CPU backend and, where a GPU adapter exists, the GPU backend. Without an adapter this
/// panics with the reason: GPU tests never skip silently.
pub fn both_backends(setup: &Setup) -> Vec<Box<dyn Backend>> {
    let cpu = talus::cpu::CpuBackend::new(setup).expect("CPU backend");
    let gpu = talus::gpu::GpuBackend::new(setup, talus::gpu::GpuOptions::default())
        .unwrap_or_else(|e| panic!("GPU backend unavailable ({e}); GPU tests need a Vulkan driver (apt-get install mesa-vulkan-drivers)"));
    vec![Box::new(cpu), Box::new(gpu)]
}

/// Hertz theory for an elastic head-on impact with F = h_n δ^(3/2):
/// returns (contact duration, peak force) for effective mass `m_eff` and approach speed `v`.
pub fn hertz_theory(h_n: f64, m_eff: f64, v: f64) -> (f64, f64) {
    // ½ m v² = 2/5 h_n δ_max^(5/2)
    let delta_max = (5.0 * m_eff * v * v / (4.0 * h_n)).powf(0.4);
    // t_c = 2 δ_max / v ∫₀¹ (1 − x^(5/2))^(-1/2) dx, integral evaluated numerically (substitution x = 1 − u², midpoint rule)
    let n = 200_000;
    let mut integral = 0.0;
    for k in 0..n {
        let u = (k as f64 + 0.5) / n as f64;
        let x: f64 = 1.0 - u * u;
        integral += 2.0 * u / (1.0 - x.powf(2.5)).sqrt() / n as f64;
    }
    (2.0 * delta_max / v * integral, h_n * delta_max.powf(1.5))
}

/// The six planes of the cube [−h, h]³, normals pointing inwards.
pub fn box_walls(h: f64) -> Vec<Wall> {
    let mut walls = Vec::new();
    for axis in 0..3 {
        for side in [-1.0, 1.0] {
            let mut point = [0.0; 3];
            point[axis] = -side * h;
            let mut normal = [0.0; 3];
            normal[axis] = side;
            walls.push(Wall::plane(format!("wall{axis}{side}"), point, normal, 0));
        }
    }
    walls
}

/// Relative drift of `Energies::total()` over a run, sampled every `every` steps.
pub fn max_energy_drift(backend: &mut dyn Backend, batches: u64, every: u64) -> f64 {
    let e0 = backend.energies().unwrap().total();
    let mut drift: f64 = 0.0;
    for _ in 0..batches {
        backend.step(every).unwrap();
        drift = drift.max(((backend.energies().unwrap().total() - e0) / e0).abs());
    }
    drift
}

/// One impact: steps in batches of `batch` until the contact has formed and ended again (at
/// most `max_steps`), then returns the normal coefficient of restitution along `axis` and the
/// final energies. Ball–ball: particles 0 and 1 approach along `axis`; ball–wall: particle 0.
pub fn restitution(backend: &mut dyn Backend, axis: usize, batch: u64, max_steps: u64) -> (f64, talus::Energies) {
    let s0 = backend.snapshot().unwrap();
    let rel = |s: &talus::Snapshot| if s.velocity.len() > 1 { s.velocity[1][axis] - s.velocity[0][axis] } else { s.velocity[0][axis] };
    let v_in = rel(&s0);
    let (mut steps, mut touched) = (0, false);
    loop {
        backend.step(batch).unwrap();
        steps += batch;
        let active = backend.contact_count().unwrap() > 0;
        touched |= active;
        if touched && !active {
            break;
        }
        assert!(steps < max_steps, "{}: contact did not end within {max_steps} steps", backend.kind());
    }
    let s = backend.snapshot().unwrap();
    (-rel(&s) / v_in, backend.energies().unwrap())
}

/// Everything a run reports, as bits: positions, velocities, spins, forces, torques, every
/// energy partition, the wall loads and the contact count.
pub fn fingerprint(b: &mut dyn Backend) -> Vec<u64> {
    let s = b.snapshot().unwrap();
    let mut out = Vec::new();
    for v in [&s.position, &s.velocity, &s.angular_velocity, &s.force, &s.torque] {
        out.extend(v.iter().flatten().map(|x| x.to_bits()));
    }
    // rigid bodies (none in a scene of spheres): centre, image, q, v, L, mass and components
    let bd = &s.bodies;
    for v in [&bd.position, &bd.velocity, &bd.angular_momentum, &bd.moments] {
        out.extend(v.iter().flatten().map(|x| x.to_bits()));
    }
    out.extend(bd.orientation.iter().flatten().map(|x| x.to_bits()));
    out.extend(bd.image.iter().flatten().map(|&k| k as u64));
    out.extend(bd.mass.iter().map(|x| x.to_bits()));
    out.extend(bd.first.iter().chain(&bd.count).chain(&bd.body_of).map(|&k| k as u64));
    let e = b.energies().unwrap();
    out.extend([e.kinetic_translational, e.kinetic_rotational, e.gravitational, e.strain, e.slip, e.dashpot, e.stiffness_work, e.wall_work].map(f64::to_bits));
    for l in b.wall_loads().unwrap() {
        out.extend(l.force.iter().chain(&l.torque).map(|x| x.to_bits()));
    }
    out.push(b.contact_count().unwrap());
    out
}

/// `talus bench`'s settling box of `n` grains (seed 7, `hertz_mindlin`) lowered onto its floor,
/// so that contacts form and end from the first steps.
pub fn lowered_settling_box(n: usize) -> Setup {
    let mut setup = talus::bench::bench_setup(n, 7, talus::contact::params::ContactModel::HertzMindlin);
    let zmin = setup.particles.position.iter().zip(&setup.particles.radius).map(|(p, r)| p[2] - r).fold(f64::MAX, f64::min);
    for p in &mut setup.particles.position {
        p[2] -= zmin - 1e-5;
    }
    setup
}

/// A GPU backend that exchanges particles through its whole state (export, changed, import:
/// `GpuBackend::apply_exchange_through_host`), the path its exchanges took before they moved
/// onto the device (`gpu::flow`), for the tests that compare the two; everything else goes to
/// the backend inside. The flag: whether it hands the flow driver the particles near
/// (`exchange_view`), or nothing, so that the driver decides on the whole state it exports
/// and imports it changed (`FlowDriver::exchange`'s path for a backend without views).
pub struct WholeStateExchange(pub talus::gpu::GpuBackend, pub bool);

impl Backend for WholeStateExchange {
    fn exchange_view(&mut self, query: &talus::model::exchange::ExchangeQuery) -> talus::Result<Option<talus::model::exchange::ExchangeView>> {
        match self.1 {
            true => Backend::exchange_view(&mut self.0, query),
            false => Ok(None),
        }
    }
    fn apply_exchange(&mut self, change: &talus::model::exchange::ExchangeChange) -> talus::Result<()> {
        self.0.apply_exchange_through_host(change)
    }
    fn kind(&self) -> &'static str {
        self.0.kind()
    }
    fn adapter(&self) -> String {
        self.0.adapter()
    }
    fn step(&mut self, n: u64) -> talus::Result<()> {
        self.0.step(n)
    }
    fn steps_done(&self) -> u64 {
        self.0.steps_done()
    }
    fn snapshot(&mut self) -> talus::Result<talus::Snapshot> {
        self.0.snapshot()
    }
    fn energies(&mut self) -> talus::Result<talus::Energies> {
        self.0.energies()
    }
    fn wall_loads(&mut self) -> talus::Result<Vec<talus::backend::WallLoad>> {
        self.0.wall_loads()
    }
    fn contact_count(&mut self) -> talus::Result<u64> {
        self.0.contact_count()
    }
    fn export_state(&mut self) -> talus::Result<talus::model::state::ParticleState> {
        self.0.export_state()
    }
    fn import_state(&mut self, state: &talus::model::state::ParticleState) -> talus::Result<()> {
        self.0.import_state(state)
    }
    fn set_carried(&mut self, carried: talus::Energies) {
        self.0.set_carried(carried)
    }
    fn carried(&self) -> talus::Energies {
        self.0.carried()
    }
    fn export_exact(&mut self) -> talus::Result<talus::model::state::ExactState> {
        self.0.export_exact()
    }
    fn import_exact(&mut self, exact: &talus::model::state::ExactState) -> talus::Result<()> {
        self.0.import_exact(exact)
    }
}
