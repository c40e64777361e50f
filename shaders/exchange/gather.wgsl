// Pass `exchange_gather` (an exchange, `gpu::flow`): the rows of the xp.n_found particles
// `exchange_near` found, for the host: position block, then offset, velocity and angular
// velocity.
@group(0) @binding(0) var<uniform> xp: ExchangeParams;
@group(0) @binding(1) var<storage, read> found: array<u32>;
@group(0) @binding(2) var<storage, read> pos_block: array<vec4<i32>>;
@group(0) @binding(3) var<storage, read> pos_offset: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> out_block: array<vec4<i32>>;
@group(0) @binding(5) var<storage, read_write> out_rows: array<vec4<f32>>;
// Split arrays (group 1, `gpu::split`): motion, read.

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = linear_index(gid, nwg);
    if (k >= xp.n_found) { return; }
    let i = found[1u + k];
    out_block[k] = pos_block[i];
    out_rows[3u * k] = pos_offset[i];
    out_rows[3u * k + 1u] = motion_at(MOTION_ROWS * i);
    out_rows[3u * k + 2u] = motion_at(MOTION_ROWS * i + 1u);
}
