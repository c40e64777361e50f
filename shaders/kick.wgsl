// Pass `kick`: second half-kick with the forces just computed (stored v, ω become full-step),
// which it gathers (`total_force`) and writes back, so between batches `force`/`torque` hold
// each particle's total. Closes a batch, so it checks what the batch's last force pass
// produced (BLOWUP, as `drift`), and folds that pass's work (`work_fold.wgsl`).
@group(0) @binding(0) var<uniform> sim: SimParams;
@group(0) @binding(1) var<storage, read_write> state: StepState;
@group(0) @binding(2) var<storage, read> incoming_start: array<u32>;
@group(0) @binding(3) var<storage, read_write> dissipation: array<vec2<f32>>;
@group(0) @binding(4) var<storage, read> work_step: array<vec4<f32>>;
// Split arrays (group 1, `gpu::split`): motion (read_write; per particle i, MOTION_ROWS rows:
// velocity (w = 1/m), angular velocity (w = 1/I), and where rolling work is booked
// (MOTION_ROWS = 3) the angular velocity of the previous force pass), force (read_write; per
// particle i: [2i] force, w = strain energy, [2i + 1] torque, w = contacts owned), incoming
// and shares (`incoming_sum.wgsl`).

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= sim.n_particles || state.halt != 0u) { return; }
    let half = 0.5 * sim.dt;
    let v = motion_at(MOTION_ROWS * i);
    let w = motion_at(MOTION_ROWS * i + 1u);
    let total = total_force(i);
    fold_work(i);
    // the spin of the force pass just done: the previous one of the next pass (the next
    // batch's `drift` starts from the full-step spin and leaves this row alone)
    if (sim.rolling_booked != 0u) {
        motion_put(MOTION_ROWS * i + 2u, w);
    }
    force_put(2u * i, total.force);
    force_put(2u * i + 1u, total.torque);
    let f = total.force.xyz;
    let t = total.torque.xyz;
    let v1 = v.xyz + (f * v.w + sim.gravity) * half;
    let w1 = w.xyz + t * w.w * half;
    motion_put(MOTION_ROWS * i, vec4<f32>(v1, v.w));
    motion_put(MOTION_ROWS * i + 1u, vec4<f32>(w1, w.w));
    let what = select(0u, BLOWUP_VELOCITY, non_finite3(v1) || non_finite3(w1)) | select(0u, BLOWUP_FORCE, non_finite3(f) || non_finite3(t));
    if (what != 0u) {
        // the lowest flagged index wins (atomicMax of its complement)
        atomicOr(&state.blowup_what, what);
        atomicMax(&state.blowup_particle, ~i);
        atomicOr(&state.flags, BLOWUP);
    }
}
