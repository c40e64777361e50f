//! Closest point on a triangle, and the ball–triangle contact built on it. Twin of
//! `shaders/mesh/closest.wgsl` (same functions, same statement order, f32 there).
//!
//! `closest_point_on_triangle` is the Voronoi-region method of Ericson, *Real-Time Collision
//! Detection* (2005), §5.1.5: the query point is classified against the three vertex regions,
//! the three edge regions and the face region using dot products with the two edge vectors at
//! the vertices, and the closest point is the vertex, the projection onto the edge, or the
//! barycentric projection onto the face. No allocation, no square roots.
//!
//! Corners are (a, b, c) = vertices 0, 1, 2; edge k runs from vertex k to vertex (k + 1) mod 3,
//! so edge 0 = ab, edge 1 = bc, edge 2 = ca.

use glam::DVec3;

/// The WGSL twin, for composing into GPU passes.
pub const WGSL: &str = include_str!("../../shaders/mesh/closest.wgsl");

/// Which feature of a triangle a closest point lies on. GPU code: face 0, edge k 1 + k,
/// vertex k 4 + k (`code`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Feature {
    /// The interior (or, after promotion in `triangle_contact`, the closed face).
    Face,
    /// Edge k, from vertex k to vertex (k + 1) mod 3.
    Edge(u8),
    /// Vertex k.
    Vertex(u8),
}

impl Feature {
    /// The WGSL encoding: face 0, edge k 1 + k, vertex k 4 + k.
    pub fn code(self) -> u32 {
        match self {
            Feature::Face => 0,
            Feature::Edge(k) => 1 + k as u32,
            Feature::Vertex(k) => 4 + k as u32,
        }
    }

    /// Inverse of `code`; `None` for a code above 6.
    pub fn from_code(code: u32) -> Option<Feature> {
        match code {
            0 => Some(Feature::Face),
            1..=3 => Some(Feature::Edge((code - 1) as u8)),
            4..=6 => Some(Feature::Vertex((code - 4) as u8)),
            _ => None,
        }
    }
}

/// A closest point and the feature it lies on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClosestPoint {
    pub point: DVec3,
    pub feature: Feature,
}

/// Ball–triangle contact: `normal` points from `point` towards the ball centre and `distance`
/// is the centre's distance along it (signed for a one-sided face: negative behind it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TriangleContact {
    pub point: DVec3,
    pub normal: DVec3,
    pub distance: f64,
    pub feature: Feature,
}

/// Closest point of triangle (a, b, c) to `p` (Ericson §5.1.5, region by region). The triangle
/// must not be degenerate.
pub fn closest_point_on_triangle(p: DVec3, a: DVec3, b: DVec3, c: DVec3) -> ClosestPoint {
    let ab = b - a;
    let ac = c - a;
    // behind a along both edges leaving a: vertex a
    let ap = p - a;
    let ab_ap = ab.dot(ap);
    let ac_ap = ac.dot(ap);
    if ab_ap <= 0.0 && ac_ap <= 0.0 {
        return ClosestPoint { point: a, feature: Feature::Vertex(0) };
    }
    // past b along ab and not nearer c than b: vertex b
    let bp = p - b;
    let ab_bp = ab.dot(bp);
    let ac_bp = ac.dot(bp);
    if ab_bp >= 0.0 && ac_bp <= ab_bp {
        return ClosestPoint { point: b, feature: Feature::Vertex(1) };
    }
    // outside ab (signed area opposite c ≤ 0) and between a and b: edge ab
    let area_c = ab_ap * ac_bp - ab_bp * ac_ap;
    if area_c <= 0.0 && ab_ap >= 0.0 && ab_bp <= 0.0 {
        let t = ab_ap / (ab_ap - ab_bp);
        return ClosestPoint { point: a + ab * t, feature: Feature::Edge(0) };
    }
    // past c along ac and not nearer b than c: vertex c
    let cp = p - c;
    let ab_cp = ab.dot(cp);
    let ac_cp = ac.dot(cp);
    if ac_cp >= 0.0 && ab_cp <= ac_cp {
        return ClosestPoint { point: c, feature: Feature::Vertex(2) };
    }
    // outside ca and between c and a: edge ca
    let area_b = ab_cp * ac_ap - ab_ap * ac_cp;
    if area_b <= 0.0 && ac_ap >= 0.0 && ac_cp <= 0.0 {
        let t = ac_ap / (ac_ap - ac_cp);
        return ClosestPoint { point: a + ac * t, feature: Feature::Edge(2) };
    }
    // outside bc and between b and c: edge bc
    let area_a = ab_bp * ac_cp - ab_cp * ac_bp;
    let along_b = ac_bp - ab_bp;
    let along_c = ab_cp - ac_cp;
    if area_a <= 0.0 && along_b >= 0.0 && along_c >= 0.0 {
        let t = along_b / (along_b + along_c);
        return ClosestPoint { point: b + (c - b) * t, feature: Feature::Edge(1) };
    }
    // inside: barycentric projection onto the face
    let inv = 1.0 / (area_a + area_b + area_c);
    let v = area_b * inv;
    let w = area_c * inv;
    ClosestPoint { point: a + ab * v + ac * w, feature: Feature::Face }
}

/// Contact of a ball centred at `center` with triangle (a, b, c) of unit `normal`.
///
/// An edge or vertex closest point whose offset to the centre is within `eps_len` of the
/// normal direction (the centre projects onto the closed triangle, up to rounding) is promoted
/// to a face contact, so a face contact's normal is exactly the triangle's normal and its
/// distance is exactly the plane distance (c − a)·n. A one-sided face (`two_sided` false)
/// keeps `normal` and reports a negative distance for a centre behind it, like an analytic
/// plane; a two-sided face flips to the centre's side. Edge and vertex contacts point from the
/// closest point to the centre (the triangle's normal if the centre is on the point).
pub fn triangle_contact(center: DVec3, a: DVec3, b: DVec3, c: DVec3, normal: DVec3, eps_len: f64, two_sided: bool) -> TriangleContact {
    let closest = closest_point_on_triangle(center, a, b, c);
    let offset = center - closest.point;
    let height = (center - a).dot(normal);
    let lateral = offset - normal * offset.dot(normal);
    if closest.feature == Feature::Face || lateral.length_squared() <= eps_len * eps_len {
        let side = if two_sided && height < 0.0 { -1.0 } else { 1.0 };
        return TriangleContact { point: center - normal * height, normal: normal * side, distance: height * side, feature: Feature::Face };
    }
    let distance = offset.length();
    let direction = if distance > 0.0 { offset / distance } else { normal };
    TriangleContact { point: closest.point, normal: direction, distance, feature: closest.feature }
}
