//! The `motion` object of a wall (docs/scenes.md, "Moving walls"):
//!
//! ```json
//! "motion": {
//!   "velocity": [0.1, 0, 0],                         // m/s, or keyframes [[t, [vx, vy, vz]], …]
//!   "angular_velocity": [[0, 0], [1, 3.14]],         // rad/s, or a constant number
//!   "axis": [0, 1, 0],                               // required with angular_velocity
//!   "center": [0, 0, 0]                              // a point on the axis at t = 0
//! }
//! ```

use glam::DVec3;
use serde_json::Value;

use super::parse::{fmt_num, fmt_vec, index, Obj};
use crate::error::Result;
use crate::motion::{Profile, WallMotion};

const MOTION_KEYS: &[&str] = &["velocity", "angular_velocity", "axis", "center"];

/// The wall's motion; `default_center` is used when `center` is not given.
pub fn wall_motion(o: &Obj, default_center: [f64; 3]) -> Result<WallMotion> {
    let Some(m) = o.obj_opt("motion")? else {
        return Ok(WallMotion::default());
    };
    m.allow(MOTION_KEYS)?;
    let cx = m.cx;
    let velocity = match m.get("velocity") {
        None => Profile::constant(DVec3::ZERO),
        Some(v @ Value::Array(a)) if a.first().is_some_and(|x| x.is_array()) => profile(&m, "velocity", v, |v, p| Ok(DVec3::from(cx.vec3(v, p)?)))?,
        Some(v) => Profile::constant(DVec3::from(cx.vec3(v, &m.key("velocity"))?)),
    };
    let angular_speed = match m.get("angular_velocity") {
        None => Profile::constant(0.0),
        Some(v @ Value::Array(_)) => profile(&m, "angular_velocity", v, |v, p| cx.number(v, p))?,
        Some(v) => Profile::constant(cx.number(v, &m.key("angular_velocity"))?),
    };
    let axis = match m.vec3_opt("axis")? {
        Some(a) => {
            let len = DVec3::from(a).length();
            if len <= 1e-300 {
                return Err(cx.err(&m.key("axis"), format!("must be a non-zero vector, got {}", fmt_vec(a))));
            }
            DVec3::from(a) / len
        }
        None if !angular_speed.is_zero() => {
            return Err(cx.err(&m.key("axis"), "missing required key (angular_velocity is given)"));
        }
        None => DVec3::Z,
    };
    let center = DVec3::from(m.vec3_opt("center")?.unwrap_or(default_center));
    Ok(WallMotion { velocity, angular_speed, axis, center })
}

/// Keyframes `[[t, value], …]` with strictly increasing, non-negative times.
fn profile<T>(m: &Obj, key: &str, v: &Value, value: impl Fn(&Value, &str) -> Result<T>) -> Result<Profile<T>> {
    let cx = m.cx;
    let path = m.key(key);
    let list = cx.array(v, &path)?;
    if list.is_empty() {
        return Err(cx.err(&path, "needs at least one keyframe [t, value]"));
    }
    let mut keys: Vec<(f64, T)> = Vec::with_capacity(list.len());
    for (k, item) in list.iter().enumerate() {
        let p = index(&path, k);
        let pair = cx.array(item, &p)?;
        if pair.len() != 2 {
            return Err(cx.err(&p, format!("a keyframe is [t, value], got {} entries", pair.len())));
        }
        let t = cx.number(&pair[0], &index(&p, 0))?;
        if t < 0.0 {
            return Err(cx.err(&index(&p, 0), format!("time must be >= 0 s, got {}", fmt_num(t))));
        }
        if let Some((prev, _)) = keys.last() {
            if t <= *prev {
                return Err(cx.err(&index(&p, 0), format!("keyframe times must increase, got {} after {}", fmt_num(t), fmt_num(*prev))));
            }
        }
        keys.push((t, value(&pair[1], &index(&p, 1))?));
    }
    Ok(Profile { keys })
}
