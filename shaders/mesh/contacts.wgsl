// Ball–mesh contacts with facet-group selection and edge/vertex deduplication. Twin of
// src/mesh/contacts.rs (same functions, same statement order, f32 here; the rule is in its
// module doc). Differences: the ball's frame (the centre is the origin, `mesh_corners` gives
// the triangles relative to it), the candidates are the range [first, end) of the binned ids
// (`mesh_candidate`), the view's f32 tolerance, at most MESH_GROUPS_MAX kept groups per ball
// (`dropped` counts the groups that did not fit: the caller raises OVERFLOW_MESH_GROUPS), the
// survivors come back as a bit mask over the kept contacts instead of a copied list, and the
// kept list holds each contact without its normal (`KeptContact`: 32 bytes, 40 with it), which
// is found again where it is needed (`kept_contact`: from the point and distance, or the
// triangle's normal for a face contact, by the arithmetic of `triangle_contact`, so the same
// bits). The list is a function variable with a dynamic index, which a GPU keeps in scratch
// memory and zeroes where the function that declares it starts.
// Needs shaders/mesh/closest.wgsl and shaders/mesh/data.wgsl.

// One ball–mesh contact (twin of `MeshContact`); point and normal in the ball's frame.
struct MeshContact {
    point: vec3<f32>,
    distance: f32,
    normal: vec3<f32>,
    group: u32,
    triangle: u32,
    feature: u32,
}

// A kept contact: a MeshContact without its normal, and whether it is a face contact whose
// normal `triangle_contact` turned to the centre's side of a two-sided face (GPU only).
struct KeptContact {
    point: vec3<f32>,
    distance: f32,
    group: u32,
    triangle: u32,
    feature: u32,
    flipped: u32,
}

// The nearest contact of every facet group, sorted by group.
struct GroupContacts {
    items: array<KeptContact, MESH_GROUPS_MAX>,
    count: u32,
    // groups met that did not fit (> 0: overflow)
    dropped: u32,
}

// The contacts of the ball (center, reach) with the view's mesh among candidates
// [first, end): fills `kept` and returns the mask of the kept contacts that survive rule 2.
fn ball_mesh_contacts(center: vec3<f32>, reach: f32, mesh: MeshView, first: u32, end: u32, kept: ptr<function, GroupContacts>) -> u32 {
    nearest_per_group(center, reach, mesh, first, end, kept);
    var out = 0u;
    for (var k = 0u; k < (*kept).count; k = k + 1u) {
        if (!superseded((*kept).items[k], kept, center, reach, mesh, first, end)) {
            out = out | (1u << k);
        }
    }
    return out;
}

// The contact of the ball centre with triangle t of the view's mesh.
fn contact_with(center: vec3<f32>, mesh: MeshView, t: u32) -> MeshContact {
    let tri = mesh_corners(mesh, t);
    let tc = triangle_contact(center, tri.a, tri.b, tri.c, tri.normal, mesh.tolerance, mesh.two_sided);
    return MeshContact(tc.point, tc.distance, tc.normal, tri.group, t, tc.feature);
}

// The kept form of contact c (GPU only).
fn kept_of(c: MeshContact) -> KeptContact {
    let flipped = c.feature == FEATURE_FACE && dot(c.normal, mesh_triangle(c.triangle).normal.xyz) < 0.0;
    return KeptContact(c.point, c.distance, c.group, c.triangle, c.feature, select(0u, 1u, flipped));
}

// The whole contact of kept contact e of a ball centred at `center` (GPU only): the normal of a
// face contact is the triangle's, turned where e was flipped; that of an edge or vertex contact
// points from e's point to the centre, as `triangle_contact` forms them.
fn kept_contact(center: vec3<f32>, e: KeptContact) -> MeshContact {
    let face_normal = mesh_triangle(e.triangle).normal.xyz;
    var normal: vec3<f32>;
    if (e.feature == FEATURE_FACE) {
        normal = face_normal * select(1.0, -1.0, e.flipped != 0u);
    } else {
        normal = select(face_normal, (center - e.point) / e.distance, e.distance > 0.0);
    }
    return MeshContact(e.point, e.distance, normal, e.group, e.triangle, e.feature);
}

// Whether near contact x comes before y of the same group: nearer (|distance|), then a face
// contact before an edge or vertex one, then the lower triangle index.
fn nearer(x: KeptContact, y: KeptContact) -> bool {
    let dx = abs(x.distance);
    let dy = abs(y.distance);
    if (dx != dy) {
        return dx < dy;
    }
    let fx = x.feature == FEATURE_FACE;
    let fy = y.feature == FEATURE_FACE;
    if (fx != fy) {
        return fx;
    }
    return x.triangle < y.triangle;
}

// Rule 1: the nearest near contact (|distance| ≤ reach, order `nearer`) of every facet group
// among the candidates, sorted by group (insertion into the sorted list, one pass).
fn nearest_per_group(center: vec3<f32>, reach: f32, mesh: MeshView, first: u32, end: u32, kept: ptr<function, GroupContacts>) {
    (*kept).count = 0u;
    (*kept).dropped = 0u;
    for (var k = first; k < end; k = k + 1u) {
        let c = contact_with(center, mesh, mesh_candidate(k));
        if (abs(c.distance) <= reach) {
            keep_if_nearest(kept, kept_of(c));
        }
    }
}

// Put c into kept (sorted by group, one contact per group): a new group is inserted at its
// place (or counted in `dropped` when the list is full), a known group's contact is replaced
// if c is `nearer`.
fn keep_if_nearest(kept: ptr<function, GroupContacts>, c: KeptContact) {
    var k = (*kept).count;
    while (k > 0u && (*kept).items[k - 1u].group > c.group) {
        k = k - 1u;
    }
    if (k > 0u && (*kept).items[k - 1u].group == c.group) {
        if (nearer(c, (*kept).items[k - 1u])) {
            (*kept).items[k - 1u] = c;
        }
        return;
    }
    if ((*kept).count == MESH_GROUPS_MAX) {
        (*kept).dropped = (*kept).dropped + 1u;
        return;
    }
    for (var j = (*kept).count; j > k; j = j - 1u) {
        (*kept).items[j] = (*kept).items[j - 1u];
    }
    (*kept).items[k] = c;
    (*kept).count = (*kept).count + 1u;
}

// Rule 2: whether the kept edge/vertex contact e gives way to another group's contact.
fn superseded(e: KeptContact, kept: ptr<function, GroupContacts>, center: vec3<f32>, reach: f32, mesh: MeshView, first: u32, end: u32) -> bool {
    if (e.feature == FEATURE_FACE) {
        return false;
    }
    for (var k = 0u; k < (*kept).count; k = k + 1u) {
        let f = (*kept).items[k];
        let merges_into_e = f.feature != FEATURE_FACE && f.group > e.group && distance(f.point, e.point) <= mesh.tolerance;
        if (f.group != e.group && !merges_into_e && on_group(e.point, f.group, center, reach, mesh, first, end)) {
            return true;
        }
    }
    return false;
}

// Whether p lies within the tolerance on a near triangle (|distance| ≤ reach) of group h among
// the candidates.
fn on_group(p: vec3<f32>, h: u32, center: vec3<f32>, reach: f32, mesh: MeshView, first: u32, end: u32) -> bool {
    for (var k = first; k < end; k = k + 1u) {
        let t = mesh_candidate(k);
        let tri = mesh_corners(mesh, t);
        if (tri.group != h || abs(contact_with(center, mesh, t).distance) > reach) {
            continue;
        }
        if (distance(closest_point_on_triangle(p, tri.a, tri.b, tri.c).point, p) <= mesh.tolerance) {
            return true;
        }
    }
    return false;
}
