//! The interface both step loops implement, and the quantities they report.

use crate::error::Result;
use crate::model::state::{ExactState, ParticleState};
use crate::model::exchange::{ExchangeChange, ExchangeQuery, ExchangeView};

/// Energy partitions, J. Work partitions (`slip`, `dashpot`, `stiffness_work`, `wall_work`) are
/// cumulative since step 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Energies {
    /// Σ ½ m v²
    pub kinetic_translational: f64,
    /// Σ ½ I ω²
    pub kinetic_rotational: f64,
    /// −Σ m g·x (zero at the origin)
    pub gravitational: f64,
    /// Spring energy stored in active contacts, spec eq (15).
    pub strain: f64,
    /// Energy dissipated by frictional slip since the start, spec eq (16).
    pub slip: f64,
    /// Energy dissipated by dashpots since the start, spec eq (17).
    pub dashpot: f64,
    /// Energy shear springs lost to changes of their stiffness at fixed force since the start
    /// (hertz-pfc eqs 8–9, Mindlin k_t ∝ √δ; zero for constant-stiffness springs). Negative when
    /// springs softened under load more than they stiffened (hz_mode 0 unloading).
    pub stiffness_work: f64,
    /// Surface energy of the bonded contacts, U_a of each (`contact::adhesion`; zero at touch,
    /// so negative while adhesion pulls surfaces into each other). Zero without adhesion.
    pub surface: f64,
    /// Energy bonds gave up when they broke since the start (a JKR neck at its break gap, a
    /// capillary bridge at rupture: their surface energy then). Zero without adhesion.
    pub bond_break: f64,
    /// Work moving walls did on the particles since the start (−F_wall·u Δt per contact and
    /// step, u the wall's surface velocity; zero for fixed walls).
    pub wall_work: f64,
    /// Mechanical energy inserted particles brought in since the start (kinetic + gravitational;
    /// they touch nothing when placed).
    pub inserted: f64,
    /// Mechanical energy that left with the particles outlets removed since the start: theirs,
    /// and the strain of the contacts their removal ended.
    pub removed: f64,
}

impl Energies {
    pub fn kinetic(&self) -> f64 {
        self.kinetic_translational + self.kinetic_rotational
    }
    /// Mechanical energy held by the system: kinetic + gravitational + strain (+ surface,
    /// with adhesion).
    pub fn mechanical(&self) -> f64 {
        let held = self.kinetic() + self.gravitational + self.strain;
        // a dry run's sums keep their bits (no +0 added)
        if self.surface != 0.0 { held + self.surface } else { held }
    }
    /// Energy that left the mechanical partitions through the contacts: slip + dashpot +
    /// stiffness work (+ bond break, with adhesion).
    pub fn dissipated(&self) -> f64 {
        let lost = self.slip + self.dashpot + self.stiffness_work;
        if self.bond_break != 0.0 { lost + self.bond_break } else { lost }
    }
    /// Energy balance: mechanical + dissipated − wall work − inserted + removed. Constant up
    /// to integration error.
    pub fn total(&self) -> f64 {
        self.mechanical() + self.dissipated() - self.wall_work - self.inserted + self.removed
    }
}

/// Particle state at a step, f64 SoA, indexed by particle id.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    pub step: u64,
    pub time: f64,
    /// Positions, unwrapped on periodic axes (continuous in time; `Setup::wrap` puts them
    /// back into the domain).
    pub position: Vec<[f64; 3]>,
    pub velocity: Vec<[f64; 3]>,
    pub angular_velocity: Vec<[f64; 3]>,
    /// Sum of contact forces on each particle (gravity excluded), N.
    pub force: Vec<[f64; 3]>,
    /// Sum of contact torques on each particle, N·m.
    pub torque: Vec<[f64; 3]>,
    pub radius: Vec<f64>,
    /// The rigid bodies (empty without clumps): the VTU carries each component's `body_id`,
    /// and the run writes the bodies' file beside it (`output::bodies_csv`).
    pub bodies: crate::model::body::Bodies,
}

/// What the contacts put on one wall in the last step: force on the wall (N) and torque on the
/// wall about its `load_point` (N·m).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WallLoad {
    pub force: [f64; 3],
    pub torque: [f64; 3],
}

/// A step loop: CPU reference or GPU.
pub trait Backend {
    /// "cpu" or "gpu".
    fn kind(&self) -> &'static str;
    /// Human-readable device description (adapter name, thread count, …).
    fn adapter(&self) -> String;
    /// How the backend laid out a large set-up, when that is worth a line (the GPU's arrays split
    /// across storage bindings, `gpu::split`); `None` otherwise.
    fn layout_note(&self) -> Option<String> {
        None
    }
    /// Advance `n` steps. The GPU backend submits them without host round-trips.
    fn step(&mut self, n: u64) -> Result<()>;
    /// Steps taken since the set-up's initial state.
    fn steps_done(&self) -> u64;
    /// Read particle state (GPU: one readback).
    fn snapshot(&mut self) -> Result<Snapshot>;
    /// Read the energy partitions (GPU: reduced on the device, one small readback).
    fn energies(&mut self) -> Result<Energies>;
    /// Force and torque on every wall in the last step: the plane walls (`Setup::walls` order),
    /// then the mesh walls (`Setup::meshes` order) (GPU: reduced on the device, one small
    /// readback).
    fn wall_loads(&mut self) -> Result<Vec<WallLoad>>;
    /// Number of active contacts (ball–ball and ball–wall) after the last step.
    fn contact_count(&mut self) -> Result<u64>;
    /// The whole state at the current step (GPU: one readback), history sorted.
    fn export_state(&mut self) -> Result<ParticleState>;
    /// Continue from `state` at its step (particle count may differ; the state may come from
    /// the other backend): per-particle work accumulators restart at zero (set the running
    /// totals with `set_carried`); forces, strain and contact counts are re-evaluated with
    /// Δt = 0 from the imported history, except that particles not marked `refresh` keep the
    /// state's force and torque.
    fn import_state(&mut self, state: &ParticleState) -> Result<()>;
    /// Cumulative partitions (`slip`, `dashpot`, `stiffness_work`, `bond_break`, `wall_work`, `inserted`,
    /// `removed`) to add to the per-particle sums in `energies`; the others are ignored.
    fn set_carried(&mut self, carried: Energies);
    /// The cumulative partitions last given to `set_carried`.
    fn carried(&self) -> Energies;
    /// What `export_state` leaves out and a checkpoint keeps: every particle's cumulative work
    /// and the backend's own arrays (GPU: the f32 particle buffers, Kahan pairs and unfolded
    /// per-step work; CPU: strain and contact counts), so that the same kind of backend
    /// continues bit for bit.
    fn export_exact(&mut self) -> Result<ExactState>;
    /// Right after `import_state` of the state `exact` was exported with: restore it, bit for
    /// bit when it comes from a backend of this kind, else the per-particle work only (the
    /// other backend's precision).
    fn import_exact(&mut self, exact: &ExactState) -> Result<()>;
    /// An exchange without the whole state (`model::exchange`): the particles `query` asks
    /// for (more may come, never fewer), or `None` when this backend exchanges through
    /// `export_state` and `import_state` (the CPU backend; the GPU backend with rigid bodies).
    fn exchange_view(&mut self, _query: &ExchangeQuery) -> Result<Option<ExchangeView>> {
        Ok(None)
    }
    /// After `exchange_view` answered: remove and append as `change` says, then evaluate
    /// forces as `import_state` does (the state `export_state` would give, changed by
    /// `ExchangeChange::apply_to`, imported).
    fn apply_exchange(&mut self, change: &ExchangeChange) -> Result<()> {
        let mut state = self.export_state()?;
        change.apply_to(&mut state);
        self.import_state(&state)
    }
}

impl Energies {
    /// The cumulative partitions of `carried` added to these (see `Backend::set_carried`).
    pub fn plus_carried(mut self, carried: &Energies) -> Energies {
        self.slip += carried.slip;
        self.dashpot += carried.dashpot;
        self.stiffness_work += carried.stiffness_work;
        self.bond_break += carried.bond_break;
        self.wall_work += carried.wall_work;
        self.inserted += carried.inserted;
        self.removed += carried.removed;
        self
    }
}
