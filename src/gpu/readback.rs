//! Device → host copies (one staging buffer, one map per call).

use super::context::GpuContext;
use super::split::SplitBuffer;
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
    let srcs: Vec<Source> = srcs.iter().map(|&(b, s)| Source::Whole(b, s)).collect();
    read_sources(ctx, &srcs)
}

/// What `read_sources` reads: the first bytes of a buffer, or the first elements of an array
/// split across bindings (`gpu::split`), read part by part and joined; or that many zero bytes
/// of an array the device does not hold (`Buffers::image_source`).
pub enum Source<'a> {
    Whole(&'a wgpu::Buffer, u64),
    Split(&'a SplitBuffer, u64),
    Zeros(u64),
}

/// Read every source, one staging buffer and one map per `max_buffer_size` of bytes (one in
/// every run short of a few GB), each source's bytes joined in order.
pub fn read_sources(ctx: &GpuContext, srcs: &[Source]) -> Result<Vec<Vec<u8>>> {
    // (source index, buffer, offset, bytes) of every copy
    let mut copies: Vec<(usize, &wgpu::Buffer, u64, u64)> = Vec::new();
    for (i, src) in srcs.iter().enumerate() {
        match *src {
            Source::Whole(b, size) => copies.push((i, b, 0, size)),
            Source::Split(sb, elements) => copies.extend(sb.ranges(0, elements).into_iter().map(|(b, off, len)| (i, b, off, len))),
            Source::Zeros(_) => {}
        }
    }
    let mut out: Vec<Vec<u8>> = srcs.iter().map(|s| if let Source::Zeros(len) = *s { vec![0; len as usize] } else { Vec::new() }).collect();
    let limit = ctx.limits.max_buffer_size;
    let mut rest = &copies[..];
    while !rest.is_empty() {
        // as many copies as one staging buffer holds (at least one)
        let mut take = 0;
        let mut total = 0u64;
        while take < rest.len() && (take == 0 || total + rest[take].3.div_ceil(4) * 4 <= limit) {
            total += rest[take].3.div_ceil(4) * 4;
            take += 1;
        }
        let (batch, later) = rest.split_at(take);
        rest = later;
        let staging = ctx.create_buffer("readback", total.max(4), wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST)?;
        let mut enc = ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("readback") });
        let mut off = 0;
        for &(_, b, src_off, size) in batch {
            let s4 = size.div_ceil(4) * 4;
            if s4 > 0 {
                enc.copy_buffer_to_buffer(b, src_off, &staging, off, s4);
            }
            off += s4;
        }
        ctx.queue.submit([enc.finish()]);
        let data = map_read(ctx, &staging, total.max(4))?;
        let mut off = 0usize;
        for &(i, _, _, size) in batch {
            out[i].extend_from_slice(&data[off..off + size as usize]);
            off += (size.div_ceil(4) * 4) as usize;
        }
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
