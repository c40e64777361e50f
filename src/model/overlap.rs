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
                        if overlap(x, r, &[y[0], y[1], y[2], p.radius[j as usize]]) {
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

/// Overlap checks for a fill of a box known in advance (`random_fill`): the test of `Grid`,
/// with the spheres kept in a flat array of cells over the box (one cell beyond it on every
/// side), each cell one cache line that holds the centres and radii of its first
/// `CELL_SPHERES` spheres (the rest in a chain beside it), and the centre cell searched first,
/// where a rejected attempt usually meets its sphere. A fill near the random packing limit
/// makes tens of attempts per particle (42 for the `talus bench` scene at solid fraction 0.35),
/// each searching up to 27 cells, so these lookups are what placement costs: through the hash
/// map and the particle arrays, each took a cache miss for the cell and two for each sphere in
/// it. Only spheres that can reach into the box are held: a sphere placed inside the box, of
/// radius ≤ `r_max`, can only touch those.
pub(crate) struct BoxGrid {
    lo: [f64; 3],
    inv: f64,
    dims: [usize; 3],
    cells: Vec<Cell>,
    /// Spheres beyond a cell's first `CELL_SPHERES`: (centre and radius, next in the chain).
    more: Vec<([f64; 4], u32)>,
    /// Each cell's first sphere in `more` (NONE when there is none).
    more_head: Vec<u32>,
}

/// Spheres a cell holds inline (a cell is one 64-byte line).
const CELL_SPHERES: usize = 2;

/// One grid cell: centre and radius of up to `CELL_SPHERES` spheres; an empty place has a NaN
/// radius, which overlaps nothing (a comparison with NaN is false).
#[derive(Clone, Copy)]
#[repr(align(64))]
struct Cell([[f64; 4]; CELL_SPHERES]);

const EMPTY: Cell = Cell([[0.0, 0.0, 0.0, f64::NAN]; CELL_SPHERES]);

/// The 27 cell offsets, the centre first.
const CENTRE_FIRST: [[i64; 3]; 27] = {
    let mut out = [[0i64; 3]; 27];
    let mut n = 1;
    let mut k = 0;
    while k < 27 {
        let d = [(k % 3) as i64 - 1, ((k / 3) % 3) as i64 - 1, (k / 9) as i64 - 1];
        if !(d[0] == 0 && d[1] == 0 && d[2] == 0) {
            out[n] = d;
            n += 1;
        }
        k += 1;
    }
    out
};

/// Whether the sphere (x, r) overlaps the sphere `s` (centre and radius; touching is not
/// overlapping): the predicate of both grids.
#[inline(always)]
fn overlap(x: [f64; 3], r: f64, s: &[f64; 4]) -> bool {
    let t = r + s[3];
    let d2 = (x[0] - s[0]).powi(2) + (x[1] - s[1]).powi(2) + (x[2] - s[2]).powi(2);
    d2 < t * t
}

impl BoxGrid {
    /// A grid for placing up to `count` spheres of radius ≤ `r_max` with their centres in
    /// `[min, max]`, holding the spheres of `p` that can reach them. Cells are at least as wide
    /// as the largest diameter present, and about as many as the spheres expected (a sparse
    /// fill of a large box gets wider cells, not a huge array). None where such a grid makes no
    /// sense: non-finite bounds, a box whose cells the coordinates' precision cannot tell
    /// apart, or one so elongated that its cells would far outnumber the spheres (a box 5e28 m
    /// tall for 5 particles, from the scene fuzz test). The caller then uses the hash grid,
    /// which answers the same.
    pub fn new(p: &Particles, min: [f64; 3], max: [f64; 3], r_max: f64, count: usize) -> Option<BoxGrid> {
        let reach = 2.0 * p.radius.iter().copied().fold(r_max, f64::max);
        let volume: f64 = (0..3).map(|k| max[k] - min[k] + 2.0 * reach).product();
        let cell = reach.max((volume / (count + p.len()).max(1) as f64).cbrt());
        let scale = (0..3).map(|k| min[k].abs().max(max[k].abs())).fold(0.0, f64::max);
        if !(cell.is_finite() && cell > 1e-9 * scale && cell > 0.0) {
            return None;
        }
        let lo = [min[0] - cell, min[1] - cell, min[2] - cell];
        let spans: [f64; 3] = std::array::from_fn(|k| ((max[k] - min[k]) / cell).ceil() + 3.0);
        // about `count` cells; the bound only guards against a degenerate box
        if !spans.iter().all(|s| s.is_finite() && *s >= 3.0) || spans.iter().product::<f64>() > 8.0 * (count + p.len()) as f64 + 4096.0 {
            return None;
        }
        let dims = spans.map(|s| s as usize);
        let n = dims[0] * dims[1] * dims[2];
        let mut grid = BoxGrid { lo, inv: 1.0 / cell, dims, cells: vec![EMPTY; n], more: Vec::new(), more_head: vec![NONE; n] };
        for i in 0..p.len() {
            // a sphere centred off the grid is more than a cell from the box and cannot reach
            // a sphere placed in it
            if let Some(c) = grid.cell_of(p.position[i]) {
                grid.put(c, p.position[i], p.radius[i]);
            }
        }
        Some(grid)
    }

    /// The cell of a centre, None off the grid.
    fn cell_of(&self, x: [f64; 3]) -> Option<[usize; 3]> {
        let mut c = [0usize; 3];
        for k in 0..3 {
            let f = ((x[k] - self.lo[k]) * self.inv).floor();
            if !(f >= 0.0 && f < self.dims[k] as f64) {
                return None;
            }
            c[k] = f as usize;
        }
        Some(c)
    }

    /// The cell of a centre inside the box: a cell in from the grid's faces, so that all 26
    /// neighbours exist (clamped there should rounding put it on a face).
    fn inner_cell(&self, x: [f64; 3]) -> [usize; 3] {
        std::array::from_fn(|k| (((x[k] - self.lo[k]) * self.inv).floor().max(1.0) as usize).min(self.dims[k] - 2))
    }

    fn index(&self, c: [usize; 3]) -> usize {
        (c[2] * self.dims[1] + c[1]) * self.dims[0] + c[0]
    }

    fn put(&mut self, c: [usize; 3], x: [f64; 3], r: f64) {
        let at = self.index(c);
        let sphere = [x[0], x[1], x[2], r];
        match self.cells[at].0.iter_mut().find(|s| s[3].is_nan()) {
            Some(place) => *place = sphere,
            None => {
                self.more.push((sphere, self.more_head[at]));
                self.more_head[at] = (self.more.len() - 1) as u32;
            }
        }
    }

    /// Hold the sphere (x, r) just placed, its centre inside the box.
    pub fn insert(&mut self, x: [f64; 3], r: f64) {
        self.put(self.inner_cell(x), x, r);
    }

    /// Whether the sphere (x, r), centre inside the box and r ≤ the `r_max` of `new`, overlaps a
    /// sphere held (`overlap`, as `Grid::overlap`).
    pub fn overlaps(&self, x: [f64; 3], r: f64) -> bool {
        let c = self.inner_cell(x);
        for d in CENTRE_FIRST {
            let at = self.index(std::array::from_fn(|k| (c[k] as i64 + d[k]) as usize));
            if self.cells[at].0.iter().any(|s| overlap(x, r, s)) {
                return true;
            }
            let mut j = self.more_head[at];
            while j != NONE {
                let (s, next) = &self.more[j as usize];
                if overlap(x, r, s) {
                    return true;
                }
                j = *next;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_pcg::Pcg64;

    /// Every attempt of a dense random fill gets the same answer from both grids, with spheres
    /// already present inside and around the box (one of them larger than the fill's).
    #[test]
    fn box_grid_answers_as_the_hash_grid() {
        let mut rng = Pcg64::seed_from_u64(7);
        let mut p = Particles::default();
        for k in 0..40 {
            let x = [rng.random_range(-0.02..0.12), rng.random_range(-0.02..0.12), rng.random_range(-0.02..0.12)];
            p.push(x, [0.0; 3], [0.0; 3], if k == 0 { 0.008 } else { 0.003 }, 0);
        }
        let (min, max, r_max) = ([0.0; 3], [0.1; 3], 0.004);
        let mut hash = Grid::new();
        hash.prepare(&p, r_max);
        let mut dense = BoxGrid::new(&p, min, max, r_max, 3000).expect("a grid for a plain box");
        let (mut placed, mut rejected) = (0, 0);
        for _ in 0..20_000 {
            let r = rng.random_range(0.002..r_max);
            let x: [f64; 3] = std::array::from_fn(|k| min[k] + r + (max[k] - min[k] - 2.0 * r) * rng.random::<f64>());
            let answer = dense.overlaps(x, r);
            assert_eq!(answer, hash.overlap(&p, x, r).is_some(), "at {x:?}, r {r}");
            if answer {
                rejected += 1;
            } else {
                p.push(x, [0.0; 3], [0.0; 3], r, 0);
                hash.sync(&p);
                dense.insert(x, r);
                placed += 1;
            }
        }
        assert!(placed > 1000 && rejected > 5000, "placed {placed}, rejected {rejected}");
    }

    #[test]
    fn box_grid_declines_boxes_it_does_not_suit() {
        let p = Particles::default();
        assert!(BoxGrid::new(&p, [0.0; 3], [f64::INFINITY, 1.0, 1.0], 0.001, 10).is_none());
        assert!(BoxGrid::new(&p, [0.0; 3], [f64::NAN, 1.0, 1.0], 0.001, 10).is_none());
        // cells far below what coordinates of 1e12 m resolve
        assert!(BoxGrid::new(&p, [1e12; 3], [1e12 + 1.0; 3], 1e-6, 10).is_none());
        // 4 × 4 × 1e21 cells for 5 spheres
        assert!(BoxGrid::new(&p, [-0.02, -0.02, 0.03], [0.02, 0.02, 5e28], 0.002, 5).is_none());
        assert!(BoxGrid::new(&p, [0.0; 3], [1.0; 3], 1e-3, 10).is_some());
    }
}
