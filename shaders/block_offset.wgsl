// Positions as an i32 block and an f32 offset inside it (needs `sim`): composed into `drift`
// (`kick_drift`) and the body passes, which place points the same way.

// Block + offset with the offset brought back into [0, BLOCK).
fn normalize_offset(b: vec3<i32>, o: vec3<f32>) -> BlockOffset {
    var x = o;
    let shift = floor(x / sim.block);
    x = x - shift * sim.block;
    var bx = b + vec3<i32>(shift);
    let over = x >= vec3<f32>(sim.block);
    x = select(x, x - vec3<f32>(sim.block), over);
    bx = bx + select(vec3<i32>(0), vec3<i32>(1), over);
    let under = x < vec3<f32>(0.0);
    x = select(x, vec3<f32>(0.0), under);
    return BlockOffset(bx, x);
}

struct BlockOffset {
    b: vec3<i32>,
    o: vec3<f32>,
}
