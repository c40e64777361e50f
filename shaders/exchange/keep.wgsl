// Pass `exchange_keep` (an exchange, `gpu::flow`; after the force evaluation with Δt = 0): a
// survivor not marked in `refresh` gets back the force and torque it had before the exchange
// (the refreshed strain and contact count in w stay), as a state import puts back the
// exported ones (`GpuBackend::keep_forces`), so an exchange leaves it as it was.
@group(0) @binding(0) var<uniform> xp: ExchangeParams;
@group(0) @binding(1) var<storage, read> removed: array<u32>;
@group(0) @binding(2) var<storage, read> refresh: array<u32>;
// Split arrays (group 1, `gpu::split`): force_old (read), force (read_write).

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let j = linear_index(gid, nwg);
    if (j >= xp.n_kept || refresh[j] != 0u) { return; }
    let o = old_id(j);
    let f = force_at(2u * j);
    let t = force_at(2u * j + 1u);
    force_put(2u * j, vec4<f32>(force_old_at(2u * o).xyz, f.w));
    force_put(2u * j + 1u, vec4<f32>(force_old_at(2u * o + 1u).xyz, t.w));
}
