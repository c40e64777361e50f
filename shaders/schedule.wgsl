// Pass `schedule` (rebuild steps only, after the list and its incoming index): which thread of
// a workgroup of `forces` takes which of the workgroup's particles. `forces` runs a thread per
// owner, and the threads of a SIMD group (a warp, or llvmpipe's 8 lanes) wait for the longest
// run among them; pairs belong to the particle with the lower id, so where ids are scattered
// over space (any generated fill) the runs are binomial, and a group's longest is well above
// its mean. Here each workgroup's particles are sorted by their run length, longest first
// (ties by storage index), so that the threads of one SIMD group take runs of about one
// length. A particle's contacts, their sums and the workgroup's work sums (`forces.wgsl` adds
// them at the particle's place in the workgroup, not the thread's) do not depend on which
// thread evaluates it: trajectories, energies and every output keep their bits.
//
// The order is kept in `list_start` after the run starts: [n + 1 + k] is the particle thread k
// of `forces` takes. Any list gives a valid order: each workgroup's particles are permuted
// among themselves, so an order left from an earlier list only costs time. The pass also sums
// the longest run of every SIMD group of SCHEDULE_LANES threads, in storage order and in the
// schedule's (`StepState::schedule_plain`, `schedule_sorted`): `forces` takes the schedule only
// where it pays (`SCHEDULE_GAIN`).
@group(0) @binding(0) var<uniform> sim: SimParams;
@group(0) @binding(1) var<storage, read_write> list_start: array<u32>;
@group(0) @binding(2) var<storage, read_write> state: StepState;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    if (sim.balanced == 0u) { return; }
    let i = linear_index(gid, nwg);
    let n = sim.n_particles;
    var run = 0u;
    if (i < n) {
        run = list_start[i + 1u] - list_start[i];
    }
    let key = schedule_key(run, i < n);
    schedule_keys[lid.x] = key;
    workgroupBarrier();
    if (i >= n) { return; }
    // the rank among the workgroup's particles (`schedule_rank.wgsl`)
    let rank = schedule_rank(lid.x);
    list_start[n + 1u + (i - lid.x) + rank] = i;
    // the longest run of each SIMD group: in storage order the least key of its threads, in
    // the schedule's that of the group's first thread
    if (lid.x % SCHEDULE_LANES == 0u) {
        var least = key;
        for (var m = lid.x + 1u; m < lid.x + SCHEDULE_LANES; m = m + 1u) {
            least = min(least, schedule_keys[m]);
        }
        atomicAdd(&state.schedule_plain, SCHEDULE_LONGEST - least);
    }
    if (rank % SCHEDULE_LANES == 0u) {
        atomicAdd(&state.schedule_sorted, SCHEDULE_LONGEST - key);
    }
}
