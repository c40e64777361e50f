// Adhesion parts: JKR, DMT, SJKR/SJKR2 and the Willett capillary bridge, as stateless
// functions of a contact's geometry (docs/contact-models.md, "Adhesion"). Twin of
// src/contact/adhesion.rs (same functions, same order; `max_reach_gap` is host-only, it sizes
// the neighbour lists, and has no twin here; `adhesion_cbrt` stands in for f64::cbrt).
//
// Every part gives the adhesive share of the normal force, F_a (spec sign: tension positive),
// and its potential U_a(g) = ∫₀^g F_a ds over the gap g (surface energy, zero at touch). For
// JKR, F_a is the JKR force less the Hertz force at the same overlap.
// Radii: R* = R̄/2 (ContactGeometry.r_bar; a wall: R* = R_i).

// History.established of a bonded contact whose surfaces are apart (a capillary bridge
// stretched beyond touch); an established contact in touch is 1, a new one 0.
const BONDED_APART: f32 = 2.0;
const ADHESION_PI: f32 = 3.14159265358979;

// The adhesive part of one contact step.
struct Adhesive {
    force: f32,     // F_a, the adhesive share of the normal force (tension positive)
    energy: f32,    // U_a = ∫₀^g F_a ds, the surface energy (zero at touch)
}

// x^(1/3) for x ≥ 0 (0 for x ≤ 0): pow and one Newton step, to about an ulp.
fn adhesion_cbrt(x: f32) -> f32 {
    if (x <= 0.0) {
        return 0.0;
    }
    let y = pow(x, 1.0 / 3.0);
    return y - (y * y * y - x) / (3.0 * y * y);
}

// ---------------------------------------------------------------- JKR

// β = √(πγ/E*) of the JKR relations δ = a²/R* − 2β√a and F = E*(4a³/(3R*) − 4β a^{3/2}).
fn jkr_beta(gamma: f32, e_star: f32) -> f32 {
    return sqrt(ADHESION_PI * gamma / e_star);
}

// Newton steps of jkr_contact_radius at most.
const JKR_NEWTON_STEPS: u32 = 60u;

// The JKR contact radius a at overlap δ (δ < 0: held apart), the root with a ≥ a_c of
// δ = a²/R* − 2β√a, by Newton's method on x = √a from above (monotone); a_c below the break
// overlap; zero for β = 0 and δ ≤ 0.
fn jkr_contact_radius(r_star: f32, beta: f32, overlap: f32) -> f32 {
    let x_c = adhesion_cbrt(0.5 * beta * r_star);
    // an upper bound of the root: x⁴/R* = δ + 2βx ≤ 2 max(δ, 2βx)
    var x = max(sqrt(sqrt(2.0 * r_star * max(overlap, 0.0))), adhesion_cbrt(4.0 * beta * r_star));
    if (x <= 0.0) {
        return 0.0;
    }
    for (var k = 0u; k < JKR_NEWTON_STEPS; k = k + 1u) {
        let x3 = x * x * x;
        let h = x3 * x / r_star - 2.0 * beta * x - overlap;
        let slope = 4.0 * x3 / r_star - 2.0 * beta;
        if (h <= 0.0 || slope <= 0.0) {
            break;
        }
        let next = x - h / slope;
        if (next >= x) {
            break;
        }
        x = next;
    }
    x = max(x, x_c);
    return x * x;
}

// The repulsive JKR normal force E*(4a³/(3R*) − 4β a^{3/2}) (compression positive).
fn jkr_force(e_star: f32, r_star: f32, beta: f32, a: f32) -> f32 {
    let a32 = a * sqrt(a);
    return e_star * (4.0 * a * a * a / (3.0 * r_star) - 4.0 * beta * a32);
}

// The work ∫F dδ along the JKR branch as a function of a:
// E*(8a⁵/(15R*²) − 8β a^{7/2}/(3R*) + 2β²a²).
fn jkr_energy(e_star: f32, r_star: f32, beta: f32, a: f32) -> f32 {
    let a2 = a * a;
    return e_star * (8.0 * a2 * a2 * a / (15.0 * r_star * r_star) - 8.0 * beta * a2 * a * sqrt(a) / (3.0 * r_star) + 2.0 * beta * beta * a2);
}

// The JKR pull-off force 3πγR*.
fn jkr_pulloff_force(gamma: f32, r_star: f32) -> f32 {
    return 3.0 * ADHESION_PI * gamma * r_star;
}

// The gap at which a JKR contact breaks, −δ_c at a_c = (βR*/2)^{2/3}.
fn jkr_break_gap(r_star: f32, beta: f32) -> f32 {
    let x_c = adhesion_cbrt(0.5 * beta * r_star);
    let a_c = x_c * x_c;
    return -(a_c * a_c / r_star - 2.0 * beta * x_c);
}

// jkr_adhesive's two results: the adhesive part and the contact radius a.
struct JkrPart {
    adhesive: Adhesive,
    radius: f32,
}

// The adhesive part of a JKR contact at overlap δ = −g: F_a = F_Hertz(δ⁺) − F_JKR(a(δ)),
// U_a = U_JKR(a(δ)) − U_JKR(a(0)) − U_Hertz(δ⁺); also the contact radius a.
fn jkr_adhesive(e_star: f32, r_star: f32, gamma: f32, overlap: f32) -> JkrPart {
    let beta = jkr_beta(gamma, e_star);
    let a = jkr_contact_radius(r_star, beta, overlap);
    let x0 = adhesion_cbrt(2.0 * beta * r_star);
    let a0 = x0 * x0;
    let d = max(overlap, 0.0);
    let hertz = 4.0 / 3.0 * e_star * sqrt(r_star) * d * sqrt(d);
    let force = hertz - jkr_force(e_star, r_star, beta, a);
    let energy = jkr_energy(e_star, r_star, beta, a) - jkr_energy(e_star, r_star, beta, a0) - 0.4 * hertz * d;
    return JkrPart(Adhesive(force, energy), a);
}

// ---------------------------------------------------------------- DMT

// The DMT pull-off force 4πγR*, constant while the surfaces touch.
fn dmt_pulloff_force(gamma: f32, r_star: f32) -> f32 {
    return 4.0 * ADHESION_PI * gamma * r_star;
}

// ---------------------------------------------------------------- SJKR, SJKR2

// The radii (R_i, R_j) of a contact's bodies, R = arm + δ/2; a wall's R_j is 0.
fn contact_radii(g: ContactGeometry) -> vec2<f32> {
    let half = 0.5 * max(-g.gap, 0.0);
    return vec2<f32>(g.arm_i + half, select(g.arm_j + half, 0.0, g.arm_j == 0.0));
}

// The SJKR contact area π a² of the lens where the spheres R_i, R_j (or a sphere and a plane,
// R_j = 0) intersect at overlap δ.
fn lens_area(r_i: f32, r_j: f32, overlap: f32) -> f32 {
    if (overlap <= 0.0) {
        return 0.0;
    }
    if (r_j == 0.0) {
        return ADHESION_PI * overlap * (2.0 * r_i - overlap);
    }
    let d = r_i + r_j - overlap;
    return ADHESION_PI * overlap * (2.0 * r_i - overlap) * (2.0 * r_j - overlap) * (2.0 * (r_i + r_j) - overlap) / (4.0 * d * d);
}

// ∫₀^δ A dδ' of the lens area by 3-point Gauss–Legendre.
fn lens_area_integral(r_i: f32, r_j: f32, overlap: f32) -> f32 {
    if (overlap <= 0.0) {
        return 0.0;
    }
    let h = 0.5 * overlap;
    let x = GAUSS3 * h;
    return h * (5.0 * lens_area(r_i, r_j, h - x) + 8.0 * lens_area(r_i, r_j, h) + 5.0 * lens_area(r_i, r_j, h + x)) / 9.0;
}

// √(3/5), the outer node of 3-point Gauss–Legendre on [−1, 1].
const GAUSS3: f32 = 0.7745966692414834;

// The SJKR2 area 2πδR*.
fn sjkr2_area(r_star: f32, overlap: f32) -> f32 {
    return 2.0 * ADHESION_PI * max(overlap, 0.0) * r_star;
}

// ---------------------------------------------------------------- capillary bridge

// Willett's coefficients of 1/(1 + 1.05 ŝ + 2.5 ŝ²).
const WILLETT_B: f32 = 1.05;
const WILLETT_C: f32 = 2.5;

// The bridge force at contact, 2πRγ cosθ, R = R̄.
fn capillary_contact_force(p: PairParamsGpu, r_bar: f32) -> f32 {
    return 2.0 * ADHESION_PI * r_bar * p.surface_tension * cos(p.contact_angle);
}

// The separation at which a bridge ruptures, (1 + θ/2) V^{1/3}.
fn capillary_rupture_gap(p: PairParamsGpu) -> f32 {
    return (1.0 + 0.5 * p.contact_angle) * adhesion_cbrt(p.liquid_volume);
}

// Willett's bridge at gap g: F = F₀/(1 + 1.05ŝ + 2.5ŝ²), ŝ = g√(R/V) (F₀ at g ≤ 0), and
// U = ∫₀^g F (closed form with atan).
fn capillary_adhesive(p: PairParamsGpu, r_bar: f32, gap: f32) -> Adhesive {
    let f0 = capillary_contact_force(p, r_bar);
    if (gap <= 0.0) {
        return Adhesive(f0, f0 * gap);
    }
    let k = sqrt(r_bar / p.liquid_volume);
    let s = gap * k;
    let force = f0 / (1.0 + (WILLETT_B + WILLETT_C * s) * s);
    let root_d = sqrt(4.0 * WILLETT_C - WILLETT_B * WILLETT_B);
    let energy = f0 / k * 2.0 / root_d * (atan((2.0 * WILLETT_C * s + WILLETT_B) / root_d) - atan(WILLETT_B / root_d));
    return Adhesive(force, energy);
}

// ---------------------------------------------------------------- the pair's adhesion

// The gap up to which a bond of the pair holds once formed (JKR: the break gap at R* = R̄/2;
// capillary: the rupture distance); 0 for the others.
fn tensile_range(p: PairParamsGpu, r_bar: f32) -> f32 {
    switch p.adhesion {
        case ADHESION_JKR: {
            return jkr_break_gap(0.5 * r_bar, jkr_beta(p.surface_energy, e_star(p)));
        }
        case ADHESION_CAPILLARY: {
            return capillary_rupture_gap(p);
        }
        default: {
            return 0.0;
        }
    }
}

// Whether a contact of an adhesive pair acts in this step: its surfaces touch (the dry rule),
// or it was bonded in the previous step (h.established ≠ 0) and the gap is below the pair's
// tensile range.
fn bonded_active(p: PairParamsGpu, g: ContactGeometry, h: HistoryGpu) -> bool {
    return g.gap - p.rgap <= 0.0 || (h.established != 0.0 && g.gap < tensile_range(p, g.r_bar));
}

// The adhesive part of a bonded contact at gap g (zero without adhesion, and for DMT and SJKR
// apart).
fn adhesive_part(p: PairParamsGpu, g: ContactGeometry, gap: f32) -> Adhesive {
    let r_star = 0.5 * g.r_bar;
    let overlap = max(-gap, 0.0);
    switch p.adhesion {
        case ADHESION_JKR: {
            return jkr_adhesive(e_star(p), r_star, p.surface_energy, -gap).adhesive;
        }
        case ADHESION_DMT: {
            if (gap > 0.0) {
                return Adhesive(0.0, 0.0);
            }
            let force = dmt_pulloff_force(p.surface_energy, r_star);
            return Adhesive(force, force * gap);
        }
        case ADHESION_SJKR: {
            let r = contact_radii(g);
            return Adhesive(p.cohesion_energy_density * lens_area(r.x, r.y, overlap), -p.cohesion_energy_density * lens_area_integral(r.x, r.y, overlap));
        }
        case ADHESION_SJKR2: {
            return Adhesive(p.cohesion_energy_density * sjkr2_area(r_star, overlap), -p.cohesion_energy_density * ADHESION_PI * r_star * overlap * overlap);
        }
        case ADHESION_CAPILLARY: {
            return capillary_adhesive(p, g.r_bar, gap);
        }
        default: {
            return Adhesive(0.0, 0.0);
        }
    }
}
