// Linear tangential spring with history. Twin of src/contact/tangential_linear.rs.

// Tangential part of a linear contact.
struct LinearShear {
    fs: vec3<f32>,      // spring (history) force on j after the Coulomb cap
    k_t: f32,
    compliance: f32,    // its compliance 1/k_t (compliance), which the history keeps
    fs_d: vec3<f32>,    // tangential dashpot force on j (zero while slipping)
    slip: bool,
    slip_work: f32,     // eq (16) of hertz-pfc
}

// k_t = k_n, or 2/7 k_n with ktToKnUser.
fn linear_shear_stiffness(p: PairParamsGpu, k_n: f32) -> f32 {
    return select(k_n, 2.0 / 7.0 * k_n, (p.flags & PAIR_FLAG_KT_TO_KN_USER) != 0u);
}

// Trial F* = F₀ − k_t v_t Δt; cap μ|F_n| (compressive part of the total normal force);
// slipping: rescaled history, no tangential dashpot; else F_s^d = −γ_t v_t. limit_damping:
// the cap is tested on the total F* + F_s^d; slipping, the spring becomes the capped total.
fn linear_shear(p: PairParamsGpu, g: ContactGeometry, k_t: f32, gamma_t: f32, fn_total: f32, h: HistoryGpu, dt: f32) -> LinearShear {
    let fs_old = rotate_history(h.shear, g.normal);
    let increment = g.vel_shear * dt;
    let trial = fs_old - increment * k_t;
    let damp = g.vel_shear * -gamma_t;
    let capped = select(trial, trial + damp, (p.flags & PAIR_FLAG_LIMIT_DAMPING) != 0u);
    let strength = p.fric * max(-fn_total, 0.0);
    let capped_len = length(capped);
    let slip = capped_len > strength;
    var fs = trial;
    if (slip && capped_len > 0.0) {
        fs = capped * (strength / capped_len);
    }
    let fs_d = select(damp, vec3<f32>(0.0), slip);
    let c_t = compliance(k_t);
    if ((p.flags & PAIR_FLAG_NO_ENERGY_TRACKING) != 0u) {
        return LinearShear(fs, k_t, c_t, fs_d, slip, 0.0);
    }
    let elastic = (fs_old - fs) * c_t;
    let slip_increment = increment - elastic;
    let slip_work = -0.5 * dot(fs_old + fs, slip_increment);
    return LinearShear(fs, k_t, c_t, fs_d, slip, slip_work);
}
