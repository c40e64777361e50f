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
//!    index (`nearer`). One pass over the candidates keeps the best of each group, sorted by
//!    group, so only the groups (not every near triangle) are stored: the GPU twin keeps at
//!    most `MESH_GROUPS_MAX` of them per ball.
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
//! Rule 2 runs only for kept edge/vertex contacts and re-scans the candidates for the near
//! triangles of the other group (`on_group`) instead of storing them.
//!
//! `shaders/mesh/contacts.wgsl` is the f32 twin (same functions, same statement order); it
//! works in the ball's frame (centre at the origin) and with the f32 tolerance the host gives
//! each mesh (`gpu::meshes`).
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

/// Reach factor of mesh contacts: a ball's reach is (radius + positive reference gap) × this,
/// so rounding of the two sides of the activity test (gap ≤ rgap) never drops a contact the
/// plane path would keep. Both backends (`MESH_REACH_SLACK` in WGSL).
pub const MESH_REACH_SLACK: f64 = 1.0 + 1e-5;

/// Reusable buffer for `ball_mesh_contacts_into`: the nearest contact of every facet group.
#[derive(Clone, Debug, Default)]
pub struct ContactScratch {
    kept: Vec<MeshContact>,
}

/// The contacts of the ball (center, reach) with `mesh`, by the rule of the module doc.
pub fn ball_mesh_contacts(center: DVec3, reach: f64, mesh: &TriangleMesh, candidates: &[u32]) -> Vec<MeshContact> {
    let mut out = Vec::new();
    ball_mesh_contacts_into(center, reach, mesh, candidates, &mut ContactScratch::default(), &mut out);
    out
}

/// `ball_mesh_contacts` into `out` (cleared first), reusing `scratch`: no allocation once the
/// buffers have grown. Twin of `ball_mesh_contacts` in `shaders/mesh/contacts.wgsl`, which
/// keeps at most `MESH_GROUPS_MAX` groups and returns the survivors as a bit mask.
pub fn ball_mesh_contacts_into(center: DVec3, reach: f64, mesh: &TriangleMesh, candidates: &[u32], scratch: &mut ContactScratch, out: &mut Vec<MeshContact>) {
    let kept = &mut scratch.kept;
    nearest_per_group(center, reach, mesh, candidates, kept);
    out.clear();
    for e in kept.iter() {
        if !superseded(e, kept, center, reach, mesh, candidates) {
            out.push(*e);
        }
    }
}

/// The contact of the ball centre with triangle `t` of `mesh`.
pub fn contact_with(center: DVec3, mesh: &TriangleMesh, t: u32) -> MeshContact {
    let [a, b, c] = mesh.triangles[t as usize];
    let tc = triangle_contact(center, a, b, c, mesh.normals[t as usize], mesh.tolerance, mesh.two_sided);
    MeshContact { group: mesh.group[t as usize], triangle: t, point: tc.point, normal: tc.normal, distance: tc.distance, feature: tc.feature }
}

/// Whether near contact `x` comes before `y` of the same group: nearer (|distance|), then a
/// face contact before an edge or vertex one, then the lower triangle index.
pub fn nearer(x: &MeshContact, y: &MeshContact) -> bool {
    let (dx, dy) = (x.distance.abs(), y.distance.abs());
    if dx != dy {
        return dx < dy;
    }
    let (fx, fy) = (x.feature == Feature::Face, y.feature == Feature::Face);
    if fx != fy {
        return fx;
    }
    x.triangle < y.triangle
}

/// Rule 1: the nearest near contact (|distance| ≤ reach, order `nearer`) of every facet group
/// among the candidates, sorted by group (insertion into the sorted list, one pass).
fn nearest_per_group(center: DVec3, reach: f64, mesh: &TriangleMesh, candidates: &[u32], kept: &mut Vec<MeshContact>) {
    kept.clear();
    for &t in candidates {
        let c = contact_with(center, mesh, t);
        if c.distance.abs() <= reach {
            keep_if_nearest(kept, c);
        }
    }
}

/// Put `c` into `kept` (sorted by group, one contact per group): a new group is inserted at
/// its place, a known group's contact is replaced if `c` is `nearer`.
fn keep_if_nearest(kept: &mut Vec<MeshContact>, c: MeshContact) {
    let mut k = kept.len();
    while k > 0 && kept[k - 1].group > c.group {
        k -= 1;
    }
    if k > 0 && kept[k - 1].group == c.group {
        if nearer(&c, &kept[k - 1]) {
            kept[k - 1] = c;
        }
        return;
    }
    kept.insert(k, c);
}

/// Rule 2: whether the kept edge/vertex contact `e` gives way to another group's contact.
fn superseded(e: &MeshContact, kept: &[MeshContact], center: DVec3, reach: f64, mesh: &TriangleMesh, candidates: &[u32]) -> bool {
    if e.feature == Feature::Face {
        return false;
    }
    for f in kept {
        let merges_into_e = f.feature != Feature::Face && f.group > e.group && f.point.distance(e.point) <= mesh.tolerance;
        if f.group != e.group && !merges_into_e && on_group(e.point, f.group, center, reach, mesh, candidates) {
            return true;
        }
    }
    false
}

/// Whether `p` lies within the mesh tolerance on a near triangle (|distance| ≤ reach) of
/// group `h` among the candidates.
fn on_group(p: DVec3, h: u32, center: DVec3, reach: f64, mesh: &TriangleMesh, candidates: &[u32]) -> bool {
    for &t in candidates {
        let [a, b, c] = mesh.triangles[t as usize];
        if mesh.group[t as usize] != h || contact_with(center, mesh, t).distance.abs() > reach {
            continue;
        }
        if closest_point_on_triangle(p, a, b, c).point.distance(p) <= mesh.tolerance {
            return true;
        }
    }
    false
}
