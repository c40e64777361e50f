//! A scene's `"initial_state"` from a Talus VTU snapshot (`format: "vtu"`): settle once, save
//! the last snapshot, then start other scenes from it (new walls, a new contact model). Read
//! with `output::read::read_vtu`: positions, `radius`, and `velocity` / `angular_velocity` when
//! present (zero otherwise), in increasing `id` when the file has ids. The snapshot's overlaps
//! are kept; contact history starts at zero (a VTU holds none), as after LAMMPS `read_data`.
//!
//! ```json
//! "initial_state": { "file": "run/snapshots/particles_000040.vtu", "format": "vtu", "material": "grain" }
//! ```

use std::path::Path;

use super::parse::Cx;
use crate::error::Result;
use crate::output::read::read_vtu;
use crate::setup::Particles;

/// Read snapshot `path` into `particles` with material `material`; errors name the scene key
/// `key` and the file.
pub fn read(cx: &Cx, key: &str, path: &Path, material: u32, particles: &mut Particles) -> Result<()> {
    let points = read_vtu(path).map_err(|e| cx.err(key, format!("cannot read VTU snapshot: {e}")))?;
    let n = points.position.len();
    let radius = points.array(path, "radius", 1).map_err(|e| cx.err(key, e.to_string()))?;
    let vec3 = |name: &str| -> Result<Option<&[f64]>> {
        match points.arrays.iter().any(|a| a.name == name) {
            true => points.array(path, name, 3).map(Some).map_err(|e| cx.err(key, e.to_string())),
            false => Ok(None),
        }
    };
    let (velocity, spin) = (vec3("velocity")?, vec3("angular_velocity")?);
    let mut order: Vec<usize> = (0..n).collect();
    if points.arrays.iter().any(|a| a.name == "id") {
        let ids = points.array(path, "id", 1).map_err(|e| cx.err(key, e.to_string()))?;
        order.sort_by(|&a, &b| ids[a].total_cmp(&ids[b]));
    }
    let at = |v: Option<&[f64]>, i: usize| v.map_or([0.0; 3], |v| [v[3 * i], v[3 * i + 1], v[3 * i + 2]]);
    for i in order {
        let r = radius[i];
        if !(r.is_finite() && r > 0.0) {
            return Err(cx.err(key, format!("{}: particle {i} has radius {}; radii must be finite and > 0", path.display(), crate::error::fmt_num(r))));
        }
        particles.push(points.position[i], at(velocity, i), at(spin, i), r, material);
    }
    Ok(())
}
