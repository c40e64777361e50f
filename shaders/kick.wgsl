// Pass `kick`: second half-kick with the forces just computed (stored v, ω become full-step).
@group(0) @binding(0) var<uniform> sim: SimParams;
@group(0) @binding(1) var<storage, read_write> velocity: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> omega: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> force: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> torque: array<vec4<f32>>;
@group(0) @binding(5) var<storage, read> state: StepStateRead;

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= sim.n_particles || state.halt != 0u) { return; }
    let half = 0.5 * sim.dt;
    let v = velocity[i];
    let w = omega[i];
    velocity[i] = vec4<f32>(v.xyz + (force[i].xyz * v.w + sim.gravity) * half, v.w);
    omega[i] = vec4<f32>(w.xyz + torque[i].xyz * w.w * half, w.w);
}
