//! A caught blow-up on the GPU. `drift.wgsl` (every step), `kick.wgsl` (closing a batch) and
//! `forces.wgsl` (overlaps) raise `BLOWUP` in the step state with the lowest flagged particle
//! and the quantities; the step halts like an overflow, and the host, which reads the step
//! state after every batch anyway, reads the halted state once (to name the particle, quantity
//! and value) and stops. The GPU keeps no copy of the state (device memory is the limit of the
//! particle count), so it cannot hand back the batch start: the backend stops for good
//! (`step`, `export_state`, `energies`, … return an error), and `steps_done` goes back to the
//! step of its last snapshot, whose state was good when it was read (the run driver wrote it),
//! or stays at the batch start when no snapshot was taken.

use glam::DVec3;

use super::layout::StepStateRead;
use super::GpuBackend;
use crate::backend::Snapshot;
use crate::cpu::forces::MeshView;
use crate::cpu::wall_hits::overlap_wall;
use crate::error::{Result, TalusError};
use crate::mesh::grid::TriangleGrid;
use crate::layout::consts::{BLOWUP_FORCE, BLOWUP_LOST, BLOWUP_OVERLAP, BLOWUP_POSITION, BLOWUP_VELOCITY};
use crate::model::checks::{first_problem, OVERLAP_MAX_FRACTION};

impl GpuBackend {
    /// The error of a batch of `n` steps from `s0` that raised BLOWUP (`st`: its step state; n =
    /// 0: the initial force evaluation);
    /// leaves the backend stopped (see the module doc).
    pub(crate) fn blow_up(&mut self, st: &StepStateRead, s0: u64, n: u64) -> TalusError {
        // the batch may have renumbered before it halted: the device's order, whatever the step
        let bad = self.sync_order(true).and_then(|_| self.read_snapshot());
        // the device step counter stopped at the flagged step (the kick closing the batch runs
        // after the last step's `advance`)
        // (n = 0: the initial force evaluation, the state the run starts from)
        let step = if n == 0 { s0 } else { (s0 + st.step.wrapping_sub(s0 as u32) as u64 + 1).min(s0 + n) };
        // the device flags a storage index: the particle's id (`gpu::order`)
        let mut particle = (st.blowup_particle != 0 && (!st.blowup_particle as usize) < self.radius.len()).then(|| self.order.id(!st.blowup_particle as usize) as u32);
        let mut what = Vec::new();
        for (bit, name) in [(BLOWUP_POSITION, "position"), (BLOWUP_VELOCITY, "velocity"), (BLOWUP_FORCE, "contact force"), (BLOWUP_LOST, "left the domain"), (BLOWUP_OVERLAP, "contact overlap")] {
            if st.blowup_what & bit != 0 {
                what.push(name);
            }
        }
        let mut message = format!("{} not finite or out of range (GPU flag)", what.join(", "));
        if st.blowup_what & BLOWUP_OVERLAP != 0 && !self.order.is_identity() {
            // the device flags the lowest storage index, which in cell order is not the lowest
            // id: the lowest id beyond the limit found again on the host (as id order flags it)
            if let Some(p) = bad.as_ref().ok().and_then(|s| self.lowest_overlap_owner(s, step)) {
                particle = Some(p as u32);
            }
        }
        if st.blowup_what == BLOWUP_OVERLAP {
            let wall = match (&bad, particle) {
                (Ok(s), Some(p)) if (p as usize) < s.position.len() => self.overlap_wall(s, p as usize, step),
                _ => None,
            };
            let cause = crate::model::checks::overlap_cause(n == 0, wall.as_ref().map(|(n, behind)| (n.as_str(), *behind)));
            message = format!("a contact overlap beyond {OVERLAP_MAX_FRACTION} of the radius{cause}");
        }
        if let Ok(s) = bad {
            let v = |a: &[[f64; 3]], i: usize| DVec3::from(a[i]);
            let found = first_problem(s.position.len(), |i| [v(&s.position, i), v(&s.velocity, i), v(&s.angular_velocity, i), v(&s.force, i), v(&s.torque, i)], self.lost, self.periodic);
            if let Some(p) = found {
                particle = Some(p.index as u32);
                let (lo, hi, margin) = self.lost.unwrap_or((DVec3::ZERO, DVec3::ZERO, 0.0));
                message = p.describe((lo, hi), margin);
            }
        }
        let held = match self.last_snapshot_step {
            Some(k) => {
                self.steps_done = k;
                format!("the GPU keeps no copy of the state; the last good state is its last snapshot, step {k}")
            }
            None => format!("the GPU keeps no copy of the state and took no snapshot before the batch from step {s0}"),
        };
        self.stopped = Some(format!("a blow-up at step {step}"));
        TalusError::BlowUp { step, particle, message: format!("{message}; {held}") }
    }

    /// The wall or mesh facet particle `i` of the halted state `s` (at `step`) overlaps beyond
    /// the limit, named as the CPU backend names it (`wall_hits::overlap_wall`; the meshes are
    /// binned again on the host, once, for this message).
    fn overlap_wall(&self, s: &Snapshot, i: usize, step: u64) -> Option<(String, bool)> {
        let t = step as f64 * self.dt;
        let grids: Vec<TriangleGrid> = self.meshes.walls.iter().map(|m| TriangleGrid::coarse(&m.mesh)).collect::<Result<_>>().ok()?;
        let views: Vec<MeshView> = self.meshes.walls.iter().zip(&grids).map(|(wall, grid)| MeshView { wall, grid, group_base: 0, pose: wall.pose_at(t) }).collect();
        let sample = || {
            let stride = s.position.len().div_ceil(256).max(1);
            s.position.iter().step_by(stride).map(|&x| DVec3::from(x)).collect()
        };
        let travel = DVec3::from(s.velocity[i]).length() * self.dt;
        overlap_wall(&self.walls, t, &views, DVec3::from(s.position[i]), s.radius[i], travel, sample)
    }

    /// The error of an OVERFLOW_MESH_GROUPS step state (`GpuMeshes::overflow_error`), naming the
    /// particle by its id (the device flags a storage index, `gpu::order`).
    pub(crate) fn mesh_overflow(&self, st: &StepStateRead, step: u64) -> TalusError {
        let mut named = *st;
        if let Some(s) = st.mesh_overflow_particle.checked_sub(1).filter(|&s| (s as usize) < self.radius.len()) {
            named.mesh_overflow_particle = self.order.id(s as usize) as u32 + 1;
        }
        self.meshes.overflow_error(&named, step)
    }

    /// The lowest id whose contact overlap in `s` (at `step`) passes the limit as `forces.wgsl`
    /// checks it: a ball pair's (its lower id owns it) or a wall's or mesh's. `None` where none
    /// does in f64 (the device's f32 can differ at the edge) or on periodic axes (not searched).
    fn lowest_overlap_owner(&self, s: &Snapshot, step: u64) -> Option<usize> {
        let n = s.position.len();
        if n == 0 || self.periodic.iter().any(|&p| p) {
            return None;
        }
        let r_max = s.radius.iter().copied().fold(0.0f64, f64::max);
        if !(r_max.is_finite() && r_max > 0.0) {
            return None;
        }
        let cell = 2.0 * r_max;
        let key = |x: &[f64; 3]| -> Option<[i64; 3]> {
            let k: [f64; 3] = std::array::from_fn(|a| (x[a] / cell).floor());
            k.iter().all(|v| v.is_finite() && v.abs() < 1e15).then(|| k.map(|v| v as i64))
        };
        let mut cells: std::collections::HashMap<[i64; 3], Vec<usize>> = std::collections::HashMap::new();
        for (i, x) in s.position.iter().enumerate() {
            if let Some(k) = key(x) {
                cells.entry(k).or_default().push(i);
            }
        }
        let t = step as f64 * self.dt;
        let grids: Vec<TriangleGrid> = self.meshes.walls.iter().map(|m| TriangleGrid::coarse(&m.mesh)).collect::<Result<_>>().ok()?;
        let views: Vec<MeshView> = self.meshes.walls.iter().zip(&grids).map(|(wall, grid)| MeshView { wall, grid, group_base: 0, pose: wall.pose_at(t) }).collect();
        (0..n).find(|&i| {
            let (xi, ri) = (DVec3::from(s.position[i]), s.radius[i]);
            if crate::cpu::wall_hits::deepest_wall_hit(&self.walls, t, &views, xi, ri).is_some_and(|h| h.depth() > OVERLAP_MAX_FRACTION * ri) {
                return true;
            }
            let Some(k) = key(&s.position[i]) else { return false };
            (-1..=1).any(|dz| {
                (-1..=1).any(|dy| {
                    (-1..=1).any(|dx| {
                        cells.get(&[k[0] + dx, k[1] + dy, k[2] + dz]).is_some_and(|js| {
                            js.iter().any(|&j| j > i && {
                                let rj = s.radius[j];
                                ri + rj - xi.distance(DVec3::from(s.position[j])) > OVERLAP_MAX_FRACTION * ri.min(rj)
                            })
                        })
                    })
                })
            })
        })
    }

    /// An error once a blow-up has stopped the backend.
    pub(crate) fn check_usable(&self) -> Result<()> {
        match &self.stopped {
            None => Ok(()),
            Some(why) => Err(TalusError::Device(format!("the GPU backend stopped after {why} and holds no good state"))),
        }
    }
}
