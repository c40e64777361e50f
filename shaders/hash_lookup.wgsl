// History-table lookup (needs `sim` and `hash_read` bindings): the history of contact (a, b)
// written in the previous step, zero for a new contact.
fn hash_lookup(a: u32, b: u32, epoch: u32) -> HistoryGpu {
    var idx = contact_hash(a, b) % sim.hash_capacity;
    for (var p = 0u; p < sim.hash_capacity; p = p + 1u) {
        let s = hash_read[idx];
        if (s.tag != epoch) { break; }
        if (s.key_a == a && s.key_b == b) { return s.history; }
        idx = select(idx + 1u, 0u, idx + 1u == sim.hash_capacity);
    }
    return HistoryGpu();
}
