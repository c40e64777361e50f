// Pass `list_stash` (rebuild steps only, between `list_count`'s scan and `list_fill`): checks
// that the new list fits (else OVERFLOW_LIST with the slots needed, and nothing is written, so
// the step can be redone after the host grows the list), then copies what `list_fill`
// overwrites and still needs out of the way: the current list's partner words into the
// incoming entries (rebuilt later in this step), and where slots are placed their places after
// them, and the records the step reads into the slot-history table this step's forces write
// (same places).
@group(0) @binding(0) var<uniform> sim: SimParams;
@group(0) @binding(1) var<storage, read> list_next: array<u32>;
@group(0) @binding(2) var<storage, read> list_start: array<u32>;
@group(0) @binding(3) var<storage, read_write> state: StepState;
// Split arrays (group 1, `gpu::split`): list_partner, incoming (read_write), the slot-history
// table this step reads (history) and the one its forces write (history_stash, read_write).

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= sim.n_particles || state.halt != 0u) { return; }
    let total = list_next[sim.n_particles];
    if (total > sim.list_capacity) {
        atomicOr(&state.flags, OVERFLOW_LIST);
        atomicMax(&state.list_needed, total);
        return;
    }
    let read_bit = history_bit(state.step);
    for (var k = list_start[i]; k < list_start[i + 1u]; k = k + 1u) {
        let word = list_partner_word(k);
        incoming_put(k, word);
        // where slots are placed, the slot's place too (after the entries' room)
        let place = list_partner_place(k);
        if (SLOT_PLACES) {
            incoming_put(sim.list_capacity + k, place);
        }
        if ((word & read_bit) != 0u) {
            history_stash_put(place, history_at(place));
        }
    }
}
