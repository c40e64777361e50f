// Pass `drift`: first half-kick with the stored forces, then x += v dt with re-wrap of the
// f32 offset into [0, BLOCK); a particle that left [min, max) on a periodic axis re-enters on
// the other side (twin of src/cpu/integrate.rs::drift). `kick_drift` forms each particle's total
// force first (`total_force`: the previous step's pair-once shares). The longest step of any
// particle goes into `state.max_step` (bounds every displacement since the last list build,
// `list_plan.wgsl`). `kick_drift` also folds the previous step's work into its workgroup's
// Kahan pairs (`work_fold.wgsl`). A non-finite velocity, force or position, or a centre farther than `lost_margin` outside the
// domain on a closed axis, raises BLOWUP (run-time checks, `src/model/checks.rs`).
@group(0) @binding(0) var<uniform> sim: SimParams;
@group(0) @binding(1) var<storage, read_write> pos_block: array<vec4<i32>>;
@group(0) @binding(2) var<storage, read_write> pos_offset: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> state: StepState;
@group(0) @binding(4) var<storage, read_write> image: array<vec4<i32>>;
@group(0) @binding(5) var<storage, read> incoming_start: array<u32>;
// Per workgroup: Kahan pairs of the work, and the work of the last force pass (`work_fold.wgsl`).
@group(0) @binding(6) var<storage, read_write> dissipation: array<vec2<f32>>;
@group(0) @binding(7) var<storage, read> work_step: array<vec4<f32>>;
// Split arrays (group 1, `gpu::split`): motion (read_write; per particle i, MOTION_ROWS rows:
// velocity (w = 1/m), angular velocity (w = 1/I), and where rolling work is booked
// (MOTION_ROWS = 3) the angular velocity of the previous force pass), force (per particle i:
// [2i] force, w = strain energy, [2i + 1] torque, w = contacts owned), incoming and shares
// (`incoming_sum.wgsl`).

// true for `kick_drift`: first apply the second half kick of the previous step (the same
// arithmetic as `kick.wgsl`, so a batch is bit-identical to separate passes).
override KICK_FIRST: bool = false;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= sim.n_particles || state.halt != 0u) { return; }
    let half = 0.5 * sim.dt;
    var v = motion_at(MOTION_ROWS * i);
    var w = motion_at(MOTION_ROWS * i + 1u);
    var total = Total(force_at(2u * i), force_at(2u * i + 1u));
    if (KICK_FIRST) {
        total = total_force(i);
        fold_work(i);
        // the spin of the force pass just done: the previous one of the next pass
        if (sim.rolling_booked != 0u) {
            motion_put(MOTION_ROWS * i + 2u, w);
        }
    }
    let f = total.force.xyz;
    let t = total.torque.xyz;
    if (KICK_FIRST) {
        v = vec4<f32>(v.xyz + (f * v.w + sim.gravity) * half, v.w);
        w = vec4<f32>(w.xyz + t * w.w * half, w.w);
    }
    v = vec4<f32>(v.xyz + (f * v.w + sim.gravity) * half, v.w);
    w = vec4<f32>(w.xyz + t * w.w * half, w.w);
    motion_put(MOTION_ROWS * i, v);
    motion_put(MOTION_ROWS * i + 1u, w);
    let b = pos_block[i];
    let o = pos_offset[i];
    let step = v.xyz * sim.dt;
    // a non-negative f32 orders like its bits as u32
    let len_bits = bitcast<u32>(length(step));
    if (len_bits > atomicLoad(&state.max_step)) {
        atomicMax(&state.max_step, len_bits);
    }
    let p = place_periodic(b.xyz, o.xyz + step);
    // (a jump happens only on a periodic axis, where the device holds the images)
    if (IMAGES && any(p.jump != vec3<i32>(0))) {
        let k = image[i];
        image[i] = vec4<i32>(k.xyz + p.jump, k.w);
    }
    // the block changes only when the particle crosses into another one
    if (any(p.b != b.xyz)) {
        pos_block[i] = vec4<i32>(p.b, b.w);
    }
    pos_offset[i] = vec4<f32>(p.o, o.w);
    var what = select(0u, BLOWUP_VELOCITY, non_finite3(v.xyz) || non_finite3(w.xyz));
    what = what | select(0u, BLOWUP_FORCE, non_finite3(f) || non_finite3(t));
    what = what | select(0u, BLOWUP_POSITION, non_finite3(p.o));
    what = what | lost_flag(p.b, p.o);
    if (what != 0u) {
        // the lowest flagged index wins (atomicMax of its complement)
        atomicOr(&state.blowup_what, what);
        atomicMax(&state.blowup_particle, ~i);
        atomicOr(&state.flags, BLOWUP);
    }
}
