// Passes `list_count` and `list_fill` (rebuild steps only): the half neighbour list. Particle
// i owns its pairs with every j of a higher id (`tag`: the particles are stored in cell order,
// `gpu::order`, and every order of the physics is that of their ids) whose centres are within rᵢ + rⱼ + max_rgap + skin + 2 × list_margin (27
// grid cells). `list_count` writes the count of i into `list_next` (scanned into the new run
// starts); `list_fill` writes the partners into i's new run sorted by id, counts every pair at
// j (`incoming_count`), and carries each pair's flags and history over from the current list
// (`carry_history`; `list_stash` has copied the current list's partner words and the records
// the step reads out of the way, and checked the capacity: it raises OVERFLOW_LIST, and this
// pass writes nothing then).
@group(0) @binding(0) var<uniform> sim: SimParams;
@group(0) @binding(1) var<storage, read> pos_block: array<vec4<i32>>;
@group(0) @binding(2) var<storage, read> pos_offset: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> cell_start: array<u32>;
@group(0) @binding(4) var<storage, read> sorted_ids: array<u32>;
// n + 1: the new counts, scanned into the new run starts.
@group(0) @binding(5) var<storage, read_write> list_next: array<u32>;
// n + 1: the current list's run starts (`incoming_sort` copies `list_next` over them).
// Where slots are placed (SLOT_PLACES), `list_fill` also writes the force pass's column starts
// after the schedule (`column_start_put`).
@group(0) @binding(6) var<storage, read_write> list_start: array<u32>;
@group(0) @binding(7) var<storage, read_write> incoming_count: array<atomic<u32>>;
@group(0) @binding(8) var<storage, read_write> state: StepState;
// The id of the particle at each storage index (`gpu::order`); from n on, the old index of each
// new one after this step's renumbering (`order.wgsl`).
@group(0) @binding(9) var<storage, read> tag: array<u32>;
// Split arrays (group 1, `gpu::split`): list_partner (read_write); incoming, whose
// [0, list_start[n]) holds the current list's partner words (stashed by `list_stash`);
// history_stash, the current list's records valid for this step at their current slots
// (stashed into the table this step's forces write), and history (read_write), the table this
// step reads, at the new slots.

// The new run [ns, ne) of owner i (plain partner indices, sorted by id) gets the flags and the
// record of the same pair in i's current run (a merge of two runs sorted by id, as the CPU's
// `seed`; the storage does not move between builds, so the same pair has the same partner
// index; where this step renumbered, the current runs are still laid out by the old indices,
// the partner words already translated, `order.wgsl`): SLOT_ACTIVE_BIT (the share the next
// gather reads) and the history bit of the table this step reads, with its record moved to the
// new slot. Pairs new to the list start with no flags.
fn carry_history(i: u32, ns: u32, ne: u32) {
    let read_bit = history_bit(state.step);
    var o = i;
    if (state.old_runs == state.step + 1u) {
        o = tag[sim.n_particles + i];
    }
    var m = list_start[o];
    let oe = list_start[o + 1u];
    for (var k = ns; k < ne; k = k + 1u) {
        let j = list_partner_word(k);
        let tj = tag[j];
        var word = j;
        let place = list_partner_place(k);
        while (m < oe && tag[incoming_at(m) & SLOT_PARTNER_MASK] < tj) {
            m = m + 1u;
        }
        if (m < oe && (incoming_at(m) & SLOT_PARTNER_MASK) == j) {
            let old = incoming_at(m);
            word = j | (old & (SLOT_ACTIVE_BIT | read_bit));
            if ((old & read_bit) != 0u) {
                // the record at the current list's place of the slot (`list_stash`)
                var old_place = m;
                if (SLOT_PLACES) {
                    old_place = incoming_at(sim.list_capacity + m);
                }
                history_put(place, history_stash_at(old_place));
            }
            m = m + 1u;
        }
        list_partner_word_put(k, word);
    }
}

// SLOT_PLACES: the run lengths of the workgroup's particles in the force pass's order (the
// schedule's where it is on, `schedule_rank.wgsl`; else storage order).
var<workgroup> ranked_runs: array<u32, WORKGROUP_SIZE>;

// SLOT_PLACES, every thread of the workgroup (barriers): the rank of particle i (thread `lid`)
// in the force pass's order, with `ranked_runs` written; and the force pass's column start of
// the thread at that rank (`column_start_put`).
fn rank_runs(i: u32, lid: u32) -> u32 {
    var run = 0u;
    if (i < sim.n_particles) {
        run = list_next[i + 1u] - list_next[i];
    }
    schedule_keys[lid] = schedule_key(run, i < sim.n_particles);
    workgroupBarrier();
    var rank = lid;
    if (sim.balanced != 0u) {
        rank = schedule_rank(lid);
    }
    ranked_runs[rank] = run;
    workgroupBarrier();
    // (a workgroup of a two-dimensional dispatch past the last particle has no columns)
    let wg_first = i - lid;
    let held = wg_first < sim.n_particles && state.halt == 0u && (atomicLoad(&state.flags) & OVERFLOW_LIST) == 0u;
    if (held && sim.balanced != 0u) {
        // the force pass's thread at this rank reads column `lane` of its SIMD group here
        let lane = rank % SCHEDULE_LANES;
        column_start_put(wg_first + rank, slot_place_of(list_next[wg_first], rank - lane, lane));
    }
    return rank;
}

// SLOT_PLACES with the schedule on: for force-pass thread t, the place of the first slot in
// column (t % SCHEDULE_LANES) of its SIMD group (that of the group's first thread; the
// group's m-th column holds its threads' m-th slots in thread order, so thread t's m-th slot is
// at column m's start + its lane, for m < SCHEDULE_LONGEST: the threads sorted longest run
// first, `forces.wgsl`'s `slot_place_in_pass`). Kept after the schedule in `list_start`.
fn column_start_put(t: u32, place: u32) {
    let at = 2u * sim.n_particles + 1u + t;
    if (at < arrayLength(&list_start)) {
        list_start[at] = place;
    }
}

// SLOT_PLACES: the place of the m-th slot of the particle at `rank`, its workgroup's slots
// starting at `first`. The workgroup's particles in the force pass's order are cut into SIMD
// groups of SCHEDULE_LANES threads, whose slots follow each other; within a group the slots
// go column by column: first every thread's first slot, then the second of each thread that
// has one, and so on, each column in thread order. So a SIMD group's threads, evaluating
// their m-th contacts together, read and write consecutive records and shares. The places
// of a workgroup are a permutation of its slots.
fn slot_place_of(first: u32, rank: u32, m: u32) -> u32 {
    let group = rank - rank % SCHEDULE_LANES;
    var place = first;
    for (var r = 0u; r < group; r = r + 1u) {
        place = place + ranked_runs[r];
    }
    for (var r = group; r < group + SCHEDULE_LANES; r = r + 1u) {
        let run = ranked_runs[r];
        place = place + min(run, m) + select(0u, 1u, r < rank && run > m);
    }
    return place;
}

// false: `list_count`; true: `list_fill`.
override FILL: bool = false;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let i = linear_index(gid, nwg);
    var rank = lid.x;
    if (FILL && SLOT_PLACES) {
        rank = rank_runs(i, lid.x);
    }
    if (i >= sim.n_particles || state.halt != 0u) { return; }
    var base = 0u;
    if (FILL) {
        if ((atomicLoad(&state.flags) & OVERFLOW_LIST) != 0u) { return; }
        base = list_next[i];
        if (SLOT_PLACES) {
            // the places of i's slots first: the words below go to them (`list_partner_word_put`)
            let first = list_next[i - lid.x];
            for (var m = 0u; m < list_next[i + 1u] - base; m = m + 1u) {
                list_partner_place_put(base + m, slot_place_of(first, rank, m));
            }
        }
    }
    let bi = pos_block[i];
    let oi = pos_offset[i];
    let ti = tag[i];
    var count = 0u;
    // the 27 neighbour cells as in forces: 9 rows (z, y); a row is one range of the sorted
    // ids unless x is periodic (then each of its cells is a range of its own)
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
                    // (`same_body`: pairs of one rigid body are not listed; constant false in a
                    // scene without bodies, `shader::pass_sources`)
                    let tj = tag[j];
                    if (tj <= ti || same_body(i, j)) { continue; }
                    let oj = pos_offset[j];
                    let d = pair_separation(bi.xyz, oi.xyz, pos_block[j].xyz, oj.xyz);
                    let cut = (oi.w + oj.w + sim.max_rgap + sim.skin + 2.0 * bitcast<f32>(state.list_margin)) * 1.001;
                    if (dot(d, d) > cut * cut) { continue; }
                    if (FILL) {
                        // insertion into i's run, kept sorted by partner id
                        var m = base + count;
                        while (m > base && tag[list_partner_word(m - 1u)] > tj) {
                            list_partner_word_put(m, list_partner_word(m - 1u));
                            m = m - 1u;
                        }
                        list_partner_word_put(m, j);
                        atomicAdd(&incoming_count[j], 1u);
                    }
                    count = count + 1u;
                }
            }
        }
    }
    if (FILL) {
        carry_history(i, base, base + count);
    } else {
        list_next[i] = count;
        if (i == 0u) { list_next[sim.n_particles] = 0u; }
    }
}
