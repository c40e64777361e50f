//! Where each particle is stored on the device (issue 34, item 3: cell order on the GPU).
//!
//! The device stores the particles in the Z-order of the cells they sit in, so that the rows a
//! thread reads for its neighbours lie close together in memory (random placement cost a falling
//! 105k bed 16–17 % on lavapipe, and a real GPU's caches hold far fewer rows than its particle
//! count). The physics keeps the order of the particles' ids, so trajectories do not depend on
//! where a particle is stored:
//! - `tag` (a device buffer) holds the id at every storage index;
//! - the list build gives each pair to the particle of the lower id and sorts an owner's run by
//!   the partner's id (`list_build.wgsl`), and the incoming entries are sorted by the owner's id
//!   (`incoming.wgsl`), so every force sum adds its terms in id order, as the CPU backend's do;
//! - everything the host reads or writes goes through `Order` (uploads, snapshots, exports,
//!   checkpoints, exchanges), so outputs and contact records are in ids.
//!
//! What does change with the storage order is the grouping of the f32 energy and wall-load sums
//! (per workgroup of storage indices): energies and wall loads may differ in their last bits
//! from a run in id order, while positions, velocities and forces are bit for bit the same
//! (`tests/gpu_order.rs`).
//!
//! The order is set by the host where the device takes a whole state: at the start and at a state
//! import, from the positions (`cell_order`). During a run the device renumbers every
//! `RENUMBER_EVERY` steps (`SimParams::renumber_every`; `shaders/order.wgsl`): the step rebuilds
//! its list, and before the grid the particles are sorted into the cells of the grid of skin 0
//! (row-major, by id within a cell), every row moved, the current list's partner words and the
//! wall-contact keys translated; the host reads `tag` back before the next readback that needs
//! the order (`GpuBackend::sync_order`, 4 B per particle, once per renumbering at most). An
//! exchange on the device keeps the survivors where they are and appends the newcomers; a
//! checkpoint saves the order ("order") and a resume restores it, so a resumed run sums, and
//! renumbers, as the run it continues. A scene with rigid bodies is stored body by body
//! (`for_state`: the bodies in the cell order of their centres, each body's components one run),
//! and the device renumbers it so too (`shaders/body/order.wgsl` keys each particle by its
//! body's centre, so a body's components sort as one run, and moves the body table's particle
//! indices). Ranks of a decomposed run keep id order (their ghosts are indexed by storage
//! index).

use rayon::prelude::*;

use crate::cpu::neighbour::morton_code;
use crate::model::body::Bodies;

/// The storage order of the particles on the device: `id[s]` is the id of the particle stored
/// at index `s`; `slot` is its inverse. Empty vectors mean the identity.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Order {
    id: Vec<u32>,
    slot: Vec<u32>,
}

impl Order {
    /// Ids in storage order (each once): `id[s]` is stored at `s`. An identity becomes empty.
    pub fn new(id: Vec<u32>) -> Order {
        if id.iter().enumerate().all(|(s, &i)| s as u32 == i) {
            return Order::default();
        }
        let mut slot = vec![u32::MAX; id.len()];
        for (s, &i) in id.iter().enumerate() {
            assert!(slot[i as usize] == u32::MAX, "particle {i} stored twice");
            slot[i as usize] = s as u32;
        }
        Order { id, slot }
    }

    /// `new` for ids read from a file: `None` unless they are 0..n, each once.
    pub fn checked(id: Vec<u32>, n: usize) -> Option<Order> {
        let mut seen = vec![false; n];
        if id.len() != n || id.iter().any(|&i| (i as usize) >= n || std::mem::replace(&mut seen[i as usize], true)) {
            return None;
        }
        Some(Order::new(id))
    }

    pub fn is_identity(&self) -> bool {
        self.id.is_empty()
    }

    /// The id of the particle at storage index `s`.
    pub fn id(&self, s: usize) -> usize {
        if self.id.is_empty() {
            s
        } else {
            self.id[s] as usize
        }
    }

    /// The storage index of particle `id`.
    pub fn slot(&self, id: usize) -> usize {
        if self.slot.is_empty() {
            id
        } else {
            self.slot[id] as usize
        }
    }

    /// The `tag` buffer's contents for `n` particles.
    pub fn tags(&self, n: usize) -> Vec<u32> {
        if self.id.is_empty() {
            (0..n as u32).collect()
        } else {
            self.id.clone()
        }
    }

    /// Rows of `per` elements each, given by id, put in storage order.
    pub fn to_storage<T: Copy>(&self, by_id: &[T], per: usize) -> Vec<T> {
        if self.id.is_empty() {
            return by_id.to_vec();
        }
        self.id.iter().flat_map(|&i| by_id[per * i as usize..per * (i as usize + 1)].iter().copied()).collect()
    }

    /// Rows of `per` elements each, given in storage order, put in id order.
    pub fn to_ids<T: Copy>(&self, stored: &[T], per: usize) -> Vec<T> {
        if self.id.is_empty() {
            return stored.to_vec();
        }
        self.slot.iter().flat_map(|&s| stored[per * s as usize..per * (s as usize + 1)].iter().copied()).collect()
    }

    /// The order after an exchange that removes the particles of ids `removed` (ascending) and
    /// appends `added` new ones: the survivors stay where they are, closed up, under their new
    /// ids (less the removed ids below), and the new particles follow in id order (what
    /// `exchange_compact` does on the device). Also returns the removed storage indices,
    /// ascending.
    pub fn after_exchange(&self, n_old: usize, removed: &[u32], added: usize) -> (Order, Vec<u32>) {
        let mut slots: Vec<u32> = removed.iter().map(|&i| self.slot(i as usize) as u32).collect();
        slots.sort_unstable();
        if self.is_identity() {
            return (Order::default(), slots);
        }
        let mut gone = vec![false; n_old];
        for &s in &slots {
            gone[s as usize] = true;
        }
        let mut ids: Vec<u32> = (0..n_old)
            .filter(|&s| !gone[s])
            .map(|s| {
                let i = self.id[s];
                i - removed.partition_point(|&r| r < i) as u32
            })
            .collect();
        let kept = ids.len() as u32;
        ids.extend(kept..kept + added as u32);
        (Order::new(ids), slots)
    }
}

/// The ids of `positions` in the Z-order of cells of edge `cell` (from the lowest corner), by
/// id within a cell: a function of the positions alone, so two runs of one scene store their
/// particles alike whatever their skins.
pub fn cell_order(positions: &[[f64; 3]], cell: f64) -> Vec<u32> {
    let n = positions.len();
    if n == 0 || cell.is_nan() || cell <= 0.0 {
        return (0..n as u32).collect();
    }
    let mut lo = [f64::INFINITY; 3];
    for p in positions {
        for a in 0..3 {
            lo[a] = lo[a].min(p[a]);
        }
    }
    // (the CPU's key: 21 bits per axis, `cpu::neighbour::morton_code`)
    let max = ((1u64 << 21) - 1) as f64;
    let key = |p: &[f64; 3]| -> u64 { morton_code(std::array::from_fn(|a| ((p[a] - lo[a]) / cell).floor().clamp(0.0, max) as i64)) };
    let mut keyed: Vec<(u64, u32)> = positions.par_iter().enumerate().map(|(i, p)| (key(p), i as u32)).collect();
    keyed.par_sort_unstable();
    keyed.into_iter().map(|(_, i)| i).collect()
}

/// The storage order of particles at `positions`: cell order (cells of the largest diameter), or
/// the identity where `enabled` is false.
pub fn for_positions(positions: &[[f64; 3]], radius: &[f64], enabled: bool) -> Order {
    if !enabled {
        return Order::default();
    }
    let r_max = radius.iter().copied().fold(0.0f64, f64::max);
    Order::new(cell_order(positions, 2.0 * r_max))
}

/// The storage order of a state: `for_positions` without rigid bodies; with them, the bodies
/// in the Z-order of the cells of their centres (cells of a body's bounding diameter, by body
/// id within a cell), each body's components one after another in id order, so that a body's
/// components stay one run of storage indices in the order it sums their forces (the body
/// passes and `exchange_body_compact` work on storage indices). Identity where `enabled` is
/// false, or where the table does not cover every particle.
pub fn for_state(positions: &[[f64; 3]], radius: &[f64], bodies: &Bodies, enabled: bool) -> Order {
    if bodies.is_empty() {
        return for_positions(positions, radius, enabled);
    }
    if !enabled || bodies.body_of.len() != positions.len() {
        return Order::default();
    }
    let reach = bodies.reach();
    let r_max = radius.iter().copied().fold(0.0f64, f64::max);
    let ids = cell_order(&bodies.position, 2.0 * (reach + r_max)).into_iter().flat_map(|b| bodies.first[b as usize]..bodies.first[b as usize] + bodies.count[b as usize]).collect();
    Order::new(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_order_groups_neighbours_and_is_a_permutation() {
        // a 4 × 4 × 4 lattice listed in a scrambled order
        let mut pos = Vec::new();
        for k in 0..64u64 {
            let s = (k * 37) % 64;
            pos.push([(s % 4) as f64, ((s / 4) % 4) as f64, (s / 16) as f64]);
        }
        let order = cell_order(&pos, 2.0);
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..64).collect::<Vec<u32>>());
        // the first 8 stored fill the lowest 2 × 2 × 2 cell
        for &i in &order[..8] {
            assert!(pos[i as usize].iter().all(|&x| x < 2.0), "{:?}", pos[i as usize]);
        }
    }

    #[test]
    fn bodies_are_stored_whole_in_the_cell_order_of_their_centres() {
        // three dumbbells listed far, near, middle along x: stored near, middle, far, each
        // body's two components one after the other in id order
        let mut b = Bodies::default();
        let mut pos = Vec::new();
        for (k, x) in [10.0, 0.0, 5.0].into_iter().enumerate() {
            b.push([x, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0; 3], [0.0; 3], 1.0, [1.0; 3], 0, 2 * k as u32, &[[-0.5, 0.0, 0.0], [0.5, 0.0, 0.0]]);
            pos.extend([[x - 0.5, 0.0, 0.0], [x + 0.5, 0.0, 0.0]]);
        }
        let o = for_state(&pos, &[0.5; 6], &b, true);
        assert_eq!(o.tags(6), vec![2, 3, 4, 5, 0, 1]);
        assert!(for_state(&pos, &[0.5; 6], &b, false).is_identity());
        // a table that does not cover every particle is left in id order
        pos.push([20.0, 0.0, 0.0]);
        assert!(for_state(&pos, &[0.5; 7], &b, true).is_identity());
    }

    #[test]
    fn rows_go_to_storage_and_back() {
        let o = Order::new(vec![2, 0, 1]);
        assert_eq!(o.slot(2), 0);
        let by_id = [10, 11, 20, 21, 30, 31];
        let stored = o.to_storage(&by_id, 2);
        assert_eq!(stored, vec![30, 31, 10, 11, 20, 21]);
        assert_eq!(o.to_ids(&stored, 2), by_id.to_vec());
        assert!(Order::new(vec![0, 1, 2]).is_identity());
    }

    #[test]
    fn an_exchange_closes_up_the_survivors_and_appends() {
        // stored ids 3 0 4 1 2; ids 0 and 2 leave, two arrive
        let o = Order::new(vec![3, 0, 4, 1, 2]);
        let (next, slots) = o.after_exchange(5, &[0, 2], 2);
        assert_eq!(slots, vec![1, 4]);
        // survivors 3 4 1 become 1 2 0; the new ones are 3 and 4
        assert_eq!(next.tags(5), vec![1, 2, 0, 3, 4]);
    }
}
