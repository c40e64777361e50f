//! Device → host copies (one staging buffer, one map per call).

use super::context::GpuContext;
use crate::error::{Result, TalusError};

/// Map `size` bytes of a MAP_READ buffer and copy them out (after all submitted work).
pub fn map_read(ctx: &GpuContext, buf: &wgpu::Buffer, size: u64) -> Result<Vec<u8>> {
    map_read_after(ctx, buf, size, None)
}

/// `map_read` waiting only for submission `after` (the one that wrote the buffer), so that
/// later submissions keep the device busy meanwhile.
pub fn map_read_after(ctx: &GpuContext, buf: &wgpu::Buffer, size: u64, after: Option<wgpu::SubmissionIndex>) -> Result<Vec<u8>> {
    let slice = buf.slice(0..size);
    let (tx, rx) = std::sync::mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    ctx.device.poll(wgpu::PollType::Wait { submission_index: after, timeout: None }).map_err(|e| TalusError::Device(format!("poll: {e}")))?;
    rx.recv()
        .map_err(|e| TalusError::Device(format!("map_async callback lost: {e}")))?
        .map_err(|e| TalusError::Device(format!("map_async: {e}")))?;
    let data = slice.get_mapped_range().map_err(|e| TalusError::Device(format!("get_mapped_range: {e:?}")))?.to_vec();
    buf.unmap();
    Ok(data)
}

/// Read several (buffer, byte count) ranges from offset 0 with one submit and one map.
pub fn read_buffers(ctx: &GpuContext, srcs: &[(&wgpu::Buffer, u64)]) -> Result<Vec<Vec<u8>>> {
    let total: u64 = srcs.iter().map(|(_, s)| s.div_ceil(4) * 4).sum::<u64>().max(4);
    let staging = ctx.create_buffer("readback", total, wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST)?;
    let mut enc = ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("readback") });
    let mut off = 0;
    for (b, s) in srcs {
        let s4 = s.div_ceil(4) * 4;
        if s4 > 0 {
            enc.copy_buffer_to_buffer(b, 0, &staging, off, s4);
        }
        off += s4;
    }
    ctx.queue.submit([enc.finish()]);
    let data = map_read(ctx, &staging, total)?;
    let mut out = Vec::new();
    let mut off = 0usize;
    for (_, s) in srcs {
        out.push(data[off..off + *s as usize].to_vec());
        off += (s.div_ceil(4) * 4) as usize;
    }
    Ok(out)
}

/// Read `size` bytes of `src` from byte `offset` (both multiples of 4).
pub fn read_buffer_range(ctx: &GpuContext, src: &wgpu::Buffer, offset: u64, size: u64) -> Result<Vec<u8>> {
    let staging = ctx.create_buffer("readback", size.max(4), wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST)?;
    let mut enc = ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("readback") });
    enc.copy_buffer_to_buffer(src, offset, &staging, 0, size);
    ctx.queue.submit([enc.finish()]);
    let mut data = map_read(ctx, &staging, size.max(4))?;
    data.truncate(size as usize);
    Ok(data)
}
