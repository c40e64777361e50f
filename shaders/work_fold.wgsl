// The dissipated work, per workgroup of WORKGROUP_SIZE particles: `forces` writes the work of
// the step's owned contacts (slip, dashpot, stiffness, wall) summed over the workgroup into
// `work_step`; the next `kick_drift`, or the `kick` that closes the batch, adds it to the
// workgroup's four Kahan pairs (`dissipation`), so every step's work is added once and the sums
// depend on particle ids only. Needs the module-scope `work_step` and `dissipation`. With
// ADHESION both hold a second part: `work_step` rows [n_groups, 2 n_groups) the adhesion rows
// of `forces`, `dissipation` pairs [DISSIPATION_PARTS n_groups, (DISSIPATION_PARTS + 1)
// n_groups) the bond-break work (`buffers::adhesion_rows`).

// Kahan-compensated add: acc = (sum, compensation).
fn kahan_add(acc: vec2<f32>, x: f32) -> vec2<f32> {
    let y = x - acc.y;
    let t = acc.x + y;
    return vec2<f32>(t, (t - acc.x) - y);
}

// Called by the first thread of each workgroup (particle i = wg × WORKGROUP_SIZE).
fn fold_work(i: u32) {
    if (i % WORKGROUP_SIZE != 0u) { return; }
    let wg = i / WORKGROUP_SIZE;
    if (ADHESION) {
        // the bond-break work of the step (`forces`' adhesion row, n_groups + wg) into the
        // workgroup's fifth Kahan pair, after the DISSIPATION_PARTS pairs of every workgroup
        let n_groups = arrayLength(&work_step) / 2u;
        let broken = work_step[n_groups + wg].y;
        if (broken != 0.0) {
            let at = n_groups * DISSIPATION_PARTS + wg;
            dissipation[at] = kahan_add(dissipation[at], broken);
        }
    }
    let w = work_step[wg];
    if (all(w == vec4<f32>(0.0))) { return; }
    let base = wg * DISSIPATION_PARTS;
    dissipation[base] = kahan_add(dissipation[base], w.x);
    dissipation[base + 1u] = kahan_add(dissipation[base + 1u], w.y);
    dissipation[base + 2u] = kahan_add(dissipation[base + 2u], w.z);
    dissipation[base + 3u] = kahan_add(dissipation[base + 3u], w.w);
}
