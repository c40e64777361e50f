//! Neighbour lists with a skin (Verlet lists), pair-once, for the CPU force pass.
//!
//! A build bins the particles into the grid (`grid.rs`) and lists, for every owner i, the
//! particles j of higher id whose centres are within rᵢ + rⱼ + max(rgap, 0) + skin + 2 × the longest step of the step that builds, sorted by
//! j's id (a half list in CSR form; each pair has one slot, which also holds its contact
//! history), and the plane walls within the same reach. It is rebuilt only when a particle
//! has moved more than skin/2 since the last build, or a moving wall has moved far enough to
//! close the skin (`needs_rebuild`); skin = 0 rebuilds every step. Every `SORT_EVERY` builds
//! the particles are first renumbered in the Z-order of their cells (`cell_order`) so that
//! neighbours sit close in memory; their user-visible ids do not change.
//!
//! Results do not depend on the list: a slot out of reach contributes exact zeros, and each
//! particle sums its contacts in partner-id order (`forces.rs`), so skin 0 and any other skin
//! give bit-identical trajectories.

use glam::DVec3;
use rayon::prelude::*;

use super::grid::Grid;
use super::state::State;
use crate::contact::History;
use crate::error::Result;
use crate::model::state::ContactRecord;
use crate::setup::{Setup, WallState};

/// Particles per parallel work unit of the list build and the force pass.
pub const CHUNK: usize = 512;

/// Builds between two renumberings in cell order (the first build always renumbers).
pub const SORT_EVERY: u64 = 16;

/// One chunk's share of a build: pair counts and partners, wall counts and walls per owner.
type ChunkLists = (Vec<u32>, Vec<u32>, Vec<u32>, Vec<u32>);

/// A list slot's contact history, aligned to 64 bytes so that each is one cache line (with
/// the allocator's 16-byte alignment a 64-byte `History` can straddle two; the dense settle
/// box then missed a 1 MiB cache 4 % more often). Only the list's array is aligned: records
/// and wall histories keep the plain `History` (aligned, each would take 128 bytes).
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(64))]
pub struct SlotHistory(pub History);

/// A half neighbour list with per-slot contact history, plus plane-wall candidates.
#[derive(Clone, Debug)]
pub struct NeighbourList {
    /// Extra reach beyond the interaction distance, m.
    pub skin: f64,
    /// Largest positive reference gap of the pair table (interaction distance margin).
    max_rgap: f64,
    grid: Grid,
    /// Slots of owner i (internal index): `start[i]..start[i + 1]`.
    pub start: Vec<u32>,
    /// Partner of each slot (internal index), higher id than the owner, by id within an owner.
    pub partner: Vec<u32>,
    /// Contact history of each slot (`History::NEW` when the pair is not in contact).
    pub history: Vec<SlotHistory>,
    /// Whether each slot's pair was in contact in the last force pass (so slots that stay
    /// apart never touch their history).
    pub in_contact: Vec<bool>,
    /// Incoming contacts: particle i is the partner of the slots `in_slot[q]` for q in
    /// `in_start[i]..in_start[i + 1]`, in increasing owner id. The force pass writes each
    /// slot's partner share at the slot's own index (in slot order, as the owners go), and a
    /// particle's gather reads its shares through `in_slot`, in owner-id order.
    pub in_start: Vec<u32>,
    pub in_slot: Vec<u32>,
    /// First slot of every chunk of `CHUNK` owners, and the slot count last (the force pass
    /// cuts the slot arrays here).
    pub chunk_bounds: Vec<usize>,
    /// Plane walls within reach of particle i: `wall_start[i]..wall_start[i + 1]` of `wall_ids`.
    pub wall_start: Vec<u32>,
    pub wall_ids: Vec<u32>,
    /// Positions and plane-wall states at the last build.
    x_build: Vec<DVec3>,
    walls_build: Vec<WallState>,
    /// Builds so far.
    pub builds: u64,
}

impl NeighbourList {
    /// An empty list for `setup` (grid cells of at least 2 r_max + max_rgap + skin).
    pub fn new(setup: &Setup, max_rgap: f64) -> Result<NeighbourList> {
        let skin = setup.skin();
        let min_cell = (2.0 * setup.max_radius() + max_rgap + skin).max(f64::MIN_POSITIVE);
        let grid = Grid::new(&setup.domain, setup.periodic, min_cell, setup.particle_capacity())?;
        Ok(NeighbourList {
            skin,
            max_rgap,
            grid,
            start: vec![0],
            partner: Vec::new(),
            history: Vec::new(),
            in_contact: Vec::new(),
            in_start: vec![0],
            in_slot: Vec::new(),
            chunk_bounds: vec![0],
            wall_start: vec![0],
            wall_ids: Vec::new(),
            x_build: Vec::new(),
            walls_build: Vec::new(),
            builds: 0,
        })
    }

    /// Number of pair slots.
    pub fn slots(&self) -> usize {
        self.partner.len()
    }

    /// Positions at the last build (in the current particle order).
    pub fn x_build(&self) -> &[DVec3] {
        &self.x_build
    }

    /// Whether the next force pass needs a new list, given the largest squared particle
    /// displacement since the build (`displacement2`, from the drift): skin 0, a particle
    /// moved more than skin/2, or particle and wall motion together may have closed the skin
    /// (a moving plane's displacement bound over the domain, see `wall_displacement`).
    pub fn needs_rebuild(&self, setup: &Setup, displacement2: f64, walls_now: &[WallState]) -> bool {
        if self.skin <= 0.0 || self.builds == 0 {
            return true;
        }
        let particle = displacement2.sqrt();
        let wall = (self.walls_build.iter().zip(walls_now).zip(&setup.walls))
            .filter(|(_, w)| !w.motion.is_static())
            .map(|((a, b), _)| wall_displacement(setup, a, b))
            .fold(0.0, f64::max);
        particle + particle.max(wall) > self.skin
    }

    /// The order that sorts particles by the Morton (Z-order) code of their grid cell, then by
    /// internal index: `order[k]` is the particle that goes to `k`. Unlike row-major cell
    /// order, which puts the cells above and below a particle a whole plane of the grid away,
    /// the Z-order curve keeps most of a particle's 27 neighbour cells within a short stretch
    /// of memory.
    pub fn cell_order(&mut self, position: &[DVec3]) -> Vec<u32> {
        let mut keyed: Vec<(u64, u32)> = position.iter().enumerate().map(|(i, &x)| (morton_code(self.grid.cell_coords(x)), i as u32)).collect();
        keyed.par_sort_unstable();
        keyed.into_iter().map(|(_, i)| i).collect()
    }

    /// Build the lists for the particles of `s` (in their current order) and the plane walls
    /// at `walls_now`; every slot starts with `History::NEW` (see `seed`).
    pub fn build(&mut self, setup: &Setup, s: &State, walls_now: &[WallState]) {
        let n = s.len();
        self.grid.build(&s.position);
        // beyond the skin, twice this step's longest step: a contact that ended in it is still
        // listed, to book its end (`contact::ended_contact_work`), whatever the skin
        let last_step = s.velocity.par_iter().map(|v| v.length_squared()).reduce(|| 0.0, f64::max).sqrt() * setup.dt;
        let margin = self.max_rgap + self.skin + 2.0 * last_step;
        let grid = &self.grid;
        let parts: Vec<ChunkLists> = (0..n.div_ceil(CHUNK))
            .into_par_iter()
            // one chunk per job, as the force pass (`forces::forces`)
            .with_max_len(1)
            .map(|c| {
                let (mut counts, mut partners, mut wall_counts, mut walls) = (Vec::with_capacity(CHUNK), Vec::new(), Vec::with_capacity(CHUNK), Vec::new());
                for i in c * CHUNK..((c + 1) * CHUNK).min(n) {
                    let (x_i, r_i, id_i) = (s.position[i], s.radius[i], s.id[i]);
                    let first = partners.len();
                    grid.for_each_neighbour(x_i, |j| {
                        let ju = j as usize;
                        // (pairs of one rigid body are not contacts)
                        if s.id[ju] <= id_i || (!s.body.is_empty() && s.body[ju] == s.body[i]) {
                            return;
                        }
                        let cut = r_i + s.radius[ju] + margin;
                        if setup.minimum_image(s.position[ju] - x_i).length_squared() <= cut * cut {
                            partners.push(j);
                        }
                    });
                    partners[first..].sort_unstable_by_key(|&j| s.id[j as usize]);
                    counts.push((partners.len() - first) as u32);
                    let first_wall = walls.len();
                    for (w, now) in walls_now.iter().enumerate() {
                        if now.normal.dot(x_i - now.point) - r_i - margin <= 0.0 {
                            walls.push(w as u32);
                        }
                    }
                    wall_counts.push((walls.len() - first_wall) as u32);
                }
                (counts, partners, wall_counts, walls)
            })
            .collect();
        self.start.clear();
        self.start.push(0);
        self.partner.clear();
        self.wall_start.clear();
        self.wall_start.push(0);
        self.wall_ids.clear();
        for (counts, partners, wall_counts, walls) in parts {
            for c in counts {
                self.start.push(self.start.last().unwrap() + c);
            }
            self.partner.extend_from_slice(&partners);
            for c in wall_counts {
                self.wall_start.push(self.wall_start.last().unwrap() + c);
            }
            self.wall_ids.extend_from_slice(&walls);
        }
        // the histories are seeded again from records (`seed`): a list that needs more room
        // frees its old array before taking the new one (growing an over-aligned array copies
        // it, and both would be resident at the peak), with a quarter to spare
        let slots = self.partner.len();
        if self.history.capacity() < slots {
            self.history = Vec::new();
            self.history.reserve_exact(slots + slots / 4);
        }
        self.history.clear();
        self.history.resize(slots, SlotHistory(History::NEW));
        self.in_contact.clear();
        self.in_contact.resize(self.partner.len(), false);
        self.chunk_bounds = (0..=n.div_ceil(CHUNK)).map(|c| self.start[(c * CHUNK).min(n)] as usize).collect();
        self.build_incoming(s);
        self.x_build.clone_from(&s.position);
        self.walls_build = walls_now.to_vec();
        self.builds += 1;
    }

    /// For every particle, the slots where it is the partner, in increasing owner id.
    fn build_incoming(&mut self, s: &State) {
        let n = s.len();
        self.in_start.clear();
        self.in_start.resize(n + 1, 0);
        for &j in &self.partner {
            self.in_start[j as usize + 1] += 1;
        }
        for i in 0..n {
            self.in_start[i + 1] += self.in_start[i];
        }
        let mut cursor = self.in_start.clone();
        self.in_slot.clear();
        self.in_slot.resize(self.partner.len(), 0);
        for i in s.by_id() {
            for k in self.start[i] as usize..self.start[i + 1] as usize {
                let j = self.partner[k] as usize;
                self.in_slot[cursor[j] as usize] = k as u32;
                cursor[j] += 1;
            }
        }
    }

    /// The established pair contacts as records (owner id, partner id, history), sorted by
    /// (owner, partner).
    pub fn records(&self, s: &State) -> Vec<ContactRecord> {
        let mut out = Vec::new();
        for i in s.by_id() {
            for k in self.start[i] as usize..self.start[i + 1] as usize {
                let h = self.history[k].0;
                if h.established != 0.0 {
                    out.push(ContactRecord { owner: s.id[i], partner: s.id[self.partner[k] as usize], history: h });
                }
            }
        }
        out
    }

    /// Put the histories of `records` (particle pairs, sorted by (owner, partner) ids) into
    /// their slots; records of pairs the list does not hold are out of reach and dropped.
    pub fn seed(&mut self, s: &State, records: &[ContactRecord]) {
        let mut r = 0;
        for i in s.by_id() {
            let owner = s.id[i];
            while r < records.len() && records[r].owner < owner {
                r += 1;
            }
            for k in self.start[i] as usize..self.start[i + 1] as usize {
                let partner = s.id[self.partner[k] as usize];
                while r < records.len() && records[r].owner == owner && records[r].partner < partner {
                    r += 1;
                }
                if r < records.len() && records[r].owner == owner && records[r].partner == partner {
                    self.history[k] = SlotHistory(records[r].history);
                    self.in_contact[k] = true;
                    r += 1;
                }
            }
        }
    }
}

/// The Morton code of cell coordinates (each below 2²¹): their bits interleaved, x lowest.
/// The Z-order (Morton) key of cell coordinates (21 low bits per axis); also the GPU's
/// storage order at the start (`gpu::order`).
pub(crate) fn morton_code(c: [i64; 3]) -> u64 {
    // spread the 21 low bits of v so that two zero bits follow each
    fn spread(v: i64) -> u64 {
        let mut x = v as u64 & 0x1f_ffff;
        x = (x | x << 32) & 0x001f_0000_0000_ffff;
        x = (x | x << 16) & 0x001f_0000_ff00_00ff;
        x = (x | x << 8) & 0x100f_00f0_0f00_f00f;
        x = (x | x << 4) & 0x10c3_0c30_c30c_30c3;
        x = (x | x << 2) & 0x1249_2492_4924_9249;
        x
    }
    spread(c[0]) | spread(c[1]) << 1 | spread(c[2]) << 2
}

/// Upper bound on how far any point of a plane wall within reach of the domain moved between
/// two states: the shift of its reference point plus the turn of its normal times the largest
/// distance from that point to the domain.
pub fn wall_displacement(setup: &Setup, a: &WallState, b: &WallState) -> f64 {
    let (min, max) = (DVec3::from(setup.domain.min), DVec3::from(setup.domain.max));
    let far = (min - a.point).abs().max((max - a.point).abs()).length();
    (b.point - a.point).length() + (b.normal - a.normal).length() * far
}
