// Pass `forces`: one thread per particle i evaluates the contacts it owns, each once: its
// half-list pairs (i, j > i, in partner-id order), then the plane walls, then the mesh walls.
// It writes their sum on i to `force` (the partner's share of an active pair goes to the
// pair's slot in `shares`, which `total_force` adds in `kick_drift`/`kick`), the history (pairs:
// in their list slots; walls and meshes: the wall-contact table) and the energies; the work of
// the step is summed per workgroup (`work_step`). It writes only the history table it does not
// read and that table's bit in the partner words, and its other writes are a function of what
// it reads, so it can be run again after an overflow (`gpu::capacity`).
@group(0) @binding(0) var<uniform> sim: SimParams;
@group(0) @binding(1) var<storage, read> pos_block: array<vec4<i32>>;
@group(0) @binding(2) var<storage, read> pos_offset: array<vec4<f32>>;
// Per workgroup of WORKGROUP_SIZE particles: the slip, dashpot, stiffness and wall work of the
// contacts they own in this step (the next `kick_drift` or `kick` folds it into the workgroup's
// Kahan pairs, `work_fold.wgsl`). With ADHESION it holds twice as many rows: row
// n_groups + wg is the workgroup's (surface energy of this pass, bond-break work of this step,
// 0, 0) (`adhesion_row`).
@group(0) @binding(3) var<storage, read_write> work_step: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> pairs: array<PairParamsGpu>;
@group(0) @binding(5) var<storage, read> walls: array<WallGpu>;
// n + 1 run starts, then the particle each thread takes (`schedule.wgsl`).
@group(0) @binding(6) var<storage, read> list_start: array<u32>;
// Wall and mesh contact history: two tables, step s reads table s % 2 and writes the other.
@group(0) @binding(7) var<storage, read_write> wall_hash: array<HashSlot>;
@group(0) @binding(8) var<storage, read_write> state: StepState;
@group(0) @binding(9) var<storage, read> mesh_data: array<vec4<u32>>;
// Split arrays (group 1, `gpu::split`; `NAME_at(k)`, `NAME_put(k, v)`):
// - motion (read): per particle i, MOTION_ROWS rows: velocity (w = 1/m), angular velocity
//   (w = 1/I), and where rolling work is booked (MOTION_ROWS = 3) the angular velocity of the
//   previous force pass;
// - force (read_write): per particle i, [2i] force (w = strain energy), [2i + 1] torque (w =
//   contacts owned);
// - list_partner (read_write): the partner of each slot with its flags: SLOT_ACTIVE_BIT while
//   the contact is active (this pass sets it), SLOT_HISTORY_BIT0/1 while the slot's record in
//   that table is valid (this pass sets or clears the bit of the table it writes). Written only
//   when a flag changes. Where slots are placed (SLOT_PLACES), each slot's word, record, share
//   and incoming-map entry are at its place (`slot_place_in_pass`); else at the slot itself;
// - slot_read, slot_write: pair history per list slot, the table this step reads (its records
//   are valid where the partner word carries `history_bit(step)`) and the one it writes
//   (ping-pong by step parity);
// - shares (read_write): per list slot, the force and torque on the partner, written only while
//   the slot's contact is active;
// - incoming (read_write): [0, list_capacity) incoming entries (slot | SLOT_ACTIVE_BIT while
//   active), by partner; [list_capacity, 2 list_capacity) each slot's position among them
//   (`incoming.wgsl`). This pass copies a slot's active bit into its entry when the bit changes.

// false for the initial force evaluation before step 0 (no history, no dissipation).
override WRITE_HISTORY: bool = true;
// false when the set-up has no mesh walls: the mesh code is specialised away.
override MESH_WALLS: bool = true;
// true: loads are issued as early as they can be (`GpuContext::force_early_loads`,
// TALUS_GPU_EARLY_LOADS): the thread's schedule entry beside the test whether the schedule
// pays; the next slot's partner word while this slot is evaluated, and the partner's velocity
// and spin and the slot's record beside the partner's position, not after the overlap test.
// The same values, so the same bits; a slot out of reach reads the partner's motion for
// nothing (cached: the partner's own thread reads it too).
override EARLY_LOADS: bool = false;
// true: the particle's own position, velocity and spin, and its pair with a mesh, are read again
// at each contact (`own_*`) rather than kept in registers through the loops over its contacts
// (`GpuContext::reload_own`, TALUS_GPU_RELOAD_OWN; by default on a GPU, not on a CPU device). A
// GPU keeps more threads resident with fewer registers and serves the reads from its L1 cache;
// AMD's compiler counts 80 VGPRs for the bed's force pass instead of 96, and 96 instead of 112
// with mesh walls. The same values, so the same bits.
override RELOAD_OWN: bool = true;

// The particle's own row `kept` (read before the loops), or with RELOAD_OWN the same row read
// again here.
fn own_block(i: u32, kept: vec4<i32>) -> vec4<i32> {
    if (RELOAD_OWN) {
        return pos_block[i];
    }
    return kept;
}

fn own_offset(i: u32, kept: vec4<f32>) -> vec4<f32> {
    if (RELOAD_OWN) {
        return pos_offset[i];
    }
    return kept;
}

// The parameters of the particle's pair with mesh material `material`: `kept` (read before the
// mesh's contacts), or with RELOAD_OWN read again here.
fn own_mesh_pair(i: u32, material: u32, kept: PairParamsGpu) -> PairParamsGpu {
    if (RELOAD_OWN) {
        return pair_params(material_of(pos_block[i]), material);
    }
    return kept;
}

// Row `row` (0: velocity, 1: spin) of the particle's motion.
fn own_motion(i: u32, row: u32, kept: vec4<f32>) -> vec4<f32> {
    if (RELOAD_OWN) {
        return motion_at(MOTION_ROWS * i + row);
    }
    return kept;
}

// A contact overlap beyond OVERLAP_MAX_FRACTION of radius `r` stops the run (BLOWUP_OVERLAP,
// particle i; twin of the CPU's `Owned::overlap` check).
fn check_overlap(i: u32, depth: f32, r: f32) {
    if (depth > OVERLAP_MAX_FRACTION * r) {
        atomicOr(&state.blowup_what, BLOWUP_OVERLAP);
        atomicMax(&state.blowup_particle, ~i);
        atomicOr(&state.flags, BLOWUP);
    }
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
    surface: f32,       // ADHESION: surface energy of the owned contacts
    bond_break: f32,    // ADHESION: energy of the owned bonds that broke in this step
}

// The owner's share of a contact: force, torque, energies, count.
fn add_owned(out: ptr<function, Gathered>, c: ContactOutput) {
    (*out).force = (*out).force - c.force_j;
    (*out).torque = (*out).torque + c.torque_i;
    (*out).strain = (*out).strain + c.strain;
    (*out).contacts = (*out).contacts + 1u;
    if (ADHESION) {
        (*out).surface = (*out).surface + c.surface;
    }
    if (WRITE_HISTORY) {
        (*out).slip_work = (*out).slip_work + c.slip_work;
        (*out).dashpot_work = (*out).dashpot_work + c.dashpot_work;
        (*out).stiffness_work = (*out).stiffness_work + c.stiffness_work;
    }
}

// The rest of the last step's dissipation of a contact that ended in this pass (dashpot, slip,
// stiffness; `ended_contact_work`), booked by its owner.
fn add_ended(out: ptr<function, Gathered>, work: vec3<f32>) {
    if (WRITE_HISTORY) {
        (*out).dashpot_work = (*out).dashpot_work + work.x;
        (*out).slip_work = (*out).slip_work + work.y;
        (*out).stiffness_work = (*out).stiffness_work + work.z;
    }
}

// The same for a contact of a scene with adhesion (ended_adhesive_work: dashpot, slip,
// stiffness, bond break).
fn add_ended_adhesive(out: ptr<function, Gathered>, work: vec4<f32>) {
    add_ended(out, work.xyz);
    if (ADHESION && WRITE_HISTORY) {
        (*out).bond_break = (*out).bond_break + work.w;
    }
}

// A wall or mesh contact of ball i: the owner's share, and its history into the table the
// step writes.
fn add_wall(out: ptr<function, Gathered>, i: u32, key: u32, c: ContactOutput, write_epoch: u32) {
    add_owned(out, c);
    if (WRITE_HISTORY) {
        hash_insert(i, key, c.history, write_epoch, true, ((state.step + 1u) & 1u) * sim.hash_capacity);
    }
}

// The record at place p in the table this step reads: `early` where EARLY_LOADS loaded it
// already.
fn slot_record(p: u32, early: HistoryRecord) -> HistoryRecord {
    if (EARLY_LOADS) {
        return early;
    }
    return slot_read_at(p);
}

// The place of slot k, the m-th of the particle thread t takes (`SplitLayout::places`; k
// itself where slots are not placed): with the schedule on, for m < SCHEDULE_LONGEST, the start
// of column m of the thread's SIMD group plus its lane (`list_build.wgsl`'s
// `column_start_put`: one load all the group's threads share, where the slot's own place word
// would be a load of its own); else the slot's place word.
fn slot_place_in_pass(t: u32, k: u32, m: u32) -> u32 {
    if (SLOT_PLACES && sim.balanced != 0u && m < SCHEDULE_LONGEST) {
        let lane = t % SCHEDULE_LANES;
        return list_start[2u * sim.n_particles + 1u + t - lane + m] + lane;
    }
    return list_partner_place(k);
}

// Ball i's contacts with the mesh of mb, which has candidate triangles near it (`mesh_ball`):
// added to `out`, their history into the table the step writes. Its own function, so that the
// kept list is zeroed only for such a ball (`mesh_ball_contacts`).
fn owned_mesh_contacts(out: ptr<function, Gathered>, i: u32, mb: MeshBall, bi0: vec4<i32>, oi0: vec4<f32>, vi0: vec4<f32>, wi0: vec4<f32>, read_epoch: u32, write_epoch: u32) {
    var kept: GroupContacts;
    let survivors = mesh_ball_contacts(mb, &kept);
    if (kept.dropped > 0u) {
        // more near facet groups than a thread keeps: the host stops with an error
        atomicOr(&state.flags, OVERFLOW_MESH_GROUPS);
        atomicMax(&state.mesh_overflow, mb.view.index + 1u);
        atomicMax(&state.mesh_overflow_particle, i + 1u);
    }
    for (var k = 0u; k < kept.count; k = k + 1u) {
        if ((survivors & (1u << k)) == 0u) { continue; }
        let p = own_mesh_pair(i, mb.view.header.material, mb.p);
        let wc = mesh_contact(i, mb.view, kept_contact(vec3<f32>(0.0), kept.items[k]), p, own_block(i, bi0), own_offset(i, oi0), own_motion(i, 0u, vi0), own_motion(i, 1u, wi0), read_epoch);
        if (!wc.touching) {
            add_ended_adhesive(out, vec4<f32>(wc.ended, wc.broken));
            continue;
        }
        check_overlap(i, wc.depth, own_offset(i, oi0).w);
        add_wall(out, i, wc.key, wc.c, write_epoch);
        (*out).wall_work = (*out).wall_work - dot(wc.c.force_j, wc.u) * sim.dt;
    }
}

// The contacts particle i owns: writes its force and torque sums, the partners' shares and the
// history; returns the work of the step (slip, dashpot, stiffness, wall): none for a ghost of a
// decomposed run.
fn owned_contacts(i: u32, t: u32) -> vec4<f32> {
    let read_epoch = state.step + 1u;
    let write_epoch = state.step + 2u;
    // the particle's own state (unused with RELOAD_OWN, which reads it where it is used)
    let bi0 = pos_block[i];
    let oi0 = pos_offset[i];
    let vi0 = motion_at(MOTION_ROWS * i);
    let wi0 = motion_at(MOTION_ROWS * i + 1u);
    var out = Gathered();

    // the pairs i owns, in partner-id order; d = x_j − x_i (i < j: canonical order)
    let read_bit = history_bit(state.step);
    let write_bit = history_bit(state.step + 1u);
    // (where slots are placed, a slot's word, record, share and incoming entry are at its
    // place, `slot_place_in_pass`)
    let start = list_start[i];
    let end = list_start[i + 1u];
    var ahead = 0u;
    if (EARLY_LOADS && start < end) {
        ahead = list_partner_word_at(slot_place_in_pass(t, start, 0u));
    }
    for (var k = start; k < end; k = k + 1u) {
        var word: u32;
        if (EARLY_LOADS) {
            word = ahead;
            if (k + 1u < end) {
                ahead = list_partner_word_at(slot_place_in_pass(t, k + 1u, k + 1u - start));
            }
        } else {
            word = list_partner_word_at(slot_place_in_pass(t, k, k - start));
        }
        let bi = own_block(i, bi0);
        let oi = own_offset(i, oi0);
        let j = word & SLOT_PARTNER_MASK;
        // the slot's contact was active in the previous step (it has a record to read)
        let was_active = (word & read_bit) != 0u;
        var vj = vec4<f32>(0.0);
        var wj = vec4<f32>(0.0);
        var early = HistoryRecord();
        if (EARLY_LOADS) {
            vj = motion_at(MOTION_ROWS * j);
            wj = motion_at(MOTION_ROWS * j + 1u);
            if (was_active) {
                early = slot_read_at(slot_place_in_pass(t, k, k - start));
            }
        }
        let bj = pos_block[j];
        let oj = pos_offset[j];
        let d = pair_separation(bi.xyz, oi.xyz, bj.xyz, oj.xyz);
        let reach = (oi.w + oj.w + sim.max_rgap) * 1.001;
        var touching = dot(d, d) <= reach * reach;
        if (touching || was_active) {
            if (!EARLY_LOADS) {
                vj = motion_at(MOTION_ROWS * j);
                wj = motion_at(MOTION_ROWS * j + 1u);
            }
            let p = pair_params(material_of(bi), material_of(bj));
            let vi = own_motion(i, 0u, vi0);
            let wi = own_motion(i, 1u, wi0);
            var g = ball_ball_geometry(d, oi.w, oj.w, 1.0 / vi.w, 1.0 / vj.w, vi.xyz, wi.xyz, vj.xyz, wj.xyz);
            if (sim.rolling_booked != 0u) {
                g.previous_spin_i = motion_at(MOTION_ROWS * i + 2u).xyz;
                g.previous_spin_j = motion_at(MOTION_ROWS * j + 2u).xyz;
            }
            var h = HistoryGpu();
            if (ADHESION) {
                // a bond holds to the pair's tensile range (bonded_active, which reads the
                // record); within the list's reach (sim.max_rgap covers that range)
                if (was_active) {
                    h = record_history(slot_record(slot_place_in_pass(t, k, k - start), early));
                }
                touching = touching && bonded_active(p, g, h);
            } else {
                touching = touching && contact_active(p, g);
                if (was_active) {
                    h = record_history(slot_record(slot_place_in_pass(t, k, k - start), early));
                }
            }
            if (!touching && was_active) {
                if (ADHESION) {
                    add_ended_adhesive(&out, ended_adhesive_work(p, g, h, sim.dt));
                } else {
                    add_ended(&out, ended_contact_work(p, g, h, sim.dt));
                }
            }
            if (touching) {
                // before the law, so that d and the partner's radius are not kept through it
                check_overlap(i, oi.w + oj.w - sqrt(dot(d, d)), min(oi.w, oj.w));
                var c: ContactOutput;
                if (ADHESION) {
                    c = adhesive_contact_force(p, g, h, sim.dt);
                } else {
                    c = contact_force(p, g, h, sim.dt);
                }
                add_owned(&out, c);
                // the slot's place found again rather than kept through the law (an L1 hit,
                // against a register that bounds the threads resident)
                let written = slot_place_in_pass(t, k, k - start);
                if (WRITE_HISTORY) {
                    slot_write_put(written, history_record(c.history));
                }
                // the partner's share, added by `total_force` while the slot is marked active
                shares_put(written, PairShare(c.force_j.xy, vec2<f32>(c.force_j.z, c.torque_j.x), c.torque_j.yz));
            }
        }
        var next = (word & ~SLOT_ACTIVE_BIT) | select(0u, SLOT_ACTIVE_BIT, touching);
        if (WRITE_HISTORY) {
            next = (next & ~write_bit) | select(0u, write_bit, touching);
        }
        // flags change only when a contact starts or ends: written then only
        if (next != word) {
            let entry = slot_place_in_pass(t, k, k - start);
            list_partner_word_put_at(entry, next);
            if (((next ^ word) & SLOT_ACTIVE_BIT) != 0u) {
                incoming_put(incoming_at(sim.list_capacity + entry), entry | (next & SLOT_ACTIVE_BIT));
            }
        }
    }

    // the walls at the time of this force evaluation (time index 0 for the initial one)
    let time_index = state.step + select(0u, 1u, WRITE_HISTORY);
    for (var w = 0u; w < sim.n_walls; w = w + 1u) {
        let wc = wall_contact(i, w, wall_at(time_index, w), own_block(i, bi0), own_offset(i, oi0), own_motion(i, 0u, vi0), own_motion(i, 1u, wi0), read_epoch);
        if (!wc.touching) {
            add_ended_adhesive(&out, vec4<f32>(wc.ended, wc.broken));
            continue;
        }
        check_overlap(i, wc.depth, own_offset(i, oi0).w);
        add_wall(&out, i, WALL_KEY_BIT | w, wc.c, write_epoch);
        // the wall drives the contact point at u: its work on the ball is −F_j·u Δt
        out.wall_work = out.wall_work - dot(wc.c.force_j, wc.u) * sim.dt;
    }

    // the mesh walls at the same time: one contact per near facet group (after deduplication),
    // searched only where the ball has candidate triangles (`mesh_ball_contacts`)
    for (var m = 0u; MESH_WALLS && m < sim.n_meshes; m = m + 1u) {
        let mb = mesh_ball(m, time_index, own_block(i, bi0), own_offset(i, oi0), own_motion(i, 0u, vi0));
        if (mb.range.x < mb.range.y) {
            owned_mesh_contacts(&out, i, mb, bi0, oi0, vi0, wi0, read_epoch, write_epoch);
        }
    }

    force_put(2u * i, vec4<f32>(out.force, out.strain));
    // w: the number of contacts i owns (for the contact count of the energy reduction)
    force_put(2u * i + 1u, vec4<f32>(out.torque, f32(out.contacts)));
    if (is_ghost(own_block(i, bi0))) {
        // a ghost's contacts are booked by the rank that owns it (`gpu::decomposed`)
        adhesion_energy = vec2<f32>(0.0);
        return vec4<f32>(0.0);
    }
    adhesion_energy = vec2<f32>(out.surface, out.bond_break);
    return vec4<f32>(out.slip_work, out.dashpot_work, out.stiffness_work, out.wall_work);
}

var<workgroup> work_sum: array<vec4<f32>, WORKGROUP_SIZE>;
// ADHESION: the (surface energy, bond-break work) of the particle owned_contacts last ran for.
var<private> adhesion_energy: vec2<f32>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let t = linear_index(gid, nwg);
    // the particle this thread takes: one of its workgroup's, longest run first where the
    // schedule is on and pays (`schedule.wgsl`); `at` is the particle's place in the
    // workgroup, where its work goes, so the sums below do not depend on the thread
    var i = t;
    // EARLY_LOADS: the schedule's entry is loaded beside the test whether it pays, not after
    var scheduled = t;
    if (EARLY_LOADS && sim.balanced != 0u && t < sim.n_particles) {
        scheduled = list_start[sim.n_particles + 1u + t];
    }
    // where slots are placed (by the schedule's order, `list_fill`), the schedule is taken
    let pays = SLOT_PLACES || f32(atomicLoad(&state.schedule_sorted)) < SCHEDULE_GAIN * f32(atomicLoad(&state.schedule_plain));
    if (sim.balanced != 0u && pays && t < sim.n_particles) {
        if (EARLY_LOADS) {
            i = scheduled;
        } else {
            i = list_start[sim.n_particles + 1u + t];
        }
    }
    let at = i % WORKGROUP_SIZE;
    var work = vec4<f32>(0.0);
    adhesion_energy = vec2<f32>(0.0);
    if (i < sim.n_particles && state.halt == 0u && (atomicLoad(&state.flags) & OVERFLOW_LIST) == 0u) {
        work = owned_contacts(i, t);
    }
    let wg = t / WORKGROUP_SIZE;
    if (WRITE_HISTORY) {
        // the workgroup's work, summed in a fixed tree order (particle ids only)
        work_sum[at] = work;
        for (var s = WORKGROUP_SIZE / 2u; s > 0u; s = s / 2u) {
            workgroupBarrier();
            if (lid.x < s) {
                work_sum[lid.x] = work_sum[lid.x] + work_sum[lid.x + s];
            }
        }
        if (lid.x == 0u && wg < arrayLength(&work_step)) {
            work_step[wg] = work_sum[0];
        }
    }
    if (ADHESION) {
        // the surface energy and bond-break work, summed the same way into the adhesion row
        // (the initial evaluation writes its surface energy and no work)
        workgroupBarrier();
        work_sum[at] = vec4<f32>(adhesion_energy, 0.0, 0.0);
        for (var s = WORKGROUP_SIZE / 2u; s > 0u; s = s / 2u) {
            workgroupBarrier();
            if (lid.x < s) {
                work_sum[lid.x] = work_sum[lid.x] + work_sum[lid.x + s];
            }
        }
        let n_groups = arrayLength(&work_step) / 2u;
        if (lid.x == 0u && wg < n_groups) {
            work_step[n_groups + wg] = work_sum[0];
        }
    }
}
