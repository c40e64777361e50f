// The contact of a ball with a plane wall, shared by the `forces` and `wall_loads` passes so
// both evaluate it identically (CPU twin: the wall loop of `gather` in src/cpu/forces.rs).
// Needs the `sim`, `pairs`, `walls` and `hash_read` bindings.

// One ball–wall contact of one step.
struct WallContact {
    touching: bool,     // the contact is active (`active` is a WGSL reserved word)
    c: ContactOutput,
    u: vec3<f32>,       // the wall's surface velocity under the ball's centre
    lever: vec3<f32>,   // that surface point − the wall's load point
}

// Wall w at time index t (steps since t = 0): row t − wall_time0 of the table the host
// uploaded for this batch; the last row holds for later times (static walls have one row).
fn wall_at(t: u32, w: u32) -> WallGpu {
    let row = min(t - sim.wall_time0, sim.wall_rows - 1u);
    return walls[row * sim.n_walls + w];
}

// Ball i (block bi, offset oi with radius in w, velocity vi with 1/m in w, spin wi) against
// `wall`, with the history of the previous step (read_epoch).
fn wall_contact(i: u32, w: u32, wall: WallGpu, bi: vec4<i32>, oi: vec4<f32>, vi: vec4<f32>, wi: vec4<f32>, read_epoch: u32) -> WallContact {
    var out: WallContact;
    let n_w = wall.normal.xyz;
    let s = dot(n_w, relative_position(wall.block.xyz, wall.offset.xyz, bi.xyz, oi.xyz, sim.block));
    let p = pairs[u32(bi.w) * sim.n_materials + u32(wall.block.w)];
    if (s > (oi.w + max(p.rgap, 0.0)) * 1.001) { return out; }
    // the surface point under the ball's centre, relative to the rotation centre
    let from_center = relative_position(wall.center_block.xyz, wall.center_offset.xyz, bi.xyz, oi.xyz, sim.block) - n_w * s;
    let u = wall.velocity.xyz + cross(wall.omega.xyz, from_center);
    let g = ball_wall_geometry(s, n_w, oi.w, 1.0 / vi.w, vi.xyz, wi.xyz, u);
    if (!contact_active(p, g)) { return out; }
    out.touching = true;
    out.c = contact_force(p, g, hash_lookup(i, WALL_KEY_BIT | w, read_epoch), sim.dt);
    out.u = u;
    out.lever = relative_position(wall.load_block.xyz, wall.load_offset.xyz, bi.xyz, oi.xyz, sim.block) - n_w * s;
    return out;
}
