// Pass `list_plan`: the device decides whether this step rebuilds the neighbour list. Every
// rebuild pass is dispatched indirectly from `dispatch`; this pass copies the full workgroup
// counts (`dispatch_full`, written by the host) when `state.rebuild` is set, and zeros
// otherwise, so a step without a rebuild launches empty dispatches and no host round trip.
@group(0) @binding(0) var<storage, read> state: StepStateRead;
@group(0) @binding(1) var<storage, read> dispatch_full: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> dispatch: array<vec4<u32>>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(local_invocation_id) lid: vec3<u32>) {
    let on = state.rebuild != 0u && state.halt == 0u;
    for (var k = lid.x; k < arrayLength(&dispatch_full); k = k + WORKGROUP_SIZE) {
        dispatch[k] = select(vec4<u32>(0u), dispatch_full[k], on);
    }
}
