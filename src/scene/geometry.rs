//! Load-time geometry checks (docs/scenes.md, "Checks"): explicit particles and generators
//! against the plane and mesh walls, through the test insertion uses
//! (`crate::flow::insert::wall_hits`), and the winding of one-sided meshes against where the
//! particles are.

use glam::DVec3;

use super::parse::{fmt_num, fmt_vec, Cx};
use crate::cpu::forces::MeshView;
use crate::error::{Result, TalusError};
use crate::flow::insert::{deepest_wall_hit, describe_hit, WallHit};
use crate::mesh::grid::TriangleGrid;
use crate::setup::{MeshWall, Wall};

/// A particle may reach this fraction of its radius into a wall (rounding of a centre placed
/// exactly one radius in front of it).
const TOUCH_TOLERANCE: f64 = 1e-6;

/// Triangle grids of the mesh walls for the load-time checks (cells of about 1/32 of a mesh's
/// largest extent; the cell budget of `TriangleGrid::build` bounds them).
pub(crate) fn grids(meshes: &[MeshWall]) -> Result<Vec<TriangleGrid>> {
    meshes
        .iter()
        .map(|m| {
            let (lo, hi) = m.mesh.bounds();
            let cell = ((hi - lo).max_element() / 32.0).max(1e-9);
            TriangleGrid::build(&m.mesh, cell, 0.0)
        })
        .collect()
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

    /// The deepest wall or mesh a sphere (x, r) cuts, if any (touching allowed).
    pub fn cut(&self, x: [f64; 3], r: f64) -> Option<WallHit> {
        if self.is_empty() {
            return None;
        }
        deepest_wall_hit(self.walls, 0.0, &self.meshes, DVec3::from(x), r * (1.0 - TOUCH_TOLERANCE))
    }

    /// `wall "floor"` / `mesh "hopper" facet 12`.
    pub fn name(&self, hit: &WallHit) -> String {
        describe_hit(hit, self.walls, &self.meshes)
    }

    /// `wall "floor"` / `mesh "hopper" facet 12`, with where the centre is relative to it.
    pub fn describe(&self, hit: &WallHit, x: [f64; 3], r: f64) -> String {
        let name = describe_hit(hit, self.walls, &self.meshes);
        let reach = r * (1.0 - TOUCH_TOLERANCE);
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
                let _ = x;
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
                            return format!("the {what} lies wholly behind the wall: move it to {axis} >= {}{why}", fmt_num(bound));
                        }
                        format!("shrink the {what} to {axis} >= {}{why}: {} .. {}", fmt_num(bound), fmt_vec(lo2), fmt_vec(hi))
                    } else {
                        let bound = w.point[a] - r_max;
                        let mut hi2 = hi;
                        hi2[a] = bound;
                        if bound < lo[a] {
                            return format!("the {what} lies wholly behind the wall: move it to {axis} <= {}{why}", fmt_num(bound));
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
    cx.err(key, format!("{label} at {} (radius {}) cuts {}; {fix}", fmt_vec(x), fmt_num(r), obs.describe(hit, x, r)))
}

/// Signed solid angle of triangle (a, b, c) seen from the origin (Van Oosterom and Strackee),
/// positive when the triangle's winding normal points away from the origin.
fn solid_angle(a: DVec3, b: DVec3, c: DVec3) -> f64 {
    let (la, lb, lc) = (a.length(), b.length(), c.length());
    let num = a.dot(b.cross(c));
    let den = la * lb * lc + a.dot(b) * lc + a.dot(c) * lb + b.dot(c) * la;
    2.0 * num.atan2(den)
}

/// How far a one-sided mesh wraps around the points `at` with its normals pointing away from
/// them: the mean over the points of the mesh's signed solid angle / 4π (1: a closed mesh
/// around them wound inside out; −1: a closed mesh around them wound right; about 0: an open
/// mesh off to one side).
pub(crate) fn wrap_away(mesh: &MeshWall, at: &[DVec3]) -> f64 {
    if at.is_empty() {
        return 0.0;
    }
    let total: f64 = at
        .iter()
        .map(|&p| mesh.mesh.triangles.iter().map(|[a, b, c]| solid_angle(*a - p, *b - p, *c - p)).sum::<f64>())
        .sum();
    total / (4.0 * std::f64::consts::PI * at.len() as f64)
}

/// A one-sided mesh wraps at least this much (`wrap_away`) around the particles, normals
/// away from them, before it gets the winding warning.
pub const WRAP_WARN: f64 = 0.3;

/// The winding warnings of the one-sided meshes (`walls[i]` at `keys[i]`) for particles at
/// `at` (a sample of the particle centres and the insertion regions' centres).
pub(crate) fn winding_warnings(cx: &Cx, meshes: &[MeshWall], keys: &[String], at: &[DVec3]) -> Vec<String> {
    let mut out = Vec::new();
    for (m, key) in meshes.iter().zip(keys) {
        if m.mesh.two_sided {
            continue;
        }
        let w = wrap_away(m, at);
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
