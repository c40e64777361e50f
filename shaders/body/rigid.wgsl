// Rigid-body helpers of the body passes (`body_kick`, `body_place`; no bindings but `sim`):
// where a body's point lies in the block + offset form and the checks of a placed point. The
// rotation (quaternions as vec4<f32>(x, y, z, w), body → space; the host's
// `Bodies::orientation` is (w, x, y, z)), ω and the rotation drift are the twin integrator's
// (`shaders/rigid/integrate.wgsl`, twin of `src/rigid/integrate.rs`), composed before this file.

struct BodyPoint {
    b: vec3<i32>,
    o: vec3<f32>,
    // periods added on each periodic axis (to be added to the image)
    jump: vec3<i32>,
}

// Block + offset with the offset brought back into [0, BLOCK) (`normalize_offset` of
// `block_offset.wgsl`, as `drift` does it), no period crossed yet.
fn body_normalize(b: vec3<i32>, o: vec3<f32>) -> BodyPoint {
    let n = normalize_offset(b, o);
    return BodyPoint(n.b, n.o, vec3<i32>(0));
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
