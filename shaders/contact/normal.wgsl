// Hertz normal force, spec hertz-pfc.txt eqs (4)–(6) and the activity rule.
// Twin of src/contact/normal.rs.

// Normal part of a Hertz contact.
struct NormalForce {
    fn_h: f32,      // F_n^h in the spec's sign (tension positive), eq (4)
    h_n: f32,       // eq (5)
    k_n: f32,       // normal tangent stiffness α_h h_n δ^(α_h−1), eq (13)
    overlap: f32,   // δ_n = max(−g_c, 0)
}

// (|F_n^h|, its strain energy |F_n^h| δ/(α_h+1)) for normal_step_work.
fn spring(normal: NormalForce, alpha: f32) -> vec2<f32> {
    return vec2<f32>(-normal.fn_h, -normal.fn_h * normal.overlap / (alpha + 1.0));
}

// Activity rule: active iff the surface gap g_s = g_c − g_r ≤ 0.
fn contact_active(p: PairParamsGpu, g: ContactGeometry) -> bool {
    return g.gap - p.rgap <= 0.0;
}

// h_n = 2 G √(2 R̄) / (3 (1 − ν)), eq (5).
fn hertz_coefficient(p: PairParamsGpu, r_bar: f32) -> f32 {
    return 2.0 * p.hz_shear * sqrt(2.0 * r_bar) / (3.0 * (1.0 - p.hz_poiss));
}

// Eq (4) with the tangent stiffness of eq (13).
fn hertz_normal(p: PairParamsGpu, g: ContactGeometry) -> NormalForce {
    let h_n = hertz_coefficient(p, g.r_bar);
    let overlap = max(-g.gap, 0.0);
    let fn_h = select(0.0, -h_n * pow(overlap, p.hz_alpha), overlap > 0.0);
    let k_n = select(0.0, p.hz_alpha * h_n * pow(overlap, p.hz_alpha - 1.0), overlap > 0.0);
    return NormalForce(fn_h, h_n, k_n, overlap);
}
