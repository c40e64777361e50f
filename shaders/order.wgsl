// Pass `order` (`gpu::order`; encoded in the steps whose counter is a positive multiple of
// `sim.renumber_every`, which `list_plan` makes rebuild, before the grid): the particles are
// renumbered in cell order on the device. Cells of the order grid (that of skin 0, so runs with
// any skin store alike) in row-major order, by id (`tag`) within a cell. The physics keeps the
// order of ids (`list_build.wgsl`, `incoming.wgsl`), so only where the rows sit changes. One
// pipeline, the stage from a uniform, in this order:
//  0 clear the counts, 1 count per cell (then the prefix sum), 2 scatter, 3 sort each cell by
//  id, 4 the new index of each old one (`particle_rank`), [the wall-contact records re-keyed,
//  `order_hash.wgsl`], 5–10 every row gathered into `force` (free between `kick_drift` and
//  `forces`) and put back, in three rounds, the old index of each new one kept in `tag`'s second
//  half, 11 the current list's partner words translated (its runs stay where they are: `list_fill`
//  finds an owner's old run through the old index while `StepState::old_runs` says so), 12 done.
// A stage does nothing unless the step is due and not yet renumbered (a step redone after an
// overflow does not renumber twice), nor told to skip (`renumber_skip`): `renumber_due`
// (`order_due.wgsl`). With rigid bodies `body_order` (shaders/body/order.wgsl) keys each
// particle by its body's centre before stage 1 and moves the body table's particle indices
// after stage 10.
@group(0) @binding(0) var<uniform> sim: SimParams;
@group(0) @binding(1) var<uniform> stage: vec4<u32>;
@group(0) @binding(2) var<storage, read_write> state: StepState;
@group(0) @binding(3) var<storage, read_write> pos_block: array<vec4<i32>>;
@group(0) @binding(4) var<storage, read_write> pos_offset: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read_write> image: array<vec4<i32>>;
@group(0) @binding(6) var<storage, read_write> particle_cell: array<u32>;
@group(0) @binding(7) var<storage, read_write> particle_rank: array<u32>;
@group(0) @binding(8) var<storage, read_write> cell_count: array<atomic<u32>>;
@group(0) @binding(9) var<storage, read_write> sorted_ids: array<u32>;
// [0, n): the id at each storage index; [n, 2n): the old index of each new one.
@group(0) @binding(10) var<storage, read_write> tag: array<u32>;
@group(0) @binding(11) var<storage, read> list_start: array<u32>;
// Split arrays (group 1, `gpu::split`): motion, force, list_partner (read_write).

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let k = linear_index(gid, nwg);
    if (!renumber_due()) { return; }
    let n = sim.n_particles;
    let s = stage.x;
    if (s == 0u) {
        if (k <= sim.order_cells) { atomicStore(&cell_count[k], 0u); }
        return;
    }
    if (s == 3u) {
        if (k >= sim.order_cells) { return; }
        let a = atomicLoad(&cell_count[k]);
        let b = atomicLoad(&cell_count[k + 1u]);
        for (var m = a + 1u; m < b; m = m + 1u) {
            let v = sorted_ids[m];
            let tv = tag[v];
            var q = m;
            while (q > a && tag[sorted_ids[q - 1u]] > tv) {
                sorted_ids[q] = sorted_ids[q - 1u];
                q = q - 1u;
            }
            sorted_ids[q] = v;
        }
        return;
    }
    if (s == 12u) {
        if (k == 0u) {
            state.renumbered = state.step + 1u;
            state.old_runs = state.step + 1u;
        }
        return;
    }
    if (k >= n) { return; }
    switch s {
        case 1u: {
            // with rigid bodies the cell of the particle's body's centre (`body_order` MODE 0
            // wrote it), so a body's components share a cell and stay one run
            var c: u32;
            if (sim.order_by_body != 0u) {
                c = particle_cell[k];
            } else {
                c = cell_index(cell_of_block(pos_block[k].xyz, sim.order_origin, sim.order_cell_blocks, sim.order_dims), sim.order_dims);
            }
            particle_cell[k] = c;
            particle_rank[k] = atomicAdd(&cell_count[c], 1u);
        }
        case 2u: {
            sorted_ids[atomicLoad(&cell_count[particle_cell[k]]) + particle_rank[k]] = k;
        }
        case 4u: {
            particle_rank[sorted_ids[k]] = k;
        }
        case 5u: {
            let old = sorted_ids[k];
            force_put(2u * k, bitcast<vec4<f32>>(pos_block[old]));
            force_put(2u * k + 1u, pos_offset[old]);
            particle_cell[k] = tag[old];
            tag[n + k] = old;
        }
        case 6u: {
            pos_block[k] = bitcast<vec4<i32>>(force_at(2u * k));
            pos_offset[k] = force_at(2u * k + 1u);
            tag[k] = particle_cell[k];
        }
        case 7u: {
            let old = sorted_ids[k];
            if (IMAGES) {
                force_put(2u * k, bitcast<vec4<f32>>(image[old]));
            }
            force_put(2u * k + 1u, motion_at(MOTION_ROWS * old));
        }
        case 8u: {
            if (IMAGES) {
                image[k] = bitcast<vec4<i32>>(force_at(2u * k));
            }
            motion_put(MOTION_ROWS * k, force_at(2u * k + 1u));
        }
        case 9u: {
            let old = sorted_ids[k];
            force_put(2u * k, motion_at(MOTION_ROWS * old + 1u));
            // the previous spin, where `motion` holds it (rolling work booked)
            if (MOTION_ROWS > 2u) {
                force_put(2u * k + 1u, motion_at(MOTION_ROWS * old + 2u));
            }
        }
        case 10u: {
            motion_put(MOTION_ROWS * k + 1u, force_at(2u * k));
            if (MOTION_ROWS > 2u) {
                motion_put(MOTION_ROWS * k + 2u, force_at(2u * k + 1u));
            }
        }
        case 11u: {
            // k: an old index, whose run the list still holds at list_start[k]
            for (var m = list_start[k]; m < list_start[k + 1u]; m = m + 1u) {
                let w = list_partner_word(m);
                list_partner_word_put(m, particle_rank[w & SLOT_PARTNER_MASK] | (w & ~SLOT_PARTNER_MASK));
            }
        }
        default: {}
    }
}
