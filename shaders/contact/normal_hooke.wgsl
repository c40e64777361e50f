// Linear (Hooke) normal force of spec hooke-aspherix.txt. Twin of src/contact/normal_hooke.rs.

const HOOKE_PI: f32 = 3.14159265358979;

// Normal part of a Hooke contact (tension positive).
struct HookeNormal {
    fn_total: f32,  // F_n = −k_n δ + γ_n ġ, capped at 0 with limitForce
    fn_spring: f32, // −k_n δ
    fn_d: f32,      // dashpot part actually applied
    k_n: f32,
    gamma_n: f32,
    overlap: f32,
}

// k_n: elasticStiffness, or from characteristicVelocity (r* = R̄/2, m* = m_c, Y* = E*).
fn hooke_stiffness(p: PairParamsGpu, g: ContactGeometry) -> f32 {
    let use_v0 = ((p.flags & PAIR_FLAG_USE_CHARACTERISTIC_VELOCITY) != 0u && p.characteristic_velocity > 0.0) || p.elastic_stiffness <= 0.0;
    if (!use_v0) {
        return p.elastic_stiffness;
    }
    let r_star = 0.5 * g.r_bar;
    let y_star = e_star(p);
    let v0 = p.characteristic_velocity;
    let sqrt_r = sqrt(r_star);
    return 16.0 / 15.0 * sqrt_r * y_star * pow(15.0 * g.m_c * v0 * v0 / (16.0 * sqrt_r * y_star), 0.2);
}

// γ = √(4 m* k / (1 + (π/ln e)²)): 0 for e ≥ 1, critical 2√(m* k) for e ≤ 0.
fn restitution_damping(m_c: f32, k: f32, e: f32) -> f32 {
    if (e >= 1.0) {
        return 0.0;
    }
    if (e <= 0.0) {
        return 2.0 * sqrt(m_c * k);
    }
    let q = HOOKE_PI / log(e);
    return sqrt(4.0 * m_c * k / (1.0 + q * q));
}

// Restitution with viscous (Legendre et al.): e = e_max exp(−c_S/St), St = m* v / (6π μ_f r*²).
fn hooke_restitution(p: PairParamsGpu, g: ContactGeometry, v_impact: f32) -> f32 {
    if ((p.flags & PAIR_FLAG_VISCOUS) == 0u) {
        return p.damping_restitution;
    }
    let r_star = 0.5 * g.r_bar;
    let stokes = g.m_c * v_impact / (6.0 * HOOKE_PI * p.fluid_viscosity * r_star * r_star);
    if (stokes > 0.0) {
        return p.maximum_restitution * exp(-p.critical_stokes / stokes);
    }
    return 0.0;
}

// F_n = −k_n δ + γ_n ġ (tension positive); limitForce or limit_damping: F_n ≤ 0.
fn hooke_normal(p: PairParamsGpu, g: ContactGeometry, v_impact: f32) -> HookeNormal {
    let k_n = hooke_stiffness(p, g);
    let e = hooke_restitution(p, g, v_impact);
    let gamma_n = restitution_damping(g.m_c, k_n, e);
    let overlap = max(-g.gap, 0.0);
    let fn_spring = -k_n * overlap;
    let fn_free = fn_spring + gamma_n * g.vel_normal;
    let fn_total = select(fn_free, min(fn_free, 0.0), (p.flags & (PAIR_FLAG_LIMIT_FORCE | PAIR_FLAG_LIMIT_DAMPING)) != 0u);
    let fn_d = fn_total - fn_spring;
    return HookeNormal(fn_total, fn_spring, fn_d, k_n, gamma_n, overlap);
}
