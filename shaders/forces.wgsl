// Pass `forces`: one thread per particle i gathers all its contacts (27 neighbour cells in a
// fixed order, ids sorted within cells, then the plane walls, then the mesh walls) without
// float atomics. A ball pair is
// always evaluated in canonical order (a = min, b = max) so both threads get bit-identical
// results; only the owner (a, or the ball for a wall) writes the history and the energies.
@group(0) @binding(0) var<uniform> sim: SimParams;
@group(0) @binding(1) var<storage, read> pos_block: array<vec4<i32>>;
@group(0) @binding(2) var<storage, read> pos_offset: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> velocity: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> omega: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> force: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read_write> torque: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> dissipation: array<vec2<f32>>;
@group(0) @binding(8) var<storage, read> pairs: array<PairParamsGpu>;
@group(0) @binding(9) var<storage, read> walls: array<WallGpu>;
@group(0) @binding(10) var<storage, read> cell_start: array<u32>;
@group(0) @binding(11) var<storage, read> sorted_ids: array<u32>;
@group(0) @binding(12) var<storage, read> hash_read: array<HashSlotRead>;
@group(0) @binding(13) var<storage, read_write> hash_write: array<HashSlot>;
@group(0) @binding(14) var<storage, read_write> state: StepState;
@group(0) @binding(15) var<storage, read_write> contacts: array<u32>;
@group(0) @binding(16) var<storage, read> mesh_data: array<vec4<u32>>;

// false for the initial force evaluation before step 0 (no history, no dissipation).
override WRITE_HISTORY: bool = true;
// false when the set-up has no mesh walls: the mesh code is specialised away.
override MESH_WALLS: bool = true;

// Kahan-compensated add: acc = (sum, compensation).
fn kahan_add(acc: vec2<f32>, x: f32) -> vec2<f32> {
    let y = x - acc.y;
    let t = acc.x + y;
    return vec2<f32>(t, (t - acc.x) - y);
}

// What one particle's gather produces (twin of `Gathered` in src/cpu/forces.rs).
struct Gathered {
    force: vec3<f32>,
    torque: vec3<f32>,
    strain: f32,
    slip_work: f32,
    dashpot_work: f32,
    stiffness_work: f32,
    wall_work: f32,
    contacts: u32,
}

// The owner's share of contact (key_a, key_b): force, torque, energies, count, new history.
fn add_owned(out: ptr<function, Gathered>, key_a: u32, key_b: u32, c: ContactOutput, write_epoch: u32) {
    (*out).force = (*out).force - c.force_j;
    (*out).torque = (*out).torque + c.torque_i;
    (*out).strain = (*out).strain + c.strain;
    (*out).contacts = (*out).contacts + 1u;
    if (WRITE_HISTORY) {
        (*out).slip_work = (*out).slip_work + c.slip_work;
        (*out).dashpot_work = (*out).dashpot_work + c.dashpot_work;
        (*out).stiffness_work = (*out).stiffness_work + c.stiffness_work;
        hash_insert(key_a, key_b, c.history, write_epoch, true);
    }
}

// x_to − x_from with exact block arithmetic; on periodic axes the nearest image (a jump of
// one period, applied to blocks and offsets separately). Twin: `Setup::minimum_image`.
fn pair_separation(b_from: vec3<i32>, o_from: vec3<f32>, b_to: vec3<i32>, o_to: vec3<f32>) -> vec3<f32> {
    var db = b_to - b_from;
    var dof = o_to - o_from;
    if (sim.periodic != 0u) {
        let d = vec3<f32>(db) * sim.block + dof;
        let half = 0.5 * (vec3<f32>(sim.period_blocks) * sim.block + sim.period_offset);
        let periodic = axis_flags(sim.periodic);
        let jump = select(vec3<i32>(0), vec3<i32>(1), periodic & (d > half)) - select(vec3<i32>(0), vec3<i32>(1), periodic & (d < -half));
        db = db - jump * sim.period_blocks;
        dof = dof - vec3<f32>(jump) * sim.period_offset;
    }
    return vec3<f32>(db) * sim.block + dof;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= sim.n_particles || state.halt != 0u) { return; }
    let read_epoch = state.step + 1u;
    let write_epoch = state.step + 2u;
    let bi = pos_block[i];
    let oi = pos_offset[i];
    let vi = velocity[i];
    let wi = omega[i];
    let mat_i = u32(bi.w);
    let m_i = 1.0 / vi.w;
    var out = Gathered();

    // The 27 neighbour cells as 9 rows (z, y) of cells x−1..x+1, in z, y, x order (ids sorted
    // within cells). Without periodic x a row is contiguous in the sorted list: one range.
    // With periodic x the row may wrap: each of its three cells is a range of its own.
    let ci = cell_of_block(bi.xyz, sim.grid_origin, sim.cell_blocks, sim.grid_dims);
    let dims = vec3<i32>(sim.grid_dims);
    let periodic = axis_flags(sim.periodic);
    let ranges = select(1, 3, periodic.x);
    for (var dz = -1; dz <= 1; dz = dz + 1) {
        let z = neighbour_cell(ci.z, dz, dims.z, periodic.z);
        if (z < 0) { continue; }
        for (var dy = -1; dy <= 1; dy = dy + 1) {
            let y = neighbour_cell(ci.y, dy, dims.y, periodic.y);
            if (y < 0) { continue; }
            for (var r = 0; r < ranges; r = r + 1) {
                var x_lo = max(ci.x - 1, 0);
                var x_hi = min(ci.x + 1, dims.x - 1);
                if (periodic.x) {
                    x_lo = neighbour_cell(ci.x, r - 1, dims.x, true);
                    x_hi = x_lo;
                }
                let row_end = cell_start[cell_index(vec3<i32>(x_hi, y, z), sim.grid_dims) + 1u];
                for (var k = cell_start[cell_index(vec3<i32>(x_lo, y, z), sim.grid_dims)]; k < row_end; k = k + 1u) {
                    let j = sorted_ids[k];
                    if (j == i) { continue; }
                    // canonical order: a = lower id, b = higher id, d = x_b − x_a
                    let i_first = i < j;
                    let a = select(j, i, i_first);
                    let b = select(i, j, i_first);
                    let bj = pos_block[j];
                    let oj = pos_offset[j];
                    let d = select(pair_separation(bj.xyz, oj.xyz, bi.xyz, oi.xyz),
                                   pair_separation(bi.xyz, oi.xyz, bj.xyz, oj.xyz), i_first);
                    let reach = (oi.w + oj.w + sim.max_rgap) * 1.001;
                    if (dot(d, d) > reach * reach) { continue; }
                    let vj = velocity[j];
                    let wj = omega[j];
                    let p = pairs[select(u32(bj.w) * sim.n_materials + mat_i, mat_i * sim.n_materials + u32(bj.w), i_first)];
                    var g: ContactGeometry;
                    if (i_first) {
                        g = ball_ball_geometry(d, oi.w, oj.w, m_i, 1.0 / vj.w, vi.xyz, wi.xyz, vj.xyz, wj.xyz);
                    } else {
                        g = ball_ball_geometry(d, oj.w, oi.w, 1.0 / vj.w, m_i, vj.xyz, wj.xyz, vi.xyz, wi.xyz);
                    }
                    if (!contact_active(p, g)) { continue; }
                    let h = hash_lookup(a, b, read_epoch);
                    let c = contact_force(p, g, h, sim.dt);
                    if (i == a) {
                        add_owned(&out, a, b, c, write_epoch);
                    } else {
                        out.force = out.force + c.force_j;
                        out.torque = out.torque + c.torque_j;
                    }
                }
            }
        }
    }

    // the walls at the time of this force evaluation (time index 0 for the initial one)
    let time_index = state.step + select(0u, 1u, WRITE_HISTORY);
    for (var w = 0u; w < sim.n_walls; w = w + 1u) {
        let wc = wall_contact(i, w, wall_at(time_index, w), bi, oi, vi, wi, read_epoch);
        if (!wc.touching) { continue; }
        add_owned(&out, i, WALL_KEY_BIT | w, wc.c, write_epoch);
        // the wall drives the contact point at u: its work on the ball is −F_j·u Δt
        out.wall_work = out.wall_work - dot(wc.c.force_j, wc.u) * sim.dt;
    }

    // the mesh walls at the same time: one contact per near facet group (after deduplication)
    for (var m = 0u; MESH_WALLS && m < sim.n_meshes; m = m + 1u) {
        let mb = mesh_ball(m, time_index, bi, oi);
        if (mb.kept.dropped > 0u) {
            // more near facet groups than a thread keeps: the host stops with an error
            atomicOr(&state.flags, OVERFLOW_MESH_GROUPS);
            atomicMax(&state.mesh_overflow, m + 1u);
            atomicMax(&state.mesh_overflow_particle, i + 1u);
        }
        for (var k = 0u; k < mb.kept.count; k = k + 1u) {
            if ((mb.survivors & (1u << k)) == 0u) { continue; }
            let wc = mesh_contact(i, mb.view, mb.kept.items[k], mb.p, bi, oi, vi, wi, read_epoch);
            if (!wc.touching) { continue; }
            add_owned(&out, i, wc.key, wc.c, write_epoch);
            out.wall_work = out.wall_work - dot(wc.c.force_j, wc.u) * sim.dt;
        }
    }

    force[i] = vec4<f32>(out.force, out.strain);
    torque[i] = vec4<f32>(out.torque, 0.0);
    contacts[i] = out.contacts;
    if (WRITE_HISTORY) {
        let base = i * DISSIPATION_PARTS;
        dissipation[base] = kahan_add(dissipation[base], out.slip_work);
        dissipation[base + 1u] = kahan_add(dissipation[base + 1u], out.dashpot_work);
        dissipation[base + 2u] = kahan_add(dissipation[base + 2u], out.stiffness_work);
        dissipation[base + 3u] = kahan_add(dissipation[base + 3u], out.wall_work);
    }
}
