//! scenes/hopper_discharge.json while it discharges, on both backends. The CPU reference runs
//! the scene (filling by insertion, settling, gate opening) until the first grains reach the
//! outlet; that state is handed to two GPU backends and a CPU backend
//! (`Backend::import_state`), which each run to the next output boundary with the scene's
//! insertion and outlet. The GPU runs are bit-identical to each other; GPU and CPU agree within the
//! early-step tolerances of docs/verification.md over the first 100 steps and statistically
//! (discharged mass, energies) at the end. GPU tests need an adapter (lavapipe counts).

mod common;

use std::path::Path;
use std::sync::OnceLock;

use glam::DVec3;
use talus::backend::Backend;
use talus::bench_scene::advance;
use talus::cpu::CpuBackend;
use talus::flow::FlowDriver;
use talus::model::state::ParticleState;
use talus::verify::Tolerances;
use talus::{Energies, Setup, TalusError};

/// Simulated time of the hand-over, s: the gate opened at 0.2 s and the first grains reached
/// the outlet 20 mm below the orifice at about 0.264 s.
const HANDOVER: f64 = 0.27;

struct Handover {
    setup: Setup,
    state: ParticleState,
    energies: Energies,
    flow: FlowDriver,
}

fn handover() -> &'static Handover {
    static H: OnceLock<Handover> = OnceLock::new();
    H.get_or_init(|| {
        let mut setup = talus::scene::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/hopper_discharge.json")).expect("hopper scene");
        setup.snapshot_every = 0;
        let every = setup.output_every;
        let steps = ((HANDOVER / setup.dt).ceil() as u64).div_ceil(every) * every;
        let mut cpu = CpuBackend::new(&setup).unwrap();
        let mut flow = FlowDriver::new(&setup).unwrap();
        advance(&setup, &mut cpu, &mut flow, steps).unwrap();
        let state = cpu.export_state().unwrap();
        let energies = cpu.energies().unwrap();
        Handover { setup, state, energies, flow: flow.unwrap() }
    })
}

fn continue_on(b: &mut dyn Backend) {
    let h = handover();
    b.import_state(&h.state).unwrap();
    b.set_carried(h.energies);
}

fn gpu(setup: &Setup) -> talus::gpu::GpuBackend {
    match talus::gpu::GpuBackend::new(setup, talus::gpu::GpuOptions::default()) {
        Ok(g) => g,
        Err(e @ TalusError::NoAdapter(_)) => panic!("this test needs a GPU adapter (run .ci/run to install lavapipe): {e}"),
        Err(e) => panic!("GPU backend failed: {e}"),
    }
}

fn max_dev(a: &[[f64; 3]], b: &[[f64; 3]]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).map(|(x, y)| (DVec3::from(*x) - DVec3::from(*y)).length()).fold(0.0, f64::max)
}

/// The GPU's runs of the hopper are deterministic (two runs, bit for bit) in the exchange tests
/// below (`gpu_hopper_exchanges_*`: device and whole-state paths, unlimited and short of
/// memory); here one GPU run is compared with the CPU.
#[test]
fn discharging_hopper_on_gpu_agrees_with_the_cpu() {
    let h = handover();
    let setup = &h.setup;
    let every = setup.output_every;
    let held = h.state.len();
    assert!(held > 3900 && h.flow.totals().outlet_count[0] > 0, "hand-over while the discharge reaches the outlet: {:?}", h.flow.totals());
    let mut cpu = CpuBackend::new(setup).unwrap();
    let mut g1 = gpu(setup);
    let mut flows = [h.flow.clone(), h.flow.clone()];
    for b in [&mut cpu as &mut dyn Backend, &mut g1] {
        continue_on(b);
        assert_eq!(b.steps_done(), h.state.step);
    }

    // early steps: the same state on both backends, compared as `talus verify` does
    let tol = Tolerances::default();
    let early = tol.early_steps;
    cpu.step(early).unwrap();
    g1.step(early).unwrap();
    let (a, b) = (cpu.snapshot().unwrap(), g1.snapshot().unwrap());
    let r_min = 0.0009;
    let scale = |x: &[[f64; 3]]| x.iter().map(|v| DVec3::from(*v).length()).fold(0.0, f64::max);
    let pos = max_dev(&a.position, &b.position) / r_min;
    let vel = max_dev(&a.velocity, &b.velocity) / scale(&a.velocity);
    println!("after {early} steps from the hand-over ({held} grains): position {pos:.2e} of r_min, velocity {vel:.2e} of the largest speed");
    assert!(pos <= tol.position, "position deviation {pos:e} > {:e}", tol.position);
    assert!(vel <= tol.velocity, "velocity deviation {vel:e} > {:e}", tol.velocity);

    // to the next output boundary, where the outlet takes the grains that fell below it
    let rest = every - early;
    let mut ends = Vec::new();
    for (b, flow) in [&mut cpu as &mut dyn Backend, &mut g1].into_iter().zip(&mut flows) {
        let mut f = Some(flow.clone());
        advance(setup, b, &mut f, rest).unwrap();
        *flow = f.unwrap();
        ends.push((b.snapshot().unwrap(), b.energies().unwrap(), flow.totals().clone()));
    }
    let (c, x) = (&ends[0], &ends[1]);

    let (tc, tg) = (&c.2, &x.2);
    println!("outlet after one output: cpu {} grains {:.4e} kg, gpu {} grains {:.4e} kg", tc.outlet_count[0], tc.outlet_mass[0], tg.outlet_count[0], tg.outlet_mass[0]);
    let taken = tc.outlet_count[0] - h.flow.totals().outlet_count[0];
    assert!(taken >= 5, "the outlet must take grains in the window ({tc:?})");
    let dm = (tc.outlet_mass[0] - tg.outlet_mass[0]).abs() / tc.outlet_mass[0];
    assert!(dm <= 0.2, "discharged mass cpu {} gpu {} ({dm:.2e})", tc.outlet_mass[0], tg.outlet_mass[0]);
    for (name, ec, eg) in [("kinetic", c.1.kinetic(), x.1.kinetic()), ("gravitational", c.1.gravitational, x.1.gravitational), ("dashpot", c.1.dashpot, x.1.dashpot), ("total", c.1.total(), x.1.total())] {
        let rel = (ec - eg).abs() / ec.abs().max(1e-3 * c.1.dashpot);
        println!("{name}: cpu {ec:.6e} gpu {eg:.6e} ({rel:.1e})");
        assert!(rel <= 0.02, "{name}: cpu {ec} gpu {eg}");
    }
}

/// The CPU continued from its own exported state goes on exactly as the uninterrupted run
/// (the hand-over loses nothing).
#[test]
fn hand_over_loses_nothing_on_the_cpu() {
    let h = handover();
    let setup = &h.setup;
    let mut a = CpuBackend::new(setup).unwrap();
    continue_on(&mut a);
    let mut b = CpuBackend::new(setup).unwrap();
    continue_on(&mut b);
    // b takes a second hand-over of its own state after 200 steps; a does not
    a.step(200).unwrap();
    b.step(200).unwrap();
    let s = b.export_state().unwrap();
    let e = b.energies().unwrap();
    b.import_state(&s).unwrap();
    b.set_carried(e);
    a.step(300).unwrap();
    b.step(300).unwrap();
    let (sa, sb) = (a.snapshot().unwrap(), b.snapshot().unwrap());
    assert_eq!(sa.position, sb.position);
    assert_eq!(sa.velocity, sb.velocity);
    assert_eq!(sa.angular_velocity, sb.angular_velocity);
    let (ea, eb) = (a.energies().unwrap(), b.energies().unwrap());
    assert!((ea.total() - eb.total()).abs() <= 1e-12 * ea.dashpot, "{ea:?} vs {eb:?}");
    assert_eq!(ea.kinetic(), eb.kinetic());
}

/// The shipped hopper filled fast (new grains at 2 m/s downwards) and discharged from the
/// start (the outlet plane raised to z = 0.04 m), an exchange every 50 steps.
fn filling_hopper() -> Setup {
    let mut setup = talus::scene::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/hopper_discharge.json")).expect("hopper scene");
    setup.snapshot_every = 0;
    setup.output_every = 50;
    setup.inserts[0].velocity = DVec3::new(0.0, 0.0, -2.0);
    setup.outlets[0].shape = talus::model::flow::OutletShape::Plane { point: DVec3::new(0.0, 0.0, 0.04), normal: DVec3::Z };
    setup
}

/// The hopper on the GPU, filling and discharging at once (grains inserted at 2 m/s, the outlet
/// raised to 5 mm under the insertion region, an exchange every 50 steps): every exchange runs
/// on the device (`gpu::flow`) with no full-state readback, most of them in the buffers held
/// (the new grains appended into their room), and each output is bit for bit what exchanges
/// through the whole state give (the path every exchange took before).
#[test]
fn gpu_hopper_exchanges_on_the_device_without_full_state_readbacks() {
    let setup = filling_hopper();
    // both renumber on the device every 128 steps (`gpu::order`), between the exchanges
    let renumbering = || talus::gpu::GpuBackend::new(&setup, talus::gpu::GpuOptions { renumber_every: Some(128), ..Default::default() }).expect("GPU backend");
    let mut device = renumbering();
    let mut whole = common::WholeStateExchange(renumbering(), true);
    let mut flows = [FlowDriver::new(&setup).unwrap().unwrap(), FlowDriver::new(&setup).unwrap().unwrap()];
    for output in 1..=18 {
        for (b, f) in [&mut device as &mut dyn Backend, &mut whole].into_iter().zip(flows.iter_mut()) {
            b.step(setup.output_every).unwrap();
            f.exchange(&setup, b).unwrap();
        }
        assert_eq!(flows[0].totals(), flows[1].totals(), "output {output}");
        assert!(common::fingerprint(&mut device) == common::fingerprint(&mut whole), "output {output}: the exchanges on the device and through the whole state differ");
    }
    let t = flows[0].totals();
    let how = device.device_exchanges();
    println!("{} inserted, {} taken, {} held; full-state readbacks: device {}, whole state {}; exchanges on the device {how:?}", t.inserted_count[0], t.outlet_count[0], t.held_count, device.full_state_readbacks(), whole.0.full_state_readbacks());
    assert!(t.inserted_count[0] > 200 && t.outlet_count[0] > 20, "the hopper fills and discharges: {t:?}");
    assert_eq!(device.full_state_readbacks(), 0, "an exchange on the device reads no whole state");
    // most exchanges append into the room the buffers were made with (`gpu::flow`, `Room`)
    assert_eq!(how.in_place + how.regrown, 18, "{how:?}");
    assert!(how.in_place > how.regrown, "the exchanges should mostly find room in the buffers held: {how:?}");
    assert!(whole.0.full_state_readbacks() >= 18, "the counter counts the whole-state exchanges");
}

/// On a card with too little memory for an exchange's old and new buffers side by side
/// (`GpuOptions::max_device_bytes`, here 1.5 × the most the run held), the exchanges that would
/// need both go through the host, whose import gives the old buffers back before it makes the
/// new ones, and the early ones stay on the device: every output is bit for bit the unlimited
/// run's.
#[test]
fn gpu_hopper_exchanges_through_the_host_where_memory_is_short() {
    let setup = filling_hopper();
    let run = |opts: talus::gpu::GpuOptions| {
        let mut b = talus::gpu::GpuBackend::new(&setup, opts).expect("GPU backend");
        let mut flow = FlowDriver::new(&setup).unwrap().unwrap();
        let mut prints = Vec::new();
        let mut most = b.device_bytes();
        for _ in 0..18 {
            b.step(setup.output_every).unwrap();
            flow.exchange(&setup, &mut b).unwrap();
            most = most.max(b.device_bytes());
            prints.push(common::fingerprint(&mut b));
        }
        (b, prints, most)
    };
    let (free, free_prints, most) = run(talus::gpu::GpuOptions::default());
    assert_eq!(free.full_state_readbacks(), 0);
    let budget = most * 3 / 2;
    let (short, short_prints, short_most) = run(talus::gpu::GpuOptions { max_device_bytes: Some(budget), ..Default::default() });
    println!("most held {most} B, budget {budget} B; full-state readbacks with the budget: {}, exchanges on the device {:?}", short.full_state_readbacks(), short.device_exchanges());
    assert!(short_prints == free_prints, "the outputs differ with a memory budget");
    assert!(short_most <= budget);
    assert!(short.full_state_readbacks() > 0, "no exchange needed more than {budget} B beside the old buffers: the test proves nothing");
    assert!(short.full_state_readbacks() < 18, "every exchange went through the host: the early ones fit beside the old buffers");
}

/// The filling hopper with its arrays cut into parts by a low binding cap (`gpu::split`) and a
/// 4 mm skin (lists of about 10 slots per grain): the exchanges in place copy the split
/// motion, force, partner and history arrays aside and read them part by part, and the list
/// outgrows its parts inside an exchange's force evaluation (the old partner words and records
/// are laid out again, `GpuBackend::relay_carried`); every output is bit for bit
/// the uncut run's (each exchange may take another path, in place, into buffers made again or
/// through the host: all give the same bytes).
#[test]
fn gpu_hopper_exchanges_in_place_with_split_arrays() {
    use talus::gpu::split::Split;
    let mut setup = filling_hopper();
    setup.skin = Some(0.004);
    // rolling friction: rolling work is booked, so `motion` keeps its third row (48 B a grain;
    // a dry hopper's 32 B would stay in one part at this cap until about 360 grains)
    for p in &mut setup.pairs.entries {
        p.rolling_fric = 0.02;
    }
    assert!(setup.rolling_booked());
    let make = |opts: talus::gpu::GpuOptions| talus::gpu::GpuBackend::new(&setup, opts).expect("GPU backend");
    let mut whole = make(talus::gpu::GpuOptions::default());
    // 11,520 bytes: 240 particles' motion rows, 288 slots' history records per part (a cap
    // that cuts motion, shares and history while the forces pass binds at most lavapipe's 32)
    let mut cut = make(talus::gpu::GpuOptions { max_binding_bytes: Some(2304 * 5), ..Default::default() });
    let mut flows = [FlowDriver::new(&setup).unwrap().unwrap(), FlowDriver::new(&setup).unwrap().unwrap()];
    let (mut split_in_place, mut grown_in_exchange) = (0, 0);
    for output in 1..=18 {
        let (before, parts) = (cut.device_exchanges(), cut.split_layout().parts(Split::History));
        for (b, f) in [&mut whole as &mut dyn Backend, &mut cut].into_iter().zip(flows.iter_mut()) {
            b.step(setup.output_every).unwrap();
            f.exchange(&setup, b).unwrap();
        }
        let (after, layout) = (cut.device_exchanges(), cut.split_layout());
        if after.in_place > before.in_place && layout.parts(Split::Motion) > 1 && layout.parts(Split::History) > 1 {
            split_in_place += 1;
        }
        if after.through_host == before.through_host && layout.parts(Split::History) > parts {
            grown_in_exchange += 1;
        }
        assert_eq!(flows[0].totals(), flows[1].totals(), "output {output}");
        assert!(common::fingerprint(&mut whole) == common::fingerprint(&mut cut), "output {output}: the run with split arrays differs from the whole one");
    }
    println!("exchanges with split arrays: {:?} ({split_in_place} in place with motion and history in parts, {grown_in_exchange} on the device with the list grown into more parts), full-state readbacks {}; {:?}", cut.device_exchanges(), cut.full_state_readbacks(), cut.split_layout().describe());
    assert!(split_in_place >= 2, "too few exchanges in place with split arrays to prove anything: {split_in_place}");
    assert!(grown_in_exchange >= 2, "the list should grow into more parts in exchanges on the device: {grown_in_exchange}");
}

/// `talus bench --scene` of the hopper reports the exchanges of its timed steps, their time and,
/// on the GPU, how each went (in place, into buffers made again, through the host).
#[test]
fn scene_bench_reports_the_exchanges() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/hopper_discharge.json");
    // an output every 518 steps: 3 exchanges in 1,600 steps, grains inserted at each
    let r = talus::bench_scene::bench_scene(talus::run::BackendChoice::Gpu, &path, 0.0, 1600, 0, false).expect("bench");
    let x = r.exchanges.clone().expect("a scene with insertions reports its exchanges");
    assert_eq!(x.count, 3, "{x:?}");
    assert!(x.seconds > 0.0 && x.seconds < r.seconds, "{x:?} in {} s", r.seconds);
    let g = x.gpu.expect("the GPU says how its exchanges went");
    assert_eq!(g.in_place + g.regrown + g.through_host, 3, "{g:?}");
    assert!(g.in_place >= 1, "the hopper filling at a steady rate should find room at its later exchanges: {g:?}");
    let shown = r.to_string();
    assert!(shown.contains("exchanges             3 in") && shown.contains("in place"), "{shown}");
    assert!(r.to_json().contains("\"in_place\""), "{}", r.to_json());
    // a scene without insertion or outlet reports none
    let settle = talus::bench_scene::bench_scene(talus::run::BackendChoice::Cpu, &Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/settle_box.json"), 0.0, 2, 0, false).unwrap();
    assert!(settle.exchanges.is_none());
}

/// Edge cases of an exchange in place: one that takes every grain (the buffers keep their room
/// with none held) and the insertions after it, which fill the same buffers again; each bit
/// for bit what the whole-state path gives.
#[test]
fn gpu_exchange_in_place_empties_and_refills_the_buffers() {
    let setup = filling_hopper();
    let make = || talus::gpu::GpuBackend::new(&setup, talus::gpu::GpuOptions::default()).expect("GPU backend");
    let mut device = make();
    let mut whole = common::WholeStateExchange(make(), true);
    let mut flows = [FlowDriver::new(&setup).unwrap().unwrap(), FlowDriver::new(&setup).unwrap().unwrap()];
    let exchange = |device: &mut talus::gpu::GpuBackend, whole: &mut common::WholeStateExchange, flows: &mut [FlowDriver; 2], output: u32| {
        for (b, f) in [device as &mut dyn Backend, whole].into_iter().zip(flows.iter_mut()) {
            b.step(setup.output_every).unwrap();
            f.exchange(&setup, b).unwrap();
        }
        assert!(common::fingerprint(device) == common::fingerprint(whole), "output {output}: in place and through the whole state differ");
    };
    for output in 1..=6 {
        exchange(&mut device, &mut whole, &mut flows, output);
    }
    let step = device.steps_done();
    let n = device.snapshot().unwrap().position.len() as u32;
    assert!(n > 50, "grains held after 6 outputs: {n}");
    let all = talus::model::exchange::ExchangeChange { removed: (0..n).collect(), ..Default::default() };
    let in_place = device.device_exchanges().in_place;
    device.apply_exchange(&all).unwrap();
    whole.apply_exchange(&all).unwrap();
    assert_eq!(device.device_exchanges().in_place, in_place + 1, "taking every grain finds room");
    assert_eq!(device.snapshot().unwrap().position.len(), 0);
    assert!(common::fingerprint(&mut device) == common::fingerprint(&mut whole), "after taking every grain at step {step}");
    for output in 7..=12 {
        exchange(&mut device, &mut whole, &mut flows, output);
    }
    let refilled = device.snapshot().unwrap().position.len() as u32;
    println!("{n} grains taken at step {step}, {refilled} held again; {:?}", device.device_exchanges());
    assert!(refilled > 20, "the insertion must fill the buffers again: {refilled}");
}
