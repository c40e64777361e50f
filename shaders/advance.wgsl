// Pass `advance`: one thread ends the step on the GPU (step counter = hash epoch source).
// Passes exit early once `halt` is set; the force pass of the overflowing step still runs to
// the end so `inserted` counts all its contacts.
@group(0) @binding(0) var<storage, read_write> state: StepState;

@compute @workgroup_size(1)
fn main() {
    if (atomicLoad(&state.flags) != 0u) {
        // Overflow in this step: the rest of the batch is skipped (the host redoes it), and
        // `inserted` keeps the number of insertions the step attempted (sizes the growth).
        state.halt = 1u;
        return;
    }
    state.step = state.step + 1u;
    atomicStore(&state.inserted, 0u);
    // the step's rebuild, if any, is done (`list_plan` counted it)
    atomicStore(&state.rebuild, 0u);
}
