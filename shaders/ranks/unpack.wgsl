// Pass `ghost_unpack` (a decomposed GPU run, `gpu::halo`): the ghosts' rows the other ranks
// sent (`ghost_pack`), written over the ghosts before the step's list plan and force pass, so
// every pair an owned particle has is evaluated from the owner's bits. The w words (material and
// `GHOST_BIT`, radius, 1/m, 1/I) stay the local ones. ids[0] is the count, ids[1..] the ghosts'
// local ids in the order the rows arrive.
@group(0) @binding(0) var<storage, read> ids: array<u32>;
@group(0) @binding(1) var<storage, read> rows: array<u32>;
@group(0) @binding(2) var<storage, read_write> pos_block: array<vec4<i32>>;
@group(0) @binding(3) var<storage, read_write> pos_offset: array<vec4<f32>>;
// Split arrays (group 1, `gpu::split`): motion, read_write.

fn get3(at: u32) -> vec3<u32> {
    return vec3<u32>(rows[at], rows[at + 1u], rows[at + 2u]);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = linear_index(gid, nwg);
    if (k >= ids[0]) { return; }
    let i = ids[1u + k];
    let base = GHOST_WORDS * k;
    pos_block[i] = vec4<i32>(bitcast<vec3<i32>>(get3(base)), pos_block[i].w);
    pos_offset[i] = vec4<f32>(bitcast<vec3<f32>>(get3(base + 3u)), pos_offset[i].w);
    for (var r = 0u; r < MOTION_ROWS; r = r + 1u) {
        let m = motion_at(MOTION_ROWS * i + r);
        motion_put(MOTION_ROWS * i + r, vec4<f32>(bitcast<vec3<f32>>(get3(base + 6u + 3u * r)), m.w));
    }
}
