// Storage indices across an exchange (`gpu::flow`; "ids" below): `removed` holds the
// xp.n_removed storage indices that leave, ascending; survivors keep their order, so a
// survivor's new index is its old one less the removed ones below it (`ParticleState::retain`'s
// numbering, which the particles' ids follow on the host, `order::Order::after_exchange`).
// Each pass declares `xp` and `removed`.

// Removed ids below old id `i`.
fn removed_below(i: u32) -> u32 {
    var lo = 0u;
    var hi = xp.n_removed;
    while (lo < hi) {
        let mid = (lo + hi) / 2u;
        if (removed[mid] < i) {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return lo;
}

fn is_removed(i: u32) -> bool {
    let k = removed_below(i);
    return k < xp.n_removed && removed[k] == i;
}

// New id of survivor `i`.
fn new_id(i: u32) -> u32 {
    return i - removed_below(i);
}

// Old id of survivor `j` (new id): j + k for the first k with removed[k] − k > j
// (removed[k] − k does not decrease).
fn old_id(j: u32) -> u32 {
    var lo = 0u;
    var hi = xp.n_removed;
    while (lo < hi) {
        let mid = (lo + hi) / 2u;
        if (removed[mid] - mid <= j) {
            lo = mid + 1u;
        } else {
            hi = mid;
        }
    }
    return j + lo;
}
