// Helpers shared by the pass shaders (pure functions; no bindings).

// Linear invocation index of a 1-D pass dispatched as (x, y, 1) workgroups of WORKGROUP_SIZE.
fn linear_index(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return gid.y * (nwg.x * WORKGROUP_SIZE) + gid.x;
}

// Floor division for a positive divisor.
// The material index in a position block's w word (`GHOST_BIT` cleared).
fn material_of(block: vec4<i32>) -> u32 {
    return u32(block.w) & MATERIAL_MASK;
}

// Whether a particle is a ghost of a decomposed run (another rank owns it; `gpu::decomposed`).
fn is_ghost(block: vec4<i32>) -> bool {
    return (u32(block.w) & GHOST_BIT) != 0u;
}

fn floor_div(a: i32, k: i32) -> i32 {
    var q = a / k;
    if (a % k != 0 && a < 0) { q = q - 1; }
    return q;
}

// Cell coordinates of a block, clamped into the grid (clamping keeps adjacency).
fn cell_of_block(b: vec3<i32>, origin: vec3<i32>, k: i32, dims: vec3<u32>) -> vec3<i32> {
    let rel = b - origin;
    let c = vec3<i32>(floor_div(rel.x, k), floor_div(rel.y, k), floor_div(rel.z, k));
    return clamp(c, vec3<i32>(0), vec3<i32>(dims) - vec3<i32>(1));
}

// Axes whose bit is set in `mask` (bit 0 = x, 1 = y, 2 = z).
fn axis_flags(mask: u32) -> vec3<bool> {
    return ((vec3<u32>(mask) >> vec3<u32>(0u, 1u, 2u)) & vec3<u32>(1u)) != vec3<u32>(0u);
}

// The neighbour cell c + d on an axis of n cells: wrapped when periodic, −1 outside otherwise.
fn neighbour_cell(c: i32, d: i32, n: i32, periodic: bool) -> i32 {
    let x = c + d;
    if (periodic) {
        return (x + n) % n;
    }
    return select(-1, x, x >= 0 && x < n);
}

fn cell_index(c: vec3<i32>, dims: vec3<u32>) -> u32 {
    return (u32(c.z) * dims.y + u32(c.y)) * dims.x + u32(c.x);
}

// x_j − x_i from block + offset positions, exact block part.
fn relative_position(block_i: vec3<i32>, off_i: vec3<f32>, block_j: vec3<i32>, off_j: vec3<f32>, block: f32) -> vec3<f32> {
    return vec3<f32>(block_j - block_i) * block + (off_j - off_i);
}

// Hash of a contact key (a, b).
fn contact_hash(a: u32, b: u32) -> u32 {
    var h = a * 0x9E3779B1u ^ ((b + 0x7F4A7C15u) * 0x85EBCA77u);
    h = h ^ (h >> 15u);
    h = h * 0xC2B2AE3Du;
    h = h ^ (h >> 13u);
    return h;
}

// true when any component is ±inf or NaN (exponent bits all set; a bit test, which no
// fast-math assumption can fold away).
fn non_finite3(x: vec3<f32>) -> bool {
    let e = bitcast<vec3<u32>>(x) & vec3<u32>(0x7f800000u);
    return any(e == vec3<u32>(0x7f800000u));
}


// The partner-word bit of the slot-history table that step `step` reads (table step % 2).
fn history_bit(step: u32) -> u32 {
    return select(SLOT_HISTORY_BIT1, SLOT_HISTORY_BIT0, (step & 1u) == 0u);
}
