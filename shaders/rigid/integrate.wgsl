// Rotation of a rigid body over one step: the symmetric splitting of the free rigid rotor into
// exact rotations about the principal axes (Dullweber, Leimkuhler & McLachlan 1997, the
// NO_SQUISH integrator of Miller et al. 2002). Twin of src/rigid/integrate.rs (same functions,
// same statement order, f64 there; the scheme is described there and in
// docs/contact-models.md, "Rigid-body integration"). Pure: no bindings, no atomics.
//
// Quaternions are vec4<f32>(x, y, z, w): vector part .xyz, scalar part .w (glam's `Quat`
// layout, so a Rust `Quat` array uploads as is), body → space.
//
// The caller kicks the space-frame angular momentum, L += τ Δt/2, then rotation_drift turns q
// over Δt with L held fixed, then kicks again with the torque at the new orientation.

// Half angles below this use the series of cos_sin (the sin/cos builtins are only accurate in
// absolute terms, not relative to a small angle).
const ROTOR_SERIES_LIMIT: f32 = 0.25;

// A body's orientation (body → space) and body-frame angular momentum inside the drift.
struct RotorState {
    q: vec4<f32>,
    lb: vec3<f32>,
}

// The vector part (x, y, z) of a quaternion.
fn vector_part(q: vec4<f32>) -> vec3<f32> {
    return q.xyz;
}

// The Hamilton product a ⊗ b.
fn quat_mul(a: vec4<f32>, b: vec4<f32>) -> vec4<f32> {
    let av = vector_part(a);
    let bv = vector_part(b);
    let w = a.w * b.w - dot(av, bv);
    let v = bv * a.w + av * b.w + cross(av, bv);
    return vec4<f32>(v, w);
}

// The conjugate (the inverse of a unit quaternion).
fn quat_conj(q: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(-q.xyz, q.w);
}

// q / |q|.
fn quat_normalize(q: vec4<f32>) -> vec4<f32> {
    let v = q;
    return v / sqrt(dot(v, v));
}

// R(q) v: a body-frame vector (a component sphere's offset, a body-frame momentum) in space.
fn body_to_space(q: vec4<f32>, v: vec3<f32>) -> vec3<f32> {
    let u = vector_part(q);
    let t = cross(u, v) * 2.0;
    return v + t * q.w + cross(u, t);
}

// Rᵀ(q) v: a space-frame vector in the body frame.
fn space_to_body(q: vec4<f32>, v: vec3<f32>) -> vec3<f32> {
    return body_to_space(quat_conj(q), v);
}

// 1/I per principal axis, 0 where the moment is not positive.
fn inverse_moments(moments: vec3<f32>) -> vec3<f32> {
    let positive = moments > vec3<f32>(0.0);
    let safe = select(vec3<f32>(1.0), moments, positive);
    return select(vec3<f32>(0.0), vec3<f32>(1.0) / safe, positive);
}

// Space-frame angular velocity ω = R diag(1/I) Rᵀ L.
fn angular_velocity(q: vec4<f32>, moments: vec3<f32>, l: vec3<f32>) -> vec3<f32> {
    let lb = space_to_body(q, l);
    return body_to_space(q, inverse_moments(moments) * lb);
}

// Rotational kinetic energy ½ L·ω (summed in the body frame: ½ Σ Lb_k²/I_k).
fn rotational_energy(q: vec4<f32>, moments: vec3<f32>, l: vec3<f32>) -> f32 {
    let lb = space_to_body(q, l);
    return 0.5 * dot(lb, inverse_moments(moments) * lb);
}

// (cos φ, sin φ): Taylor series to φ¹⁴ and φ¹³ for |φ| < ROTOR_SERIES_LIMIT, the builtins
// beyond.
fn cos_sin(phi: f32) -> vec2<f32> {
    if (abs(phi) < ROTOR_SERIES_LIMIT) {
        let p2 = phi * phi;
        let s = phi * (1.0 - p2 / 6.0 * (1.0 - p2 / 20.0 * (1.0 - p2 / 42.0 * (1.0 - p2 / 72.0 * (1.0 - p2 / 110.0 * (1.0 - p2 / 156.0))))));
        let c = 1.0 - p2 / 2.0 * (1.0 - p2 / 12.0 * (1.0 - p2 / 30.0 * (1.0 - p2 / 56.0 * (1.0 - p2 / 90.0 * (1.0 - p2 / 132.0 * (1.0 - p2 / 182.0))))));
        return vec2<f32>(c, s);
    }
    return vec2<f32>(cos(phi), sin(phi));
}

// The exact rotation about principal axis `axis` (a unit basis vector e_k) over time h:
// θ = Lb_k h / I_k, Lb turned by −θ about e_k, q ← q ⊗ (cos θ/2, sin θ/2 e_k). Lb_k is carried
// over exactly.
fn rotor_substep(s: RotorState, inv_moments: vec3<f32>, axis: vec3<f32>, h: f32) -> RotorState {
    let lb_k = dot(axis, s.lb);
    let theta = lb_k * dot(axis, inv_moments) * h;
    let half = cos_sin(0.5 * theta);
    let cos_t = 1.0 - 2.0 * half.y * half.y;
    let sin_t = 2.0 * half.y * half.x;
    let along = axis * lb_k;
    let lb = along + (s.lb - along) * cos_t - cross(axis, s.lb) * sin_t;
    let turn = axis * half.y;
    let q = quat_mul(s.q, vec4<f32>(turn, half.x));
    return RotorState(q, lb);
}

// The rotational drift over dt with space-frame momentum l held fixed: axis 1 for dt/2, axis 2
// for dt/2, axis 3 for dt, axis 2 for dt/2, axis 1 for dt/2, then q normalised.
fn rotation_drift(q: vec4<f32>, l: vec3<f32>, moments: vec3<f32>, dt: f32) -> vec4<f32> {
    let inv = inverse_moments(moments);
    let half = 0.5 * dt;
    var s = RotorState(q, space_to_body(q, l));
    s = rotor_substep(s, inv, vec3<f32>(1.0, 0.0, 0.0), half);
    s = rotor_substep(s, inv, vec3<f32>(0.0, 1.0, 0.0), half);
    s = rotor_substep(s, inv, vec3<f32>(0.0, 0.0, 1.0), dt);
    s = rotor_substep(s, inv, vec3<f32>(0.0, 1.0, 0.0), half);
    s = rotor_substep(s, inv, vec3<f32>(1.0, 0.0, 0.0), half);
    return quat_normalize(s.q);
}
