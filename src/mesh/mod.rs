//! Triangle-mesh walls: loading, placement, topology, binning and ball–mesh contacts.
//!
//! Scenes declare them as `{"type": "mesh"}` walls (`src/scene/mesh.rs`, docs/scenes.md); a
//! `setup::MeshWall` holds the placed mesh with its material, motion and load point. Both step
//! loops use them: the CPU force pass bins each mesh in a `TriangleGrid` and calls
//! `ball_mesh_contacts` (`src/cpu/forces.rs`); the GPU bins the triangles on the device and runs
//! the WGSL twins `shaders/mesh/closest.wgsl` and `shaders/mesh/contacts.wgsl`
//! (`src/gpu/meshes.rs`). ARCHITECTURE.md, "Mesh walls", has the data flow.
//!
//! # Design
//!
//! * A `TriangleMesh` keeps f64 vertices per triangle (no shared vertex array is needed by
//!   the contact code), a unit normal per triangle from its winding (right-hand rule:
//!   (v1 − v0) × (v2 − v0)), welded vertex ids, edge adjacency and a facet group per triangle.
//! * **Normal convention**: normals point towards the region particles occupy (up for a floor,
//!   inwards for a drum or hopper, outwards for an obstacle). Faces are one-sided by default,
//!   like an analytic plane: a centre behind a face gets a negative distance and is still
//!   pushed to the front. `two_sided` meshes (thin baffles with particles on both sides) push
//!   to whichever side the centre is on. STL files are read with the winding they have; the
//!   normals stored in the file are ignored.
//! * **Facet groups** (`groups`): triangles joined by shared edges that lie in one plane.
//!   A ball on a flat surface made of many triangles gets one contact per group, so it feels
//!   exactly what it feels on an analytic plane, and contact history keyed by
//!   (particle, mesh, group) survives the ball rolling from one triangle to its neighbour.
//! * **Contacts** (`contacts`): per candidate triangle the closest point and its feature
//!   (`closest`, with a WGSL twin), then per-group selection and edge/vertex deduplication.
//! * **Binning** (`grid`): a uniform CSR grid of triangle ids over the mesh box, built by
//!   count → exclusive scan → scatter, queried with a sphere.
//! * **Tolerance**: 1e-9 of the mesh's bounding-box diagonal (`TriangleMesh::tolerance`), used
//!   for welding, coplanarity and contact deduplication.
//!
//! A mesh is read (`stl`), placed (`transform`: scale → rotate → translate), then built with
//! `TriangleMesh::new`, which rejects non-finite vertices and degenerate triangles.

pub mod closest;
pub mod contacts;
pub mod generate;
pub mod grid;
pub mod groups;
pub mod stl;
pub mod transform;
pub mod winding;

use std::path::{Path, PathBuf};

use glam::DVec3;

use crate::error::{Result, TalusError};

pub use closest::{ClosestPoint, Feature, TriangleContact};
pub use contacts::{ball_mesh_contacts, ball_mesh_contacts_into, ContactScratch, MeshContact, MeshContactKey};
pub use grid::TriangleGrid;
pub use transform::MeshTransform;

/// Mesh tolerance relative to the bounding-box diagonal.
pub const RELATIVE_TOLERANCE: f64 = 1e-9;

/// A triangle is degenerate when |(v1 − v0) × (v2 − v0)| ≤ this × (longest edge)².
pub const DEGENERATE_SINE: f64 = 1e-12;

/// A triangle mesh wall with its topology. See the module doc for the conventions.
#[derive(Clone, Debug)]
pub struct TriangleMesh {
    /// Where the mesh came from (file path or generator name), for error messages.
    pub source: PathBuf,
    /// Vertices of each triangle, in winding order.
    pub triangles: Vec<[DVec3; 3]>,
    /// Unit normal of each triangle, towards the particles' side.
    pub normals: Vec<DVec3>,
    /// Welded vertex id of each corner.
    pub corners: Vec<[u32; 3]>,
    pub vertex_count: u32,
    /// Triangle across edge k (vertex k → k + 1), or `groups::NO_NEIGHBOUR`.
    pub neighbours: Vec<[u32; 3]>,
    /// Facet group of each triangle (0 ..< `group_count`, numbered by smallest triangle).
    pub group: Vec<u32>,
    pub group_count: u32,
    /// Length tolerance: `RELATIVE_TOLERANCE` × bounding-box diagonal.
    pub tolerance: f64,
    /// Whether faces push balls to either side (default: one-sided, see module doc).
    pub two_sided: bool,
}

impl TriangleMesh {
    /// Build a one-sided mesh from triangles: check vertices, compute normals, weld, find
    /// neighbours and facet groups. Errors name `source` and the triangle.
    pub fn new(source: impl Into<PathBuf>, triangles: Vec<[DVec3; 3]>) -> Result<TriangleMesh> {
        let source = source.into();
        check_vertices(&source, &triangles)?;
        let tolerance = RELATIVE_TOLERANCE * diagonal(&triangles);
        let normals = unit_normals(&source, &triangles, tolerance)?;
        let (corners, vertex_count) = groups::weld(&triangles, tolerance);
        let runs = groups::edge_runs(&corners);
        let neighbours = groups::neighbours(&runs, triangles.len());
        let (group, group_count) = groups::facet_groups(&triangles, &normals, &runs, tolerance);
        Ok(TriangleMesh { source, triangles, normals, corners, vertex_count, neighbours, group, group_count, tolerance, two_sided: false })
    }

    /// Read an STL file (ASCII or binary), validate and apply `transform` (errors at `key`).
    pub fn from_stl(path: &Path, transform: &MeshTransform, key: &str) -> Result<TriangleMesh> {
        transform.validate(path, key)?;
        let mut triangles = stl::read_stl(path)?;
        transform.apply_all(&mut triangles);
        TriangleMesh::new(path, triangles)
    }

    /// The same mesh with two-sided faces (or one-sided for `false`).
    pub fn with_two_sided(self, two_sided: bool) -> TriangleMesh {
        TriangleMesh { two_sided, ..self }
    }

    pub fn len(&self) -> usize {
        self.triangles.len()
    }

    pub fn is_empty(&self) -> bool {
        self.triangles.is_empty()
    }

    /// Bounding box (min, max) of all vertices.
    pub fn bounds(&self) -> (DVec3, DVec3) {
        bounds(&self.triangles)
    }
}

/// Bounding box (min, max) of a triangle list.
pub fn bounds(triangles: &[[DVec3; 3]]) -> (DVec3, DVec3) {
    let lo = triangles.iter().flatten().fold(DVec3::splat(f64::INFINITY), |m, &v| m.min(v));
    let hi = triangles.iter().flatten().fold(DVec3::splat(f64::NEG_INFINITY), |m, &v| m.max(v));
    (lo, hi)
}

/// Bounding-box diagonal length.
fn diagonal(triangles: &[[DVec3; 3]]) -> f64 {
    let (lo, hi) = bounds(triangles);
    (hi - lo).length()
}

/// Reject an empty list and non-finite coordinates.
fn check_vertices(source: &Path, triangles: &[[DVec3; 3]]) -> Result<()> {
    if triangles.is_empty() {
        return Err(TalusError::scene(source, "triangles", "the mesh has no triangles"));
    }
    for (t, tri) in triangles.iter().enumerate() {
        if let Some(k) = tri.iter().position(|v| !v.is_finite()) {
            let v = tri[k];
            return Err(TalusError::scene(source, format!("triangle {t}"), format!("vertex {k} is not finite: [{}, {}, {}]", v.x, v.y, v.z)));
        }
    }
    Ok(())
}

/// Unit normal of every triangle; a degenerate triangle (an edge within `tol`, or collinear
/// vertices) is an error naming its index.
fn unit_normals(source: &Path, triangles: &[[DVec3; 3]], tol: f64) -> Result<Vec<DVec3>> {
    triangles.iter().enumerate().map(|(t, tri)| unit_normal(tri, tol).map_err(|m| TalusError::scene(source, format!("triangle {t}"), m))).collect()
}

/// Unit normal of one triangle, or why it is degenerate.
fn unit_normal(tri: &[DVec3; 3], tol: f64) -> std::result::Result<DVec3, String> {
    let longest = (0..3).map(|k| tri[k].distance(tri[(k + 1) % 3])).fold(0.0, f64::max);
    if let Some(k) = (0..3).find(|&k| tri[k].distance(tri[(k + 1) % 3]) <= tol) {
        return Err(format!("degenerate triangle: edge {k} (vertex {k} to {}) has length {}, within the tolerance {}", (k + 1) % 3, crate::error::fmt_num(tri[k].distance(tri[(k + 1) % 3])), crate::error::fmt_num(tol)));
    }
    let cross = (tri[1] - tri[0]).cross(tri[2] - tri[0]);
    if cross.length() <= DEGENERATE_SINE * longest * longest {
        return Err("degenerate triangle: its vertices are collinear (zero area)".into());
    }
    Ok(cross / cross.length())
}
