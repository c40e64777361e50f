// Mesh walls in the packed `mesh_data` buffer (src/gpu/meshes.rs): accessors that rebuild the
// packed structs word by word, and the view of one mesh from one ball. Needs module-scope
// `sim: SimParams` and `mesh_data: array<vec4<u32>>`.
//
// The view works in the ball's frame: the ball centre is the origin and triangle corners are
// vectors from it, in the mesh's t = 0 orientation. A static mesh takes them straight from
// block + offset positions (vertex 0 − ball centre, as a plane wall does); a moving mesh
// carries the ball into the t = 0 frame with the pose row of the pass's time,
// x_b = c0 + Rᵀ(x − c(t)).

// Header of mesh m.
fn mesh_header(m: u32) -> MeshGpu {
    let k = m * MESH_GPU_WORDS;
    let s = mesh_data[k + 6u];
    return MeshGpu(bitcast<vec4<i32>>(mesh_data[k]), mesh_data[k + 1u], bitcast<vec4<i32>>(mesh_data[k + 2u]), bitcast<vec4<f32>>(mesh_data[k + 3u]),
                   bitcast<vec4<i32>>(mesh_data[k + 4u]), bitcast<vec4<f32>>(mesh_data[k + 5u]), s.x, s.y, bitcast<f32>(s.z), bitcast<f32>(s.w));
}

// Mesh m at time index t (steps since t = 0): row t − wall_time0 of the pose table the host
// uploaded for this batch (as `wall_at`); the last row holds for later times.
fn mesh_pose_at(t: u32, m: u32) -> MeshPoseGpu {
    let row = min(t - sim.wall_time0, sim.wall_rows - 1u);
    let k = sim.mesh_pose_base + (row * sim.n_meshes + m) * MESH_POSE_GPU_WORDS;
    return MeshPoseGpu(bitcast<vec4<f32>>(mesh_data[k]), bitcast<vec4<f32>>(mesh_data[k + 1u]), bitcast<vec4<f32>>(mesh_data[k + 2u]),
                       bitcast<vec4<i32>>(mesh_data[k + 3u]), bitcast<vec4<f32>>(mesh_data[k + 4u]), bitcast<vec4<f32>>(mesh_data[k + 5u]),
                       bitcast<vec4<f32>>(mesh_data[k + 6u]));
}

// Triangle t (global index over all meshes).
fn mesh_triangle(t: u32) -> MeshTriangleGpu {
    let k = sim.mesh_tri_base + t * MESH_TRIANGLE_GPU_WORDS;
    let s = mesh_data[k + 5u];
    return MeshTriangleGpu(bitcast<vec4<i32>>(mesh_data[k]), bitcast<vec4<f32>>(mesh_data[k + 1u]), bitcast<vec4<f32>>(mesh_data[k + 2u]),
                           bitcast<vec4<f32>>(mesh_data[k + 3u]), bitcast<vec4<f32>>(mesh_data[k + 4u]), s.x, s.y, s.z, s.w);
}

// Element e of a u32 section starting at word `base` (four per word).
fn mesh_u32(base: u32, e: u32) -> u32 {
    return mesh_data[base + (e >> 2u)][e & 3u];
}

// Entry k of the binned triangle ids: a candidate triangle.
fn mesh_candidate(k: u32) -> u32 {
    return mesh_u32(sim.mesh_id_base, k);
}

// One mesh as seen from one ball at one time.
struct MeshView {
    index: u32,
    header: MeshGpu,
    pose: MeshPoseGpu,
    moving: bool,
    two_sided: bool,
    // length tolerance of the contact rule (promotion, merging), m
    tolerance: f32,
    ball_block: vec3<i32>,
    ball_offset: vec3<f32>,
    // x − c(t): from the mesh's current rotation centre to the ball centre
    from_center: vec3<f32>,
    // moving meshes: x_b − c0 = Rᵀ(x − c(t)), the ball centre in the t = 0 frame from c0
    q: vec3<f32>,
}

// Mesh m (header h) from ball (bi, oi) at time index t; reach is the ball's reach against it.
// The tolerance is the host's f32 tolerance of the mesh or MESH_TOLERANCE_PER_REACH × reach,
// whichever is larger (see src/gpu/meshes.rs).
fn mesh_view(m: u32, h: MeshGpu, t: u32, bi: vec4<i32>, oi: vec4<f32>, reach: f32) -> MeshView {
    var v: MeshView;
    v.index = m;
    v.header = h;
    v.pose = mesh_pose_at(t, m);
    v.moving = (h.flags & MESH_FLAG_MOVING) != 0u;
    v.two_sided = (h.flags & MESH_FLAG_TWO_SIDED) != 0u;
    v.tolerance = max(h.tolerance, MESH_TOLERANCE_PER_REACH * reach);
    v.ball_block = bi.xyz;
    v.ball_offset = oi.xyz;
    v.from_center = relative_position(v.pose.center_block.xyz, v.pose.center_offset.xyz, bi.xyz, oi.xyz, sim.block);
    v.q = vec3<f32>(dot(v.pose.rot_x.xyz, v.from_center), dot(v.pose.rot_y.xyz, v.from_center), dot(v.pose.rot_z.xyz, v.from_center));
    return v;
}

// A triangle in the ball's frame (t = 0 orientation) with its unit normal and global group.
struct MeshCorners {
    a: vec3<f32>,
    b: vec3<f32>,
    c: vec3<f32>,
    normal: vec3<f32>,
    group: u32,
}

// Triangle t of the view's mesh, corners as vectors from the ball centre.
fn mesh_corners(view: MeshView, t: u32) -> MeshCorners {
    let tri = mesh_triangle(t);
    var a: vec3<f32>;
    if (view.moving) {
        a = relative_position(view.header.center_block.xyz, view.header.center_offset.xyz, tri.v0_block.xyz, tri.v0_offset.xyz, sim.block) - view.q;
    } else {
        a = relative_position(view.ball_block, view.ball_offset, tri.v0_block.xyz, tri.v0_offset.xyz, sim.block);
    }
    return MeshCorners(a, a + tri.edge1.xyz, a + tri.edge2.xyz, tri.normal.xyz, tri.group);
}

// A direction of the mesh's t = 0 frame at the view's time: R n (n itself when static).
fn mesh_to_world(view: MeshView, n: vec3<f32>) -> vec3<f32> {
    if (!view.moving) {
        return n;
    }
    return view.pose.rot_x.xyz * n.x + view.pose.rot_y.xyz * n.y + view.pose.rot_z.xyz * n.z;
}

// The candidate range [x, y) of the binned ids for the ball: the triangles listed in the grid
// cell of its centre (in the t = 0 frame). Empty outside the grid, which covers the mesh's box
// expanded by the largest reach, so no triangle is within reach there.
fn mesh_candidates(view: MeshView) -> vec2<u32> {
    let h = view.header;
    let k = h.grid_origin.w;
    var cell: vec3<i32>;
    if (view.moving) {
        let from_origin = relative_position(h.grid_origin.xyz, vec3<f32>(0.0), h.center_block.xyz, h.center_offset.xyz, sim.block) + view.q;
        let c = floor(from_origin / (f32(k) * sim.block));
        cell = vec3<i32>(clamp(c, vec3<f32>(-1.0), vec3<f32>(h.grid_dims.xyz)));
    } else {
        let rel = view.ball_block - h.grid_origin.xyz;
        cell = vec3<i32>(floor_div(rel.x, k), floor_div(rel.y, k), floor_div(rel.z, k));
    }
    if (any(cell < vec3<i32>(0)) || any(cell >= vec3<i32>(h.grid_dims.xyz))) {
        return vec2<u32>(0u);
    }
    let c = h.grid_dims.w + cell_index(cell, h.grid_dims.xyz);
    return vec2<u32>(mesh_u32(sim.mesh_start_base, c), mesh_u32(sim.mesh_start_base, c + 1u));
}
