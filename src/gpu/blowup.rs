//! A caught blow-up on the GPU. `drift.wgsl` (every step) and `kick.wgsl` (closing a batch)
//! raise `BLOWUP` in the step state with the lowest flagged particle and the quantities; the
//! step halts like an overflow, and the host, which reads the step state after every batch
//! anyway, reads the halted state once (to name the particle, quantity and value), restores the
//! batch-start backup (the last good state, for the run driver's last snapshot) and stops.

use glam::DVec3;

use super::layout::StepStateRead;
use super::GpuBackend;
use crate::backend::Backend;
use crate::error::TalusError;
use crate::layout::consts::{BLOWUP_FORCE, BLOWUP_LOST, BLOWUP_OVERLAP, BLOWUP_POSITION, BLOWUP_VELOCITY};
use crate::model::checks::{first_problem, OVERLAP_MAX_FRACTION};

impl GpuBackend {
    /// The error of a batch of `n` steps from `s0` that raised BLOWUP (`st`: its step state);
    /// leaves the backend at the batch start.
    pub(crate) fn blow_up(&mut self, st: &StepStateRead, s0: u64, n: u64) -> TalusError {
        let bad = self.snapshot();
        // back to the batch start: particles, step state and the table the batch read first
        let _ = self.restore(s0);
        // the device step counter stopped at the flagged step (relative to the batch start)
        let step = match self.read_step_state() {
            Ok(start) => s0 + (st.step.wrapping_sub(start.step) as u64 + 1).min(n),
            Err(_) => s0 + n,
        };
        let mut particle = (st.blowup_particle != 0).then_some(!st.blowup_particle);
        let mut what = Vec::new();
        for (bit, name) in [(BLOWUP_POSITION, "position"), (BLOWUP_VELOCITY, "velocity"), (BLOWUP_FORCE, "contact force"), (BLOWUP_LOST, "left the domain"), (BLOWUP_OVERLAP, "contact overlap")] {
            if st.blowup_what & bit != 0 {
                what.push(name);
            }
        }
        let mut message = format!("{} not finite or out of range (GPU flag)", what.join(", "));
        if st.blowup_what == BLOWUP_OVERLAP {
            message = format!("a contact overlap beyond {OVERLAP_MAX_FRACTION} of the radius (the time step is too large or the material too soft for the impact speed)");
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
        TalusError::BlowUp { step, particle, message: format!("{message}; the backend holds the last good state, step {s0}") }
    }
}
