// Hertz shear force with history, spec hertz-pfc.txt eqs (7)–(12) and the slip work of eq (16).
// Twin of src/contact/tangential.rs.

// Shear part of a Hertz contact.
struct ShearForce {
    fs: vec3<f32>,      // Hertz shear force F_s^h on j after the Coulomb cap, eq (11)
    k_s: f32,           // tangent shear stiffness, eq (8)
    compliance: f32,    // its compliance 1/k_s (compliance), which the history keeps
    slip: bool,         // slip state, eq (12)
    slip_work: f32,     // energy dissipated by slip this step (≥ 0), eq (16)
    stiffness_work: f32, // energy the spring lost to its stiffness change this step
}

// k_s = 2(1−ν)/(2−ν) α_h h_n^(1/α_h) (F_n^h)^((α_h−1)/α_h), eq (8); fn_mag = |F_n^h|.
fn shear_stiffness(p: PairParamsGpu, h_n: f32, fn_mag: f32) -> f32 {
    if (fn_mag <= 0.0) {
        return 0.0;
    }
    return 2.0 * (1.0 - p.hz_poiss) / (2.0 - p.hz_poiss) * p.hz_alpha * pow(h_n, 1.0 / p.hz_alpha) * pow(fn_mag, (p.hz_alpha - 1.0) / p.hz_alpha);
}

// Turn the stored shear force into the current contact plane, keeping its magnitude (the
// scale from squared lengths: one square root).
fn rotate_history(fs_old: vec3<f32>, normal: vec3<f32>) -> vec3<f32> {
    let projected = fs_old - normal * dot(fs_old, normal);
    let len2_new = dot(projected, projected);
    if (len2_new > 0.0) {
        return projected * sqrt(dot(fs_old, fs_old) / len2_new);
    }
    return vec3<f32>(0.0);
}

// Eqs (7)–(12) and (16), from the shear force and |F_n^h| of the previous step in h.
fn hertz_shear(p: PairParamsGpu, g: ContactGeometry, normal: NormalForce, h: HistoryGpu, dt: f32) -> ShearForce {
    let fn_mag = -normal.fn_h;
    let k_s = shear_stiffness(p, normal.h_n, fn_mag);
    let fs_rotated = rotate_history(h.shear, g.normal);
    // eq (9): scale the old shear force down with the stiffness on normal unloading (M_s = 1)
    let fn_old = h.normal_force;
    let k_s_old = shear_stiffness(p, normal.h_n, fn_old);
    let scale = select(1.0, k_s / k_s_old, p.hz_mode == 1u && fn_mag < fn_old && k_s_old > 0.0);
    let fs_old = fs_rotated * scale;
    // eq (7): trial force; the spring on j resists j's shear displacement
    let increment = g.vel_shear * dt;
    let trial = fs_old - increment * k_s;
    // eqs (10)–(12): Coulomb cap and slip state
    let strength = p.fric * fn_mag;
    let trial_len = length(trial);
    let slip = trial_len > strength;
    let fs = select(trial, trial * (strength / trial_len), slip && trial_len > 0.0);
    let c_s = compliance(k_s);
    if ((p.flags & PAIR_FLAG_NO_ENERGY_TRACKING) != 0u) {
        return ShearForce(fs, k_s, c_s, slip, 0.0, 0.0);
    }
    // eq (16): slip part of the increment = total − elastic part
    let elastic = (fs_old - fs) * c_s;
    let slip_increment = increment - elastic;
    let slip_work = -0.5 * dot(fs_old + fs, slip_increment);
    let stiffness = stiffness_work(h.shear, h.shear_compliance, fs_old, c_s);
    return ShearForce(fs, k_s, c_s, slip, slip_work, stiffness);
}

// What a shear spring still loaded when its contact ends gives up in that step: its stored
// ½|F₀|²/k₀, less the work it does in the half step it still acts for, −½ F₀·v_s Δt (F₀
// turned into the current plane). Booked as slip.
fn released_spring_work(g: ContactGeometry, h: HistoryGpu, dt: f32) -> f32 {
    return 0.5 * dot(h.shear, h.shear) * h.shear_compliance - 0.5 * dot(rotate_history(h.shear, g.normal), g.vel_shear) * dt;
}
