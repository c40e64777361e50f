// Pass `list_clear` (rebuild steps only): zero the cell counts and the incoming counts and
// cursors.
@group(0) @binding(0) var<uniform> sim: SimParams;
@group(0) @binding(1) var<storage, read_write> cell_count: array<u32>;
@group(0) @binding(2) var<storage, read_write> incoming_count: array<u32>;
@group(0) @binding(3) var<storage, read_write> incoming_cursor: array<u32>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = linear_index(gid, nwg);
    if (k <= sim.n_cells) { cell_count[k] = 0u; }
    if (k <= sim.n_particles) { incoming_count[k] = 0u; }
    if (k < sim.n_particles) {
        incoming_cursor[k] = 0u;
    }
}
