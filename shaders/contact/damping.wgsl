// Dashpots, spec hertz-pfc.txt eqs (13)–(14), all four modes M_d.
// Twin of src/contact/damping.rs.

// Dashpot forces of one contact.
struct DashpotForce {
    fn_d: f32,          // F_n^d in the spec's sign (tension positive), eq (13)
    fs_d: vec3<f32>,    // shear dashpot force on j, eq (14)
}

// Eqs (13)–(14). k_s and slip come from the shear part of the same step.
fn dashpot(p: PairParamsGpu, g: ContactGeometry, normal: NormalForce, k_s: f32, slip: bool) -> DashpotForce {
    let gap_factor = select(pow(abs(g.gap), p.dp_alpha), 1.0, p.dp_alpha == 0.0);
    // eq (13): F* = 2 β_n √(m_c k_n) |g_c|^α_d δ̇_n; no-tension modes cap F_n^h + F_n^d ≤ 0
    let f_star = 2.0 * p.dp_nratio * sqrt(g.m_c * normal.k_n) * gap_factor * g.vel_normal;
    // `limit_damping` (PAIR_FLAG_LIMIT_DAMPING) is mode 3 whatever `dp_mode` says: no tension,
    // and no shear dashpot while sliding
    let limited = (p.flags & PAIR_FLAG_LIMIT_DAMPING) != 0u;
    let no_tension = p.dp_mode == DP_MODE_NO_TENSION || p.dp_mode == DP_MODE_BOTH || limited;
    let fn_d = select(f_star, min(f_star, -normal.fn_h), no_tension);
    // eq (14): shear dashpot, cut while sliding in modes 2 and 3
    let slip_cut = slip && (p.dp_mode == DP_MODE_SLIP_CUT || p.dp_mode == DP_MODE_BOTH || limited);
    let fs_d = select(g.vel_shear * (-2.0 * p.dp_sratio * sqrt(g.m_c * k_s) * gap_factor), vec3<f32>(0.0), slip_cut);
    return DashpotForce(fn_d, fs_d);
}
