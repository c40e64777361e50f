// Positions as an i32 block and an f32 offset inside it (needs `sim`): composed into `drift`
// (`kick_drift`) and the body passes, which place points and check them the same way.

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

// A point placed at block b + offset o: normalised, and moved back into [min, max) on the
// periodic axes (one period at most), the periods removed in `jump` (to add to the image).
struct Placed {
    b: vec3<i32>,
    o: vec3<f32>,
    jump: vec3<i32>,
}

fn place_periodic(b: vec3<i32>, o: vec3<f32>) -> Placed {
    var p = normalize_offset(b, o);
    var jump = vec3<i32>(0);
    if (sim.periodic != 0u) {
        // x − min on each axis; out of [0, period) on a periodic axis → shift by one period
        let rel = vec3<f32>(p.b - sim.domain_min_block) * sim.block + (p.o - sim.domain_min_offset);
        let period = vec3<f32>(sim.period_blocks) * sim.block + sim.period_offset;
        let periodic = axis_flags(sim.periodic);
        jump = select(vec3<i32>(0), vec3<i32>(1), periodic & (rel >= period)) - select(vec3<i32>(0), vec3<i32>(1), periodic & (rel < vec3<f32>(0.0)));
        if (any(jump != vec3<i32>(0))) {
            p = normalize_offset(p.b - jump * sim.period_blocks, p.o - vec3<f32>(jump) * sim.period_offset);
        }
    }
    return Placed(p.b, p.o, jump);
}

// BLOWUP_LOST for a point farther than `lost_margin` outside the domain on a closed axis.
fn lost_flag(b: vec3<i32>, o: vec3<f32>) -> u32 {
    if (sim.lost_margin < 0.0) { return 0u; }
    let rel = vec3<f32>(b - sim.domain_min_block) * sim.block + (o - sim.domain_min_offset);
    let extent = vec3<f32>(sim.period_blocks) * sim.block + sim.period_offset;
    let out = (rel < vec3<f32>(-sim.lost_margin)) | (rel > extent + vec3<f32>(sim.lost_margin));
    return select(0u, BLOWUP_LOST, any(out & !axis_flags(sim.periodic)));
}

