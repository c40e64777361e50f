// Pass `gather` (after the initial force evaluation only; in the step loop the gather is fused
// into `kick_drift` and `kick`): each particle's total force and torque written back.
@group(0) @binding(0) var<uniform> sim: SimParams;
@group(0) @binding(1) var<storage, read> incoming_start: array<u32>;
@group(0) @binding(2) var<storage, read> state: StepStateRead;
// Split arrays (group 1, `gpu::split`): force (read_write; per particle i: [2i] force, w =
// strain energy, [2i + 1] torque, w = contacts owned), incoming and shares
// (`incoming_sum.wgsl`).

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= sim.n_particles || state.halt != 0u || (state.flags & OVERFLOW_LIST) != 0u) { return; }
    let t = total_force(i);
    force_put(2u * i, t.force);
    force_put(2u * i + 1u, t.torque);
}
