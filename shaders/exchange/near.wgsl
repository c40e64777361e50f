// Pass `exchange_near` (an exchange, `gpu::flow`): a thread per particle tests its block
// against the query's boxes of blocks (`ExchangeBox`, built on the host so that every centre
// the query wants lies in a listed box, or outside an inverted one) and appends the ids that
// pass to `found` (found[0] counts them; the order is the device's, the host sorts them).
// Integer tests only: no float rounding can drop a particle.
@group(0) @binding(0) var<uniform> xp: ExchangeParams;
@group(0) @binding(1) var<storage, read> boxes: array<ExchangeBox>;
@group(0) @binding(2) var<storage, read> pos_block: array<vec4<i32>>;
@group(0) @binding(3) var<storage, read_write> found: array<atomic<u32>>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= xp.n_old) { return; }
    let b = pos_block[i].xyz;
    var take = false;
    for (var k = 0u; k < xp.n_boxes; k++) {
        let bx = boxes[k];
        let inside = all(b >= bx.lo.xyz) && all(b <= bx.hi.xyz);
        take = take || (inside != (bx.lo.w != 0));
    }
    if (take) {
        let at = atomicAdd(&found[0], 1u);
        atomicStore(&found[1u + at], i);
    }
}
