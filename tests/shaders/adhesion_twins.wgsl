// Test kernel for tests/adhesion_twins.rs: evaluates every function of
// shaders/contact/adhesion.wgsl, hertz_mindlin_adhesive.wgsl and adhesive.wgsl on one random
// state per invocation (the contact geometries given as they are, so both sides see the same
// gap) and writes all results.

const IN_STRIDE: u32 = 40u;
const OUT_STRIDE: u32 = 80u;

// bindings, in3, put, put3: tests/shaders/twin_io.wgsl

fn put_output(o: u32, c: ContactOutput) {
    put3(o, c.force_j);
    put3(o + 3u, c.torque_i);
    put3(o + 6u, c.torque_j);
    put3(o + 9u, c.history.shear);
    put(o + 12u, c.history.normal_force);
    put(o + 13u, c.history.established);
    put(o + 14u, c.strain);
    put(o + 15u, c.surface);
    put(o + 16u, c.slip_work);
    put(o + 17u, c.dashpot_work);
    put(o + 18u, c.stiffness_work);
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
    let normal = in3(b);
    let vel_shear = in3(b + 9u);
    let spin_i = in3(b + 12u);
    let spin_j = in3(b + 15u);
    let dt = inputs[b + 18u];
    let g = ContactGeometry(normal, inputs[b + 3u], inputs[b + 4u], inputs[b + 5u], inputs[b + 6u], inputs[b + 7u], inputs[b + 8u], vel_shear, spin_i, spin_j, spin_i, spin_j);
    let gw = ContactGeometry(normal, inputs[b + 19u], inputs[b + 21u], inputs[b + 22u], inputs[b + 20u], 0.0, inputs[b + 8u], vel_shear, spin_i, vec3<f32>(0.0), spin_i, vec3<f32>(0.0));
    let h = HistoryGpu(in3(b + 23u), inputs[b + 26u], inputs[b + 27u], inputs[b + 28u], inputs[b + 29u], 0.0, in3(b + 30u), 0.0);
    let overlap = inputs[b + 33u];
    let gap = inputs[b + 34u];
    let r_i = inputs[b + 35u];
    let r_j = inputs[b + 36u];
    let r_star = 0.5 * g.r_bar;
    let es = e_star(p);

    let beta = jkr_beta(p.surface_energy, es);
    put(o, beta);
    let a = jkr_contact_radius(r_star, beta, overlap);
    put(o + 1u, a);
    put(o + 2u, jkr_force(es, r_star, beta, a));
    put(o + 3u, jkr_energy(es, r_star, beta, a));
    put(o + 4u, jkr_pulloff_force(p.surface_energy, r_star));
    put(o + 5u, jkr_break_gap(r_star, beta));
    let jkr = jkr_adhesive(es, r_star, p.surface_energy, overlap);
    put(o + 6u, jkr.adhesive.force);
    put(o + 7u, jkr.adhesive.energy);
    put(o + 8u, jkr.radius);
    put(o + 9u, dmt_pulloff_force(p.surface_energy, r_star));
    let radii = contact_radii(g);
    put(o + 10u, radii.x);
    put(o + 11u, radii.y);
    put(o + 12u, lens_area(r_i, r_j, overlap));
    put(o + 13u, lens_area_integral(r_i, r_j, overlap));
    put(o + 14u, lens_area(r_i, 0.0, overlap));
    put(o + 15u, lens_area_integral(r_i, 0.0, overlap));
    put(o + 16u, sjkr2_area(r_star, overlap));
    put(o + 17u, capillary_contact_force(p, g.r_bar));
    put(o + 18u, capillary_rupture_gap(p));
    let bridge = capillary_adhesive(p, g.r_bar, gap);
    put(o + 19u, bridge.force);
    put(o + 20u, bridge.energy);
    put(o + 21u, tensile_range(p, g.r_bar));
    put(o + 22u, select(0.0, 1.0, bonded_active(p, g, h)));
    put(o + 23u, select(0.0, 1.0, bonded_active(p, gw, h)));
    let part = adhesive_part(p, g, g.gap);
    put(o + 24u, part.force);
    put(o + 25u, part.energy);
    let part_w = adhesive_part(p, gw, gw.gap);
    put(o + 26u, part_w.force);
    put(o + 27u, part_w.energy);
    let spring = adhesive_spring(p, g);
    put(o + 28u, spring.adhesive.force);
    put(o + 29u, spring.radius);
    put(o + 30u, spring.pulloff);
    let before = previous_adhesive(p, g, h, dt);
    put(o + 31u, before.force);
    put(o + 32u, before.energy);
    put_output(o + 33u, adhesive_contact_force(p, g, h, dt));
    put_output(o + 52u, adhesive_contact_force(p, gw, h, dt));
    let ended = ended_adhesive_work(p, g, h, dt);
    put(o + 71u, ended.x);
    put(o + 72u, ended.y);
    put(o + 73u, ended.z);
    put(o + 74u, ended.w);
    let ended_w = ended_adhesive_work(p, gw, h, dt);
    put(o + 75u, ended_w.x);
    put(o + 76u, ended_w.y);
    put(o + 77u, ended_w.z);
    put(o + 78u, ended_w.w);
}
