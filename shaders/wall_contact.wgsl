// The contact of a ball with a wall surface, shared by the `forces` and `wall_loads` passes so
// both evaluate it identically (CPU twin: `surface_contact` and the wall and mesh loops of
// `gather` in src/cpu/forces.rs). Plane walls and mesh facets differ only in how they find the
// distance, normal and surface velocity; `surface_contact` evaluates the contact after that.
// Needs the `sim`, `pairs`, `walls`, `mesh_data`, `wall_hash`, `motion` and `state` bindings.

// One ball–wall contact of one step.
struct WallContact {
    touching: bool,     // the contact is active (`active` is a WGSL reserved word)
    c: ContactOutput,
    key: u32,           // history key of the wall side: WALL_KEY_BIT | w, or | MESH_KEY_BIT | group
    u: vec3<f32>,       // the wall's surface velocity under the ball's centre
    lever: vec3<f32>,   // that surface point − the wall's load point
    depth: f32,         // overlap δ = r − centre distance
    ended: vec3<f32>,   // not touching, but active in the previous step: ended_contact_work
    broken: f32,        // ADHESION: that contact's bond-break work (ended_adhesive_work.w)
}

// The largest gap at which a ball of radius r can act on a surface of pair p: g_r, or with
// adhesion the larger tensile range of a bond (R̄ = 2r; twin of the CPU's mesh reach in
// `mesh_contacts`).
fn contact_gap(p: PairParamsGpu, r: f32) -> f32 {
    if (ADHESION) {
        return max(p.rgap, tensile_range(p, 2.0 * r));
    }
    return p.rgap;
}

// Wall w at time index t (steps since t = 0): row t − wall_time0 of the table the host
// uploaded for this batch; the last row holds for later times (static walls have one row).
fn wall_at(t: u32, w: u32) -> WallGpu {
    let row = min(t - sim.wall_time0, sim.wall_rows - 1u);
    return walls[row * sim.n_walls + w];
}

// Ball i (offset oi with radius in w, velocity vi with 1/m in w, spin wi) against a surface of
// pair parameters p whose unit normal n_w points towards the ball, at signed centre distance s,
// moving with u under the centre; history `key` of the previous step (read_epoch). A contact
// that is not active but was in the previous step (it has history) books the rest of its
// dissipation in `ended`.
fn surface_contact(i: u32, key: u32, p: PairParamsGpu, s: f32, n_w: vec3<f32>, u: vec3<f32>, oi: vec4<f32>, vi: vec4<f32>, wi: vec4<f32>, read_epoch: u32) -> WallContact {
    var out: WallContact;
    out.key = key;
    var g = ball_wall_geometry(s, n_w, oi.w, 1.0 / vi.w, vi.xyz, wi.xyz, u);
    if (sim.rolling_booked != 0u) {
        g.previous_spin_i = motion_at(MOTION_ROWS * i + 2u).xyz;
    }
    let h = hash_lookup(i, key, read_epoch);
    // with adhesion a bond holds to the pair's tensile range (bonded_active; R̄ = 2r)
    var acting: bool;
    if (ADHESION) {
        acting = bonded_active(p, g, h);
    } else {
        acting = contact_active(p, g);
    }
    if (!acting) {
        if (h.established != 0.0) {
            if (ADHESION) {
                let ended = ended_adhesive_work(p, g, h, sim.dt);
                out.ended = ended.xyz;
                out.broken = ended.w;
            } else {
                out.ended = ended_contact_work(p, g, h, sim.dt);
            }
        }
        return out;
    }
    out.touching = true;
    out.depth = oi.w - s;
    if (ADHESION) {
        out.c = adhesive_contact_force(p, g, h, sim.dt);
    } else {
        out.c = contact_force(p, g, h, sim.dt);
    }
    out.u = u;
    return out;
}

// What a scene's pair table lets the contact code leave out (`gpu::pipelines::ContactVariant`,
// set per pipeline): the one model all its pairs have (ANY_CONTACT_MODEL where they differ),
// false where no pair books energy, and the one adhesion model all its pairs have
// (ANY_ADHESION_MODEL where they differ).
override CONTACT_MODEL: u32 = ANY_CONTACT_MODEL;
override ENERGY_TRACKING: bool = true;
override ADHESION_MODEL: u32 = ANY_ADHESION_MODEL;
// Where the pairs' models differ: a bit per model (1 << MODEL_*) some pair has (every bit where
// not said), and the lowest of them.
override CONTACT_MODELS: u32 = 0xffffffffu;
override FIRST_CONTACT_MODEL: u32 = 0u;

// A pair's `model` as one of the models some pair has: the same value, written so that the
// compiler keeps only those models' laws (a scene mixing two models compiles two, not five).
fn model_of_scene(model: u32) -> u32 {
    var m = FIRST_CONTACT_MODEL;
    for (var k = 0u; k < 32u; k = k + 1u) {
        if ((CONTACT_MODELS & (1u << k)) != 0u && model == k) {
            m = k;
        }
    }
    return m;
}

// The parameters of the pair of materials a and b as the contact code reads them: the table's
// values, with what the overrides above say written in so that the compiler keeps only that
// model's law and adhesion and, without tracking, no booking code (the same values the table
// holds).
fn pair_params(a: u32, b: u32) -> PairParamsGpu {
    var p = pairs[a * sim.n_materials + b];
    if (CONTACT_MODEL != ANY_CONTACT_MODEL) {
        p.model = CONTACT_MODEL;
    } else if (CONTACT_MODELS != 0xffffffffu) {
        p.model = model_of_scene(p.model);
    }
    if (!ENERGY_TRACKING) {
        p.flags = p.flags | PAIR_FLAG_NO_ENERGY_TRACKING;
    }
    if (ADHESION_MODEL != ANY_ADHESION_MODEL) {
        p.adhesion = ADHESION_MODEL;
    }
    return p;
}

// Ball i (block bi, offset oi, velocity vi, spin wi) against plane `wall` number w.
fn wall_contact(i: u32, w: u32, wall: WallGpu, bi: vec4<i32>, oi: vec4<f32>, vi: vec4<f32>, wi: vec4<f32>, read_epoch: u32) -> WallContact {
    let n_w = wall.normal.xyz;
    let s = dot(n_w, relative_position(wall.block.xyz, wall.offset.xyz, bi.xyz, oi.xyz, sim.block));
    let p = pair_params(material_of(bi), u32(wall.block.w));
    let reach = (oi.w + max(contact_gap(p, oi.w), 0.0)) * 1.001;
    // the surface point under the ball's centre, relative to the rotation centre
    let from_center = relative_position(wall.center_block.xyz, wall.center_offset.xyz, bi.xyz, oi.xyz, sim.block) - n_w * s;
    let u = wall.velocity.xyz + cross(wall.omega.xyz, from_center);
    // beyond reach no contact is active; one that was in the previous step is still looked at
    // while the ball is within the step's relative travel of reach (to book its end)
    if (s > reach + 1.01 * length(vi.xyz - u) * sim.dt) { return WallContact(); }
    var out = surface_contact(i, WALL_KEY_BIT | w, p, s, n_w, u, oi, vi, wi, read_epoch);
    out.lever = relative_position(wall.load_block.xyz, wall.load_offset.xyz, bi.xyz, oi.xyz, sim.block) - n_w * s;
    return out;
}

// Ball i against mesh m at time index t: the view, the pair, the reach of the contact search
// and the candidate range [x, y) of the binned triangle ids (empty for a ball far from the
// mesh, which then has no contact with it).
struct MeshBall {
    view: MeshView,
    p: PairParamsGpu,
    reach: f32,
    range: vec2<u32>,
}

// Mesh m against the ball (bi, oi, velocity vi) at time index t. The search reaches the
// step's relative travel (`mesh_travel`) beyond the contact reach, so that a contact that
// ended in this step is still found, inactive, and books its end; the view's tolerance stays
// that of the contact reach.
fn mesh_ball(m: u32, t: u32, bi: vec4<i32>, oi: vec4<f32>, vi: vec4<f32>) -> MeshBall {
    var out: MeshBall;
    let h = mesh_header(m);
    out.p = pair_params(material_of(bi), h.material);
    let contact_reach = (oi.w + max(contact_gap(out.p, oi.w), 0.0)) * MESH_REACH_SLACK;
    out.view = mesh_view(m, h, t, bi, oi, contact_reach);
    out.reach = contact_reach + mesh_travel(out.view, vi.xyz, contact_reach, sim.dt);
    out.range = mesh_candidates(out.view);
    return out;
}

// The kept contact of every near facet group of the ball with mb's mesh into `kept`, and the
// mask of those that count (shaders/mesh/contacts.wgsl). The caller calls it only where
// mb.range is not empty, and declares `kept` in a function of its own that it calls there: a
// function variable is zeroed where its function starts (MESH_GROUPS_MAX contacts, kept in
// scratch memory for their dynamic index), and most balls have no candidate.
fn mesh_ball_contacts(mb: MeshBall, kept: ptr<function, GroupContacts>) -> u32 {
    return ball_mesh_contacts(vec3<f32>(0.0), mb.reach, mb.view, mb.range.x, mb.range.y, kept);
}

// How far the ball (moving with v, at view.from_center from the mesh's rotation centre) and
// the mesh can have separated in one step within `reach` of the ball. Twin of `mesh_travel`
// in src/cpu/forces.rs.
fn mesh_travel(view: MeshView, v: vec3<f32>, reach: f32, dt: f32) -> f32 {
    return 1.01 * (length(v) + length(view.pose.velocity.xyz) + length(view.pose.omega.xyz) * (length(view.from_center) + reach)) * dt;
}

// Ball i against the kept mesh contact mc of `mesh`: back from the t = 0 frame (normal, the
// surface point under the ball), then `surface_contact` as for a plane.
fn mesh_contact(i: u32, mesh: MeshView, mc: MeshContact, p: PairParamsGpu, bi: vec4<i32>, oi: vec4<f32>, vi: vec4<f32>, wi: vec4<f32>, read_epoch: u32) -> WallContact {
    let n = mesh_to_world(mesh, mc.normal);
    let from_center = mesh.from_center - n * mc.distance;
    let u = mesh.pose.velocity.xyz + cross(mesh.pose.omega.xyz, from_center);
    var out = surface_contact(i, WALL_KEY_BIT | MESH_KEY_BIT | mc.group, p, mc.distance, n, u, oi, vi, wi, read_epoch);
    out.lever = relative_position(mesh.header.load_block.xyz, mesh.header.load_offset.xyz, bi.xyz, oi.xyz, sim.block) - n * mc.distance;
    return out;
}
