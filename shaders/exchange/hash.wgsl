// Pass `exchange_hash` (an exchange, `gpu::flow`): `rehash` across an exchange. The wall and
// mesh contacts of the old table that the next step reads (tag = the read epoch of step
// `state.step`) and whose particle stays go into the new table under the particle's new id;
// those of removed particles are dropped (`ParticleState::retain`). Lookups are by key, so
// the slot order does not matter.
@group(0) @binding(0) var<uniform> sim: SimParams;
@group(0) @binding(1) var<uniform> xp: ExchangeParams;
@group(0) @binding(2) var<storage, read> removed: array<u32>;
@group(0) @binding(3) var<storage, read> hash_old: array<HashSlotRead>;
@group(0) @binding(4) var<storage, read_write> wall_hash: array<HashSlot>;
@group(0) @binding(5) var<storage, read_write> state: StepState;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = linear_index(gid, nwg);
    if (k >= arrayLength(&hash_old)) { return; }
    let s = hash_old[k];
    let epoch = state.step + 1u;
    if (s.tag != epoch) { return; }
    let below = removed_below(s.key_a);
    if (below < xp.n_removed && removed[below] == s.key_a) { return; }
    hash_insert(s.key_a - below, s.key_b, record_history(s.history), epoch, false, (state.step & 1u) * sim.hash_capacity);
}
