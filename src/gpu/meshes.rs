//! Mesh walls on the GPU: the packed `mesh_data` buffer, triangle binning on the device at
//! start, per-batch pose rows and the overflow error.
//!
//! # `mesh_data`
//!
//! The force pass binds one more storage buffer for all mesh data (the adapter limit of
//! `context::STORAGE_BUFFERS_NEEDED` leaves room for one), an `array<vec4<u32>>` of 16-byte
//! words read back into structs by `shaders/mesh/data.wgsl`:
//!
//! | section | words | from `SimParams` |
//! | --- | --- | --- |
//! | `MeshGpu` headers | n_meshes × `MESH_GPU_WORDS` | word 0 |
//! | `MeshPoseGpu` rows | rows × n_meshes × `MESH_POSE_GPU_WORDS` | `mesh_pose_base` |
//! | `MeshTriangleGpu` | triangles × `MESH_TRIANGLE_GPU_WORDS` | `mesh_tri_base` |
//! | cell starts (u32) | (cells + 1) / 4 | `mesh_start_base` |
//! | binned triangle ids (u32) | entries / 4 | `mesh_id_base` |
//!
//! # Binning (once, on the device)
//!
//! Each mesh gets a uniform grid in its t = 0 frame, cells an integer number of blocks, over
//! its bounding box expanded by the margin = 1.01 × (largest radius + largest positive
//! reference gap) + 2 blocks, cells of 2 × margin. A triangle is listed in every cell its box
//! expanded by the margin overlaps and whose box grown by the margin its plane meets, so the
//! one cell of a ball centre lists every triangle within its reach.
//! `shaders/mesh/bin.wgsl`: count → exclusive scan (`scan.wgsl`) → the host reads the total
//! (one 4-byte readback) and sizes the id list → scatter → sort each cell (determinism). Then
//! the sections are assembled by device copies.
//!
//! # Moving meshes
//!
//! The ball centre is carried into the mesh's t = 0 frame, x_b = c0 + Rᵀ(x − c(t)), without
//! f32 rounding of the long vector x − c(t): it is an integer block count K plus an f32 offset,
//! and Rᵀ comes split into integer parts (`split_entry`), so Rᵀ K is summed exactly in i32
//! and only remainders below a few blocks go through f32 (`rotate_blocks` in
//! shaders/mesh/data.wgsl). x_b is then a block + offset position like any ball, and a moving
//! mesh's contact arithmetic is that of a static one.
//!
//! # f32 tolerance
//!
//! The contact rule's length tolerance (promotion of edge/vertex points to face contacts, point
//! merging) is 1e-9 of the mesh size on the CPU, far below f32 resolution. The GPU uses the
//! largest of: that, `GPU_RELATIVE_TOLERANCE` × (longest edge + margin), the f32 rounding of the
//! corner vectors; and, per ball,
//! `MESH_TOLERANCE_PER_REACH` × its reach: an unpromoted edge contact of a neighbouring
//! triangle then lies at least 5e-7 × reach farther than the face contact, beyond f32 rounding
//! of the distance, so a tessellated flat surface gives exactly the analytic plane's contact.

use glam::{DMat3, DVec3};
use wgpu::BufferUsages as U;

use super::buffers::{scan_levels, ScanLevel};
use super::context::GpuContext;
use super::grid::{split, GridSpec};
use super::layout::{MeshBinParams, MeshGpu, MeshPoseGpu, MeshTriangleGpu, StepStateRead, ROTATE_MAX_BLOCKS};
use super::pipelines::Pipelines;
use super::readback::read_buffers;
use super::encode::{bind_group, dispatch_threads, encode_scan, scan_bind_groups};
use crate::error::{Result, TalusError};
use crate::layout::consts::{MESH_FLAG_MOVING, MESH_FLAG_TWO_SIDED, MESH_GROUPS_MAX};
use crate::mesh::TriangleMesh;
use crate::setup::{mesh_group_bases, MeshWall, Setup};

/// GPU length tolerance relative to the mesh's coordinate scale (~16 f32 ulps).
pub const GPU_RELATIVE_TOLERANCE: f64 = 2e-6;
/// The grid margin over the largest reach.
pub const MARGIN_SLACK: f64 = 1.01;

/// Most grid cells for a mesh of `n` triangles: 8 n, at least 4096, at most 2²⁴ (as the CPU
/// `TriangleGrid`).
pub fn cell_budget(n: usize) -> u64 {
    crate::mesh::grid::cell_budget(n) as u64
}

/// One mesh's grid on the GPU, in blocks of the t = 0 frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeshGrid {
    pub origin: [i32; 3],
    pub cell_blocks: i32,
    pub dims: [u32; 3],
    /// Index of the mesh's first cell among all meshes' cells.
    pub first_cell: u32,
}

impl MeshGrid {
    /// Cells of the grid.
    pub fn n_cells(&self) -> u64 {
        self.dims.iter().map(|&d| d as u64).product()
    }
}

/// Longest triangle edge of a mesh.
fn longest_edge(mesh: &TriangleMesh) -> f64 {
    mesh.triangles.iter().flat_map(|t| (0..3).map(move |k| t[k].distance(t[(k + 1) % 3]))).fold(0.0, f64::max)
}

/// The grid of `mesh`: its box expanded by `margin` (plus a block) in blocks, cells of
/// 2 × margin (the ball's scale: a ball's one cell lists the triangles near that cell, not
/// those of a cell the size of the triangles) grown in steps of 1/8 until within `cell_budget`.
/// A triangle is listed only in the cells its plane passes near (`shaders/mesh/bin.wgsl`), so a
/// long one does not fill every cell of its box.
pub fn mesh_grid(mesh: &TriangleMesh, name: &str, margin: f64, block: f64, first_cell: u32) -> Result<MeshGrid> {
    let (lo, hi) = mesh.bounds();
    let lo_b: [i64; 3] = std::array::from_fn(|a| ((lo[a] - margin) / block).floor() as i64 - 1);
    let hi_b: [i64; 3] = std::array::from_fn(|a| ((hi[a] + margin) / block).floor() as i64 + 1);
    let mut k = ((2.0 * margin / block).ceil() as i64).max(1);
    let dims = |k: i64| -> [u64; 3] { std::array::from_fn(|a| ((hi_b[a] - lo_b[a] + 1) as u64).div_ceil(k as u64).max(1)) };
    let budget = cell_budget(mesh.len());
    while dims(k).iter().product::<u64>() > budget {
        k = (k + 1).max(k + k / 8);
    }
    let out_of_range = lo_b.iter().chain(&hi_b).any(|&b| b.abs() >= 1 << 30) || k > i32::MAX as i64 / 4;
    if out_of_range {
        return Err(TalusError::Other(format!("mesh wall `{name}`: its box does not fit the GPU's block coordinates (block {} m)", crate::error::fmt_num(block))));
    }
    let d = dims(k);
    Ok(MeshGrid { origin: [lo_b[0] as i32, lo_b[1] as i32, lo_b[2] as i32], cell_blocks: k as i32, dims: [d[0] as u32, d[1] as u32, d[2] as u32], first_cell })
}

/// x as (block, offset) per axis.
fn split3(x: DVec3, block: f64) -> ([i32; 4], [f32; 4]) {
    let s: [(i32, f32); 3] = std::array::from_fn(|a| split(x[a], block));
    ([s[0].0, s[1].0, s[2].0, 0], [s[0].1, s[1].1, s[2].1, 0.0])
}

/// A vector as an f32 vec4 (w = 0).
fn f4(v: DVec3) -> [f32; 4] {
    [v.x as f32, v.y as f32, v.z as f32, 0.0]
}

/// The f32 length tolerance of a mesh (module doc; the per-ball floor is added in WGSL).
pub fn gpu_tolerance(wall: &MeshWall, margin: f64) -> f64 {
    let mesh = &wall.mesh;
    mesh.tolerance.max(GPU_RELATIVE_TOLERANCE * (longest_edge(mesh) + margin))
}

/// Header of a mesh wall.
pub fn mesh_header(wall: &MeshWall, grid: &MeshGrid, margin: f64, block: f64) -> MeshGpu {
    let (cb, co) = split3(wall.motion.center, block);
    let (lb, lo) = split3(DVec3::from(wall.load_point), block);
    let o = grid.origin;
    let flags = if wall.mesh.two_sided { MESH_FLAG_TWO_SIDED } else { 0 } | if wall.motion.is_static() { 0 } else { MESH_FLAG_MOVING };
    MeshGpu {
        grid_origin: [o[0], o[1], o[2], grid.cell_blocks],
        grid_dims: [grid.dims[0], grid.dims[1], grid.dims[2], grid.first_cell],
        center_block: cb,
        center_offset: co,
        load_block: lb,
        load_offset: lo,
        material: wall.material,
        flags,
        margin: margin as f32,
        tolerance: gpu_tolerance(wall, margin) as f32,
    }
}

/// The triangles of mesh number `m` (global facet groups from `group_base`).
pub fn mesh_triangles(wall: &MeshWall, m: u32, group_base: u32, block: f64) -> impl Iterator<Item = MeshTriangleGpu> + '_ {
    let mesh = &wall.mesh;
    mesh.triangles.iter().zip(&mesh.normals).zip(&mesh.group).map(move |((t, n), &g)| {
        let (b, o) = split3(t[0], block);
        MeshTriangleGpu { v0_block: b, v0_offset: o, edge1: f4(t[1] - t[0]), edge2: f4(t[2] - t[0]), normal: f4(*n), mesh: m, group: group_base + g, _pad0: 0, _pad1: 0 }
    })
}

/// A mesh wall's pose row at time `t`.
pub fn mesh_pose(wall: &MeshWall, t: f64, block: f64) -> MeshPoseGpu {
    let pose = wall.pose_at(t);
    let r = DMat3::from_quat(pose.rotation);
    let (cb, co) = split3(pose.center, block);
    // the rows of Rᵀ are the columns of R
    let [(hx, mx, lx), (hy, my, ly), (hz, mz, lz)] = [r.x_axis, r.y_axis, r.z_axis].map(split_row);
    MeshPoseGpu {
        rot_x: f4(r.x_axis),
        rot_y: f4(r.y_axis),
        rot_z: f4(r.z_axis),
        center_block: cb,
        center_offset: co,
        velocity: f4(pose.velocity),
        omega: f4(pose.omega),
        inv_hi_x: hx,
        inv_hi_y: hy,
        inv_hi_z: hz,
        inv_mid_x: mx,
        inv_mid_y: my,
        inv_mid_z: mz,
        inv_lo_x: lx,
        inv_lo_y: ly,
        inv_lo_z: lz,
    }
}

/// A rotation-matrix entry m (|m| ≤ 1) as m = hi·2⁻¹² + mid·2⁻²⁴ + lo: integers |hi| ≤ 2¹²,
/// |mid| ≤ 2¹¹ and a remainder |lo| ≤ 2⁻²⁵ (rounded to f32). Products of hi and mid with
/// integer block counts below `ROTATE_MAX_BLOCKS` are exact in i32 (`rotate_blocks`).
pub fn split_entry(m: f64) -> (i32, i32, f32) {
    let hi = (m * 4096.0).round();
    let rest = m - hi / 4096.0;
    let mid = (rest * 16_777_216.0).round();
    (hi as i32, mid as i32, (rest - mid / 16_777_216.0) as f32)
}

/// `split_entry` of the three entries of a row.
fn split_row(row: DVec3) -> ([i32; 4], [i32; 4], [f32; 4]) {
    let s = row.to_array().map(split_entry);
    ([s[0].0, s[1].0, s[2].0, 0], [s[0].1, s[1].1, s[2].1, 0], [s[0].2, s[1].2, s[2].2, 0.0])
}

/// The largest distance, in blocks, from a moving mesh's rotation centre c0 to a point within
/// `margin` of the mesh.
pub fn moving_extent_blocks(wall: &MeshWall, margin: f64, block: f64) -> f64 {
    let c0 = wall.motion.center;
    let far = wall.mesh.triangles.iter().flatten().map(|v| (*v - c0).abs().max_element()).fold(0.0, f64::max);
    (far + margin) / block
}

/// Word offsets of the `mesh_data` sections (module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MeshDataLayout {
    pub n_meshes: u32,
    pub rows: u32,
    pub pose_base: u32,
    pub tri_base: u32,
    pub start_base: u32,
    pub id_base: u32,
    pub words: u64,
}

impl MeshDataLayout {
    /// Sections for `n_meshes` meshes, `rows` pose rows, `n_tris` triangles, `n_cells` cells and
    /// `n_ids` binned ids.
    pub fn new(n_meshes: u32, rows: u32, n_tris: u64, n_cells: u64, n_ids: u64) -> Result<MeshDataLayout> {
        let w = |t: &str| -> u64 { super::layout::packed_structs().iter().find(|(n, _)| *n == t).map(|(_, w)| *w as u64).expect("packed struct") };
        let pose_base = n_meshes as u64 * w("MeshGpu");
        let tri_base = pose_base + rows as u64 * n_meshes as u64 * w("MeshPoseGpu");
        let start_base = tri_base + n_tris * w("MeshTriangleGpu");
        let id_base = start_base + (n_cells + 1).div_ceil(4);
        let words = id_base + n_ids.div_ceil(4);
        if words > u32::MAX as u64 {
            return Err(TalusError::Device(format!("mesh data of {words} 16-byte words is too large")));
        }
        Ok(MeshDataLayout { n_meshes, rows, pose_base: pose_base as u32, tri_base: tri_base as u32, start_base: start_base as u32, id_base: id_base as u32, words })
    }
}

/// The mesh walls on the device.
pub struct GpuMeshes {
    pub walls: Vec<MeshWall>,
    /// The packed buffer (a 16-byte placeholder without meshes).
    pub data: wgpu::Buffer,
    pub layout: MeshDataLayout,
    /// Triangles of all meshes.
    pub n_triangles: u32,
    /// Binned ids (triangle–cell pairs) of all meshes.
    pub n_entries: u32,
    /// Wall-clock seconds of the upload and binning (0 without meshes).
    pub bin_seconds: f64,
}

/// Everything the binning passes use.
struct BinBuffers {
    params: wgpu::Buffer,
    triangles: wgpu::Buffer,
    headers: wgpu::Buffer,
    counts: wgpu::Buffer,
    cursor: wgpu::Buffer,
    levels: Vec<ScanLevel>,
}

impl GpuMeshes {
    /// Upload the set-up's mesh walls, bin their triangles on the device and assemble
    /// `mesh_data` with room for `rows` pose rows (written later by `upload_poses`).
    pub fn new(ctx: &GpuContext, pipelines: &Pipelines, setup: &Setup, grid: &GridSpec, rows: u32) -> Result<GpuMeshes> {
        let walls = setup.meshes.clone();
        if walls.is_empty() {
            let data = ctx.create_buffer("mesh_data", 16, U::STORAGE | U::COPY_DST)?;
            return Ok(GpuMeshes { walls, data, layout: MeshDataLayout::default(), n_triangles: 0, n_entries: 0, bin_seconds: 0.0 });
        }
        let start = std::time::Instant::now();
        let margin = MARGIN_SLACK * (setup.max_radius() + crate::cpu::max_positive_rgap(setup)) + 2.0 * grid.block;
        let bases = mesh_group_bases(&walls)?;
        let (mut headers, mut triangles, mut n_cells) = (Vec::new(), Vec::new(), 0u64);
        for (m, (wall, &base)) in walls.iter().zip(&bases).enumerate() {
            let extent = moving_extent_blocks(wall, margin, grid.block);
            if !wall.motion.is_static() && extent >= (ROTATE_MAX_BLOCKS / 2) as f64 {
                return Err(TalusError::Other(format!("moving mesh wall `{}` reaches {} m from its rotation centre, more than the GPU rotates exactly ({} m)", wall.name, crate::error::fmt_num(extent * grid.block), crate::error::fmt_num((ROTATE_MAX_BLOCKS / 2) as f64 * grid.block))));
            }
            let g = mesh_grid(&wall.mesh, &wall.name, margin, grid.block, n_cells as u32)?;
            n_cells += g.n_cells();
            if n_cells >= u32::MAX as u64 {
                return Err(TalusError::Device(format!("mesh walls up to `{}` need {n_cells} grid cells, too many", wall.name)));
            }
            headers.push(mesh_header(wall, &g, margin, grid.block));
            triangles.extend(mesh_triangles(wall, m as u32, base, grid.block));
        }
        if triangles.len() >= u32::MAX as usize {
            return Err(TalusError::Device(format!("{} mesh triangles: too many", triangles.len())));
        }
        let n_tris = triangles.len() as u32;
        let bins = BinBuffers::new(ctx, &headers, &triangles, n_cells as u32, grid.block)?;
        let n_entries = bins.count(ctx, pipelines, n_tris, n_cells as u32)?;
        let ids = ctx.create_buffer("mesh_triangle_ids", 4 * n_entries.max(1) as u64, U::STORAGE | U::COPY_SRC)?;
        bins.scatter_and_sort(ctx, pipelines, &ids, n_tris, n_cells as u32);
        let layout = MeshDataLayout::new(walls.len() as u32, rows.max(1), n_tris as u64, n_cells, n_entries as u64)?;
        let data = ctx.create_buffer("mesh_data", 16 * layout.words, U::STORAGE | U::COPY_DST)?;
        ctx.queue.write_buffer(&data, 0, bytemuck::cast_slice(&headers));
        let mut enc = ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("mesh_data") });
        enc.copy_buffer_to_buffer(&bins.triangles, 0, &data, 16 * layout.tri_base as u64, std::mem::size_of_val(triangles.as_slice()) as u64);
        enc.copy_buffer_to_buffer(&bins.counts, 0, &data, 16 * layout.start_base as u64, 4 * (n_cells + 1));
        if n_entries > 0 {
            enc.copy_buffer_to_buffer(&ids, 0, &data, 16 * layout.id_base as u64, 4 * n_entries as u64);
        }
        ctx.queue.submit([enc.finish()]);
        ctx.device.poll(wgpu::PollType::wait_indefinitely()).map_err(|e| TalusError::Device(format!("poll: {e}")))?;
        Ok(GpuMeshes { walls, data, layout, n_triangles: n_tris, n_entries, bin_seconds: start.elapsed().as_secs_f64() })
    }

    /// Write the pose rows of time indices `time0 .. time0 + rows` (at most `layout.rows`).
    pub fn upload_poses(&self, ctx: &GpuContext, time0: u64, rows: u64, dt: f64, block: f64) {
        if self.walls.is_empty() {
            return;
        }
        let rows = rows.clamp(1, self.layout.rows as u64);
        let mut table = Vec::with_capacity(rows as usize * self.walls.len());
        for k in 0..rows {
            let t = (time0 + k) as f64 * dt;
            table.extend(self.walls.iter().map(|w| mesh_pose(w, t, block)));
        }
        ctx.queue.write_buffer(&self.data, 16 * self.layout.pose_base as u64, bytemuck::cast_slice(&table));
    }

    /// The error of an OVERFLOW_MESH_GROUPS step state: names the mesh and the particle.
    pub fn overflow_error(&self, st: &StepStateRead, step: u64) -> TalusError {
        let m = st.mesh_overflow.saturating_sub(1) as usize;
        let name = self.walls.get(m).map_or("?".to_string(), |w| format!("{} ({})", w.name, w.mesh.source.display()));
        TalusError::Device(format!(
            "mesh wall `{name}`: particle {} is near more than {MESH_GROUPS_MAX} facet groups of the mesh at once (in the batch from step {step}), more than a GPU thread keeps (MESH_GROUPS_MAX); coarsen the mesh's curved parts or use the CPU backend",
            st.mesh_overflow_particle.saturating_sub(1)
        ))
    }
}

impl BinBuffers {
    /// Create the binning buffers and upload the headers and triangles.
    fn new(ctx: &GpuContext, headers: &[MeshGpu], triangles: &[MeshTriangleGpu], n_cells: u32, block: f64) -> Result<BinBuffers> {
        let b = |label: &str, size: u64, usage: U| ctx.create_buffer(label, size, usage);
        let out = BinBuffers {
            params: b("mesh_bin_params", std::mem::size_of::<MeshBinParams>() as u64, U::UNIFORM | U::COPY_DST)?,
            triangles: b("mesh_triangles", std::mem::size_of_val(triangles) as u64, U::STORAGE | U::COPY_DST | U::COPY_SRC)?,
            headers: b("mesh_headers", std::mem::size_of_val(headers) as u64, U::STORAGE | U::COPY_DST)?,
            counts: b("mesh_cell_count", 4 * (n_cells as u64 + 1), U::STORAGE | U::COPY_DST | U::COPY_SRC)?,
            cursor: b("mesh_cell_cursor", 4 * n_cells as u64, U::STORAGE | U::COPY_DST)?,
            levels: scan_levels(ctx, n_cells as u64 + 1)?,
        };
        let params = MeshBinParams { n_triangles: triangles.len() as u32, n_cells, block: block as f32, _pad: 0 };
        ctx.queue.write_buffer(&out.params, 0, bytemuck::bytes_of(&params));
        ctx.queue.write_buffer(&out.triangles, 0, bytemuck::cast_slice(triangles));
        ctx.queue.write_buffer(&out.headers, 0, bytemuck::cast_slice(headers));
        Ok(out)
    }

    /// Count the triangles per cell, scan into cell starts and read back the total.
    fn count(&self, ctx: &GpuContext, p: &Pipelines, n_tris: u32, n_cells: u32) -> Result<u32> {
        let max_dim = ctx.limits.max_compute_workgroups_per_dimension;
        let count = bind_group(&ctx.device, &p.mesh_count, "mesh_count", &[&self.params, &self.triangles, &self.headers, &self.counts]);
        let (scan, add) = scan_bind_groups(&ctx.device, p, &self.levels, &self.counts);
        let mut enc = ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("mesh_count") });
        enc.clear_buffer(&self.counts, 0, None);
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("mesh_count"), timestamp_writes: None });
            pass.set_pipeline(&p.mesh_count);
            pass.set_bind_group(0, &count, &[]);
            dispatch_threads(&mut pass, n_tris, max_dim);
        }
        encode_scan(&mut enc, p, &self.levels, &scan, &add);
        ctx.queue.submit([enc.finish()]);
        read_u32_at(ctx, &self.counts, 4 * n_cells as u64)
    }

    /// Scatter the ids into their cells and sort each cell.
    fn scatter_and_sort(&self, ctx: &GpuContext, p: &Pipelines, ids: &wgpu::Buffer, n_tris: u32, n_cells: u32) {
        let max_dim = ctx.limits.max_compute_workgroups_per_dimension;
        let scatter = bind_group(&ctx.device, &p.mesh_scatter, "mesh_scatter", &[&self.params, &self.triangles, &self.headers, &self.cursor, &self.counts, ids]);
        let sort = bind_group_at(&ctx.device, &p.mesh_sort, "mesh_sort", &[(0, &self.params), (4, &self.counts), (5, ids)]);
        let mut enc = ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("mesh_scatter") });
        enc.clear_buffer(&self.cursor, 0, None);
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("mesh_scatter"), timestamp_writes: None });
            pass.set_pipeline(&p.mesh_scatter);
            pass.set_bind_group(0, &scatter, &[]);
            dispatch_threads(&mut pass, n_tris, max_dim);
            pass.set_pipeline(&p.mesh_sort);
            pass.set_bind_group(0, &sort, &[]);
            dispatch_threads(&mut pass, n_cells, max_dim);
        }
        ctx.queue.submit([enc.finish()]);
    }
}

/// The u32 at byte `offset` of `buf`.
fn read_u32_at(ctx: &GpuContext, buf: &wgpu::Buffer, offset: u64) -> Result<u32> {
    let staging = ctx.create_buffer("mesh_total", 16, U::COPY_DST | U::COPY_SRC)?;
    let mut enc = ctx.device.create_command_encoder(&Default::default());
    enc.copy_buffer_to_buffer(buf, offset, &staging, 0, 4);
    ctx.queue.submit([enc.finish()]);
    let bytes = read_buffers(ctx, &[(&staging, 4)])?;
    Ok(u32::from_le_bytes([bytes[0][0], bytes[0][1], bytes[0][2], bytes[0][3]]))
}

/// A bind group with explicit binding numbers (for an entry point that uses some of its
/// module's bindings).
fn bind_group_at(device: &wgpu::Device, pipeline: &wgpu::ComputePipeline, label: &str, buffers: &[(u32, &wgpu::Buffer)]) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry> = buffers.iter().map(|(i, b)| wgpu::BindGroupEntry { binding: *i, resource: b.as_entire_binding() }).collect();
    device.create_bind_group(&wgpu::BindGroupDescriptor { label: Some(label), layout: &pipeline.get_bind_group_layout(0), entries: &entries })
}
