// Pass `body_place` (scenes with rigid bodies only, `gpu::bodies`; one thread per component
// particle): the component where its body puts it, x = centre + R(q)·offset (wrapped on each
// periodic axis with its own image, from the body's), v = v_b + ω × arm, spin ω
// (ω = R diag(1/I) Rᵀ L). The distance it moved goes into `state.max_step` (the list skin's
// bookkeeping, as `drift`). MODE 0: the first step of a batch; 1: a later step (also folds the
// last force pass's work, `work_fold.wgsl`, and keeps the spin of that pass as the previous one
// where rolling work is booked, as `kick_drift`); 2: closes a batch (velocities and spins only,
// after `body_kick` MODE 2; folds and keeps as 1, as `kick`). The component's 1/m (motion row 0,
// w) is its body's and is left as it is.
@group(0) @binding(0) var<uniform> sim: SimParams;
@group(0) @binding(1) var<storage, read_write> state: StepState;
@group(0) @binding(2) var<storage, read_write> pos_block: array<vec4<i32>>;
@group(0) @binding(3) var<storage, read_write> pos_offset: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> image: array<vec4<i32>>;
@group(0) @binding(5) var<storage, read> body_int: array<vec4<i32>>;
@group(0) @binding(6) var<storage, read> body_state: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read> body_comp: array<vec4<u32>>;
@group(0) @binding(8) var<storage, read_write> dissipation: array<vec2<f32>>;
@group(0) @binding(9) var<storage, read> work_step: array<vec4<f32>>;
// Split array (group 1, `gpu::split`): motion (read_write; MOTION_ROWS rows per particle).

override MODE: u32 = 0u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= sim.n_particles || state.halt != 0u) { return; }
    let comp = body_comp[i];
    let k = comp.w;
    let row = BODY_ROWS * k;
    let q = body_state[row + BODY_ROW_Q];
    let vb = body_state[row + BODY_ROW_VELOCITY].xyz;
    let w = angular_velocity(q, body_state[row + BODY_ROW_MOMENTS].xyz, body_state[row + BODY_ROW_MOMENTUM].xyz);
    let arm = body_to_space(q, bitcast<vec3<f32>>(comp.xyz));
    let v_old = motion_at(MOTION_ROWS * i);
    let w_old = motion_at(MOTION_ROWS * i + 1u);
    if (MODE != 0u) {
        fold_work(i);
        if (sim.rolling_booked != 0u) {
            motion_put(MOTION_ROWS * i + 2u, w_old);
        }
    }
    let v = vb + cross(w, arm);
    motion_put(MOTION_ROWS * i, vec4<f32>(v, v_old.w));
    motion_put(MOTION_ROWS * i + 1u, vec4<f32>(w, w_old.w));
    var what = select(0u, BLOWUP_VELOCITY, non_finite3(v) || non_finite3(w));
    if (MODE != 2u) {
        let head = body_int[BODY_INT_ROWS * k];
        let tail = body_int[BODY_INT_ROWS * k + 1u];
        let p = place_periodic(head.xyz, body_state[row + BODY_ROW_OFFSET].xyz + arm);
        let img = tail.xyz + p.jump;
        let b_old = pos_block[i];
        let o_old = pos_offset[i];
        var k_old = vec4<i32>(0);
        if (IMAGES) {
            k_old = image[i];
        }
        // the distance moved since the last placement, unwrapped (a bound on the step as
        // `drift`'s |v| dt)
        let period = vec3<f32>(sim.period_blocks) * sim.block + sim.period_offset;
        let d = vec3<f32>(p.b - b_old.xyz) * sim.block + (p.o - o_old.xyz) + vec3<f32>(img - k_old.xyz) * period;
        let len_bits = bitcast<u32>(length(d));
        if (len_bits > atomicLoad(&state.max_step)) {
            atomicMax(&state.max_step, len_bits);
        }
        if (any(p.b != b_old.xyz)) {
            pos_block[i] = vec4<i32>(p.b, b_old.w);
        }
        pos_offset[i] = vec4<f32>(p.o, o_old.w);
        if (IMAGES && any(img != k_old.xyz)) {
            image[i] = vec4<i32>(img, k_old.w);
        }
        what = what | select(0u, BLOWUP_POSITION, non_finite3(p.o)) | lost_flag(p.b, p.o);
    }
    body_blowup(i, what);
}
