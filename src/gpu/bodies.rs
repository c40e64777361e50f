//! Rigid bodies on the GPU (clumps, issue 32): the algorithm of `crate::cpu::rigid` in f32.
//!
//! Only a set-up with bodies makes any of this: its buffers, the body passes' pipelines and
//! bind groups, and the list-build pipelines that leave the pairs of one body unlisted
//! (`list_build_bodies`). A scene of spheres steps exactly as before.
//!
//! Buffers (`BodyBuffers`): `body_int`, per body `BODY_INT_ROWS` vec4<i32> (the centre's block,
//! w = first component's particle id; the periodic image, w = component count); `body_state`,
//! per body `BODY_ROWS` vec4<f32> (the centre's offset in its block, so the centre is held as
//! block + f32 offset like a particle; q as (x, y, z, w); v with 1/M in w; space-frame L;
//! principal moments; the last total force and torque about the centre); `body_comp`, per
//! particle its body-frame offset (f32 bits) and body id (u32 w); `params`, the body count.
//!
//! A step of such a scene (`StepEncoder`): `body_kick` (per body: the components' totals,
//! formed from their own sums and incoming shares as `gather` forms them except in a batch's
//! first step, which reads the totals the closing passes of the batch before left in `force`;
//! summed in component-id order; the previous step's second half kick, this step's first half
//! kick, drift of the centre and of q) → `body_place` (per component: position, velocity, spin; the
//! list skin's `max_step`; BLOWUP checks) in place of `drift`/`kick_drift`, then `list_plan`,
//! the rebuild passes (`list_build_bodies`), `forces` and `advance` as for spheres. The batch
//! closes with `gather` → `body_kick` MODE 2 (second half kick) → `body_place` MODE 2
//! (velocities) in place of `kick`. As with spheres every body pass exits on `state.halt`, and
//! those of a step run before its rebuild passes, so a halted batch resumes from that step's
//! rebuild (`StepEncoder::resume`) with the same bits.

use std::sync::Arc;

use super::buffers::Buffers;
use super::context::GpuContext;
use super::encode::{pass_groups, PassGroups};
use super::grid;
use super::layout::BodyParams;
use super::order::Order;
use super::pipelines::{module, pipeline};
use super::split::SplitLayout;
use crate::error::{Result, TalusError};
use crate::layout::consts::{BODY_INT_ROWS, BODY_ROWS};
use crate::model::body::Bodies;

/// The body passes' pipelines, for split arrays cut as `split` says.
pub struct BodyPipelines {
    pub split: SplitLayout,
    /// Compiled for a scene with adhesion (`Buffers::adhesion`).
    pub adhesion: bool,
    /// `body_kick` by MODE (shaders/body/kick.wgsl).
    pub kick: [wgpu::ComputePipeline; 4],
    /// `body_place` by MODE (shaders/body/place.wgsl).
    pub place: [wgpu::ComputePipeline; 3],
    /// `list_count`, `list_fill` with the pairs of one body left out.
    pub list_count: wgpu::ComputePipeline,
    pub list_fill: wgpu::ComputePipeline,
    /// `reduce_energy` without the components' kinetic and gravitational energy.
    pub reduce_energy: wgpu::ComputePipeline,
    /// `body_order` by MODE (shaders/body/order.wgsl; the renumbering on the device).
    pub order: [wgpu::ComputePipeline; 3],
}

impl BodyPipelines {
    /// `adhesion`: the scene has adhesion (`body_place` folds the bond-break work too,
    /// override `ADHESION`).
    pub fn new(ctx: &GpuContext, split: &SplitLayout, adhesion: bool) -> Result<Self> {
        let kick = module(ctx, "body_kick", split, adhesion)?;
        let place = module(ctx, "body_place", split, adhesion)?;
        let list = module(ctx, "list_build_bodies", split, adhesion)?;
        let order = module(ctx, "body_order", split, adhesion)?;
        let mode = |m: &wgpu::ShaderModule, label: &str, k: u32| pipeline(ctx, m, label, "main", &[("MODE", k as f64)]);
        let place_mode = |label: &str, k: u32| pipeline(ctx, &place, label, "main", &[("MODE", k as f64), ("ADHESION", if adhesion { 1.0 } else { 0.0 })]);
        Ok(BodyPipelines {
            split: split.clone(),
            adhesion,
            kick: [mode(&kick, "body_kick 0", 0)?, mode(&kick, "body_kick 1", 1)?, mode(&kick, "body_kick 2", 2)?, mode(&kick, "body_kick 3", 3)?],
            place: [place_mode("body_place 0", 0)?, place_mode("body_place 1", 1)?, place_mode("body_place 2", 2)?],
            list_count: pipeline(ctx, &list, "list_count (bodies)", "main", &[])?,
            list_fill: pipeline(ctx, &list, "list_fill (bodies)", "main", &[("FILL", 1.0)])?,
            reduce_energy: pipeline(ctx, &module(ctx, "reduce_energy_bodies", split, adhesion)?, "reduce_energy (bodies)", "main", &[])?,
            order: [mode(&order, "body_order 0", 0)?, mode(&order, "body_order 1", 1)?, mode(&order, "body_order 2", 2)?],
        })
    }
}

/// The body buffers (see the module doc).
pub struct BodyBuffers {
    pub n_bodies: u32,
    pub params: wgpu::Buffer,
    pub int: wgpu::Buffer,
    pub state: wgpu::Buffer,
    pub comp: wgpu::Buffer,
}

impl BodyBuffers {
    /// Buffers for `nb` bodies of `n` components (as `planned_bytes`), the body count written.
    pub fn new(ctx: &GpuContext, nb: u32, n: u32) -> Result<Self> {
        let storage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
        let buffers = BodyBuffers {
            n_bodies: nb,
            params: ctx.create_buffer("body_params", std::mem::size_of::<BodyParams>() as u64, wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST)?,
            int: ctx.create_buffer("body_int", 16 * BODY_INT_ROWS as u64 * nb.max(1) as u64, storage)?,
            state: ctx.create_buffer("body_state", 16 * BODY_ROWS as u64 * nb.max(1) as u64, storage)?,
            comp: ctx.create_buffer("body_comp", 16 * n.max(1) as u64, storage)?,
        };
        ctx.queue.write_buffer(&buffers.params, 0, bytemuck::bytes_of(&BodyParams { n_bodies: nb, ..Default::default() }));
        Ok(buffers)
    }
}

/// The body passes' bind groups (one per pipeline: auto layouts do not mix).
pub struct BodyGroups {
    pub kick: [PassGroups; 4],
    pub place: [PassGroups; 3],
    /// By step parity, as `step::BindGroups::list_count`.
    pub list_count: [PassGroups; 2],
    pub list_fill: [PassGroups; 2],
    pub reduce_energy: PassGroups,
    pub order: [PassGroups; 3],
}

impl BodyGroups {
    pub fn new(device: &wgpu::Device, p: &BodyPipelines, b: &Buffers, bb: &BodyBuffers) -> Self {
        let kick = |k: usize| pass_groups(device, &p.kick[k], "body_kick", &[&b.sim, &bb.params, &b.step_state, &bb.int, &bb.state, &bb.comp, &b.incoming_count], &[&b.force, &b.incoming, &b.shares]);
        let place = |k: usize| {
            pass_groups(
                device,
                &p.place[k],
                "body_place",
                &[&b.sim, &b.step_state, &b.pos_block, &b.pos_offset, &b.image, &bb.int, &bb.state, &bb.comp, &b.dissipation, &b.work_step],
                &[&b.motion],
            )
        };
        let order = |k: usize| pass_groups(device, &p.order[k], "body_order", &[&b.sim, &b.step_state, &b.particle_cell, &b.tag, &bb.int, &bb.comp], &[&b.force]);
        let list = |pipe: &wgpu::ComputePipeline, parity: usize| {
            pass_groups(
                device,
                pipe,
                "list_build (bodies)",
                &[&b.sim, &b.pos_block, &b.pos_offset, &b.cell_count, &b.sorted_ids, &b.list_next, &b.list_start, &b.incoming_count, &b.step_state, &b.tag, &bb.comp],
                &[&b.list_partner, &b.incoming, &b.slot_history[1 - parity], &b.slot_history[parity]],
            )
        };
        BodyGroups {
            kick: [kick(0), kick(1), kick(2), kick(3)],
            place: [place(0), place(1), place(2)],
            list_count: [list(&p.list_count, 0), list(&p.list_count, 1)],
            list_fill: [list(&p.list_fill, 0), list(&p.list_fill, 1)],
            reduce_energy: pass_groups(device, &p.reduce_energy, "reduce_energy (bodies)", &[&b.sim, &b.pos_block, &b.pos_offset, &b.dissipation, &b.partials, &b.image], &[&b.motion, &b.force]),
            order: [order(0), order(1), order(2)],
        }
    }
}

/// What the device holds of the bodies, and the host's copy of what does not change (mass,
/// moments, components, templates, offsets: exported as given, in f64).
pub struct GpuBodies {
    pub host: Bodies,
    pub buffers: BodyBuffers,
    pub pipelines: Arc<BodyPipelines>,
    pub groups: BodyGroups,
}

/// The body rows in the device layout: (`body_int`, `body_state`, `body_comp`), for a table
/// whose particles and bodies come after `first_particle` and `first_body` others (an
/// exchange's new bodies; 0 and 0 for a whole table).
pub fn rows(b: &Bodies, block: f64, first_particle: u32, first_body: u32) -> (Vec<[i32; 4]>, Vec<[f32; 4]>, Vec<[u32; 4]>) {
    let f = |v: [f64; 3], w: f32| [v[0] as f32, v[1] as f32, v[2] as f32, w];
    let mut int = Vec::with_capacity(BODY_INT_ROWS as usize * b.len());
    let mut state = Vec::with_capacity(BODY_ROWS as usize * b.len());
    for k in 0..b.len() {
        let s: [(i32, f32); 3] = std::array::from_fn(|a| grid::split(b.position[k][a], block));
        let im = b.image[k];
        int.push([s[0].0, s[1].0, s[2].0, (first_particle + b.first[k]) as i32]);
        int.push([im[0], im[1], im[2], b.count[k] as i32]);
        let q = b.orientation[k];
        // rows BODY_ROW_OFFSET .. BODY_ROW_TORQUE (the totals are formed on the device)
        state.push([s[0].1, s[1].1, s[2].1, 0.0]);
        state.push([q[1] as f32, q[2] as f32, q[3] as f32, q[0] as f32]);
        state.push(f(b.velocity[k], (1.0 / b.mass[k]) as f32));
        state.push(f(b.angular_momentum[k], 0.0));
        state.push(f(b.moments[k], 0.0));
        state.push([0.0; 4]);
        state.push([0.0; 4]);
    }
    let comp = b.offset.iter().zip(&b.body_of).map(|(o, &k)| [(o[0] as f32).to_bits(), (o[1] as f32).to_bits(), (o[2] as f32).to_bits(), first_body + k]).collect();
    (int, state, comp)
}

/// Device bytes of the body buffers for `n_bodies` bodies of `n_particles` components, as
/// `GpuBodies::new` makes them (`body_params`, `body_int`, `body_state`, `body_comp`).
pub fn planned_bytes(n_particles: u32, n_bodies: u32) -> u64 {
    std::mem::size_of::<BodyParams>() as u64 + 16 * (BODY_INT_ROWS + BODY_ROWS) as u64 * n_bodies.max(1) as u64 + 16 * n_particles.max(1) as u64
}

impl GpuBodies {
    /// Device bytes of the body buffers.
    pub fn device_bytes(&self) -> u64 {
        let b = &self.buffers;
        b.params.size() + b.int.size() + b.state.size() + b.comp.size()
    }

    /// Buffers for `bodies` (checked against `n` particles) with its rows uploaded for the
    /// particles stored in `order` (each body's first component and every component's row at
    /// its storage index: `order::for_state` keeps a body's components one run), and the
    /// pipelines (`pipelines`, when they fit `b`'s split layout, else compiled) and bind groups.
    pub fn new(ctx: &GpuContext, b: &Buffers, bodies: &Bodies, order: &Order, block: f64, pipelines: Option<Arc<BodyPipelines>>) -> Result<Self> {
        bodies.check(b.n_particles as usize).map_err(|e| TalusError::Other(format!("rigid bodies: {e}")))?;
        let nb = bodies.len() as u32;
        let buffers = BodyBuffers::new(ctx, nb, b.n_particles)?;
        let (mut int, state, comp) = rows(bodies, block, 0, 0);
        for (k, head) in int.chunks_mut(BODY_INT_ROWS as usize).map(|rows| &mut rows[0]).enumerate() {
            let run: Vec<usize> = (bodies.first[k]..bodies.first[k] + bodies.count[k]).map(|i| order.slot(i as usize)).collect();
            if run.windows(2).any(|w| w[1] != w[0] + 1) {
                return Err(TalusError::Other(format!("rigid body {k}: its components are not stored one after another (an order that splits bodies)")));
            }
            head[3] = run.first().copied().unwrap_or(0) as i32;
        }
        let comp = order.to_storage(&comp, 1);
        let q = &ctx.queue;
        if nb > 0 {
            q.write_buffer(&buffers.int, 0, bytemuck::cast_slice(&int));
            q.write_buffer(&buffers.state, 0, bytemuck::cast_slice(&state));
            q.write_buffer(&buffers.comp, 0, bytemuck::cast_slice(&comp));
        }
        let pipelines = match pipelines.filter(|p| p.split == b.split && p.adhesion == b.adhesion) {
            Some(p) => p,
            None => Arc::new(BodyPipelines::new(ctx, &b.split, b.adhesion)?),
        };
        let groups = BodyGroups::new(&ctx.device, &pipelines, b, &buffers);
        Ok(GpuBodies { host: bodies.clone(), buffers, pipelines, groups })
    }

    /// After the particle buffers were replaced or re-cut: pipelines for their split layout and
    /// new bind groups.
    pub fn refresh(&mut self, ctx: &GpuContext, b: &Buffers) -> Result<()> {
        if self.pipelines.split != b.split || self.pipelines.adhesion != b.adhesion {
            self.pipelines = Arc::new(BodyPipelines::new(ctx, &b.split, b.adhesion)?);
        }
        self.groups = BodyGroups::new(&ctx.device, &self.pipelines, b, &self.buffers);
        Ok(())
    }

    /// Bytes of the body buffers (`body_int`, `body_state`) as read back.
    pub fn raw_sizes(&self) -> (u64, u64) {
        let nb = self.buffers.n_bodies as u64;
        (16 * BODY_INT_ROWS as u64 * nb, 16 * BODY_ROWS as u64 * nb)
    }

    /// The table from the bytes of `body_int` and `body_state` as read back: the state as the
    /// device holds it (f32 widened), the rest from the host copy.
    pub fn table(&self, int: &[u8], state: &[u8], block: f64) -> Bodies {
        let int: Vec<[i32; 4]> = bytemuck::pod_collect_to_vec(int);
        let state: Vec<[f32; 4]> = bytemuck::pod_collect_to_vec(state);
        let mut b = self.host.clone();
        let (ri, rs) = (BODY_INT_ROWS as usize, BODY_ROWS as usize);
        for k in 0..b.len() {
            set_moving(&mut b, k, &int[ri * k..ri * (k + 1)], &state[rs * k..rs * (k + 1)], block);
        }
        b
    }

    /// The bodies `ids` (ascending) as a table of their own, their components the particles
    /// from id 0 on in the same order, from their rows as read back (`exchange_body_gather`:
    /// `BODY_INT_ROWS` and `BODY_ROWS` rows each, in the order of `ids`) and the host copy.
    pub fn some(&self, ids: &[u32], int: &[u8], state: &[u8], block: f64) -> Bodies {
        let int: Vec<[i32; 4]> = bytemuck::pod_collect_to_vec(int);
        let state: Vec<[f32; 4]> = bytemuck::pod_collect_to_vec(state);
        let (ri, rs) = (BODY_INT_ROWS as usize, BODY_ROWS as usize);
        let h = &self.host;
        let mut b = Bodies::default();
        for (k, &id) in ids.iter().enumerate() {
            let g = id as usize;
            let run = h.first[g] as usize..(h.first[g] + h.count[g]) as usize;
            b.push(h.position[g], h.orientation[g], h.velocity[g], h.angular_momentum[g], h.mass[g], h.moments[g], h.template[g], b.body_of.len() as u32, &h.offset[run]);
            set_moving(&mut b, k, &int[ri * k..ri * (k + 1)], &state[rs * k..rs * (k + 1)], block);
        }
        b
    }

    /// The largest distance of a component's centre from its body's centre of mass, m.
    pub fn reach(&self) -> f64 {
        self.host.reach()
    }
}

/// Body `k` of `b` as the device holds it: centre, image, q, v and L from its `body_int` and
/// `body_state` rows as read back (f32 widened).
fn set_moving(b: &mut Bodies, k: usize, int: &[[i32; 4]], state: &[[f32; 4]], block: f64) {
    use crate::layout::consts::{BODY_ROW_MOMENTUM, BODY_ROW_OFFSET, BODY_ROW_Q, BODY_ROW_VELOCITY};
    let v3 = |x: [f32; 4]| [x[0] as f64, x[1] as f64, x[2] as f64];
    let (blk, im) = (int[0], int[1]);
    let row = |r: u32| state[r as usize];
    let off = row(BODY_ROW_OFFSET);
    b.position[k] = std::array::from_fn(|a| grid::join(blk[a], off[a], block));
    b.image[k] = [im[0], im[1], im[2]];
    let q = row(BODY_ROW_Q);
    b.orientation[k] = [q[3] as f64, q[0] as f64, q[1] as f64, q[2] as f64];
    b.velocity[k] = v3(row(BODY_ROW_VELOCITY));
    b.angular_momentum[k] = v3(row(BODY_ROW_MOMENTUM));
}

/// Every component's 1/m (motion row 0 of `motion_rows`, w) set to its body's 1/M (the
/// contacts' effective mass is that of the bodies, as `cpu::state::State::with_bodies`).
pub fn set_component_masses(motion: &mut [[f32; 4]], motion_rows: usize, bodies: &Bodies) {
    for (i, &k) in bodies.body_of.iter().enumerate() {
        motion[motion_rows * i][3] = (1.0 / bodies.mass[k as usize]) as f32;
    }
}

/// Kinetic (translational, rotational) and gravitational energy of the bodies in f64, body by
/// body in id order, from the state as read back (`GpuBodies::table`).
pub fn energies(b: &Bodies, gravity: [f64; 3], period: [f64; 3]) -> (f64, f64, f64) {
    let (mut kt, mut kr, mut g) = (0.0, 0.0, 0.0);
    for k in 0..b.len() {
        let (t, r) = b.kinetic(k);
        kt += t;
        kr += r;
        let x: [f64; 3] = std::array::from_fn(|a| b.position[k][a] + b.image[k][a] as f64 * period[a]);
        g -= b.mass[k] * (gravity[0] * x[0] + gravity[1] * x[1] + gravity[2] * x[2]);
    }
    (kt, kr, g)
}
