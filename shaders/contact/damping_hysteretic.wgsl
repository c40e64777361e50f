// Hysteretic normal dashpot, spec hysteretic-pfc.txt eqs (5)–(6), and the impact speed δ̇⁻
// captured when a contact becomes active (also used by hooke's viscous option).
// Twin of src/contact/damping_hysteretic.rs.

// δ̇⁻ = normal approach speed at activation: from the current geometry on the step the contact
// is new (established = 0), afterwards the stored value. Never negative.
fn impact_speed(g: ContactGeometry, h: HistoryGpu) -> f32 {
    if (h.established == 0.0) {
        return max(-g.vel_normal, 0.0);
    }
    return h.impact_velocity;
}

// The dimensionless factor of eq (6), χ = factor · h_n / δ̇⁻, for dashpot mode M_d; e_n is
// `damping_restitution` (dp_en, or with limit_damping the value that keeps the rebound at dp_en).
fn hysteretic_factor(p: PairParamsGpu) -> f32 {
    return factor_of(p.dp_mode, p.damping_restitution, p.dp_enmin);
}

// The factor of dashpot mode `mode` at e_n (mode 1's floor e_min).
fn factor_of(mode: u32, e_n: f32, e_min: f32) -> f32 {
    if (mode == 1u) {
        let e = max(e_n, e_min);
        return 0.75 * (1.0 - e * e);
    } else if (mode == 2u) {
        let e = e_n;
        return 0.75 * (1.0 - e * e) * exp(2.0 * (1.0 - e));
    }
    let e = max(e_n, 1e-3);
    return (1.0 - e * e) / e;
}

// Eq (5): F_n^d = χ δ^α δ̇ (tension positive); no shear dashpot; no damping when δ̇⁻ = 0.
// The coefficient χ δ^α is limited to m_c/Δt (explicit stability; eq (6) is singular as δ̇⁻ → 0).
// With `limit_damping` the dashpot is cut where the total normal force would pull.
fn hysteretic_dashpot(p: PairParamsGpu, g: ContactGeometry, normal: NormalForce, v_impact: f32, dt: f32) -> DashpotForce {
    var chi = 0.0;
    if (v_impact > 0.0) {
        chi = hysteretic_factor(p) * normal.h_n / v_impact;
    }
    let coefficient = select(chi * pow(normal.overlap, p.hz_alpha), min(chi * pow(normal.overlap, p.hz_alpha), g.m_c / dt), dt > 0.0);
    let fn_raw = select(0.0, coefficient * g.vel_normal, normal.overlap > 0.0);
    // `limit_damping`: the total normal force F_n^h + F_n^d is never tension
    let fn_d = select(fn_raw, min(fn_raw, -normal.fn_h), (p.flags & PAIR_FLAG_LIMIT_DAMPING) != 0u);
    return DashpotForce(fn_d, vec3<f32>(0.0));
}
