// Multi-level exclusive prefix sum (counting sort). `scan_blocks` scans blocks of
// SCAN_BLOCK = 4 * 256 elements in place and writes each block's total to `sums`;
// `scan_add` adds the (scanned) block offsets back. The host recurses over levels.
const SCAN_THREADS: u32 = 256u;
const SCAN_PER_THREAD: u32 = 4u;

@group(0) @binding(0) var<uniform> scan: ScanParams;
@group(0) @binding(1) var<storage, read_write> data: array<u32>;
@group(0) @binding(2) var<storage, read_write> sums: array<u32>;

var<workgroup> partial: array<u32, 256>;

@compute @workgroup_size(256)
fn scan_blocks(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let base = wid.x * SCAN_THREADS * SCAN_PER_THREAD + lid.x * SCAN_PER_THREAD;
    var vals: array<u32, 4>;
    var total = 0u;
    for (var k = 0u; k < SCAN_PER_THREAD; k = k + 1u) {
        var v = 0u;
        if (base + k < scan.n) { v = data[base + k]; }
        vals[k] = total;
        total = total + v;
    }
    partial[lid.x] = total;
    workgroupBarrier();
    // Hillis–Steele inclusive scan of the thread totals.
    for (var off = 1u; off < SCAN_THREADS; off = off * 2u) {
        var add = 0u;
        if (lid.x >= off) { add = partial[lid.x - off]; }
        workgroupBarrier();
        partial[lid.x] = partial[lid.x] + add;
        workgroupBarrier();
    }
    let excl = partial[lid.x] - total;
    for (var k = 0u; k < SCAN_PER_THREAD; k = k + 1u) {
        if (base + k < scan.n) { data[base + k] = vals[k] + excl; }
    }
    if (lid.x == SCAN_THREADS - 1u) { sums[wid.x] = partial[lid.x]; }
}

@compute @workgroup_size(256)
fn scan_add(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let base = wid.x * SCAN_THREADS * SCAN_PER_THREAD + lid.x * SCAN_PER_THREAD;
    let add = sums[wid.x];
    for (var k = 0u; k < SCAN_PER_THREAD; k = k + 1u) {
        if (base + k < scan.n) { data[base + k] = data[base + k] + add; }
    }
}
