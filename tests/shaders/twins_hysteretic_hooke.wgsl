// Test kernel for tests/twins_hysteretic_hooke.rs (run from tests/model_hysteretic.rs):
// every function of damping_hysteretic, normal_hooke, tangential_linear, hysteretic and hooke
// on one random state per invocation.

const IN_STRIDE: u32 = 35u;
const OUT_STRIDE: u32 = 76u;

// bindings, in3, put, put3: tests/shaders/twin_io.wgsl

fn put_contact(o: u32, c: ContactOutput) {
    put3(o, c.force_j);
    put3(o + 3u, c.torque_i);
    put3(o + 6u, c.torque_j);
    put3(o + 9u, c.history.shear);
    put(o + 12u, c.history.normal_force);
    put(o + 13u, c.history.impact_velocity);
    put(o + 14u, c.history.established);
    put(o + 15u, c.strain);
    put(o + 16u, c.slip_work);
    put(o + 17u, c.dashpot_work);
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let k = gid.x;
    if (k >= arrayLength(&params)) {
        return;
    }
    let b = k * IN_STRIDE;
    let o = k * OUT_STRIDE;
    let p = params[k];
    let dt = inputs[b + 7u];
    let history = HistoryGpu(in3(b + 24u), inputs[b + 27u], inputs[b + 31u], inputs[b + 15u], inputs[b + 23u], 0.0, in3(b + 32u), 0.0);
    let g = ball_ball_geometry(in3(b), inputs[b + 3u], inputs[b + 4u], inputs[b + 5u], inputs[b + 6u], in3(b + 8u), in3(b + 12u), in3(b + 16u), in3(b + 20u));
    let gw = ball_wall_geometry(inputs[b + 11u], in3(b + 28u), inputs[b + 3u], inputs[b + 5u], in3(b + 8u), in3(b + 12u), in3(b + 16u));

    let v_imp = impact_speed(g, history);
    put(o, v_imp);
    put(o + 1u, hysteretic_factor(p));
    let normal = hertz_normal(p, g);
    put(o + 2u, hysteretic_dashpot(p, g, normal, v_imp, dt).fn_d);
    let hn = hooke_normal(p, g, v_imp);
    put(o + 3u, hn.fn_total);
    put(o + 4u, hn.fn_spring);
    put(o + 5u, hn.fn_d);
    put(o + 6u, hn.k_n);
    put(o + 7u, hn.gamma_n);
    put(o + 8u, hn.overlap);
    put(o + 9u, hooke_stiffness(p, gw));
    put(o + 10u, restitution_damping(g.m_c, hn.k_n, p.damping_restitution));
    put(o + 11u, hooke_restitution(p, g, v_imp));
    let k_t = linear_shear_stiffness(p, hn.k_n);
    put(o + 12u, k_t);
    let ls = linear_shear(p, g, k_t, hn.gamma_n, hn.fn_total, history, dt);
    put3(o + 13u, ls.fs);
    put3(o + 16u, ls.fs_d);
    put(o + 19u, ls.k_t);
    put(o + 20u, select(0.0, 1.0, ls.slip));
    put(o + 21u, ls.slip_work);
    put(o + 22u, hooke_strain_energy(hn.k_n, hn.overlap, ls.fs, ls.compliance));
    put(o + 23u, select(0.0, 1.0, hertz_shear(p, g, normal, history, dt).slip));
    put_contact(o + 24u, hysteretic_contact(p, g, history, dt));
    put_contact(o + 42u, hooke_contact(p, g, history, dt));
    let cw = hooke_contact(p, gw, history, dt);
    put3(o + 60u, cw.force_j);
    put(o + 63u, cw.strain);
    put(o + 64u, cw.slip_work);
    put(o + 65u, cw.dashpot_work);
    put(o + 66u, hooke_normal(p, gw, impact_speed(gw, history)).fn_total);
    put(o + 67u, select(0.0, 1.0, linear_shear(p, gw, k_t, hn.gamma_n, hooke_normal(p, gw, impact_speed(gw, history)).fn_total, history, dt).slip));
    put(o + 68u, hysteretic_contact(p, gw, history, dt).force_j.x);
    put(o + 69u, select(0.0, 1.0, hertz_shear(p, gw, hertz_normal(p, gw), history, dt).slip));
    let hys = hysteretic_contact(p, g, history, dt);
    put(o + 71u, hys.stiffness_work);
    put(o + 72u, hys.history.shear_compliance);
    put(o + 73u, hooke_contact(p, g, history, dt).history.shear_compliance);
}
