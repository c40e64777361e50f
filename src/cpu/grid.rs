//! Neighbour grid built by counting sort every step: count → prefix sum → scatter.
//! Same passes as `shaders/grid_*.wgsl`; scattering serially in id order leaves every cell
//! sorted by particle id, which the GPU obtains with its `grid_sort` pass.

use glam::DVec3;

use crate::error::{Result, TalusError};
use crate::gpu::grid::cell_budget;
use crate::setup::Aabb;

/// A uniform grid over the domain; cell coordinates outside it are clamped to the border,
/// which keeps neighbouring particles in neighbouring cells. On a periodic axis the grid has
/// floor(period / cell) cells, the last one absorbing the remainder, and neighbour cells wrap.
#[derive(Clone, Debug)]
pub struct Grid {
    pub origin: DVec3,
    pub cell_size: f64,
    pub dims: [i64; 3],
    pub periodic: [bool; 3],
    /// Exclusive prefix sum of per-cell counts; `cell_start[c]..cell_start[c+1]` indexes `cell_particles`.
    pub cell_start: Vec<u32>,
    /// Particle ids sorted by cell, then by id.
    pub cell_particles: Vec<u32>,
    particle_cell: Vec<u32>,
}

impl Grid {
    /// `min_cell` is the shortest cell edge that still finds every contact (largest
    /// interaction distance between two particles). The cell count stays within the budget
    /// shared with the GPU grid (`gpu::grid::cell_budget`); larger domains get larger cells.
    pub fn new(domain: &Aabb, periodic: [bool; 3], min_cell: f64, n_particles: usize) -> Result<Grid> {
        let budget = cell_budget(n_particles) as f64;
        let origin = DVec3::from(domain.min);
        let extent = DVec3::from(domain.max) - origin;
        let mut cell_size = min_cell;
        let dims = loop {
            let d: [f64; 3] = std::array::from_fn(|a| {
                let cells = extent[a] / cell_size;
                if periodic[a] { cells.floor() } else { cells.ceil().max(1.0) }
            });
            if d[0] * d[1] * d[2] <= budget {
                break d.map(|x| x as i64);
            }
            cell_size *= 1.125;
        };
        if let Some(a) = (0..3).find(|&a| periodic[a] && dims[a] < 3) {
            return Err(TalusError::Other(format!(
                "periodic axis {a}: {} cells of {cell_size:e} m; at least 3 are needed (enlarge the period or use fewer particles per cell)",
                dims[a]
            )));
        }
        let n_cells = (dims[0] * dims[1] * dims[2]) as usize;
        Ok(Grid { origin, cell_size, dims, periodic, cell_start: vec![0; n_cells + 1], cell_particles: Vec::new(), particle_cell: Vec::new() })
    }

    /// The cell `c + d` on axis `a`: wrapped on a periodic axis, `None` outside otherwise.
    fn neighbour_coord(&self, a: usize, c: i64, d: i64) -> Option<i64> {
        let n = self.dims[a];
        let x = c + d;
        if self.periodic[a] {
            Some(x.rem_euclid(n))
        } else if (0..n).contains(&x) {
            Some(x)
        } else {
            None
        }
    }

    /// Clamped integer cell coordinates of a point.
    pub fn cell_coords(&self, x: DVec3) -> [i64; 3] {
        let c = ((x - self.origin) / self.cell_size).floor();
        [
            (c.x as i64).clamp(0, self.dims[0] - 1),
            (c.y as i64).clamp(0, self.dims[1] - 1),
            (c.z as i64).clamp(0, self.dims[2] - 1),
        ]
    }

    pub fn cell_index(&self, c: [i64; 3]) -> usize {
        ((c[2] * self.dims[1] + c[1]) * self.dims[0] + c[0]) as usize
    }

    /// Rebuild from positions: `grid_count`, `grid_scan`, `grid_scatter`.
    pub fn build(&mut self, position: &[DVec3]) {
        self.grid_count(position);
        self.grid_scan();
        self.grid_scatter();
    }

    fn grid_count(&mut self, position: &[DVec3]) {
        self.cell_start.iter_mut().for_each(|c| *c = 0);
        self.particle_cell.clear();
        for &x in position {
            let c = self.cell_index(self.cell_coords(x));
            self.particle_cell.push(c as u32);
            self.cell_start[c + 1] += 1;
        }
    }

    fn grid_scan(&mut self) {
        for c in 1..self.cell_start.len() {
            self.cell_start[c] += self.cell_start[c - 1];
        }
    }

    fn grid_scatter(&mut self) {
        let mut cursor = self.cell_start.clone();
        self.cell_particles.resize(self.particle_cell.len(), 0);
        for (i, &c) in self.particle_cell.iter().enumerate() {
            self.cell_particles[cursor[c as usize] as usize] = i as u32;
            cursor[c as usize] += 1;
        }
    }

    /// Visit the particles of the (up to) 27 cells around `x`, cells in z, y, x order
    /// (offsets −1, 0, +1; wrapped on periodic axes).
    pub fn for_each_neighbour(&self, x: DVec3, mut visit: impl FnMut(u32)) {
        let c = self.cell_coords(x);
        for dz in -1..=1 {
            let Some(z) = self.neighbour_coord(2, c[2], dz) else { continue };
            for dy in -1..=1 {
                let Some(y) = self.neighbour_coord(1, c[1], dy) else { continue };
                for dx in -1..=1 {
                    let Some(x) = self.neighbour_coord(0, c[0], dx) else { continue };
                    let cell = self.cell_index([x, y, z]);
                    for &j in &self.cell_particles[self.cell_start[cell] as usize..self.cell_start[cell + 1] as usize] {
                        visit(j);
                    }
                }
            }
        }
    }
}
