// Insertion into a wall-contact history table: the one at slot `base` of the `wall_hash`
// binding (the table the step writes, or for `rehash` the one it reads). Needs module-scope
// `sim: SimParams`, `wall_hash: array<HashSlot>` (read_write) and `state: StepState`.
const HASH_MAX_PROBE: u32 = 64u;

fn hash_insert(a: u32, b: u32, history: HistoryGpu, epoch: u32, count_load: bool, base: u32) {
    if (count_load) {
        let n = atomicAdd(&state.inserted, 1u);
        if (n >= sim.hash_max_load) {
            atomicOr(&state.flags, OVERFLOW_HASH);
            return;
        }
    }
    if (!hash_try_insert(a, b, history_record(history), epoch, base)) {
        atomicOr(&state.flags, OVERFLOW_HASH);
    }
}

// The insertion itself: false when no slot within HASH_MAX_PROBE is free (a slot is free when
// its tag is not `epoch`).
fn hash_try_insert(a: u32, b: u32, record: HistoryRecord, epoch: u32, base: u32) -> bool {
    var idx = contact_hash(a, b) % sim.hash_capacity;
    for (var p = 0u; p < HASH_MAX_PROBE; p = p + 1u) {
        loop {
            let t = atomicLoad(&wall_hash[base + idx].tag);
            if (t == epoch) { break; }
            let r = atomicCompareExchangeWeak(&wall_hash[base + idx].tag, t, epoch);
            if (r.exchanged) {
                wall_hash[base + idx].key_a = a;
                wall_hash[base + idx].key_b = b;
                wall_hash[base + idx].history = record;
                return true;
            }
        }
        idx = select(idx + 1u, 0u, idx + 1u == sim.hash_capacity);
    }
    return false;
}
