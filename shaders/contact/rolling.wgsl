// Rolling resistance, spec hertz-mindlin-musen.txt ("Rolling friction"): a torque
// M_ro = −μ_r |F_n| r ω/|ω| on each body from its OWN spin ω, usable by any preset.
// Twin of src/contact/rolling.rs.

// Rolling-resistance torques of one contact and the energy they dissipate this step.
struct RollingTorque {
    torque_i: vec3<f32>,    // torque on i about its centre
    torque_j: vec3<f32>,    // torque on j about its centre (zero for a wall)
    work: f32,              // ½ μ_r (|F_n| + |F_n|₀)(r_i|ω_i| + r_j|ω_j|) Δt ≥ 0 (trapezoid)
}

// −μ_r |F_n| r ω/|ω| for one body; zero when ω = 0.
fn rolling_torque(mu_r: f32, fn_mag: f32, r: f32, w: vec3<f32>) -> vec3<f32> {
    let w_len = length(w);
    if (w_len > 0.0) {
        return w * (-mu_r * fn_mag * r / w_len);
    }
    return vec3<f32>(0.0);
}

// Both torques with μ_r = rolling_fric; fn_mag = |F_n|, fn_previous = |F_n| of the previous
// step; lever = the arm (zero for a wall). Without rolling friction (μ_r = 0, the default)
// nothing is computed.
fn rolling_resistance(p: PairParamsGpu, g: ContactGeometry, fn_mag: f32, fn_previous: f32, dt: f32) -> RollingTorque {
    if (p.rolling_fric == 0.0) {
        return RollingTorque(vec3<f32>(0.0), vec3<f32>(0.0), 0.0);
    }
    let torque_i = rolling_torque(p.rolling_fric, fn_mag, g.arm_i, g.spin_i);
    let torque_j = rolling_torque(p.rolling_fric, fn_mag, g.arm_j, g.spin_j);
    let work = 0.5 * (previous_rolling_power(p, g, fn_previous) - (dot(torque_i, g.spin_i) + dot(torque_j, g.spin_j))) * dt;
    return RollingTorque(torque_i, torque_j, work);
}

// −M(n−1)·ω: the previous step's rolling torques (μ_r |F_n|₀ r, against each body's spin at
// the previous force pass) at this step's spins and levers.
fn previous_rolling_power(p: PairParamsGpu, g: ContactGeometry, fn_previous: f32) -> f32 {
    return p.rolling_fric * fn_previous * (g.arm_i * along(g.previous_spin_i, g.spin_i) + g.arm_j * along(g.previous_spin_j, g.spin_j));
}

// The component of w along the direction of `previous` (zero when `previous` is zero).
fn along(previous: vec3<f32>, w: vec3<f32>) -> f32 {
    let len = length(previous);
    if (len > 0.0) {
        return dot(previous, w) / len;
    }
    return 0.0;
}
