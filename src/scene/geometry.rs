//! Load-time geometry checks (docs/scenes.md, "Checks"): explicit particles and generators
//! against the plane and mesh walls, through the test insertion uses
//! (`crate::flow::insert::wall_hits`), and the winding of one-sided meshes against where the
//! particles are.

use glam::DVec3;

use super::parse::{fmt_num, fmt_vec, Cx};
use crate::cpu::forces::MeshView;
use crate::error::{Result, TalusError};
use crate::cpu::wall_hits::{deepest_wall_hit, describe_hit, WallHit};
use crate::mesh::grid::TriangleGrid;
use crate::mesh::winding::{wrap_away, WRAP_WARN};
use crate::setup::{MeshWall, Wall};

/// A random fill's place may reach this fraction of its radius into a wall (rounding of a
/// centre placed exactly one radius in front of it).
const TOUCH_TOLERANCE: f64 = 1e-6;
/// A lattice or explicit particle reaching more than this fraction of its radius into a wall is
/// an error (less is a contact the first steps resolve gently, as in a settled bed).
pub const CUT_TOLERANCE: f64 = 0.01;

/// Triangle grids of the mesh walls for the load-time checks (`TriangleGrid::coarse`).
pub(crate) fn grids(meshes: &[MeshWall]) -> Result<Vec<TriangleGrid>> {
    meshes.iter().map(|m| TriangleGrid::coarse(&m.mesh)).collect()
}

/// The walls and meshes of a scene at t = 0, as the checks see them.
pub(crate) struct Obstacles<'a> {
    pub walls: &'a [Wall],
    pub meshes: Vec<MeshView<'a>>,
}

impl<'a> Obstacles<'a> {
    pub fn new(walls: &'a [Wall], meshes: &'a [MeshWall], grids: &'a [TriangleGrid]) -> Obstacles<'a> {
        let meshes = meshes.iter().zip(grids).map(|(wall, grid)| MeshView { wall, grid, group_base: 0, pose: wall.pose_at(0.0) }).collect();
        Obstacles { walls, meshes }
    }

    pub fn is_empty(&self) -> bool {
        self.walls.is_empty() && self.meshes.is_empty()
    }

    /// The deepest wall or mesh a sphere (x, r) reaches more than `tolerance` × r into.
    fn hit(&self, x: [f64; 3], r: f64, tolerance: f64) -> Option<WallHit> {
        if self.is_empty() {
            return None;
        }
        let reach = r * (1.0 - tolerance);
        deepest_wall_hit(self.walls, 0.0, &self.meshes, DVec3::from(x), reach).map(|h| match h {
            // depths as from the surface of the sphere itself
            WallHit::Plane { wall, depth } => WallHit::Plane { wall, depth: depth + r - reach },
            WallHit::Mesh { mesh, facet, depth, behind } => WallHit::Mesh { mesh, facet, depth: depth + r - reach, behind },
        })
    }

    /// The deepest wall or mesh a placed particle (x, r) cuts (beyond `CUT_TOLERANCE`).
    pub fn cut(&self, x: [f64; 3], r: f64) -> Option<WallHit> {
        self.hit(x, r, CUT_TOLERANCE)
    }

    /// The deepest wall or mesh a random fill's place (x, r) cuts (touching allowed).
    pub fn cut_place(&self, x: [f64; 3], r: f64) -> Option<WallHit> {
        self.hit(x, r, TOUCH_TOLERANCE)
    }

    /// `wall "floor"` / `mesh "hopper" facet 12`.
    pub fn name(&self, hit: &WallHit) -> String {
        describe_hit(hit, self.walls, &self.meshes)
    }

    /// `wall "floor"` / `mesh "hopper" facet 12`, with where the centre is relative to it.
    pub fn describe(&self, hit: &WallHit, r: f64) -> String {
        let name = describe_hit(hit, self.walls, &self.meshes);
        let reach = r;
        match *hit {
            WallHit::Plane { wall, depth } => {
                let w = &self.walls[wall];
                let d = reach - depth;
                let side = if d < 0.0 { format!("its centre is {} m behind the plane", fmt_num(-d)) } else { format!("its centre is {} m in front of the plane", fmt_num(d)) };
                format!("{name} (point {}, normal {}) by {} m: {side}", fmt_vec(w.point), fmt_vec(w.normal), fmt_num(depth))
            }
            WallHit::Mesh { mesh, facet, depth, behind } => {
                let m = &self.meshes[mesh].wall.mesh;
                let [a, b, c] = m.triangles[facet as usize];
                let centroid = (a + b + c) / 3.0;
                let side = if behind { "; the centre is behind the facet (its normal points away from the particle)" } else { "" };
                format!("{name} (centroid {}) by {} m{side}", fmt_vec(centroid.to_array()), fmt_num(depth))
            }
        }
    }

    /// The fix for a region [lo, hi] (a lattice's centres, `margin` the largest radius, or a
    /// fill box, `margin` 0) that cuts `hit`: for a plane wall along an axis the bound the
    /// region must keep, else the mesh's extent.
    pub fn fix(&self, hit: &WallHit, lo: [f64; 3], hi: [f64; 3], margin: f64, what: &str) -> String {
        let r_max = margin;
        let why = if margin > 0.0 { format!(" (centres one largest radius {} m in front of the wall)", fmt_num(margin)) } else { " (the wall's plane)".to_string() };
        match *hit {
            WallHit::Plane { wall, .. } => {
                let w = &self.walls[wall];
                let n = w.normal;
                if let Some(a) = (0..3).find(|&a| n[a].abs() == 1.0) {
                    let axis = ["x", "y", "z"][a];
                    if n[a] > 0.0 {
                        let bound = w.point[a] + r_max;
                        let mut lo2 = lo;
                        lo2[a] = bound;
                        if bound > hi[a] {
                            let behind = if hi[a] < w.point[a] { format!("the {what} lies wholly behind the wall: move it") } else { format!("move the {what}") };
                            return format!("{behind} to {axis} >= {}{why}", fmt_num(bound));
                        }
                        format!("shrink the {what} to {axis} >= {}{why}: {} .. {}", fmt_num(bound), fmt_vec(lo2), fmt_vec(hi))
                    } else {
                        let bound = w.point[a] - r_max;
                        let mut hi2 = hi;
                        hi2[a] = bound;
                        if bound < lo[a] {
                            let behind = if lo[a] > w.point[a] { format!("the {what} lies wholly behind the wall: move it") } else { format!("move the {what}") };
                            return format!("{behind} to {axis} <= {}{why}", fmt_num(bound));
                        }
                        format!("shrink the {what} to {axis} <= {}{why}: {} .. {}", fmt_num(bound), fmt_vec(lo), fmt_vec(hi2))
                    }
                } else {
                    format!("shrink the {what} to the side the wall's normal points to{why}")
                }
            }
            WallHit::Mesh { mesh, .. } => {
                let (mlo, mhi) = self.meshes[mesh].wall.mesh.bounds();
                format!(
                    "shrink the {what} to keep every particle clear of mesh \"{}\" (the mesh spans {} .. {}; the {what} spans {} .. {})",
                    self.meshes[mesh].wall.name,
                    fmt_vec(mlo.to_array()),
                    fmt_vec(mhi.to_array()),
                    fmt_vec(lo),
                    fmt_vec(hi)
                )
            }
        }
    }
}

/// An error for a placed particle (x, r), the `label` naming it, that cuts a wall: names the
/// particle, the wall or mesh facet and the fix.
#[allow(clippy::too_many_arguments)]
pub(crate) fn cut_error(cx: &Cx, key: &str, obs: &Obstacles, hit: &WallHit, label: &str, x: [f64; 3], r: f64, fix: &str) -> TalusError {
    cx.err(key, format!("{label} at {} (radius {}) cuts {}; {fix}", fmt_vec(x), fmt_num(r), obs.describe(hit, r)))
}

/// The winding warnings of the one-sided meshes (`walls[i]` at `keys[i]`) for particles at
/// `at` (a sample of the particle centres and the insertion regions' centres).
pub(crate) fn winding_warnings(cx: &Cx, meshes: &[MeshWall], keys: &[String], at: &[DVec3]) -> Vec<String> {
    let mut out = Vec::new();
    for (m, key) in meshes.iter().zip(keys) {
        if m.mesh.two_sided {
            continue;
        }
        let w = wrap_away(&m.mesh, at);
        if w >= WRAP_WARN {
            out.push(format!(
                "{}: {key}: warning: mesh \"{}\" ({}) wraps {:.0}% around the particles with its facet normals pointing away from them, so it pushes them out through itself: reverse its winding (swap two vertices of every triangle, so that the facets run anticlockwise seen from the particles) or set \"two_sided\": true",
                cx.file.display(),
                m.name,
                m.mesh.source.display(),
                100.0 * w.min(1.0)
            ));
        }
    }
    out
}
