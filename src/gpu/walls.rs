//! Wall tables and wall loads. The host evaluates every wall's pose in f64 (`Wall::state_at`,
//! `MeshWall::pose_at`, src/motion.rs) for each force evaluation of a batch and uploads the
//! rows before the batch is submitted (no host round-trip inside the step loop); `forces` and
//! `wall_loads` pick the row of their time index (shaders/wall_contact.wgsl,
//! shaders/mesh/data.wgsl). When nothing moves the tables have a single row. Plane rows go to
//! the `walls` table, mesh rows to the pose section of `mesh_data` (`gpu::meshes`).

use glam::DVec3;

use super::grid;
use super::layout::{SimParams, WallGpu};
use super::readback::read_buffers;
use super::GpuBackend;
use crate::backend::WallLoad;
use crate::error::Result;
use crate::setup::{MeshWall, Wall};

/// Most rows (force evaluations) one batch's wall table holds when walls move.
pub const WALL_ROWS_MAX: u64 = 1024;

fn split3(x: DVec3, block: f64) -> ([i32; 3], [f32; 3]) {
    let s: [(i32, f32); 3] = std::array::from_fn(|a| grid::split(x[a], block));
    ([s[0].0, s[1].0, s[2].0], [s[0].1, s[1].1, s[2].1])
}

fn f4(v: DVec3) -> [f32; 4] {
    [v.x as f32, v.y as f32, v.z as f32, 0.0]
}

/// `wall` at time `t`, in the GPU layout.
pub fn wall_gpu(wall: &Wall, t: f64, block: f64) -> WallGpu {
    let now = wall.state_at(t);
    let (pb, po) = split3(now.point, block);
    let (cb, co) = split3(now.pose.center, block);
    let (lb, lo) = split3(DVec3::from(wall.load_point), block);
    WallGpu {
        block: [pb[0], pb[1], pb[2], wall.material as i32],
        offset: [po[0], po[1], po[2], 0.0],
        normal: f4(now.normal.normalize()),
        velocity: f4(now.pose.velocity),
        omega: f4(now.pose.omega),
        center_block: [cb[0], cb[1], cb[2], 0],
        center_offset: [co[0], co[1], co[2], 0.0],
        load_block: [lb[0], lb[1], lb[2], 0],
        load_offset: [lo[0], lo[1], lo[2], 0.0],
    }
}

/// Rows the wall and mesh pose tables need: one when nothing moves, else the longest batch.
pub fn wall_rows_capacity(walls: &[Wall], meshes: &[MeshWall], steps_per_submit: u64) -> u64 {
    if walls.iter().all(|w| w.motion.is_static()) && meshes.iter().all(|m| m.motion.is_static()) {
        1
    } else {
        steps_per_submit.clamp(1, WALL_ROWS_MAX)
    }
}

impl GpuBackend {
    /// True when some wall or mesh moves (the tables are rewritten for every batch).
    pub(crate) fn walls_move(&self) -> bool {
        self.wall_rows_capacity > 1
    }

    /// Upload the plane walls and mesh poses at time indices `time0 .. time0 + rows` and point
    /// `sim` at them.
    pub(crate) fn upload_poses(&mut self, time0: u64, rows: u64) {
        if self.walls.is_empty() && self.meshes.walls.is_empty() {
            return;
        }
        let rows = rows.clamp(1, self.wall_rows_capacity);
        let mut table = Vec::with_capacity((rows as usize) * self.walls.len());
        for k in 0..rows {
            let t = (time0 + k) as f64 * self.dt;
            table.extend(self.walls.iter().map(|w| wall_gpu(w, t, self.grid.block)));
        }
        let q = &self.ctx.queue;
        if !table.is_empty() {
            q.write_buffer(&self.buffers.walls, 0, bytemuck::cast_slice(&table));
        }
        self.meshes.upload_poses(&self.ctx, time0, rows, self.dt, self.grid.block);
        self.sim.wall_time0 = time0 as u32;
        self.sim.wall_rows = rows as u32;
        let off = std::mem::offset_of!(SimParams, wall_time0) as u64;
        q.write_buffer(&self.buffers.sim, off, bytemuck::cast_slice(&[self.sim.wall_time0, self.sim.wall_rows]));
    }

    /// Force and torque on every plane wall, then every mesh wall, in the last step of the
    /// last batch (`wall_loads` pass).
    pub(crate) fn read_wall_loads(&mut self) -> Result<Vec<WallLoad>> {
        let n = self.walls.len() + self.meshes.walls.len();
        if n == 0 {
            return Ok(Vec::new());
        }
        let bytes = read_buffers(&self.ctx, &[(&self.buffers.wall_loads, 32 * n as u64)])?;
        let v: &[[f32; 4]] = bytemuck::cast_slice(&bytes[0]);
        let d = |x: [f32; 4]| [x[0] as f64, x[1] as f64, x[2] as f64];
        Ok((0..n).map(|w| WallLoad { force: d(v[2 * w]), torque: d(v[2 * w + 1]) }).collect())
    }
}
