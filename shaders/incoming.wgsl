// Passes `incoming_fill` and `incoming_sort` (rebuild steps only): for every particle j, the
// list slots whose partner it is (entries of `incoming`, runs at `incoming_start`, the scanned
// `incoming_count`), each with the slot's SLOT_ACTIVE_BIT, sorted by slot, i.e. by owner id, so
// the gather adds the partners' shares in an order that does not depend on when the list was
// built. `incoming_sort` also writes each slot's position among the entries (from
// `list_capacity` on: the force pass updates an entry's active bit through it) and makes the
// new run starts current (`list_next` → `list_start`).
@group(0) @binding(0) var<uniform> sim: SimParams;
@group(0) @binding(1) var<storage, read> list_next: array<u32>;
@group(0) @binding(2) var<storage, read> incoming_start: array<u32>;
@group(0) @binding(3) var<storage, read_write> incoming_cursor: array<atomic<u32>>;
@group(0) @binding(4) var<storage, read_write> list_start: array<u32>;
@group(0) @binding(5) var<storage, read> state: StepStateRead;
// Split arrays (group 1, `gpu::split`): list_partner, incoming (read_write).

// false: `incoming_fill` (one thread per owner); true: `incoming_sort` (one per partner).
override SORT: bool = false;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= sim.n_particles || state.halt != 0u || (state.flags & OVERFLOW_LIST) != 0u) { return; }
    if (!SORT) {
        for (var k = list_next[i]; k < list_next[i + 1u]; k = k + 1u) {
            let w = list_partner_at(k);
            let j = w & SLOT_PARTNER_MASK;
            incoming_put(incoming_start[j] + atomicAdd(&incoming_cursor[j], 1u), k | (w & SLOT_ACTIVE_BIT));
        }
        return;
    }
    let s = incoming_start[i];
    let e = incoming_start[i + 1u];
    for (var k = s + 1u; k < e; k = k + 1u) {
        let v = incoming_at(k);
        var m = k;
        while (m > s && (incoming_at(m - 1u) & ~SLOT_ACTIVE_BIT) > (v & ~SLOT_ACTIVE_BIT)) {
            incoming_put(m, incoming_at(m - 1u));
            m = m - 1u;
        }
        incoming_put(m, v);
    }
    for (var k = s; k < e; k = k + 1u) {
        incoming_put(sim.list_capacity + (incoming_at(k) & ~SLOT_ACTIVE_BIT), k);
    }
    list_start[i] = list_next[i];
    if (i == 0u) { list_start[sim.n_particles] = list_next[sim.n_particles]; }
}
