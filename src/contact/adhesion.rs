//! Adhesion parts: JKR, DMT, SJKR/SJKR2 and the Willett capillary bridge, as stateless
//! functions of a contact's geometry (docs/contact-models.md, "Adhesion"). Twin of
//! `shaders/contact/adhesion.wgsl` (same functions, same order).
//!
//! Every part gives the adhesive share of the normal force, F_a (spec sign: tension positive,
//! so an attraction is > 0), and its potential U_a(g) = ∫₀^g F_a ds over the gap g (surface
//! energy, zero at the touching point g = 0, where every bond forms). For JKR, F_a is the
//! JKR force less the Hertz force at the same overlap, so that the strain energy keeps its
//! Hertz meaning and U_a is the whole difference the adhesion makes.
//!
//! Radii: R* = R̄/2 (`ContactGeometry::r_bar` = 2 R_i R_j/(R_i + R_j); a wall: R* = R_i).

use std::f64::consts::PI;

use super::geometry::ContactGeometry;
use super::history::History;
use super::params::{Adhesion, PairParams};

/// `History::established` of a bonded contact whose surfaces are apart (a capillary bridge
/// stretched beyond touch): the bond holds, the dry model's history is empty. An established
/// contact in touch is 1, a new one 0.
pub const BONDED_APART: f32 = 2.0;

/// The adhesive part of one contact step.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Adhesive {
    /// F_a, the adhesive share of the normal force (tension positive).
    pub force: f64,
    /// U_a = ∫₀^g F_a ds, the surface energy (zero at touch).
    pub energy: f64,
}

// ---------------------------------------------------------------- JKR

/// β = √(πγ/E*) of the JKR relations δ = a²/R* − 2β√a and F = E*(4a³/(3R*) − 4β a^{3/2}).
pub fn jkr_beta(gamma: f64, e_star: f64) -> f64 {
    (PI * gamma / e_star).sqrt()
}

/// The JKR contact radius a at overlap δ (δ < 0: held apart), the root with a ≥ a_c of
/// δ = a²/R* − 2β√a (Johnson, Kendall & Roberts 1971, with the work of adhesion w = 2γ).
/// Newton's method on x = √a from above, where the quartic x⁴/R* − 2βx − δ is convex and
/// increasing: the iterates fall monotonically to the root, quadratically except at the
/// break point itself (a double root). For δ below the break overlap (no root) it returns
/// a_c, the radius at the break. Zero for β = 0 and δ ≤ 0.
pub fn jkr_contact_radius(r_star: f64, beta: f64, overlap: f64) -> f64 {
    let x_c = (0.5 * beta * r_star).cbrt();
    // an upper bound of the root: x⁴/R* = δ + 2βx ≤ 2 max(δ, 2βx)
    let mut x = (2.0 * r_star * overlap.max(0.0)).sqrt().sqrt().max((4.0 * beta * r_star).cbrt());
    if x <= 0.0 {
        return 0.0;
    }
    for _ in 0..JKR_NEWTON_STEPS {
        let x3 = x * x * x;
        let h = x3 * x / r_star - 2.0 * beta * x - overlap;
        let slope = 4.0 * x3 / r_star - 2.0 * beta;
        if h <= 0.0 || slope <= 0.0 {
            break;
        }
        let next = x - h / slope;
        if next >= x {
            break;
        }
        x = next;
    }
    let x = x.max(x_c);
    x * x
}

/// Newton steps of `jkr_contact_radius` at most (the iterates stop when they stop falling;
/// the linear tail at the break point halves the error per step).
pub const JKR_NEWTON_STEPS: u32 = 60;

/// The repulsive JKR normal force E*(4a³/(3R*) − 4β a^{3/2}) (compression positive) at
/// contact radius a.
pub fn jkr_force(e_star: f64, r_star: f64, beta: f64, a: f64) -> f64 {
    let a32 = a * a.sqrt();
    e_star * (4.0 * a * a * a / (3.0 * r_star) - 4.0 * beta * a32)
}

/// The work ∫F dδ the JKR force takes along its branch, as a function of a:
/// E*(8a⁵/(15R*²) − 8β a^{7/2}/(3R*) + 2β²a²) (its derivative in a is F dδ/da).
pub fn jkr_energy(e_star: f64, r_star: f64, beta: f64, a: f64) -> f64 {
    let a2 = a * a;
    e_star * (8.0 * a2 * a2 * a / (15.0 * r_star * r_star) - 8.0 * beta * a2 * a * a.sqrt() / (3.0 * r_star) + 2.0 * beta * beta * a2)
}

/// The JKR pull-off force 3πγR* (the largest tension; Johnson's 3/2 π w R* with w = 2γ).
pub fn jkr_pulloff_force(gamma: f64, r_star: f64) -> f64 {
    3.0 * PI * gamma * r_star
}

/// The gap at which a JKR contact breaks: −δ_c with δ_c = a_c²/R* − 2β√a_c the least
/// overlap of the branch, at a_c = (βR*/2)^{2/3} (dδ/da = 0), where the force is 5/9 of the
/// pull-off force: −δ_c = (3/2) β (βR*/2)^{1/3}, Johnson's (3/4)(π²w²R*/E*²)^{1/3} with w = 2γ.
pub fn jkr_break_gap(r_star: f64, beta: f64) -> f64 {
    let x_c = (0.5 * beta * r_star).cbrt();
    let a_c = x_c * x_c;
    -(a_c * a_c / r_star - 2.0 * beta * x_c)
}

/// The adhesive part of a JKR contact at overlap δ = −g: F_a = F_Hertz(δ⁺) − F_JKR(a(δ)) and
/// U_a = U_JKR(a(δ)) − U_JKR(a(0)) − U_Hertz(δ⁺), the Hertz spring being E*(4/3)√R* δ^{3/2};
/// also the contact radius a (0 without adhesion).
pub fn jkr_adhesive(e_star: f64, r_star: f64, gamma: f64, overlap: f64) -> (Adhesive, f64) {
    let beta = jkr_beta(gamma, e_star);
    let a = jkr_contact_radius(r_star, beta, overlap);
    let x0 = (2.0 * beta * r_star).cbrt();
    let a0 = x0 * x0;
    let d = overlap.max(0.0);
    let hertz = 4.0 / 3.0 * e_star * r_star.sqrt() * d * d.sqrt();
    let force = hertz - jkr_force(e_star, r_star, beta, a);
    let energy = jkr_energy(e_star, r_star, beta, a) - jkr_energy(e_star, r_star, beta, a0) - 0.4 * hertz * d;
    (Adhesive { force, energy }, a)
}

// ---------------------------------------------------------------- DMT

/// The DMT pull-off force 4πγR* (Derjaguin, Muller & Toporov 1975: 2π w R* with w = 2γ),
/// constant while the surfaces touch.
pub fn dmt_pulloff_force(gamma: f64, r_star: f64) -> f64 {
    4.0 * PI * gamma * r_star
}

// ---------------------------------------------------------------- SJKR, SJKR2

/// The radii (R_i, R_j) of a contact's bodies from its geometry, R = arm + δ/2; a wall's
/// arm_j is 0 (no ball's is), and its R_j is given as 0.
pub fn contact_radii(g: &ContactGeometry) -> (f64, f64) {
    let half = 0.5 * (-g.gap).max(0.0);
    (g.arm_i + half, if g.arm_j == 0.0 { 0.0 } else { g.arm_j + half })
}

/// The contact area of SJKR: π a² with a the exact radius of the circle where the two
/// spheres of radii R_i, R_j (or the sphere and a plane, R_j = 0) intersect at overlap δ.
/// With d = R_i + R_j − δ: a² = δ(2R_i − δ)(2R_j − δ)(2R_i + 2R_j − δ)/(4d²); a wall:
/// a² = δ(2R_i − δ).
pub fn lens_area(r_i: f64, r_j: f64, overlap: f64) -> f64 {
    if overlap <= 0.0 {
        return 0.0;
    }
    if r_j == 0.0 {
        return PI * overlap * (2.0 * r_i - overlap);
    }
    let d = r_i + r_j - overlap;
    PI * overlap * (2.0 * r_i - overlap) * (2.0 * r_j - overlap) * (2.0 * (r_i + r_j) - overlap) / (4.0 * d * d)
}

/// ∫₀^δ A dδ' of SJKR's lens area by 3-point Gauss–Legendre (the area is smooth in δ; the
/// rule is exact for polynomials of degree 5, to ~1e-12 of the integral at δ/R ≤ 0.1).
pub fn lens_area_integral(r_i: f64, r_j: f64, overlap: f64) -> f64 {
    if overlap <= 0.0 {
        return 0.0;
    }
    let h = 0.5 * overlap;
    let x = GAUSS3 * h;
    h * (5.0 * lens_area(r_i, r_j, h - x) + 8.0 * lens_area(r_i, r_j, h) + 5.0 * lens_area(r_i, r_j, h + x)) / 9.0
}

/// √(3/5), the outer node of 3-point Gauss–Legendre on [−1, 1].
pub const GAUSS3: f64 = 0.7745966692414834;

/// The SJKR2 area 2πδR* (LIGGGHTS `cohesion sjkr2`; a wall: R* = R_i).
pub fn sjkr2_area(r_star: f64, overlap: f64) -> f64 {
    2.0 * PI * overlap.max(0.0) * r_star
}

// ---------------------------------------------------------------- capillary bridge

/// Willett's coefficients of the closed form 1/(1 + 1.05 ŝ + 2.5 ŝ²) (Willett et al. 2000,
/// eq. 12 with ŝ = S√(R/V); their 2.1 Ŝ + 10 Ŝ² for Ŝ = (S/2)√(R/V)).
pub const WILLETT_B: f64 = 1.05;
pub const WILLETT_C: f64 = 2.5;

/// The bridge force at contact, 2πRγ cosθ, R = R̄ (the Derjaguin radius 2R_iR_j/(R_i + R_j):
/// R for equal spheres, 2R_i for a sphere on a wall).
pub fn capillary_contact_force(p: &PairParams, r_bar: f64) -> f64 {
    2.0 * PI * r_bar * p.surface_tension * p.contact_angle.cos()
}

/// The separation at which a bridge ruptures, (1 + θ/2) V^{1/3} (Lian et al. 1993).
pub fn capillary_rupture_gap(p: &PairParams) -> f64 {
    (1.0 + 0.5 * p.contact_angle) * p.liquid_volume.cbrt()
}

/// Willett's bridge at gap g: F = F₀/(1 + 1.05ŝ + 2.5ŝ²), ŝ = g√(R/V) (F₀ at g ≤ 0), and
/// U = ∫₀^g F: F₀ g for g ≤ 0, else (F₀/k) 2/√D (atan((2cŝ + b)/√D) − atan(b/√D)) with
/// k = √(R/V), b = 1.05, c = 2.5, D = 4c − b².
pub fn capillary_adhesive(p: &PairParams, r_bar: f64, gap: f64) -> Adhesive {
    let f0 = capillary_contact_force(p, r_bar);
    if gap <= 0.0 {
        return Adhesive { force: f0, energy: f0 * gap };
    }
    let k = (r_bar / p.liquid_volume).sqrt();
    let s = gap * k;
    let force = f0 / (1.0 + (WILLETT_B + WILLETT_C * s) * s);
    let root_d = (4.0 * WILLETT_C - WILLETT_B * WILLETT_B).sqrt();
    let energy = f0 / k * 2.0 / root_d * (((2.0 * WILLETT_C * s + WILLETT_B) / root_d).atan() - (WILLETT_B / root_d).atan());
    Adhesive { force, energy }
}

// ---------------------------------------------------------------- the pair's adhesion

/// The gap up to which a bond of the pair holds once formed (JKR: the break gap at R* =
/// R̄/2; capillary: the rupture distance); 0 for the others, which hold while in touch only.
pub fn tensile_range(p: &PairParams, r_bar: f64) -> f64 {
    match p.adhesion {
        Adhesion::Jkr => jkr_break_gap(0.5 * r_bar, jkr_beta(p.surface_energy, p.e_star())),
        Adhesion::Capillary => capillary_rupture_gap(p),
        _ => 0.0,
    }
}

/// The largest gap at which any pair's contact can act: the largest positive reference gap
/// g_r (hertz) or tensile range (`tensile_range`, at the largest radius `r_max` against a
/// wall, R̄ = 2 r_max, the widest). Neighbour lists and grid cells reach this far beyond the
/// radii; without adhesion it is the largest positive g_r, as ever.
pub fn max_reach_gap(pairs: &[PairParams], r_max: f64) -> f64 {
    pairs.iter().map(|p| p.rgap.max(tensile_range(p, 2.0 * r_max))).fold(0.0, f64::max)
}

/// Whether a contact of an adhesive pair acts in this step: its surfaces touch (the dry
/// rule, gap − g_r ≤ 0), or it was bonded in the previous step (`h.established` ≠ 0) and the
/// gap is below the pair's tensile range (a JKR neck or a bridge still holds).
pub fn bonded_active(p: &PairParams, g: &ContactGeometry, h: &History) -> bool {
    g.gap - p.rgap <= 0.0 || (h.established != 0.0 && g.gap < tensile_range(p, g.r_bar))
}

/// The adhesive part of a bonded contact at gap g (zero without adhesion, and for DMT and
/// SJKR apart): JKR `jkr_adhesive`, DMT F_a = 4πγR* with U_a = F_a g, SJKR F_a = k_c A with
/// A the lens area (U_a = −k_c ∫A dδ), SJKR2 A = 2πδR* (U_a = −k_c πR* δ²), capillary
/// `capillary_adhesive`.
pub fn adhesive_part(p: &PairParams, g: &ContactGeometry, gap: f64) -> Adhesive {
    let r_star = 0.5 * g.r_bar;
    let overlap = (-gap).max(0.0);
    match p.adhesion {
        Adhesion::None => Adhesive::default(),
        Adhesion::Jkr => jkr_adhesive(p.e_star(), r_star, p.surface_energy, -gap).0,
        Adhesion::Dmt => {
            if gap > 0.0 {
                return Adhesive::default();
            }
            let force = dmt_pulloff_force(p.surface_energy, r_star);
            Adhesive { force, energy: force * gap }
        }
        Adhesion::Sjkr => {
            let (r_i, r_j) = contact_radii(g);
            Adhesive { force: p.cohesion_energy_density * lens_area(r_i, r_j, overlap), energy: -p.cohesion_energy_density * lens_area_integral(r_i, r_j, overlap) }
        }
        Adhesion::Sjkr2 => Adhesive { force: p.cohesion_energy_density * sjkr2_area(r_star, overlap), energy: -p.cohesion_energy_density * PI * r_star * overlap * overlap },
        Adhesion::Capillary => capillary_adhesive(p, g.r_bar, gap),
    }
}
