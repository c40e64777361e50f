// Whether this step renumbers the particles in cell order (`order.wgsl`, `body/order.wgsl`):
// due (a positive multiple of `sim.renumber_every`), not halted, not yet renumbered (a step redone
// after an overflow does not renumber twice), not told to skip (`renumber_skip`). Needs `sim` and
// `state` (read_write).
fn renumber_due() -> bool {
    let e = state.step + 1u;
    return sim.renumber_every != 0u && state.step != 0u && (state.step % sim.renumber_every) == 0u
        && state.halt == 0u && state.renumbered != e && atomicLoad(&state.renumber_skip) != e;
}
