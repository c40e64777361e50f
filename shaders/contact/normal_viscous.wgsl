// Viscoelastic Hertz normal force of hertz-woo.rst (Antypov & Elliott 2011).
// Twin of src/contact/normal_viscous.rs: fn_e = −k_n0 δ^{3/2}, fn_d = α(ε)√(m* k_n0) δ^{1/4} ġ,
// k_n0 = 4/3 E*√R*; noAttraction caps fn_e + fn_d ≤ 0.

// Normal part of a hertz_viscous contact (spec sign: tension positive).
struct ViscousNormal {
    fn_e: f32,      // elastic force −k_n0 δ^{3/2} (≤ 0)
    fn_d: f32,      // viscous force, capped at −fn_e with noAttraction
    k_n0: f32,      // 4/3 E* √R*
    overlap: f32,   // δ = max(−g_c, 0)
    strain: f32,    // elastic energy 2/5 k_n0 δ^{5/2}
}

// α(ε) = −√5 ln ε/√(ln²ε + π²) (≥ 0); 0 for ε ≥ 1; ε is floored at 1e-20.
fn antypov_alpha(e: f32) -> f32 {
    let l = log(max(e, 1e-20));
    return select(-2.236067977 * l / sqrt(l * l + 9.869604401), 0.0, e >= 1.0);
}

// k_n0 = 4/3 E* √R*, R* = R̄/2: the Hertz law F = k_n0 δ^{3/2} of hertz_viscous and hertz_mindlin.
fn hertz_k_n0(p: PairParamsGpu, r_bar: f32) -> f32 {
    return 4.0 / 3.0 * e_star(p) * sqrt(0.5 * r_bar);
}

fn viscous_normal(p: PairParamsGpu, g: ContactGeometry) -> ViscousNormal {
    let overlap = max(-g.gap, 0.0);
    let k_n0 = hertz_k_n0(p, g.r_bar);
    let fn_e = select(0.0, -k_n0 * overlap * sqrt(overlap), overlap > 0.0);
    let visc = select(0.0, antypov_alpha(p.damping_restitution) * sqrt(g.m_c * k_n0) * sqrt(sqrt(overlap)), overlap > 0.0);
    let fn_raw = visc * g.vel_normal;
    let fn_d = select(fn_raw, min(fn_raw, -fn_e), (p.flags & (PAIR_FLAG_NO_ATTRACTION | PAIR_FLAG_LIMIT_DAMPING)) != 0u);
    let strain = 0.4 * overlap * -fn_e;
    return ViscousNormal(fn_e, fn_d, k_n0, overlap, strain);
}
