// Pass `body_kick` (scenes with rigid bodies only, `gpu::bodies`; one thread per body). The
// body's total force and torque about its centre are summed over its components in particle-id
// order (fixed order: no float atomics), from the components' totals (MODE 1: formed here by
// `total_force`, the gather's arithmetic, so no `gather` pass runs in the step; MODES 2 and 3:
// read from `force`, where `gather` wrote them), the lever arm R(q)·offset; then half kicks
// v += (F/M + g) dt/2, L += τ dt/2, the
// drift of the centre (wrapped on periodic axes, with its image) and the rotation drift of q.
// MODE 0: the first step of a batch (the stored totals; kick, drift); 1: a later step (totals
// of the last force pass, second half kick of the previous step, then as 0); 2: closes a batch
// (totals, second half kick); 3: totals only (after a force evaluation outside the step loop).
@group(0) @binding(0) var<uniform> sim: SimParams;
@group(0) @binding(1) var<uniform> bodies: BodyParams;
@group(0) @binding(2) var<storage, read_write> state: StepState;
// Per body BODY_INT_ROWS vec4<i32>: the centre's block (w = first component), image (w = count).
@group(0) @binding(3) var<storage, read_write> body_int: array<vec4<i32>>;
// Per body BODY_ROWS vec4<f32> (`consts::BODY_ROWS`).
@group(0) @binding(4) var<storage, read_write> body_state: array<vec4<f32>>;
// Per particle: its body-frame offset (xyz, f32 bits) and its body (w).
@group(0) @binding(5) var<storage, read> body_comp: array<vec4<u32>>;
// n + 1: each particle's first incoming entry (`incoming_sum.wgsl`).
@group(0) @binding(6) var<storage, read> incoming_start: array<u32>;
// Split arrays (group 1, `gpu::split`): force (per particle i: [2i] force, [2i + 1] torque: the
// own sums of the last force pass in MODE 1, the totals after `gather` in MODES 2 and 3),
// incoming and shares (`incoming_sum.wgsl`).

override MODE: u32 = 0u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = linear_index(gid, nwg);
    if (k >= bodies.n_bodies || state.halt != 0u) { return; }
    if (MODE == 3u && (atomicLoad(&state.flags) & OVERFLOW_LIST) != 0u) { return; }
    let row = BODY_ROWS * k;
    let head = body_int[BODY_INT_ROWS * k];
    let tail = body_int[BODY_INT_ROWS * k + 1u];
    let first = u32(head.w);
    let count = u32(tail.w);
    let q = body_state[row + BODY_ROW_Q];
    var v = body_state[row + BODY_ROW_VELOCITY];
    var l = body_state[row + BODY_ROW_MOMENTUM].xyz;
    let moments = body_state[row + BODY_ROW_MOMENTS].xyz;
    var f = body_state[row + BODY_ROW_FORCE].xyz;
    var t = body_state[row + BODY_ROW_TORQUE].xyz;
    let half = 0.5 * sim.dt;
    if (MODE != 0u) {
        f = vec3<f32>(0.0);
        t = vec3<f32>(0.0);
        for (var c = first; c < first + count; c = c + 1u) {
            let arm = body_to_space(q, bitcast<vec3<f32>>(body_comp[c].xyz));
            var total: Total;
            if (MODE == 1u) {
                total = total_force(c);
            } else {
                total = Total(force_at(2u * c), force_at(2u * c + 1u));
            }
            let fc = total.force.xyz;
            f = f + fc;
            t = t + (cross(arm, fc) + total.torque.xyz);
        }
        body_state[row + BODY_ROW_FORCE] = vec4<f32>(f, 0.0);
        body_state[row + BODY_ROW_TORQUE] = vec4<f32>(t, 0.0);
        if (MODE == 3u) { return; }
        v = vec4<f32>(v.xyz + (f * v.w + sim.gravity) * half, v.w);
        l = l + t * half;
    }
    var what = select(0u, BLOWUP_FORCE, non_finite3(f) || non_finite3(t));
    if (MODE != 2u) {
        v = vec4<f32>(v.xyz + (f * v.w + sim.gravity) * half, v.w);
        l = l + t * half;
        let o = body_state[row + BODY_ROW_OFFSET];
        let p = place_periodic(head.xyz, o.xyz + v.xyz * sim.dt);
        body_int[BODY_INT_ROWS * k] = vec4<i32>(p.b, head.w);
        if (any(p.jump != vec3<i32>(0))) {
            body_int[BODY_INT_ROWS * k + 1u] = vec4<i32>(tail.xyz + p.jump, tail.w);
        }
        body_state[row + BODY_ROW_OFFSET] = vec4<f32>(p.o, o.w);
        body_state[row + BODY_ROW_Q] = rotation_drift(q, l, moments, sim.dt);
        what = what | select(0u, BLOWUP_POSITION, non_finite3(p.o)) | lost_flag(p.b, p.o);
    }
    body_state[row + BODY_ROW_VELOCITY] = v;
    body_state[row + BODY_ROW_MOMENTUM] = vec4<f32>(l, 0.0);
    what = what | select(0u, BLOWUP_VELOCITY, non_finite3(v.xyz) || non_finite3(l));
    body_blowup(first, what);
}
