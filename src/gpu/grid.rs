//! Block size (position precision) and neighbour-grid geometry.
//!
//! BLOCK is a power of two, at most 2^-16 m (≈ 15.3 µm): an f32 offset in [0, BLOCK) then has
//! a resolution of BLOCK·2^-24 ≤ 2^-40 m ≈ 9e-13 m, so even a sub-nanometre step per time step
//! accumulates < 1e-9 m over 1000 steps. It grows only if a coordinate would leave ±2^30 blocks
//! (i32 block indices). Grid cells are an integer number `cell_blocks` of blocks and at least
//! 2·max radius + max reference gap; the cell count is capped at min(`MAX_CELLS`,
//! max(`MIN_CELL_BUDGET`, `CELLS_PER_PARTICLE`·n)) by growing the cell edge in steps of 1/8.

use crate::error::{Result, TalusError};
use crate::setup::Setup;

/// Upper bound on the number of grid cells.
pub const MAX_CELLS: u64 = 8 << 20;
/// Cells allowed per particle (plus `MIN_CELL_BUDGET`): per-cell passes (clear, scan, sort)
/// must not dominate sparse scenes in large domains.
pub const CELLS_PER_PARTICLE: u64 = 4;
pub const MIN_CELL_BUDGET: u64 = 4096;

/// Most cells a grid may have for `n_particles` (both backends size their grids with this).
pub fn cell_budget(n_particles: usize) -> u64 {
    (CELLS_PER_PARTICLE * n_particles as u64).max(MIN_CELL_BUDGET).min(MAX_CELLS)
}
/// log2 of the largest BLOCK used for ordinary scenes.
pub const BLOCK_LOG2_MAX: i32 = -16;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GridSpec {
    /// BLOCK, m.
    pub block: f64,
    /// Grid origin, blocks.
    pub origin: [i32; 3],
    /// Blocks per cell edge.
    pub cell_blocks: i32,
    pub dims: [u32; 3],
    pub n_cells: u32,
    /// Period (domain extent) per axis as blocks + offset.
    pub period_blocks: [i32; 3],
    pub period_offset: [f32; 3],
    /// Domain minimum as blocks + offset.
    pub domain_min_block: [i32; 3],
    pub domain_min_offset: [f32; 3],
    /// Neighbour-list skin, m (the scene's, or 0 where a periodic axis would get fewer than 3
    /// cells of the larger size).
    pub skin: f64,
}

/// Split x into (block, offset): x = block·BLOCK + offset, offset ∈ [0, BLOCK) as f32.
pub fn split(x: f64, block: f64) -> (i32, f32) {
    let mut b = (x / block).floor();
    let mut o = (x - b * block) as f32;
    if o >= block as f32 {
        b += 1.0;
        o = 0.0;
    }
    if o < 0.0 {
        o = 0.0;
    }
    (b as i32, o)
}

/// x = block·BLOCK + offset in f64 (exact).
pub fn join(b: i32, o: f32, block: f64) -> f64 {
    b as f64 * block + o as f64
}

impl GridSpec {
    /// The grid for the scene's neighbour-list skin; with skin 0 if only that fits a periodic
    /// axis 3 cells.
    pub fn new(setup: &Setup) -> Result<Self> {
        Self::with_skin(setup, setup.skin()).or_else(|_| Self::with_skin(setup, 0.0))
    }

    /// Cells of at least 2·max radius + max reference gap + `skin`.
    pub fn with_skin(setup: &Setup, skin: f64) -> Result<Self> {
        let max_r = setup.max_radius();
        let max_rgap = setup.max_reach_gap();
        let mut extent = 0.0f64;
        for p in setup.particles.position.iter() {
            for c in p {
                extent = extent.max(c.abs());
            }
        }
        for w in &setup.walls {
            for c in w.point {
                extent = extent.max(c.abs());
            }
        }
        for m in &setup.meshes {
            let (lo, hi) = m.mesh.bounds();
            extent = extent.max(lo.abs().max_element()).max(hi.abs().max_element());
        }
        for c in setup.domain.min.iter().chain(setup.domain.max.iter()) {
            extent = extent.max(c.abs());
        }
        if !extent.is_finite() {
            return Err(TalusError::Other("non-finite coordinate in the scene".into()));
        }
        let mut e = BLOCK_LOG2_MAX;
        if max_r > 0.0 {
            e = e.min(max_r.log2().floor() as i32);
        }
        while extent / 2f64.powi(e) >= (1u64 << 30) as f64 {
            e += 1;
        }
        let block = 2f64.powi(e);
        let reach = 2.0 * max_r + max_rgap + skin;
        let mut k = ((reach / block).ceil() as i64).max(1);
        let lo: Vec<i64> = setup.domain.min.iter().map(|v| (v / block).floor() as i64).collect();
        let hi: Vec<i64> = setup.domain.max.iter().map(|v| (v / block).ceil() as i64).collect();
        // a periodic axis has floor(period / cell) cells, the last absorbing the remainder
        let period: Vec<f64> = (0..3).map(|a| setup.domain.max[a] - setup.domain.min[a]).collect();
        let dims = |k: i64| -> [u64; 3] {
            std::array::from_fn(|a| {
                if setup.periodic[a] {
                    (period[a] / (k as f64 * block)).floor().max(0.0) as u64
                } else {
                    (((hi[a] - lo[a]).max(1) + k - 1) / k).max(1) as u64
                }
            })
        };
        let budget = cell_budget(setup.particle_capacity());
        while dims(k).iter().product::<u64>() > budget {
            k = (k + 1).max(k + k / 8);
        }
        if k > i32::MAX as i64 / 4 {
            return Err(TalusError::Other(format!("grid cell of {k} blocks is too large")));
        }
        let d = dims(k);
        if let Some(a) = (0..3).find(|&a| setup.periodic[a] && d[a] < 3) {
            return Err(TalusError::Other(format!(
                "periodic axis {a}: {} grid cells of {:e} m; at least 3 are needed (enlarge the period or use fewer particles per cell)",
                d[a],
                k as f64 * block
            )));
        }
        let pb: [(i32, f32); 3] = std::array::from_fn(|a| split(period[a], block));
        let mb: [(i32, f32); 3] = std::array::from_fn(|a| split(setup.domain.min[a], block));
        Ok(GridSpec {
            block,
            origin: [lo[0] as i32, lo[1] as i32, lo[2] as i32],
            cell_blocks: k as i32,
            dims: [d[0] as u32, d[1] as u32, d[2] as u32],
            n_cells: (d[0] * d[1] * d[2]) as u32,
            period_blocks: pb.map(|p| p.0),
            period_offset: pb.map(|p| p.1),
            domain_min_block: mb.map(|p| p.0),
            domain_min_offset: mb.map(|p| p.1),
            skin,
        })
    }

    /// Cell edge, m.
    pub fn cell_size(&self) -> f64 {
        self.cell_blocks as f64 * self.block
    }
}
