//! A caught blow-up on the GPU. `drift.wgsl` (every step) and `kick.wgsl` (closing a batch)
//! raise `BLOWUP` in the step state with the lowest flagged particle and the quantities; the
//! step halts like an overflow, and the host, which reads the step state after every batch
//! anyway, reads the halted state once (to name the particle, quantity and value), restores the
//! batch-start backup (the last good state, for the run driver's last snapshot) and stops.

use glam::DVec3;

use super::layout::{StepStateRead, STEP_STATE_BYTES};
use super::GpuBackend;
use crate::backend::Backend;
use crate::error::TalusError;
use crate::layout::consts::{BLOWUP_FORCE, BLOWUP_LOST, BLOWUP_POSITION, BLOWUP_VELOCITY};
use crate::model::checks::first_problem;

impl GpuBackend {
    /// The error of a batch of `n` steps from `s0` that raised BLOWUP (`st`: its step state);
    /// leaves the backend at the batch start.
    pub(crate) fn blow_up(&mut self, st: &StepStateRead, s0: u64, n: u64) -> TalusError {
        let bad = self.snapshot();
        // back to the batch start: particles, step state and the table the batch read first
        let b = &self.buffers;
        let mut enc = self.ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("restore after blow-up") });
        for (dst, src) in b.state_buffers().iter().zip(&b.backup.state) {
            enc.copy_buffer_to_buffer(src, 0, dst, 0, src.size());
        }
        enc.copy_buffer_to_buffer(&b.backup.step_state, 0, &b.step_state, 0, STEP_STATE_BYTES);
        enc.copy_buffer_to_buffer(&b.backup.hash, 0, &b.hash[(s0 % 2) as usize], 0, b.backup.hash.size());
        self.ctx.queue.submit([enc.finish()]);
        // the device step counter stopped at the flagged step (relative to the batch start)
        let step = match self.read_step_state() {
            Ok(start) => s0 + (st.step.wrapping_sub(start.step) as u64 + 1).min(n),
            Err(_) => s0 + n,
        };
        let mut particle = (st.blowup_particle != 0).then_some(!st.blowup_particle);
        let mut what = Vec::new();
        for (bit, name) in [(BLOWUP_POSITION, "position"), (BLOWUP_VELOCITY, "velocity"), (BLOWUP_FORCE, "contact force"), (BLOWUP_LOST, "left the domain")] {
            if st.blowup_what & bit != 0 {
                what.push(name);
            }
        }
        let mut message = format!("{} not finite or out of range (GPU flag)", what.join(", "));
        if let Ok(s) = bad {
            let v = |a: &[[f64; 3]], i: usize| DVec3::from(a[i]);
            let found = first_problem(s.position.len(), |i| [v(&s.position, i), v(&s.velocity, i), v(&s.angular_velocity, i), v(&s.force, i), v(&s.torque, i)], self.lost, self.periodic);
            if let Some(p) = found {
                particle = Some(p.index as u32);
                let (lo, hi, margin) = self.lost.unwrap_or((DVec3::ZERO, DVec3::ZERO, 0.0));
                message = p.describe((lo, hi), margin);
            }
        }
        TalusError::BlowUp { step, particle, message: format!("{message}; the backend holds the last good state, step {s0}") }
    }
}
