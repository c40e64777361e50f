// Pass `body_order` (scenes with rigid bodies, `gpu::order`; encoded with the stages of
// `order.wgsl` in a step that renumbers): the renumbering keeps each body's components one run
// of storage indices, in id order, and the body table pointing at them.
//  MODE 0, before `order` stage 1: each particle's cell is that of its body's centre
//  (`particle_cell`, which stage 1 counts where `sim.order_by_body` is set), so a body's
//  components share a cell and, sorted by id within it, stay one run in id order;
//  MODE 1, after stage 10 (the old index of each new one in `tag`'s second half): each new
//  index's `body_comp` row, and whether it is its body's first component, into `force` (free
//  between the step's first passes and `forces`);
//  MODE 2: the rows put back, and each body's first component (`body_int` row 0, w) set to its
//  new index.
@group(0) @binding(0) var<uniform> sim: SimParams;
@group(0) @binding(1) var<storage, read_write> state: StepState;
@group(0) @binding(2) var<storage, read_write> particle_cell: array<u32>;
// [0, n): the id at each storage index; [n, 2n): the old index of each new one.
@group(0) @binding(3) var<storage, read> tag: array<u32>;
@group(0) @binding(4) var<storage, read_write> body_int: array<vec4<i32>>;
@group(0) @binding(5) var<storage, read_write> body_comp: array<vec4<u32>>;
// Split array (group 1, `gpu::split`): force (read_write; scratch here).

override MODE: u32 = 0u;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = linear_index(gid, nwg);
    let n = sim.n_particles;
    if (k >= n || !renumber_due()) { return; }
    if (MODE == 0u) {
        let centre = body_int[BODY_INT_ROWS * body_comp[k].w].xyz;
        particle_cell[k] = cell_index(cell_of_block(centre, sim.order_origin, sim.order_cell_blocks, sim.order_dims), sim.order_dims);
    } else if (MODE == 1u) {
        let old = tag[n + k];
        let c = body_comp[old];
        let first = u32(body_int[BODY_INT_ROWS * c.w].w) == old;
        force_put(2u * k, bitcast<vec4<f32>>(c));
        force_put(2u * k + 1u, vec4<f32>(select(0.0, 1.0, first), 0.0, 0.0, 0.0));
    } else {
        let c = bitcast<vec4<u32>>(force_at(2u * k));
        body_comp[k] = c;
        if (force_at(2u * k + 1u).x != 0.0) {
            body_int[BODY_INT_ROWS * c.w].w = i32(k);
        }
    }
}
