//! Load-time checks of a parsed scene (docs/scenes.md, "Checks"): every value within the bounds
//! the GPU's f32 state represents with the precision the physics needs
//! (`crate::model::checks`), and the time step against the Rayleigh step and the contact time at
//! the largest relative speed the scene can reach.

use glam::DVec3;

use super::parse::{fmt_floor, fmt_num, fmt_vec, index, Cx};
use super::timestep::rayleigh_time_step_single;
use crate::contact::params::{ContactModel, PairParams};
use crate::error::{Result, TalusError};
use crate::model::checks::{MAX_COORDINATE, MAX_GRAVITY, MAX_RADIUS_RATIO, MAX_SPEED, MIN_RADIUS};
use crate::motion::WallMotion;
use crate::setup::{Setup, TimeStepChoice};

/// Explicit time steps above this fraction of the Rayleigh step are rejected (LIGGGHTS
/// `fix check/timestep/gran` warns above 0.2; EDEM's guidance is 0.2–0.4).
pub const RAYLEIGH_ERROR_FRACTION: f64 = 0.5;
/// Time steps above this fraction of the Rayleigh step get a warning.
pub const RAYLEIGH_WARN_FRACTION: f64 = 0.2;
/// Time steps above this fraction of the shortest contact time are rejected (fewer than 5 steps
/// per collision: the restitution is wrong, velocity Verlet goes unstable above ~0.64 of a
/// linear contact's duration).
pub const CONTACT_ERROR_FRACTION: f64 = 0.2;
/// LIGGGHTS warns above this fraction of the Hertz time; Talus's contact time is taken at a
/// conservative speed (free fall over the whole domain height, head-on), so it does not warn.
pub const CONTACT_WARN_FRACTION: f64 = 0.1;

/// `time_step_check`: what a time step beyond the error fractions gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeStepCheck {
    Error,
    Warn,
}

/// Result of the time-step check: the two reference times and the largest relative speed.
#[derive(Clone, Debug, PartialEq)]
pub struct TimeStepReport {
    pub rayleigh: f64,
    /// Shortest contact duration over the pairs at `speed` (Hertz: 2.87 (m*²/(R* E*² v))^(1/5);
    /// hooke: π √(m*/k)).
    pub contact: f64,
    pub speed: f64,
    /// Largest dt passing both error fractions.
    pub safe: f64,
}

fn err(cx: &Cx, key: &str, message: String) -> TalusError {
    cx.err(key, message)
}

fn point_ok(x: [f64; 3]) -> bool {
    x.iter().all(|c| c.is_finite() && c.abs() <= MAX_COORDINATE)
}

fn speed_ok(speed: f64) -> bool {
    speed.is_finite() && speed <= MAX_SPEED
}

fn check_point(cx: &Cx, key: &str, x: [f64; 3]) -> Result<()> {
    if !point_ok(x) {
        return Err(err(cx, key, format!("{} m is outside the representable range: every coordinate must be finite and within ±{} m (docs/scenes.md, \"Checks\")", fmt_vec(x), fmt_num(MAX_COORDINATE))));
    }
    Ok(())
}

fn check_speed(cx: &Cx, key: &str, what: &str, speed: f64) -> Result<()> {
    if !speed_ok(speed) {
        return Err(err(cx, key, format!("{what} {} m/s is above the largest speed {} m/s (docs/scenes.md, \"Checks\")", fmt_num(speed), fmt_num(MAX_SPEED))));
    }
    Ok(())
}

/// Largest speed of a wall's surface within `reach` m of its rotation centre over all keyframes.
fn wall_speed(m: &WallMotion, reach: f64) -> f64 {
    let v = m.velocity.keys.iter().map(|(_, v)| v.length()).fold(0.0, f64::max);
    let w = m.angular_speed.keys.iter().map(|(_, w)| w.abs()).fold(0.0, f64::max);
    v + w * reach
}

/// Range checks: coordinates, radii, speeds and gravity of `s` (see `crate::model::checks`).
pub fn check_ranges(cx: &Cx, s: &Setup) -> Result<()> {
    let g = DVec3::from(s.gravity);
    if !g.is_finite() || g.length() > MAX_GRAVITY {
        return Err(err(cx, "gravity", format!("{} m/s^2 is above the largest gravity {} m/s^2", fmt_vec(s.gravity), fmt_num(MAX_GRAVITY))));
    }
    let p = &s.particles;
    for i in 0..p.len() {
        // the keys and texts are formatted only for a particle that fails (100M particles load
        // in a fraction of the time)
        let r = p.radius[i];
        let speed = DVec3::from(p.velocity[i]).length() + DVec3::from(p.angular_velocity[i]).length() * r;
        if point_ok(p.position[i]) && (MIN_RADIUS..=MAX_COORDINATE).contains(&r) && speed_ok(speed) {
            continue;
        }
        let key = index("particles", i);
        check_point(cx, &format!("{key}.position"), p.position[i])?;
        if !(r >= MIN_RADIUS) || r > MAX_COORDINATE {
            return Err(err(cx, &format!("{key}.radius"), format!("{} m is outside [{}, {}] m", fmt_num(r), fmt_num(MIN_RADIUS), fmt_num(MAX_COORDINATE))));
        }
        let what = format!("velocity {} m/s, angular velocity {} rad/s: speed |v| + |ω| r", fmt_vec(p.velocity[i]), fmt_vec(p.angular_velocity[i]));
        check_speed(cx, &format!("{key}.velocity"), &what, speed)?;
    }
    for (k, ins) in s.inserts.iter().enumerate() {
        let key = index("insert", k);
        let (lo, hi) = ins.region.bounds();
        check_point(cx, &format!("{key}.region"), lo.to_array())?;
        check_point(cx, &format!("{key}.region"), hi.to_array())?;
        if !(ins.radius.min() >= MIN_RADIUS) {
            return Err(err(cx, &format!("{key}.radius"), format!("smallest radius {} m is below {} m", fmt_num(ins.radius.min()), fmt_num(MIN_RADIUS))));
        }
        let speed = ins.velocity.length() + ins.angular_velocity.length() * ins.radius.max();
        let what = format!("velocity {} m/s, angular velocity {} rad/s: speed |v| + |ω| r", fmt_vec(ins.velocity.to_array()), fmt_vec(ins.angular_velocity.to_array()));
        check_speed(cx, &format!("{key}.velocity"), &what, speed)?;
    }
    // a derived domain is checked after the particles, which it is made from
    check_point(cx, "domain.min", s.domain.min)?;
    check_point(cx, "domain.max", s.domain.max)?;
    let r_min = p.radius.iter().cloned().chain(s.inserts.iter().map(|i| i.radius.min())).fold(f64::INFINITY, f64::min);
    let r_max = s.max_radius();
    if r_max > MAX_RADIUS_RATIO * r_min {
        return Err(err(cx, "particles", format!("radii from {} m to {} m: the ratio {} is above {} (docs/scenes.md, \"Checks\")", fmt_num(r_min), fmt_num(r_max), fmt_num(r_max / r_min), fmt_num(MAX_RADIUS_RATIO))));
    }
    let reach = domain_reach(s);
    for w in &s.walls {
        check_point(cx, &format!("walls ({})", w.name), w.point)?;
        check_speed(cx, &format!("walls ({}).motion", w.name), "largest surface speed in the domain", wall_speed(&w.motion, reach(w.motion.center)))?;
    }
    for m in &s.meshes {
        let (lo, hi) = m.mesh.bounds();
        check_point(cx, &format!("walls ({})", m.name), lo.to_array())?;
        check_point(cx, &format!("walls ({})", m.name), hi.to_array())?;
        check_speed(cx, &format!("walls ({}).motion", m.name), "largest surface speed in the domain", wall_speed(&m.motion, reach(m.motion.center)))?;
    }
    Ok(())
}

/// Distance from a point to the farthest corner of the domain.
fn domain_reach(s: &Setup) -> impl Fn(DVec3) -> f64 + '_ {
    move |c: DVec3| {
        let (lo, hi) = (DVec3::from(s.domain.min), DVec3::from(s.domain.max));
        let far = DVec3::new((c.x - lo.x).abs().max((hi.x - c.x).abs()), (c.y - lo.y).abs().max((hi.y - c.y).abs()), (c.z - lo.z).abs().max((hi.z - c.z).abs()));
        far.length()
    }
}

/// Largest relative speed of two bodies in the scene, as LIGGGHTS's `check/timestep/gran`
/// takes it: the largest particle speed (initial velocities, insertion velocities, plus free
/// fall over the domain's whole height along gravity) plus the fastest wall surface.
pub fn largest_relative_speed(s: &Setup) -> f64 {
    let p = &s.particles;
    let mut v: f64 = 0.0;
    for i in 0..p.len() {
        v = v.max(DVec3::from(p.velocity[i]).length() + DVec3::from(p.angular_velocity[i]).length() * p.radius[i]);
    }
    for ins in &s.inserts {
        v = v.max(ins.velocity.length() + ins.angular_velocity.length() * ins.radius.max());
    }
    let g = DVec3::from(s.gravity);
    let extent = DVec3::from(s.domain.max) - DVec3::from(s.domain.min);
    let height = if g.length() > 0.0 { (g.normalize().abs() * extent).element_sum() } else { 0.0 };
    let v_particle = (v * v + 2.0 * g.length() * height).sqrt();
    let reach = domain_reach(s);
    let v_wall = s.walls.iter().map(|w| wall_speed(&w.motion, reach(w.motion.center))).chain(s.meshes.iter().map(|m| wall_speed(&m.motion, reach(m.motion.center)))).fold(0.0, f64::max);
    v_particle + v_wall
}

/// Contact duration of two bodies (masses m1, m2 — `f64::INFINITY` for a wall —, radii r1, r2)
/// with pair parameters `pp` at relative normal speed `v`: hooke π √(m*/k) (k from
/// `elasticStiffness` or `characteristicVelocity`), the others Hertz 2.87 (m*²/(R* E*² v))^(1/5).
fn contact_time(pp: &PairParams, m1: f64, m2: f64, r1: f64, r2: f64, v: f64) -> f64 {
    let m_star = if m2.is_infinite() { m1 } else { m1 * m2 / (m1 + m2) };
    let r_star = if r2.is_infinite() { r1 } else { r1 * r2 / (r1 + r2) };
    let e_star = pp.e_star();
    if pp.model == ContactModel::Hooke {
        let use_v0 = (pp.use_characteristic_velocity && pp.characteristic_velocity > 0.0) || pp.elastic_stiffness <= 0.0;
        let k = if use_v0 {
            // hooke_stiffness with r* = R̄/2 = R*, m_c = m*
            let v0 = pp.characteristic_velocity;
            let sqrt_r = r_star.sqrt();
            16.0 / 15.0 * sqrt_r * e_star * (15.0 * m_star * v0 * v0 / (16.0 * sqrt_r * e_star)).powf(0.2)
        } else {
            pp.elastic_stiffness
        };
        return std::f64::consts::PI * (m_star / k).sqrt();
    }
    let v = v.max(1e-3);
    2.87 * (m_star * m_star / (r_star * e_star * e_star * v)).powf(0.2)
}

/// The Rayleigh step and the shortest contact time of `s` (pairs of the smallest particles of
/// every particle material, and of those with every wall material).
pub fn time_step_report(s: &Setup) -> TimeStepReport {
    let nm = s.materials.len();
    let mut r_min = vec![f64::INFINITY; nm];
    for (&m, &r) in s.particles.material.iter().zip(&s.particles.radius) {
        r_min[m as usize] = r_min[m as usize].min(r);
    }
    for ins in &s.inserts {
        r_min[ins.material as usize] = r_min[ins.material as usize].min(ins.radius.min());
    }
    let mut wall_mat = vec![false; nm];
    for w in &s.walls {
        wall_mat[w.material as usize] = true;
    }
    for m in &s.meshes {
        wall_mat[m.material as usize] = true;
    }
    let speed = largest_relative_speed(s);
    let mut rayleigh = f64::INFINITY;
    let mut contact = f64::INFINITY;
    let used: Vec<usize> = (0..nm).filter(|&a| r_min[a].is_finite()).collect();
    for &a in &used {
        let ra = r_min[a];
        let ma = s.mass_of(a as u32, ra);
        let mut hertz_like = false;
        for b in 0..nm {
            let pp = s.pairs.get(a as u32, b as u32);
            hertz_like |= pp.model != ContactModel::Hooke && (r_min[b].is_finite() || wall_mat[b]);
            if r_min[b].is_finite() {
                let rb = r_min[b];
                contact = contact.min(contact_time(pp, ma, s.mass_of(b as u32, rb), ra, rb, speed));
            }
            if wall_mat[b] {
                contact = contact.min(contact_time(pp, ma, f64::INFINITY, ra, f64::INFINITY, speed));
            }
        }
        if hertz_like {
            let m = &s.materials[a];
            rayleigh = rayleigh.min(rayleigh_time_step_single(m.density, m.hz_shear, m.hz_poiss, ra));
        }
    }
    let safe = (RAYLEIGH_ERROR_FRACTION * rayleigh).min(CONTACT_ERROR_FRACTION * contact);
    TimeStepReport { rayleigh, contact, speed, safe }
}

/// Check `s.dt` against the Rayleigh step and the contact time. Returns the warnings to print;
/// beyond the error fractions an error with both times and the largest safe dt, unless `mode`
/// is `Warn`.
pub fn check_time_step(cx: &Cx, s: &Setup, mode: TimeStepCheck) -> Result<Vec<String>> {
    let r = time_step_report(s);
    let dt = s.dt;
    let key = match s.dt_choice {
        TimeStepChoice::Explicit => "time_step",
        TimeStepChoice::Auto { .. } => "time_step_fraction",
    };
    let times = format!(
        "dt = {} s is {} × the Rayleigh step {} s and {} × the shortest contact time {} s (at the largest relative speed {} m/s the scene can reach)",
        fmt_num(dt),
        fmt_num(dt / r.rayleigh),
        fmt_num(r.rayleigh),
        fmt_num(dt / r.contact),
        fmt_num(r.contact),
        fmt_num(r.speed)
    );
    let mut warnings = Vec::new();
    if !(dt <= RAYLEIGH_ERROR_FRACTION * r.rayleigh && dt <= CONTACT_ERROR_FRACTION * r.contact) {
        // the bound printed is rounded down, so that the value as printed passes
        let fix = match s.dt_choice {
            TimeStepChoice::Explicit => format!("The largest safe time step is {} s (or use \"time_step\": \"auto\"; \"time_step_check\": \"warn\" runs it anyway)", fmt_floor(r.safe)),
            TimeStepChoice::Auto { rayleigh, .. } => format!(
                "The largest safe time_step_fraction is {} (a time step of {} s; \"time_step_check\": \"warn\" runs it anyway)",
                fmt_floor(r.safe / rayleigh),
                fmt_floor(r.safe)
            ),
        };
        let msg = format!("{times}; above {RAYLEIGH_ERROR_FRACTION} × Rayleigh or {CONTACT_ERROR_FRACTION} × contact time the run is unstable or its collisions are wrong. {fix}");
        match mode {
            TimeStepCheck::Error => return Err(err(cx, key, msg)),
            TimeStepCheck::Warn => warnings.push(format!("{}: {key}: warning: {msg}", cx.file.display())),
        }
    } else if dt > RAYLEIGH_WARN_FRACTION * r.rayleigh * (1.0 + 1e-9) {
        warnings.push(format!(
            "{}: {key}: warning: {times}; LIGGGHTS warns above {RAYLEIGH_WARN_FRACTION} × Rayleigh",
            cx.file.display()
        ));
    }
    Ok(warnings)
}
