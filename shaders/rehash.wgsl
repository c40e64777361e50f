// Pass `rehash` (capacity growth only): moves the live entries (tag == read epoch) of the
// saved history table into the larger table. Lookups are by key, so slot positions differ
// but every lookup result is the same as before the growth.
@group(0) @binding(0) var<uniform> sim: SimParams;
@group(0) @binding(1) var<storage, read> hash_old: array<HashSlotRead>;
@group(0) @binding(2) var<storage, read_write> hash_write: array<HashSlot>;
@group(0) @binding(3) var<storage, read_write> state: StepState;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = linear_index(gid, nwg);
    if (k >= arrayLength(&hash_old)) { return; }
    let s = hash_old[k];
    let epoch = state.step + 1u;
    if (s.tag != epoch) { return; }
    hash_insert(s.key_a, s.key_b, s.history, epoch, false);
}
