//! The GPU backend's share of a checkpoint beyond `ParticleState` (`Backend::export_exact`,
//! `import_exact`): the particle buffers as the device holds them (block + f32 offset; velocity
//! and spin with 1/m and 1/I in w; force with the strain in w and torque with the contact count
//! in w; images) and the dissipated work, which the device keeps per workgroup of
//! `WORKGROUP_SIZE` particles (Kahan pairs, plus the last step's work, already folded at the
//! end of a batch). Written back after `import`, they make the device state bit for bit the one
//! that was saved (the history table is rebuilt by `import` from the exact f32 → f64 → f32
//! round trip of every record; where a record sits in the table does not change results).
//!
//! Across backends only the work is exchanged, as `ExactState::work` per particle: the GPU
//! puts each workgroup's sum on the workgroup's first particle (totals are all any output
//! reads), and a CPU state's per-particle sums become one Kahan pair (sum, compensation) per
//! workgroup.

use super::buffers::{adhesion_rows, work_groups};
use super::readback::{read_sources, Source};
use super::GpuBackend;
use crate::error::{Result, TalusError};
use crate::layout::consts::{DISSIPATION_PARTS, MOTION_ROWS, MOTION_ROWS_DRY, WORKGROUP_SIZE};
use crate::model::state::ExactState;

/// `ExactState::kind` of the GPU backend.
pub const KIND: &str = "gpu";

/// The raw arrays by name, in `raw_buffers` order.
const RAW: [&str; 7] = ["pos_block", "pos_offset", "motion", "force", "image", "dissipation", "work_step"];

/// The CPU's raw array of a scene with adhesion (`cpu::checkpoint`): per particle, the surface
/// energy of the last force pass and the cumulative bond-break work (2 f64).
const ADHESION: &str = "adhesion";

/// Where each particle is stored (`gpu::order`): the id at every storage index, u32. The raw
/// arrays are in this order; a checkpoint without it was written in id order.
const ORDER: &str = "order";

/// The raw body arrays (`gpu::bodies`), present where the scene has rigid bodies.
const BODY_RAW: [&str; 2] = ["body_int", "body_state"];

impl GpuBackend {
    /// The buffers of `RAW` with their sizes for the particles held (split arrays: elements).
    fn raw_buffers(&self) -> [Source<'_>; 7] {
        let b = &self.buffers;
        let (n, groups) = (b.n_particles as u64, work_groups(b.n_particles));
        // with adhesion both work buffers hold their adhesion rows too (`adhesion_rows`)
        let (step_rows, work_pairs) = adhesion_rows(b.adhesion);
        [
            Source::Whole(&b.pos_block, 16 * n),
            Source::Whole(&b.pos_offset, 16 * n),
            Source::Split(&b.motion, b.split.motion_rows as u64 * n),
            Source::Split(&b.force, 2 * n),
            b.image_source(n),
            Source::Whole(&b.dissipation, 8 * work_pairs * groups),
            Source::Whole(&b.work_step, 16 * step_rows * groups),
        ]
    }

    pub(super) fn export_exact_state(&mut self) -> Result<ExactState> {
        self.sync_order(false)?;
        let n = self.buffers.n_particles as usize;
        let mut data = read_sources(&self.ctx, &self.raw_buffers())?;
        if self.buffers.split.motion_rows == MOTION_ROWS_DRY {
            // the state's `motion` has `MOTION_ROWS` rows whatever the device holds (checkpoints
            // and the rows a rank hands over keep one layout): the spin stands in for the
            // previous one, which nothing reads where no rolling work is booked
            data[2] = with_previous_spin(&data[2]);
        }
        let pairs: Vec<[f32; 2]> = bytemuck::pod_collect_to_vec(&data[5]);
        let parts = DISSIPATION_PARTS as usize;
        let mut work = vec![[0.0f64; DISSIPATION_PARTS as usize]; n];
        for (g, first) in (0..n).step_by(WORKGROUP_SIZE as usize).enumerate() {
            work[self.order.id(first)] = std::array::from_fn(|k| {
                let [sum, compensation] = pairs[g * parts + k];
                sum as f64 - compensation as f64
            });
        }
        let adhesion = self.buffers.adhesion.then(|| self.order.to_ids(&adhesion_per_particle(&data[6], &data[5], n), 1));
        let mut raw: Vec<(String, Vec<u8>)> = RAW.iter().zip(data).map(|(name, bytes)| (name.to_string(), bytes)).collect();
        if !self.order.is_identity() {
            raw.push((ORDER.to_string(), bytemuck::cast_slice(&self.order.tags(n)).to_vec()));
        }
        if let Some(adhesion) = adhesion {
            // the CPU's array (`cpu::checkpoint`, "adhesion"): each workgroup's sums on its first
            // particle, for a resume on the CPU; a GPU resume reads `work_step` and `dissipation`
            raw.push((ADHESION.to_string(), bytemuck::cast_slice(&adhesion).to_vec()));
        }
        if let Some(bd) = &self.bodies {
            // the rigid bodies as the device holds them (`gpu::bodies`): centre, q, v, L and the
            // last totals, so a resume continues bit for bit
            let (ni, ns) = bd.raw_sizes();
            let data = read_sources(&self.ctx, &[Source::Whole(&bd.buffers.int, ni), Source::Whole(&bd.buffers.state, ns)])?;
            raw.extend(BODY_RAW.iter().zip(data).map(|(name, bytes)| (name.to_string(), bytes)));
        }
        Ok(ExactState { kind: KIND.into(), work, raw })
    }

    pub(super) fn import_exact_state(&mut self, exact: &ExactState) -> Result<()> {
        let n = self.buffers.n_particles as usize;
        if exact.work.len() != n {
            return Err(TalusError::Other(format!("the {} state holds the work of {} particles, the GPU backend holds {n}", exact.kind, exact.work.len())));
        }
        if n == 0 {
            return Ok(());
        }
        self.sync_order(false)?;
        if exact.kind == KIND {
            // the raw arrays are in the order they were saved in: the particles stored so first
            let saved = match exact.raw(ORDER) {
                Ok(bytes) => super::order::Order::checked(bytemuck::pod_collect_to_vec(bytes), n)
                    .ok_or_else(|| TalusError::Other(format!("the GPU state's `{ORDER}` ({} bytes) is not an order of {n} particles (each id below {n} once, 4 bytes each)", bytes.len())))?,
                Err(_) => super::order::Order::default(),
            };
            if saved != self.order {
                let state = self.export()?;
                self.import_in(&state, saved, 0)?;
            }
        }
        let q = &self.ctx.queue;
        let buffers = self.raw_buffers();
        if exact.kind == KIND {
            for (name, buffer) in RAW.iter().zip(buffers) {
                let mut bytes = exact.raw(name)?;
                let rows_changed;
                let held = self.buffers.split.motion_rows;
                if *name == "motion" && bytes.len() as u64 == 16 * MOTION_ROWS_DRY as u64 * n as u64 && held == MOTION_ROWS {
                    // written before `motion` had its third row (the previous spin): the spin stands in
                    rows_changed = with_previous_spin(bytes);
                    bytes = &rows_changed;
                } else if *name == "motion" && bytes.len() as u64 == 16 * MOTION_ROWS as u64 * n as u64 && held == MOTION_ROWS_DRY {
                    // a device without rolling work keeps velocity and spin only
                    rows_changed = without_previous_spin(bytes);
                    bytes = &rows_changed;
                }
                let size = match buffer {
                    Source::Whole(_, size) | Source::Zeros(size) => size,
                    Source::Split(sb, elements) => elements * sb.element_bytes(),
                };
                if bytes.len() as u64 != size {
                    return Err(TalusError::Other(format!("the GPU state's `{name}` holds {} bytes, not {size} for {n} particles", bytes.len())));
                }
                match buffer {
                    Source::Whole(b, _) => q.write_buffer(b, 0, bytes),
                    Source::Split(sb, _) => sb.write(q, 0, bytes),
                    // the images of a scene without periodic axes: zero, and not held
                    Source::Zeros(_) if bytes.iter().all(|&x| x == 0) => {}
                    Source::Zeros(_) => return Err(TalusError::Other(format!("the GPU state's `{name}` holds periodic images, and the scene has no periodic axis"))),
                }
            }
            if let Some(bd) = &self.bodies {
                let (ni, ns) = bd.raw_sizes();
                for (name, (buffer, size)) in BODY_RAW.iter().zip([(&bd.buffers.int, ni), (&bd.buffers.state, ns)]) {
                    let bytes = exact.raw(name)?;
                    if bytes.len() as u64 != size {
                        return Err(TalusError::Other(format!("the GPU state's `{name}` holds {} bytes, not {size} for {} bodies", bytes.len(), bd.buffers.n_bodies)));
                    }
                    if size > 0 {
                        q.write_buffer(buffer, 0, bytes);
                    }
                }
            }
            return Ok(());
        }
        // a workgroup sums the particles it stores (`gpu::order`)
        let pairs: Vec<[f32; 2]> = self
            .order
            .to_storage(&exact.work, 1)
            .chunks(WORKGROUP_SIZE as usize)
            .flat_map(|group| {
                (0..DISSIPATION_PARTS as usize).map(move |k| {
                    let w: f64 = group.iter().map(|p| p[k]).sum();
                    let sum = w as f32;
                    [sum, (sum as f64 - w) as f32]
                })
            })
            .collect();
        q.write_buffer(&self.buffers.dissipation, 0, bytemuck::cast_slice(&pairs));
        q.write_buffer(&self.buffers.work_step, 0, &vec![0u8; 16 * work_groups(n as u32) as usize]);
        if self.buffers.adhesion {
            // a state with the CPU's adhesion energies ("adhesion", per particle: surface of the
            // last pass, cumulative bond break): per workgroup into the adhesion rows
            let groups = work_groups(n as u32) as usize;
            let per_particle: Vec<[f64; 2]> = match exact.raw(ADHESION) {
                Ok(bytes) => bytemuck::pod_collect_to_vec(bytes),
                Err(_) => vec![[0.0; 2]; n],
            };
            if per_particle.len() != n {
                return Err(TalusError::Other(format!("the {} state's adhesion energies hold {} particles, not {n}", exact.kind, per_particle.len())));
            }
            let sums: Vec<[f64; 2]> = self.order.to_storage(&per_particle, 1).chunks(WORKGROUP_SIZE as usize).map(|g| [g.iter().map(|a| a[0]).sum(), g.iter().map(|a| a[1]).sum()]).collect();
            let rows: Vec<[f32; 4]> = sums.iter().map(|s| [s[0] as f32, 0.0, 0.0, 0.0]).collect();
            let broken: Vec<[f32; 2]> = sums.iter().map(|s| [s[1] as f32, ((s[1] as f32) as f64 - s[1]) as f32]).collect();
            q.write_buffer(&self.buffers.work_step, 16 * groups as u64, bytemuck::cast_slice(&rows));
            q.write_buffer(&self.buffers.dissipation, 8 * DISSIPATION_PARTS as u64 * groups as u64, bytemuck::cast_slice(&broken));
        }
        Ok(())
    }
}

/// The per-particle arrays of a GPU state (`RAW`'s first five) in id order, "order" dropped:
/// for a reader that takes the particles by id (a decomposed run's ranks, `gpu::decomposed`).
/// A state without "order" is in id order already.
pub fn in_id_order(exact: &ExactState) -> Result<std::borrow::Cow<'_, ExactState>> {
    let Ok(bytes) = exact.raw(ORDER) else { return Ok(std::borrow::Cow::Borrowed(exact)) };
    let n = exact.work.len();
    let order = super::order::Order::checked(bytemuck::pod_collect_to_vec(bytes), n).ok_or_else(|| TalusError::Other(format!("the GPU state's `{ORDER}` is not an order of {n} particles")))?;
    let mut out = exact.clone();
    out.raw.retain(|(name, _)| name != ORDER);
    for (name, bytes) in out.raw.iter_mut().filter(|(name, _)| RAW[..5].contains(&name.as_str())) {
        if n == 0 || bytes.len() % n != 0 {
            return Err(TalusError::Other(format!("the GPU state's `{name}` holds {} bytes, not a whole row for each of {n} particles", bytes.len())));
        }
        let rows: Vec<u8> = order.to_ids(bytes, bytes.len() / n);
        *bytes = rows;
    }
    Ok(std::borrow::Cow::Owned(out))
}

/// The adhesion energies per particle as the CPU keeps them (`ADHESION`), from the raw
/// `work_step` and `dissipation` of a scene with adhesion: each workgroup's surface energy and
/// bond-break work on its first particle.
fn adhesion_per_particle(work_step: &[u8], dissipation: &[u8], n: usize) -> Vec<[f64; 2]> {
    let rows: Vec<[f32; 4]> = bytemuck::pod_collect_to_vec(work_step);
    let pairs: Vec<[f32; 2]> = bytemuck::pod_collect_to_vec(dissipation);
    let groups = rows.len() / 2;
    let mut out = vec![[0.0f64; 2]; n];
    for (g, first) in (0..n).step_by(WORKGROUP_SIZE as usize).enumerate() {
        let [sum, compensation] = pairs[DISSIPATION_PARTS as usize * groups + g];
        out[first] = [rows[groups + g][0] as f64, sum as f64 - compensation as f64];
    }
    out
}

const _: () = assert!(MOTION_ROWS == 3 && MOTION_ROWS_DRY == 2, "with_previous_spin widens two rows to three");

/// `motion` rows of two vec4 per particle (velocity, spin) widened to `MOTION_ROWS`, the spin
/// repeated as the previous one.
fn with_previous_spin(two_rows: &[u8]) -> Vec<u8> {
    let rows: Vec<[f32; 4]> = bytemuck::pod_collect_to_vec(two_rows);
    let wide: Vec<[f32; 4]> = rows.chunks(2).flat_map(|p| [p[0], p[1], [p[1][0], p[1][1], p[1][2], 0.0]]).collect();
    bytemuck::cast_slice(&wide).to_vec()
}

/// `motion` rows of `MOTION_ROWS` vec4 per particle narrowed to velocity and spin (the device
/// rows of a scene that books no rolling work, `split::motion_rows`).
fn without_previous_spin(three_rows: &[u8]) -> Vec<u8> {
    let rows: Vec<[f32; 4]> = bytemuck::pod_collect_to_vec(three_rows);
    let narrow: Vec<[f32; 4]> = rows.chunks(3).flat_map(|p| [p[0], p[1]]).collect();
    bytemuck::cast_slice(&narrow).to_vec()
}

#[cfg(test)]
mod tests {
    use super::{with_previous_spin, without_previous_spin};

    /// Two rows widened to three carry the spin as the previous one, and narrowed give back the
    /// same bytes; three rows narrowed drop only the third.
    #[test]
    fn motion_rows_widen_and_narrow() {
        let two: Vec<[f32; 4]> = vec![[1.0, 2.0, 3.0, 0.5], [4.0, 5.0, 6.0, 0.25], [-1.0, -2.0, -3.0, 2.0], [7.0, 8.0, 9.0, 4.0]];
        let wide: Vec<[f32; 4]> = bytemuck::pod_collect_to_vec(&with_previous_spin(bytemuck::cast_slice(&two)));
        assert_eq!(wide, vec![two[0], two[1], [4.0, 5.0, 6.0, 0.0], two[2], two[3], [7.0, 8.0, 9.0, 0.0]]);
        assert_eq!(without_previous_spin(bytemuck::cast_slice(&wide)), bytemuck::cast_slice::<[f32; 4], u8>(&two).to_vec());
        let three: Vec<[f32; 4]> = vec![[1.0; 4], [2.0; 4], [3.0; 4]];
        let narrow: Vec<[f32; 4]> = bytemuck::pod_collect_to_vec(&without_previous_spin(bytemuck::cast_slice(&three)));
        assert_eq!(narrow, vec![[1.0; 4], [2.0; 4]]);
    }
}
