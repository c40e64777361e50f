//! The GPU backend's share of a checkpoint beyond `ParticleState` (`Backend::export_exact`,
//! `import_exact`): the particle buffers as the device holds them (block + f32 offset, f32
//! velocities with 1/m and 1/I in w, force with the strain in w, torque with the contact count
//! in w, images), the per-particle Kahan pairs of dissipated work and the f32 work of the steps
//! since the last fold (`DISSIPATION_FOLD_STEPS`). Written back after `import`, they make the
//! device state bit for bit the one that was saved (the history table is rebuilt by `import`
//! from the exact f32 → f64 → f32 round trip of every record; where a record sits in the table
//! does not change results). From the CPU's state only the work is taken: its f64 sums become
//! Kahan pairs (sum, compensation) with nothing unfolded.

use super::readback::read_buffers;
use super::GpuBackend;
use crate::error::{Result, TalusError};
use crate::layout::consts::DISSIPATION_PARTS;
use crate::model::state::ExactState;

/// `ExactState::kind` of the GPU backend.
pub const KIND: &str = "gpu";

/// The raw arrays by name with their bytes per particle, in `raw_buffers` order.
const RAW: [(&str, u64); 9] = [
    ("pos_block", 16),
    ("pos_offset", 16),
    ("velocity", 16),
    ("omega", 16),
    ("force", 16),
    ("torque", 16),
    ("image", 16),
    ("dissipation", 8 * DISSIPATION_PARTS as u64),
    ("dissipation_step", 16),
];

impl GpuBackend {
    fn raw_buffers(&self) -> [&wgpu::Buffer; 9] {
        let b = &self.buffers;
        [&b.pos_block, &b.pos_offset, &b.velocity, &b.omega, &b.force, &b.torque, &b.image, &b.dissipation, &b.dissipation_step]
    }

    pub(super) fn export_exact_state(&mut self) -> Result<ExactState> {
        let n = self.buffers.n_particles as u64;
        let srcs: Vec<(&wgpu::Buffer, u64)> = self.raw_buffers().into_iter().zip(RAW).map(|(b, (_, per))| (b, per * n)).collect();
        let data = read_buffers(&self.ctx, &srcs)?;
        let pairs: Vec<[f32; 2]> = bytemuck::pod_collect_to_vec(&data[7]);
        let unfolded: Vec<[f32; 4]> = bytemuck::pod_collect_to_vec(&data[8]);
        let parts = DISSIPATION_PARTS as usize;
        let work = (0..n as usize).map(|i| std::array::from_fn(|k| {
            let [sum, compensation] = pairs[i * parts + k];
            (sum as f64 - compensation as f64) + unfolded[i][k] as f64
        }));
        let raw = RAW.iter().zip(data).map(|((name, _), bytes)| (name.to_string(), bytes)).collect();
        Ok(ExactState { kind: KIND.into(), work: work.collect(), raw })
    }

    pub(super) fn import_exact_state(&mut self, exact: &ExactState) -> Result<()> {
        let n = self.buffers.n_particles as u64;
        if exact.work.len() as u64 != n {
            return Err(TalusError::Other(format!("the {} state holds the work of {} particles, the GPU backend holds {n}", exact.kind, exact.work.len())));
        }
        if n == 0 {
            return Ok(());
        }
        let q = &self.ctx.queue;
        let buffers = self.raw_buffers();
        if exact.kind == KIND {
            for ((name, per), buffer) in RAW.iter().zip(buffers) {
                let bytes = exact.raw(name)?;
                if bytes.len() as u64 != per * n {
                    return Err(TalusError::Other(format!("the GPU state's `{name}` holds {} bytes, not {} for {n} particles", bytes.len(), per * n)));
                }
                q.write_buffer(buffer, 0, bytes);
            }
            return Ok(());
        }
        let pairs: Vec<[f32; 2]> = (exact.work.iter().flatten())
            .map(|&w| {
                let sum = w as f32;
                [sum, (sum as f64 - w) as f32]
            })
            .collect();
        q.write_buffer(&self.buffers.dissipation, 0, bytemuck::cast_slice(&pairs));
        q.write_buffer(&self.buffers.dissipation_step, 0, &vec![0u8; 16 * n as usize]);
        Ok(())
    }
}
