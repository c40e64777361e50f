//! Deterministic triangle lists for tests and scene assets.
//!
//! Normal convention (see `super`): the winding makes every normal point towards the region
//! particles occupy: up for a floor, towards the axis for a drum, inwards and upwards for a
//! hopper, and outwards or inwards for a box as asked (`Facing`). Vertices shared by
//! neighbouring triangles are computed by one formula, so they are bit-identical within a
//! patch; across box edges they agree to rounding and are welded by the mesh tolerance.

use std::f64::consts::TAU;

use glam::{DVec2, DVec3};

/// Which side of a closed surface the particles are on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Facing {
    /// Particles inside: normals point inwards.
    Inward,
    /// Particles outside: normals point outwards.
    Outward,
}

/// Parallelogram `origin + s u + t v` (s, t ∈ [0, 1]) cut into nu × nv cells of two triangles,
/// normals along u × v. `alternate` flips the diagonal of every other cell (checkerboard).
pub fn patch(origin: DVec3, u: DVec3, v: DVec3, nu: usize, nv: usize, alternate: bool) -> Vec<[DVec3; 3]> {
    let at = |i: usize, j: usize| origin + u * (i as f64 / nu as f64) + v * (j as f64 / nv as f64);
    let mut out = Vec::with_capacity(2 * nu * nv);
    for j in 0..nv {
        for i in 0..nu {
            let (p00, p10, p11, p01) = (at(i, j), at(i + 1, j), at(i + 1, j + 1), at(i, j + 1));
            if alternate && (i + j) % 2 == 1 {
                out.extend([[p00, p10, p01], [p10, p11, p01]]);
            } else {
                out.extend([[p00, p10, p11], [p00, p11, p01]]);
            }
        }
    }
    out
}

/// Floor z = `z` over [min.x, max.x] × [min.y, max.y], nx × ny squares, normals +z.
pub fn floor(min: DVec2, max: DVec2, z: f64, nx: usize, ny: usize, alternate: bool) -> Vec<[DVec3; 3]> {
    let size = max - min;
    patch(DVec3::new(min.x, min.y, z), DVec3::X * size.x, DVec3::Y * size.y, nx, ny, alternate)
}

/// Axis-aligned box [min, max], each face cut into `divisions` × `divisions` squares of two
/// triangles, normals per `facing`. Faces in the order −z, +z, −x, +x, −y, +y.
pub fn box_mesh(min: DVec3, max: DVec3, divisions: usize, facing: Facing) -> Vec<[DVec3; 3]> {
    let d = max - min;
    let (x, y, z) = (DVec3::X * d.x, DVec3::Y * d.y, DVec3::Z * d.z);
    // (origin, u, v) with u × v outwards
    let faces = [
        (min, y, x),
        (min + z, x, y),
        (min, z, y),
        (min + x, y, z),
        (min, x, z),
        (min + y, z, x),
    ];
    let n = divisions.max(1);
    let mut out = Vec::new();
    for (o, u, v) in faces {
        let (u, v) = if facing == Facing::Outward { (u, v) } else { (v, u) };
        out.extend(patch(o, u, v, n, n, false));
    }
    out
}

/// Point at angle index j of `segments` on the circle of `radius` at height z (j = segments
/// is j = 0, so the seam closes exactly).
fn ring_point(radius: f64, j: usize, segments: usize, z: f64) -> DVec3 {
    let angle = TAU * ((j % segments) as f64 / segments as f64);
    DVec3::new(radius * angle.cos(), radius * angle.sin(), z)
}

/// Surface of revolution about z between (r0, z0) and (r1, z1): `segments` around, `rings`
/// along, normals towards the axis (the side of the smaller-radius end tilts them up).
fn revolved(r0: f64, z0: f64, r1: f64, z1: f64, segments: usize, rings: usize) -> Vec<[DVec3; 3]> {
    let mut out = Vec::with_capacity(2 * segments * rings);
    for i in 0..rings {
        let (fa, fb) = (i as f64 / rings as f64, (i + 1) as f64 / rings as f64);
        let (ra, za) = (r0 + (r1 - r0) * fa, z0 + (z1 - z0) * fa);
        let (rb, zb) = (r0 + (r1 - r0) * fb, z0 + (z1 - z0) * fb);
        for j in 0..segments {
            let (p0, p1) = (ring_point(ra, j, segments, za), ring_point(ra, j + 1, segments, za));
            let (p2, p3) = (ring_point(rb, j + 1, segments, zb), ring_point(rb, j, segments, zb));
            // loop p0 → p1 → p2 → p3 faces outwards; reversed it faces the axis
            out.extend([[p0, p3, p2], [p0, p2, p1]]);
        }
    }
    out
}

/// Fan disc of `radius` at height z, normal +z when `up`, else −z.
fn disc(radius: f64, z: f64, segments: usize, up: bool) -> Vec<[DVec3; 3]> {
    let c = DVec3::new(0.0, 0.0, z);
    (0..segments)
        .map(|j| {
            let (a, b) = (ring_point(radius, j, segments, z), ring_point(radius, j + 1, segments, z));
            if up { [c, a, b] } else { [c, b, a] }
        })
        .collect()
}

/// Drum: cylinder of `radius` about the z axis for z ∈ [−length/2, length/2], `segments`
/// around and `rings` along, normals inwards; with `caps`, end discs with normals inwards.
pub fn drum(radius: f64, length: f64, segments: usize, rings: usize, caps: bool) -> Vec<[DVec3; 3]> {
    let (z0, z1) = (-0.5 * length, 0.5 * length);
    let mut out = revolved(radius, z0, radius, z1, segments, rings.max(1));
    if caps {
        out.extend(disc(radius, z0, segments, true));
        out.extend(disc(radius, z1, segments, false));
    }
    out
}

/// Silo with a conical bottom about the z axis: a cone from the orifice (radius `r_outlet` at
/// `z_outlet`) up to the shoulder (radius `r` at `z_shoulder`), then a cylinder of radius `r`
/// up to `z_top`; orifice and top open, normals inwards. `rings` per section.
pub fn silo(r_outlet: f64, z_outlet: f64, r: f64, z_shoulder: f64, z_top: f64, segments: usize, rings: usize) -> Vec<[DVec3; 3]> {
    let mut out = hopper(r_outlet, z_outlet, r, z_shoulder, segments, rings);
    out.extend(revolved(r, z_shoulder, r, z_top, segments, rings.max(1)));
    out
}

/// Conical hopper: frustum about the z axis from the outlet (radius `r_outlet` at
/// `z_outlet`) up to the top (radius `r_top` > `r_outlet` at `z_top` > `z_outlet`), both ends
/// open, normals inwards and up.
pub fn hopper(r_outlet: f64, z_outlet: f64, r_top: f64, z_top: f64, segments: usize, rings: usize) -> Vec<[DVec3; 3]> {
    revolved(r_outlet, z_outlet, r_top, z_top, segments, rings.max(1))
}
