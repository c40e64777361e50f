// Hertz normal force with Tsuji damping, spec hertz-mindlin-musen.txt ("Normal force").
// Twin of src/contact/normal_mindlin.rs (see there for the equivalence with Antypov's α(ε)).

// Tsuji's fit factor of the musen spec.
const TSUJI_FACTOR: f32 = 1.8257;

// Normal part of a hertz_mindlin contact (spec sign: tension positive).
struct MindlinNormal {
    fn_e: f32,      // elastic force −2/3 ξ k_n (≤ 0)
    fn_d: f32,      // damping force η_n ġ, η_n = −1.8257 α √(k_n M*) ≥ 0; limit_damping: ≤ −fn_e
    eta_n: f32,     // η_n = −1.8257 α √(k_n M*) ≥ 0 (mindlin_shear_damping scales it)
    k_n: f32,       // k_n = 2E*√(ξR*)
    overlap: f32,   // ξ = max(−g_c, 0)
    strain: f32,    // elastic energy 2/5 (2/3 ξ k_n) ξ
}

// α = ln e/√(π² + ln² e) (≤ 0); 0 for e ≥ 1; e is floored at 1e-20.
fn tsuji_alpha(e: f32) -> f32 {
    let l = log(max(e, 1e-20));
    return select(l / sqrt(9.869604401 + l * l), 0.0, e >= 1.0);
}

// alpha = Tsuji's α of the pair (PairParamsGpu.tsuji_alpha, formed once per pair on the host).
fn mindlin_normal(p: PairParamsGpu, g: ContactGeometry, alpha: f32) -> MindlinNormal {
    let r_star = 0.5 * g.r_bar;
    let overlap = max(-g.gap, 0.0);
    let k_n = select(0.0, 2.0 * (p.hz_shear / (1.0 - p.hz_poiss)) * sqrt(overlap * r_star), overlap > 0.0);
    let fn_e = -2.0 / 3.0 * overlap * k_n;
    let eta_n = -TSUJI_FACTOR * alpha * sqrt(k_n * g.m_c);
    let fn_raw = eta_n * g.vel_normal;
    let fn_d = select(fn_raw, min(fn_raw, -fn_e), (p.flags & PAIR_FLAG_LIMIT_DAMPING) != 0u);
    let strain = 0.4 * overlap * -fn_e;
    return MindlinNormal(fn_e, fn_d, eta_n, k_n, overlap, strain);
}
