// Binning of mesh triangles into per-mesh uniform grids (t = 0 frame), run once when the GPU
// backend starts (src/gpu/meshes.rs): `mesh_count` (triangles per cell) → exclusive scan
// (shaders/scan.wgsl) → `mesh_scatter` (ids into their cell segments, arrival order) →
// `mesh_sort` (each cell's ids in increasing order, so the result is deterministic).
// A triangle goes into every cell its bounding box, expanded by the mesh's margin (the largest
// particle reach), overlaps and whose box, grown by the margin, its plane passes through
// (`cell_near_plane`): the one cell of a ball centre then lists every triangle within the
// ball's reach. Cells are an integer number of blocks; the box is computed from vertex 0's
// block plus small f32 offsets, so binning is exact up to the rounding of those offsets, which
// the margin's slack covers.
@group(0) @binding(0) var<uniform> bin: MeshBinParams;
@group(0) @binding(1) var<storage, read> triangles: array<MeshTriangleGpu>;
@group(0) @binding(2) var<storage, read> meshes: array<MeshGpu>;
@group(0) @binding(3) var<storage, read_write> cell_count: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read> cell_start: array<u32>;
@group(0) @binding(5) var<storage, read_write> triangle_ids: array<u32>;

// The cells (inclusive range, grid coordinates) a triangle's expanded box overlaps, with its
// mesh's grid dimensions and first cell.
struct CellRange {
    lo: vec3<i32>,
    hi: vec3<i32>,
    dims: vec3<u32>,
    first: u32,
}

// The cells of triangle `tri` of mesh `m` (its box grown by the mesh's margin), in the mesh's
// grid.
fn triangle_cells(tri: MeshTriangleGpu, m: MeshGpu) -> CellRange {
    let lo = tri.v0_offset.xyz + min(min(vec3<f32>(0.0), tri.edge1.xyz), tri.edge2.xyz) - vec3<f32>(m.margin);
    let hi = tri.v0_offset.xyz + max(max(vec3<f32>(0.0), tri.edge1.xyz), tri.edge2.xyz) + vec3<f32>(m.margin);
    let lo_block = tri.v0_block.xyz + vec3<i32>(floor(lo / bin.block));
    let hi_block = tri.v0_block.xyz + vec3<i32>(floor(hi / bin.block));
    let k = m.grid_origin.w;
    let dims = m.grid_dims.xyz;
    return CellRange(cell_of_block(lo_block, m.grid_origin.xyz, k, dims), cell_of_block(hi_block, m.grid_origin.xyz, k, dims), dims, m.grid_dims.w);
}

// Whether cell (x, y, z) of mesh `m`, grown by the mesh's margin, meets the plane of its
// triangle `tri`: the separating-axis test along the normal, with slack (1e-3 of the reach and a
// block) for the f32 arithmetic, so that no cell that reaches the triangle is dropped. A long
// triangle then goes only into the cells along it, not into every cell of its box.
fn cell_near_plane(tri: MeshTriangleGpu, m: MeshGpu, x: i32, y: i32, z: i32) -> bool {
    let k = m.grid_origin.w;
    let half = 0.5 * f32(k) * bin.block;
    // the cell's centre relative to vertex 0
    let lo_block = m.grid_origin.xyz + vec3<i32>(x, y, z) * k;
    let centre = vec3<f32>(lo_block - tri.v0_block.xyz) * bin.block + vec3<f32>(half) - tri.v0_offset.xyz;
    let n = tri.normal.xyz;
    let reach = (half + m.margin) * (abs(n.x) + abs(n.y) + abs(n.z));
    // (a degenerate triangle's normal is zero: every cell of its box)
    return !(abs(dot(n, centre)) > reach * 1.001 + bin.block);
}

// Linear index (over all meshes' cells) of cell (x, y, z) of range r.
fn range_cell(r: CellRange, x: i32, y: i32, z: i32) -> u32 {
    return r.first + cell_index(vec3<i32>(x, y, z), r.dims);
}

// One thread per triangle: count it in every cell it overlaps.
@compute @workgroup_size(WORKGROUP_SIZE)
fn mesh_count(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = linear_index(gid, nwg);
    if (t >= bin.n_triangles) { return; }
    let tri = triangles[t];
    let m = meshes[tri.mesh];
    let r = triangle_cells(tri, m);
    for (var z = r.lo.z; z <= r.hi.z; z = z + 1) {
        for (var y = r.lo.y; y <= r.hi.y; y = y + 1) {
            for (var x = r.lo.x; x <= r.hi.x; x = x + 1) {
                if (cell_near_plane(tri, m, x, y, z)) {
                    atomicAdd(&cell_count[range_cell(r, x, y, z)], 1u);
                }
            }
        }
    }
}

// One thread per triangle: write its id into every cell it overlaps, at the cell's start plus
// its arrival rank (`cell_count` is a zeroed cursor here; `cell_start` holds the scanned counts).
@compute @workgroup_size(WORKGROUP_SIZE)
fn mesh_scatter(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = linear_index(gid, nwg);
    if (t >= bin.n_triangles) { return; }
    let tri = triangles[t];
    let m = meshes[tri.mesh];
    let r = triangle_cells(tri, m);
    for (var z = r.lo.z; z <= r.hi.z; z = z + 1) {
        for (var y = r.lo.y; y <= r.hi.y; y = y + 1) {
            for (var x = r.lo.x; x <= r.hi.x; x = x + 1) {
                if (cell_near_plane(tri, m, x, y, z)) {
                    let c = range_cell(r, x, y, z);
                    triangle_ids[cell_start[c] + atomicAdd(&cell_count[c], 1u)] = t;
                }
            }
        }
    }
}

// One thread per cell insertion-sorts its segment.
@compute @workgroup_size(WORKGROUP_SIZE)
fn mesh_sort(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let c = linear_index(gid, nwg);
    if (c >= bin.n_cells) { return; }
    let s = cell_start[c];
    let e = cell_start[c + 1u];
    for (var k = s + 1u; k < e; k = k + 1u) {
        let v = triangle_ids[k];
        var m = k;
        while (m > s && triangle_ids[m - 1u] > v) {
            triangle_ids[m] = triangle_ids[m - 1u];
            m = m - 1u;
        }
        triangle_ids[m] = v;
    }
}
