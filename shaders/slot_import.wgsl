// Pass `slot_import` (state import only, after the list is built): one thread per imported
// ball-pair record (storage indices of owner and partner, the owner of the lower id) finds the
// pair's slot in the owner's run (sorted by the partner's id, `tag`: binary search), writes the record into the slot-history table the next step
// reads and sets that table's bit in the slot's partner word. A pair outside the list's reach
// cannot be in contact and has no slot; its record is left out (as the CPU's `seed` does).
@group(0) @binding(0) var<uniform> sim: SimParams;
@group(0) @binding(1) var<storage, read> list_start: array<u32>;
@group(0) @binding(2) var<storage, read> records: array<PairRecord>;
@group(0) @binding(3) var<storage, read> state: StepStateRead;
@group(0) @binding(4) var<storage, read> tag: array<u32>;
// Split arrays (group 1, `gpu::split`): list_partner and the slot-history table the next step
// reads (history), both read_write.

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let r = linear_index(gid, nwg);
    if (r >= arrayLength(&records) || state.halt != 0u || (state.flags & OVERFLOW_LIST) != 0u) { return; }
    let rec = records[r];
    if (rec.owner >= sim.n_particles) { return; }
    var lo = list_start[rec.owner];
    var hi = list_start[rec.owner + 1u];
    let key = tag[rec.partner];
    while (lo < hi) {
        let mid = (lo + hi) / 2u;
        if (tag[list_partner_word(mid) & SLOT_PARTNER_MASK] < key) {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    if (lo < list_start[rec.owner + 1u] && (list_partner_word(lo) & SLOT_PARTNER_MASK) == rec.partner) {
        history_put(list_partner_place(lo), rec.history);
        list_partner_word_put(lo, list_partner_word(lo) | history_bit(state.step));
    }
}
