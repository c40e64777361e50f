// Pass `list_plan`: the device decides whether this step rebuilds the neighbour list. No
// particle has moved farther since the last build than `travelled`, the sum over the steps
// since of the longest step any particle made (`drift` leaves this step's in `max_step`):
// beyond skin/2 the list is stale and the step must rebuild; `travelled` then starts again
// from 0, and the list takes this step's longest step as a margin (`list_margin`).
// Only steps whose counter is a multiple of `sim.rebuild_stride` carry the rebuild passes (the host
// encodes them there alone). Such a step also rebuilds when the list could go stale before the
// next such step, were the longest step to double; the host asks for a rebuild (`rebuild` set)
// only where it encodes the passes itself (`initial_forces`);
// a step between them whose list goes stale anyway plans its rebuild, raises REBUILD_LATE and
// halts the batch, and the host resumes it from that step's rebuild passes (`gpu::capacity`).
// Every rebuild pass is dispatched indirectly from `dispatch`: this pass copies the full
// workgroup counts (`dispatch_full`, written by the host) on a rebuild and zeros otherwise, so
// a step without a rebuild launches empty dispatches and there is no host round trip. On a
// halted batch it changes nothing: a resumed step rebuilds (or not) as planned.
@group(0) @binding(0) var<uniform> sim: SimParams;
@group(0) @binding(1) var<storage, read_write> state: StepState;
@group(0) @binding(2) var<storage, read> dispatch_full: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> dispatch: array<vec4<u32>>;

// 0: no rebuild, 1: rebuild, 2: the batch is halted (an overflow): the table and the
// displacement bound are left as the halted step planned them, for the resumed step.
var<workgroup> plan: u32;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
    if (lid.x == 0u) {
        if (state.halt != 0u) {
            plan = 2u;
        } else {
            let step_bits = atomicLoad(&state.max_step);
            let longest = bitcast<f32>(step_bits);
            let travelled = bitcast<f32>(state.travelled) + longest;
            atomicStore(&state.max_step, 0u);
            let encoded = (state.step % sim.rebuild_stride) == 0u;
            let stale = travelled > 0.5 * sim.skin;
            let ahead = travelled + 2.0 * f32(sim.rebuild_stride - 1u) * longest > 0.5 * sim.skin;
            // the host asks only where it encodes the rebuild passes (`initial_forces`)
            let asked = atomicLoad(&state.rebuild) != 0u;
            // a step that renumbers the particles (`order.wgsl`) rebuilds
            let renumber = sim.renumber_every != 0u && state.step != 0u && (state.step % sim.renumber_every) == 0u;
            let on = stale || asked || (encoded && (ahead || renumber));
            if (on) {
                atomicStore(&state.rebuild, 1u);
                // counted where planned: a halted step resumes without planning again
                state.rebuilds = state.rebuilds + 1u;
                state.travelled = 0u;
                state.list_margin = step_bits;
                // the build's schedule counts its costs afresh (`schedule.wgsl`)
                atomicStore(&state.schedule_plain, 0u);
                atomicStore(&state.schedule_sorted, 0u);
                if (!encoded && !asked) {
                    atomicOr(&state.flags, REBUILD_LATE);
                    state.halt = 1u;
                }
            } else {
                state.travelled = bitcast<u32>(travelled);
            }
            plan = select(0u, 1u, on);
        }
    }
    let p = workgroupUniformLoad(&plan);
    if (p == 2u) { return; }
    for (var k = lid.x; k < arrayLength(&dispatch_full); k = k + WORKGROUP_SIZE) {
        dispatch[k] = select(vec4<u32>(0u), dispatch_full[k], p == 1u);
    }
}
