// Pass `grid_scatter`: particle ids into their cell segments (arrival order).
@group(0) @binding(0) var<uniform> sim: SimParams;
@group(0) @binding(1) var<storage, read> particle_cell: array<u32>;
@group(0) @binding(2) var<storage, read> particle_rank: array<u32>;
@group(0) @binding(3) var<storage, read> cell_start: array<u32>;
@group(0) @binding(4) var<storage, read_write> sorted_ids: array<u32>;
@group(0) @binding(5) var<storage, read> state: StepStateRead;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= sim.n_particles || state.halt != 0u) { return; }
    sorted_ids[cell_start[particle_cell[i]] + particle_rank[i]] = i;
}
