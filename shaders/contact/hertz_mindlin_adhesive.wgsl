// hertz_mindlin with JKR or DMT adhesion: the Hertz spring is replaced by the adhesive one,
// the Tsuji dashpot and the Mindlin shear spring take their stiffness from the contact radius,
// and the Coulomb and rolling caps use the adhesion-corrected load |N + 2 F_pulloff|.
// Twin of src/contact/hertz_mindlin_adhesive.rs.

// adhesive_spring's results.
struct AdhesiveSpring {
    adhesive: Adhesive, // its adhesive part F_a, U_a
    radius: f32,        // the contact radius a: JKR's, or Hertz's √(R*δ) for DMT
    pulloff: f32,       // the pull-off force
}

// The adhesive spring at overlap δ = −g (δ < 0 for a JKR neck held apart).
fn adhesive_spring(p: PairParamsGpu, g: ContactGeometry) -> AdhesiveSpring {
    let r_star = 0.5 * g.r_bar;
    if (p.adhesion == ADHESION_JKR) {
        let jkr = jkr_adhesive(e_star(p), r_star, p.surface_energy, -g.gap);
        return AdhesiveSpring(jkr.adhesive, jkr.radius, jkr_pulloff_force(p.surface_energy, r_star));
    }
    return AdhesiveSpring(adhesive_part(p, g, g.gap), sqrt(r_star * max(-g.gap, 0.0)), dmt_pulloff_force(p.surface_energy, r_star));
}

// One step of an active JKR or DMT contact: normal force = Hertz spring − F_a + Tsuji dashpot
// with k_n = 2E*a; shear spring k_t = 8G*a; both caps use |N + 2F_c|. Strain energy: the
// Hertz spring's and the shear spring's; surface energy: U_a.
fn hertz_mindlin_adhesive_contact(p: PairParamsGpu, g: ContactGeometry, h: HistoryGpu, dt: f32) -> ContactOutput {
    let spring = adhesive_spring(p, g);
    let adhesive = spring.adhesive;
    let a = spring.radius;
    let hz = mindlin_spring(p, g.r_bar, max(-g.gap, 0.0));
    let hertz = hz.y;
    let hertz_strain = hz.z;
    let k_n = 2.0 * e_star(p) * a;
    let fn_e = adhesive.force - hertz;
    let eta_n = -TSUJI_FACTOR * p.tsuji_alpha * sqrt(k_n * g.m_c);
    let fn_d = eta_n * g.vel_normal;
    let fn_total = fn_e + fn_d;
    // the step's spring work against its energies: the Hertz part as hertz_mindlin books it,
    // the adhesive part from the previous step's gap while the bond held then; formed while its
    // inputs are at hand, so that the shear law runs with fewer values live (docs/performance.md,
    // "Registers")
    var stepping = 0.0;
    if ((p.flags & PAIR_FLAG_NO_ENERGY_TRACKING) == 0u) {
        let hz_before = mindlin_spring(p, g.r_bar, previous_overlap(p, g, dt));
        let before = previous_adhesive(p, g, h, dt);
        stepping = normal_step_work(g, vec2<f32>(hz_before.y - before.force, hz_before.z + before.energy), vec2<f32>(hertz - adhesive.force, hertz_strain + adhesive.energy), dt);
    }
    let load = abs(2.0 * spring.pulloff - fn_total);
    let k_t = 8.0 * p.g_star * a;
    let eta_t = mindlin_shear_damping(p, eta_n);
    let shear = mindlin_shear(p, g, k_t, eta_t, load, h, dt);
    let roll = rolling_resistance(p, g, load, h.normal_force, dt);
    let force_j = g.normal * -fn_total + shear.fs;
    let torques = contact_torques(g, force_j);
    let torque_i = torques[0] + roll.torque_i;
    let torque_j = torques[1] + roll.torque_j;
    var history = HistoryGpu(shear.spring, load, 0.0, 1.0, shear.compliance, 0.0, vec3<f32>(0.0), 0.0);
    let strain = hertz_strain + shear.strain;
    if ((p.flags & PAIR_FLAG_NO_ENERGY_TRACKING) != 0u) {
        return ContactOutput(force_j, strain, torque_i, 0.0, torque_j, 0.0, history, 0.0, adhesive.energy);
    }
    let damp = DashpotForce(fn_d, shear.fs_d);
    history.dashpot = dashpot_history(g, damp);
    let dashpot = dashpot_work(g, damp, h, dt);
    return ContactOutput(force_j, strain, torque_i, shear.slip_work + roll.work, torque_j, dashpot, history, shear.stiffness_work + stepping, adhesive.energy);
}

// The adhesive part in the previous step, at its gap g − ġΔt, for a contact that was bonded
// then (h.established ≠ 0); zero for a new one.
fn previous_adhesive(p: PairParamsGpu, g: ContactGeometry, h: HistoryGpu, dt: f32) -> Adhesive {
    if (h.established == 0.0) {
        return Adhesive(0.0, 0.0);
    }
    return adhesive_part(p, g, g.gap - g.vel_normal * dt);
}
