// Pass `list_plan`: the device decides whether this step rebuilds the neighbour list. No
// particle has moved farther since the last build than `travelled`, the sum over the steps
// since of the longest step any particle made (`drift` leaves this step's in `max_step`):
// beyond skin/2, or when the host asked (`rebuild` set), the step rebuilds and `travelled`
// starts again from 0. Every rebuild pass is dispatched indirectly from `dispatch`: this pass
// copies the full workgroup counts (`dispatch_full`, written by the host) on a rebuild and
// zeros otherwise, so a step without a rebuild launches empty dispatches and there is no host
// round trip.
@group(0) @binding(0) var<uniform> sim: SimParams;
@group(0) @binding(1) var<storage, read_write> state: StepState;
@group(0) @binding(2) var<storage, read> dispatch_full: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> dispatch: array<vec4<u32>>;

var<workgroup> rebuild: u32;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
    if (lid.x == 0u) {
        let travelled = bitcast<f32>(state.travelled) + bitcast<f32>(atomicLoad(&state.max_step));
        atomicStore(&state.max_step, 0u);
        var on = atomicLoad(&state.rebuild) != 0u || travelled > 0.5 * sim.skin;
        on = on && state.halt == 0u;
        if (on) {
            atomicStore(&state.rebuild, 1u);
            state.travelled = 0u;
        } else {
            state.travelled = bitcast<u32>(travelled);
        }
        rebuild = select(0u, 1u, on);
    }
    let on = workgroupUniformLoad(&rebuild) != 0u;
    for (var k = lid.x; k < arrayLength(&dispatch_full); k = k + WORKGROUP_SIZE) {
        dispatch[k] = select(vec4<u32>(0u), dispatch_full[k], on);
    }
}
