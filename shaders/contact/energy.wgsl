// Energy partitions of the Hertz model, spec hertz-pfc.txt eqs (15) and (17)
// (slip work, eq (16), is computed with the shear force in tangential.wgsl), and the work of a
// shear spring's stiffness change, which closes the books of eq (15) (docs/contact-models.md).
// Twin of src/contact/energy.rs.

// E_k = α_h/(α_h+1) (F_n^h)²/k_n + ½ |F_s^h|²/k_s, eq (15), with the normal term written
// h_n δ^(α_h+1)/(α_h+1), which stays finite at δ → 0.
fn strain_energy(p: PairParamsGpu, normal: NormalForce, fs: vec3<f32>, k_s: f32) -> f32 {
    let normal_part = select(0.0, normal.h_n * pow(normal.overlap, p.hz_alpha + 1.0) / (p.hz_alpha + 1.0), normal.overlap > 0.0);
    let shear_part = select(0.0, 0.5 * dot(fs, fs) / k_s, k_s > 0.0);
    return normal_part + shear_part;
}

// Energy the dashpots dissipate this step, eq (17), booked consistently with the velocity-Verlet
// step: a force F(n) does F(n)·v(n) Δt, half at the velocities of this step's drift, half at
// those of the next. This is the first half, −½ F^d(n)·δ̇(n−½) Δt; the next force pass books
// the second with previous_dashpot_power.
fn dashpot_work(g: ContactGeometry, d: DashpotForce, dt: f32) -> f32 {
    let force_on_j = g.normal * -d.fn_d + d.fs_d;
    let relative_velocity = g.normal * g.vel_normal + g.vel_shear;
    return -0.5 * dot(force_on_j, relative_velocity) * dt;
}

// −F^d(n−1)·δ̇: the previous step's dashpot forces (in h) at this step's half-step velocities,
// in g_prev, the contact's geometry at the previous step's positions.
fn previous_dashpot_power(g_prev: ContactGeometry, h: HistoryGpu) -> f32 {
    let basis = tangent_basis(g_prev.normal);
    let force_on_j = g_prev.normal * -h.dashpot_normal + basis[0] * h.dashpot_shear_1 + basis[1] * h.dashpot_shear_2;
    let relative_velocity = g_prev.normal * g_prev.vel_normal + g_prev.vel_shear;
    return -dot(force_on_j, relative_velocity);
}

// The dashpot forces as the history keeps them: F_n^d, and F_s^d in the tangent basis of this
// step's normal.
fn dashpot_history(g: ContactGeometry, d: DashpotForce) -> vec3<f32> {
    let basis = tangent_basis(g.normal);
    return vec3<f32>(d.fn_d, dot(d.fs_d, basis[0]), dot(d.fs_d, basis[1]));
}

// What a shear spring still loaded when its contact ends gives up in that step: its stored
// ½|F₀|²/k₀, less the work it does in the half step it still acts for, −½ F₀·v_s Δt (F₀
// turned into the current plane). Booked as slip.
fn released_spring_work(g: ContactGeometry, h: HistoryGpu, dt: f32) -> f32 {
    let stored = select(0.0, 0.5 * dot(h.shear, h.shear) / h.shear_stiffness, h.shear_stiffness > 0.0);
    return stored - 0.5 * dot(rotate_history(h.shear, g.normal), g.vel_shear) * dt;
}

// Energy a shear spring loses when its stiffness changes at fixed force this step:
// ½|F₀|²/k₀ stored at the end of the previous step minus ½|F₀'|²/k of the force the increment
// starts from (F₀ turned into the current plane, rescaled by eq (9) for hz_mode 1).
fn stiffness_work(fs_stored: vec3<f32>, k_stored: f32, fs_start: vec3<f32>, k: f32) -> f32 {
    let stored = select(0.0, 0.5 * dot(fs_stored, fs_stored) / k_stored, k_stored > 0.0);
    let start = select(0.0, 0.5 * dot(fs_start, fs_start) / k, k > 0.0);
    return stored - start;
}
