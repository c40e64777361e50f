// Closest point on a triangle, and the ball–triangle contact built on it. Twin of
// src/mesh/closest.rs (same functions, same statement order, f64 there).
//
// closest_point_on_triangle: the Voronoi-region method of Ericson, Real-Time Collision
// Detection (2005), §5.1.5. Corners (a, b, c) = vertices 0, 1, 2; edge k runs from vertex k to
// vertex (k + 1) mod 3: edge 0 = ab, edge 1 = bc, edge 2 = ca.

// Feature codes: face 0, edge k 1 + k, vertex k 4 + k (Feature::code on the CPU).
const FEATURE_FACE: u32 = 0u;
const FEATURE_EDGE: u32 = 1u;
const FEATURE_VERTEX: u32 = 4u;

// A closest point and the feature code it lies on.
struct ClosestPoint {
    point: vec3<f32>,
    feature: u32,
}

// Ball–triangle contact: normal from point towards the ball centre; distance along it
// (signed for a one-sided face: negative behind it).
struct TriangleContact {
    point: vec3<f32>,
    normal: vec3<f32>,
    distance: f32,
    feature: u32,
}

// Closest point of triangle (a, b, c) to p (Ericson §5.1.5, region by region). The triangle
// must not be degenerate.
fn closest_point_on_triangle(p: vec3<f32>, a: vec3<f32>, b: vec3<f32>, c: vec3<f32>) -> ClosestPoint {
    let ab = b - a;
    let ac = c - a;
    // behind a along both edges leaving a: vertex a
    let ap = p - a;
    let ab_ap = dot(ab, ap);
    let ac_ap = dot(ac, ap);
    if (ab_ap <= 0.0 && ac_ap <= 0.0) {
        return ClosestPoint(a, FEATURE_VERTEX + 0u);
    }
    // past b along ab and not nearer c than b: vertex b
    let bp = p - b;
    let ab_bp = dot(ab, bp);
    let ac_bp = dot(ac, bp);
    if (ab_bp >= 0.0 && ac_bp <= ab_bp) {
        return ClosestPoint(b, FEATURE_VERTEX + 1u);
    }
    // outside ab (signed area opposite c ≤ 0) and between a and b: edge ab
    let area_c = ab_ap * ac_bp - ab_bp * ac_ap;
    if (area_c <= 0.0 && ab_ap >= 0.0 && ab_bp <= 0.0) {
        let t = ab_ap / (ab_ap - ab_bp);
        return ClosestPoint(a + ab * t, FEATURE_EDGE + 0u);
    }
    // past c along ac and not nearer b than c: vertex c
    let cp = p - c;
    let ab_cp = dot(ab, cp);
    let ac_cp = dot(ac, cp);
    if (ac_cp >= 0.0 && ab_cp <= ac_cp) {
        return ClosestPoint(c, FEATURE_VERTEX + 2u);
    }
    // outside ca and between c and a: edge ca
    let area_b = ab_cp * ac_ap - ab_ap * ac_cp;
    if (area_b <= 0.0 && ac_ap >= 0.0 && ac_cp <= 0.0) {
        let t = ac_ap / (ac_ap - ac_cp);
        return ClosestPoint(a + ac * t, FEATURE_EDGE + 2u);
    }
    // outside bc and between b and c: edge bc
    let area_a = ab_bp * ac_cp - ab_cp * ac_bp;
    let along_b = ac_bp - ab_bp;
    let along_c = ab_cp - ac_cp;
    if (area_a <= 0.0 && along_b >= 0.0 && along_c >= 0.0) {
        let t = along_b / (along_b + along_c);
        return ClosestPoint(b + (c - b) * t, FEATURE_EDGE + 1u);
    }
    // inside: barycentric projection onto the face
    let inv = 1.0 / (area_a + area_b + area_c);
    let v = area_b * inv;
    let w = area_c * inv;
    return ClosestPoint(a + ab * v + ac * w, FEATURE_FACE);
}

// Contact of a ball centred at center with triangle (a, b, c) of unit normal. An edge or
// vertex closest point whose offset to the centre is within eps_len of the normal direction is
// promoted to a face contact (exact plane normal and distance). A one-sided face keeps normal
// (negative distance behind it); a two-sided face flips to the centre's side. Edge and vertex
// contacts point from the closest point to the centre (normal if the centre is on the point).
fn triangle_contact(center: vec3<f32>, a: vec3<f32>, b: vec3<f32>, c: vec3<f32>, normal: vec3<f32>, eps_len: f32, two_sided: bool) -> TriangleContact {
    let closest = closest_point_on_triangle(center, a, b, c);
    let offset = center - closest.point;
    let height = dot(center - a, normal);
    let lateral = offset - normal * dot(offset, normal);
    if (closest.feature == FEATURE_FACE || dot(lateral, lateral) <= eps_len * eps_len) {
        let side = select(1.0, -1.0, two_sided && height < 0.0);
        return TriangleContact(center - normal * height, normal * side, height * side, FEATURE_FACE);
    }
    let distance = length(offset);
    let direction = select(normal, offset / distance, distance > 0.0);
    return TriangleContact(closest.point, direction, distance, closest.feature);
}
