//! Results do not depend on the neighbour list: a run that rebuilds its list every step
//! (skin 0) and a run with the default skin give bit-identical trajectories, energies and wall
//! loads, although the particles are renumbered in cell order at different steps. Covered:
//! a polydisperse box settling onto its floor (many contacts forming and ending), the periodic
//! chute (history across the boundary), the rotating drum (moving mesh) and the mixed-model
//! box. The tests also check that the default skin really skipped rebuilds, so the
//! comparison is not vacuous. The GPU backend is held to the same: skin 0 against the default
//! skin, a list that overflows and grows against a generous one, and reruns, bit for bit.

use talus::backend::Backend;
use talus::contact::params::ContactModel;
use talus::cpu::CpuBackend;
use talus::gpu::{GpuBackend, GpuOptions};
use talus::Setup;

mod common;
use common::{fingerprint, lowered_settling_box, shipped_scene};

/// Run `setup` with skin 0 and with its default skin, comparing every `every` steps.
fn assert_skin_independent(name: &str, mut setup: Setup, batches: usize, every: u64) {
    setup.skin = Some(0.0);
    let mut every_step = CpuBackend::new(&setup).unwrap();
    setup.skin = None;
    let mut skinned = CpuBackend::new(&setup).unwrap();
    let mut contacts = 0;
    for batch in 0..batches {
        every_step.step(every).unwrap();
        skinned.step(every).unwrap();
        let (a, b) = (fingerprint(&mut every_step), fingerprint(&mut skinned));
        assert!(a == b, "{name}: skin 0 and default skin differ after {} steps", (batch + 1) as u64 * every);
        contacts = contacts.max(*a.last().unwrap());
    }
    let steps = batches as u64 * every;
    assert!(every_step.list_builds() > steps, "{name}: skin 0 must rebuild every step, built {} times in {steps} steps", every_step.list_builds());
    assert!(skinned.list_builds() < steps / 2, "{name}: the default skin rebuilt {} times in {steps} steps", skinned.list_builds());
    assert!(contacts > 0, "{name}: no contacts formed, the comparison proves nothing");
}

#[test]
fn settling_box_is_bit_identical_with_and_without_skin() {
    // start in contact with the floor
    let setup = lowered_settling_box(2000);
    assert_skin_independent("settling box", setup, 6, 50);
}

#[test]
fn packed_bed_is_bit_identical_with_and_without_skin() {
    assert_skin_independent("bed", talus::bench::bed_setup(1500, ContactModel::Hertz), 4, 50);
}

/// `setup` starting from the state its CPU run reaches after `steps` steps (grains in contact).
fn presettled(mut setup: Setup, steps: u64) -> Setup {
    let mut pre = CpuBackend::new(&setup).unwrap();
    pre.step(steps).unwrap();
    setup.particles = pre.export_state().unwrap().particles;
    setup
}

#[test]
fn shipped_scenes_are_bit_identical_with_and_without_skin() {
    assert_skin_independent("periodic_chute", presettled(shipped_scene("periodic_chute.json"), 3000), 4, 50);
    assert_skin_independent("mixed_models_box", presettled(shipped_scene("mixed_models_box.json"), 3000), 4, 50);
    assert_skin_independent("rotating_drum", presettled(shipped_scene("rotating_drum.json"), 3000), 4, 50);
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let mut setup = talus::bench::bed_setup(1500, ContactModel::HertzMindlin);
    setup.skin = Some(1e-5);
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let mut b = CpuBackend::new(&setup).unwrap();
            b.step(150).unwrap();
            fingerprint(&mut b)
        })
    };
    let one = run(1);
    assert!(*one.last().unwrap() > 0, "the bed must have contacts");
    assert!(one == run(2), "1 and 2 threads differ");
    assert!(one == run(3), "1 and 3 threads differ");
}

fn gpu(setup: &Setup, opts: GpuOptions) -> GpuBackend {
    GpuBackend::new(setup, opts).unwrap_or_else(|e| panic!("GPU backend unavailable ({e}); GPU tests need a Vulkan driver (apt-get install mesa-vulkan-drivers)"))
}

/// The GPU twin of `assert_skin_independent`, plus a run whose list starts with 16 slots (it
/// overflows, grows and redoes batches) and must still match bit for bit.
fn assert_gpu_skin_independent(name: &str, mut setup: Setup, batches: usize, every: u64) {
    setup.skin = Some(0.0);
    let mut every_step = gpu(&setup, GpuOptions::default());
    setup.skin = None;
    let mut skinned = gpu(&setup, GpuOptions::default());
    let mut tiny = gpu(&setup, GpuOptions { list_capacity: Some(16), steps_per_submit: 16, ..GpuOptions::default() });
    let mut contacts = 0;
    for batch in 0..batches {
        for b in [&mut every_step, &mut skinned, &mut tiny] {
            b.step(every).unwrap();
        }
        let (a, b, c) = (fingerprint(&mut every_step), fingerprint(&mut skinned), fingerprint(&mut tiny));
        let steps = (batch + 1) as u64 * every;
        assert!(a == b, "{name} (GPU): skin 0 and default skin differ after {steps} steps");
        assert!(b == c, "{name} (GPU): a list grown from 16 slots differs after {steps} steps");
        contacts = contacts.max(*a.last().unwrap());
    }
    let steps = batches as u64 * every;
    let (all, some) = (every_step.list_builds().unwrap() as u64, skinned.list_builds().unwrap() as u64);
    assert!(all >= steps, "{name} (GPU): skin 0 must rebuild every step, built {all} times in {steps} steps");
    assert!(some < steps / 2, "{name} (GPU): the default skin rebuilt {some} times in {steps} steps");
    assert!(tiny.list_capacity() > 16, "{name} (GPU): the 16-slot list never grew");
    assert!(contacts > 0, "{name} (GPU): no contacts formed, the comparison proves nothing");
    let mut again = gpu(&setup, GpuOptions::default());
    again.step(steps).unwrap();
    assert!(fingerprint(&mut again) == fingerprint(&mut skinned), "{name} (GPU): two runs differ");
}

#[test]
fn gpu_settling_box_is_bit_identical_with_and_without_skin() {
    // start in contact with the floor
    let setup = lowered_settling_box(1000);
    assert_gpu_skin_independent("settling box", setup, 4, 50);
}

/// Only every `rebuild_stride`-th step carries the GPU's rebuild passes (8 at first). A skin
/// thinner than one step's travel makes the list go stale in the steps between: such a step
/// halts its batch (`REBUILD_LATE`) and is resumed from a rebuild, and each late rebuild halves
/// the stride, down to 1 after three. The run must still match skin 0 bit for bit; the default
/// skin needs no late rebuild here and keeps the stride at 8.
#[test]
fn gpu_late_rebuilds_change_nothing() {
    // start in contact with the floor
    let mut setup = lowered_settling_box(1000);
    // the fill starts at rest and falls: after 30 steps a step is ~1e-9 m, far more than this
    let thin = 1e-12;
    setup.skin = Some(0.0);
    let mut every_step = gpu(&setup, GpuOptions::default());
    setup.skin = Some(thin);
    let mut late = gpu(&setup, GpuOptions { steps_per_submit: 16, ..GpuOptions::default() });
    setup.skin = None;
    let mut skinned = gpu(&setup, GpuOptions::default());
    for batch in 1..=3u64 {
        for b in [&mut every_step, &mut late, &mut skinned] {
            b.step(40).unwrap();
        }
        let a = fingerprint(&mut every_step);
        assert!(a == fingerprint(&mut late), "a skin of {thin} m (late rebuilds) and skin 0 differ after {} steps", 40 * batch);
        assert!(a == fingerprint(&mut skinned), "the default skin and skin 0 differ after {} steps", 40 * batch);
    }
    assert!(late.late_rebuilds() >= 3, "a skin of {thin} m halted only {} batches for a late rebuild in 120 steps", late.late_rebuilds());
    assert_eq!(late.rebuild_stride(), 1, "three late rebuilds halve the stride to 1");
    assert!(late.list_builds().unwrap() as u64 >= 100, "a skin of {thin} m rebuilt only {} times in 120 steps", late.list_builds().unwrap());
    assert_eq!(skinned.late_rebuilds(), 0, "the default skin rebuilt late");
    assert_eq!(skinned.rebuild_stride(), 8, "a list that lives long keeps the stride");
}

/// A list that lives hundreds of steps (the packed bed builds about every 1,100) lets the
/// stride grow from its start of 8 to `REBUILD_STRIDE` = 32 (the rebuild passes' ~20 empty
/// indirect dispatches in one step of 32), and the run still matches skin 0 bit for bit.
#[test]
fn gpu_long_lived_lists_reach_the_longest_stride() {
    let mut setup = talus::bench::bed_setup(1000, ContactModel::Hertz);
    setup.skin = Some(0.0);
    let mut every_step = gpu(&setup, GpuOptions::default());
    setup.skin = None;
    let mut skinned = gpu(&setup, GpuOptions::default());
    assert_eq!(skinned.rebuild_stride(), talus::layout::consts::REBUILD_STRIDE_START);
    for batch in 1..=2u64 {
        every_step.step(256).unwrap();
        skinned.step(256).unwrap();
        assert!(fingerprint(&mut every_step) == fingerprint(&mut skinned), "the default skin and skin 0 differ after {} steps", 256 * batch);
    }
    assert_eq!(skinned.rebuild_stride(), talus::layout::consts::REBUILD_STRIDE, "a list built {} times in 512 steps", skinned.list_builds().unwrap());
    assert_eq!(skinned.late_rebuilds(), 0, "the default skin rebuilt late");
    assert!(every_step.contact_count().unwrap() > 0, "the bed has no contacts: the comparison proves nothing");
}

#[test]
fn gpu_shipped_scenes_are_bit_identical_with_and_without_skin() {
    assert_gpu_skin_independent("bed", talus::bench::bed_setup(1000, ContactModel::Hertz), 3, 50);
    assert_gpu_skin_independent("periodic_chute", presettled(shipped_scene("periodic_chute.json"), 3000), 3, 50);
    assert_gpu_skin_independent("rotating_drum", presettled(shipped_scene("rotating_drum.json"), 3000), 3, 50);
}

/// `talus bench --scene` on the CPU reports its list: with skin 0 a build every timed step; with
/// the default skin and a few steps none (∞ steps per build, said in words).
#[test]
fn cpu_bench_reports_its_neighbour_list() {
    use talus::bench_scene::bench_scene;
    use talus::run::BackendChoice;
    let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/settle_box.json");
    let mut scene: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&source).unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settle_box_skin0.json");
    scene["skin"] = 0.0.into();
    std::fs::write(&path, serde_json::to_string(&scene).unwrap()).unwrap();
    let every_step = bench_scene(BackendChoice::Cpu, &path, 0.0, 10, 0, false).unwrap();
    assert_eq!(every_step.steps_per_list_build, Some(1.0), "skin 0 builds the list at every step");
    let slots = every_step.list_slots_per_particle.expect("the CPU reports its list's slots");
    assert!(slots > 0.0, "a falling box of 10,000 grains lists some pairs, got {slots} slots/particle");
    let skinned = bench_scene(BackendChoice::Cpu, &source, 0.0, 5, 0, false).unwrap();
    assert_eq!(skinned.steps_per_list_build, Some(f64::INFINITY), "5 steps of a 0.5 m/s fall stay within the default skin");
    assert!(skinned.to_string().contains("not rebuilt in the timed steps"), "{skinned}");
}
