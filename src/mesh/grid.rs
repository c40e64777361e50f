//! Uniform grid of triangle ids over a mesh's bounding box (CPU), in CSR form.
//!
//! Each triangle goes into every cell its bounding box, expanded by `margin`, overlaps. The
//! CSR arrays are built like the particle grid: count per cell → exclusive scan (`cell_start`)
//! → scatter in triangle order, so each cell lists its triangles in increasing id. A query
//! returns the sorted, deduplicated triangles whose expanded box overlaps the sphere's box:
//! exactly that set, a superset of the triangles within the sphere. The cell count is capped
//! at `cell_budget` by growing the cell edge in steps of 1/8, as the particle grid does.

use glam::DVec3;

use super::TriangleMesh;
use crate::error::{Result, TalusError};

/// A triangle grid; see the module doc.
#[derive(Clone, Debug)]
pub struct TriangleGrid {
    /// Minimum corner of the grid (mesh box minus margin).
    pub origin: DVec3,
    /// Cell edge actually used (≥ the requested one).
    pub cell: f64,
    /// Cells along x, y, z.
    pub dims: [usize; 3],
    /// Expansion of each triangle's box.
    pub margin: f64,
    /// Triangles of cell c: `triangle_ids[cell_start[c]..cell_start[c + 1]]`.
    pub cell_start: Vec<u32>,
    pub triangle_ids: Vec<u32>,
    /// Expanded bounding box (min, max) of each triangle.
    pub boxes: Vec<(DVec3, DVec3)>,
}

/// Most cells for `n` triangles: 8 n, at least 4096, at most 2²⁴.
pub fn cell_budget(n: usize) -> usize {
    (8 * n).clamp(4096, 1 << 24)
}

impl TriangleGrid {
    /// A coarse grid for one-off queries (the scene loader's checks, naming the wall a stopped
    /// run's particle overlaps): cells of about 1/32 of the mesh's largest extent, no margin.
    pub fn coarse(mesh: &TriangleMesh) -> Result<TriangleGrid> {
        let (lo, hi) = mesh.bounds();
        let cell = ((hi - lo).max_element() / 32.0).max(1e-9);
        TriangleGrid::build(mesh, cell, 0.0)
    }

    /// Bin `mesh` with cell edge `cell` (grown if over budget) and box margin `margin`.
    pub fn build(mesh: &TriangleMesh, cell: f64, margin: f64) -> Result<TriangleGrid> {
        if !(cell.is_finite() && cell > 0.0 && margin.is_finite() && margin >= 0.0) {
            return Err(TalusError::Other(format!("{}: triangle grid needs a finite positive cell and a finite margin ≥ 0, got cell {cell}, margin {margin}", mesh.source.display())));
        }
        let boxes: Vec<(DVec3, DVec3)> = mesh.triangles.iter().map(|t| expanded_box(t, margin)).collect();
        let (lo, hi) = mesh.bounds();
        let (origin, extent) = (lo - DVec3::splat(margin), hi - lo + DVec3::splat(2.0 * margin));
        let (cell, dims) = fit_cells(extent, cell, cell_budget(mesh.len()));
        let mut grid = TriangleGrid { origin, cell, dims, margin, cell_start: Vec::new(), triangle_ids: Vec::new(), boxes };
        let counts = grid.count();
        grid.cell_start = exclusive_scan(&counts);
        grid.triangle_ids = grid.scatter();
        Ok(grid)
    }

    /// Number of cells.
    pub fn cell_count(&self) -> usize {
        self.dims[0] * self.dims[1] * self.dims[2]
    }

    /// Triangles per cell.
    fn count(&self) -> Vec<u32> {
        let mut counts = vec![0u32; self.cell_count()];
        for &(lo, hi) in &self.boxes {
            self.for_cells(lo, hi, |c| counts[c] += 1);
        }
        counts
    }

    /// Triangle ids in cell order, each cell in increasing id.
    fn scatter(&self) -> Vec<u32> {
        let mut cursor = self.cell_start[..self.cell_count()].to_vec();
        let mut ids = vec![0u32; *self.cell_start.last().unwrap_or(&0) as usize];
        for (t, &(lo, hi)) in self.boxes.iter().enumerate() {
            self.for_cells(lo, hi, |c| {
                ids[cursor[c] as usize] = t as u32;
                cursor[c] += 1;
            });
        }
        ids
    }

    /// Cell coordinate of `p`, clamped to the grid.
    fn cell_of(&self, p: DVec3) -> [usize; 3] {
        let q = ((p - self.origin) / self.cell).floor();
        let clamp = |x: f64, n: usize| x.clamp(0.0, (n - 1) as f64) as usize;
        [clamp(q.x, self.dims[0]), clamp(q.y, self.dims[1]), clamp(q.z, self.dims[2])]
    }

    /// Call `f` with the linear index of every cell the box (lo, hi) overlaps, z-y-x order.
    fn for_cells(&self, lo: DVec3, hi: DVec3, mut f: impl FnMut(usize)) {
        let (a, b) = (self.cell_of(lo), self.cell_of(hi));
        for z in a[2]..=b[2] {
            for y in a[1]..=b[1] {
                let row = (z * self.dims[1] + y) * self.dims[0];
                for x in a[0]..=b[0] {
                    f(row + x);
                }
            }
        }
    }

    /// Candidate triangles for the sphere (center, radius) into `out` (cleared first): every
    /// triangle whose expanded box overlaps the sphere's box, sorted, no duplicates.
    pub fn candidates_into(&self, center: DVec3, radius: f64, out: &mut Vec<u32>) {
        out.clear();
        let (lo, hi) = (center - DVec3::splat(radius), center + DVec3::splat(radius));
        let grid_hi = self.origin + DVec3::new(self.dims[0] as f64, self.dims[1] as f64, self.dims[2] as f64) * self.cell;
        if lo.cmpgt(grid_hi).any() || hi.cmplt(self.origin).any() {
            return;
        }
        self.for_cells(lo, hi, |c| {
            for &t in &self.triangle_ids[self.cell_start[c] as usize..self.cell_start[c + 1] as usize] {
                if boxes_overlap(self.boxes[t as usize], (lo, hi)) {
                    out.push(t);
                }
            }
        });
        out.sort_unstable();
        out.dedup();
    }

    /// `candidates_into` returning a new vector.
    pub fn candidates(&self, center: DVec3, radius: f64) -> Vec<u32> {
        let mut out = Vec::new();
        self.candidates_into(center, radius, &mut out);
        out
    }
}

/// Bounding box of a triangle expanded by `margin` on every side.
pub fn expanded_box(t: &[DVec3; 3], margin: f64) -> (DVec3, DVec3) {
    let m = DVec3::splat(margin);
    (t[0].min(t[1]).min(t[2]) - m, t[0].max(t[1]).max(t[2]) + m)
}

/// Whether two closed boxes overlap.
pub fn boxes_overlap(a: (DVec3, DVec3), b: (DVec3, DVec3)) -> bool {
    a.0.cmple(b.1).all() && b.0.cmple(a.1).all()
}

/// Cell edge (grown by 1/8 steps until the count fits `budget`) and cells per axis.
fn fit_cells(extent: DVec3, mut cell: f64, budget: usize) -> (f64, [usize; 3]) {
    loop {
        let dims = extent.to_array().map(|e| ((e / cell).ceil() as usize).max(1));
        if dims.iter().map(|&d| d as f64).product::<f64>() <= budget as f64 {
            return (cell, dims);
        }
        cell *= 1.125;
    }
}

/// Exclusive prefix sum with the total appended (`counts.len() + 1` entries).
fn exclusive_scan(counts: &[u32]) -> Vec<u32> {
    let mut start = Vec::with_capacity(counts.len() + 1);
    let mut sum = 0u32;
    for &c in counts {
        start.push(sum);
        sum += c;
    }
    start.push(sum);
    start
}
