//! Bind groups and the encoding of the named passes of one step:
//! `drift` → grid (`clear`, `grid_count`, `scan`, `grid_scatter`, `grid_sort`) → `forces` →
//! `advance`, with each step's second half kick fused into the next `drift` (`kick_drift`) and a
//! `kick` closing the batch. The force pass alternates between two bind groups (history-table parity).

use super::buffers::Buffers;
use super::encode::{bind_group, dispatch_threads, encode_scan, scan_bind_groups};
use super::pipelines::Pipelines;

pub struct BindGroups {
    pub drift: wgpu::BindGroup,
    pub kick_drift: wgpu::BindGroup,
    pub kick: wgpu::BindGroup,
    pub advance: wgpu::BindGroup,
    pub grid_count: wgpu::BindGroup,
    pub scan: Vec<wgpu::BindGroup>,
    pub scan_add: Vec<wgpu::BindGroup>,
    pub grid_scatter: wgpu::BindGroup,
    pub grid_sort: wgpu::BindGroup,
    /// Indexed by step parity: [s % 2] reads hash[s % 2], writes the other.
    pub forces: [wgpu::BindGroup; 2],
    /// As `forces`, for the force evaluations that keep no history (start, state import).
    pub forces_init: [wgpu::BindGroup; 2],
    pub reduce_energy: wgpu::BindGroup,
    /// Indexed by step parity, as `forces` (reads the table that step's forces read).
    pub wall_loads: [wgpu::BindGroup; 2],
}

impl BindGroups {
    pub fn new(device: &wgpu::Device, p: &Pipelines, b: &Buffers) -> Self {
        let forces = |pipe: &wgpu::ComputePipeline, parity: usize| {
            bind_group(device, pipe, "forces", &[
                &b.sim, &b.pos_block, &b.pos_offset, &b.velocity, &b.omega, &b.force, &b.torque, &b.dissipation,
                &b.pairs, &b.walls, &b.cell_count, &b.sorted_ids, &b.hash[parity], &b.hash[1 - parity], &b.step_state, &b.contacts,
                &b.mesh_data,
            ])
        };
        let drift_buffers = [&b.sim, &b.pos_block, &b.pos_offset, &b.velocity, &b.omega, &b.force, &b.torque, &b.step_state, &b.image];
        let (scan, scan_add) = scan_bind_groups(device, p, &b.scan_levels, &b.cell_count);
        BindGroups {
            drift: bind_group(device, &p.drift, "drift", &drift_buffers),
            kick_drift: bind_group(device, &p.kick_drift, "kick_drift", &drift_buffers),
            kick: bind_group(device, &p.kick, "kick", &[&b.sim, &b.velocity, &b.omega, &b.force, &b.torque, &b.step_state]),
            advance: bind_group(device, &p.advance, "advance", &[&b.step_state]),
            grid_count: bind_group(device, &p.grid_count, "grid_count", &[&b.sim, &b.pos_block, &b.particle_cell, &b.particle_rank, &b.cell_count, &b.step_state]),
            scan,
            scan_add,
            grid_scatter: bind_group(device, &p.grid_scatter, "grid_scatter", &[&b.sim, &b.particle_cell, &b.particle_rank, &b.cell_count, &b.sorted_ids, &b.step_state]),
            grid_sort: bind_group(device, &p.grid_sort, "grid_sort", &[&b.sim, &b.cell_count, &b.sorted_ids, &b.step_state]),
            forces: [forces(&p.forces, 0), forces(&p.forces, 1)],
            forces_init: [forces(&p.forces_init, 0), forces(&p.forces_init, 1)],
            reduce_energy: bind_group(device, &p.reduce_energy, "reduce_energy", &[
                &b.sim, &b.pos_block, &b.pos_offset, &b.velocity, &b.omega, &b.force, &b.dissipation, &b.contacts, &b.partials, &b.image,
            ]),
            wall_loads: [0, 1].map(|parity| {
                bind_group(device, &p.wall_loads, "wall_loads", &[
                    &b.sim, &b.pos_block, &b.pos_offset, &b.velocity, &b.omega, &b.pairs, &b.walls, &b.hash[parity], &b.step_state, &b.wall_loads,
                    &b.mesh_data,
                ])
            }),
        }
    }
}

/// Encodes steps; holds what encoding needs.
pub struct StepEncoder<'a> {
    pub p: &'a Pipelines,
    pub b: &'a Buffers,
    pub g: &'a BindGroups,
    pub n_cells: u32,
    pub n_walls: u32,
    pub n_meshes: u32,
    pub max_dim: u32,
}

impl StepEncoder<'_> {
    fn pass<'e>(enc: &'e mut wgpu::CommandEncoder, label: &str) -> wgpu::ComputePass<'e> {
        enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some(label), timestamp_writes: None })
    }

    fn simple(&self, enc: &mut wgpu::CommandEncoder, label: &str, pipe: &wgpu::ComputePipeline, bg: &wgpu::BindGroup, n: u32) {
        let mut pass = Self::pass(enc, label);
        pass.set_pipeline(pipe);
        pass.set_bind_group(0, bg, &[]);
        dispatch_threads(&mut pass, n, self.max_dim);
    }

    /// Counting sort of particles into cells (cell_count → cell starts, sorted_ids).
    pub fn grid(&self, enc: &mut wgpu::CommandEncoder) {
        self.grid_count(enc);
        self.grid_scan(enc);
        self.grid_scatter(enc);
        self.grid_sort(enc);
    }

    pub fn grid_count(&self, enc: &mut wgpu::CommandEncoder) {
        enc.clear_buffer(&self.b.cell_count, 0, None);
        self.simple(enc, "grid_count", &self.p.grid_count, &self.g.grid_count, self.b.n_particles);
    }

    pub fn grid_scan(&self, enc: &mut wgpu::CommandEncoder) {
        encode_scan(enc, self.p, &self.b.scan_levels, &self.g.scan, &self.g.scan_add);
    }

    pub fn grid_scatter(&self, enc: &mut wgpu::CommandEncoder) {
        self.simple(enc, "grid_scatter", &self.p.grid_scatter, &self.g.grid_scatter, self.b.n_particles);
    }

    pub fn grid_sort(&self, enc: &mut wgpu::CommandEncoder) {
        self.simple(enc, "grid_sort", &self.p.grid_sort, &self.g.grid_sort, self.n_cells);
    }

    /// Force evaluation without history writes before step `s` (at the start, and after a
    /// state import), so the next half kick uses real forces; reads the table step s reads.
    pub fn initial_forces(&self, enc: &mut wgpu::CommandEncoder, s: u64) {
        self.grid(enc);
        self.simple(enc, "forces_init", &self.p.forces_init, &self.g.forces_init[(s % 2) as usize], self.b.n_particles);
    }

    /// Steps `s0 .. s0 + n` (s = steps done before it; selects the history-table parity).
    /// The second half kick of each step is fused into the next step's drift (`kick_drift`);
    /// the batch ends with a separate `kick`, so velocities are full-step values between batches.
    /// The last step also runs `wall_loads` between its `forces` and `advance`.
    pub fn steps(&self, enc: &mut wgpu::CommandEncoder, s0: u64, n: u64) {
        for s in s0..s0 + n {
            for (name, pass) in Self::STEP_PASSES {
                pass(self, enc, s, s == s0);
                if name == "forces" && s + 1 == s0 + n {
                    self.wall_loads(enc, s);
                }
            }
        }
        if n > 0 {
            self.kick(enc);
        }
    }

    /// Loads on every wall from the contacts of step `s` (one workgroup per plane wall, then
    /// one per mesh wall).
    pub fn wall_loads(&self, enc: &mut wgpu::CommandEncoder, s: u64) {
        if self.n_walls + self.n_meshes == 0 {
            return;
        }
        let mut pass = Self::pass(enc, "wall_loads");
        pass.set_pipeline(&self.p.wall_loads);
        pass.set_bind_group(0, &self.g.wall_loads[(s % 2) as usize], &[]);
        pass.dispatch_workgroups(self.n_walls + self.n_meshes, 1, 1);
    }

    pub fn kick(&self, enc: &mut wgpu::CommandEncoder) {
        self.simple(enc, "kick", &self.p.kick, &self.g.kick, self.b.n_particles);
    }

    /// The named passes of a step, in order (`talus bench --profile` times them one by one);
    /// the flag says whether this is the first step of a batch.
    #[allow(clippy::type_complexity)]
    pub const STEP_PASSES: [(&'static str, fn(&Self, &mut wgpu::CommandEncoder, u64, bool)); 7] = [
        ("drift", |e, enc, _, first| {
            if first {
                e.simple(enc, "drift", &e.p.drift, &e.g.drift, e.b.n_particles)
            } else {
                e.simple(enc, "kick_drift", &e.p.kick_drift, &e.g.kick_drift, e.b.n_particles)
            }
        }),
        ("grid_count", |e, enc, _, _| e.grid_count(enc)),
        ("grid_scan", |e, enc, _, _| e.grid_scan(enc)),
        ("grid_scatter", |e, enc, _, _| e.grid_scatter(enc)),
        ("grid_sort", |e, enc, _, _| e.grid_sort(enc)),
        ("forces", |e, enc, s, _| e.simple(enc, "forces", &e.p.forces, &e.g.forces[(s % 2) as usize], e.b.n_particles)),
        ("advance", |e, enc, _, _| {
            let mut pass = Self::pass(enc, "advance");
            pass.set_pipeline(&e.p.advance);
            pass.set_bind_group(0, &e.g.advance, &[]);
            pass.dispatch_workgroups(1, 1, 1);
        }),
    ];
}
