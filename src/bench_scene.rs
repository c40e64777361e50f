//! `talus bench --scene FILE --from SECONDS`: throughput of a real scene, insertions and outlets
//! included. The CPU reference runs the scene to `from` (rounded up to an output boundary), the
//! chosen backend takes over its state (`Backend::import_state`, so a slow device never has to
//! fill a hopper first), and `steps` steps after `warmup` are timed in output batches with
//! their exchanges, as `talus run` would run them. Particle-steps count the particles held in
//! each batch. A GPU run from t = 0 builds no CPU reference at all (at 10M particles it would
//! cost the host minutes and gigabytes for nothing); with `profile` the GPU then runs `steps`
//! more steps pass by pass, as `talus bench --profile` does.

use std::path::Path;
use std::time::Instant;

use crate::backend::Backend;
use crate::bench::{cpu_traffic_model, gpu_for, peak_host_memory, profile_gpu, BenchResult, ExchangeStats, Traffic};

use crate::cpu::CpuBackend;
use crate::error::{Result, TalusError};
use crate::flow::FlowDriver;
use crate::gpu::GpuBackend;
use crate::run::BackendChoice;
use crate::setup::Setup;

/// Run `steps` more steps of `backend` in output batches (exchanging particles at every output
/// boundary); returns Σ particles held × steps.
pub fn advance(setup: &Setup, backend: &mut dyn Backend, flow: &mut Option<FlowDriver>, steps: u64) -> Result<f64> {
    advance_counting(setup, backend, flow, steps, &mut ExchangeStats::default())
}

/// `advance`, adding its exchanges and their wall-clock time to `exchanges`.
fn advance_counting(setup: &Setup, backend: &mut dyn Backend, flow: &mut Option<FlowDriver>, steps: u64, exchanges: &mut ExchangeStats) -> Result<f64> {
    let every = setup.output_every.max(1);
    let end = backend.steps_done() + steps;
    let mut held = match flow {
        Some(f) => f.totals().held_count,
        None => setup.particles.len() as u64,
    };
    let mut particle_steps = 0.0;
    while backend.steps_done() < end {
        let batch = (every - backend.steps_done() % every).min(end - backend.steps_done());
        backend.step(batch)?;
        particle_steps += (held * batch) as f64;
        if let Some(f) = flow {
            if backend.steps_done().is_multiple_of(every) {
                let t0 = Instant::now();
                f.exchange(setup, backend)?;
                exchanges.seconds += t0.elapsed().as_secs_f64();
                exchanges.count += 1;
                held = f.totals().held_count;
            }
        }
    }
    Ok(particle_steps)
}

/// The backend that steps: the GPU when there is one, else the CPU (which then exists).
fn stepping<'a>(gpu: &'a mut Option<GpuBackend>, cpu: &'a mut Option<CpuBackend>) -> &'a mut dyn Backend {
    match (gpu.as_mut(), cpu.as_mut()) {
        (Some(g), _) => g,
        (None, Some(c)) => c,
        (None, None) => unreachable!("bench_scene builds the CPU backend whenever there is no GPU"),
    }
}

/// Benchmark the scene at `path` on `choice` (see the module doc). `Auto` falls back to the CPU
/// with a notice on stderr when no hardware GPU adapter is found (`run::resolve_auto`).
pub fn bench_scene(choice: BackendChoice, path: &Path, from: f64, steps: u64, warmup: u64, profile: bool) -> Result<BenchResult> {
    let setup = crate::scene::load(path)?;
    if !(from >= 0.0 && from.is_finite()) {
        return Err(TalusError::Other(format!("--from must be a time ≥ 0 s, got {from}")));
    }
    let every = setup.output_every.max(1);
    let from_step = ((from / setup.dt).ceil() as u64).div_ceil(every) * every;
    // the CPU reference runs the scene to `from`: beyond its end that is a typo's hours
    if from_step > setup.steps.div_ceil(every) * every {
        return Err(TalusError::Other(format!(
            "--from {from} s is after the end of {} (step {}, t = {:.6} s): the CPU reference would run the scene past it to get there",
            path.display(),
            setup.steps,
            setup.steps as f64 * setup.dt
        )));
    }
    let mut gpu = gpu_for(choice, &setup)?;
    let mut cpu = if gpu.is_none() || from_step > 0 { Some(CpuBackend::new(&setup)?) } else { None };
    let mut flow = FlowDriver::new(&setup)?;
    if let Some(c) = cpu.as_mut() {
        advance(&setup, c, &mut flow, from_step)?;
        if let Some(g) = gpu.as_mut().filter(|_| from_step > 0) {
            g.import_state(&c.export_state()?)?;
            g.set_carried(c.energies()?);
        }
    }
    advance(&setup, stepping(&mut gpu, &mut cpu), &mut flow, warmup)?;
    stepping(&mut gpu, &mut cpu).energies()?;
    let builds_before = cpu.as_ref().map_or(0, CpuBackend::list_builds);
    let gpu_before = gpu.as_ref().map(GpuBackend::device_exchanges);
    let mut exchanges = ExchangeStats::default();
    let backend = stepping(&mut gpu, &mut cpu);
    let t0 = Instant::now();
    let particle_steps = advance_counting(&setup, backend, &mut flow, steps, &mut exchanges)?;
    backend.energies()?;
    let seconds = t0.elapsed().as_secs_f64();
    let contacts = backend.contact_count()? as f64;
    let (kind, adapter) = (backend.kind().to_string(), backend.adapter());
    let held = match &flow {
        Some(f) => f.totals().held_count as usize,
        None => setup.particles.len(),
    };
    let mean_held = if steps > 0 { particle_steps / steps as f64 } else { held as f64 };
    // the GPU's model from the list and the builds of the steps run since the state was taken
    let (traffic, gpu_stats) = match &gpu {
        Some(g) => {
            let m = g.traffic_model()?;
            let stats = (g.device_bytes() as f64 / held.max(1) as f64, m.slots_per_particle, m.steps_per_rebuild);
            (Traffic { bytes_per_particle_step: m.bytes_per_particle_step, bytes_per_contact_step: m.bytes_per_contact_step }, Some(stats))
        }
        None => (cpu_traffic_model(), None),
    };
    // the CPU's list: its slots now and the builds of the timed steps (∞ steps per build when
    // there was none)
    let cpu_list = cpu.as_ref().filter(|_| gpu.is_none()).map(|c| (c.list_slots() as f64 / held.max(1) as f64, steps as f64 / (c.list_builds() - builds_before) as f64));
    let bytes = traffic.bytes_per_particle_step * particle_steps + traffic.bytes_per_contact_step * contacts * steps as f64;
    let t_from = from_step as f64 * setup.dt;
    let mut result = BenchResult {
        scene: format!("{} from t = {t_from:.4} s (step {from_step})", path.display()),
        backend: kind,
        adapter,
        particles: mean_held.round() as usize,
        steps,
        warmup,
        seconds,
        particle_steps_per_second: if seconds > 0.0 { particle_steps / seconds } else { 0.0 },
        contacts_per_particle: if held > 0 { contacts / held as f64 } else { 0.0 },
        bytes_per_particle_step: traffic.bytes_per_particle_step,
        bytes_per_contact_step: traffic.bytes_per_contact_step,
        effective_bandwidth_gb_s: if seconds > 0.0 { bytes / seconds / 1e9 } else { 0.0 },
        peak_host_memory_bytes: peak_host_memory(),
        device_bytes_per_particle: gpu_stats.map(|s| s.0),
        list_slots_per_particle: gpu_stats.map(|s| s.1).or(cpu_list.map(|c| c.0)),
        steps_per_list_build: gpu_stats.map(|s| s.2).or(cpu_list.map(|c| c.1)),
        pass_ms_per_step: Vec::new(),
        pass_timing: None,
        pass_bytes_per_step: Vec::new(),
        pass_gb_per_s: Vec::new(),
        peak_bandwidth_gb_s: None,
        device_memory_bytes: None,
        particles_that_fit: None,
        gpu_layout: None,
        record_access: None,
        exchanges: flow.is_some().then(|| ExchangeStats {
            gpu: gpu.as_ref().zip(gpu_before).map(|(g, before)| g.device_exchanges().since(&before)),
            ..exchanges
        }),
    };
    if let Some(g) = gpu.as_ref() {
        crate::bench::fit_gpu(g, &mut result);
    }
    if let (true, Some(g)) = (profile, gpu.as_mut()) {
        profile_gpu(g, steps, &mut result)?;
    }
    Ok(result)
}
