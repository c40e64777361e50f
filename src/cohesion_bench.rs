//! `talus verify --benchmark cohesion`: the adhesion parts (issue 33) against analytic
//! two-body results, on every backend asked for, through the `Backend` trait only.
//!
//! 1. Quasi-static sweeps: a ball of huge mass (density `HEAVY_DENSITY`: its speed does not
//!    change measurably) driven at constant speed towards or away from a second one, or a
//!    plane wall; after every step the overlap comes from the snapshot's positions and the
//!    normal force from its `force`. JKR (force–overlap curve, pull-off force and where it
//!    occurs, the force at first touch, the break overlap), DMT (curve, pull-off), SJKR and
//!    SJKR2 (curve, equilibrium overlap, peak tension), the Willett capillary bridge (curve,
//!    force at contact, rupture distance); each as a pair and as a ball on a wall.
//! 2. Elastic adhesive impacts (JKR, no damping, no friction): restitution against
//!    e = √(1 − (V_s/V)²) at six speeds from 0.5 to 5 V_s, the sticking velocity, and the energy
//!    the breaking bonds book (`Energies::bond_break`) against the work of adhesion lost.
//!
//! The analytic values are formed here from the formulas of the literature (JKR through its
//! parametric form in the contact radius a, solved by bisection), not from
//! `contact::adhesion`, which is what is being checked. Materials, tolerances and the
//! sticking constant C are in docs/verification.md ("Benchmark against theory: adhesion").

use std::f64::consts::PI;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::json;

use crate::backend::{Backend, Snapshot};
use crate::chung_ooi::Opener;
use crate::error::{Result, TalusError};
use crate::setup::{Particles, Setup};

/// Ball radius (m), density (kg/m³), shear modulus (Pa) and Poisson's ratio.
pub const RADIUS: f64 = 0.01;
pub const DENSITY: f64 = 2500.0;
pub const SHEAR: f64 = 1e7;
pub const POISSON: f64 = 0.25;
/// Density of a driven ball: 1e12 times the others', so that a contact force changes its
/// speed by < 1e-12 of itself over a sweep.
pub const HEAVY_DENSITY: f64 = 2.5e15;
/// Surface energy γ (J/m²) of JKR and DMT; work of adhesion w = 2γ.
pub const GAMMA: f64 = 0.5;
/// Cohesion energy density k_c (J/m³) of SJKR and SJKR2.
pub const COHESION: f64 = 3e5;
/// Capillary bridge: liquid volume (m³), surface tension (N/m), contact angle (rad).
pub const LIQUID_VOLUME: f64 = 1e-9;
pub const SURFACE_TENSION: f64 = 0.072;
pub const CONTACT_ANGLE: f64 = 0.2;
/// Steps of a quasi-static sweep (one snapshot each).
pub const SWEEP_STEPS: u64 = 3000;
/// Impact speeds as multiples of V_s.
pub const IMPACT_FACTORS: [f64; 6] = [0.5, 0.8, 1.25, 2.0, 3.0, 5.0];
/// The restitution rows' names, one per `IMPACT_FACTORS`.
const IMPACT_LABELS: [&str; 6] = ["restitution at 0.5 V_s", "restitution at 0.8 V_s", "restitution at 1.25 V_s", "restitution at 2 V_s", "restitution at 3 V_s", "restitution at 5 V_s"];
/// Time step of the impacts (s).
pub const IMPACT_DT: f64 = 2e-6;

/// The sticking constant of Talus's rule (the bond forms at touch, breaks at δ_c):
/// V_s = C (F_c⁵/(E*² R* m*³))^{1/6} with C² = (8·2^{−4/3} + 12·2^{4/3}) / (5·3^{5/3}),
/// C = 1.03484… (docs/verification.md derives it).
pub fn sticking_constant() -> f64 {
    ((8.0 * 2f64.powf(-4.0 / 3.0) + 12.0 * 2f64.powf(4.0 / 3.0)) / (5.0 * 3f64.powf(5.0 / 3.0))).sqrt()
}

/// E* of two balls of the material (1/E* = Σ (1 − ν_i)/(2G_i)), also of a ball on a wall of
/// the same material.
pub fn e_star() -> f64 {
    1.0 / (2.0 * (1.0 - POISSON) / (2.0 * SHEAR))
}

fn ball_mass(density: f64) -> f64 {
    density * 4.0 / 3.0 * PI * RADIUS.powi(3)
}

/// Contact radius R* and reduced mass m* of a pair or a ball on a wall.
fn r_star(wall: bool) -> f64 {
    if wall { RADIUS } else { 0.5 * RADIUS }
}

fn m_star(wall: bool) -> f64 {
    if wall { ball_mass(DENSITY) } else { 0.5 * ball_mass(DENSITY) }
}

fn geometry(wall: bool) -> &'static str {
    if wall { "wall" } else { "pair" }
}

/// Hertz force (4/3) E* √R* δ^{3/2} (0 apart).
fn hertz(r: f64, delta: f64) -> f64 {
    let d = delta.max(0.0);
    4.0 / 3.0 * e_star() * r.sqrt() * d * d.sqrt()
}

// ---------------------------------------------------------------- analytic JKR

/// JKR of one geometry: δ(a) = a²/R* − 2β√a, F(a) = E*(4a³/(3R*) − 4β a^{3/2}), β = √(πγ/E*).
#[derive(Clone, Copy, Debug)]
pub struct Jkr {
    pub e: f64,
    pub r: f64,
    pub gamma: f64,
    pub beta: f64,
}

impl Jkr {
    pub fn new(e: f64, r: f64, gamma: f64) -> Jkr {
        Jkr { e, r, gamma, beta: (PI * gamma / e).sqrt() }
    }
    pub fn delta(&self, a: f64) -> f64 {
        a * a / self.r - 2.0 * self.beta * a.sqrt()
    }
    pub fn force(&self, a: f64) -> f64 {
        self.e * (4.0 * a.powi(3) / (3.0 * self.r) - 4.0 * self.beta * a.powf(1.5))
    }
    /// Work along the branch, U(a) = E*(8a⁵/(15R*²) − 8β a^{7/2}/(3R*) + 2β²a²).
    pub fn energy(&self, a: f64) -> f64 {
        self.e * (8.0 * a.powi(5) / (15.0 * self.r * self.r) - 8.0 * self.beta * a.powf(3.5) / (3.0 * self.r) + 2.0 * self.beta * self.beta * a * a)
    }
    /// Pull-off force F_c = 3πγR* (the largest tension).
    pub fn pulloff(&self) -> f64 {
        3.0 * PI * self.gamma * self.r
    }
    /// Contact radius at pull-off, (9πγR*²/(4E*))^{1/3}.
    pub fn pulloff_radius(&self) -> f64 {
        (9.0 * PI * self.gamma * self.r * self.r / (4.0 * self.e)).cbrt()
    }
    /// Contact radius at touch (δ = 0): a^{3/2} = 2βR*.
    pub fn touch_radius(&self) -> f64 {
        (2.0 * self.beta * self.r).powf(2.0 / 3.0)
    }
    /// Contact radius at the break (dδ/da = 0): a^{3/2} = βR*/2.
    pub fn break_radius(&self) -> f64 {
        (0.5 * self.beta * self.r).powf(2.0 / 3.0)
    }
    /// The least overlap, δ_c = −(3/4)(π² w² R*/E*²)^{1/3} with w = 2γ.
    pub fn break_overlap(&self) -> f64 {
        let w = 2.0 * self.gamma;
        -0.75 * (PI * PI * w * w * self.r / (self.e * self.e)).cbrt()
    }
    /// The contact radius at overlap δ on the stable branch (a ≥ a_c), by bisection.
    pub fn radius(&self, delta: f64) -> f64 {
        let mut lo = self.break_radius();
        let mut hi = 2.0 * lo;
        while self.delta(hi) < delta {
            hi *= 2.0;
        }
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if self.delta(mid) < delta {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    }
    pub fn force_at(&self, delta: f64) -> f64 {
        self.force(self.radius(delta))
    }
    /// Work of adhesion lost in an elastic impact, W = U(a_c) − U(a_0).
    pub fn impact_loss(&self) -> f64 {
        self.energy(self.break_radius()) - self.energy(self.touch_radius())
    }
}

/// Sticking velocity √(2W/m*).
pub fn sticking_velocity(j: &Jkr, m: f64) -> f64 {
    (2.0 * j.impact_loss() / m).sqrt()
}

// ---------------------------------------------------------------- analytic SJKR, capillary

/// Radius of the circle where spheres R_i, R_j (or a sphere and a plane, R_j = 0) intersect
/// at overlap δ, from the centre distance d: a² = R_i² − x², x = (d² + R_i² − R_j²)/(2d).
fn lens_radius2(ri: f64, rj: f64, delta: f64) -> f64 {
    if delta <= 0.0 {
        return 0.0;
    }
    let x = if rj == 0.0 {
        ri - delta
    } else {
        let d = ri + rj - delta;
        (d * d + ri * ri - rj * rj) / (2.0 * d)
    };
    ri * ri - x * x
}

/// The adhesive pull of SJKR (k_c π a²) or SJKR2 (k_c 2πδR*).
fn sjkr_pull(two: bool, wall: bool, delta: f64) -> f64 {
    if delta <= 0.0 {
        return 0.0;
    }
    if two {
        COHESION * 2.0 * PI * delta * r_star(wall)
    } else {
        COHESION * PI * lens_radius2(RADIUS, if wall { 0.0 } else { RADIUS }, delta)
    }
}

/// Normal force of SJKR(2) on `hertz_mindlin`: Hertz − the pull.
fn sjkr_force(two: bool, wall: bool, delta: f64) -> f64 {
    hertz(r_star(wall), delta) - sjkr_pull(two, wall, delta)
}

/// (equilibrium overlap, peak tension and its overlap) of SJKR(2): the root of the force
/// beyond touch by bisection, the largest pull − Hertz by golden section below it.
fn sjkr_theory(two: bool, wall: bool) -> (f64, f64, f64) {
    let f = |d: f64| sjkr_force(two, wall, d);
    let (mut lo, mut hi) = (1e-12, RADIUS * 1e-4);
    while f(hi) < 0.0 {
        hi *= 2.0;
    }
    for _ in 0..200 {
        let m = 0.5 * (lo + hi);
        if f(m) < 0.0 { lo = m } else { hi = m }
    }
    let eq = 0.5 * (lo + hi);
    let (mut a, mut b) = (0.0, eq);
    let g = 0.5 * (5f64.sqrt() - 1.0);
    for _ in 0..200 {
        let (c, d) = (b - g * (b - a), a + g * (b - a));
        if f(c) < f(d) { b = d } else { a = c }
    }
    let at = 0.5 * (a + b);
    (eq, -f(at), at)
}

/// Willett's bridge: R̄ = 2R* (the Derjaguin radius), F₀ = 2πR̄γ cosθ, F(S) = F₀/(1 + 1.05ŝ + 2.5ŝ²)
/// with ŝ = S√(R̄/V); tension, positive.
fn capillary_force(wall: bool, gap: f64) -> f64 {
    let rb = 2.0 * r_star(wall);
    let f0 = 2.0 * PI * rb * SURFACE_TENSION * CONTACT_ANGLE.cos();
    let s = gap.max(0.0) * (rb / LIQUID_VOLUME).sqrt();
    f0 / (1.0 + 1.05 * s + 2.5 * s * s)
}

/// Rupture distance (1 + θ/2) V^{1/3}.
fn rupture_gap() -> f64 {
    (1.0 + 0.5 * CONTACT_ANGLE) * LIQUID_VOLUME.cbrt()
}

// ---------------------------------------------------------------- report

/// One line of the table.
#[derive(Clone, Debug)]
pub struct Row {
    pub quantity: &'static str,
    pub model: &'static str,
    /// "pair" or "wall".
    pub geometry: &'static str,
    pub backend: &'static str,
    pub talus: f64,
    pub theory: f64,
    /// (Talus − theory) / max(|theory|, scale).
    pub rel_error: f64,
    pub tolerance: f64,
}

impl Row {
    pub fn passed(&self) -> bool {
        self.rel_error.abs() <= self.tolerance
    }
}

/// A point of a figure: (figure, series, backend, x, y); the series "theory" is the curve.
#[derive(Clone, Debug)]
pub struct Point {
    pub figure: &'static str,
    pub series: String,
    pub backend: &'static str,
    pub x: f64,
    pub y: f64,
}

#[derive(Clone, Debug, Default)]
pub struct Report {
    pub rows: Vec<Row>,
    pub points: Vec<Point>,
}

/// A tolerance for the CPU (f64) and for the GPU (f32).
#[derive(Clone, Copy, Debug)]
pub struct Tol {
    pub cpu: f64,
    pub gpu: f64,
}

impl Tol {
    fn of(self, backend: &str) -> f64 {
        if backend == "gpu" { self.gpu } else { self.cpu }
    }
}

/// The tolerances of the table's rows (docs/verification.md says why).
pub const TOL_CURVE: Tol = Tol { cpu: 1e-9, gpu: 5e-3 };
pub const TOL_PEAK: Tol = Tol { cpu: 1e-5, gpu: 5e-3 };
pub const TOL_PEAK_OVERLAP: Tol = Tol { cpu: 5e-3, gpu: 2e-2 };
pub const TOL_STEP: Tol = Tol { cpu: 2e-3, gpu: 5e-3 };
pub const TOL_IMPACT: Tol = Tol { cpu: 3e-3, gpu: 1e-2 };

impl Report {
    pub fn passed(&self) -> bool {
        self.rows.iter().all(Row::passed)
    }

    pub fn failures(&self) -> Vec<&Row> {
        self.rows.iter().filter(|r| !r.passed()).collect()
    }

    #[allow(clippy::too_many_arguments)]
    fn push(&mut self, quantity: &'static str, model: &'static str, wall: bool, backend: &'static str, talus: f64, theory: f64, scale: f64, tol: Tol) {
        let rel_error = (talus - theory) / theory.abs().max(scale);
        self.rows.push(Row { quantity, model, geometry: geometry(wall), backend, talus, theory, rel_error, tolerance: tol.of(backend) });
    }

    fn point(&mut self, figure: &'static str, series: String, backend: &'static str, x: f64, y: f64) {
        self.points.push(Point { figure, series, backend, x, y });
    }

    /// The table as printed.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "{:<34} {:<9} {:<5} {:<7} {:>15} {:>15} {:>11} {:>8}  status", "quantity", "model", "body", "backend", "talus", "theory", "rel.error", "tol");
        for r in &self.rows {
            let status = if r.passed() { "ok" } else { "FAIL" };
            let _ = writeln!(s, "{:<34} {:<9} {:<5} {:<7} {:>15.8e} {:>15.8e} {:>+11.3e} {:>8.0e}  {status}", r.quantity, r.model, r.geometry, r.backend, r.talus, r.theory, r.rel_error, r.tolerance);
        }
        let _ = writeln!(s, "{} rows, {} beyond tolerance", self.rows.len(), self.failures().len());
        s
    }

    pub fn csv(&self) -> String {
        let mut s = String::from("quantity,model,body,backend,talus,theory,rel_error,tolerance,status\n");
        for r in &self.rows {
            let _ = writeln!(s, "\"{}\",{},{},{},{:e},{:e},{:e},{:e},{}", r.quantity, r.model, r.geometry, r.backend, r.talus, r.theory, r.rel_error, r.tolerance, if r.passed() { "ok" } else { "fail" });
        }
        s
    }
}

// ---------------------------------------------------------------- scenes

/// One two-body case: a pair along x (ball 0 moving, ball 1 at rest) or a ball above the
/// plane z = 0 (moving down); its overlap at the start and the approach speed (> 0: closing).
#[derive(Clone, Copy, Debug)]
struct Case {
    wall: bool,
    overlap: f64,
    speed: f64,
}

/// The set-up of `cases` side by side (8 R apart along y; pairs 4 R above the wall), all
/// balls of `density`, the contacts `contacts` (JSON of `contacts.default`).
fn build(cases: &[Case], density: f64, contacts: serde_json::Value, dt: f64) -> Result<Setup> {
    let r = RADIUS;
    let span = 8.0 * r * cases.len() as f64;
    let text = json!({
        "description": "talus verify --benchmark cohesion",
        "gravity": [0.0, 0.0, 0.0],
        "time_step": dt,
        "steps": 1,
        "snapshot_every": 0,
        "domain": { "min": [-4.0 * r, -4.0 * r, -2.0 * r], "max": [4.0 * r, span, 8.0 * r] },
        "materials": { "ball": { "density": density, "hz_shear": SHEAR, "hz_poiss": POISSON, "fric": 0.0 } },
        "contacts": { "default": contacts },
        // placeholder: the cases' balls replace it (a case may start overlapping)
        "particles": [ { "position": [0.0, 0.0, 2.0 * r], "radius": r, "material": "ball" } ],
        "walls": [ { "type": "plane", "name": "plane", "point": [0.0, 0.0, 0.0], "normal": [0.0, 0.0, 1.0], "material": "ball" } ],
    });
    let mut s = crate::scene::parse_str(&text.to_string(), Path::new("<cohesion benchmark>"))?;
    let mut p = Particles::default();
    for (k, c) in cases.iter().enumerate() {
        let y = 8.0 * r * k as f64;
        if c.wall {
            p.push([0.0, y, r - c.overlap], [0.0, 0.0, -c.speed], [0.0; 3], r, 0);
        } else {
            p.push([-r + c.overlap, y, 4.0 * r], [c.speed, 0.0, 0.0], [0.0; 3], r, 0);
            p.push([r, y, 4.0 * r], [0.0; 3], [0.0; 3], r, 0);
        }
    }
    s.particles = p;
    Ok(s)
}

/// First particle of each case.
fn starts(cases: &[Case]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut i = 0;
    for c in cases {
        out.push(i);
        i += if c.wall { 1 } else { 2 };
    }
    out
}

/// (overlap, normal force: compression positive, approach speed) of a case in a snapshot.
fn contact_of(c: &Case, i: usize, s: &Snapshot) -> (f64, f64, f64) {
    if c.wall {
        (s.radius[i] - s.position[i][2], s.force[i][2], -s.velocity[i][2])
    } else {
        let d: [f64; 3] = std::array::from_fn(|k| s.position[i + 1][k] - s.position[i][k]);
        let dist = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
        let n: [f64; 3] = std::array::from_fn(|k| d[k] / dist);
        let f: f64 = (0..3).map(|k| s.force[i + 1][k] * n[k]).sum();
        let v: f64 = (0..3).map(|k| (s.velocity[i][k] - s.velocity[i + 1][k]) * n[k]).sum();
        (s.radius[i] + s.radius[i + 1] - dist, f, v)
    }
}

/// Quasi-static sweeps: every case's (overlap, force) after each of `steps` steps.
fn sweep(cases: &[Case], backend: &mut dyn Backend, steps: u64) -> Result<Vec<Vec<(f64, f64)>>> {
    let st = starts(cases);
    let mut out = vec![Vec::with_capacity(steps as usize); cases.len()];
    for _ in 0..steps {
        backend.step(1)?;
        let s = backend.snapshot()?;
        for (k, c) in cases.iter().enumerate() {
            let (d, f, _) = contact_of(c, st[k], &s);
            out[k].push((d, f));
        }
    }
    Ok(out)
}

/// A sweep from overlap `from` to `to` in `SWEEP_STEPS` steps of `dt`.
fn drive(wall: bool, from: f64, to: f64, dt: f64) -> Case {
    Case { wall, overlap: from, speed: (to - from) / (SWEEP_STEPS as f64 * dt) }
}

/// The largest of −F over the samples (a tension), refined by the parabola through the
/// largest sample and its neighbours: (peak tension, its overlap).
fn peak_tension(pts: &[(f64, f64)]) -> (f64, f64) {
    let k = (0..pts.len()).max_by(|&a, &b| (-pts[a].1).total_cmp(&-pts[b].1)).unwrap_or(0);
    if k == 0 || k + 1 >= pts.len() {
        return (-pts[k].1, pts[k].0);
    }
    let (x0, y0) = (pts[k - 1].0, -pts[k - 1].1);
    let (x1, y1) = (pts[k].0, -pts[k].1);
    let (x2, y2) = (pts[k + 1].0, -pts[k + 1].1);
    // Lagrange parabola through the three points, its vertex
    let d01 = (y1 - y0) / (x1 - x0);
    let d12 = (y2 - y1) / (x2 - x1);
    let a = (d12 - d01) / (x2 - x0);
    if a >= 0.0 {
        return (y1, x1);
    }
    let b = d01 - a * (x0 + x1);
    let xv = -b / (2.0 * a);
    let yv = y1 + d01 * (xv - x1) + a * (xv - x0) * (xv - x1);
    (yv, xv)
}

/// Linear extrapolation of the first two samples (x, y) to x = 0.
fn extrapolate_zero(p0: (f64, f64), p1: (f64, f64)) -> f64 {
    p0.1 + (p1.1 - p0.1) * (0.0 - p0.0) / (p1.0 - p0.0)
}

/// Every `n`th point of a sweep for a figure.
fn thin(pts: &[(f64, f64)], n: usize) -> impl Iterator<Item = &(f64, f64)> {
    pts.iter().step_by(n.max(1))
}

/// Runs `cases` on every backend; `f` turns the sweeps into rows.
fn each(backends: &[&'static str], open: Opener, setup: &Setup, mut run: impl FnMut(&mut dyn Backend, &'static str) -> Result<()>) -> Result<()> {
    for &kind in backends {
        let mut b = open(setup, kind)?;
        run(b.as_mut(), kind)?;
    }
    Ok(())
}

fn hertz_mindlin(extra: serde_json::Value) -> serde_json::Value {
    let mut c = json!({ "model": "hertz_mindlin", "coefficientRestitution": 1.0 });
    if let (Some(m), serde_json::Value::Object(e)) = (c.as_object_mut(), extra) {
        m.extend(e);
    }
    c
}

// ---------------------------------------------------------------- the tests

/// JKR sweeps: loading from a gap to 5|δ_c|, unloading from there past the break; pair and wall.
fn jkr_sweeps(report: &mut Report, backends: &[&'static str], open: Opener) -> Result<()> {
    let dt = 1e-6;
    let mut cases = Vec::new();
    for wall in [false, true] {
        let j = Jkr::new(e_star(), r_star(wall), GAMMA);
        let dc = j.break_overlap().abs();
        cases.push(drive(wall, -0.2 * dc, 5.0 * dc, dt));
        cases.push(drive(wall, 5.0 * dc, -1.3 * dc, dt));
    }
    let setup = build(&cases, HEAVY_DENSITY, hertz_mindlin(json!({ "adhesion": "jkr", "surface_energy": GAMMA })), dt)?;
    each(backends, open, &setup, |b, kind| {
        let sw = sweep(&cases, b, SWEEP_STEPS)?;
        for (w, wall) in [false, true].into_iter().enumerate() {
            let j = Jkr::new(e_star(), r_star(wall), GAMMA);
            let (fc, dc) = (j.pulloff(), j.break_overlap());
            let load: Vec<(f64, f64)> = sw[2 * w].iter().copied().filter(|p| p.1 != 0.0).collect();
            let unload_all = &sw[2 * w + 1];
            let last = unload_all.iter().rposition(|p| p.1 != 0.0).unwrap_or(0);
            let unload = &unload_all[..=last];
            let dev = load.iter().chain(unload.iter()).map(|&(d, f)| (f - j.force_at(d)).abs()).fold(0.0, f64::max);
            report.push("JKR curve: max |F - F_JKR| (N)", "jkr", wall, kind, dev, 0.0, fc, TOL_CURVE);
            let (peak, at) = peak_tension(unload);
            report.push("pull-off force (N)", "jkr", wall, kind, peak, fc, 0.0, TOL_PEAK);
            report.push("overlap at pull-off (m)", "jkr", wall, kind, at, j.delta(j.pulloff_radius()), dc.abs(), TOL_PEAK_OVERLAP);
            let first = if load.len() >= 2 { extrapolate_zero(load[0], load[1]) } else { f64::NAN };
            report.push("force at first touch (N)", "jkr", wall, kind, first, -8.0 / 9.0 * fc, 0.0, TOL_STEP);
            let broke = unload_all.get(last + 1).map_or(f64::NAN, |p| 0.5 * (p.0 + unload_all[last].0));
            report.push("break overlap (m)", "jkr", wall, kind, broke, dc, 0.0, TOL_STEP);
            let g = geometry(wall);
            for &(d, f) in thin(&load, 60) {
                report.point("jkr_curve", format!("loading, {g} ({kind})"), kind, d / dc.abs(), f / fc);
            }
            for &(d, f) in thin(unload, 60) {
                report.point("jkr_curve", format!("unloading, {g} ({kind})"), kind, d / dc.abs(), f / fc);
            }
            if !wall {
                let (a0, a1) = (j.break_radius(), j.radius(5.0 * dc.abs()));
                for k in 0..=200 {
                    let a = a0 + (a1 - a0) * k as f64 / 200.0;
                    report.point("jkr_curve", "theory".into(), kind, j.delta(a) / dc.abs(), j.force(a) / fc);
                }
            }
        }
        Ok(())
    })
}

/// DMT: unloading from 0.5 |δ_c| (δ_c the JKR break overlap) past touch.
fn dmt_sweeps(report: &mut Report, backends: &[&'static str], open: Opener) -> Result<()> {
    let dt = 1e-6;
    let cases: Vec<Case> = [false, true]
        .into_iter()
        .map(|wall| {
            let d = Jkr::new(e_star(), r_star(wall), GAMMA).break_overlap().abs();
            // a short sweep: the last sample in touch is within 3e-4 |δ_c| of δ = 0, where the
            // Hertz force is < 3e-6 of the pull
            drive(wall, 0.5 * d, -0.5 * d, dt)
        })
        .collect();
    let setup = build(&cases, HEAVY_DENSITY, hertz_mindlin(json!({ "adhesion": "dmt", "surface_energy": GAMMA })), dt)?;
    each(backends, open, &setup, |b, kind| {
        let sw = sweep(&cases, b, SWEEP_STEPS)?;
        for (k, wall) in [false, true].into_iter().enumerate() {
            let r = r_star(wall);
            let fp = 4.0 * PI * GAMMA * r;
            let touching: Vec<(f64, f64)> = sw[k].iter().copied().filter(|p| p.1 != 0.0).collect();
            let dev = touching.iter().map(|&(d, f)| (f - (hertz(r, d) - fp)).abs()).fold(0.0, f64::max);
            report.push("DMT curve: max |F - F_DMT| (N)", "dmt", wall, kind, dev, 0.0, fp, TOL_CURVE);
            let peak = touching.iter().map(|p| -p.1).fold(f64::MIN, f64::max);
            report.push("pull-off force (N)", "dmt", wall, kind, peak, fp, 0.0, TOL_PEAK);
        }
        Ok(())
    })
}

/// SJKR and SJKR2: loading from a gap to twice the equilibrium overlap.
fn sjkr_sweeps(report: &mut Report, backends: &[&'static str], open: Opener, two: bool) -> Result<()> {
    let dt = 1e-6;
    let (name, model) = if two { ("sjkr2", "sjkr2") } else { ("sjkr", "sjkr") };
    let cases: Vec<Case> = [false, true]
        .into_iter()
        .map(|wall| {
            let eq = sjkr_theory(two, wall).0;
            drive(wall, -0.05 * eq, 2.0 * eq, dt)
        })
        .collect();
    let setup = build(&cases, HEAVY_DENSITY, hertz_mindlin(json!({ "adhesion": name, "cohesion_energy_density": COHESION })), dt)?;
    each(backends, open, &setup, |b, kind| {
        let sw = sweep(&cases, b, SWEEP_STEPS)?;
        for (k, wall) in [false, true].into_iter().enumerate() {
            let (eq, tension, _) = sjkr_theory(two, wall);
            let touching: Vec<(f64, f64)> = sw[k].iter().copied().filter(|p| p.1 != 0.0).collect();
            let dev = touching.iter().map(|&(d, f)| (f - sjkr_force(two, wall, d)).abs()).fold(0.0, f64::max);
            report.push(if two { "SJKR2 curve: max |F - F_th| (N)" } else { "SJKR curve: max |F - F_th| (N)" }, model, wall, kind, dev, 0.0, tension, TOL_CURVE);
            let cross = touching.windows(2).find(|w| w[0].1 < 0.0 && w[1].1 >= 0.0).map_or(f64::NAN, |w| w[0].0 - w[0].1 * (w[1].0 - w[0].0) / (w[1].1 - w[0].1));
            report.push("equilibrium overlap (m)", model, wall, kind, cross, eq, 0.0, TOL_STEP);
            report.push("peak tension (N)", model, wall, kind, peak_tension(&touching).0, tension, 0.0, TOL_PEAK);
            if !wall {
                let fig = if two { "sjkr2_curve" } else { "sjkr_curve" };
                for &(d, f) in thin(&touching, 40) {
                    report.point(fig, format!("pair ({kind})"), kind, d / eq, f / tension);
                }
                for i in 0..=200 {
                    let d = 2.0 * eq * i as f64 / 200.0;
                    report.point(fig, "theory".into(), kind, d / eq, sjkr_force(two, wall, d) / tension);
                }
            }
        }
        Ok(())
    })
}

/// The capillary bridge: unloading from a small overlap past rupture.
fn capillary_sweeps(report: &mut Report, backends: &[&'static str], open: Opener) -> Result<()> {
    let dt = 1e-6;
    let sr = rupture_gap();
    let cases: Vec<Case> = [false, true].into_iter().map(|wall| drive(wall, 0.01 * sr, -1.2 * sr, dt)).collect();
    let contacts = hertz_mindlin(json!({ "adhesion": "capillary", "liquid_volume": LIQUID_VOLUME, "surface_tension": SURFACE_TENSION, "contact_angle": CONTACT_ANGLE }));
    let setup = build(&cases, HEAVY_DENSITY, contacts, dt)?;
    each(backends, open, &setup, |b, kind| {
        let sw = sweep(&cases, b, SWEEP_STEPS)?;
        for (k, wall) in [false, true].into_iter().enumerate() {
            let f0 = capillary_force(wall, 0.0);
            let all = &sw[k];
            let last = all.iter().rposition(|p| p.1 != 0.0).unwrap_or(0);
            // apart and bonded: gap S = −δ > 0
            let apart: Vec<(f64, f64)> = all[..=last].iter().filter(|p| p.0 < 0.0).map(|&(d, f)| (-d, f)).collect();
            // in touch: Hertz less the force at contact; apart: Willett's
            let theory = |d: f64| if d >= 0.0 { hertz(r_star(wall), d) - f0 } else { -capillary_force(wall, -d) };
            let dev = all[..=last].iter().map(|&(d, f)| (f - theory(d)).abs()).fold(0.0, f64::max);
            report.push("bridge curve: max |F - F_W| (N)", "capillary", wall, kind, dev, 0.0, f0, TOL_CURVE);
            let at_contact = if apart.len() >= 2 { -extrapolate_zero(apart[0], apart[1]) } else { f64::NAN };
            report.push("force at contact (N)", "capillary", wall, kind, at_contact, f0, 0.0, TOL_STEP);
            let rupture = all.get(last + 1).map_or(f64::NAN, |p| -0.5 * (p.0 + all[last].0));
            report.push("rupture distance (m)", "capillary", wall, kind, rupture, sr, 0.0, TOL_STEP);
            if !wall {
                for &(s, f) in thin(&apart, 40) {
                    report.point("capillary_curve", format!("pair ({kind})"), kind, s / sr, -f / f0);
                }
                for i in 0..=200 {
                    let s = sr * i as f64 / 200.0;
                    report.point("capillary_curve", "theory".into(), kind, s / sr, capillary_force(wall, s) / f0);
                }
            }
        }
        Ok(())
    })
}

/// Elastic JKR impacts (pairs at ±V/2 and balls on the wall) at `IMPACT_FACTORS` × V_s.
fn impacts(report: &mut Report, backends: &[&'static str], open: Opener) -> Result<()> {
    let mut cases = Vec::new();
    let mut speeds = Vec::new();
    for wall in [false, true] {
        let vs = sticking_velocity(&Jkr::new(e_star(), r_star(wall), GAMMA), m_star(wall));
        for f in IMPACT_FACTORS {
            // start 20 steps of approach from touch
            cases.push(Case { wall, overlap: -20.0 * f * vs * IMPACT_DT, speed: f * vs });
            speeds.push((wall, f, vs));
        }
    }
    let setup = build(&cases, DENSITY, hertz_mindlin(json!({ "adhesion": "jkr", "surface_energy": GAMMA })), IMPACT_DT)?;
    let st = starts(&cases);
    each(backends, open, &setup, |b, kind| {
        // step until every case faster than V_s has parted, then as long again (the slower
        // ones must stay stuck)
        let chunk = 250;
        let (mut steps, mut parted_at) = (0u64, None);
        let snap = loop {
            b.step(chunk)?;
            steps += chunk;
            let snap = b.snapshot()?;
            let parted = cases.iter().enumerate().all(|(k, c)| {
                let (_, f, v) = contact_of(c, st[k], &snap);
                speeds[k].1 < 1.0 || (f == 0.0 && v < 0.0)
            });
            if parted && parted_at.is_none() {
                parted_at = Some(steps);
            }
            if parted_at.is_some_and(|p| steps >= 2 * p) {
                break snap;
            }
            if steps > 100_000 {
                return Err(TalusError::Verify(format!("cohesion: impacts did not part within {steps} steps ({})", b.kind())));
            }
        };
        let mut lost = 0.0;
        for (k, c) in cases.iter().enumerate() {
            let (wall, f, vs) = speeds[k];
            let (d, _, v) = contact_of(c, st[k], &snap);
            let j = Jkr::new(e_star(), r_star(wall), GAMMA);
            let stuck = d > j.break_overlap();
            let e = if stuck { 0.0 } else { -v / c.speed };
            let theory = if f > 1.0 { (1.0 - 1.0 / (f * f)).sqrt() } else { 0.0 };
            if !stuck {
                lost += j.impact_loss();
            }
            let q = IMPACT_LABELS[k % IMPACT_FACTORS.len()];
            report.push(q, "jkr", wall, kind, e, theory, 1.0, TOL_IMPACT);
            report.point("impact", format!("{} ({kind})", geometry(wall)), kind, f, e);
            if f == 1.25 {
                let vs_sim = c.speed * (1.0 - e * e).sqrt();
                report.push("sticking velocity (m/s)", "jkr", wall, kind, vs_sim, vs, 0.0, TOL_IMPACT);
                let ana = sticking_constant() * (j.pulloff().powi(5) / (j.e * j.e * j.r * m_star(wall).powi(3))).powf(1.0 / 6.0);
                report.push("V_s from the constant C (m/s)", "jkr", wall, kind, vs, ana, 0.0, Tol { cpu: 1e-9, gpu: 1e-9 });
            }
        }
        let energies = b.energies()?;
        report.push("bond_break energy, all impacts (J)", "jkr", false, kind, energies.bond_break, lost, 0.0, TOL_IMPACT);
        if let Some(r) = report.rows.last_mut() {
            r.geometry = "both";
        }
        if kind == backends[0] {
            for i in 0..=300 {
                let f = 0.5 + 4.5 * i as f64 / 300.0;
                report.point("impact", "theory".into(), kind, f, if f > 1.0 { (1.0 - 1.0 / (f * f)).sqrt() } else { 0.0 });
            }
        }
        Ok(())
    })
}

/// Every test on every backend of `backends` ("cpu", "gpu").
pub fn run_benchmark(backends: &[&'static str], open: Opener) -> Result<Report> {
    let mut report = Report::default();
    jkr_sweeps(&mut report, backends, open)?;
    impacts(&mut report, backends, open)?;
    dmt_sweeps(&mut report, backends, open)?;
    sjkr_sweeps(&mut report, backends, open, false)?;
    sjkr_sweeps(&mut report, backends, open, true)?;
    capillary_sweeps(&mut report, backends, open)?;
    Ok(report)
}

/// The quasi-static JKR sweeps only (a quick subset for tests).
pub fn run_jkr_sweeps(backends: &[&'static str], open: Opener) -> Result<Report> {
    let mut report = Report::default();
    jkr_sweeps(&mut report, backends, open)?;
    Ok(report)
}

/// Writes `cohesion.csv`, `cohesion_points.csv` and the figures into `dir` (atomically).
pub fn write_outputs(report: &Report, dir: &Path) -> Result<Vec<String>> {
    crate::output::atomic::create_dir_all(dir)?;
    crate::output::write_atomic(&dir.join("cohesion.csv"), report.csv().as_bytes())?;
    let mut pts = String::from("figure,series,backend,x,y\n");
    for p in &report.points {
        let _ = writeln!(pts, "{},\"{}\",{},{:e},{:e}", p.figure, p.series, p.backend, p.x, p.y);
    }
    crate::output::write_atomic(&dir.join("cohesion_points.csv"), pts.as_bytes())?;
    let mut written = vec!["cohesion.csv".to_string(), "cohesion_points.csv".to_string()];
    let figs: [(&str, &str, &str, &str); 5] = [
        ("jkr_curve", "JKR force vs overlap (loading from touch, unloading to the break)", "overlap / |delta_c|", "F / F_c (compression positive)"),
        ("impact", "Elastic JKR impact: restitution vs impact speed (theory: e = sqrt(1 - (V_s/V)^2))", "V / V_s", "restitution"),
        ("sjkr_curve", "SJKR (k_c pi a^2) on hertz_mindlin, pair: force vs overlap", "overlap / equilibrium overlap", "F / peak tension"),
        ("sjkr2_curve", "SJKR2 (k_c 2 pi delta R*) on hertz_mindlin, pair: force vs overlap", "overlap / equilibrium overlap", "F / peak tension"),
        ("capillary_curve", "Willett capillary bridge, pair: force vs separation", "separation / rupture distance", "F / F(contact)"),
    ];
    for (name, title, xl, yl) in figs {
        if !report.points.iter().any(|p| p.figure == name) {
            continue;
        }
        let first = report.points.iter().find(|p| p.figure == name && p.series == "theory").map(|p| p.backend);
        let theory: Vec<(f64, f64)> = report.points.iter().filter(|p| p.figure == name && p.series == "theory" && Some(p.backend) == first).map(|p| (p.x, p.y)).collect();
        let file = format!("cohesion_{name}.png");
        let points = report.points.iter().filter(|p| p.figure == name && p.series != "theory").map(|p| (p.series.clone(), p.x, p.y));
        crate::plot::named_chart(&dir.join(&file), title, xl, yl, &theory, points)?;
        written.push(file);
    }
    Ok(written)
}
