// The force pass's schedule order within a workgroup (`schedule.wgsl`, and `list_fill`, which
// lays the slots out by it where they are placed): each particle's key is its run length from
// the longest (runs of SCHEDULE_LONGEST slots or more count as one length), the threads past
// the last particle last; the rank is a counting sort of the keys, stable by storage index.

var<workgroup> schedule_keys: array<u32, WORKGROUP_SIZE>;

// The sort key of a particle with `run` list slots (`held`: a particle, not a thread past the
// last).
fn schedule_key(run: u32, held: bool) -> u32 {
    if (!held) {
        return 0xffffffffu;
    }
    return SCHEDULE_LONGEST - min(run, SCHEDULE_LONGEST);
}

// The rank of thread `lid` among its workgroup's, once every thread has written its key into
// `schedule_keys` (after a barrier).
fn schedule_rank(lid: u32) -> u32 {
    let key = schedule_keys[lid];
    var rank = 0u;
    for (var m = 0u; m < WORKGROUP_SIZE; m = m + 1u) {
        let km = schedule_keys[m];
        rank = rank + select(0u, 1u, km < key || (km == key && m < lid));
    }
    return rank;
}
