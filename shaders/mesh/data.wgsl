// Mesh walls in the packed `mesh_data` buffer (src/gpu/meshes.rs): accessors that rebuild the
// packed structs word by word, and the view of one mesh from one ball. Needs module-scope
// `sim: SimParams` and `mesh_data: array<vec4<u32>>`.
//
// The view works in the ball's frame: the ball centre is the origin and triangle corners are
// vectors from it, in the mesh's t = 0 orientation, taken from block + offset positions
// (vertex 0 − ball centre, as a plane wall does). A moving mesh first carries the ball centre
// into the t = 0 frame with the pose row of the pass's time, x_b = c0 + Rᵀ(x − c(t)), as a
// block + offset position too (`rotate_blocks`: exact integer arithmetic for the long vector).

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
                       bitcast<vec4<f32>>(mesh_data[k + 6u]),
                       bitcast<vec4<i32>>(mesh_data[k + 7u]), bitcast<vec4<i32>>(mesh_data[k + 8u]), bitcast<vec4<i32>>(mesh_data[k + 9u]),
                       bitcast<vec4<i32>>(mesh_data[k + 10u]), bitcast<vec4<i32>>(mesh_data[k + 11u]), bitcast<vec4<i32>>(mesh_data[k + 12u]),
                       bitcast<vec4<f32>>(mesh_data[k + 13u]), bitcast<vec4<f32>>(mesh_data[k + 14u]), bitcast<vec4<f32>>(mesh_data[k + 15u]));
}

// A quantity in blocks: a whole part and a fraction of a few blocks.
struct RowBlocks {
    whole: i32,
    fraction: f32,
}

// One row of a split matrix, (hi 2⁻¹² + mid 2⁻²⁴ + lo) · (K + f / block), in blocks: the whole
// part from exact i32 sums (|hi| ≤ 2¹², |mid| ≤ 2¹¹ and K = h 2¹² + l with |h| ≤ 2¹², 0 ≤ l < 2¹²)
// and the fraction from the exact parts below one block plus the f32 products of the small
// remainder lo and of the offset f.
fn rotate_row(hi: vec3<i32>, mid: vec3<i32>, lo: vec3<f32>, h: vec3<i32>, l: vec3<i32>, k: vec3<i32>, f: vec3<f32>, block: f32) -> RowBlocks {
    let a1 = dot(hi, l);    // × 2⁻¹² blocks
    let b1 = dot(hi, h);    // × 1
    let a2 = dot(mid, l);   // × 2⁻²⁴
    let b2 = dot(mid, h);   // × 2⁻¹²
    let whole = b1 + (a1 >> 12u) + (b2 >> 12u) + (a2 >> 24u);
    let m = vec3<f32>(hi) * (1.0 / 4096.0) + vec3<f32>(mid) * (1.0 / 16777216.0) + lo;
    let exact = f32(a1 & 4095) * (1.0 / 4096.0) + f32(b2 & 4095) * (1.0 / 4096.0) + f32(a2 & 16777215) * (1.0 / 16777216.0);
    return RowBlocks(whole, exact + dot(lo, vec3<f32>(k)) + dot(m, f) / block);
}

// A block vector (K blocks of size `block` + offset f, |K| ≤ ROTATE_MAX_BLOCKS per axis)
// rotated by the pose's Rᵀ: the result as blocks + an offset in [0, block), rounding only ~1e-6
// of a block (tests/mesh_walls.rs checks it against f64).
fn rotate_blocks(pose: MeshPoseGpu, k: vec3<i32>, f: vec3<f32>, block: f32) -> BlockVector {
    let l = k & vec3<i32>(4095);
    let h = k >> vec3<u32>(12u);
    let x = rotate_row(pose.inv_hi_x.xyz, pose.inv_mid_x.xyz, pose.inv_lo_x.xyz, h, l, k, f, block);
    let y = rotate_row(pose.inv_hi_y.xyz, pose.inv_mid_y.xyz, pose.inv_lo_y.xyz, h, l, k, f, block);
    let z = rotate_row(pose.inv_hi_z.xyz, pose.inv_mid_z.xyz, pose.inv_lo_z.xyz, h, l, k, f, block);
    let fraction = vec3<f32>(x.fraction, y.fraction, z.fraction);
    let carry = floor(fraction);
    return BlockVector(vec3<i32>(x.whole, y.whole, z.whole) + vec3<i32>(carry), (fraction - carry) * block);
}

// A position or vector as whole blocks plus an f32 offset (m).
struct BlockVector {
    block: vec3<i32>,
    offset: vec3<f32>,
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
    // the ball centre in the mesh's t = 0 frame (x itself for a static mesh)
    ball_block: vec3<i32>,
    ball_offset: vec3<f32>,
    // x − c(t): from the mesh's current rotation centre to the ball centre
    from_center: vec3<f32>,
    // the ball is too far from a moving mesh's rotation centre to touch it
    far: bool,
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
    if (v.moving) {
        // x_b = c0 + Rᵀ(x − c(t)), x − c(t) = k blocks + (oi − offset of c(t))
        let k = bi.xyz - v.pose.center_block.xyz;
        v.far = any(k > vec3<i32>(ROTATE_MAX_BLOCKS)) || any(k < vec3<i32>(-ROTATE_MAX_BLOCKS));
        let q = rotate_blocks(v.pose, k, oi.xyz - v.pose.center_offset.xyz, sim.block);
        v.ball_block = h.center_block.xyz + q.block;
        v.ball_offset = h.center_offset.xyz + q.offset;
    }
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

// Triangle t of the view's mesh, corners as vectors from the ball centre (t = 0 frame).
fn mesh_corners(view: MeshView, t: u32) -> MeshCorners {
    let tri = mesh_triangle(t);
    let a = relative_position(view.ball_block, view.ball_offset, tri.v0_block.xyz, tri.v0_offset.xyz, sim.block);
    return MeshCorners(a, a + tri.edge1.xyz, a + tri.edge2.xyz, tri.normal.xyz, tri.group);
}

// A direction of the mesh's t = 0 frame at the view's time: R n (n itself when static).
fn mesh_to_world(view: MeshView, n: vec3<f32>) -> vec3<f32> {
    if (!view.moving) {
        return n;
    }
    return view.pose.rot_x.xyz * n.x + view.pose.rot_y.xyz * n.y + view.pose.rot_z.xyz * n.z;
}

// The cell of the view's triangle grid that holds the ball's centre (in the t = 0 frame; it
// may lie outside the grid), and the ball's block within that cell (0 to cells' blocks − 1).
fn mesh_cell_of(view: MeshView) -> array<vec3<i32>, 2> {
    let k = view.header.grid_origin.w;
    let rel = view.ball_block - view.header.grid_origin.xyz;
    let cell = vec3<i32>(floor_div(rel.x, k), floor_div(rel.y, k), floor_div(rel.z, k));
    return array<vec3<i32>, 2>(cell, rel - cell * k);
}

// The range [x, y) of the binned ids listed in `cell` of the view's grid: empty outside the
// grid, which covers the mesh's box expanded by the largest reach, or for a ball too far from a
// moving mesh's rotation centre.
fn mesh_cell_range(view: MeshView, cell: vec3<i32>) -> vec2<u32> {
    let h = view.header;
    if (view.far || any(cell < vec3<i32>(0)) || any(cell >= vec3<i32>(h.grid_dims.xyz))) {
        return vec2<u32>(0u);
    }
    let c = h.grid_dims.w + cell_index(cell, h.grid_dims.xyz);
    return vec2<u32>(mesh_u32(sim.mesh_start_base, c), mesh_u32(sim.mesh_start_base, c + 1u));
}

// The candidate range [x, y) of the binned ids for the ball: the triangles listed in the grid
// cell of its centre (in the t = 0 frame). Empty outside the grid, so no triangle is within
// reach there.
fn mesh_candidates(view: MeshView) -> vec2<u32> {
    return mesh_cell_range(view, mesh_cell_of(view)[0]);
}
