//! Which plane and mesh walls a sphere comes within a distance of: insertion keeps new
//! particles clear with it (`crate::flow::insert`), the scene loader checks the generators with
//! it, and a run stopped by an overlap names the wall it overlaps with it.

use std::ops::ControlFlow;

use glam::DVec3;

use super::forces::MeshView;
use crate::mesh::closest::closest_point_on_triangle;
use crate::setup::Wall;

/// A plane or mesh wall that a sphere comes within `reach` of (`wall_hits`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WallHit {
    /// `walls[wall]`: the centre is less than `reach` in front of the plane (or behind it).
    Plane { wall: usize, depth: f64 },
    /// `meshes[mesh]`, triangle `facet`: the centre is less than `reach` from it. `behind`:
    /// the centre is on the back of a one-sided facet (its normal points away from the
    /// centre), where the mesh pushes the sphere through to the front.
    Mesh { mesh: usize, facet: u32, depth: f64, behind: bool },
}

impl WallHit {
    /// How far the sphere reaches past the surface, m: `reach` − the centre's distance in
    /// front (a centre behind a plane or a one-sided facet adds its distance).
    pub fn depth(&self) -> f64 {
        match *self {
            WallHit::Plane { depth, .. } | WallHit::Mesh { depth, .. } => depth,
        }
    }
}

/// Visit every plane wall of `walls` (at `time`) and every triangle of `meshes` that a sphere
/// at `x` comes within `reach` of, in order (planes, then meshes by triangle), until `f`
/// breaks; returns whether it broke. The order and the test are those insertion has always used.
pub fn wall_hits(walls: &[Wall], time: f64, meshes: &[MeshView], x: DVec3, reach: f64, mut f: impl FnMut(WallHit) -> ControlFlow<()>) -> ControlFlow<()> {
    for (i, w) in walls.iter().enumerate() {
        let s = w.state_at(time);
        let d = (x - s.point).dot(s.normal);
        if d < reach {
            f(WallHit::Plane { wall: i, depth: reach - d })?;
        }
    }
    for (k, m) in meshes.iter().enumerate() {
        let xb = m.to_mesh_frame(x);
        let mesh = &m.wall.mesh;
        for t in m.grid.candidates(xb, reach) {
            let [a, b, c] = mesh.triangles[t as usize];
            let cp = closest_point_on_triangle(xb, a, b, c).point;
            let d2 = (cp - xb).length_squared();
            if d2 < reach * reach {
                let d = d2.sqrt();
                let behind = !mesh.two_sided && (xb - cp).dot(mesh.normals[t as usize]) < 0.0;
                f(WallHit::Mesh { mesh: k, facet: t, depth: if behind { reach + d } else { reach - d }, behind })?;
            }
        }
    }
    ControlFlow::Continue(())
}

/// The deepest of `wall_hits` for a sphere (x, r), if any.
pub fn deepest_wall_hit(walls: &[Wall], time: f64, meshes: &[MeshView], x: DVec3, r: f64) -> Option<WallHit> {
    let mut best: Option<WallHit> = None;
    let _ = wall_hits(walls, time, meshes, x, r, |h| {
        if best.is_none_or(|b| h.depth() > b.depth()) {
            best = Some(h);
        }
        ControlFlow::Continue(())
    });
    best
}

/// "wall \"floor\"" or "mesh \"hopper\" facet 12" for a hit of `setup`-like walls and meshes.
pub fn describe_hit(hit: &WallHit, walls: &[Wall], meshes: &[MeshView]) -> String {
    match *hit {
        WallHit::Plane { wall, .. } => format!("wall \"{}\"", walls[wall].name),
        WallHit::Mesh { mesh, facet, .. } => format!("mesh \"{}\" facet {facet}", meshes[mesh].wall.name),
    }
}

/// The plane wall or mesh facet a particle at `x` (radius `r`, at `time`) overlapped beyond the
/// run-time limit (`OVERLAP_MAX_FRACTION` of its radius), named, and whether the particles are
/// behind it: its centre is behind a one-sided facet, or the one-sided mesh wraps around
/// `positions()` (a sample of the particle centres) with its normals pointing away from them
/// (the particle may have been pushed through already). The checked state may be up to a step
/// past the force pass that found the overlap (the wall's push may already have moved the
/// particle back), so a wall counts when the sphere, moved by up to `travel` (its speed × Δt),
/// reaches that deep. `None` when no wall does: the overlap is with another particle. Both
/// backends name a stopped run's wall with it.
pub fn overlap_wall(walls: &[Wall], time: f64, meshes: &[MeshView], x: DVec3, r: f64, travel: f64, positions: impl FnOnce() -> Vec<DVec3>) -> Option<(String, bool)> {
    let hit = deepest_wall_hit(walls, time, meshes, x, r + travel).filter(|h| h.depth() > crate::model::checks::OVERLAP_MAX_FRACTION * r)?;
    let behind = match hit {
        WallHit::Mesh { behind: true, .. } => true,
        WallHit::Mesh { mesh, .. } if !meshes[mesh].wall.mesh.two_sided => crate::mesh::winding::wraps_away(&meshes[mesh].wall.mesh, &positions()),
        _ => false,
    };
    Some((describe_hit(&hit, walls, meshes), behind))
}
