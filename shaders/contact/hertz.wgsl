// The `hertz` preset of spec hertz-pfc.txt: geometry → normal → shear → dashpot → energies.
// Twin of src/contact/hertz.rs.

// Everything one active contact contributes in one step.
struct ContactOutput {
    force_j: vec3<f32>,     // total contact force on j (i feels −force_j), eqs (1)–(2)
    strain: f32,            // strain energy stored in the contact, eq (15)
    torque_i: vec3<f32>,    // torque on i about its centre
    slip_work: f32,         // slip work this step, eq (16)
    torque_j: vec3<f32>,    // torque on j about its centre (zero for a wall)
    dashpot_work: f32,      // dashpot work this step, eq (17)
    history: vec4<f32>,     // history for the next step: (F_s^h, |F_n^h|)
}

// One step of an active Hertz contact. The contact carries no moment (eq 1): torques come
// only from the shear force acting at the contact point.
fn hertz_contact(p: PairParamsGpu, g: ContactGeometry, history: vec4<f32>, dt: f32) -> ContactOutput {
    let normal = hertz_normal(p, g);
    let shear = hertz_shear(p, g, normal, history, dt);
    let damp = dashpot(p, g, normal, shear.k_s, shear.slip);
    let force_j = g.normal * -(normal.fn_h + damp.fn_d) + shear.fs + damp.fs_d;
    let torque_i = cross(g.branch_i, -force_j);
    let torque_j = cross(g.branch_j, force_j);
    let new_history = vec4<f32>(shear.fs, -normal.fn_h);
    let strain = strain_energy(p, normal, shear.fs, shear.k_s);
    let work = dashpot_work(g, damp, dt);
    return ContactOutput(force_j, strain, torque_i, shear.slip_work, torque_j, work, new_history);
}
