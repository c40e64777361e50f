// Energy partitions of the Hertz model, spec hertz-pfc.txt eqs (15) and (17)
// (slip work, eq (16), is computed with the shear force in tangential.wgsl).
// Twin of src/contact/energy.rs.

// E_k = α_h/(α_h+1) (F_n^h)²/k_n + ½ |F_s^h|²/k_s, eq (15), with the normal term written
// h_n δ^(α_h+1)/(α_h+1), which stays finite at δ → 0.
fn strain_energy(p: PairParamsGpu, normal: NormalForce, fs: vec3<f32>, k_s: f32) -> f32 {
    let normal_part = select(0.0, normal.h_n * pow(normal.overlap, p.hz_alpha + 1.0) / (p.hz_alpha + 1.0), normal.overlap > 0.0);
    let shear_part = select(0.0, 0.5 * dot(fs, fs) / k_s, k_s > 0.0);
    return normal_part + shear_part;
}

// Energy the dashpots dissipate this step, −F^d·(δ̇ Δt), eq (17).
fn dashpot_work(g: ContactGeometry, d: DashpotForce, dt: f32) -> f32 {
    let force_on_j = g.normal * -d.fn_d + d.fs_d;
    let relative_velocity = g.normal * g.vel_normal + g.vel_shear;
    return -dot(force_on_j, relative_velocity) * dt;
}
