// Pass `ghost_unpack` (a decomposed GPU run, `gpu::halo`): the ghosts' rows the other ranks
// sent (`ghost_pack`), written over the ghosts before the step's list plan and force pass, so
// every pair an owned particle has is evaluated from the owner's bits. The block's w word stays
// the local one (material and `GHOST_BIT`). ids[0] is the count, ids[1..] the ghosts' local
// ids in the order the rows arrive.
@group(0) @binding(0) var<storage, read> ids: array<u32>;
@group(0) @binding(1) var<storage, read> rows: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> pos_block: array<vec4<i32>>;
@group(0) @binding(3) var<storage, read_write> pos_offset: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> image: array<vec4<i32>>;
// Split arrays (group 1, `gpu::split`): motion, read_write.

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = linear_index(gid, nwg);
    if (k >= ids[0]) { return; }
    let i = ids[1u + k];
    let base = GHOST_ROWS * k;
    let b = bitcast<vec4<i32>>(rows[base]);
    pos_block[i] = vec4<i32>(b.xyz, pos_block[i].w);
    pos_offset[i] = bitcast<vec4<f32>>(rows[base + 1u]);
    for (var r = 0u; r < MOTION_ROWS; r = r + 1u) {
        motion_put(MOTION_ROWS * i + r, bitcast<vec4<f32>>(rows[base + 2u + r]));
    }
    image[i] = bitcast<vec4<i32>>(rows[base + 2u + MOTION_ROWS]);
}
