// Needs the module-scope `sim: SimParams`.
// x_to − x_from with exact block arithmetic; on periodic axes the nearest image (a jump of
// one period, applied to blocks and offsets separately). Twin: `Setup::minimum_image`.
fn pair_separation(b_from: vec3<i32>, o_from: vec3<f32>, b_to: vec3<i32>, o_to: vec3<f32>) -> vec3<f32> {
    var db = b_to - b_from;
    var dof = o_to - o_from;
    if (sim.periodic != 0u) {
        let d = vec3<f32>(db) * sim.block + dof;
        let half = 0.5 * (vec3<f32>(sim.period_blocks) * sim.block + sim.period_offset);
        let periodic = axis_flags(sim.periodic);
        let jump = select(vec3<i32>(0), vec3<i32>(1), periodic & (d > half)) - select(vec3<i32>(0), vec3<i32>(1), periodic & (d < -half));
        db = db - jump * sim.period_blocks;
        dof = dof - vec3<f32>(jump) * sim.period_offset;
    }
    return vec3<f32>(db) * sim.block + dof;
}
