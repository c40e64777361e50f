// Energy partitions of the Hertz model, spec hertz-pfc.txt eqs (15) and (17)
// (slip work, eq (16), is computed with the shear force in tangential.wgsl), and the work of a
// shear spring's stiffness change, which closes the books of eq (15) (docs/contact-models.md).
// Twin of src/contact/energy.rs.

// E_k = α_h/(α_h+1) (F_n^h)²/k_n + ½ |F_s^h|²/k_s, eq (15), k_s given as its compliance c_s,
// with the normal term written h_n δ^(α_h+1)/(α_h+1), which stays finite at δ → 0.
fn strain_energy(p: PairParamsGpu, normal: NormalForce, fs: vec3<f32>, c_s: f32) -> f32 {
    let normal_part = select(0.0, normal.h_n * pow(normal.overlap, p.hz_alpha + 1.0) / (p.hz_alpha + 1.0), normal.overlap > 0.0);
    return normal_part + 0.5 * dot(fs, fs) * c_s;
}

// Energy the dashpots dissipate this step, eq (17), booked consistently with the velocity-Verlet
// step: the trapezoid ½(F^d(n−1) + F^d(n))·δ̇(n−½) Δt over each drift, in one dot product:
// −½ (F^d(n−1) + F^d(n))·δ̇ Δt, with F^d(n−1) the previous step's dashpot force on j
// (h.dashpot), F^d(n) this step's and δ̇ the relative velocity of the contact points.
fn dashpot_work(g: ContactGeometry, d: DashpotForce, h: HistoryGpu, dt: f32) -> f32 {
    return -0.5 * dot(previous_dashpot_force(h) + dashpot_force(g, d), relative_velocity(g)) * dt;
}

// −F^d(n−1)·δ̇: the previous step's dashpot force on j (h.dashpot, the vector the bodies felt)
// at this step's relative velocity of the contact points.
fn previous_dashpot_power(g: ContactGeometry, h: HistoryGpu) -> f32 {
    return -dot(previous_dashpot_force(h), relative_velocity(g));
}

// The previous step's dashpot force on j, as the history keeps it.
fn previous_dashpot_force(h: HistoryGpu) -> vec3<f32> {
    return h.dashpot;
}

// This step's dashpot force on j, F_s^d − F_n^d n (spec sign of F_n^d, tension positive).
fn dashpot_force(g: ContactGeometry, d: DashpotForce) -> vec3<f32> {
    return d.fs_d - g.normal * d.fn_d;
}

// The relative velocity δ̇ of j's contact point with respect to i's, ġ n + v_s.
fn relative_velocity(g: ContactGeometry) -> vec3<f32> {
    return g.vel_shear + g.normal * g.vel_normal;
}

// The dashpot force on j as the history keeps it for the next step's booking (dashpot_force).
fn dashpot_history(g: ContactGeometry, d: DashpotForce) -> vec3<f32> {
    return dashpot_force(g, d);
}

// A power-law normal spring F = c ξ^α at overlap ξ: (F, its energy F ξ/(α+1)); zero for ξ ≤ 0.
fn power_spring(c: f32, alpha: f32, overlap: f32) -> vec2<f32> {
    if (overlap <= 0.0) {
        return vec2<f32>(0.0);
    }
    var power: f32;
    if (alpha == 1.5) {
        power = overlap * sqrt(overlap);
    } else if (alpha == 1.0) {
        power = overlap;
    } else {
        power = pow(overlap, alpha);
    }
    let force = c * power;
    return vec2<f32>(force, force * overlap / (alpha + 1.0));
}

// The overlap ξ(n−1) at which the normal spring acted in the previous step, ξ(n) + ġ Δt, when
// the contact was active then (contact_active at gap g − ġ Δt), else 0.
fn previous_overlap(p: PairParamsGpu, g: ContactGeometry, dt: f32) -> f32 {
    let gap_before = g.gap - g.vel_normal * dt;
    return select(0.0, -gap_before, gap_before - p.rgap <= 0.0);
}

// Energy the normal spring's stepping takes out of the books this step (booked with the
// stiffness work): the drift's trapezoid ½(F(n−1) + F(n)) Δξ less the strain change
// U(n) − U(n−1). before = (F(n−1), U(n−1)), the model's spring at previous_overlap;
// now = (F(n), U(n)).
fn normal_step_work(g: ContactGeometry, before: vec2<f32>, now: vec2<f32>, dt: f32) -> f32 {
    return -0.5 * (before.x + now.x) * g.vel_normal * dt - (now.y - before.y);
}

// 1/k of a shear spring of stiffness k, 0 for k ≤ 0 (no spring yet): the one division a shear
// step makes for its elastic stretch, its strain energy and its stiffness work; the history
// keeps it (HistoryGpu.shear_compliance) for the next step's stiffness work.
fn compliance(k: f32) -> f32 {
    return select(0.0, 1.0 / k, k > 0.0);
}

// Energy a shear spring loses when its stiffness changes at fixed force this step:
// ½|F₀|²/k₀ stored at the end of the previous step minus ½|F₀'|²/k of the force the increment
// starts from (F₀ turned into the current plane, rescaled by eq (9) for hz_mode 1); both
// stiffnesses given as their compliances (compliance_stored = h.shear_compliance).
fn stiffness_work(fs_stored: vec3<f32>, compliance_stored: f32, fs_start: vec3<f32>, compliance: f32) -> f32 {
    return 0.5 * (dot(fs_stored, fs_stored) * compliance_stored - dot(fs_start, fs_start) * compliance);
}
