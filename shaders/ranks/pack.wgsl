// Pass `ghost_pack` (a decomposed GPU run, `gpu::halo`): after a step's drift, the rows of the
// owned particles other ranks hold as ghosts, for the host to send: GHOST_WORDS words per
// particle, bit for bit what a pair's evaluation reads of its partner that changes with time
// (position block and offset, velocity, spin, and the spin of the previous force pass); the
// w words (material, radius, 1/m, 1/I) and the image stay the receiver's own.
// ids[0] is the count, ids[1..] the local ids in the order the receivers expect.
@group(0) @binding(0) var<storage, read> ids: array<u32>;
@group(0) @binding(1) var<storage, read> pos_block: array<vec4<i32>>;
@group(0) @binding(2) var<storage, read> pos_offset: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> rows: array<u32>;
// Split arrays (group 1, `gpu::split`): motion, read.

fn put3(at: u32, x: vec3<u32>) {
    rows[at] = x.x;
    rows[at + 1u] = x.y;
    rows[at + 2u] = x.z;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = linear_index(gid, nwg);
    if (k >= ids[0]) { return; }
    let i = ids[1u + k];
    let base = GHOST_WORDS * k;
    put3(base, bitcast<vec3<u32>>(pos_block[i].xyz));
    put3(base + 3u, bitcast<vec3<u32>>(pos_offset[i].xyz));
    for (var r = 0u; r < MOTION_ROWS; r = r + 1u) {
        put3(base + 6u + 3u * r, bitcast<vec3<u32>>(motion_at(MOTION_ROWS * i + r).xyz));
    }
}
