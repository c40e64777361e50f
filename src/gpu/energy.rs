//! Energy partitions and contact count, reduced on the device.
//!
//! `reduce_energy` writes one `EnergyPartial` per workgroup of 256 particles (tree sum in a
//! fixed order); the host adds the partials in f64 in index order. Deterministic.

use super::layout::EnergyPartial;
use super::readback::read_buffers;
use super::encode::split_dispatch;
use super::GpuBackend;
use crate::backend::Energies;
use crate::error::Result;

/// Particles per reduction workgroup (shaders/reduce_energy.wgsl).
pub const REDUCE_SIZE: u32 = 256;

/// Workgroup grid of the reduction for `n` particles.
pub fn reduce_dispatch(n: u32, max_dim: u32) -> (u32, u32) {
    split_dispatch(n.div_ceil(REDUCE_SIZE).max(1), max_dim)
}

impl GpuBackend {
    /// Run the reduction and read the partials back: (energies, owned contact count).
    pub(crate) fn reduce_energies(&mut self) -> Result<(Energies, u64)> {
        let (x, y) = reduce_dispatch(self.buffers.n_particles, self.ctx.limits.max_compute_workgroups_per_dimension);
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("reduce_energy"), timestamp_writes: None });
            match &self.bodies {
                Some(bd) => {
                    pass.set_pipeline(&bd.pipelines.reduce_energy);
                    bd.groups.reduce_energy.set(&mut pass);
                }
                None => {
                    pass.set_pipeline(&self.pipelines.reduce_energy);
                    self.groups.reduce_energy.set(&mut pass);
                }
            }
            pass.dispatch_workgroups(x, y, 1);
        }
        self.ctx.queue.submit([enc.finish()]);
        let n = (x * y) as u64;
        let bytes = read_buffers(&self.ctx, &[(&self.buffers.partials, n * std::mem::size_of::<EnergyPartial>() as u64)])?;
        let parts: &[EnergyPartial] = bytemuck::cast_slice(&bytes[0]);
        let mut e = Energies::default();
        let mut count = 0u64;
        for p in parts {
            e.kinetic_translational += p.a[0] as f64;
            e.kinetic_rotational += p.a[1] as f64;
            e.gravitational += p.a[2] as f64;
            e.strain += p.a[3] as f64;
            e.slip += p.b[0] as f64;
            e.dashpot += p.b[1] as f64;
            e.stiffness_work += p.b[2] as f64;
            e.wall_work += p.b[3] as f64;
            count += p.c[0] as u64;
        }
        if self.buffers.adhesion {
            let (surface, bond_break) = self.adhesion_energies()?;
            e.surface = surface;
            e.bond_break = bond_break;
        }
        if self.bodies.is_some() {
            // the bodies' kinetic and gravitational energy, in f64 body by body (the
            // components' rows above carry none of it)
            let (kt, kr, g) = super::bodies::energies(&self.read_bodies()?, self.gravity, self.period);
            e.kinetic_translational += kt;
            e.kinetic_rotational += kr;
            e.gravitational += g;
        }
        Ok((e, count))
    }

    /// A scene with adhesion: (surface energy of the last force pass, bond-break work since the
    /// start), from the adhesion rows of `work_step` and the bond-break Kahan pairs of
    /// `dissipation` (`buffers::adhesion_rows`), added in f64 in workgroup order.
    fn adhesion_energies(&self) -> Result<(f64, f64)> {
        let groups = super::buffers::work_groups(self.buffers.n_particles);
        let parts = crate::layout::consts::DISSIPATION_PARTS as u64;
        let bytes = read_buffers(&self.ctx, &[(&self.buffers.work_step, 32 * groups), (&self.buffers.dissipation, 8 * (parts + 1) * groups)])?;
        let rows: &[[f32; 4]] = bytemuck::cast_slice(&bytes[0]);
        let pairs: &[[f32; 2]] = bytemuck::cast_slice(&bytes[1]);
        let surface = rows[groups as usize..].iter().map(|r| r[0] as f64).sum();
        let bond_break = pairs[(parts * groups) as usize..].iter().map(|[sum, compensation]| *sum as f64 - *compensation as f64).sum();
        Ok((surface, bond_break))
    }
}
