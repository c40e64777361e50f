// Pass `exchange_body_compact` (an exchange of a scene with rigid bodies, `gpu::flow`; beside
// `exchange_compact`): a thread per particle before the exchange, into new body buffers.
// Thread k < xp.n_old_bodies moves body k, where it stays, to its new id, k less the removed
// bodies below it (`removed_bodies`, ascending): its `body_int` rows, the first component's id
// (w) less the removed particles below it, and its `body_state` rows. Thread i < xp.n_old
// moves particle i's `body_comp` row, where it stays, to its new id, its body renumbered so.
// A body leaves whole (`removed` holds all its components), so its components stay one run.
// As `Bodies::retain` renumbers the host's table (`ParticleState::retain`).
@group(0) @binding(0) var<uniform> xp: ExchangeParams;
@group(0) @binding(1) var<storage, read> removed: array<u32>;
@group(0) @binding(2) var<storage, read> removed_bodies: array<u32>;
@group(0) @binding(3) var<storage, read> old_int: array<vec4<i32>>;
@group(0) @binding(4) var<storage, read> old_state: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> old_comp: array<vec4<u32>>;
@group(0) @binding(6) var<storage, read_write> body_int: array<vec4<i32>>;
@group(0) @binding(7) var<storage, read_write> body_state: array<vec4<f32>>;
@group(0) @binding(8) var<storage, read_write> body_comp: array<vec4<u32>>;

// Removed bodies below old body id `k`.
fn bodies_below(k: u32) -> u32 {
    var lo = 0u;
    var hi = xp.n_removed_bodies;
    while (lo < hi) {
        let mid = (lo + hi) / 2u;
        if (removed_bodies[mid] < k) {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return lo;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i < xp.n_old_bodies) {
        let below = bodies_below(i);
        if (below >= xp.n_removed_bodies || removed_bodies[below] != i) {
            let k = i - below;
            let head = old_int[BODY_INT_ROWS * i];
            body_int[BODY_INT_ROWS * k] = vec4<i32>(head.xyz, i32(new_id(u32(head.w))));
            for (var r = 1u; r < BODY_INT_ROWS; r++) {
                body_int[BODY_INT_ROWS * k + r] = old_int[BODY_INT_ROWS * i + r];
            }
            for (var r = 0u; r < BODY_ROWS; r++) {
                body_state[BODY_ROWS * k + r] = old_state[BODY_ROWS * i + r];
            }
        }
    }
    if (i < xp.n_old && !is_removed(i)) {
        let c = old_comp[i];
        body_comp[new_id(i)] = vec4<u32>(c.xyz, c.w - bodies_below(c.w));
    }
}
