// Rigid-body helpers of the body passes (`body_kick`, `body_place`; pure functions, no
// bindings but `sim`). Quaternions are stored and passed as vec4<f32>(x, y, z, w): the vector
// part in .xyz, the scalar in .w (the host's `Bodies::orientation` is (w, x, y, z)). They turn
// the body (principal) frame into the space frame. Twins of `src/model/body.rs` (rotate,
// rotate_back, omega) and of the CPU's rotation drift (`src/cpu/rigid.rs`).

// v turned by the unit quaternion q: v + 2w (u × v) + 2 u × (u × v).
fn q_rotate(q: vec4<f32>, v: vec3<f32>) -> vec3<f32> {
    let c = cross(q.xyz, v);
    let cc = cross(q.xyz, c);
    return v + 2.0 * (q.w * c + cc);
}

// v turned by the inverse of q.
fn q_rotate_back(q: vec4<f32>, v: vec3<f32>) -> vec3<f32> {
    return q_rotate(vec4<f32>(-q.xyz, q.w), v);
}

// ω = R diag(1/I) Rᵀ L; a zero moment gives no rate about its axis.
fn body_omega(q: vec4<f32>, moments: vec3<f32>, l: vec3<f32>) -> vec3<f32> {
    let lb = q_rotate_back(q, l);
    let wb = select(vec3<f32>(0.0), lb / moments, moments > vec3<f32>(0.0));
    return q_rotate(q, wb);
}

// One exact rotation about body axis k by the angle (L_k / I_k) h dt: the body-frame L turns by
// −θ about axis k and q ← q ⊗ (cos θ/2, sin θ/2 e_k).
fn rotate_about_axis(q: ptr<function, vec4<f32>>, lb: ptr<function, vec3<f32>>, k: u32, h: f32, moments: vec3<f32>, dt: f32) {
    let ik = moments[k];
    let th = select(0.0, (*lb)[k] / ik * h * dt, ik > 0.0);
    let sn = sin(0.5 * th);
    let cs = cos(0.5 * th);
    var e = vec3<f32>(0.0);
    e[k] = sn;
    let p = *q;
    *q = vec4<f32>(p.w * e + cs * p.xyz + cross(p.xyz, e), p.w * cs - dot(p.xyz, e));
    let a = (k + 1u) % 3u;
    let b = (k + 2u) % 3u;
    let sf = sin(th);
    let cf = cos(th);
    let la = (*lb)[a];
    let lbb = (*lb)[b];
    (*lb)[a] = cf * la + sf * lbb;
    (*lb)[b] = -sf * la + cf * lbb;
}

// The orientation after a time dt of torque-free motion at space-frame angular momentum l
// (constant in the space frame): symmetric splitting into exact rotations about the body axes
// 1, 2, 3, 2, 1 for dt/2, dt/2, dt, dt/2, dt/2, then q normalised. q is (x, y, z, w).
// (A local twin of the CPU's temporary `rotation_drift`; to be swapped for the shared
// `shaders/rigid/integrate.wgsl` once it lands.)
fn rotation_drift(q: vec4<f32>, l: vec3<f32>, moments: vec3<f32>, dt: f32) -> vec4<f32> {
    var lb = q_rotate_back(q, l);
    var p = q;
    rotate_about_axis(&p, &lb, 0u, 0.5, moments, dt);
    rotate_about_axis(&p, &lb, 1u, 0.5, moments, dt);
    rotate_about_axis(&p, &lb, 2u, 1.0, moments, dt);
    rotate_about_axis(&p, &lb, 1u, 0.5, moments, dt);
    rotate_about_axis(&p, &lb, 0u, 0.5, moments, dt);
    return p / sqrt(dot(p, p));
}

struct BodyPoint {
    b: vec3<i32>,
    o: vec3<f32>,
    // periods added on each periodic axis (to be added to the image)
    jump: vec3<i32>,
}

// Block + offset with the offset brought back into [0, BLOCK) (the arithmetic of `drift.wgsl`).
fn body_normalize(b: vec3<i32>, o: vec3<f32>) -> BodyPoint {
    var x = o;
    let shift = floor(x / sim.block);
    x = x - shift * sim.block;
    var bx = b + vec3<i32>(shift);
    let over = x >= vec3<f32>(sim.block);
    x = select(x, x - vec3<f32>(sim.block), over);
    bx = bx + select(vec3<i32>(0), vec3<i32>(1), over);
    let under = x < vec3<f32>(0.0);
    x = select(x, vec3<f32>(0.0), under);
    return BodyPoint(bx, x, vec3<i32>(0));
}

// The point at block b + offset o moved back into [min, max) on the periodic axes (one period
// at most, as `drift.wgsl`), the periods removed in `jump`.
fn body_place_point(b: vec3<i32>, o: vec3<f32>) -> BodyPoint {
    var p = body_normalize(b, o);
    if (sim.periodic != 0u) {
        let rel = vec3<f32>(p.b - sim.domain_min_block) * sim.block + (p.o - sim.domain_min_offset);
        let period = vec3<f32>(sim.period_blocks) * sim.block + sim.period_offset;
        let periodic = axis_flags(sim.periodic);
        let jump = select(vec3<i32>(0), vec3<i32>(1), periodic & (rel >= period)) - select(vec3<i32>(0), vec3<i32>(1), periodic & (rel < vec3<f32>(0.0)));
        if (any(jump != vec3<i32>(0))) {
            p = body_normalize(p.b - jump * sim.period_blocks, p.o - vec3<f32>(jump) * sim.period_offset);
            p.jump = jump;
        }
    }
    return p;
}

// BLOWUP_LOST for a centre farther than `lost_margin` outside the domain on a closed axis.
fn body_lost(p: BodyPoint) -> u32 {
    if (sim.lost_margin < 0.0) { return 0u; }
    let rel = vec3<f32>(p.b - sim.domain_min_block) * sim.block + (p.o - sim.domain_min_offset);
    let extent = vec3<f32>(sim.period_blocks) * sim.block + sim.period_offset;
    let out = (rel < vec3<f32>(-sim.lost_margin)) | (rel > extent + vec3<f32>(sim.lost_margin));
    return select(0u, BLOWUP_LOST, any(out & !axis_flags(sim.periodic)));
}

// Raise BLOWUP for particle i with the `what` bits (the lowest flagged index wins).
fn body_blowup(i: u32, what: u32) {
    if (what != 0u) {
        atomicOr(&state.blowup_what, what);
        atomicMax(&state.blowup_particle, ~i);
        atomicOr(&state.flags, BLOWUP);
    }
}
