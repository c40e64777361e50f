// Pass `wall_loads`: force and torque the contacts put on each wall in the last step of a batch
// (encoded between that step's `forces` and `advance`, so it sees the same positions,
// velocities and history). One workgroup per plane wall, then one per mesh wall (w = n_walls +
// mesh index); each thread sums a fixed stride of particles, then a tree sum in a fixed order:
// deterministic. loads[2w] = (force on the wall, 0), loads[2w + 1] = (torque about the wall's
// load point, 0). Ghosts of a decomposed run are left out (their owners count them).
const LOADS_SIZE: u32 = 256u;
@group(0) @binding(0) var<uniform> sim: SimParams;
@group(0) @binding(1) var<storage, read> pos_block: array<vec4<i32>>;
@group(0) @binding(2) var<storage, read> pos_offset: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> pairs: array<PairParamsGpu>;
@group(0) @binding(4) var<storage, read> walls: array<WallGpu>;
// Wall and mesh contact history, both tables (`hash_lookup.wgsl`; read only here).
@group(0) @binding(5) var<storage, read_write> wall_hash: array<HashSlot>;
@group(0) @binding(6) var<storage, read> state: StepStateRead;
@group(0) @binding(7) var<storage, read_write> loads: array<vec4<f32>>;
@group(0) @binding(8) var<storage, read> mesh_data: array<vec4<u32>>;
// Per particle, a bit per mesh wall (the first 32): the ball's cell of that mesh lists
// triangles (`mesh_marks.wgsl`, run right before in the same step; in `particle_cell`).
@group(0) @binding(9) var<storage, read> mesh_marks: array<u32>;
// Split array (group 1, `gpu::split`): motion (per particle i, MOTION_ROWS rows: velocity,
// w = 1/m; angular velocity, w = 1/I; where rolling work is booked the spin of the previous
// force pass).

// false when the set-up has no mesh walls: the mesh code is specialised away.
override MESH_WALLS: bool = true;

var<workgroup> sum_f: array<vec3<f32>, 256>;
var<workgroup> sum_t: array<vec3<f32>, 256>;

// Particles whose rows a thread loads together before it evaluates their plane-wall contacts
// in order: their loads are in flight at once (one wait for memory per LOADS_AHEAD particles,
// where one workgroup per wall has few threads to hide it: 26 ms at 10M particles on an H100),
// and the sums keep their order and bits.
const LOADS_AHEAD: u32 = 4u;
// (the loop below is written out for four)
const_assert LOADS_AHEAD == 4u;

// A particle's position and motion rows (zero past the last particle).
struct LoadRows {
    b: vec4<i32>,
    o: vec4<f32>,
    v: vec4<f32>,
    w: vec4<f32>,
}

fn load_rows(i: u32) -> LoadRows {
    var r: LoadRows;
    if (i < sim.n_particles) {
        r = LoadRows(pos_block[i], pos_offset[i], motion_at(MOTION_ROWS * i), motion_at(MOTION_ROWS * i + 1u));
    }
    return r;
}

// Particle i's contact with plane wall w added to the wall's force f and torque t.
fn add_plane_load(f: ptr<function, vec3<f32>>, t: ptr<function, vec3<f32>>, i: u32, w: u32, wall: WallGpu, r: LoadRows, read_epoch: u32) {
    if (i >= sim.n_particles || is_ghost(r.b)) { return; }
    let wc = wall_contact(i, w, wall, r.b, r.o, r.v, r.w, read_epoch);
    if (wc.touching) {
        *f = *f + wc.c.force_j;
        *t = *t + cross(wc.lever, wc.c.force_j) + wc.c.torque_j;
    }
}

// Particle i's contacts with mesh m added to the mesh's force f and torque t.
fn add_mesh_load(f: ptr<function, vec3<f32>>, t: ptr<function, vec3<f32>>, i: u32, m: u32, time_index: u32, r: LoadRows, read_epoch: u32) {
    if (i >= sim.n_particles || is_ghost(r.b)) { return; }
    let mb = mesh_ball(m, time_index, r.b, r.o, r.v);
    if (mb.range.x < mb.range.y) {
        add_mesh_contact_loads(f, t, i, mb, r, read_epoch);
    }
}

// The same for a ball with candidate triangles of the mesh (`mesh_ball_contacts`: its own
// function, so that the kept list is zeroed only for such a ball).
fn add_mesh_contact_loads(f: ptr<function, vec3<f32>>, t: ptr<function, vec3<f32>>, i: u32, mb: MeshBall, r: LoadRows, read_epoch: u32) {
    var kept: GroupContacts;
    let survivors = mesh_ball_contacts(mb, &kept);
    for (var k = 0u; k < kept.count; k = k + 1u) {
        if ((survivors & (1u << k)) == 0u) { continue; }
        let wc = mesh_contact(i, mb.view, kept_contact(vec3<f32>(0.0), kept.items[k]), mb.p, r.b, r.o, r.v, r.w, read_epoch);
        if (wc.touching) {
            *f = *f + wc.c.force_j;
            *t = *t + cross(wc.lever, wc.c.force_j) + wc.c.torque_j;
        }
    }
}

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let w = wid.x;
    let time_index = state.step + 1u;
    let read_epoch = state.step + 1u;
    var f = vec3<f32>(0.0);
    var t = vec3<f32>(0.0);
    // thread lid.x takes particles lid.x, lid.x + LOADS_SIZE, … in that order (plane walls:
    // LOADS_AHEAD at a time)
    if (w < sim.n_walls) {
        let wall = wall_at(time_index, w);
        for (var i = lid.x; i < sim.n_particles; i = i + LOADS_AHEAD * LOADS_SIZE) {
            let r0 = load_rows(i);
            let r1 = load_rows(i + LOADS_SIZE);
            let r2 = load_rows(i + 2u * LOADS_SIZE);
            let r3 = load_rows(i + 3u * LOADS_SIZE);
            add_plane_load(&f, &t, i, w, wall, r0, read_epoch);
            add_plane_load(&f, &t, i + LOADS_SIZE, w, wall, r1, read_epoch);
            add_plane_load(&f, &t, i + 2u * LOADS_SIZE, w, wall, r2, read_epoch);
            add_plane_load(&f, &t, i + 3u * LOADS_SIZE, w, wall, r3, read_epoch);
        }
    } else if (MESH_WALLS) {
        let m = w - sim.n_walls;
        // (one at a time: a ball's mesh search is a chain of loads of its own, and four copies
        // of it would quadruple the pass's code); only the balls `mesh_marks` marked, whose cell
        // lists triangles: the others add nothing, so the sums keep their order and bits
        for (var i = lid.x; i < sim.n_particles; i = i + LOADS_SIZE) {
            if (m >= 32u || (mesh_marks[i] & (1u << m)) != 0u) {
                add_mesh_load(&f, &t, i, m, time_index, load_rows(i), read_epoch);
            }
        }
    }
    sum_f[lid.x] = f;
    sum_t[lid.x] = t;
    for (var s = LOADS_SIZE / 2u; s > 0u; s = s / 2u) {
        workgroupBarrier();
        if (lid.x < s) {
            sum_f[lid.x] = sum_f[lid.x] + sum_f[lid.x + s];
            sum_t[lid.x] = sum_t[lid.x] + sum_t[lid.x + s];
        }
    }
    if (lid.x == 0u) {
        loads[2u * w] = vec4<f32>(sum_f[0], 0.0);
        loads[2u * w + 1u] = vec4<f32>(sum_t[0], 0.0);
    }
}
