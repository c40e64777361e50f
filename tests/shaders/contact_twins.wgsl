// Test kernel for tests/contact_twins.rs: evaluates every contact function of
// shaders/contact/ on one random state per invocation and writes all results.

const IN_STRIDE: u32 = 35u;
const OUT_STRIDE: u32 = 80u;

// bindings, in3, put, put3: tests/shaders/twin_io.wgsl

fn put_geometry(o: u32, g: ContactGeometry) {
    put3(o, g.normal);
    put(o + 3u, g.gap);
    put(o + 4u, g.r_bar);
    put(o + 5u, g.m_c);
    put3(o + 6u, g.normal * g.arm_i);
    put3(o + 9u, g.normal * -g.arm_j);
    put(o + 12u, g.vel_normal);
    put3(o + 13u, g.vel_shear);
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
    let d = in3(b);
    let r_i = inputs[b + 3u];
    let r_j = inputs[b + 4u];
    let m_i = inputs[b + 5u];
    let m_j = inputs[b + 6u];
    let dt = inputs[b + 7u];
    let v_i = in3(b + 8u);
    let s = inputs[b + 11u];
    let w_i = in3(b + 12u);
    let v_j = in3(b + 16u);
    let w_j = in3(b + 20u);
    let history = HistoryGpu(in3(b + 24u), inputs[b + 27u], inputs[b + 31u], 1.0, inputs[b + 23u], 0.0, in3(b + 32u), 0.0);
    let n_w = in3(b + 28u);

    let g = ball_ball_geometry(d, r_i, r_j, m_i, m_j, v_i, w_i, v_j, w_j);
    put_geometry(o, g);
    let gw = ball_wall_geometry(s, n_w, r_i, m_i, v_i, w_i, v_j);
    put_geometry(o + 16u, gw);
    let normal = hertz_normal(p, g);
    put(o + 32u, normal.fn_h);
    put(o + 33u, normal.h_n);
    put(o + 34u, normal.k_n);
    put(o + 35u, normal.overlap);
    let shear = hertz_shear(p, g, normal, history, dt);
    put3(o + 36u, shear.fs);
    put(o + 39u, shear.k_s);
    put(o + 40u, select(0.0, 1.0, shear.slip));
    put(o + 41u, shear.slip_work);
    let damp = dashpot(p, g, normal, shear.k_s, shear.slip);
    put(o + 42u, damp.fn_d);
    put3(o + 43u, damp.fs_d);
    put(o + 46u, strain_energy(p, normal, shear.fs, shear.compliance));
    put(o + 47u, dashpot_work(g, damp, history, dt));
    let c = hertz_contact(p, g, history, dt);
    put3(o + 48u, c.force_j);
    put3(o + 51u, c.torque_i);
    put3(o + 54u, c.torque_j);
    put3(o + 57u, c.history.shear);
    put(o + 60u, c.history.normal_force);
    put(o + 61u, c.strain);
    put(o + 62u, c.slip_work);
    put(o + 63u, c.dashpot_work);
    put(o + 64u, select(0.0, 1.0, contact_active(p, g)));
    put(o + 65u, select(0.0, 1.0, contact_active(p, gw)));
    put(o + 66u, shear.stiffness_work);
    put(o + 67u, c.stiffness_work);
    put(o + 68u, c.history.shear_compliance);
    let ended = ended_contact_work(p, g, history, dt);
    put(o + 69u, ended.x);
    put(o + 70u, ended.y);
    put(o + 71u, released_spring_work(g, history, dt));
    put3(o + 72u, c.history.dashpot);
    put(o + 78u, ended.z);
}
