// Pass `reduce_energy`: per-workgroup tree sums (fixed order) of the energy partitions and
// the owned-contact count. partial.a = (kinetic translational, kinetic rotational,
// gravitational, strain), partial.b = (slip, dashpot, stiffness work, wall work),
// partial.c = (contacts, 0, 0, 0). BODIES (a constant the composer puts first,
// `shader::pass_sources`): the particles are components of rigid bodies.
const REDUCE_SIZE: u32 = 256u;
@group(0) @binding(0) var<uniform> sim: SimParams;
@group(0) @binding(1) var<storage, read> pos_block: array<vec4<i32>>;
@group(0) @binding(2) var<storage, read> pos_offset: array<vec4<f32>>;
// Per workgroup of WORKGROUP_SIZE particles: Kahan pairs of the work (`work_fold.wgsl`).
@group(0) @binding(3) var<storage, read> dissipation: array<vec2<f32>>;
@group(0) @binding(4) var<storage, read_write> partials: array<EnergyPartial>;
@group(0) @binding(5) var<storage, read> image: array<vec4<i32>>;
// Split arrays (group 1, `gpu::split`): motion (per particle i, MOTION_ROWS rows: velocity,
// w = 1/m; angular velocity, w = 1/I; where rolling work is booked the previous spin) and
// force (per particle i: [2i] force, w = strain energy, [2i + 1] torque, w = contacts owned).

var<workgroup> sum_a: array<vec4<f32>, 256>;
var<workgroup> sum_b: array<vec4<f32>, 256>;
var<workgroup> sum_n: array<u32, 256>;

@compute @workgroup_size(256)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let wg = wid.y * nwg.x + wid.x;
    let i = wg * REDUCE_SIZE + lid.x;
    var a = vec4<f32>(0.0);
    var b = vec4<f32>(0.0);
    var n = 0u;
    if (i < sim.n_particles) {
        let v = motion_at(MOTION_ROWS * i);
        let w = motion_at(MOTION_ROWS * i + 1u);
        let m = 1.0 / v.w;
        let inertia = 1.0 / w.w;
        // unwrapped position: + image × period on the periodic axes
        let period = vec3<f32>(sim.period_blocks) * sim.block + sim.period_offset;
        var img = vec3<f32>(0.0);
        if (IMAGES) {
            img = vec3<f32>(image[i].xyz);
        }
        let x = vec3<f32>(pos_block[i].xyz) * sim.block + pos_offset[i].xyz + img * period;
        a = vec4<f32>(0.5 * m * dot(v.xyz, v.xyz), 0.5 * inertia * dot(w.xyz, w.xyz), -m * dot(sim.gravity, x), force_at(2u * i).w);
        if (BODIES) {
            // components of rigid bodies: the bodies' kinetic and gravitational energy is
            // summed on the host (`gpu::bodies`), the strain and work here
            a = vec4<f32>(0.0, 0.0, 0.0, a.w);
        }
        if (i % WORKGROUP_SIZE == 0u) {
            // the work of the force workgroup starting at i (all of it folded at a batch end)
            let base = (i / WORKGROUP_SIZE) * DISSIPATION_PARTS;
            let slip = dissipation[base];
            let dashpot = dissipation[base + 1u];
            let stiffness = dissipation[base + 2u];
            let wall = dissipation[base + 3u];
            b = vec4<f32>(slip.x - slip.y, dashpot.x - dashpot.y, stiffness.x - stiffness.y, wall.x - wall.y);
        }
        n = u32(force_at(2u * i + 1u).w);
        if (is_ghost(pos_block[i])) {
            // a ghost of a decomposed run is summed by the rank that owns it (its workgroup's
            // work above holds none of its contacts: `forces` books none)
            a = vec4<f32>(0.0);
            n = 0u;
        }
    }
    sum_a[lid.x] = a;
    sum_b[lid.x] = b;
    sum_n[lid.x] = n;
    for (var s = REDUCE_SIZE / 2u; s > 0u; s = s / 2u) {
        workgroupBarrier();
        if (lid.x < s) {
            sum_a[lid.x] = sum_a[lid.x] + sum_a[lid.x + s];
            sum_b[lid.x] = sum_b[lid.x] + sum_b[lid.x + s];
            sum_n[lid.x] = sum_n[lid.x] + sum_n[lid.x + s];
        }
    }
    if (lid.x == 0u) {
        partials[wg] = EnergyPartial(sum_a[0], sum_b[0], vec4<u32>(sum_n[0], 0u, 0u, 0u));
    }
}
