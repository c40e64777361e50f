//! Encoding helpers every pass module uses: bind groups from a buffer list, 1-D dispatch
//! split over the adapter's x limit, and the multi-level exclusive prefix sum (`scan.wgsl`).
//! Below `step.rs` (the step's passes), `meshes.rs` (mesh binning), `capacity.rs`,
//! `exchange.rs` and `energy.rs`, which all encode with them.

use super::buffers::{ScanLevel, SCAN_BLOCK};
use super::pipelines::Pipelines;
use super::split::SplitBuffer;
use crate::layout::consts::WORKGROUP_SIZE;

/// A pass's bind groups: group 0 (its buffers) and, for a pass with split arrays, group 1 (their
/// parts, `gpu::split`).
pub struct PassGroups {
    pub g0: wgpu::BindGroup,
    pub g1: Option<wgpu::BindGroup>,
}

impl PassGroups {
    /// Set both groups on `pass`.
    pub fn set(&self, pass: &mut wgpu::ComputePass) {
        pass.set_bind_group(0, &self.g0, &[]);
        if let Some(g1) = &self.g1 {
            pass.set_bind_group(1, g1, &[]);
        }
    }
}

/// Group 0 of `pipeline` from `buffers` (bindings 0, 1, … in order) and group 1 from every part
/// of `split` (in the order of the pass's `shader::pass_splits`), when it has split arrays.
pub fn pass_groups(device: &wgpu::Device, pipeline: &wgpu::ComputePipeline, label: &str, buffers: &[&wgpu::Buffer], split: &[&SplitBuffer]) -> PassGroups {
    let g0 = bind_group(device, pipeline, label, buffers);
    let g1 = (!split.is_empty()).then(|| {
        let parts: Vec<&wgpu::Buffer> = split.iter().flat_map(|s| s.parts.iter()).collect();
        let entries: Vec<wgpu::BindGroupEntry> = parts.iter().enumerate().map(|(i, b)| wgpu::BindGroupEntry { binding: i as u32, resource: b.as_entire_binding() }).collect();
        device.create_bind_group(&wgpu::BindGroupDescriptor { label: Some(label), layout: &pipeline.get_bind_group_layout(1), entries: &entries })
    });
    PassGroups { g0, g1 }
}

pub fn bind_group(device: &wgpu::Device, pipeline: &wgpu::ComputePipeline, label: &str, buffers: &[&wgpu::Buffer]) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry> = buffers
        .iter()
        .enumerate()
        .map(|(i, b)| wgpu::BindGroupEntry { binding: i as u32, resource: b.as_entire_binding() })
        .collect();
    device.create_bind_group(&wgpu::BindGroupDescriptor { label: Some(label), layout: &pipeline.get_bind_group_layout(0), entries: &entries })
}

/// Bind groups of the prefix sum over `data` (level 0) and the block totals of each level:
/// (`scan_blocks` groups, `scan_add` groups), one per level.
pub fn scan_bind_groups(device: &wgpu::Device, p: &Pipelines, levels: &[ScanLevel], data: &wgpu::Buffer) -> (Vec<wgpu::BindGroup>, Vec<wgpu::BindGroup>) {
    let mut scan = Vec::new();
    let mut add = Vec::new();
    for (l, lvl) in levels.iter().enumerate() {
        let d = if l == 0 { data } else { &levels[l - 1].sums };
        scan.push(bind_group(device, &p.scan_blocks, "scan_blocks", &[&lvl.params, d, &lvl.sums]));
        add.push(bind_group(device, &p.scan_add, "scan_add", &[&lvl.params, d, &lvl.sums]));
    }
    (scan, add)
}

/// Encode the exclusive prefix sum of `levels` (in place in level 0's data): every level's
/// blocks upwards, then the block offsets added back downwards.
pub fn encode_scan(enc: &mut wgpu::CommandEncoder, p: &Pipelines, levels: &[ScanLevel], scan: &[wgpu::BindGroup], add: &[wgpu::BindGroup]) {
    let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some("scan"), timestamp_writes: None });
    pass.set_pipeline(&p.scan_blocks);
    for (lvl, bg) in levels.iter().zip(scan) {
        pass.set_bind_group(0, bg, &[]);
        pass.dispatch_workgroups((lvl.n as u64).div_ceil(SCAN_BLOCK) as u32, 1, 1);
    }
    pass.set_pipeline(&p.scan_add);
    for l in (0..levels.len().saturating_sub(1)).rev() {
        pass.set_bind_group(0, &add[l], &[]);
        pass.dispatch_workgroups((levels[l].n as u64).div_ceil(SCAN_BLOCK) as u32, 1, 1);
    }
}

/// Workgroup counts (x, y) covering `n_wg` workgroups with x ≤ `max_dim`.
pub fn split_dispatch(n_wg: u32, max_dim: u32) -> (u32, u32) {
    if n_wg <= max_dim {
        (n_wg, 1)
    } else {
        (max_dim, n_wg.div_ceil(max_dim))
    }
}

/// Dispatch `n` threads of a 1-D pass of WORKGROUP_SIZE (linear_index in common.wgsl).
pub fn dispatch_threads(pass: &mut wgpu::ComputePass, n: u32, max_dim: u32) {
    if n == 0 {
        return;
    }
    let (x, y) = split_dispatch(n.div_ceil(WORKGROUP_SIZE), max_dim);
    pass.dispatch_workgroups(x, y, 1);
}
