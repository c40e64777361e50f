// Rigid-body helpers of the body passes (`body_kick`, `body_place`; no bindings but `sim` and
// `state`): the blow-up flag. Points are placed and checked as `drift` does it
// (`block_offset.wgsl`: `place_periodic`, `lost_flag`). The
// rotation (quaternions as vec4<f32>(x, y, z, w), body → space; the host's
// `Bodies::orientation` is (w, x, y, z)), ω and the rotation drift are the twin integrator's
// (`shaders/rigid/integrate.wgsl`, twin of `src/rigid/integrate.rs`), composed before this file.

// Raise BLOWUP for particle i with the `what` bits (the lowest flagged index wins).
fn body_blowup(i: u32, what: u32) {
    if (what != 0u) {
        atomicOr(&state.blowup_what, what);
        atomicMax(&state.blowup_particle, ~i);
        atomicOr(&state.flags, BLOWUP);
    }
}
