// Test kernel for tests/mesh_walls.rs: `rotate_blocks` of shaders/mesh/data.wgsl (composed
// before this file) on one random case per invocation. The other functions of data.wgsl need
// `sim` and `mesh_data`: they are declared here and never used by the entry point, so they are
// not in its bind group. `params` (tests/shaders/twin_io.wgsl) only sets the case count.
//
// in:  Rᵀ rows split as hi (9 integers), mid (9 integers), lo (9), K (3 integers), f (3), BLOCK
// out: the rotated vector's blocks (3 integers) and offset (3)
@group(0) @binding(3) var<uniform> sim: SimParams;
@group(0) @binding(4) var<storage, read> mesh_data: array<vec4<u32>>;

const ROTATE_IN_STRIDE: u32 = 34u;
const ROTATE_OUT_STRIDE: u32 = 6u;

fn in_i4(base: u32) -> vec4<i32> {
    return vec4<i32>(vec3<i32>(in3(base)), 0);
}

fn in_f4(base: u32) -> vec4<f32> {
    return vec4<f32>(in3(base), 0.0);
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let c = gid.x;
    if (c >= arrayLength(&params)) {
        return;
    }
    let i = c * ROTATE_IN_STRIDE;
    var pose: MeshPoseGpu;
    pose.inv_hi_x = in_i4(i);
    pose.inv_hi_y = in_i4(i + 3u);
    pose.inv_hi_z = in_i4(i + 6u);
    pose.inv_mid_x = in_i4(i + 9u);
    pose.inv_mid_y = in_i4(i + 12u);
    pose.inv_mid_z = in_i4(i + 15u);
    pose.inv_lo_x = in_f4(i + 18u);
    pose.inv_lo_y = in_f4(i + 21u);
    pose.inv_lo_z = in_f4(i + 24u);
    let r = rotate_blocks(pose, vec3<i32>(in3(i + 27u)), in3(i + 30u), inputs[i + 33u]);
    put3(c * ROTATE_OUT_STRIDE, vec3<f32>(r.block));
    put3(c * ROTATE_OUT_STRIDE + 3u, r.offset);
}
