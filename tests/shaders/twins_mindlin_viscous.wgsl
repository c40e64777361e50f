// Test kernel for the twin test in tests/model_hertz_mindlin.rs: evaluates rolling,
// normal_mindlin, tangential_mindlin, normal_viscous and the hertz_mindlin / hertz_viscous
// presets on one random state per invocation, for a ball–ball and a ball–wall geometry.

const IN_STRIDE: u32 = 41u;
const OUT_STRIDE: u32 = 140u;
const BLOCK: u32 = 68u;

// bindings, in3, put, put3: tests/shaders/twin_io.wgsl

fn put_output(o: u32, c: ContactOutput) {
    put3(o, c.force_j);
    put3(o + 3u, c.torque_i);
    put3(o + 6u, c.torque_j);
    put3(o + 9u, c.history.shear);
    put(o + 12u, c.history.normal_force);
    put(o + 13u, c.strain);
    put(o + 14u, c.slip_work);
    put(o + 15u, c.dashpot_work);
}

fn block(o: u32, p: PairParamsGpu, g: ContactGeometry, h: HistoryGpu, dt: f32) {
    let mn = mindlin_normal(p, g, tsuji_alpha(p.damping_restitution));
    put(o, mn.fn_e);
    put(o + 1u, mn.fn_d);
    put(o + 2u, mn.k_n);
    put(o + 3u, mn.overlap);
    put(o + 4u, mn.strain);
    let vn = viscous_normal(p, g);
    put(o + 5u, vn.fn_e);
    put(o + 6u, vn.fn_d);
    put(o + 7u, vn.k_n0);
    put(o + 8u, vn.overlap);
    put(o + 9u, vn.strain);
    let k_t = mindlin_shear_stiffness(p, g.r_bar, mn.overlap);
    put(o + 10u, k_t);
    let fn_mag = max(-(mn.fn_e + mn.fn_d), 0.0);
    let eta_t = mindlin_shear_damping(p, mn.eta_n);
    let sh = mindlin_shear(p, g, k_t, eta_t, fn_mag, h, dt);
    put3(o + 11u, sh.fs);
    put3(o + 14u, sh.spring);
    put3(o + 17u, sh.fs_d);
    put(o + 20u, select(0.0, 1.0, sh.slip));
    put(o + 21u, sh.slip_work);
    let roll = rolling_resistance(p, g, fn_mag, h.normal_force, dt);
    put3(o + 22u, roll.torque_i);
    put3(o + 25u, roll.torque_j);
    put(o + 28u, roll.work);
    put_output(o + 29u, hertz_mindlin_contact(p, g, h, dt));
    put_output(o + 45u, hertz_viscous_contact(p, g, h, dt));
    let fn_mag_v = max(-(vn.fn_e + vn.fn_d), 0.0);
    let sh_v = mindlin_shear(p, g, k_t, 0.0, fn_mag_v, h, dt);
    put(o + 61u, select(0.0, 1.0, sh_v.slip));
    let hm = hertz_mindlin_contact(p, g, h, dt);
    put(o + 64u, sh.stiffness_work);
    put(o + 65u, hm.stiffness_work);
    put(o + 66u, hertz_viscous_contact(p, g, h, dt).stiffness_work);
    put(o + 67u, hm.history.shear_compliance);
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
    let history = HistoryGpu(in3(b + 24u), inputs[b + 27u], inputs[b + 31u], 1.0, inputs[b + 23u], 0.0, in3(b + 32u), 0.0);
    var g = ball_ball_geometry(in3(b), inputs[b + 3u], inputs[b + 4u], inputs[b + 5u], inputs[b + 6u], in3(b + 8u), in3(b + 12u), in3(b + 16u), in3(b + 20u));
    g.previous_spin_i = in3(b + 35u);
    g.previous_spin_j = in3(b + 38u);
    block(o, p, g, history, dt);
    var gw = ball_wall_geometry(inputs[b + 11u], in3(b + 28u), inputs[b + 3u], inputs[b + 5u], in3(b + 8u), in3(b + 12u), in3(b + 16u));
    gw.previous_spin_i = in3(b + 35u);
    block(o + BLOCK, p, gw, history, dt);
    put(o + 2u * BLOCK, tsuji_alpha(p.damping_restitution));
    put(o + 2u * BLOCK + 1u, antypov_alpha(p.damping_restitution));
}
