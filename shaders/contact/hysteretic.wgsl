// The hysteretic preset of spec hysteretic-pfc.txt: Hertz elastic group + hysteretic dashpot.
// Twin of src/contact/hysteretic.rs.

// One step of an active hysteretic contact, eqs (2)–(9). No moment (eq 2).
fn hysteretic_contact(p: PairParamsGpu, g: ContactGeometry, h: HistoryGpu, dt: f32) -> ContactOutput {
    let normal = hertz_normal(p, g);
    let shear = hertz_shear(p, g, normal, h, dt);
    let v_impact = impact_speed(g, h);
    let damp = hysteretic_dashpot(p, g, normal, v_impact, dt);
    let force_j = g.normal * -(normal.fn_h + damp.fn_d) + shear.fs;
    let torques = contact_torques(g, force_j);
    let torque_i = torques[0];
    let torque_j = torques[1];
    var history = HistoryGpu(shear.fs, -normal.fn_h, v_impact, 1.0, shear.compliance, 0.0, vec3<f32>(0.0), 0.0);
    let strain = strain_energy(p, normal, shear.fs, shear.compliance);
    if ((p.flags & PAIR_FLAG_NO_ENERGY_TRACKING) != 0u) {
        return ContactOutput(force_j, strain, torque_i, 0.0, torque_j, 0.0, history, 0.0, 0.0);
    }
    history.dashpot = dashpot_history(g, damp);
    let work = dashpot_work(g, damp, h, dt);
    let stepping = normal_step_work(g, power_spring(normal.h_n, p.hz_alpha, previous_overlap(p, g, dt)), spring(normal, p.hz_alpha), dt);
    return ContactOutput(force_j, strain, torque_i, shear.slip_work, torque_j, work, history, shear.stiffness_work + stepping, 0.0);
}
