// Pass `exchange_compact` (an exchange, `gpu::flow`): a thread per particle before the
// exchange copies a survivor's rows from the old buffers to its new id in the new ones:
// position block and offset, image, velocity and angular velocity (with 1/m and 1/I); the
// spin of the last force pass becomes the angular velocity, as a state import sets it
// (`ParticleRows::of`). Forces are evaluated again after it (`exchange_keep` puts back those
// of the particles whose contacts did not change).
@group(0) @binding(0) var<uniform> xp: ExchangeParams;
@group(0) @binding(1) var<storage, read> removed: array<u32>;
@group(0) @binding(2) var<storage, read> old_block: array<vec4<i32>>;
@group(0) @binding(3) var<storage, read> old_offset: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read> old_image: array<vec4<i32>>;
@group(0) @binding(5) var<storage, read_write> pos_block: array<vec4<i32>>;
@group(0) @binding(6) var<storage, read_write> pos_offset: array<vec4<f32>>;
@group(0) @binding(7) var<storage, read_write> image: array<vec4<i32>>;
// Split arrays (group 1, `gpu::split`): motion_old (read), motion (read_write).

@compute @workgroup_size(WORKGROUP_SIZE)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_index(gid, nwg);
    if (i >= xp.n_old) { return; }
    let below = removed_below(i);
    if (below < xp.n_removed && removed[below] == i) { return; }
    let j = i - below;
    pos_block[j] = old_block[i];
    pos_offset[j] = old_offset[i];
    if (IMAGES) {
        image[j] = old_image[i];
    }
    let v = motion_old_at(MOTION_ROWS * i);
    let w = motion_old_at(MOTION_ROWS * i + 1u);
    motion_put(MOTION_ROWS * j, v);
    motion_put(MOTION_ROWS * j + 1u, w);
    // the previous spin, where `motion` holds it (rolling work booked)
    if (MOTION_ROWS > 2u) {
        motion_put(MOTION_ROWS * j + 2u, vec4<f32>(w.xyz, 0.0));
    }
}
