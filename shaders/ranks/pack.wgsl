// Pass `ghost_pack` (a decomposed GPU run, `gpu::halo`): after a step's drift, the rows of the
// owned particles other ranks hold as ghosts, for the host to send (GHOST_ROWS vec4 words per
// particle: position block, offset, MOTION_ROWS motion rows, periodic image; bit for bit).
// ids[0] is the count, ids[1..] the local ids in the order the receivers expect.
@group(0) @binding(0) var<storage, read> ids: array<u32>;
@group(0) @binding(1) var<storage, read> pos_block: array<vec4<i32>>;
@group(0) @binding(2) var<storage, read> pos_offset: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> image: array<vec4<i32>>;
@group(0) @binding(4) var<storage, read_write> rows: array<vec4<u32>>;
// Split arrays (group 1, `gpu::split`): motion, read.

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = linear_index(gid, nwg);
    if (k >= ids[0]) { return; }
    let i = ids[1u + k];
    let base = GHOST_ROWS * k;
    rows[base] = bitcast<vec4<u32>>(pos_block[i]);
    rows[base + 1u] = bitcast<vec4<u32>>(pos_offset[i]);
    for (var r = 0u; r < MOTION_ROWS; r = r + 1u) {
        rows[base + 2u + r] = bitcast<vec4<u32>>(motion_at(MOTION_ROWS * i + r));
    }
    rows[base + 2u + MOTION_ROWS] = bitcast<vec4<u32>>(image[i]);
}
