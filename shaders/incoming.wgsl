// Passes `incoming_fill` and `incoming_sort` (rebuild steps only): for every particle j, the
// list slots whose partner it is (`incoming_slot`, runs at `incoming_start`, the scanned
// `incoming_count`), sorted by slot, i.e. by owner id, so the gather adds the partners' shares
// in an order that does not depend on when the list was built.
@group(0) @binding(0) var<uniform> sim: SimParams;
@group(0) @binding(1) var<storage, read> list_start: array<u32>;
@group(0) @binding(2) var<storage, read> list_partner: array<u32>;
@group(0) @binding(3) var<storage, read> incoming_start: array<u32>;
@group(0) @binding(4) var<storage, read_write> incoming_cursor: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> incoming_slot: array<u32>;
@group(0) @binding(6) var<storage, read> state: StepStateRead;

// false: `incoming_fill` (one thread per owner); true: `incoming_sort` (one per partner).
override SORT: bool = false;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= sim.n_particles || state.halt != 0u || (state.flags & OVERFLOW_LIST) != 0u) { return; }
    if (!SORT) {
        for (var k = list_start[i]; k < list_start[i + 1u]; k = k + 1u) {
            let j = list_partner[k] & ~SLOT_ACTIVE_BIT;
            incoming_slot[incoming_start[j] + atomicAdd(&incoming_cursor[j], 1u)] = k;
        }
        return;
    }
    let s = incoming_start[i];
    let e = incoming_start[i + 1u];
    for (var k = s + 1u; k < e; k = k + 1u) {
        let v = incoming_slot[k];
        var m = k;
        while (m > s && incoming_slot[m - 1u] > v) {
            incoming_slot[m] = incoming_slot[m - 1u];
            m = m - 1u;
        }
        incoming_slot[m] = v;
    }
}
