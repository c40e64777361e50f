// Pass `mesh_marks` (encoded right before `wall_loads`, in the same step, so at the same
// positions and mesh poses): for every particle a bit per mesh wall (the first 32), set where
// the ball's cell of that mesh's triangle grid lists triangles (`mesh_candidates`, as
// `mesh_ball` finds them). Only those balls can put a load on the mesh, so `wall_loads` runs its
// mesh search (one workgroup per mesh, a fixed stride of particles per thread) for them alone,
// in the same order: the same bits, the rest of the work spread over the whole device. The
// marks go into `particle_cell`, which holds nothing between a step's list passes and the next
// grid count (`grid_count.wgsl` writes it before any pass reads it).
@group(0) @binding(0) var<uniform> sim: SimParams;
@group(0) @binding(1) var<storage, read> pos_block: array<vec4<i32>>;
@group(0) @binding(2) var<storage, read> pos_offset: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> state: StepStateRead;
@group(0) @binding(4) var<storage, read> mesh_data: array<vec4<u32>>;
@group(0) @binding(5) var<storage, read_write> marks: array<u32>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= sim.n_particles) { return; }
    let b = pos_block[i];
    let o = pos_offset[i];
    // the time index of `wall_loads`
    let t = state.step + 1u;
    var bits = 0u;
    for (var m = 0u; m < min(sim.n_meshes, 32u); m = m + 1u) {
        // (the reach sets only the view's tolerance, not the ball's cell)
        let range = mesh_candidates(mesh_view(m, mesh_header(m), t, b, o, 0.0));
        if (range.x < range.y) {
            bits = bits | (1u << m);
        }
    }
    marks[i] = bits;
}
