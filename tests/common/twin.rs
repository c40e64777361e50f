//! Runs a CPU/GPU twin test kernel: `kernel_src` (composed after the contact files and
//! tests/shaders/twin_io.wgsl, which declares the bindings) reads `inputs` (binding 0,
//! array<f32>) and `params` (binding 1, array<PairParamsGpu>, one per case) and writes
//! `out_stride` floats per case to binding 2.

use talus::contact::params::PairParamsGpu;
use wgpu::util::DeviceExt;

pub fn run_twin_kernel(kernel_src: &str, inputs: &[f32], params: &[PairParamsGpu], out_stride: usize) -> Vec<f32> {
    let ctx = talus::gpu::open_context()
        .unwrap_or_else(|e| panic!("GPU twin test needs an adapter ({e}); install mesa-vulkan-drivers"));
    let source = talus::gpu::shader::compose(&format!("{}\n{kernel_src}", include_str!("../shaders/twin_io.wgsl")));
    let module = ctx.device.create_shader_module(wgpu::ShaderModuleDescriptor { label: Some("twins"), source: wgpu::ShaderSource::Wgsl(source.into()) });
    let pipeline = ctx.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("twins"),
        layout: None,
        module: &module,
        entry_point: Some("main"),
        compilation_options: Default::default(),
        cache: None,
    });
    let storage = wgpu::BufferUsages::STORAGE;
    let in_buf = ctx.device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: None, contents: bytemuck::cast_slice(inputs), usage: storage });
    let p_buf = ctx.device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: None, contents: bytemuck::cast_slice(params), usage: storage });
    let size = (params.len() * out_stride * 4) as u64;
    let out_buf = ctx.device.create_buffer(&wgpu::BufferDescriptor { label: None, size, usage: storage | wgpu::BufferUsages::COPY_SRC, mapped_at_creation: false });
    let read_buf = ctx.device.create_buffer(&wgpu::BufferDescriptor { label: None, size, usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST, mapped_at_creation: false });
    let bind = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &[
            wgpu::BindGroupEntry { binding: 0, resource: in_buf.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 1, resource: p_buf.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 2, resource: out_buf.as_entire_binding() },
        ],
    });
    let mut enc = ctx.device.create_command_encoder(&Default::default());
    {
        let mut pass = enc.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind, &[]);
        pass.dispatch_workgroups(params.len().div_ceil(64) as u32, 1, 1);
    }
    enc.copy_buffer_to_buffer(&out_buf, 0, &read_buf, 0, size);
    ctx.queue.submit([enc.finish()]);
    read_buf.slice(..).map_async(wgpu::MapMode::Read, |r| r.expect("map"));
    ctx.device.poll(wgpu::PollType::wait_indefinitely()).expect("poll");
    let data = read_buf.slice(..).get_mapped_range().expect("mapped range");
    bytemuck::cast_slice(&data).to_vec()
}
