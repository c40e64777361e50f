// Passes `incoming_fill`, `incoming_sort` and `incoming_map` (rebuild steps only): for every
// particle j, the list slots whose partner it is (entries of `incoming`: the slot's place,
// `gpu::split::SplitLayout::places`, which is the slot itself unless slots are placed; runs at
// `incoming_start`, the scanned `incoming_count`), each with the slot's SLOT_ACTIVE_BIT, sorted
// by the owner's id (`tag`; the storage order is the cells', `gpu::order`), so the gather adds
// the partners' shares in an order that depends neither on when the list was built nor on where
// the particles are stored. `incoming_fill` writes each entry's sort key (its owner's id) at
// `list_capacity` + the entry's position; `incoming_sort` sorts the entries of each particle by
// it and makes the new run starts current (`list_next` → `list_start`); `incoming_map`, once no
// key is read any more, writes each slot's position among the entries over the keys (from
// `list_capacity` on: the force pass updates an entry's active bit through it). `incoming_sort`
// also ends `StepState::old_runs` (the new runs are current).
@group(0) @binding(0) var<uniform> sim: SimParams;
@group(0) @binding(1) var<storage, read> list_next: array<u32>;
@group(0) @binding(2) var<storage, read> incoming_start: array<u32>;
@group(0) @binding(3) var<storage, read_write> incoming_cursor: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> list_start: array<u32>;
@group(0) @binding(5) var<storage, read_write> state: StepState;
@group(0) @binding(6) var<storage, read> tag: array<u32>;
// Split arrays (group 1, `gpu::split`): list_partner, incoming (read_write).

// 0: `incoming_fill` (one thread per owner); 1: `incoming_sort` and 2: `incoming_map` (one per
// partner).
override MODE: u32 = 0u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= sim.n_particles || state.halt != 0u || (atomicLoad(&state.flags) & OVERFLOW_LIST) != 0u) { return; }
    if (MODE == 0u) {
        let ti = tag[i];
        for (var k = list_next[i]; k < list_next[i + 1u]; k = k + 1u) {
            let w = list_partner_word(k);
            let j = w & SLOT_PARTNER_MASK;
            let at = incoming_start[j] + atomicAdd(&incoming_cursor[j], 1u);
            incoming_put(at, list_partner_place(k) | (w & SLOT_ACTIVE_BIT));
            incoming_put(sim.list_capacity + at, ti);
        }
        return;
    }
    let s = incoming_start[i];
    let e = incoming_start[i + 1u];
    if (MODE == 2u) {
        for (var k = s; k < e; k = k + 1u) {
            incoming_put(sim.list_capacity + (incoming_at(k) & ~SLOT_ACTIVE_BIT), k);
        }
        return;
    }
    // an owner has one slot per partner: the keys of a particle's entries differ
    let c = sim.list_capacity;
    for (var k = s + 1u; k < e; k = k + 1u) {
        let v = incoming_at(k);
        let key = incoming_at(c + k);
        var m = k;
        while (m > s && incoming_at(c + m - 1u) > key) {
            incoming_put(m, incoming_at(m - 1u));
            incoming_put(c + m, incoming_at(c + m - 1u));
            m = m - 1u;
        }
        incoming_put(m, v);
        incoming_put(c + m, key);
    }
    list_start[i] = list_next[i];
    if (i == 0u) {
        list_start[sim.n_particles] = list_next[sim.n_particles];
        // the runs are laid out by the new indices from here on (`order.wgsl`)
        state.old_runs = 0u;
    }
}
