// The hooke preset of spec hooke-aspherix.txt. Twin of src/contact/hooke.rs.

// Strain energy ½ k_n δ² + ½ |F_s|²/k_t, k_t given as its compliance c_t (compliance).
fn hooke_strain_energy(k_n: f32, overlap: f32, fs: vec3<f32>, c_t: f32) -> f32 {
    return 0.5 * k_n * overlap * overlap + 0.5 * dot(fs, fs) * c_t;
}

// One step of an active Hooke contact. γ_t = γ_n with tangential_damping (LIGGGHTS), else 0.
fn hooke_contact(p: PairParamsGpu, g: ContactGeometry, h: HistoryGpu, dt: f32) -> ContactOutput {
    let v_impact = impact_speed(g, h);
    let normal = hooke_normal(p, g, v_impact);
    let k_t = linear_shear_stiffness(p, normal.k_n);
    let gamma_t = select(0.0, normal.gamma_n, (p.flags & PAIR_FLAG_TANGENTIAL_DAMPING) != 0u);
    let shear = linear_shear(p, g, k_t, gamma_t, normal.fn_total, h, dt);
    let damp = DashpotForce(normal.fn_d, shear.fs_d);
    let force_j = g.normal * -normal.fn_total + shear.fs + shear.fs_d;
    let torques = contact_torques(g, force_j);
    let torque_i = torques[0];
    let torque_j = torques[1];
    var history = HistoryGpu(shear.fs, -normal.fn_total, v_impact, 1.0, shear.compliance, 0.0, vec3<f32>(0.0), 0.0);
    let strain = hooke_strain_energy(normal.k_n, normal.overlap, shear.fs, shear.compliance);
    if ((p.flags & PAIR_FLAG_NO_ENERGY_TRACKING) != 0u) {
        return ContactOutput(force_j, strain, torque_i, 0.0, torque_j, 0.0, history, 0.0, 0.0);
    }
    history.dashpot = dashpot_history(g, damp);
    let work = dashpot_work(g, damp, h, dt);
    // k_t is constant over a contact's life: its spring never changes stiffness; the normal
    // spring's stepping work comes only from the steps a contact begins and ends
    let stepping = normal_step_work(g, power_spring(normal.k_n, 1.0, previous_overlap(p, g, dt)), vec2<f32>(-normal.fn_spring, 0.5 * normal.k_n * normal.overlap * normal.overlap), dt);
    return ContactOutput(force_j, strain, torque_i, shear.slip_work, torque_j, work, history, stepping, 0.0);
}
