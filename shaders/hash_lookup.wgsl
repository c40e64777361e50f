// History-table lookup (needs `sim` and `hash_read` bindings): the history of contact (a, b)
// written in the previous step, zero for a new contact.
fn hash_lookup(a: u32, b: u32, epoch: u32) -> HistoryGpu {
    let mask = sim.hash_capacity - 1u;
    var idx = contact_hash(a, b) & mask;
    for (var p = 0u; p < sim.hash_capacity; p = p + 1u) {
        let s = hash_read[idx];
        if (s.tag != epoch) { break; }
        if (s.key_a == a && s.key_b == b) { return s.history; }
        idx = (idx + 1u) & mask;
    }
    return HistoryGpu();
}
