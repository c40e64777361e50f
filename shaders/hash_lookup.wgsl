// Wall-contact history lookup (needs `sim`, `state` and the `wall_hash` binding: both tables,
// table t at [t × hash_capacity, (t + 1) × hash_capacity); step s reads table s % 2): the
// history of contact (a, b) written in the previous step, zero for a new contact.
fn hash_lookup(a: u32, b: u32, epoch: u32) -> HistoryGpu {
    let base = (state.step & 1u) * sim.hash_capacity;
    var idx = contact_hash(a, b) % sim.hash_capacity;
    for (var p = 0u; p < sim.hash_capacity; p = p + 1u) {
        if (atomicLoad(&wall_hash[base + idx].tag) != epoch) { break; }
        if (wall_hash[base + idx].key_a == a && wall_hash[base + idx].key_b == b) { return record_history(wall_hash[base + idx].history); }
        idx = select(idx + 1u, 0u, idx + 1u == sim.hash_capacity);
    }
    return HistoryGpu();
}
