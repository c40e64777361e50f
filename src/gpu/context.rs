//! Adapter choice and device creation.

use crate::error::{Result, TalusError};

/// Storage buffers the largest pass (`forces`) binds while no array is split: 15 for
/// particles, history, grid and walls, and one packed buffer for all mesh-wall data
/// (`gpu::meshes`). 16 is what desktop GPUs and lavapipe grant (llvmpipe's GL driver grants
/// exactly 16): pack more data into existing buffers rather than raising this
/// (`tests/gpu_shaders.rs` counts every pass's bindings).
pub const STORAGE_BUFFERS_NEEDED: u32 = 16;

/// Storage buffers per stage requested beyond `STORAGE_BUFFERS_NEEDED` where the adapter grants
/// them: the parts of arrays split across bindings (`gpu::split`; a 100M-particle bed at a
/// 2 GiB binding cap binds 35 in its force pass).
pub const STORAGE_BUFFERS_WANTED: u32 = 128;

/// An opened adapter + device + queue (clones share the device).
#[derive(Clone)]
pub struct GpuContext {
    pub instance: wgpu::Instance,
    pub adapter: wgpu::Adapter,
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub info: wgpu::AdapterInfo,
    /// The limits the device was created with.
    pub limits: wgpu::Limits,
    /// Device-local memory, bytes, where the backend reports it (`device_memory`).
    pub memory: Option<u64>,
    /// Whether the shaders are compiled with naga's runtime checks (`shader_checks_wanted`,
    /// `TALUS_GPU_SHADER_CHECKS`): bounds clamps, loop bounds, integer-division guards and
    /// zeroed workgroup memory. Off, Talus's own capacity checks remain, and the driver's
    /// robust buffer access where the device has it.
    pub shader_checks: bool,
    /// Whether the force pass issues each slot's loads early (`forces.wgsl`'s `EARLY_LOADS`,
    /// `early_loads_wanted`, `TALUS_GPU_EARLY_LOADS`; the same bits either way).
    pub force_early_loads: bool,
    /// Whether the force pass reads each particle's own state again at each contact instead of
    /// keeping it in registers (`forces.wgsl`'s `RELOAD_OWN`, `reload_own_wanted`,
    /// `TALUS_GPU_RELOAD_OWN`; the same bits either way).
    pub reload_own: bool,
    /// Whether the force pass is compiled for the scene's pairs only (`specialise_wanted`,
    /// `TALUS_GPU_SPECIALISE`, `pipelines::ContactVariant`; the same bits either way).
    pub specialise: bool,
    /// Whether list slots carry their place (`split::SplitLayout::places`,
    /// `slot_places_wanted`, `TALUS_GPU_SLOT_PLACES`; the same bits either way): the partner
    /// words, records, shares and incoming entries of a SIMD group's slots laid out column by
    /// column.
    pub slot_places: bool,
}

/// One adapter as `talus info` prints it.
#[derive(Clone, Debug)]
pub struct AdapterSummary {
    pub name: String,
    /// "Vulkan", "Metal", "Dx12", "Gl".
    pub backend: String,
    /// "DiscreteGpu", "IntegratedGpu", "VirtualGpu", "Cpu", "Other".
    pub device_type: String,
    /// A software emulation of a GPU (device type `Cpu`: llvmpipe/lavapipe, WARP, SwiftShader).
    pub software: bool,
    /// Driver name and version text.
    pub driver: String,
    pub max_storage_buffers_per_shader_stage: u32,
    pub max_storage_buffer_binding_size: u64,
    pub max_buffer_size: u64,
    pub max_compute_workgroups_per_dimension: u32,
    pub max_compute_invocations_per_workgroup: u32,
    /// Device-local memory, bytes (`device_memory`).
    pub device_memory: Option<u64>,
}

/// The adapter's device-local memory in bytes: its largest DEVICE_LOCAL memory heap on Vulkan
/// (wgpu has no call for it; read through wgpu-hal). `None` on the other backends.
pub fn device_memory(adapter: &wgpu::Adapter) -> Option<u64> {
    // SAFETY: the hal adapter is only read (its instance and physical device handles), while
    // `adapter` is borrowed and so alive
    unsafe {
        let hal = adapter.as_hal::<wgpu::hal::api::Vulkan>()?;
        let props = hal.shared_instance().raw_instance().get_physical_device_memory_properties(hal.raw_physical_device());
        let heaps = &props.memory_heaps[..(props.memory_heap_count as usize).min(props.memory_heaps.len())];
        heaps.iter().filter(|h| h.flags.contains(ash::vk::MemoryHeapFlags::DEVICE_LOCAL)).map(|h| h.size).max()
    }
}

/// True for an adapter that emulates a GPU in software on the CPU (device type `Cpu`: Mesa's
/// llvmpipe/lavapipe, Microsoft's WARP, SwiftShader). `--backend auto` does not run on one.
pub fn is_software(t: wgpu::DeviceType) -> bool {
    t == wgpu::DeviceType::Cpu
}

fn type_rank(t: wgpu::DeviceType) -> u32 {
    match t {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu | wgpu::DeviceType::Other => 2,
        wgpu::DeviceType::Cpu => 3,
    }
}

/// An instance of `backends`. wgpu checks every indirect dispatch's workgroup counts on the
/// device by default, with a validation dispatch of its own before each one; Talus's counts are
/// written by the host, below `max_compute_workgroups_per_dimension` (`encode::split_dispatch`),
/// and copied or zeroed on the device (`list_plan.wgsl`), so the check is turned off except on
/// DX12, where without it `@builtin(num_workgroups)` (which the 2-D dispatches index with)
/// reads 0. Every step encodes some 24 indirect dispatches, zero-sized between list builds; on an
/// H100 the check doubled their cost (docs/performance.md, "Real GPU"). `WGPU_*` environment
/// variables override (`WGPU_VALIDATION_INDIRECT_CALL=1` turns it back on).
fn new_instance(backends: wgpu::Backends) -> wgpu::Instance {
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
    desc.backends = backends;
    let mut flags = wgpu::InstanceFlags::from_build_config();
    if !backends.contains(wgpu::Backends::DX12) {
        flags.remove(wgpu::InstanceFlags::VALIDATION_INDIRECT_CALL);
    }
    desc.flags = flags.with_env();
    wgpu::Instance::new(desc)
}

/// The backends tried first, as groups that share an instance: DX12 on its own, since its
/// instance keeps the indirect-dispatch check (`new_instance`).
const PRIMARY: [wgpu::Backends; 2] = [wgpu::Backends::VULKAN.union(wgpu::Backends::METAL), wgpu::Backends::DX12];

/// Every adapter of `groups` with the instance that found it, in preference order: by device
/// type (`type_rank`), then in the order of `groups`.
fn enumerate(groups: &[wgpu::Backends]) -> Vec<(wgpu::Instance, wgpu::Adapter)> {
    let mut out = Vec::new();
    for &backends in groups {
        let inst = new_instance(backends);
        for a in pollster::block_on(inst.enumerate_adapters(backends)) {
            out.push((inst.clone(), a));
        }
    }
    out.sort_by_key(|(_, a)| type_rank(a.get_info().device_type));
    out
}

/// Every adapter wgpu sees (primary backends, then GL), in preference order.
pub fn list_adapters() -> Vec<AdapterSummary> {
    let mut out = Vec::new();
    for groups in [&PRIMARY[..], &[wgpu::Backends::GL]] {
        for (_, a) in enumerate(groups) {
            let info = a.get_info();
            let l = a.limits();
            out.push(AdapterSummary {
                name: info.name.clone(),
                backend: format!("{:?}", info.backend),
                device_type: format!("{:?}", info.device_type),
                software: is_software(info.device_type),
                driver: format!("{} {}", info.driver, info.driver_info).trim().to_string(),
                max_storage_buffers_per_shader_stage: l.max_storage_buffers_per_shader_stage,
                max_storage_buffer_binding_size: l.max_storage_buffer_binding_size,
                max_buffer_size: l.max_buffer_size,
                max_compute_workgroups_per_dimension: l.max_compute_workgroups_per_dimension,
                max_compute_invocations_per_workgroup: l.max_compute_invocations_per_workgroup,
                device_memory: device_memory(&a),
            });
        }
    }
    out
}

fn pick_adapter() -> Result<(wgpu::Instance, wgpu::Adapter)> {
    for groups in [&PRIMARY[..], &[wgpu::Backends::GL]] {
        if let Some(found) = enumerate(groups).into_iter().next() {
            return Ok(found);
        }
    }
    // Nothing enumerated: ask wgpu once more to get its explanation.
    let inst = new_instance(wgpu::Backends::all());
    match pollster::block_on(inst.request_adapter(&wgpu::RequestAdapterOptions::default())) {
        Ok(a) => Ok((inst, a)),
        Err(e) => Err(TalusError::NoAdapter(e.to_string())),
    }
}

/// The adapter `open_context` would open, and its instance, without opening a device
/// (`talus info --shaders` compiles on adapters where wgpu cannot open one: RADV's null device).
pub fn preferred_adapter_handle() -> Result<(wgpu::Instance, wgpu::Adapter)> {
    pick_adapter()
}

/// The adapter `open_context` would open, without opening it (enumeration only): its name,
/// backend and device type. `NoAdapter` when there is none.
pub fn preferred_adapter() -> Result<wgpu::AdapterInfo> {
    pick_adapter().map(|(_, a)| a.get_info())
}

/// The limits Talus needs, checked against what the adapter grants.
fn required_limits(adapter: &wgpu::Adapter) -> Result<wgpu::Limits> {
    let have = adapter.limits();
    if have.max_storage_buffers_per_shader_stage < STORAGE_BUFFERS_NEEDED {
        return Err(TalusError::Device(format!(
            "adapter grants max_storage_buffers_per_shader_stage = {}, Talus needs {}",
            have.max_storage_buffers_per_shader_stage, STORAGE_BUFFERS_NEEDED
        )));
    }
    if have.max_compute_invocations_per_workgroup < 256 || have.max_compute_workgroup_size_x < 256 {
        return Err(TalusError::Device(format!(
            "adapter grants max_compute_invocations_per_workgroup = {} / max_compute_workgroup_size_x = {}, Talus needs 256",
            have.max_compute_invocations_per_workgroup, have.max_compute_workgroup_size_x
        )));
    }
    let mut l = wgpu::Limits::downlevel_defaults();
    l.max_storage_buffers_per_shader_stage = have.max_storage_buffers_per_shader_stage.min(STORAGE_BUFFERS_WANTED);
    // every binding of a pass counts here too (its uniform and storage buffers together)
    l.max_buffers_and_acceleration_structures_per_shader_stage = have.max_buffers_and_acceleration_structures_per_shader_stage.min(STORAGE_BUFFERS_WANTED + 4);
    l.max_storage_buffer_binding_size = have.max_storage_buffer_binding_size;
    l.max_buffer_size = have.max_buffer_size;
    l.max_compute_invocations_per_workgroup = 256;
    l.max_compute_workgroup_size_x = 256;
    l.max_compute_workgroups_per_dimension = have.max_compute_workgroups_per_dimension.min(65535);
    Ok(l)
}

/// Timestamps between the passes of an encoder, which `talus bench --profile` reads where the
/// adapter has both (`GpuBackend::profile_passes`); requested when granted, never required.
pub const PROFILE_FEATURES: wgpu::Features = wgpu::Features::TIMESTAMP_QUERY.union(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS);

/// Open the preferred adapter (DiscreteGpu > IntegratedGpu > Other > Cpu; GL last).
pub fn open_context() -> Result<GpuContext> {
    let (instance, adapter) = pick_adapter()?;
    open_adapter(instance, adapter)
}

/// The node-local index of this process among the ranks of an MPI run on its node, from the
/// launcher's environment (Open MPI's `OMPI_COMM_WORLD_LOCAL_RANK`, MPICH's `MPI_LOCALRANKID`,
/// Slurm's `SLURM_LOCALID`); 0 when none is set.
pub fn node_local_rank() -> usize {
    ["OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"].iter().find_map(|v| std::env::var(v).ok()?.trim().parse().ok()).unwrap_or(0)
}

/// For a rank of a decomposed run: among the adapters of the preferred kind (the device type
/// and backends `open_context` would take), the one at `local_rank` modulo their count, so
/// that the ranks of a node with several GPUs take one each (`node_local_rank`).
pub fn open_context_for_rank(local_rank: usize) -> Result<GpuContext> {
    for groups in [&PRIMARY[..], &[wgpu::Backends::GL]] {
        let found = enumerate(groups);
        let Some((_, first)) = found.first() else { continue };
        let kind = (type_rank(first.get_info().device_type), first.get_info().backend);
        let same: Vec<(wgpu::Instance, wgpu::Adapter)> = found.into_iter().filter(|(_, a)| (type_rank(a.get_info().device_type), a.get_info().backend) == kind).collect();
        let k = local_rank % same.len();
        let (instance, adapter) = same.into_iter().nth(k).expect("an adapter at k < count");
        return open_adapter(instance, adapter);
    }
    open_context()
}

fn open_adapter(instance: wgpu::Instance, adapter: wgpu::Adapter) -> Result<GpuContext> {
    let info = adapter.get_info();
    let limits = required_limits(&adapter)?;
    let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
        label: Some("talus"),
        required_features: adapter.features() & PROFILE_FEATURES,
        required_limits: limits.clone(),
        ..Default::default()
    }))
    .map_err(|e| TalusError::Device(format!("request_device on {}: {e}", info.name)))?;
    let memory = device_memory(&adapter);
    let shader_checks = super::shader_checks_wanted()?;
    let force_early_loads = super::early_loads_wanted()?;
    let specialise = super::specialise_wanted()?;
    let reload_own = super::reload_own_wanted(info.device_type == wgpu::DeviceType::Cpu)?;
    let slot_places = super::slot_places_wanted()?;
    Ok(GpuContext { instance, adapter, device, queue, info, limits, memory, shader_checks, force_early_loads, reload_own, specialise, slot_places })
}

impl GpuContext {
    /// "name (backend, type)".
    pub fn describe(&self) -> String {
        format!("{} ({:?}, {:?})", self.info.name, self.info.backend, self.info.device_type)
    }

    /// Create a buffer inside error scopes; report OOM/validation with its name and size.
    pub fn create_buffer(&self, label: &str, size: u64, usage: wgpu::BufferUsages) -> Result<wgpu::Buffer> {
        let size = size.max(16).div_ceil(16) * 16;
        if size > self.limits.max_buffer_size {
            return Err(TalusError::Device(format!(
                "buffer `{label}` needs {size} bytes, over max_buffer_size {}",
                self.limits.max_buffer_size
            )));
        }
        if usage.contains(wgpu::BufferUsages::STORAGE) && size > self.limits.max_storage_buffer_binding_size {
            return Err(TalusError::Device(format!(
                "buffer `{label}` needs {size} bytes, over max_storage_buffer_binding_size {}",
                self.limits.max_storage_buffer_binding_size
            )));
        }
        let oom = self.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        let val = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let buf = self.device.create_buffer(&wgpu::BufferDescriptor { label: Some(label), size, usage, mapped_at_creation: false });
        let e_val = pollster::block_on(val.pop());
        let e_oom = pollster::block_on(oom.pop());
        if let Some(e) = e_oom.or(e_val) {
            return Err(TalusError::Device(format!("creating buffer `{label}` ({size} bytes): {e}")));
        }
        Ok(buf)
    }
}
