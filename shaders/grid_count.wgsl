// Pass `grid_count`: cell of each particle and its arrival rank in the cell.
@group(0) @binding(0) var<uniform> sim: SimParams;
@group(0) @binding(1) var<storage, read> pos_block: array<vec4<i32>>;
@group(0) @binding(2) var<storage, read_write> particle_cell: array<u32>;
@group(0) @binding(3) var<storage, read_write> particle_rank: array<u32>;
@group(0) @binding(4) var<storage, read_write> cell_count: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read> state: StepStateRead;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= sim.n_particles || state.halt != 0u) { return; }
    let c = cell_index(cell_of_block(pos_block[i].xyz, sim.grid_origin, sim.cell_blocks, sim.grid_dims), sim.grid_dims);
    particle_cell[i] = c;
    particle_rank[i] = atomicAdd(&cell_count[c], 1u);
}
