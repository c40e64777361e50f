// Test kernel for tests/mesh_geometry.rs: evaluates closest_point_on_triangle and
// triangle_contact of shaders/mesh/closest.wgsl (composed before this file) on one random
// case per invocation. `params` (tests/shaders/twin_io.wgsl) only sets the case count.
//
// in:  p (3), a (3), b (3), c (3), unit normal (3), eps_len, two_sided (0 or 1)
// out: closest point (3), feature, contact point (3), contact normal (3), distance, feature

const MESH_IN_STRIDE: u32 = 17u;
const MESH_OUT_STRIDE: u32 = 12u;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let k = gid.x;
    if (k >= arrayLength(&params)) {
        return;
    }
    let i = k * MESH_IN_STRIDE;
    let o = k * MESH_OUT_STRIDE;
    let p = in3(i);
    let a = in3(i + 3u);
    let b = in3(i + 6u);
    let c = in3(i + 9u);
    let n = in3(i + 12u);
    let eps_len = inputs[i + 15u];
    let two_sided = inputs[i + 16u] > 0.5;
    let cp = closest_point_on_triangle(p, a, b, c);
    put3(o, cp.point);
    put(o + 3u, f32(cp.feature));
    let tc = triangle_contact(p, a, b, c, n, eps_len, two_sided);
    put3(o + 4u, tc.point);
    put3(o + 7u, tc.normal);
    put(o + 10u, tc.distance);
    put(o + 11u, f32(tc.feature));
}
