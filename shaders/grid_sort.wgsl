// Pass `grid_sort`: one thread per cell insertion-sorts its segment by particle id, so the
// within-cell order (and every sum over neighbours) is deterministic.
@group(0) @binding(0) var<uniform> sim: SimParams;
@group(0) @binding(1) var<storage, read> cell_start: array<u32>;
@group(0) @binding(2) var<storage, read_write> sorted_ids: array<u32>;
@group(0) @binding(3) var<storage, read> state: StepStateRead;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let c = linear_index(gid, nwg);
    if (c >= sim.n_cells || state.halt != 0u) { return; }
    let s = cell_start[c];
    let e = cell_start[c + 1u];
    for (var k = s + 1u; k < e; k = k + 1u) {
        let v = sorted_ids[k];
        var m = k;
        while (m > s && sorted_ids[m - 1u] > v) {
            sorted_ids[m] = sorted_ids[m - 1u];
            m = m - 1u;
        }
        sorted_ids[m] = v;
    }
}
