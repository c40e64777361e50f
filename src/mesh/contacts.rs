//! Ball–mesh contacts with facet-group selection and edge/vertex deduplication.
//!
//! # The rule
//!
//! For a ball (centre c, reach r = radius plus any positive reference gap) and a list of
//! candidate triangles (a superset of those within r, e.g. from `TriangleGrid`):
//!
//! 0. Every candidate gets its `triangle_contact` (closest point, feature, normal, distance;
//!    an edge/vertex point straight below c is promoted to a face contact). Those with
//!    |distance| ≤ r are *near*.
//! 1. **One per facet group**: of the near contacts of a group, keep the nearest (|distance|),
//!    a face contact before an edge or vertex one at equal distance, then the lowest triangle
//!    index.
//! 2. **Edges and vertices**: a kept face contact always stays. A kept edge or vertex contact
//!    at point p is dropped when p lies (within the mesh tolerance) on a near triangle of
//!    another group h that has a kept contact, unless that contact is also an edge or vertex
//!    contact at the same point with a higher group id. So contacts at one point merge into the
//!    one of the lowest group, and an edge/vertex touching a group whose own nearest point is
//!    a face contact, or elsewhere, disappears.
//!
//! Results: a flat floor of many triangles gives exactly one face contact, with the plane's
//! normal and distance; a concave V corner gives two face contacts; a ball beyond a convex
//! edge (or corner) gives one edge (vertex) contact, whatever the groups around it. The result
//! is sorted by group and does not depend on the order (or repetition) of the candidates.
//!
//! # Limits
//!
//! * One contact per group: a ball touching two separate parts of one planar group (a plate
//!   with a slot narrower than the ball) gets only the nearer one.
//! * Step 2 assumes each group's nearest point is the only local minimum of the distance on
//!   it, true for convex planar groups; on a non-convex group (an L-shaped plate) a genuine
//!   second edge contact across a convex edge can be dropped.
//! * Groups join only across shared edges: coplanar triangles meeting at a vertex alone, or
//!   across a T-junction, are separate groups (step 2 still merges their shared points).
//!
//! Contact history is keyed by `MeshContactKey` (particle, mesh, group): it survives the ball
//! moving from one triangle of a group to another.

use glam::DVec3;

use super::closest::{closest_point_on_triangle, triangle_contact, Feature};
use super::TriangleMesh;

/// One ball–mesh contact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeshContact {
    /// Facet group (part of the history key).
    pub group: u32,
    /// The triangle the contact point lies on.
    pub triangle: u32,
    pub point: DVec3,
    /// Unit normal from the contact point towards the ball centre (for a one-sided face
    /// behind which the centre lies: the face normal, with a negative distance).
    pub normal: DVec3,
    /// Centre distance along `normal`; the gap is `distance − radius`.
    pub distance: f64,
    pub feature: Feature,
}

/// History key of a ball–mesh contact.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MeshContactKey {
    pub particle: u32,
    pub mesh: u32,
    pub group: u32,
}

impl MeshContact {
    /// The history key of this contact for `particle` against mesh number `mesh`.
    pub fn key(&self, particle: u32, mesh: u32) -> MeshContactKey {
        MeshContactKey { particle, mesh, group: self.group }
    }
}

/// Reusable buffers for `ball_mesh_contacts_into`.
#[derive(Clone, Debug, Default)]
pub struct ContactScratch {
    near: Vec<MeshContact>,
    kept: Vec<MeshContact>,
}

/// The contacts of the ball (center, reach) with `mesh`, by the rule of the module doc.
pub fn ball_mesh_contacts(center: DVec3, reach: f64, mesh: &TriangleMesh, candidates: &[u32]) -> Vec<MeshContact> {
    let mut out = Vec::new();
    ball_mesh_contacts_into(center, reach, mesh, candidates, &mut ContactScratch::default(), &mut out);
    out
}

/// `ball_mesh_contacts` into `out` (cleared first), reusing `scratch`: no allocation once the
/// buffers have grown.
pub fn ball_mesh_contacts_into(center: DVec3, reach: f64, mesh: &TriangleMesh, candidates: &[u32], scratch: &mut ContactScratch, out: &mut Vec<MeshContact>) {
    let ContactScratch { near, kept } = scratch;
    near_contacts(center, reach, mesh, candidates, near);
    kept.clear();
    kept.extend(near.iter().enumerate().filter(|(i, c)| *i == 0 || near[i - 1].group != c.group).map(|(_, c)| *c));
    out.clear();
    out.extend(kept.iter().filter(|e| !superseded(e, kept, near, mesh)).copied());
}

/// The contact of the ball centre with triangle `t` of `mesh`.
pub fn contact_with(center: DVec3, mesh: &TriangleMesh, t: u32) -> MeshContact {
    let [a, b, c] = mesh.triangles[t as usize];
    let tc = triangle_contact(center, a, b, c, mesh.normals[t as usize], mesh.tolerance, mesh.two_sided);
    MeshContact { group: mesh.group[t as usize], triangle: t, point: tc.point, normal: tc.normal, distance: tc.distance, feature: tc.feature }
}

/// Near contacts (|distance| ≤ reach), sorted by (group, |distance|, face first, triangle),
/// one per triangle.
fn near_contacts(center: DVec3, reach: f64, mesh: &TriangleMesh, candidates: &[u32], near: &mut Vec<MeshContact>) {
    near.clear();
    near.extend(candidates.iter().map(|&t| contact_with(center, mesh, t)).filter(|c| c.distance.abs() <= reach));
    near.sort_unstable_by(|x, y| {
        let face_first = (x.feature != Feature::Face).cmp(&(y.feature != Feature::Face));
        x.group.cmp(&y.group).then(x.distance.abs().total_cmp(&y.distance.abs())).then(face_first).then(x.triangle.cmp(&y.triangle))
    });
    near.dedup_by_key(|c| c.triangle);
}

/// Rule 2: whether the kept edge/vertex contact `e` gives way to another group's contact.
fn superseded(e: &MeshContact, kept: &[MeshContact], near: &[MeshContact], mesh: &TriangleMesh) -> bool {
    if e.feature == Feature::Face {
        return false;
    }
    kept.iter().any(|f| {
        let merges_into_e = f.feature != Feature::Face && f.group > e.group && f.point.distance(e.point) <= mesh.tolerance;
        f.group != e.group && !merges_into_e && on_group(e.point, f.group, near, mesh)
    })
}

/// Whether `p` lies within the mesh tolerance on a near triangle of group `h`.
fn on_group(p: DVec3, h: u32, near: &[MeshContact], mesh: &TriangleMesh) -> bool {
    near.iter().filter(|u| u.group == h).any(|u| {
        let [a, b, c] = mesh.triangles[u.triangle as usize];
        closest_point_on_triangle(p, a, b, c).point.distance(p) <= mesh.tolerance
    })
}
