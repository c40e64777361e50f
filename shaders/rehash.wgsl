// Pass `rehash` (growth of the wall-contact table, and state import): moves the live entries
// (tag == the read epoch of step `state.step`) of `hash_old` (an old two-table buffer, whose
// only such entries are in the table that step reads, or the imported records) into the table
// step `state.step` reads. Lookups are by key, so slot positions differ but every lookup
// result is the same as before.
@group(0) @binding(0) var<uniform> sim: SimParams;
@group(0) @binding(1) var<storage, read> hash_old: array<HashSlotRead>;
@group(0) @binding(2) var<storage, read_write> wall_hash: array<HashSlot>;
@group(0) @binding(3) var<storage, read_write> state: StepState;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = linear_index(gid, nwg);
    if (k >= arrayLength(&hash_old)) { return; }
    let s = hash_old[k];
    let epoch = state.step + 1u;
    if (s.tag != epoch) { return; }
    hash_insert(s.key_a, s.key_b, record_history(s.history), epoch, false, (state.step & 1u) * sim.hash_capacity);
}
