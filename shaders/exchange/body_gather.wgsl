// Pass `exchange_body_gather` (an exchange of a scene with rigid bodies, `gpu::flow`): the rows
// of the xp.n_found bodies listed in `found_bodies`, for the host: BODY_INT_ROWS rows of
// `body_int` and BODY_ROWS rows of `body_state` each (`gpu::bodies`).
@group(0) @binding(0) var<uniform> xp: ExchangeParams;
@group(0) @binding(1) var<storage, read> found_bodies: array<u32>;
@group(0) @binding(2) var<storage, read> body_int: array<vec4<i32>>;
@group(0) @binding(3) var<storage, read> body_state: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> out_int: array<vec4<i32>>;
@group(0) @binding(5) var<storage, read_write> out_state: array<vec4<f32>>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = linear_index(gid, nwg);
    if (k >= xp.n_found) { return; }
    let b = found_bodies[k];
    for (var r = 0u; r < BODY_INT_ROWS; r++) {
        out_int[BODY_INT_ROWS * k + r] = body_int[BODY_INT_ROWS * b + r];
    }
    for (var r = 0u; r < BODY_ROWS; r++) {
        out_state[BODY_ROWS * k + r] = body_state[BODY_ROWS * b + r];
    }
}
