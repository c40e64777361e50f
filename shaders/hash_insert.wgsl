// Insertion into the history table being written this step. Needs module-scope
// `sim: SimParams`, `hash_write: array<HashSlot>` (read_write) and `state: StepState`.
const HASH_MAX_PROBE: u32 = 64u;

fn hash_insert(a: u32, b: u32, history: HistoryGpu, epoch: u32, count_load: bool) {
    if (count_load) {
        let n = atomicAdd(&state.inserted, 1u);
        if (n >= sim.hash_max_load) {
            atomicOr(&state.flags, OVERFLOW_HASH);
            return;
        }
    }
    var idx = contact_hash(a, b) % sim.hash_capacity;
    for (var p = 0u; p < HASH_MAX_PROBE; p = p + 1u) {
        loop {
            let t = atomicLoad(&hash_write[idx].tag);
            if (t == epoch) { break; }
            let r = atomicCompareExchangeWeak(&hash_write[idx].tag, t, epoch);
            if (r.exchanged) {
                hash_write[idx].key_a = a;
                hash_write[idx].key_b = b;
                hash_write[idx].history = history;
                return;
            }
        }
        idx = select(idx + 1u, 0u, idx + 1u == sim.hash_capacity);
    }
    atomicOr(&state.flags, OVERFLOW_HASH);
}
