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

// E* = G/(1−ν) of the pair (twin of PairParams::e_star, which the host forms once per pair;
// defined beside tsuji_alpha, as in normal_mindlin.rs).
fn e_star(p: PairParamsGpu) -> f32 {
    return p.hz_shear / (1.0 - p.hz_poiss);
}

// The Hertz spring at overlap ξ (R* = r_bar/2): (k_n = 2E*√(ξR*), F = 2/3 ξ k_n, its energy
// 2/5 F ξ); zeros for ξ ≤ 0. Also the previous step's spring of the stepping work.
fn mindlin_spring(p: PairParamsGpu, r_bar: f32, overlap: f32) -> vec3<f32> {
    if (overlap <= 0.0) {
        return vec3<f32>(0.0);
    }
    let k_n = 2.0 * e_star(p) * sqrt(overlap * (0.5 * r_bar));
    let force = 2.0 / 3.0 * overlap * k_n;
    return vec3<f32>(k_n, force, 0.4 * overlap * force);
}

// alpha = Tsuji's α of the pair (PairParamsGpu.tsuji_alpha, formed once per pair on the host).
fn mindlin_normal(p: PairParamsGpu, g: ContactGeometry, alpha: f32) -> MindlinNormal {
    let overlap = max(-g.gap, 0.0);
    let spring = mindlin_spring(p, g.r_bar, overlap);
    let k_n = spring.x;
    let fn_e = -spring.y;
    let eta_n = -TSUJI_FACTOR * alpha * sqrt(k_n * g.m_c);
    let fn_raw = eta_n * g.vel_normal;
    let fn_d = select(fn_raw, min(fn_raw, -fn_e), (p.flags & PAIR_FLAG_LIMIT_DAMPING) != 0u);
    return MindlinNormal(fn_e, fn_d, eta_n, k_n, overlap, spring.z);
}
