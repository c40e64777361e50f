//! `talus verify`: run the f64 CPU reference and the f32 GPU step loop from the same `Setup`
//! side by side and compare them at checkpoints. Tolerances and their reasons are in
//! docs/verification.md.
//!
//! Checkpoints: step 0, the end of the early window (`Tolerances::early_steps`), every
//! `output_every` steps, and the last step. Each quantity's deviation is measured absolutely and
//! relative to a scale:
//! - positions: the smallest particle radius;
//! - velocities / angular velocities: the largest speed / angular speed seen so far (both backends);
//! - contact forces / torques (per-particle sums): the largest magnitude seen so far;
//! - each energy partition: itself (the larger of the two backends' values), but at least
//!   `ENERGY_FLOOR` × the active energy (kinetic + strain + dissipated + |wall work|, largest so
//!   far). The gravitational energy depends on the datum, so the partitions that hold it
//!   (gravitational, mechanical, total) are compared by their change since the start (`FROM_START`).
//!
//! Particle state diverges in chaotic many-body flow (f32 vs f64 rounding is amplified by every
//! collision), so state quantities are checked over the early window only and reported for the
//! whole run for information. Energies are checked in two windows:
//! - **while the runs are one trajectory** (`Window::Coherent`: at every checkpoint so far their
//!   state is within the early window's tolerances and their positions within
//!   `Tolerances::phase` of a step's travel), every partition at every checkpoint, with what f32
//!   rounding can move (`rounding_work`, `value_resolution`) added to what each may differ by;
//! - **after they have parted** (`Window::Parted`), the two runs are two samples of the same
//!   flow: each partition's mean over the parted checkpoints, within `Tolerances::statistical`
//!   of the larger mean, at least `STATISTICAL_FLOOR` × the mean active energy.

use std::fmt;

use crate::backend::{Backend, Energies, Snapshot};
use crate::cpu::CpuBackend;
use crate::error::Result;
use crate::flow::FlowDriver;
use crate::gpu::{GpuBackend, GpuOptions};
use crate::setup::Setup;

/// Pass/fail limits, all relative to the scales in the module docs.
#[derive(Clone, Debug, PartialEq)]
pub struct Tolerances {
    /// Steps over which particle state (positions, velocities, forces) must agree.
    pub early_steps: u64,
    /// Position deviation / min radius.
    pub position: f64,
    /// Velocity deviation / max speed seen.
    pub velocity: f64,
    /// Angular velocity deviation / max angular speed seen.
    pub angular_velocity: f64,
    /// Contact force deviation / max force magnitude seen (torques likewise).
    pub force: f64,
    /// Position deviation / a step's travel (largest speed seen × Δt) up to which the runs are
    /// one trajectory (`coherent_checkpoints`): beyond it their impacts begin at other phases of
    /// a step, which books a different dissipation even in f64 (docs/verification.md).
    pub phase: f64,
    /// Energy partition deviation / max(|partition|, ENERGY_FLOOR × active energy), at every
    /// checkpoint while the runs are one trajectory (beyond the f32 rounding work).
    pub energy: f64,
    /// Deviation of a partition's mean over the checkpoints after the runs parted / max(|mean|,
    /// STATISTICAL_FLOOR × mean active energy) (beyond the f32 rounding work).
    pub statistical: f64,
}

impl Tolerances {
    /// The state tolerances in `STATE` order: position, velocity, angular velocity, force, torque.
    pub fn state(&self) -> [f64; 5] {
        [self.position, self.velocity, self.angular_velocity, self.force, self.force]
    }
}

impl Default for Tolerances {
    fn default() -> Self {
        Tolerances { early_steps: 100, position: 1e-3, velocity: 1e-2, angular_velocity: 5e-2, force: 5e-2, phase: 1e-2, energy: 1e-2, statistical: 5e-2 }
    }
}

/// Which steps a row covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Window {
    /// Steps 0 ..= early_steps (checked for state quantities).
    Early,
    /// All checkpoints (state quantities, reported).
    Whole,
    /// The checkpoints up to the last at which the runs are still one trajectory (energies).
    Coherent,
    /// The means over the checkpoints after the runs parted (energies; only when they did).
    Parted,
}

/// The largest deviation of one quantity.
#[derive(Clone, Debug, PartialEq)]
pub struct Deviation {
    pub quantity: &'static str,
    /// What `max_rel` is relative to.
    pub scale: &'static str,
    pub window: Window,
    pub max_abs: f64,
    pub max_rel: f64,
    /// Step where `max_rel` occurred.
    pub at_step: u64,
    /// `None` = reported, not checked.
    pub tolerance: Option<f64>,
}

impl Deviation {
    fn new(quantity: &'static str, scale: &'static str, window: Window, tolerance: Option<f64>) -> Self {
        Deviation { quantity, scale, window, max_abs: 0.0, max_rel: 0.0, at_step: 0, tolerance }
    }
    fn record(&mut self, abs: f64, scale: f64, step: u64) {
        let rel = relative(abs, scale);
        self.max_abs = self.max_abs.max(abs);
        if rel > self.max_rel || rel.is_nan() {
            self.max_rel = rel;
            self.at_step = step;
        }
    }
    /// Within tolerance (always true for unchecked rows). NaN fails.
    pub fn ok(&self) -> bool {
        match self.tolerance {
            None => true,
            Some(t) => self.max_rel <= t,
        }
    }
}

/// `abs` / `scale`: 0 for no deviation, infinite for a deviation of a zero scale, NaN for NaN.
fn relative(abs: f64, scale: f64) -> f64 {
    if abs == 0.0 {
        0.0
    } else if scale > 0.0 {
        abs / scale
    } else {
        f64::INFINITY
    }
}

/// Result of `verify`.
#[derive(Clone, Debug)]
pub struct VerifyReport {
    pub scene: String,
    pub particles: usize,
    pub steps: u64,
    pub checkpoints: Vec<u64>,
    pub cpu_adapter: String,
    pub gpu_adapter: String,
    pub tolerances: Tolerances,
    pub rows: Vec<Deviation>,
    /// Active contacts at the last checkpoint (CPU, GPU); reported, not checked.
    pub final_contacts: (u64, u64),
    /// The first checkpoint at which the runs were no longer one trajectory
    /// (`TracePoint::one_trajectory`); `None` when they stayed one.
    pub parted_at: Option<u64>,
    /// Both backends' energies at every checkpoint (`talus verify --trace` writes it).
    pub trace: Vec<TracePoint>,
    /// Whether the scene has adhesion: only then are its `surface` and `bond_break`
    /// partitions compared and traced (a dry scene's report is as before).
    pub adhesion: bool,
}

/// One checkpoint of a verify run.
#[derive(Clone, Debug, PartialEq)]
pub struct TracePoint {
    pub step: u64,
    /// Largest |x_reference − x_other| over particles (m; NaN when the counts differ).
    pub position_deviation: f64,
    /// This checkpoint's deviations of position, velocity, angular velocity, force and torque,
    /// each relative to its scale (the state rows' `STATE` order).
    pub state: [f64; 5],
    /// The position deviation relative to a step's travel (largest speed seen × Δt); 0 while
    /// it is within f32's rounding of the coordinates (`F32_ROUNDOFF` × 4 `coordinate`).
    pub phase: f64,
    /// The active energy so far (the energy rows' floor is a fraction of it).
    pub active_energy: f64,
    /// Largest |x| over particles, either backend (m): f32 resolves a coordinate to 2⁻²⁴ of it.
    pub coordinate: f64,
    /// Σ over particles of |contact force|, the larger of the two backends, plus the particles'
    /// weight (with the densest material's density) (N).
    pub force_sum: f64,
    pub reference: Energies,
    pub other: Energies,
}

impl VerifyReport {
    pub fn passed(&self) -> bool {
        self.rows.iter().all(Deviation::ok)
    }
    /// The rows beyond tolerance.
    pub fn failures(&self) -> Vec<&Deviation> {
        self.rows.iter().filter(|r| !r.ok()).collect()
    }
    /// The last checkpoint at which the runs were still one trajectory.
    pub fn coherent_until(&self) -> u64 {
        let first_parted = self.trace.iter().position(|t| Some(t.step) == self.parted_at).unwrap_or(self.trace.len());
        first_parted.checked_sub(1).map_or(0, |k| self.trace[k].step)
    }
    pub fn row(&self, quantity: &str, window: Window) -> Option<&Deviation> {
        self.rows.iter().find(|r| r.quantity == quantity && r.window == window)
    }
    /// The trace as CSV: step, position deviation (m), it relative to a step's travel
    /// (`TracePoint::phase`), active energy (J), largest coordinate (m), Σ|contact force| +
    /// weight (N), the f32 rounding work so far (J, `rounding_work`), then each energy
    /// partition of the reference and of the other backend (`<partition>_<kind>`).
    pub fn trace_csv(&self, kinds: (&str, &str)) -> String {
        let kept = |q: &str| self.adhesion || !ADHESION_PARTITIONS.contains(&q);
        let names: Vec<&str> = partitions(&Energies::default()).iter().map(|(q, _)| *q).filter(|q| kept(q)).collect();
        let mut out = String::from("step,position_deviation,phase,active_energy,coordinate,force_sum,rounding_work");
        for q in &names {
            out += &format!(",{q}_{},{q}_{}", kinds.0, kinds.1);
        }
        out.push('\n');
        for (t, w) in self.trace.iter().zip(rounding_work(&self.trace)) {
            out += &format!("{},{:e},{:e},{:e},{:e},{:e},{w:e}", t.step, t.position_deviation, t.phase, t.active_energy, t.coordinate, t.force_sum);
            for ((_, a), (_, b)) in partitions(&t.reference).iter().zip(partitions(&t.other).iter()).filter(|((q, _), _)| kept(q)) {
                out += &format!(",{a:e},{b:e}");
            }
            out.push('\n');
        }
        out
    }
}

impl fmt::Display for VerifyReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "verify {}: {} particles, {} steps, {} checkpoints", self.scene, self.particles, self.steps, self.checkpoints.len())?;
        writeln!(f, "  cpu: {}", self.cpu_adapter)?;
        writeln!(f, "  gpu: {}", self.gpu_adapter)?;
        writeln!(
            f,
            "{:<22} {:<10} {:<38} {:>12} {:>12} {:>8} {:>10}  result",
            "quantity", "steps", "relative to", "max abs", "max rel", "at step", "tolerance"
        )?;
        for r in &self.rows {
            let window = match r.window {
                Window::Early => format!("0..={}", self.tolerances.early_steps.min(self.steps)),
                Window::Whole => "all".to_string(),
                Window::Coherent => format!("0..={}", self.coherent_until()),
                Window::Parted => format!("{}.. mean", self.parted_at.unwrap_or(0)),
            };
            let (tol, result) = match r.tolerance {
                Some(t) => (format!("{t:.1e}"), if r.ok() { "ok" } else { "FAIL" }),
                None => ("-".to_string(), "info"),
            };
            writeln!(
                f,
                "{:<22} {:<10} {:<38} {:>12.3e} {:>12.3e} {:>8} {:>10}  {}",
                r.quantity, window, r.scale, r.max_abs, r.max_rel, r.at_step, tol, result
            )?;
        }
        writeln!(f, "contacts at the end: cpu {}, gpu {}", self.final_contacts.0, self.final_contacts.1)?;
        match self.trace.iter().find(|t| Some(t.step) == self.parted_at) {
            Some(t) => {
                writeln!(f, "one trajectory to step {}; parted by step {} (beyond tolerance: {}): energies compared as means after", self.coherent_until(), t.step, t.beyond(&self.tolerances).join(", "))?
            }
            None => writeln!(f, "one trajectory to the end (state within the early window's tolerances, positions within {:.0e} of a step's travel)", self.tolerances.phase)?,
        }
        write!(f, "{}", if self.passed() { "PASS" } else { "FAIL" })
    }
}

fn norm(v: [f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

fn max_norm(v: &[[f64; 3]]) -> f64 {
    v.iter().map(|&x| norm(x)).fold(0.0, f64::max)
}

/// Largest |a_i − b_i| over particles (NaN when the backends hold different particle counts,
/// which fails every row).
fn max_diff(a: &[[f64; 3]], b: &[[f64; 3]]) -> f64 {
    if a.len() != b.len() {
        return f64::NAN;
    }
    a.iter().zip(b).map(|(x, y)| norm([x[0] - y[0], x[1] - y[1], x[2] - y[2]])).fold(0.0, |m, d| if d.is_nan() { f64::NAN } else { m.max(d) })
}

/// The partitions a scene has only with adhesion (`VerifyReport::adhesion`).
const ADHESION_PARTITIONS: [&str; 2] = ["surface", "bond_break"];

/// Energy partitions compared (`partitions`).
const PARTITIONS: usize = 15;

/// Energy partitions by name (the derived `total` last).
fn partitions(e: &Energies) -> [(&'static str, f64); PARTITIONS] {
    [
        ("kinetic", e.kinetic()),
        ("kinetic_translational", e.kinetic_translational),
        ("kinetic_rotational", e.kinetic_rotational),
        ("gravitational", e.gravitational),
        ("strain", e.strain),
        ("slip", e.slip),
        ("dashpot", e.dashpot),
        ("stiffness_work", e.stiffness_work),
        ("surface", e.surface),
        ("bond_break", e.bond_break),
        ("wall_work", e.wall_work),
        ("inserted", e.inserted),
        ("removed", e.removed),
        ("mechanical", e.mechanical()),
        ("total", e.total()),
    ]
}

/// Σ over particles of |v|.
fn sum_norm(v: &[[f64; 3]]) -> f64 {
    v.iter().map(|&x| norm(x)).sum()
}

/// How many checkpoints from the first the runs are one trajectory (`TracePoint::one_trajectory`;
/// a NaN deviation, from different particle counts, ends it).
pub fn coherent_checkpoints(trace: &[TracePoint], tol: &Tolerances) -> usize {
    trace.iter().take_while(|t| t.one_trajectory(tol)).count()
}

impl TracePoint {
    /// Whether the runs are still one trajectory at this checkpoint: its state within the
    /// early window's tolerances, its positions within `Tolerances::phase` of a step's travel.
    pub fn one_trajectory(&self, tol: &Tolerances) -> bool {
        self.beyond(tol).is_empty()
    }

    /// The quantities beyond their tolerance at this checkpoint (`one_trajectory`; a NaN
    /// deviation counts as beyond).
    pub fn beyond(&self, tol: &Tolerances) -> Vec<&'static str> {
        let within = |d: f64, limit: f64| d <= limit;
        let mut out: Vec<&'static str> = STATE.iter().zip(self.state.iter().zip(tol.state())).filter(|(_, (d, l))| !within(**d, *l)).map(|((q, _), _)| *q).collect();
        if !within(self.phase, tol.phase) {
            out.push("position / a step's travel");
        }
        out
    }
}

/// f32's unit roundoff, 2⁻²⁴: a coordinate x is held to within this fraction of |x|.
pub const F32_ROUNDOFF: f64 = 1.0 / 16_777_216.0;

/// The work the f32 rounding of the motion can do, up to each checkpoint (J): what no
/// partition books and an f64 reference has none of (to 1e-9 of it). Two parts:
/// - **coordinates**: every drift rounds each coordinate to within 2⁻²⁴ |x|, which moves each
///   contact's overlap (and each particle's height) that far off the drift the step computed,
///   and the contact forces and weights do work over it: at most 2⁻²⁴ X Σ|F| per step (X the
///   largest coordinate, Σ|F| over the particles' contact forces and weights). The drift changes
///   by many roundings from one step to the next, so these roundings are independent and add as
///   a random walk: 2⁻²⁴ √(Σ_steps (X Σ|F|)²);
/// - **velocities**: every half kick rounds each velocity to within 2⁻²⁴ |v|, which changes the
///   kinetic energy by up to 2⁻²⁴ m v² = 2⁻²³ of the particle's: 2⁻²² E_kin per step. Under a
///   steady acceleration (a free fall) each kick adds the same increment to a velocity on the
///   f32 grid and rounds it the same way, so these add up linearly: 2⁻²² Σ_steps E_kin.
///
/// Each interval between checkpoints is taken at the larger of its two ends.
pub fn rounding_work(trace: &[TracePoint]) -> Vec<f64> {
    let (mut squares, mut kinetic) = (0.0, 0.0);
    let mut out = Vec::with_capacity(trace.len());
    for (k, t) in trace.iter().enumerate() {
        if k > 0 {
            let prev = &trace[k - 1];
            let steps = (t.step - prev.step) as f64;
            let per_step = (prev.coordinate * prev.force_sum).max(t.coordinate * t.force_sum);
            squares += steps * per_step * per_step;
            let e_kin = |p: &TracePoint| p.reference.kinetic().max(p.other.kinetic());
            kinetic += steps * e_kin(prev).max(e_kin(t));
        }
        out.push(F32_ROUNDOFF * (squares.sqrt() + 4.0 * kinetic));
    }
    out
}

/// How finely f32 resolves an energy partition of magnitude `e`: the GPU forms it per particle
/// in f32 and sums the particles in f32 within each workgroup, a few roundings of 2⁻²⁴ of the
/// total each: 2⁻²² |e|.
pub fn value_resolution(e: f64) -> f64 {
    4.0 * F32_ROUNDOFF * e.abs()
}

/// `value_resolution` of each partition at checkpoint `t` (the larger of the two backends'
/// values), and of its value at `start` for a partition compared by its change since then.
fn held(t: &TracePoint, start: &TracePoint) -> [f64; PARTITIONS] {
    let (pa, pb, p0) = (partitions(&t.reference), partitions(&t.other), partitions(&start.other));
    std::array::from_fn(|k| {
        let at_start = if FROM_START.contains(&pa[k].0) { value_resolution(p0[k].1) } else { 0.0 };
        value_resolution(pa[k].1.abs().max(pb[k].1.abs())) + at_start
    })
}

/// The scale of the energy rows while the runs are one trajectory (|E| is |E − E(start)| for
/// the partitions that depend on the datum, `FROM_START`).
const COHERENT_SCALE: &str = "max(|E|,1e-3 E_a)+W_f32/tol";
/// The scale of the energy rows after the runs parted.
const PARTED_SCALE: &str = "max(|mean E|,1e-2 mean E_a)+W_f32/tol";

/// The partitions that contain the gravitational energy, whose datum (the origin) is arbitrary:
/// they are compared, and sized in their scale, by their change since the start of the
/// comparison, not by their value (which the choice of origin could make as large or as small as
/// it likes: the mechanical energy of a chute passes through zero on its way down; and f32's
/// rounding of the starting heights would stand as a constant offset between the backends).
const FROM_START: [&str; 3] = ["gravitational", "mechanical", "total"];

/// Each partition's value in `e`, less its value in `start` for those of `FROM_START`: what the
/// energy rows compare.
fn sizes(e: &Energies, start: &Energies) -> [f64; PARTITIONS] {
    let (now, then) = (partitions(e), partitions(start));
    std::array::from_fn(|k| if FROM_START.contains(&now[k].0) { now[k].1 - then[k].1 } else { now[k].1 })
}

/// After the runs parted, a partition's mean below this fraction of the mean active energy is
/// judged against that fraction: a partition that small is mostly what the checkpoints happen to
/// catch of brief events (the strain of impacts a few steps long, sampled every output), and
/// two samples of the same flow differ in it by more than its own 5 %.
pub const STATISTICAL_FLOOR: f64 = 1e-2;

/// Every partition at every checkpoint of `coherent` (the checkpoints while the runs are one
/// trajectory): |E_a − E_b| ≤ tol × max(|E|, ENERGY_FLOOR × E_active) + W_f32, recorded relative
/// to max(|E|, ENERGY_FLOOR E_active) + W_f32/tol; E is the change since `start` for
/// `FROM_START`. W_f32 = `rounding_work` + `value_resolution` of the partition.
fn coherent_energy_rows(coherent: &[TracePoint], work: &[f64], start: &TracePoint, tol: &Tolerances) -> Vec<Deviation> {
    let mut rows: Vec<Deviation> = partitions(&Energies::default()).iter().map(|(q, _)| Deviation::new(q, COHERENT_SCALE, Window::Coherent, Some(tol.energy))).collect();
    for (t, w) in coherent.iter().zip(work) {
        let (sa, sb, h) = (sizes(&t.reference, &start.reference), sizes(&t.other, &start.other), held(t, start));
        for (k, row) in rows.iter_mut().enumerate() {
            let scale = sa[k].abs().max(sb[k].abs()).max(ENERGY_FLOOR * t.active_energy) + (w + h[k]) / tol.energy;
            row.record((sa[k] - sb[k]).abs(), scale, t.step);
        }
    }
    rows
}

/// Each partition's mean over `parted` (the checkpoints after the runs parted), the two
/// runs' means within `Tolerances::statistical` of max(|mean|, STATISTICAL_FLOOR × mean active
/// energy) (the mean change since `start` for `FROM_START`), beyond the mean W_f32 (`work`, the
/// run's `rounding_work` at these checkpoints, and `value_resolution`). The row's step is the
/// last checkpoint.
fn parted_energy_rows(parted: &[TracePoint], work: &[f64], start: &TracePoint, tol: &Tolerances) -> Vec<Deviation> {
    let n = parted.len().max(1) as f64;
    let active = parted.iter().map(|t| t.active_energy).sum::<f64>() / n;
    let last = parted.last().map_or(0, |t| t.step);
    // the means of both runs' partitions and of the f32 allowance (rounding goes on after the
    // runs part), formed in one pass over the checkpoints
    let (mut ma, mut mb, mut allowance) = ([0.0; PARTITIONS], [0.0; PARTITIONS], [0.0; PARTITIONS]);
    for (t, w) in parted.iter().zip(work) {
        let (sa, sb, h) = (sizes(&t.reference, &start.reference), sizes(&t.other, &start.other), held(t, start));
        for k in 0..PARTITIONS {
            ma[k] += sa[k] / n;
            mb[k] += sb[k] / n;
            allowance[k] += (w + h[k]) / n;
        }
    }
    partitions(&Energies::default())
        .iter()
        .enumerate()
        .map(|(k, (q, _))| {
            let (ma, mb, f32_allowance) = (ma[k], mb[k], allowance[k]);
            let mut row = Deviation::new(q, PARTED_SCALE, Window::Parted, Some(tol.statistical));
            row.record((ma - mb).abs(), ma.abs().max(mb.abs()).max(STATISTICAL_FLOOR * active) + f32_allowance / tol.statistical, last);
            row
        })
        .collect()
}

/// The steps at which `verify` compares the backends.
pub fn checkpoints(steps: u64, output_every: u64, early_steps: u64) -> Vec<u64> {
    let every = output_every.max(1);
    let mut c: Vec<u64> = (0..=steps / every).map(|k| k * every).collect();
    c.push(early_steps.min(steps));
    c.push(steps);
    c.sort_unstable();
    c.dedup();
    c
}

/// Index of the state rows in `VerifyReport::rows`: quantity name and scale description.
const STATE: [(&str, &str); 5] = [
    ("position", "min radius"),
    ("velocity", "max speed seen"),
    ("angular_velocity", "max angular speed seen"),
    ("force", "max force seen"),
    ("torque", "max torque seen"),
];

/// An energy partition below this fraction of the active energy (the largest kinetic + strain +
/// dissipated + |wall work| seen so far) is judged against that fraction instead of itself.
pub const ENERGY_FLOOR: f64 = 1e-3;

/// Run both backends for `steps` steps from `setup` and compare them (see the module docs).
/// Returns the report whether or not it passes; errors only when a backend fails.
pub fn verify(setup: &Setup, steps: u64, tolerances: &Tolerances) -> Result<VerifyReport> {
    let mut cpu = CpuBackend::new(setup)?;
    let mut gpu = GpuBackend::new(setup, GpuOptions::default())?;
    verify_backends(setup, &mut cpu, &mut gpu, steps, tolerances)
}

/// `verify` on two backends already opened at step 0 (reference first).
pub fn verify_backends(
    setup: &Setup,
    reference: &mut dyn Backend,
    other: &mut dyn Backend,
    steps: u64,
    tol: &Tolerances,
) -> Result<VerifyReport> {
    let flows = (FlowDriver::new(setup)?, FlowDriver::new(setup)?);
    verify_from(setup, reference, other, flows, steps, tol)
}

/// `verify` on two backends that hold the same state at the same step (e.g. both resumed from
/// one checkpoint), with their insertions and outlets where they were (`flows`, one driver per
/// backend): checkpoints and the early window count from that step.
pub fn verify_from(
    setup: &Setup,
    reference: &mut dyn Backend,
    other: &mut dyn Backend,
    mut flows: (Option<FlowDriver>, Option<FlowDriver>),
    steps: u64,
    tol: &Tolerances,
) -> Result<VerifyReport> {
    let start = reference.steps_done();
    if other.steps_done() != start {
        return Err(crate::error::TalusError::Verify(format!("the backends are at steps {start} and {}", other.steps_done())));
    }
    let state_tol = tol.state();
    let mut rows: Vec<Deviation> = Vec::new();
    for ((q, scale), t) in STATE.iter().zip(state_tol) {
        rows.push(Deviation::new(q, scale, Window::Early, Some(t)));
    }
    for (q, scale) in STATE {
        rows.push(Deviation::new(q, scale, Window::Whole, None));
    }
    let n_state = rows.len();

    let inserted_min = setup.inserts.iter().map(|s| s.radius.min());
    let min_radius = setup.particles.radius.iter().cloned().chain(inserted_min).fold(f64::INFINITY, f64::min);
    let min_radius = if min_radius.is_finite() { min_radius } else { 0.0 };
    let mut seen = [0.0f64; 5]; // max speed, angular speed, force, torque (index 1..)
    // the particles' weight, bounded with the densest material (gravity does work over the
    // roundings of the coordinates as contact forces do)
    let weight_per_volume = norm(setup.gravity) * setup.materials.iter().map(|m| m.density).fold(0.0, f64::max);
    let points: Vec<u64> = checkpoints(steps, setup.output_every, tol.early_steps).into_iter().map(|c| start + c).collect();
    let mut final_contacts = (0, 0);
    let mut active_energy: f64 = 0.0;
    let mut trace = Vec::with_capacity(points.len());
    // insertions and outlets act at output boundaries, as in `run_scene`, on each backend
    for &step in &points {
        let ahead = step - reference.steps_done();
        if ahead > 0 {
            reference.step(ahead)?;
            other.step(step - other.steps_done())?;
        }
        if let (Some(fa), Some(fb)) = (&mut flows.0, &mut flows.1) {
            if step > start && step % setup.output_every.max(1) == 0 {
                fa.exchange(setup, reference)?;
                fb.exchange(setup, other)?;
            }
        }
        let a: Snapshot = reference.snapshot()?;
        let b: Snapshot = other.snapshot()?;
        let fields: [(&[[f64; 3]], &[[f64; 3]]); 5] = [
            (&a.position, &b.position),
            (&a.velocity, &b.velocity),
            (&a.angular_velocity, &b.angular_velocity),
            (&a.force, &b.force),
            (&a.torque, &b.torque),
        ];
        let mut state = [0.0; 5];
        let mut position_deviation = 0.0;
        for (k, (x, y)) in fields.iter().enumerate() {
            let scale = if k == 0 {
                min_radius
            } else {
                seen[k] = seen[k].max(max_norm(x)).max(max_norm(y));
                seen[k]
            };
            let d = max_diff(x, y);
            if k == 0 {
                position_deviation = d;
            }
            state[k] = relative(d, scale);
            if step - start <= tol.early_steps {
                rows[k].record(d, scale, step);
            }
            rows[n_state / 2 + k].record(d, scale, step);
        }
        let (ea, eb) = (reference.energies()?, other.energies()?);
        active_energy = active_energy.max(ea.kinetic() + ea.strain + ea.slip + ea.dashpot + ea.stiffness_work.abs() + ea.surface.abs() + ea.bond_break + ea.wall_work.abs() + ea.inserted + ea.removed.abs());
        let coordinate = max_norm(&a.position).max(max_norm(&b.position));
        let phase = if position_deviation <= 4.0 * F32_ROUNDOFF * coordinate { 0.0 } else { relative(position_deviation, seen[1] * setup.dt) };
        let volume: f64 = a.radius.iter().map(|r| 4.0 / 3.0 * std::f64::consts::PI * r * r * r).sum();
        let force_sum = sum_norm(&a.force).max(sum_norm(&b.force)) + weight_per_volume * volume;
        trace.push(TracePoint { step, position_deviation, state, phase, active_energy, coordinate, force_sum, reference: ea, other: eb });
        if step == *points.last().unwrap_or(&0) {
            final_contacts = (reference.contact_count()?, other.contact_count()?);
        }
    }
    let parted = coherent_checkpoints(&trace, tol);
    let work = rounding_work(&trace);
    rows.extend(coherent_energy_rows(&trace[..parted], &work[..parted], &trace[0], tol));
    if parted < trace.len() {
        rows.extend(parted_energy_rows(&trace[parted..], &work[parted..], &trace[0], tol));
    }
    let adhesion = setup.has_adhesion();
    rows.retain(|r| adhesion || !ADHESION_PARTITIONS.contains(&r.quantity.as_ref()));
    Ok(VerifyReport {
        scene: setup.name.clone(),
        particles: setup.particles.len(),
        steps,
        checkpoints: points,
        cpu_adapter: format!("{} ({})", reference.kind(), reference.adapter()),
        gpu_adapter: format!("{} ({})", other.kind(), other.adapter()),
        tolerances: tol.clone(),
        rows,
        final_contacts,
        parted_at: trace.get(parted).map(|t| t.step),
        trace,
        adhesion,
    })
}
