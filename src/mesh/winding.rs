//! Which way a mesh faces the particles: a one-sided mesh pushes particles to the side its
//! facet normals point to (anticlockwise winding seen from there), so one wound inside out
//! around the particles pushes them out through itself. The scene loader warns about it, and
//! a run stopped by an overlap with such a mesh says so.

use glam::DVec3;

use super::TriangleMesh;

/// Signed solid angle of triangle (a, b, c) seen from the origin (Van Oosterom and Strackee),
/// positive when the triangle's winding normal points away from the origin.
fn solid_angle(a: DVec3, b: DVec3, c: DVec3) -> f64 {
    let (la, lb, lc) = (a.length(), b.length(), c.length());
    let num = a.dot(b.cross(c));
    let den = la * lb * lc + a.dot(b) * lc + a.dot(c) * lb + b.dot(c) * la;
    2.0 * num.atan2(den)
}

/// How far a mesh wraps around the points `at` with its normals pointing away from
/// them: the mean over the points of the mesh's signed solid angle / 4π (1: a closed mesh
/// around them wound inside out; −1: a closed mesh around them wound right; about 0: an open
/// mesh off to one side).
pub fn wrap_away(mesh: &TriangleMesh, at: &[DVec3]) -> f64 {
    if at.is_empty() {
        return 0.0;
    }
    let total: f64 = at
        .iter()
        .map(|&p| mesh.triangles.iter().map(|[a, b, c]| solid_angle(*a - p, *b - p, *c - p)).sum::<f64>())
        .sum();
    total / (4.0 * std::f64::consts::PI * at.len() as f64)
}

/// A one-sided mesh wraps at least this much (`wrap_away`) around the particles, normals
/// away from them, before it gets the winding warning.
pub const WRAP_WARN: f64 = 0.3;

/// Whether the one-sided `mesh` wraps around the points `at` (particle centres) with its
/// normals pointing away from them (`wrap_away` at least `WRAP_WARN`).
pub fn wraps_away(mesh: &TriangleMesh, at: &[DVec3]) -> bool {
    !mesh.two_sided && wrap_away(mesh, at) >= WRAP_WARN
}
