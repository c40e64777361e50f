//! Overlap checks through a hash grid over the particles placed so far: the generators of
//! `src/scene/generate.rs` and the insertions of `src/flow/insert.rs` both place particles at
//! free places with it.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::setup::Particles;

const NONE: u32 = u32::MAX;

/// Small fast hasher for the grid's integer keys.
#[derive(Default)]
pub(crate) struct CellHasher(u64);

impl Hasher for CellHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, x: u64) {
        // splitmix64 finaliser: every input bit reaches the low bits hashbrown indexes with.
        let mut z = (self.0 ^ x).wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        self.0 = z ^ (z >> 31);
    }
}

/// Hash grid over all particles placed so far. Cell size ≥ 2 × the largest radius, so a
/// sphere can only touch spheres in the 27 cells around its centre.
pub(crate) struct Grid {
    cell: f64,
    inv: f64,
    head: HashMap<u64, u32, BuildHasherDefault<CellHasher>>,
    next: Vec<u32>,
}

fn cell_coord(x: f64, inv: f64) -> i64 {
    (x * inv).floor() as i64
}

fn key(c: [i64; 3]) -> u64 {
    const M: u64 = (1 << 21) - 1;
    ((c[0] as u64 & M) << 42) | ((c[1] as u64 & M) << 21) | (c[2] as u64 & M)
}

impl Grid {
    pub fn new() -> Grid {
        Grid { cell: 0.0, inv: 0.0, head: HashMap::default(), next: Vec::new() }
    }

    /// Make sure the grid covers spheres up to radius `r_max` and holds every particle of `p`.
    pub fn prepare(&mut self, p: &Particles, r_max: f64) {
        let need = 2.0 * r_max.max(p.radius.iter().cloned().fold(0.0, f64::max));
        if need > self.cell || self.next.len() > p.len() {
            self.cell = need;
            self.inv = 1.0 / need;
            self.head.clear();
            self.next.clear();
        }
        for i in self.next.len()..p.len() {
            self.insert(p, i);
        }
    }

    fn insert(&mut self, p: &Particles, i: usize) {
        debug_assert_eq!(self.next.len(), i);
        let x = p.position[i];
        let k = key([cell_coord(x[0], self.inv), cell_coord(x[1], self.inv), cell_coord(x[2], self.inv)]);
        let prev = self.head.insert(k, i as u32).unwrap_or(NONE);
        self.next.push(prev);
    }

    /// Add the particles of `p` that are not in the grid yet (their radii must be ≤ the
    /// radius given to `prepare`).
    pub fn sync(&mut self, p: &Particles) {
        for i in self.next.len()..p.len() {
            self.insert(p, i);
        }
    }

    /// The first particle of `p` in the grid that overlaps the sphere (x, r) (touching is not
    /// overlapping).
    pub fn overlap(&self, p: &Particles, x: [f64; 3], r: f64) -> Option<usize> {
        let c = [cell_coord(x[0], self.inv), cell_coord(x[1], self.inv), cell_coord(x[2], self.inv)];
        for dz in -1..=1 {
            for dy in -1..=1 {
                for dx in -1..=1 {
                    let Some(&h) = self.head.get(&key([c[0] + dx, c[1] + dy, c[2] + dz])) else { continue };
                    let mut j = h;
                    while j != NONE {
                        let y = p.position[j as usize];
                        let s = r + p.radius[j as usize];
                        let d2 = (x[0] - y[0]).powi(2) + (x[1] - y[1]).powi(2) + (x[2] - y[2]).powi(2);
                        if d2 < s * s {
                            return Some(j as usize);
                        }
                        j = self.next[j as usize];
                    }
                }
            }
        }
        None
    }
}
