//! What the driver made of each pass: `talus info --shaders`.
//!
//! The force pass runs at about a sixth of a real GPU's memory bandwidth (docs/performance.md,
//! "The same card"), which points at latency: too few warps resident to hide it, bounded by
//! the registers each thread needs. wgpu reports nothing of the compiled code, so this module
//! compiles the step's passes as the backend does (the same composed WGSL, the same override
//! constants, naga's SPIR-V with the runtime checks of `GpuContext::shader_checks`) and hands
//! them to the driver itself through Vulkan's `VK_KHR_pipeline_executable_properties`, on a
//! second logical device of the adapter wgpu chose, with the same robust buffer access. The
//! driver answers with its own statistics (NVIDIA's register count, RADV's VGPRs and spills);
//! lavapipe compiles the passes but offers no statistics. Nothing here runs a pass, and no
//! device is opened through wgpu, so Mesa RADV's null device (`RADV_FORCE_FAMILY=navi21`,
//! AMD's ACO compiler without an AMD GPU) answers too: registers measured on a machine without
//! a GPU (`tests/cli.rs`, docs/performance.md).

use super::shader::pass_module_for;
use super::split::{RecordLayout, SplitLayout};
use crate::error::{Result, TalusError};
use ash::vk;

/// One pipeline as `Pipelines::new` (or `BodyPipelines::new`) makes it.
pub struct PassSpec {
    pub label: &'static str,
    /// The pass module (`shader::pass_module_for`).
    pub module: &'static str,
    /// The module composed for a scene with adhesion (`shader::compose_for`).
    pub adhesion: bool,
    pub entry: &'static str,
    pub constants: &'static [(&'static str, f64)],
    /// How its set-up's arrays differ from the layout `pass_statistics` is given.
    pub layout: Layout,
    /// The fields its set-up's slot records keep (`split::RecordLayout::of_setup`): a
    /// Hertz-family law with energy booked unless said (`with_records`).
    pub record: RecordLayout,
}

/// The slot records of a Hertz-family law with energy booked (the settle box, the bed), and
/// untracked (`talus bench --untracked`).
const HERTZ_RECORDS: RecordLayout = RecordLayout::HERTZ_BOOKED;
const UNTRACKED_RECORDS: RecordLayout = RecordLayout::HERTZ_UNTRACKED;

impl PassSpec {
    /// This pass with its set-up's slot records laid out as `record` says.
    const fn with_records(self, record: RecordLayout) -> PassSpec {
        PassSpec { record, ..self }
    }
}

/// The particles and list slots `talus info --shaders` cuts the split arrays for: a million at
/// the default list (3.5 slots a particle).
pub const STATS_PARTICLES: u64 = 1_000_000;
pub const STATS_SLOTS: u64 = 3_500_000;

/// A pass's layout against the one `pass_statistics` is given (the settle box's: two motion
/// rows, no periodic images).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// As given.
    Given,
    /// Three motion rows: rolling work booked (the bench bed with `hertz_mindlin`).
    Rolling,
    /// Three motion rows and the list slots placed (`SplitLayout::places`).
    RollingPlaced,
}

impl Layout {
    /// `split` as this pass's set-up cuts it.
    pub fn of(self, split: &SplitLayout) -> SplitLayout {
        let (n, slots) = (STATS_PARTICLES, STATS_SLOTS);
        let rolling = |places: bool| SplitLayout::new(split.cap_bytes, n, slots, super::split::motion_rows(true)).with_images(split.images).with_places(n, slots, places);
        match self {
            Layout::Given => split.clone(),
            Layout::Rolling => rolling(split.places),
            Layout::RollingPlaced => rolling(true),
        }
    }
}

/// A pass of a dry scene.
const fn dry(label: &'static str, module: &'static str, constants: &'static [(&'static str, f64)]) -> PassSpec {
    PassSpec { label, module, adhesion: false, entry: "main", constants, layout: Layout::Given, record: HERTZ_RECORDS }
}

/// A pass of the bench bed (rolling work booked: three motion rows).
const fn bed(label: &'static str, module: &'static str, constants: &'static [(&'static str, f64)], layout: Layout) -> PassSpec {
    PassSpec { label, module, adhesion: false, entry: "main", constants, layout, record: HERTZ_RECORDS }
}

/// The pipelines of a dry sphere step without mesh walls (the bench bed's: every pair
/// `hertz_mindlin`, its energy and rolling work booked, so the force pass and `wall_loads`
/// with three motion rows; the other passes as the settle box cuts them), as `Pipelines::new`
/// compiles them (overrides for `mesh_walls` = false, `adhesion` = false, `ContactVariant` of
/// one model, tracked); then the force pass of the same bed untracked (`talus bench
/// --untracked`) and with its slots placed (`TALUS_GPU_SLOT_PLACES=1`), of a scene whose pairs
/// mix models (every law compiled in, `TALUS_GPU_SPECIALISE=0`) and of one whose pairs are
/// `hooke` and `hertz` (those two laws compiled in), of a scene with mesh walls, of two with adhesion
/// (liquid bridges, JKR) and of one whose pairs mix adhesion models (every one compiled in), and
/// the body passes of a clump step (`BodyPipelines::new`).
pub const STEP_PASSES: &[PassSpec] = &[
    bed("forces", "forces", &[("MESH_WALLS", 0.0), ("ADHESION", 0.0), HERTZ_MINDLIN, TRACKED, DRY], Layout::Rolling),
    dry("kick_drift", "drift", &[("KICK_FIRST", 1.0), ("ADHESION", 0.0)]),
    dry("kick", "kick", &[("ADHESION", 0.0)]),
    dry("advance", "advance", &[]),
    dry("list_plan", "list_plan", &[]),
    dry("grid_count", "grid_count", &[]),
    dry("grid_scatter", "grid_scatter", &[]),
    dry("grid_sort", "grid_sort", &[]),
    dry("list_count", "list_build", &[]),
    dry("list_fill", "list_build", &[("FILL", 1.0)]),
    dry("schedule", "schedule", &[]),
    bed("wall_loads", "wall_loads", &[("MESH_WALLS", 0.0), ("ADHESION", 0.0), HERTZ_MINDLIN, TRACKED, DRY], Layout::Rolling),
    bed("forces+untracked", "forces", &[("MESH_WALLS", 0.0), ("ADHESION", 0.0), HERTZ_MINDLIN, ("ENERGY_TRACKING", 0.0), DRY], Layout::Rolling).with_records(UNTRACKED_RECORDS),
    bed("forces+placed", "forces", &[("MESH_WALLS", 0.0), ("ADHESION", 0.0), HERTZ_MINDLIN, TRACKED, DRY], Layout::RollingPlaced),
    dry("forces+any", "forces", &[("MESH_WALLS", 0.0), ("ADHESION", 0.0), ("CONTACT_MODEL", crate::layout::consts::ANY_CONTACT_MODEL as f64), TRACKED]).with_records(RecordLayout::FULL),
    dry("forces+two", "forces", &[("MESH_WALLS", 0.0), ("ADHESION", 0.0), ("CONTACT_MODEL", crate::layout::consts::ANY_CONTACT_MODEL as f64), HOOKE_AND_HERTZ, ("FIRST_CONTACT_MODEL", crate::layout::consts::MODEL_HERTZ as f64), TRACKED]).with_records(RecordLayout::FULL),
    dry("forces+mesh", "forces", &[("MESH_WALLS", 1.0), ("ADHESION", 0.0), HERTZ_MINDLIN, TRACKED, DRY]),
    PassSpec { label: "forces+adhesion", module: "forces", adhesion: true, entry: "main", constants: &[("MESH_WALLS", 0.0), ("ADHESION", 1.0), HERTZ_MINDLIN, TRACKED, CAPILLARY], layout: Layout::Rolling, record: HERTZ_RECORDS },
    PassSpec { label: "forces+jkr", module: "forces", adhesion: true, entry: "main", constants: &[("MESH_WALLS", 0.0), ("ADHESION", 1.0), HERTZ_MINDLIN, TRACKED, JKR], layout: Layout::Rolling, record: HERTZ_RECORDS },
    PassSpec { label: "forces+anyglue", module: "forces", adhesion: true, entry: "main", constants: &[("MESH_WALLS", 0.0), ("ADHESION", 1.0), HERTZ_MINDLIN, TRACKED], layout: Layout::Rolling, record: HERTZ_RECORDS },
    dry("body_kick", "body_kick", &[("MODE", 1.0)]),
    dry("body_place", "body_place", &[("MODE", 1.0), ("ADHESION", 0.0)]),
];

/// `ContactVariant::constants` of a scene whose pairs are all `hertz_mindlin`, and with energy
/// booked.
const HERTZ_MINDLIN: (&str, f64) = ("CONTACT_MODEL", crate::layout::consts::MODEL_HERTZ_MINDLIN as f64);
const TRACKED: (&str, f64) = ("ENERGY_TRACKING", 1.0);
/// `ContactVariant::constants`' models of a scene whose pairs are `hooke` and `hertz`
/// (`mixed_models_box`).
const HOOKE_AND_HERTZ: (&str, f64) = ("CONTACT_MODELS", ((1 << crate::layout::consts::MODEL_HOOKE) | (1 << crate::layout::consts::MODEL_HERTZ)) as f64);
/// `ContactVariant::constants`' adhesion model of a dry scene, and of wet granules (liquid
/// bridges, `wet_granules`) and of a cohesive powder (JKR, `cohesive_heap`).
const DRY: (&str, f64) = ("ADHESION_MODEL", crate::layout::consts::ADHESION_NONE as f64);
const CAPILLARY: (&str, f64) = ("ADHESION_MODEL", crate::layout::consts::ADHESION_CAPILLARY as f64);
const JKR: (&str, f64) = ("ADHESION_MODEL", crate::layout::consts::ADHESION_JKR as f64);

/// What the passes are compiled for: an adapter and the code choices a context makes of the
/// environment and the adapter (`GpuContext::shader_checks`, `GpuContext::force_early_loads`,
/// `GpuContext::reload_own`). No device is opened through wgpu, so the passes can be compiled on
/// an adapter where wgpu cannot open one: RADV's null device (`RADV_FORCE_FAMILY`), the AMD
/// compiler without an AMD GPU.
pub struct CompileTarget<'a> {
    pub adapter: &'a wgpu::Adapter,
    pub shader_checks: bool,
    pub force_early_loads: bool,
    pub reload_own: bool,
}

impl<'a> CompileTarget<'a> {
    /// The passes as a context opened on `adapter` would compile them (the environment's
    /// `TALUS_GPU_SHADER_CHECKS`, `TALUS_GPU_EARLY_LOADS` and `TALUS_GPU_RELOAD_OWN`).
    pub fn for_adapter(adapter: &'a wgpu::Adapter) -> Result<Self> {
        let cpu_device = adapter.get_info().device_type == wgpu::DeviceType::Cpu;
        Ok(CompileTarget {
            adapter,
            shader_checks: super::shader_checks_wanted()?,
            force_early_loads: super::early_loads_wanted()?,
            reload_own: super::reload_own_wanted(cpu_device)?,
        })
    }

    /// "name (backend, type)", as `GpuContext::describe`.
    pub fn describe(&self) -> String {
        let info = self.adapter.get_info();
        format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type)
    }
}

/// A module composed for the driver: what `spirv` compiles.
pub struct Source {
    pub label: String,
    /// The whole WGSL module (`shader::pass_module_for`).
    pub wgsl: String,
    pub entry: String,
    /// Its override constants.
    pub constants: Vec<(String, f64)>,
}

/// The modules of `passes` as `Pipelines::new` composes them for `t` (the force pass with
/// `t`'s `EARLY_LOADS` and `RELOAD_OWN`), the split arrays cut as `split` says.
pub fn pass_sources(t: &CompileTarget, split: &SplitLayout, passes: &[PassSpec]) -> Vec<Source> {
    passes
        .iter()
        .map(|p| {
            let mut constants: Vec<(String, f64)> = p.constants.iter().map(|&(k, v)| (k.to_string(), v)).collect();
            // the context's choices, as `Pipelines::new` makes them
            if p.module == "forces" {
                constants.push(("EARLY_LOADS".to_string(), if t.force_early_loads { 1.0 } else { 0.0 }));
                constants.push(("RELOAD_OWN".to_string(), if t.reload_own { 1.0 } else { 0.0 }));
            }
            Source { label: p.label.to_string(), wgsl: pass_module_for(p.module, &p.layout.of(split).with_record(STATS_PARTICLES, STATS_SLOTS, p.record), p.adhesion), entry: p.entry.to_string(), constants }
        })
        .collect()
}

/// One statistic as the driver names and reports it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Statistic {
    pub name: String,
    pub value: f64,
}

/// One executable of a pass's pipeline (drivers document one for a compute pipeline).
#[derive(Clone, Debug, serde::Serialize)]
pub struct Executable {
    pub pass: String,
    /// The driver's name for the executable.
    pub name: String,
    pub subgroup_size: u32,
    /// The pass's workgroup size (threads).
    pub workgroup_size: u32,
    /// `None` where the driver compiled the pass but reports nothing of it (no
    /// `VK_KHR_pipeline_executable_properties`: lavapipe).
    pub statistics: Option<Vec<Statistic>>,
}

impl Executable {
    /// The first statistic whose name contains `part` (case-insensitive).
    pub fn statistic(&self, part: &str) -> Option<f64> {
        let part = part.to_lowercase();
        self.statistics.iter().flatten().find(|s| s.name.to_lowercase().contains(&part)).map(|s| s.value)
    }

    /// Registers per thread, where the driver reports them (NVIDIA "Register Count", RADV
    /// "VGPRs"; the first statistic naming registers).
    pub fn registers(&self) -> Option<f64> {
        self.statistic("register count").or_else(|| self.statistic("register")).or_else(|| self.statistic("vgprs"))
    }
}

/// The warps of 32 threads an SM of an NVIDIA GPU since Volta keeps resident when each thread
/// takes `registers` (65,536 registers per SM, allocated per warp in units of 256, whole
/// workgroups of `workgroup_size` threads), at most `max_warps` (64 on an H100, H200 or A100;
/// 48 on desktop Ampere and Ada).
pub fn resident_warps(registers: u32, workgroup_size: u32, max_warps: u32) -> u32 {
    let per_warp = (registers.max(1) * 32).div_ceil(256) * 256;
    let warps = 65_536 / per_warp;
    let group = workgroup_size.div_ceil(32).max(1);
    (warps / group * group).min(max_warps / group * group)
}

/// Every pass in `passes` compiled by the driver of `t`'s adapter, with the split arrays cut
/// as `split` says, and its statistics where the driver reports them. An adapter that is not
/// Vulkan is an error that says so.
pub fn pass_statistics(t: &CompileTarget, split: &SplitLayout, passes: &[PassSpec]) -> Result<Vec<Executable>> {
    statistics_of(t, &pass_sources(t, split, passes))
}

/// Every module of `sources` compiled by the driver of `t`'s adapter, with its statistics
/// where the driver reports them (`pass_statistics` for the shipped passes; a changed module,
/// to see what a change makes of the registers).
pub fn statistics_of(t: &CompileTarget, sources: &[Source]) -> Result<Vec<Executable>> {
    let no = |why: String| TalusError::Device(format!("{}: {why}", t.describe()));
    // SAFETY: the instance and physical device handles are only used while `t.adapter` (and so
    // the hal adapter) is alive; the device made here is destroyed before returning
    unsafe {
        let hal = t.adapter.as_hal::<wgpu::hal::api::Vulkan>().ok_or_else(|| no("driver statistics need a Vulkan adapter".into()))?;
        let instance = hal.shared_instance().raw_instance();
        let phd = hal.raw_physical_device();
        let props = instance.get_physical_device_properties(phd);
        let extensions = instance.enumerate_device_extension_properties(phd).map_err(|e| no(format!("vkEnumerateDeviceExtensionProperties: {e}")))?;
        let has = |name: &std::ffi::CStr| extensions.iter().any(|e| e.extension_name_as_c_str() == Ok(name));
        // without the extension (lavapipe) the passes are still compiled by the driver, and
        // come back without statistics
        let capture = has(ash::khr::pipeline_executable_properties::NAME);
        // the robust buffer access wgpu asks for, so the driver compiles the same accesses
        let robustness2 = has(ash::ext::robustness2::NAME);
        let mut exec_features = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default();
        let mut rob2_features = vk::PhysicalDeviceRobustness2FeaturesEXT::default();
        let mut features2 = vk::PhysicalDeviceFeatures2::default();
        if capture {
            features2 = features2.push_next(&mut exec_features);
        }
        if robustness2 {
            features2 = features2.push_next(&mut rob2_features);
        }
        instance.get_physical_device_features2(phd, &mut features2);
        let base = features2.features;
        let capture = capture && exec_features.pipeline_executable_info == vk::TRUE;
        let robust2 = robustness2 && rob2_features.robust_buffer_access2 == vk::TRUE && base.robust_buffer_access == vk::TRUE;
        let mut names = Vec::new();
        if capture {
            names.push(ash::khr::pipeline_executable_properties::NAME.as_ptr());
        }
        if robust2 {
            names.push(ash::ext::robustness2::NAME.as_ptr());
        }
        let priorities = [1.0f32];
        let queues = [vk::DeviceQueueCreateInfo::default().queue_family_index(0).queue_priorities(&priorities)];
        let features = vk::PhysicalDeviceFeatures::default().robust_buffer_access(base.robust_buffer_access == vk::TRUE);
        let mut exec_on = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default().pipeline_executable_info(true);
        let mut rob2_on = vk::PhysicalDeviceRobustness2FeaturesEXT::default().robust_buffer_access2(true);
        let mut info = vk::DeviceCreateInfo::default().queue_create_infos(&queues).enabled_extension_names(&names).enabled_features(&features);
        if capture {
            info = info.push_next(&mut exec_on);
        }
        if robust2 {
            info = info.push_next(&mut rob2_on);
        }
        let device = instance.create_device(phd, &info, None).map_err(|e| no(format!("vkCreateDevice: {e}")))?;
        let stats = capture.then(|| ash::khr::pipeline_executable_properties::Device::new(instance, &device));
        let lang = if props.api_version >= vk::API_VERSION_1_3 {
            (1, 6)
        } else if props.api_version >= vk::API_VERSION_1_2 {
            (1, 5)
        } else {
            (1, 3)
        };
        let out = sources.iter().try_fold(Vec::new(), |mut out, p| {
            out.extend(compile_and_ask(&device, stats.as_ref(), t, p, lang, robust2)?);
            Ok::<_, TalusError>(out)
        });
        device.destroy_device(None);
        out
    }
}

/// A binding of a pass: group, binding, and whether it is the uniform buffer (else storage).
type Binding = (u32, u32, bool);

/// What `spirv` hands the driver: the words, the bindings, the workgroup size.
type Compiled = (Vec<u32>, Vec<Binding>, u32);

/// naga's SPIR-V of one pass, as wgpu-hal's Vulkan backend writes it (its options for this
/// device, `GpuContext::shader_checks` as wgpu's runtime checks), and the pass's bindings.
fn spirv(t: &CompileTarget, p: &Source, lang: (u8, u8), robust2: bool) -> Result<Compiled> {
    use naga::back::spv;
    use naga::proc::{BoundsCheckPolicies, BoundsCheckPolicy};
    let fail = |what: String| TalusError::Device(format!("pass `{}`: {what}", p.label));
    let src = &p.wgsl;
    let module = naga::front::wgsl::parse_str(src).map_err(|e| fail(e.emit_to_string(src)))?;
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all()).validate(&module).map_err(|e| fail(format!("{e:?}")))?;
    let mut constants = naga::back::PipelineConstants::default();
    for (k, v) in &p.constants {
        constants.insert(k.clone(), *v);
    }
    let mut bindings = Vec::new();
    for (_, var) in module.global_variables.iter() {
        let Some(b) = &var.binding else { continue };
        match var.space {
            naga::AddressSpace::Uniform => bindings.push((b.group, b.binding, true)),
            naga::AddressSpace::Storage { .. } => bindings.push((b.group, b.binding, false)),
            _ => return Err(fail(format!("binding {}.{} is neither a uniform nor a storage buffer", b.group, b.binding))),
        }
    }
    let (module, info) = naga::back::pipeline_constants::process_overrides(&module, &info, Some((naga::ShaderStage::Compute, p.entry.as_str())), &constants).map_err(|e| fail(format!("{e}")))?;
    let checked = t.shader_checks;
    let policy = |on: bool| if on { BoundsCheckPolicy::Restrict } else { BoundsCheckPolicy::Unchecked };
    let options = spv::Options {
        lang_version: lang,
        bounds_check_policies: BoundsCheckPolicies {
            index: policy(checked),
            buffer: policy(checked && !robust2),
            image_load: policy(checked),
            binding_array: BoundsCheckPolicy::Unchecked,
        },
        // (wgpu asks the driver to zero workgroup memory where the device can, Vulkan 1.3; the
        // polyfill's stores and barrier at the start stand in for it here)
        zero_initialize_workgroup_memory: if checked { spv::ZeroInitializeWorkgroupMemoryMode::Polyfill } else { spv::ZeroInitializeWorkgroupMemoryMode::None },
        force_loop_bounding: checked,
        emit_int_div_checks: checked,
        ..spv::Options::default()
    };
    let words = spv::write_vec(&module, &info, &options, Some(&spv::PipelineOptions { shader_stage: naga::ShaderStage::Compute, entry_point: p.entry.to_string() })).map_err(|e| fail(format!("SPIR-V: {e}")))?;
    let threads = module.entry_points.iter().find(|e| e.name == p.entry.as_str()).map(|e| e.workgroup_size.iter().product()).unwrap_or(1);
    Ok((words, bindings, threads))
}

/// Compile one pass on `device` with statistics captured, and read them.
unsafe fn compile_and_ask(
    device: &ash::Device,
    stats: Option<&ash::khr::pipeline_executable_properties::Device>,
    t: &CompileTarget,
    p: &Source,
    lang: (u8, u8),
    robust2: bool,
) -> Result<Vec<Executable>> {
    let fail = |what: String| TalusError::Device(format!("pass `{}`: {what}", p.label));
    let (words, bindings, threads) = spirv(t, p, lang, robust2)?;
    // the descriptor sets of the pipeline layout, from the module's bindings
    let mut sets: Vec<Vec<vk::DescriptorSetLayoutBinding>> = Vec::new();
    for (group, binding, uniform) in bindings {
        let kind = if uniform { vk::DescriptorType::UNIFORM_BUFFER } else { vk::DescriptorType::STORAGE_BUFFER };
        let g = group as usize;
        if sets.len() <= g {
            sets.resize(g + 1, Vec::new());
        }
        sets[g].push(vk::DescriptorSetLayoutBinding::default().binding(binding).descriptor_type(kind).descriptor_count(1).stage_flags(vk::ShaderStageFlags::COMPUTE));
    }
    let shader = device.create_shader_module(&vk::ShaderModuleCreateInfo::default().code(&words), None).map_err(|e| fail(format!("vkCreateShaderModule: {e}")))?;
    let mut layouts = Vec::new();
    for set in &sets {
        layouts.push(device.create_descriptor_set_layout(&vk::DescriptorSetLayoutCreateInfo::default().bindings(set), None).map_err(|e| fail(format!("vkCreateDescriptorSetLayout: {e}")))?);
    }
    let layout = device.create_pipeline_layout(&vk::PipelineLayoutCreateInfo::default().set_layouts(&layouts), None).map_err(|e| fail(format!("vkCreatePipelineLayout: {e}")))?;
    let entry = std::ffi::CString::new(p.entry.as_str()).expect("an entry point name without NUL");
    let stage = vk::PipelineShaderStageCreateInfo::default().stage(vk::ShaderStageFlags::COMPUTE).module(shader).name(&entry);
    let flags = if stats.is_some() { vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR } else { vk::PipelineCreateFlags::empty() };
    let create = vk::ComputePipelineCreateInfo::default().stage(stage).layout(layout).flags(flags);
    let made = device.create_compute_pipelines(vk::PipelineCache::null(), &[create], None);
    let result = match made {
        Ok(pipelines) => {
            let pipeline = pipelines[0];
            let read = match stats {
                Some(stats) => read_statistics(stats, pipeline, &p.label, threads),
                None => Ok(vec![Executable { pass: p.label.to_string(), name: String::new(), subgroup_size: 0, workgroup_size: threads, statistics: None }]),
            };
            device.destroy_pipeline(pipeline, None);
            read.map_err(|e| fail(format!("vkGetPipelineExecutable*: {e}")))
        }
        Err((_, e)) => Err(fail(format!("vkCreateComputePipelines: {e}"))),
    };
    device.destroy_pipeline_layout(layout, None);
    for l in layouts {
        device.destroy_descriptor_set_layout(l, None);
    }
    device.destroy_shader_module(shader, None);
    result
}

/// The executables of `pipeline` and their statistics.
unsafe fn read_statistics(stats: &ash::khr::pipeline_executable_properties::Device, pipeline: vk::Pipeline, label: &str, workgroup_size: u32) -> ash::prelude::VkResult<Vec<Executable>> {
    let text = |c: std::result::Result<&std::ffi::CStr, std::ffi::FromBytesUntilNulError>| c.map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let execs = stats.get_pipeline_executable_properties(&vk::PipelineInfoKHR::default().pipeline(pipeline))?;
    let mut out = Vec::new();
    for (k, e) in execs.iter().enumerate() {
        let list = stats.get_pipeline_executable_statistics(&vk::PipelineExecutableInfoKHR::default().pipeline(pipeline).executable_index(k as u32))?;
        let statistics = list
            .iter()
            .map(|s| {
                let value = match s.format {
                    vk::PipelineExecutableStatisticFormatKHR::BOOL32 => s.value.b32 as f64,
                    vk::PipelineExecutableStatisticFormatKHR::INT64 => s.value.i64 as f64,
                    vk::PipelineExecutableStatisticFormatKHR::UINT64 => s.value.u64 as f64,
                    _ => s.value.f64,
                };
                Statistic { name: text(s.name_as_c_str()), value }
            })
            .collect();
        out.push(Executable { pass: label.to_string(), name: text(e.name_as_c_str()), subgroup_size: e.subgroup_size, workgroup_size, statistics: Some(statistics) });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_from_the_drivers_names() {
        let with = |names: &[(&str, f64)]| Executable {
            pass: "forces".into(),
            name: String::new(),
            subgroup_size: 32,
            workgroup_size: 64,
            statistics: Some(names.iter().map(|(n, v)| Statistic { name: n.to_string(), value: *v }).collect()),
        };
        assert_eq!(with(&[("Binary Size", 9000.0), ("Register Count", 96.0)]).registers(), Some(96.0));
        assert_eq!(with(&[("SGPRs", 40.0), ("VGPRs", 64.0), ("Spilled VGPRs", 0.0)]).registers(), Some(64.0));
        assert_eq!(with(&[("Instructions", 800.0)]).registers(), None);
        let compiled_only = Executable { statistics: None, ..with(&[]) };
        assert_eq!(compiled_only.registers(), None);
    }

    #[test]
    fn resident_warps_by_registers() {
        // 32 registers: 2,048 threads = 64 warps; 128: 16 warps; 255 → 256: 8 warps
        assert_eq!(resident_warps(32, 64, 64), 64);
        assert_eq!(resident_warps(128, 64, 64), 16);
        assert_eq!(resident_warps(255, 64, 64), 8);
        // allocated in units of 256 registers a warp: 41 registers take 48
        assert_eq!(resident_warps(41, 64, 64), 42);
        // the desktop parts' 48 warps, and whole workgroups of 256 threads (8 warps)
        assert_eq!(resident_warps(32, 64, 48), 48);
        assert_eq!(resident_warps(72, 256, 64), 24);
    }
}
