// Test kernel for tests/rigid_twins.rs: every function of shaders/rigid/integrate.wgsl
// (composed before this file) on one random body state per invocation. `params`
// (tests/shaders/twin_io.wgsl) only sets the case count.
//
// in:  q (x y z w), moments (3), L (3), dt, v (3), q2 (x y z w), phi
// out: rotation_drift q (4), angular_velocity (3), rotational_energy, body_to_space(q, v) (3),
//      space_to_body(q, L) (3), quat_mul(q, q2) (4), rotor_substep about axis 2 over dt from
//      (q, Rᵀ L): q (4) and lb (3), cos_sin(phi) (2), quat_normalize(q2) (4)

const RIGID_IN_STRIDE: u32 = 19u;
const RIGID_OUT_STRIDE: u32 = 31u;

fn in4(base: u32) -> vec4<f32> {
    return vec4<f32>(in3(base), inputs[base + 3u]);
}

fn put4(o: u32, v: vec4<f32>) {
    put3(o, v.xyz);
    put(o + 3u, v.w);
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let c = gid.x;
    if (c >= arrayLength(&params)) {
        return;
    }
    let i = c * RIGID_IN_STRIDE;
    let o = c * RIGID_OUT_STRIDE;
    let q = in4(i);
    let moments = in3(i + 4u);
    let l = in3(i + 7u);
    let dt = inputs[i + 10u];
    let v = in3(i + 11u);
    let q2 = in4(i + 14u);
    let phi = inputs[i + 18u];
    put4(o, rotation_drift(q, l, moments, dt));
    put3(o + 4u, angular_velocity(q, moments, l));
    put(o + 7u, rotational_energy(q, moments, l));
    put3(o + 8u, body_to_space(q, v));
    put3(o + 11u, space_to_body(q, l));
    put4(o + 14u, quat_mul(q, q2));
    let s = rotor_substep(RotorState(q, space_to_body(q, l)), inverse_moments(moments), vec3<f32>(0.0, 1.0, 0.0), dt);
    put4(o + 18u, s.q);
    put3(o + 22u, s.lb);
    let cs = cos_sin(phi);
    put(o + 25u, cs.x);
    put(o + 26u, cs.y);
    put4(o + 27u, quat_normalize(q2));
}
