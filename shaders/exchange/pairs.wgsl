// Pass `exchange_pairs` (an exchange, `gpu::flow`; in place of `slot_import`, after the new
// list is built): a thread per particle before the exchange walks its old slots whose record
// the next step reads. A pair of survivors moves its record to the pair's slot in the new list
// (under the new storage indices; the owner's new run is sorted by the partner's id, `tag`:
// binary search) and sets that
// table's bit, as `slot_import` does; a pair out of the new list's reach has no slot and is
// left out. A survivor whose partner leaves is marked in `refresh`: its force is evaluated
// again, the others get theirs back (`exchange_keep`; `ParticleState::retain` marks the same).
@group(0) @binding(0) var<uniform> xp: ExchangeParams;
@group(0) @binding(1) var<storage, read> removed: array<u32>;
@group(0) @binding(2) var<storage, read> start_old: array<u32>;
@group(0) @binding(3) var<storage, read> list_start: array<u32>;
@group(0) @binding(4) var<storage, read_write> refresh: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read> state: StepStateRead;
// The new buffers' ids per storage index (`gpu::order`).
@group(0) @binding(6) var<storage, read> tag: array<u32>;
// Split arrays (group 1, `gpu::split`): partner_old, history_old (the old list and the table
// the next step reads, read), list_partner, history (the new ones, read_write).

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= xp.n_old || state.halt != 0u || (state.flags & OVERFLOW_LIST) != 0u) { return; }
    let bit = history_bit(state.step);
    let gone_i = is_removed(i);
    let ni = new_id(i);
    for (var k = start_old[i]; k < start_old[i + 1u]; k++) {
        let word = partner_old_word(k);
        if ((word & bit) == 0u) { continue; }
        let j = word & SLOT_PARTNER_MASK;
        let gone_j = is_removed(j);
        if (gone_i && gone_j) { continue; }
        if (gone_i) {
            atomicOr(&refresh[new_id(j)], 1u);
            continue;
        }
        if (gone_j) {
            atomicOr(&refresh[ni], 1u);
            continue;
        }
        let nj = new_id(j);
        var lo = list_start[ni];
        var hi = list_start[ni + 1u];
        let key = tag[nj];
        while (lo < hi) {
            let mid = (lo + hi) / 2u;
            if (tag[list_partner_word(mid) & SLOT_PARTNER_MASK] < key) {
                lo = mid + 1u;
            } else {
                hi = mid;
            }
        }
        if (lo < list_start[ni + 1u] && (list_partner_word(lo) & SLOT_PARTNER_MASK) == nj) {
            history_put(list_partner_place(lo), history_old_at(partner_old_place(k)));
            list_partner_word_put(lo, list_partner_word(lo) | bit);
        }
    }
}
