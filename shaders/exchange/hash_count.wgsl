// Pass `exchange_hash_count` (an exchange, `gpu::flow`): counts the wall and mesh contacts the
// next step reads (tag = xp.epoch) whose particle stays, so the host sizes the new table as a
// state import sizes it for the same records.
@group(0) @binding(0) var<uniform> xp: ExchangeParams;
@group(0) @binding(1) var<storage, read> removed: array<u32>;
@group(0) @binding(2) var<storage, read> hash_old: array<HashSlotRead>;
@group(0) @binding(3) var<storage, read_write> count: array<atomic<u32>>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = linear_index(gid, nwg);
    if (k >= arrayLength(&hash_old)) { return; }
    let s = hash_old[k];
    if (s.tag != xp.epoch || is_removed(s.key_a)) { return; }
    atomicAdd(&count[0], 1u);
}
