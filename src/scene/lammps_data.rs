//! A scene's `"initial_state"` from a LAMMPS/LIGGGHTS `write_data` file, so Talus starts from
//! exactly the packing a peer code settled (`../shared/peers/settle`). Read: the `N atoms`
//! header, the `Atoms` section in `atom_style granular`/`sphere` form (`id type diameter
//! density x y z [ix iy iz]`) and the optional `Velocities` section (`id vx vy vz wx wy wz`).
//! Particles come in increasing atom id; their overlaps (a settled packing has many small
//! ones) are kept as they are. Image flags are applied (x + i·L on each axis of the box).
//!
//! ```json
//! "initial_state": { "file": "settled.data", "format": "lammps_data", "material": "grain" }
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use super::parse::Cx;
use crate::error::Result;
use crate::setup::Particles;

/// One atom of the `Atoms` section.
struct Atom {
    radius: f64,
    density: f64,
    position: [f64; 3],
    velocity: [f64; 3],
    angular_velocity: [f64; 3],
}

/// Read `path` into `particles` with material `material` of density `density`: every atom's
/// density must be that density (relative 1e-6). Errors name the scene key, the data file and
/// its line.
pub fn read(cx: &Cx, key: &str, path: &Path, material: u32, density: f64, particles: &mut Particles) -> Result<()> {
    let text = std::fs::read_to_string(path).map_err(|e| cx.err(key, format!("cannot read LAMMPS data file {}: {e}", path.display())))?;
    let bad = |line: usize, what: String| cx.err(key, format!("{} line {}: {what}", path.display(), line + 1));
    let lines: Vec<&str> = text.lines().map(|l| l.split('#').next().unwrap_or("").trim()).collect();
    let mut n_atoms: Option<usize> = None;
    let mut box_len = [0.0f64; 3];
    let mut atoms: BTreeMap<u64, Atom> = BTreeMap::new();
    let mut section = "";
    let mut velocities = 0usize;
    // the first line is a title; the header ends at the first section name
    for (ln, raw) in text.lines().enumerate().skip(1) {
        let line = lines[ln];
        if line.is_empty() {
            continue;
        }
        let first = line.split_whitespace().next().unwrap_or("");
        if first.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) {
            section = match first {
                "Atoms" => {
                    let style = raw.split('#').nth(1).map(str::trim).unwrap_or("");
                    if !style.is_empty() && style != "granular" && style != "sphere" {
                        return Err(bad(ln, format!("atom style \"{style}\" is not supported (write the data with atom_style granular or sphere)")));
                    }
                    "Atoms"
                }
                "Velocities" => "Velocities",
                _ => "skip",
            };
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        let num = |s: &str| s.parse::<f64>().map_err(|_| bad(ln, format!("\"{s}\" is not a number")));
        match section {
            "" => {
                if f.len() == 2 && f[1] == "atoms" {
                    n_atoms = Some(f[0].parse().map_err(|_| bad(ln, format!("\"{}\" is not an atom count", f[0])))?);
                }
                for (a, (lo, hi)) in [("xlo", "xhi"), ("ylo", "yhi"), ("zlo", "zhi")].iter().enumerate() {
                    if f.len() == 4 && f[2] == *lo && f[3] == *hi {
                        box_len[a] = num(f[1])? - num(f[0])?;
                    }
                }
            }
            "Atoms" => {
                if f.len() != 7 && f.len() != 10 {
                    return Err(bad(ln, format!("expected 7 or 10 columns (id type diameter density x y z [ix iy iz]), got {}", f.len())));
                }
                let id: u64 = f[0].parse().map_err(|_| bad(ln, format!("\"{}\" is not an atom id", f[0])))?;
                let (d, rho) = (num(f[2])?, num(f[3])?);
                if !(d > 0.0) || !d.is_finite() {
                    return Err(bad(ln, format!("diameter must be > 0, got {}", f[2])));
                }
                let mut position = [num(f[4])?, num(f[5])?, num(f[6])?];
                if f.len() == 10 {
                    for a in 0..3 {
                        let image: i64 = f[7 + a].parse().map_err(|_| bad(ln, format!("\"{}\" is not an image flag", f[7 + a])))?;
                        position[a] += image as f64 * box_len[a];
                    }
                }
                if position.iter().any(|x| !x.is_finite()) {
                    return Err(bad(ln, "position is not finite".into()));
                }
                let atom = Atom { radius: 0.5 * d, density: rho, position, velocity: [0.0; 3], angular_velocity: [0.0; 3] };
                if atoms.insert(id, atom).is_some() {
                    return Err(bad(ln, format!("atom id {id} appears twice")));
                }
            }
            "Velocities" => {
                if f.len() != 7 {
                    return Err(bad(ln, format!("expected 7 columns (id vx vy vz wx wy wz), got {}", f.len())));
                }
                let id: u64 = f[0].parse().map_err(|_| bad(ln, format!("\"{}\" is not an atom id", f[0])))?;
                let v = [num(f[1])?, num(f[2])?, num(f[3])?];
                let w = [num(f[4])?, num(f[5])?, num(f[6])?];
                let atom = atoms.get_mut(&id).ok_or_else(|| bad(ln, format!("velocity of atom {id}, which the Atoms section (before it) does not have")))?;
                atom.velocity = v;
                atom.angular_velocity = w;
                velocities += 1;
            }
            _ => {}
        }
    }
    let n = n_atoms.ok_or_else(|| cx.err(key, format!("{}: no \"N atoms\" header line (is this a LAMMPS data file?)", path.display())))?;
    if atoms.len() != n {
        return Err(cx.err(key, format!("{}: the header says {n} atoms, the Atoms section has {}", path.display(), atoms.len())));
    }
    if velocities != 0 && velocities != n {
        return Err(cx.err(key, format!("{}: the Velocities section has {velocities} rows for {n} atoms", path.display())));
    }
    for (id, a) in &atoms {
        if ((a.density - density) / density).abs() > 1e-6 {
            return Err(cx.err(key, format!("{}: atom {id} has density {} but the material's density is {density}", path.display(), a.density)));
        }
        particles.push(a.position, a.velocity, a.angular_velocity, a.radius, material);
    }
    Ok(())
}
