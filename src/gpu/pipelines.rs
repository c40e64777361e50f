//! Every compiled compute pipeline (auto bind-group layouts, group 0).

use super::context::GpuContext;
use super::shader::{pass_module_for, pass_splits};
use super::split::SplitLayout;
use crate::contact::params::PairParamsGpu;
use crate::error::{Result, TalusError};

/// What a scene's pair table lets the contact code leave out: the force pass and `wall_loads`
/// are compiled with the one contact model and the one adhesion model all pairs have (where the
/// contact models differ, with the laws of those the pairs have only) and, where no pair books
/// its energy, without the booking (overrides `CONTACT_MODEL`, `CONTACT_MODELS`,
/// `FIRST_CONTACT_MODEL`, `ADHESION_MODEL` and `ENERGY_TRACKING`, read by `pair_params` in
/// `shaders/wall_contact.wgsl`). The code a
/// scene's contacts run is the same either way, and so are its bits; the compiler keeps fewer
/// instructions and, untracked, fewer registers (docs/performance.md, "Registers").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContactVariant {
    /// The model of every pair (`MODEL_*`), `None` where they differ.
    pub model: Option<u32>,
    /// A bit (1 << `MODEL_*`) per model some pair has; every bit where not known (`ANY`).
    pub models: u32,
    /// Whether some pair books its energy (`PAIR_FLAG_NO_ENERGY_TRACKING` not set).
    pub energy_tracking: bool,
    /// The adhesion model of every pair (`ADHESION_*`), `None` where they differ.
    pub adhesion: Option<u32>,
}

impl ContactVariant {
    /// Every model and the booking compiled in.
    pub const ANY: ContactVariant = ContactVariant { model: None, models: u32::MAX, energy_tracking: true, adhesion: None };

    /// The variant of the pair table `pairs` (every material pair, walls' too).
    pub fn of(pairs: &[PairParamsGpu]) -> Self {
        let Some(first) = pairs.first() else { return Self::ANY };
        // the value every pair has, if they share one
        let shared = |code: fn(&PairParamsGpu) -> u32| pairs.iter().all(|p| code(p) == code(first)).then_some(code(first));
        let energy_tracking = pairs.iter().any(|p| p.flags & crate::layout::consts::PAIR_FLAG_NO_ENERGY_TRACKING == 0);
        // (a model code past the mask's bits, which no pair has, leaves every law in)
        let models = pairs.iter().try_fold(0u32, |m, p| 1u32.checked_shl(p.model).map(|bit| m | bit)).unwrap_or(u32::MAX);
        ContactVariant { model: shared(|p| p.model), models, energy_tracking, adhesion: shared(|p| p.adhesion) }
    }

    /// The pipeline constants that say it.
    pub fn constants(&self) -> [(&'static str, f64); 5] {
        use crate::layout::consts::{ANY_ADHESION_MODEL, ANY_CONTACT_MODEL};
        [
            ("CONTACT_MODEL", self.model.unwrap_or(ANY_CONTACT_MODEL) as f64),
            ("ENERGY_TRACKING", if self.energy_tracking { 1.0 } else { 0.0 }),
            ("ADHESION_MODEL", self.adhesion.unwrap_or(ANY_ADHESION_MODEL) as f64),
            ("CONTACT_MODELS", self.models as f64),
            ("FIRST_CONTACT_MODEL", self.models.trailing_zeros().min(31) as f64),
        ]
    }

    /// The contact models some pair has (`MODEL_*` codes, ascending), `None` where not known.
    pub fn model_codes(&self) -> Option<Vec<u32>> {
        (self.models != u32::MAX).then(|| (0..32).filter(|k| self.models & (1 << k) != 0).collect())
    }
}

#[derive(Clone)]
pub struct Pipelines {
    /// How the split arrays are cut in these pipelines' shaders.
    pub split: SplitLayout,
    /// Whether the mesh-wall code is compiled in (`MESH_WALLS`), the adhesive code
    /// (`ADHESION`), and what the contact code leaves out.
    pub mesh_walls: bool,
    pub adhesion: bool,
    pub contact: ContactVariant,
    pub drift: wgpu::ComputePipeline,
    /// `drift` with the previous step's second half kick first (KICK_FIRST = true).
    pub kick_drift: wgpu::ComputePipeline,
    pub kick: wgpu::ComputePipeline,
    pub advance: wgpu::ComputePipeline,
    pub grid_count: wgpu::ComputePipeline,
    pub scan_blocks: wgpu::ComputePipeline,
    pub scan_add: wgpu::ComputePipeline,
    pub grid_scatter: wgpu::ComputePipeline,
    pub grid_sort: wgpu::ComputePipeline,
    /// Neighbour-list rebuild (`shaders/list_*.wgsl`, `shaders/incoming.wgsl`): dispatch plan,
    /// clears, count, stash and fill of the half list, incoming index fill, sort and map.
    pub list_plan: wgpu::ComputePipeline,
    pub list_clear: wgpu::ComputePipeline,
    pub list_count: wgpu::ComputePipeline,
    pub list_fill: wgpu::ComputePipeline,
    /// Capacity check and stash of the current list before `list_fill` overwrites it.
    pub list_stash: wgpu::ComputePipeline,
    pub incoming_fill: wgpu::ComputePipeline,
    pub incoming_sort: wgpu::ComputePipeline,
    pub incoming_map: wgpu::ComputePipeline,
    /// The partners' shares added to each particle's owned-contact sums.
    pub gather: wgpu::ComputePipeline,
    /// Force pass writing history and dissipation.
    pub forces: wgpu::ComputePipeline,
    /// Initial force evaluation (WRITE_HISTORY = false).
    pub forces_init: wgpu::ComputePipeline,
    pub rehash: wgpu::ComputePipeline,
    /// The renumbering in cell order (`order.wgsl`, `order_hash.wgsl`; the stage a uniform).
    pub order: wgpu::ComputePipeline,
    pub order_hash: wgpu::ComputePipeline,
    pub schedule: wgpu::ComputePipeline,
    /// Imported ball-pair history into the list slots (state import).
    pub slot_import: wgpu::ComputePipeline,
    pub reduce_energy: wgpu::ComputePipeline,
    pub wall_loads: wgpu::ComputePipeline,
    /// Before `wall_loads`: the balls whose cell of a mesh's triangle grid lists triangles.
    pub mesh_marks: wgpu::ComputePipeline,
    /// Triangle binning of the mesh walls (start only; `shaders/mesh/bin.wgsl`).
    pub mesh_count: wgpu::ComputePipeline,
    pub mesh_scatter: wgpu::ComputePipeline,
    pub mesh_sort: wgpu::ComputePipeline,
}

/// The named pass compiled for a scene with adhesion or a dry one (`shader::compose_for`).
pub(super) fn module(ctx: &GpuContext, name: &str, split: &SplitLayout, adhesion: bool) -> Result<wgpu::ShaderModule> {
    // the pass's storage bindings: at most 16 in one part (`context::STORAGE_BUFFERS_NEEDED`), one more per extra part
    let extra = split.extra_bindings(pass_splits(name));
    // storage buffers, and all buffers of a stage with the pass's one uniform
    let granted = ctx.limits.max_storage_buffers_per_shader_stage.min(ctx.limits.max_buffers_and_acceleration_structures_per_shader_stage.saturating_sub(1));
    if extra > 0 && crate::gpu::context::STORAGE_BUFFERS_NEEDED + extra > granted {
        return Err(TalusError::Device(format!(
            "pass `{name}` needs {} storage buffers with its arrays split into bindings of at most {} bytes; the adapter grants {granted} (max_storage_buffers_per_shader_stage)",
            crate::gpu::context::STORAGE_BUFFERS_NEEDED + extra,
            split.cap_bytes
        )));
    }
    let src = pass_module_for(name, split, adhesion);
    let scope = ctx.device.push_error_scope(wgpu::ErrorFilter::Validation);
    let desc = wgpu::ShaderModuleDescriptor { label: Some(name), source: wgpu::ShaderSource::Wgsl(src.into()) };
    let m = if ctx.shader_checks {
        ctx.device.create_shader_module(desc)
    } else {
        // SAFETY: Talus's shaders index their arrays within the sizes the host gives them
        // (every capacity is checked on the device before a write, `gpu::capacity`), every
        // loop is bounded by counts the passes write, no integer division has a zero divisor,
        // and every workgroup array is written before it is read; the device's robust buffer
        // access, where it has it, still bounds the buffer accesses.
        // `tests/cli.rs::shader_variants_write_the_same_bytes` runs scenes both ways and
        // compares their outputs byte for byte.
        unsafe { ctx.device.create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked()) }
    };
    if let Some(e) = pollster::block_on(scope.pop()) {
        return Err(TalusError::Device(format!("shader `{name}`: {e}")));
    }
    Ok(m)
}

pub(super) fn pipeline(ctx: &GpuContext, m: &wgpu::ShaderModule, label: &str, entry: &str, constants: &[(&str, f64)]) -> Result<wgpu::ComputePipeline> {
    let scope = ctx.device.push_error_scope(wgpu::ErrorFilter::Validation);
    let p = ctx.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(label),
        layout: None,
        module: m,
        entry_point: Some(entry),
        // workgroup memory zeroed only with the runtime checks (every pass writes it before reading)
        compilation_options: wgpu::PipelineCompilationOptions { constants, zero_initialize_workgroup_memory: ctx.shader_checks },
        cache: None,
    });
    if let Some(e) = pollster::block_on(scope.pop()) {
        return Err(TalusError::Device(format!("pipeline `{label}`: {e}")));
    }
    Ok(p)
}

impl Pipelines {
    /// Compile every pass; `mesh_walls` = false specialises the mesh-wall code of `forces` and
    /// `wall_loads` away (override `MESH_WALLS`); `adhesion` = true (a scene with adhesion)
    /// switches on the adhesive code of `forces`, `wall_loads` and the work folds of `drift`
    /// and `kick` (override `ADHESION`, `shader::ADHESION_OVERRIDE`); the split arrays are cut
    /// as `split` says; the force pass and `wall_loads` leave out what `contact` says.
    pub fn new(ctx: &GpuContext, mesh_walls: bool, adhesion: bool, contact: ContactVariant, split: &SplitLayout) -> Result<Self> {
        let adhesive = if adhesion { 1.0 } else { 0.0 };
        let simple = |name: &str| -> Result<wgpu::ComputePipeline> { pipeline(ctx, &module(ctx, name, split, adhesion)?, name, "main", &[]) };
        let scan = module(ctx, "scan", split, adhesion)?;
        let (forces, forces_init, wall_loads) = contact_pipelines(ctx, mesh_walls, adhesion, contact, split)?;
        let drift = module(ctx, "drift", split, adhesion)?;
        let mesh_bin = module(ctx, "mesh_bin", split, adhesion)?;
        let list_build = module(ctx, "list_build", split, adhesion)?;
        let incoming = module(ctx, "incoming", split, adhesion)?;
        Ok(Pipelines {
            split: split.clone(),
            mesh_walls,
            adhesion,
            contact,
            drift: pipeline(ctx, &drift, "drift", "main", &[("ADHESION", adhesive)])?,
            kick_drift: pipeline(ctx, &drift, "kick_drift", "main", &[("KICK_FIRST", 1.0), ("ADHESION", adhesive)])?,
            kick: pipeline(ctx, &module(ctx, "kick", split, adhesion)?, "kick", "main", &[("ADHESION", adhesive)])?,
            advance: simple("advance")?,
            grid_count: simple("grid_count")?,
            scan_blocks: pipeline(ctx, &scan, "scan_blocks", "scan_blocks", &[])?,
            scan_add: pipeline(ctx, &scan, "scan_add", "scan_add", &[])?,
            grid_scatter: simple("grid_scatter")?,
            grid_sort: simple("grid_sort")?,
            list_plan: simple("list_plan")?,
            list_clear: simple("list_clear")?,
            list_count: pipeline(ctx, &list_build, "list_count", "main", &[])?,
            list_fill: pipeline(ctx, &list_build, "list_fill", "main", &[("FILL", 1.0)])?,
            list_stash: simple("list_stash")?,
            incoming_fill: pipeline(ctx, &incoming, "incoming_fill", "main", &[])?,
            incoming_sort: pipeline(ctx, &incoming, "incoming_sort", "main", &[("MODE", 1.0)])?,
            incoming_map: pipeline(ctx, &incoming, "incoming_map", "main", &[("MODE", 2.0)])?,
            gather: simple("gather")?,
            forces,
            forces_init,
            rehash: simple("rehash")?,
            order: simple("order")?,
            order_hash: simple("order_hash")?,
            schedule: simple("schedule")?,
            slot_import: simple("slot_import")?,
            reduce_energy: simple("reduce_energy")?,
            wall_loads,
            mesh_marks: simple("mesh_marks")?,
            mesh_count: pipeline(ctx, &mesh_bin, "mesh_count", "mesh_count", &[])?,
            mesh_scatter: pipeline(ctx, &mesh_bin, "mesh_scatter", "mesh_scatter", &[])?,
            mesh_sort: pipeline(ctx, &mesh_bin, "mesh_sort", "mesh_sort", &[])?,
        })
    }

    /// These pipelines with the contact code compiled for `contact` (the force passes and
    /// `wall_loads` compiled anew, every other pipeline shared).
    pub fn with_contact(&self, ctx: &GpuContext, contact: ContactVariant) -> Result<Self> {
        let (forces, forces_init, wall_loads) = contact_pipelines(ctx, self.mesh_walls, self.adhesion, contact, &self.split)?;
        Ok(Pipelines { contact, forces, forces_init, wall_loads, ..self.clone() })
    }
}

/// The pipelines that evaluate contacts (`forces`, `forces_init`, `wall_loads`), with the
/// overrides of `mesh_walls`, `adhesion` and `contact`.
fn contact_pipelines(ctx: &GpuContext, mesh_walls: bool, adhesion: bool, contact: ContactVariant, split: &SplitLayout) -> Result<(wgpu::ComputePipeline, wgpu::ComputePipeline, wgpu::ComputePipeline)> {
    let meshes = if mesh_walls { 1.0 } else { 0.0 };
    let adhesive = if adhesion { 1.0 } else { 0.0 };
    let early = if ctx.force_early_loads { 1.0 } else { 0.0 };
    let reload = if ctx.reload_own { 1.0 } else { 0.0 };
    let [model, tracking, adhering, models, first] = contact.constants();
    let forces = module(ctx, "forces", split, adhesion)?;
    Ok((
        pipeline(ctx, &forces, "forces", "main", &[("MESH_WALLS", meshes), ("ADHESION", adhesive), ("EARLY_LOADS", early), ("RELOAD_OWN", reload), model, tracking, adhering, models, first])?,
        pipeline(ctx, &forces, "forces_init", "main", &[("WRITE_HISTORY", 0.0), ("MESH_WALLS", meshes), ("ADHESION", adhesive), ("EARLY_LOADS", early), ("RELOAD_OWN", reload), model, tracking, adhering, models, first])?,
        pipeline(ctx, &module(ctx, "wall_loads", split, adhesion)?, "wall_loads", "main", &[("MESH_WALLS", meshes), ("ADHESION", adhesive), model, tracking, adhering, models, first])?,
    ))
}

#[cfg(test)]
mod tests {
    use super::ContactVariant;
    use crate::contact::params::PairParamsGpu;
    use crate::layout::consts::{ADHESION_CAPILLARY, ADHESION_JKR, ADHESION_NONE, MODEL_HERTZ, MODEL_HERTZ_MINDLIN, PAIR_FLAG_NO_ENERGY_TRACKING};

    fn pair(model: u32, flags: u32) -> PairParamsGpu {
        PairParamsGpu { model, flags, ..Default::default() }
    }

    /// One model (and one adhesion model) in every pair is compiled alone, two are not; the
    /// booking goes only where no pair books.
    #[test]
    fn the_variant_of_a_pair_table() {
        let hm = pair(MODEL_HERTZ_MINDLIN, 0);
        let dry = Some(ADHESION_NONE);
        let only_hm = 1 << MODEL_HERTZ_MINDLIN;
        assert_eq!(ContactVariant::of(&[hm, hm, hm, hm]), ContactVariant { model: Some(MODEL_HERTZ_MINDLIN), models: only_hm, energy_tracking: true, adhesion: dry });
        // two models: both laws, and only theirs
        let two = ContactVariant::of(&[hm, pair(MODEL_HERTZ, 0)]);
        assert_eq!(two, ContactVariant { model: None, models: only_hm | 1 << MODEL_HERTZ, energy_tracking: true, adhesion: dry });
        assert_eq!(two.model_codes(), Some(vec![MODEL_HERTZ, MODEL_HERTZ_MINDLIN]));
        assert_eq!(two.constants()[3..], [("CONTACT_MODELS", 9.0), ("FIRST_CONTACT_MODEL", MODEL_HERTZ as f64)]);
        let quiet = pair(MODEL_HERTZ_MINDLIN, PAIR_FLAG_NO_ENERGY_TRACKING);
        assert_eq!(ContactVariant::of(&[quiet, quiet]), ContactVariant { model: Some(MODEL_HERTZ_MINDLIN), models: only_hm, energy_tracking: false, adhesion: dry });
        assert_eq!(ContactVariant::of(&[quiet, hm]), ContactVariant { model: Some(MODEL_HERTZ_MINDLIN), models: only_hm, energy_tracking: true, adhesion: dry });
        // one adhesion model in every pair is compiled alone, two are not
        let wet = PairParamsGpu { adhesion: ADHESION_CAPILLARY, ..hm };
        assert_eq!(ContactVariant::of(&[wet, wet]), ContactVariant { model: Some(MODEL_HERTZ_MINDLIN), models: only_hm, energy_tracking: true, adhesion: Some(ADHESION_CAPILLARY) });
        assert_eq!(ContactVariant::of(&[wet, hm]).adhesion, None);
        assert_eq!(ContactVariant::of(&[wet, PairParamsGpu { adhesion: ADHESION_JKR, ..hm }]).adhesion, None);
        assert_eq!(ContactVariant::of(&[]), ContactVariant::ANY);
        assert_eq!(ContactVariant::ANY.constants(), [("CONTACT_MODEL", u32::MAX as f64), ("ENERGY_TRACKING", 1.0), ("ADHESION_MODEL", u32::MAX as f64), ("CONTACT_MODELS", u32::MAX as f64), ("FIRST_CONTACT_MODEL", 0.0)]);
        assert_eq!(ContactVariant::ANY.model_codes(), None);
    }
}
