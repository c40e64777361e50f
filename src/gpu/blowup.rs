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
use crate::error::{Result, TalusError};
use crate::layout::consts::{BLOWUP_FORCE, BLOWUP_LOST, BLOWUP_OVERLAP, BLOWUP_POSITION, BLOWUP_VELOCITY};
use crate::model::checks::{first_problem, OVERLAP_MAX_FRACTION};

impl GpuBackend {
    /// The error of a batch of `n` steps from `s0` that raised BLOWUP (`st`: its step state);
    /// leaves the backend stopped (see the module doc).
    pub(crate) fn blow_up(&mut self, st: &StepStateRead, s0: u64, n: u64) -> TalusError {
        let bad = self.read_snapshot();
        // the device step counter stopped at the flagged step (the kick closing the batch runs
        // after the last step's `advance`)
        let step = (s0 + st.step.wrapping_sub(s0 as u32) as u64 + 1).min(s0 + n.max(1));
        let mut particle = (st.blowup_particle != 0).then_some(!st.blowup_particle);
        let mut what = Vec::new();
        for (bit, name) in [(BLOWUP_POSITION, "position"), (BLOWUP_VELOCITY, "velocity"), (BLOWUP_FORCE, "contact force"), (BLOWUP_LOST, "left the domain"), (BLOWUP_OVERLAP, "contact overlap")] {
            if st.blowup_what & bit != 0 {
                what.push(name);
            }
        }
        let mut message = format!("{} not finite or out of range (GPU flag)", what.join(", "));
        if st.blowup_what == BLOWUP_OVERLAP {
            message = format!("a contact overlap beyond {OVERLAP_MAX_FRACTION} of the radius{}", crate::model::checks::overlap_cause(s0 == 0 && step <= 1, None));
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

    /// An error once a blow-up has stopped the backend.
    pub(crate) fn check_usable(&self) -> Result<()> {
        match &self.stopped {
            None => Ok(()),
            Some(why) => Err(TalusError::Device(format!("the GPU backend stopped after {why} and holds no good state"))),
        }
    }
}
