//! `talus bench --profile`: the GPU time of every named pass of the step
//! (`StepEncoder::STEP_PASSES`, then the kick closing the batch).
//!
//! Where the device grants timestamps inside encoders (`context::PROFILE_FEATURES`: Vulkan,
//! DX12, most Metal and GL drivers), the steps are encoded as a normal batch with a timestamp
//! after every named pass, so the times are the passes' own, barriers included, with nothing of
//! the host in them. Elsewhere every named pass is submitted and waited for on its own, which
//! adds a submit-and-wait to each (about 0.1 ms on an H100; docs/performance.md, "Real GPU").
//!
//! The steps run as the normal batches of `steps_per_submit` steps (each batch's closing kick,
//! and the wall loads of the run's last step as at the end of `Backend::step`, timed together
//! as "kick (batch end)"), with the same overflow handling (`GpuBackend::finish_batch`; the
//! timestamps count the device's time only, so the passes can sum to less than a timed step,
//! which includes any time the device waits for the host): a batch that overflowed a capacity and was
//! resumed is run to its end but not counted, and further batches are run until `n` steps
//! have been timed without one.

use super::context::PROFILE_FEATURES;
use super::readback::map_read;
use super::step::StepEncoder;
use super::GpuBackend;
use crate::error::{Result, TalusError};

/// How `profile_passes` timed the passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PassTiming {
    /// Timestamps written by the device between the passes of one encoder.
    Timestamps,
    /// Each pass submitted and waited for on its own (launch and wait included).
    SubmitAndWait,
}

impl PassTiming {
    pub fn describe(self) -> &'static str {
        match self {
            PassTiming::Timestamps => "GPU timestamps between passes",
            PassTiming::SubmitAndWait => "each pass submitted and waited for (launch overhead included)",
        }
    }
}

/// Most steps per timestamped batch: `STEP_PASSES.len()` queries a step and three more
/// (512 × 6 + 3), inside `wgpu::QUERY_SET_MAX_QUERIES` (4096).
const STEPS_PER_QUERY_SET: u64 = 512;

/// The name under which the batches' closing kicks and the last step's `wall_loads` are timed.
pub const BATCH_END: &str = "kick (batch end)";

/// The query set and buffers of the timestamps of one batch of up to `steps` steps.
struct Stamps {
    queries: wgpu::QuerySet,
    resolved: wgpu::Buffer,
    staging: wgpu::Buffer,
}

impl Stamps {
    /// Timestamps a batch of `steps` steps writes: one before its first pass, one after each
    /// named pass, the wall loads and the kick.
    fn count(steps: u64) -> u32 {
        (steps as usize * StepEncoder::STEP_PASSES.len() + 3) as u32
    }
}

impl GpuBackend {
    /// Run `n` steps, and as many more as batches that overflowed held, and return the total
    /// seconds per named pass over `n` steps, in step order, with the batch end last.
    /// Timed with device timestamps where the device has them (`PassTiming::Timestamps`).
    pub fn profile_passes(&mut self, n: u64) -> Result<(Vec<(&'static str, f64)>, PassTiming)> {
        let timing = if self.ctx.device.features().contains(PROFILE_FEATURES) { PassTiming::Timestamps } else { PassTiming::SubmitAndWait };
        Ok((self.profile_passes_timed(n, timing)?, timing))
    }

    /// `profile_passes` timed as `timing` says (`Timestamps` fails on a device without them).
    pub fn profile_passes_timed(&mut self, n: u64, timing: PassTiming) -> Result<Vec<(&'static str, f64)>> {
        self.check_usable()?;
        let mut totals: Vec<(&'static str, f64)> = StepEncoder::STEP_PASSES.iter().map(|(name, _)| (*name, 0.0)).collect();
        totals.push((BATCH_END, 0.0));
        let stamps = match timing {
            PassTiming::Timestamps if !self.ctx.device.features().contains(PROFILE_FEATURES) => {
                return Err(TalusError::Device(format!("{} grants no timestamps inside encoders", self.ctx.describe())));
            }
            PassTiming::Timestamps => {
                let count = Stamps::count(self.batch_len().min(STEPS_PER_QUERY_SET));
                let bytes = count as u64 * wgpu::QUERY_SIZE as u64;
                Some(Stamps {
                    queries: self.ctx.device.create_query_set(&wgpu::QuerySetDescriptor { label: Some("profile"), ty: wgpu::QueryType::Timestamp, count }),
                    resolved: self.ctx.create_buffer("profile timestamps", bytes, wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC)?,
                    staging: self.ctx.create_buffer("profile readback", bytes, wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST)?,
                })
            }
            PassTiming::SubmitAndWait => None,
        };
        let per = if stamps.is_some() { self.batch_len().min(STEPS_PER_QUERY_SET) } else { self.batch_len() };
        let mut timed = 0;
        while timed < n {
            let (s0, k) = (self.steps_done, per.min(n - timed));
            self.prepare_batch(s0, k);
            let loads = timed + k == n;
            let batch = match &stamps {
                Some(st) => self.batch_with_timestamps(st, s0, k, loads)?,
                None => self.batch_with_waits(s0, k, loads)?,
            };
            if let Some(times) = batch {
                totals.iter_mut().zip(times).for_each(|(t, dt)| t.1 += dt);
                timed += k;
            }
        }
        Ok(totals)
    }

    /// The batch of steps `s0 .. s0 + k` as `StepEncoder::steps` encodes it (with `loads`, the
    /// wall loads in its last step), a timestamp before its first pass and at every mark of
    /// `StepEncoder::steps_marked`. Returns the seconds per entry of `profile_passes`'s totals,
    /// or `None` when the batch overflowed.
    fn batch_with_timestamps(&mut self, st: &Stamps, s0: u64, k: u64, loads: bool) -> Result<Option<Vec<f64>>> {
        let mut enc = self.ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("profile") });
        // the entry each timestamp after the first closes
        let mut closes = Vec::with_capacity(Stamps::count(k) as usize);
        enc.write_timestamp(&st.queries, 0);
        self.step_encoder().steps_marked(&mut enc, s0, k, loads, &mut |enc, part| {
            closes.push(part);
            enc.write_timestamp(&st.queries, closes.len() as u32);
        });
        let count = closes.len() as u32 + 1;
        let bytes = count as u64 * wgpu::QUERY_SIZE as u64;
        enc.resolve_query_set(&st.queries, 0..count, &st.resolved, 0);
        enc.copy_buffer_to_buffer(&st.resolved, 0, &st.staging, 0, bytes);
        if self.finish_batch(enc, s0, k, loads)? {
            return Ok(None);
        }
        let raw = map_read(&self.ctx, &st.staging, bytes)?;
        let ticks: Vec<u64> = raw.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes"))).collect();
        let ns_per_tick = self.ctx.queue.get_timestamp_period() as f64;
        let mut times = vec![0.0; StepEncoder::STEP_PASSES.len() + 1];
        for (q, &part) in closes.iter().enumerate() {
            let dt = ticks[q + 1].checked_sub(ticks[q]).ok_or_else(|| TalusError::Device(format!("profile: timestamp {} is earlier than timestamp {q}", q + 1)))?;
            times[part] += dt as f64 * ns_per_tick * 1e-9;
        }
        Ok(Some(times))
    }

    /// The batch of steps `s0 .. s0 + k` with the commands up to every mark of
    /// `StepEncoder::steps_marked` in a submit of their own, waited for. As
    /// `batch_with_timestamps`.
    fn batch_with_waits(&mut self, s0: u64, k: u64, loads: bool) -> Result<Option<Vec<f64>>> {
        let encoder = || self.ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("profile") });
        let mut times = vec![0.0; StepEncoder::STEP_PASSES.len() + 1];
        let mut failed = None;
        let mut enc = encoder();
        self.step_encoder().steps_marked(&mut enc, s0, k, loads, &mut |enc, part| {
            let done = std::mem::replace(enc, encoder());
            let t = std::time::Instant::now();
            self.ctx.queue.submit([done.finish()]);
            match self.ctx.device.poll(wgpu::PollType::wait_indefinitely()) {
                Ok(_) => times[part] += t.elapsed().as_secs_f64(),
                Err(e) => failed = Some(TalusError::Device(format!("poll: {e}"))),
            }
        });
        if let Some(e) = failed {
            return Err(e);
        }
        // `enc` is empty now: it carries the step-state readback
        Ok((!self.finish_batch(enc, s0, k, loads)?).then_some(times))
    }
}
