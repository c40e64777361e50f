//! Energy partitions of the Hertz model, spec `hertz-pfc.txt` eqs (15) and (17)
//! (slip work, eq (16), is computed with the shear force in `tangential.rs`), and the work of a
//! shear spring's stiffness change, which closes the books of eq (15) (docs/contact-models.md).
//! Twin of `shaders/contact/energy.wgsl`.

use glam::DVec3;

use super::damping::DashpotForce;
use super::geometry::ContactGeometry;
use super::history::History;
use super::normal::NormalForce;
use super::params::PairParams;

/// E_k = α_h/(α_h+1) (F_n^h)²/k_n + ½ |F_s^h|²/k_s, eq (15), k_s given as its `compliance` c_s.
/// The normal term is written h_n δ^(α_h+1)/(α_h+1), its value for F_n^h = −h_n δ^α_h, which stays finite at δ → 0.
pub fn strain_energy(p: &PairParams, normal: &NormalForce, fs: DVec3, c_s: f64) -> f64 {
    let normal_part = if normal.overlap > 0.0 { normal.h_n * normal.overlap.powf(p.hz_alpha + 1.0) / (p.hz_alpha + 1.0) } else { 0.0 };
    normal_part + 0.5 * fs.length_squared() * c_s
}

/// Energy the dashpots dissipate this step, eq (17), booked consistently with the velocity-Verlet
/// step. A force F(n) acts through the half kicks on both sides of step n, so its work is
/// F(n)·v(n) Δt with v(n) the mean of the half-step velocities v(n∓½); summed over the steps,
/// that is the trapezoid ½(F^d(n−1) + F^d(n))·δ̇(n−½) Δt over each drift, which this books in
/// one dot product: −½ (F^d(n−1) + F^d(n))·δ̇ Δt, with F^d(n−1) the previous step's dashpot
/// force on j (`History::dashpot`), F^d(n) this step's (`dashpot_force`) and δ̇ the relative
/// velocity of the contact points (`relative_velocity`). Booking −F^d(n)·δ̇(n−½) Δt alone, as
/// eq (17) reads, is first order in Δt and leaves the energy total drifting
/// (docs/contact-models.md, "Energy booking").
pub fn dashpot_work(g: &ContactGeometry, d: &DashpotForce, h: &History, dt: f64) -> f64 {
    -0.5 * (previous_dashpot_force(h) + dashpot_force(g, d)).dot(relative_velocity(g)) * dt
}

/// −F^d(n−1)·δ̇: the power of the previous step's dashpot force on j (`History::dashpot`, the
/// vector the bodies felt) at this step's relative velocity of the contact points. A shear
/// velocity that reverses from one step to the next (a chattering dashpot) is booked with its
/// sign.
pub fn previous_dashpot_power(g: &ContactGeometry, h: &History) -> f64 {
    -previous_dashpot_force(h).dot(relative_velocity(g))
}

/// The previous step's dashpot force on j, as the history keeps it (`History::dashpot`).
pub fn previous_dashpot_force(h: &History) -> DVec3 {
    DVec3::new(h.dashpot[0] as f64, h.dashpot[1] as f64, h.dashpot[2] as f64)
}

/// This step's dashpot force on j, F_s^d − F_n^d n (spec sign of F_n^d, tension positive).
pub fn dashpot_force(g: &ContactGeometry, d: &DashpotForce) -> DVec3 {
    d.fs_d - g.normal * d.fn_d
}

/// The relative velocity δ̇ of j's contact point with respect to i's, ġ n + v_s.
pub fn relative_velocity(g: &ContactGeometry) -> DVec3 {
    g.vel_shear + g.normal * g.vel_normal
}

/// The dashpot force on j as the history keeps it for the next step's booking
/// (`dashpot_force`), in f32 (`History::dashpot`).
pub fn dashpot_history(g: &ContactGeometry, d: &DashpotForce) -> [f32; 3] {
    dashpot_force(g, d).as_vec3().to_array()
}

/// A power-law normal spring F = c ξ^α at overlap ξ: (F, its energy ∫F dξ = F ξ/(α+1)); zero
/// for ξ ≤ 0. α = 3/2 (Hertz) and 1 (Hooke) without `powf`.
pub fn power_spring(c: f64, alpha: f64, overlap: f64) -> (f64, f64) {
    if overlap <= 0.0 {
        return (0.0, 0.0);
    }
    let power = if alpha == 1.5 {
        overlap * overlap.sqrt()
    } else if alpha == 1.0 {
        overlap
    } else {
        overlap.powf(alpha)
    };
    let force = c * power;
    (force, force * overlap / (alpha + 1.0))
}

/// The overlap ξ(n−1) at which the normal spring acted in the previous step: this step's
/// less the drift's normal approach, ξ(n) + ġ Δt, when the contact was active then
/// (`contact_active` at gap g − ġ Δt), else 0 (no spring acted).
pub fn previous_overlap(p: &PairParams, g: &ContactGeometry, dt: f64) -> f64 {
    let gap_before = g.gap - g.vel_normal * dt;
    if gap_before - p.rgap <= 0.0 { -gap_before } else { 0.0 }
}

/// Energy the normal spring's stepping takes out of the books this step (booked with the
/// stiffness work): velocity Verlet applies the spring's force F(n) through a whole step, so
/// the drift from step n−1 to n does the trapezoid ½(F(n−1) + F(n)) Δξ of work on it, while
/// its strain energy (eq 15) changes by U(n) − U(n−1). They differ where the stiffness dF/dξ
/// changes within the step: (F''/12) Δξ³ inside a contact (these cancel between loading and
/// unloading) and, above all, in the step a contact begins (F(n−1) = 0, and the force acts
/// over the whole drift although the surfaces met part-way) and the step it ends. Booking
/// the difference closes the energy total to the rounding of the step (docs/contact-models.md,
/// "Energy booking"). `before` = (F(n−1), U(n−1)), the model's spring at
/// `previous_overlap`; `now` = (F(n), U(n)) of this step (zero for a contact that has ended).
pub fn normal_step_work(g: &ContactGeometry, before: (f64, f64), now: (f64, f64), dt: f64) -> f64 {
    -0.5 * (before.0 + now.0) * g.vel_normal * dt - (now.1 - before.1)
}

/// 1/k of a shear spring of stiffness k, 0 for k ≤ 0 (no spring yet): the one division a
/// shear step makes for its elastic stretch, its strain energy and its stiffness work; the
/// history keeps it (`History::shear_compliance`) for the next step's stiffness work.
pub fn compliance(k: f64) -> f64 {
    if k > 0.0 {
        1.0 / k
    } else {
        0.0
    }
}

/// Energy a shear spring loses when its stiffness changes at fixed force this step:
/// ½|F₀|²/k₀ stored at the end of the previous step minus ½|F₀'|²/k of the force the increment
/// starts from (F₀' = F₀ turned into the current plane and, for hz_mode 1, rescaled by eq (9);
/// k = the stiffness of this step, eq (8), given as its `compliance` 1/k). Eq (16) books the
/// slip of the increment against k, so strain change + slip work + this term = work done on
/// the spring. Zero for a constant stiffness; may be negative (hz_mode 0 unloading: the spring
/// softens and its energy grows). `compliance_stored` = 1/k₀ (`History::shear_compliance`).
pub fn stiffness_work(fs_stored: DVec3, compliance_stored: f64, fs_start: DVec3, compliance: f64) -> f64 {
    0.5 * (fs_stored.length_squared() * compliance_stored - fs_start.length_squared() * compliance)
}
