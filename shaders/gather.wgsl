// Pass `gather`: every particle adds the shares of the contacts it does not own (its incoming
// list slots, in owner-id order, active ones only) to the force and torque of the contacts it
// owns (written by `forces`). The order is fixed by ids, not by when the list was built, and
// there are no float atomics.
@group(0) @binding(0) var<uniform> sim: SimParams;
@group(0) @binding(1) var<storage, read_write> force: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> torque: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> incoming_start: array<u32>;
@group(0) @binding(4) var<storage, read> incoming_slot: array<u32>;
@group(0) @binding(5) var<storage, read> shares: array<vec4<f32>>;
@group(0) @binding(6) var<storage, read> state: StepStateRead;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= sim.n_particles || state.halt != 0u || (state.flags & OVERFLOW_LIST) != 0u) { return; }
    let e = incoming_start[i + 1u];
    var s = incoming_start[i];
    if (s == e) { return; }
    var f = force[i];
    var t = torque[i];
    for (; s < e; s = s + 1u) {
        let k = incoming_slot[s];
        let fs = shares[2u * k];
        // w = 1 for a contact active in this step
        if (fs.w == 0.0) { continue; }
        f = vec4<f32>(f.xyz + fs.xyz, f.w);
        t = vec4<f32>(t.xyz + shares[2u * k + 1u].xyz, t.w);
    }
    force[i] = f;
    torque[i] = t;
}
