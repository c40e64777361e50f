// The hertz_mindlin preset of hertz-mindlin-musen.txt: Hertz normal force with Tsuji damping,
// Mindlin tangential spring with damping and Coulomb cap, rolling friction.
// Twin of src/contact/hertz_mindlin.rs.

// One step of an active hertz_mindlin contact; |F_n| is the total normal force (≥ 0).
fn hertz_mindlin_contact(p: PairParamsGpu, g: ContactGeometry, h: HistoryGpu, dt: f32) -> ContactOutput {
    let alpha = p.tsuji_alpha;
    let normal = mindlin_normal(p, g, alpha);
    // the normal spring's work over the step, formed while its inputs are at hand: the shear
    // law below then runs with fewer values live (docs/performance.md, "Registers")
    var stepping = 0.0;
    if ((p.flags & PAIR_FLAG_NO_ENERGY_TRACKING) == 0u) {
        let before = mindlin_spring(p, g.r_bar, previous_overlap(p, g, dt));
        stepping = normal_step_work(g, before.yz, vec2<f32>(-normal.fn_e, normal.strain), dt);
    }
    let fn_total = normal.fn_e + normal.fn_d;
    let fn_mag = max(-fn_total, 0.0);
    let k_t = mindlin_shear_stiffness(p, g.r_bar, normal.overlap);
    let eta_t = mindlin_shear_damping(p, normal.eta_n);
    let shear = mindlin_shear(p, g, k_t, eta_t, fn_mag, h, dt);
    let roll = rolling_resistance(p, g, fn_mag, h.normal_force, dt);
    let force_j = g.normal * -fn_total + shear.fs;
    let torques = contact_torques(g, force_j);
    let torque_i = torques[0] + roll.torque_i;
    let torque_j = torques[1] + roll.torque_j;
    var history = HistoryGpu(shear.spring, fn_mag, 0.0, 1.0, shear.compliance, 0.0, vec3<f32>(0.0), 0.0);
    let strain = normal.strain + shear.strain;
    if ((p.flags & PAIR_FLAG_NO_ENERGY_TRACKING) != 0u) {
        return ContactOutput(force_j, strain, torque_i, 0.0, torque_j, 0.0, history, 0.0, 0.0);
    }
    let damp = DashpotForce(normal.fn_d, shear.fs_d);
    history.dashpot = dashpot_history(g, damp);
    let work = dashpot_work(g, damp, h, dt);
    return ContactOutput(force_j, strain, torque_i, shear.slip_work + roll.work, torque_j, work, history, shear.stiffness_work + stepping, 0.0);
}
