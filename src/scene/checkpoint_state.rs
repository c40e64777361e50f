//! A scene's `"initial_state"` from a Talus checkpoint (`format: "checkpoint"`): the particles
//! (positions as wrapped into the checkpoint's domain, velocities, spins, radii) and every
//! contact's history, so a bed settled once starts other scenes (new walls, an outlet opened,
//! another contact model) with its contacts loaded as they were. The run starts at step 0 with
//! zero energies; images, forces and the run's progress are not taken.
//!
//! Materials: with `"material"` every particle gets that material; without, each keeps its
//! material by name, which the scene must define. Ball–ball history is kept. A ball–wall
//! contact's history is kept when the scene has a plane wall of the same name, and a ball–mesh
//! contact's when the scene has a mesh wall of the same name with as many facet groups;
//! the others start new.
//!
//! ```json
//! "initial_state": { "file": "settle/checkpoint.talus", "format": "checkpoint" }
//! ```

use std::path::Path;

use super::parse::Cx;
use crate::checkpoint::{Checkpoint, MeshRecord};
use crate::error::Result;
use crate::layout::consts::{MESH_KEY_BIT, WALL_KEY_BIT};
use crate::model::material::Material;
use crate::model::state::ContactRecord;
use crate::setup::{mesh_group_bases, MeshWall, Particles, Wall};

/// The contacts of a checkpoint, wall keys as the checkpoint's scene numbered them.
pub struct SavedContacts {
    records: Vec<ContactRecord>,
    walls: Vec<String>,
    meshes: Vec<MeshRecord>,
    /// The checkpoint's rigid bodies (empty without clumps).
    pub bodies: crate::model::body::Bodies,
}

/// Read checkpoint `path` into `particles` (empty so far, so ids stay those of the
/// checkpoint): every particle with material `material`, or by name when `None`. Errors name
/// the scene key `key` and the file.
pub fn read(cx: &Cx, key: &str, path: &Path, material: Option<u32>, materials: &[Material], particles: &mut Particles) -> Result<SavedContacts> {
    assert!(particles.is_empty(), "initial_state particles come first");
    let c = Checkpoint::read(path).map_err(|e| cx.err(key, format!("cannot read checkpoint: {e}")))?;
    let mut by_name = Vec::with_capacity(c.meta.materials.len());
    if material.is_none() {
        for name in &c.meta.materials {
            by_name.push(materials.iter().position(|m| &m.name == name).map(|i| i as u32));
        }
    }
    let p = &c.state.particles;
    for i in 0..p.len() {
        let m = match material {
            Some(m) => m,
            None => by_name[p.material[i] as usize].ok_or_else(|| {
                let name = &c.meta.materials[p.material[i] as usize];
                let names: Vec<&str> = materials.iter().map(|m| m.name.as_str()).collect();
                cx.err(key, format!("{}: particle {i} is of material \"{name}\", which this scene does not define (it defines {}); define it or give \"material\"", path.display(), names.join(", ")))
            })?,
        };
        particles.push(p.position[i], p.velocity[i], p.angular_velocity[i], p.radius[i], m);
    }
    Ok(SavedContacts { records: c.state.history, walls: c.meta.walls, meshes: c.meta.meshes, bodies: c.state.bodies })
}

impl SavedContacts {
    /// The history for a scene with `walls` and `meshes`: wall and mesh keys renumbered by
    /// name, contacts with walls the scene lacks dropped; sorted by (owner, partner).
    pub fn for_walls(self, walls: &[Wall], meshes: &[MeshWall]) -> Result<Vec<ContactRecord>> {
        let old_bases: Vec<u32> = (self.meshes.iter())
            .scan(0u32, |next, m| {
                let base = *next;
                *next += m.groups;
                Some(base)
            })
            .collect();
        let new_bases = mesh_group_bases(meshes)?;
        let remap = |key: u32| -> Option<u32> {
            if key < WALL_KEY_BIT {
                return Some(key);
            }
            let k = key & !WALL_KEY_BIT;
            if k & MESH_KEY_BIT == 0 {
                let name = self.walls.get(k as usize)?;
                return walls.iter().position(|w| &w.name == name).map(|w| WALL_KEY_BIT | w as u32);
            }
            let g = k & !MESH_KEY_BIT;
            let old = (0..self.meshes.len()).rev().find(|&m| old_bases[m] <= g)?;
            let saved = &self.meshes[old];
            if g - old_bases[old] >= saved.groups {
                return None;
            }
            let new = meshes.iter().position(|m| m.name == saved.name && m.mesh.group_count == saved.groups)?;
            Some(WALL_KEY_BIT | MESH_KEY_BIT | (new_bases[new] + g - old_bases[old]))
        };
        let mut out: Vec<ContactRecord> = self.records.iter().filter_map(|c| remap(c.partner).map(|partner| ContactRecord { partner, ..*c })).collect();
        out.sort_by_key(|c| (c.owner, c.partner));
        Ok(out)
    }
}
