// Pass `mesh_marks` (encoded right before `wall_loads`, in the same step, so at the same
// positions and mesh poses): for every particle a bit per mesh wall (the first 32), set where
// the ball's cell of that mesh's triangle grid lists triangles (`mesh_candidates`, as
// `mesh_ball` finds them). Only those balls can put a load on the mesh, so `wall_loads` runs its
// mesh search (one workgroup per mesh, a fixed stride of particles per thread) for them alone,
// in the same order: the same bits, the rest of the work spread over the whole device. A moving
// mesh's cell comes from the f32 part of the rotation into its frame (`rotate_blocks`), which
// another pipeline could round otherwise at a cell face; so within MARK_FACE of a face the
// neighbouring cell counts too (`near_listed_cell`), and the marks hold every ball `wall_loads`
// could find candidates for, and a few more. The marks go into `particle_cell`, which holds
// nothing between a step's list passes and the next grid count (`grid_count.wgsl` writes it
// before any pass reads it).
@group(0) @binding(0) var<uniform> sim: SimParams;
@group(0) @binding(1) var<storage, read> pos_block: array<vec4<i32>>;
@group(0) @binding(2) var<storage, read> pos_offset: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> state: StepStateRead;
@group(0) @binding(4) var<storage, read> mesh_data: array<vec4<u32>>;
@group(0) @binding(5) var<storage, read_write> marks: array<u32>;

// Within this fraction of a block of a cell face, the cell on the other side is looked at too.
const MARK_FACE: f32 = 1e-4;

// Whether the ball's cell of the view's mesh, or a neighbour across a face within MARK_FACE of
// the ball, lists triangles (`mesh_cell_range` for each, as `mesh_candidates` for the first).
fn near_listed_cell(view: MeshView) -> bool {
    let at = mesh_cell_of(view);
    let cell = at[0];
    let within = at[1];
    // the ball's offset within its block
    let f = view.ball_offset / sim.block;
    let last = vec3<i32>(view.header.grid_origin.w - 1);
    let lo = cell - select(vec3<i32>(0), vec3<i32>(1), within == vec3<i32>(0) & f < vec3<f32>(MARK_FACE));
    let hi = cell + select(vec3<i32>(0), vec3<i32>(1), within == last & f > vec3<f32>(1.0 - MARK_FACE));
    for (var x = lo.x; x <= hi.x; x = x + 1) {
        for (var y = lo.y; y <= hi.y; y = y + 1) {
            for (var z = lo.z; z <= hi.z; z = z + 1) {
                let range = mesh_cell_range(view, vec3<i32>(x, y, z));
                if (range.x < range.y) {
                    return true;
                }
            }
        }
    }
    return false;
}

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
        if (near_listed_cell(mesh_view(m, mesh_header(m), t, b, o, 0.0))) {
            bits = bits | (1u << m);
        }
    }
    marks[i] = bits;
}
