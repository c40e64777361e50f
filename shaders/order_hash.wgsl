// Pass `order_hash` (`gpu::order`, between stages 4 and 5 of `order.wgsl` and before its stage
// 11; only in a scene with plane or mesh walls): the wall-contact records the step reads (tag =
// its read epoch, in the table it reads) re-keyed from the old storage index to the new one
// (`particle_rank`). Keys must never mix, so the records go through the other table first:
//  0 each record inserted under its new key into the table this step's forces will write
//    (its slots of other epochs are free); one that finds no slot sets `renumber_skip`, and the
//    step does not renumber;
//  1 after a skip, those copies dropped again;
//  2 the records under their old keys dropped from the table the step reads;
//  3 the copies moved into it (each dropped from the other table once placed; one that finds no
//    slot raises OVERFLOW_HASH, and the table grows as for the force pass, taking every record of
//    the read epoch from both tables, all under new keys: `gpu::capacity`).
@group(0) @binding(0) var<uniform> sim: SimParams;
@group(0) @binding(1) var<uniform> stage: vec4<u32>;
@group(0) @binding(2) var<storage, read_write> state: StepState;
@group(0) @binding(3) var<storage, read_write> wall_hash: array<HashSlot>;
@group(0) @binding(4) var<storage, read> particle_rank: array<u32>;

fn renumber_pending() -> bool {
    return sim.renumber_every != 0u && state.step != 0u && (state.step % sim.renumber_every) == 0u
        && state.halt == 0u && state.renumbered != state.step + 1u;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = linear_index(gid, nwg);
    if (k >= sim.hash_capacity || !renumber_pending()) { return; }
    let e = state.step + 1u;
    let skipped = atomicLoad(&state.renumber_skip) == e;
    let read_at = (state.step & 1u) * sim.hash_capacity + k;
    let write_base = ((state.step + 1u) & 1u) * sim.hash_capacity;
    let write_at = write_base + k;
    switch stage.x {
        case 0u: {
            if (skipped || atomicLoad(&wall_hash[read_at].tag) != e) { return; }
            let new_key = particle_rank[wall_hash[read_at].key_a];
            if (!hash_try_insert(new_key, wall_hash[read_at].key_b, wall_hash[read_at].history, e, write_base)) {
                atomicStore(&state.renumber_skip, e);
            }
        }
        case 1u: {
            if (skipped && atomicLoad(&wall_hash[write_at].tag) == e) {
                atomicStore(&wall_hash[write_at].tag, 0u);
            }
        }
        case 2u: {
            if (!skipped && atomicLoad(&wall_hash[read_at].tag) == e) {
                atomicStore(&wall_hash[read_at].tag, 0u);
            }
        }
        case 3u: {
            if (skipped || atomicLoad(&wall_hash[write_at].tag) != e) { return; }
            if (hash_try_insert(wall_hash[write_at].key_a, wall_hash[write_at].key_b, wall_hash[write_at].history, e, (state.step & 1u) * sim.hash_capacity)) {
                atomicStore(&wall_hash[write_at].tag, 0u);
            } else {
                atomicOr(&state.flags, OVERFLOW_HASH);
            }
        }
        default: {}
    }
}
