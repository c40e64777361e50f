//! `talus verify --benchmark clumps`: rigid clumps against analytic results (issue 32).
//!
//! 1. Mass, volume and inertia of overlapping two- and three-sphere templates against exact
//!    values (host only: the template code is shared by both backends).
//! 2. A torque-free asymmetric body spun near its intermediate axis: energy and |L| conserved,
//!    and the period of its flips against the solution of Euler's equations.
//! 3. A tilted dumbbell hitting a frictionless wall (elastic): the rebound velocity and spin
//!    against the rigid-body impulse.
//! 4. A dumbbell rolling down an incline without slip: a = g sin θ / (1 + I/(M r²)).
//! 5. A body in free fall: no spin, the centre on the parabola.
//!
//! Each dynamic test builds its set-up from a small scene (`scene::parse_str`) whose particles
//! are then replaced by the bodies' components, and runs on every backend asked for.

use std::fmt::Write as _;
use std::path::Path;

use crate::backend::Backend;
use crate::error::Result;
use crate::model::body::{angular_momentum, omega, rotate, rotate_back, Bodies};
use crate::setup::{Particles, Setup};

/// One line of the table.
#[derive(Clone, Debug)]
pub struct Row {
    pub test: u32,
    pub case: String,
    pub backend: &'static str,
    pub quantity: &'static str,
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

/// A curve of a figure: (figure, series name, backend, x, y).
#[derive(Clone, Debug)]
pub struct Point {
    pub figure: &'static str,
    pub series: &'static str,
    pub backend: &'static str,
    pub x: f64,
    pub y: f64,
}

#[derive(Clone, Debug, Default)]
pub struct Report {
    pub rows: Vec<Row>,
    pub points: Vec<Point>,
}

impl Report {
    pub fn passed(&self) -> bool {
        self.rows.iter().all(Row::passed)
    }

    pub fn failures(&self) -> Vec<&Row> {
        self.rows.iter().filter(|r| !r.passed()).collect()
    }

    #[allow(clippy::too_many_arguments)]
    fn push(&mut self, test: u32, case: impl Into<String>, backend: &'static str, quantity: &'static str, talus: f64, theory: f64, scale: f64, tolerance: f64) {
        let rel_error = (talus - theory) / theory.abs().max(scale);
        self.rows.push(Row { test, case: case.into(), backend, quantity, talus, theory, rel_error, tolerance });
    }

    /// The table as printed.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "{:<4} {:<36} {:<7} {:<22} {:>15} {:>15} {:>11} {:>8}  status", "test", "case", "backend", "quantity", "talus", "theory", "rel.error", "tol");
        for r in &self.rows {
            let status = if r.passed() { "ok" } else { "FAIL" };
            let _ = writeln!(s, "{:<4} {:<36} {:<7} {:<22} {:>15.8e} {:>15.8e} {:>+11.3e} {:>8.0e}  {status}", r.test, r.case, r.backend, r.quantity, r.talus, r.theory, r.rel_error, r.tolerance);
        }
        let _ = writeln!(s, "{} rows, {} beyond tolerance", self.rows.len(), self.failures().len());
        s
    }

    pub fn csv(&self) -> String {
        let mut s = String::from("test,case,backend,quantity,talus,theory,rel_error,tolerance,status\n");
        for r in &self.rows {
            let _ = writeln!(s, "{},\"{}\",{},{},{:e},{:e},{:e},{:e},{}", r.test, r.case, r.backend, r.quantity, r.talus, r.theory, r.rel_error, r.tolerance, if r.passed() { "ok" } else { "fail" });
        }
        s
    }
}

/// Opens a backend of a kind for a set-up.
pub type Opener<'a> = &'a dyn Fn(&Setup, &'static str) -> Result<Box<dyn Backend>>;

const DENSITY: f64 = 2500.0;

/// What a test's material and contacts are: friction, restitution (`hertz_mindlin`) and shear
/// modulus.
struct Contact {
    fric: f64,
    restitution: f64,
    shear: f64,
}

/// A set-up with one material and contact, the given walls (JSON) and gravity, time step `dt`,
/// holding `bodies` with their components (`radius` each).
fn setup(c: Contact, walls: serde_json::Value, gravity: [f64; 3], dt: f64, domain: f64, particles: Particles, bodies: Bodies) -> Result<Setup> {
    let text = serde_json::json!({
        "gravity": gravity,
        "time_step": dt,
        // the check reads the placeholder particle; each test picks its own step
        "time_step_check": "warn",
        "steps": 1,
        "domain": { "min": [-domain, -domain, -domain], "max": [domain, domain, domain] },
        "materials": { "m": { "density": DENSITY, "hz_shear": c.shear, "hz_poiss": 0.25, "fric": c.fric } },
        "contacts": { "default": { "model": "hertz_mindlin", "coefficientRestitution": c.restitution } },
        // (clear of the tests' floors at z = 0)
        "particles": [ { "position": [0.0, 0.0, 0.5], "radius": 1e-3, "material": "m" } ],
        "walls": walls,
    });
    let mut s = crate::scene::parse_str(&text.to_string(), Path::new("<clumps benchmark>"))?;
    s.particles = particles;
    s.bodies = bodies;
    Ok(s)
}

/// Mass and principal moments of a dumbbell of two spheres of radius `r` whose centres are
/// `2a` apart (a ≥ r: no overlap) along the body x axis.
fn dumbbell_mass(r: f64, a: f64) -> (f64, [f64; 3]) {
    let m1 = DENSITY * 4.0 / 3.0 * std::f64::consts::PI * r.powi(3);
    let own = 0.4 * m1 * r * r;
    (2.0 * m1, [2.0 * own, 2.0 * (own + m1 * a * a), 2.0 * (own + m1 * a * a)])
}

/// Bodies from (centre, orientation, velocity, spin, mass, moments, offsets, radius).
type BodySpec = ([f64; 3], [f64; 4], [f64; 3], [f64; 3], f64, [f64; 3], Vec<[f64; 3]>, f64);

fn build(specs: &[BodySpec]) -> (Particles, Bodies) {
    let mut p = Particles::default();
    let mut b = Bodies::default();
    for (c, q, v, w, mass, moments, offsets, r) in specs {
        b.push(*c, *q, *v, angular_momentum(*q, *moments, *w), *mass, *moments, 0, p.len() as u32, offsets);
        for o in offsets {
            let arm = rotate(*q, *o);
            p.push(std::array::from_fn(|k| c[k] + arm[k]), *v, *w, *r, 0);
        }
    }
    (p, b)
}

fn norm(v: [f64; 3]) -> f64 {
    (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
}

/// Test 2: a torque-free body with moments (1, 2, 3)·I0 spun mostly about its intermediate
/// axis, ω = (4, 10, 0.5) rad/s: it flips over and back periodically. The start lies 3.5 %
/// (in L² against 2E·I₂) off the separatrix, well beyond the f32 path's energy error (~5e-5),
/// so both backends follow the same kind of orbit; closer to the separatrix the period, which
/// grows like the logarithm of that distance, would measure the rounding instead.
fn torque_free(report: &mut Report, open: Opener, kind: &'static str) -> Result<()> {
    let r: f64 = 0.01;
    let m = DENSITY * 4.0 / 3.0 * std::f64::consts::PI * r.powi(3);
    let i0 = 0.4 * m * r * r;
    let moments = [i0, 2.0 * i0, 3.0 * i0];
    let w0 = [4.0, 10.0, 0.5];
    let q = [1.0, 0.0, 0.0, 0.0];
    let (p, b) = build(&[([0.0; 3], q, [0.0; 3], w0, m, moments, vec![[0.0; 3]], r)]);
    let dt = 2e-4;
    let s = setup(Contact { fric: 0.0, restitution: 1.0, shear: 1e9 }, serde_json::json!([]), [0.0; 3], dt, 1.0, p, b)?;
    let mut backend = open(&s, kind)?;
    let e0 = backend.energies()?.kinetic_rotational;
    let l0 = norm(backend.snapshot()?.bodies.angular_momentum[0]);
    let (mut e_err, mut l_err): (f64, f64) = (0.0, 0.0);
    let mut crossings = Vec::new();
    let mut last = (0.0, w0[1]);
    let steps_per = 25u64;
    let total = 20_000u64;
    for k in 1..=total / steps_per {
        backend.step(steps_per)?;
        let st = backend.snapshot()?;
        let (q, l) = (st.bodies.orientation[0], st.bodies.angular_momentum[0]);
        let wb = rotate_back(q, omega(q, moments, l));
        let t = (k * steps_per) as f64 * dt;
        if wb[1].signum() != last.1.signum() {
            // the zero of ω₂ between the samples, linearly
            crossings.push(last.0 + (t - last.0) * last.1 / (last.1 - wb[1]));
        }
        last = (t, wb[1]);
        if k % 8 == 0 {
            report.points.push(Point { figure: "torque_free", series: "omega_2 (body)", backend: kind, x: t, y: wb[1] });
            report.points.push(Point { figure: "torque_free", series: "omega_1 (body)", backend: kind, x: t, y: wb[0] });
        }
        l_err = l_err.max((norm(l) / l0 - 1.0).abs());
        e_err = e_err.max((backend.energies()?.kinetic_rotational / e0 - 1.0).abs());
    }
    let l = angular_momentum(q, moments, w0);
    let e = 0.5 * (0..3).map(|k| l[k] * w0[k]).sum::<f64>();
    let theory = crate::rigid::analytic::flip_period(glam::DVec3::from(moments), norm(l), e);
    // a full period holds two sign changes of ω₂
    let measured = if crossings.len() >= 3 { 2.0 * (crossings[crossings.len() - 1] - crossings[0]) / (crossings.len() - 1) as f64 } else { f64::NAN };
    let case = "moments 1:2:3, w = (4, 10, 0.5)";
    report.push(2, case, kind, "flip period (s)", measured, theory, 0.0, 1e-3);
    report.push(2, case, kind, "max |E/E0 - 1|", e_err, 0.0, 1.0, if kind == "cpu" { 1e-6 } else { 1e-4 });
    report.push(2, case, kind, "max ||L|/|L0| - 1|", l_err, 0.0, 1.0, if kind == "cpu" { 1e-14 } else { 1e-6 });
    Ok(())
}

/// Test 3: a dumbbell tilted by 30° falls at 1 m/s onto a frictionless floor (elastic); its
/// lower sphere strikes. Rigid-body impulse: J = 2 v / (1/M + (r×n)·I⁻¹(r×n)). The impulse
/// assumes an instantaneous contact; the body turns by ω t_c during the real one, so the
/// grains are stiff (G = 100 GPa: t_c ≈ 5 µs, about 0.7 mrad of turn).
fn tilted_impact(report: &mut Report, open: Opener, kind: &'static str) -> Result<()> {
    let (r, a, v0) = (0.005, 0.006, 1.0);
    let (mass, moments) = dumbbell_mass(r, a);
    let tilt = 30f64.to_radians();
    // turn the body x axis down by `tilt` about y
    let q = [(0.5 * tilt).cos(), 0.0, (0.5 * tilt).sin(), 0.0];
    let low = rotate(q, [a, 0.0, 0.0]);
    let z0 = -low[2] + r + 1e-5;
    let (p, b) = build(&[([0.0, 0.0, z0], q, [0.0, 0.0, -v0], [0.0; 3], mass, moments, vec![[-a, 0.0, 0.0], [a, 0.0, 0.0]], r)]);
    let walls = serde_json::json!([{ "type": "plane", "point": [0, 0, 0], "normal": [0, 0, 1], "material": "m" }]);
    // 200 steps a contact (f32 positions need steps well above their rounding of 1e-7 of a
    // block: at 1e-8 s the GPU's contact gained 1.7 % energy)
    let s = setup(Contact { fric: 0.0, restitution: 1.0, shear: 1e11 }, walls, [0.0; 3], 2.5e-8, 1.0, p, b)?;
    let mut backend = open(&s, kind)?;
    let (mut touched, mut steps) = (false, 0u64);
    while steps < 400_000 {
        backend.step(100)?;
        steps += 100;
        let c = backend.contact_count()?;
        if c > 0 {
            touched = true;
        } else if touched {
            break;
        }
    }
    let st = backend.export_state()?;
    let (q1, l1) = (st.bodies.orientation[0], st.bodies.angular_momentum[0]);
    let w1 = omega(q1, moments, l1);
    // theory at the orientation of impact (the body turns by ~1e-4 rad during the contact)
    let arm = [low[0], low[1], low[2] - r];
    let rxn = [arm[1], -arm[0], 0.0]; // arm × ẑ
    let rb = rotate_back(q, rxn);
    let inv_i_rxn = rotate(q, std::array::from_fn(|k| rb[k] / moments[k]));
    let k_eff = 1.0 / mass + (0..3).map(|k| rxn[k] * inv_i_rxn[k]).sum::<f64>();
    let j = 2.0 * v0 / k_eff;
    let vz = -v0 + j / mass;
    let wy = j * inv_i_rxn[1];
    let case = "tilt 30 deg, 1 m/s, e = 1";
    // the GPU's f32 quaternion resolves the 3.6e-6 rad a step of this 2.5e-8 s contact turns
    // the body (ω up to 142 rad/s) to a few per cent of it (its components near 0.97 and 0.26
    // step by 6e-8 and 3e-8): the contact gains 3.5e-3 of its energy. A sphere or a body at
    // q = 1 keeps it to 1e-6 there, and at DEM time steps a step turns a body by 1e-5 to 1e-3
    // rad (docs/contact-models.md, "Rigid-body integration").
    let (tol_v, tol_e) = if kind == "cpu" { (2e-3, 1e-4) } else { (1e-2, 5e-3) };
    report.push(3, case, kind, "rebound v_z (m/s)", st.bodies.velocity[0][2], vz, 0.0, tol_v);
    report.push(3, case, kind, "spin w_y (rad/s)", w1[1], wy, 0.0, tol_v);
    let e_after = 0.5 * mass * norm(st.bodies.velocity[0]).powi(2) + 0.5 * (0..3).map(|k| l1[k] * w1[k]).sum::<f64>();
    report.push(3, case, kind, "kinetic energy (J)", e_after, 0.5 * mass * v0 * v0, 0.0, tol_e);
    Ok(())
}

/// Test 4: a dumbbell whose axis is horizontal rolls down a 20° incline (gravity tilted) on
/// both spheres, friction 0.5: a = g sin θ / (1 + I/(M r²)), I about the dumbbell's axis.
/// Restitution 0.5 damps the bounce of its start (it is placed just touching).
fn incline(report: &mut Report, open: Opener, kind: &'static str) -> Result<()> {
    let (r, a, g) = (0.005, 0.007, 9.81);
    let (mass, moments) = dumbbell_mass(r, a);
    let th = 20f64.to_radians();
    // body x axis along space y (the rolling axis)
    let h = 0.5f64.sqrt();
    let q = [h, 0.0, 0.0, h];
    let (p, b) = build(&[([0.0, 0.0, r], q, [0.0; 3], [0.0; 3], mass, moments, vec![[-a, 0.0, 0.0], [a, 0.0, 0.0]], r)]);
    let walls = serde_json::json!([{ "type": "plane", "point": [0, 0, 0], "normal": [0, 0, 1], "material": "m" }]);
    // 4 µs (run at 2 µs, the CPU's fitted acceleration had the same first nine digits)
    let dt = 4e-6;
    let s = setup(Contact { fric: 0.5, restitution: 0.5, shear: 1e9 }, walls, [g * th.sin(), 0.0, -g * th.cos()], dt, 1.0, p, b)?;
    let mut backend = open(&s, kind)?;
    let (batch, batches) = (50u64, 75u64);
    let mut xs = Vec::new();
    for k in 1..=batches {
        backend.step(batch)?;
        let t = (k * batch) as f64 * dt;
        let x = backend.snapshot()?.bodies.position[0][0];
        xs.push((t, x));
    }
    // the centre's speed down the slope, by central differences
    for w in xs.windows(3) {
        report.points.push(Point { figure: "incline", series: "speed", backend: kind, x: w[1].0, y: (w[2].1 - w[0].1) / (w[2].0 - w[0].0) });
    }
    let a_theory = g * th.sin() / (1.0 + moments[0] / (mass * r * r));
    // least-squares x = c0 + c1 t + ½ a t² over the second half (after the contact settles)
    let half = &xs[xs.len() / 2..];
    let fit = quadratic_fit(half);
    // f32: the velocity gains g sin θ Δt/2 = 1.7e-6 m/s a half kick, rounded at 6e-8 of |v|
    // the theory's line through the fit's speed at the window's start
    let t0 = half[0].0;
    for &(t, _) in half {
        report.points.push(Point { figure: "incline", series: "theory", backend: kind, x: t, y: fit[1] + a_theory * (t - t0) });
    }
    report.push(4, "20 deg, mu 0.5", kind, "acceleration (m/s2)", 2.0 * fit[2], a_theory, 0.0, if kind == "cpu" { 1e-3 } else { 3e-3 });
    Ok(())
}

/// Least-squares coefficients (c0, c1, c2) of y = c0 + c1 x + c2 x².
fn quadratic_fit(pts: &[(f64, f64)]) -> [f64; 3] {
    let x0 = pts[0].0;
    let mut m = [[0.0; 4]; 3];
    for &(x, y) in pts {
        let u = x - x0;
        let basis = [1.0, u, u * u];
        for i in 0..3 {
            for j in 0..3 {
                m[i][j] += basis[i] * basis[j];
            }
            m[i][3] += basis[i] * y;
        }
    }
    // Gauss–Jordan
    for c in 0..3 {
        let pivot = m[c][c];
        let row = m[c].map(|x| x / pivot);
        m[c] = row;
        for (i, r) in m.iter_mut().enumerate() {
            if i != c {
                let f = r[c];
                for (x, y) in r.iter_mut().zip(row) {
                    *x -= f * y;
                }
            }
        }
    }
    [m[0][3], m[1][3], m[2][3]]
}

/// Test 5: a tilted dumbbell in free fall, thrown sideways: no spin, the centre on the parabola.
fn free_fall(report: &mut Report, open: Opener, kind: &'static str) -> Result<()> {
    let (r, a, g) = (0.005, 0.006, 9.81);
    let (mass, moments) = dumbbell_mass(r, a);
    let q = [0.9, 0.1, 0.3, 0.2];
    let n = q.iter().map(|c| c * c).sum::<f64>().sqrt();
    let q = q.map(|c| c / n);
    let (p, b) = build(&[([0.0; 3], q, [0.3, 0.0, 0.0], [0.0; 3], mass, moments, vec![[-a, 0.0, 0.0], [a, 0.0, 0.0]], r)]);
    let dt = 1e-4;
    let s = setup(Contact { fric: 0.3, restitution: 0.5, shear: 1e9 }, serde_json::json!([]), [0.0, 0.0, -g], dt, 10.0, p, b)?;
    let mut backend = open(&s, kind)?;
    let steps = 1_000u64;
    backend.step(steps)?;
    let st = backend.export_state()?;
    let t = steps as f64 * dt;
    let x = st.bodies.position[0];
    // f32: each half kick adds 4.9e-4 m/s to a velocity of up to 1 m/s, rounded at 6e-8 of it
    report.push(5, "0.1 s, thrown at 0.3 m/s", kind, "z (m)", x[2], -0.5 * g * t * t, 0.0, if kind == "cpu" { 1e-10 } else { 2e-4 });
    report.push(5, "0.1 s, thrown at 0.3 m/s", kind, "x (m)", x[0], 0.3 * t, 0.0, if kind == "cpu" { 1e-10 } else { 1e-5 });
    let w = norm(omega(st.bodies.orientation[0], moments, st.bodies.angular_momentum[0]));
    report.push(5, "0.1 s, thrown at 0.3 m/s", kind, "|w| (rad/s)", w, 0.0, 1.0, 0.0);
    let dq = (0..4).map(|k| (st.bodies.orientation[0][k] - q[k]).abs()).fold(0.0, f64::max);
    report.push(5, "0.1 s, thrown at 0.3 m/s", kind, "max |q - q0|", dq, 0.0, 1.0, if kind == "cpu" { 0.0 } else { 1e-6 });
    Ok(())
}

/// Every test on every backend of `backends` ("cpu", "gpu").
pub fn run_benchmark(backends: &[&'static str], open: Opener) -> Result<Report> {
    let mut report = Report::default();
    mass_properties(&mut report)?;
    for &kind in backends {
        torque_free(&mut report, open, kind)?;
        tilted_impact(&mut report, open, kind)?;
        incline(&mut report, open, kind)?;
        free_fall(&mut report, open, kind)?;
    }
    report.rows.sort_by_key(|r| r.test);
    Ok(report)
}

/// Volume and moments (about the x axis and about the y axis through its centre) of the lens
/// two spheres of radius `r` at (±a, 0, 0) share, unit density: a solid of revolution whose
/// radius² is r² − (|x| − a)² on |x| ≤ r − a, integrated by three-point Gauss–Legendre, exact
/// for these polynomials of degree four.
fn lens(r: f64, a: f64) -> (f64, f64, f64) {
    let half = r - a;
    let (nodes, weights) = ([-(0.6f64).sqrt(), 0.0, (0.6f64).sqrt()], [5.0 / 9.0, 8.0 / 9.0, 5.0 / 9.0]);
    let pi = std::f64::consts::PI;
    let (mut v, mut ix, mut iy) = (0.0, 0.0, 0.0);
    // the half x in [0, half]; the other is its mirror image
    for k in 0..3 {
        let x = 0.5 * half * (nodes[k] + 1.0);
        let w = 0.5 * half * weights[k];
        let rho2 = r * r - (x + a) * (x + a);
        v += w * pi * rho2;
        ix += w * 0.5 * pi * rho2 * rho2;
        iy += w * (0.25 * pi * rho2 * rho2 + pi * rho2 * x * x);
    }
    (2.0 * v, 2.0 * ix, 2.0 * iy)
}

/// Test 1 (host): the union mass properties of overlapping templates against inclusion–
/// exclusion with the exact lens (unit radius, density `DENSITY`).
fn mass_properties(report: &mut Report) -> Result<()> {
    use crate::model::clump::ClumpTemplate;
    let pi = std::f64::consts::PI;
    let vs = 4.0 / 3.0 * pi;
    let is = 0.4 * vs;
    // two spheres 1 apart: one lens at the centre
    let (vl, ixl, iyl) = lens(1.0, 0.5);
    let two = ClumpTemplate::new("two", 0, &[[-0.5, 0.0, 0.0, 1.0], [0.5, 0.0, 0.0, 1.0]], DENSITY).map_err(crate::error::TalusError::Other)?;
    let exact_two = (2.0 * vs - vl, 2.0 * is - ixl, 2.0 * (is + vs * 0.25) - iyl);
    // three spheres 1.2 apart in a line: only neighbours overlap, two lenses at ±0.6
    let (vl3, ixl3, iyl3) = lens(1.0, 0.6);
    let three = ClumpTemplate::new("three", 0, &[[-1.2, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 1.0], [1.2, 0.0, 0.0, 1.0]], DENSITY).map_err(crate::error::TalusError::Other)?;
    let exact_three = (3.0 * vs - 2.0 * vl3, 3.0 * is - 2.0 * ixl3, 3.0 * is + 2.0 * vs * 1.44 - 2.0 * (iyl3 + vl3 * 0.36));
    for (t, (v, ia, it), case) in [(&two, exact_two, "two spheres r = 1, 1 apart"), (&three, exact_three, "three spheres r = 1, 1.2 apart")] {
        report.push(1, case, "host", "volume", t.volume, v, 0.0, 1e-9);
        report.push(1, case, "host", "mass (kg)", t.mass, DENSITY * v, 0.0, 1e-9);
        report.push(1, case, "host", "axial moment (kg m2)", t.principal_moments[0], DENSITY * ia, 0.0, 1e-9);
        report.push(1, case, "host", "moment 2 (kg m2)", t.principal_moments[1], DENSITY * it, 0.0, 1e-9);
        report.push(1, case, "host", "moment 3 (kg m2)", t.principal_moments[2], DENSITY * it, 0.0, 1e-9);
    }
    Ok(())
}

/// Writes `clumps.csv`, `clumps_points.csv` and the figures into `dir` (atomically).
pub fn write_outputs(report: &Report, dir: &Path) -> Result<Vec<String>> {
    crate::output::atomic::create_dir_all(dir)?;
    crate::output::write_atomic(&dir.join("clumps.csv"), report.csv().as_bytes())?;
    let mut pts = String::from("figure,series,backend,x,y\n");
    for p in &report.points {
        let _ = writeln!(pts, "{},{},{},{:e},{:e}", p.figure, p.series, p.backend, p.x, p.y);
    }
    crate::output::write_atomic(&dir.join("clumps_points.csv"), pts.as_bytes())?;
    let mut written = vec!["clumps.csv".to_string(), "clumps_points.csv".to_string()];
    let figs: [(&str, &str, &str, &str); 2] = [
        ("torque_free", "Test 2: torque-free body (moments 1:2:3) flips about its intermediate axis", "time (s)", "body-frame spin (rad/s)"),
        ("incline", "Test 4: dumbbell rolling down a 20 deg incline (theory: a = g sin θ / (1 + I/(M r²)))", "time (s)", "centre speed down the slope (m/s)"),
    ];
    for (name, title, xl, yl) in figs {
        let file = format!("clumps_{name}.png");
        // the theory line of the first backend that drew one
        let first = report.points.iter().find(|p| p.figure == name && p.series == "theory").map(|p| p.backend);
        let theory: Vec<(f64, f64)> = report.points.iter().filter(|p| p.figure == name && p.series == "theory" && Some(p.backend) == first).map(|p| (p.x, p.y)).collect();
        let points = report.points.iter().filter(|p| p.figure == name && p.series != "theory").map(|p| (format!("{} ({})", p.series, p.backend), p.x, p.y));
        crate::plot::named_chart(&dir.join(&file), title, xl, yl, &theory, points)?;
        written.push(file);
    }
    Ok(written)
}
