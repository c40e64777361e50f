//! GPU backend behaviour on small scenes built in code. Fails (never skips) without an adapter.

use talus::contact::params::{inherit, PairParams};
use talus::gpu::profile::PassTiming;
use talus::gpu::{open_context, GpuBackend, GpuOptions};
use talus::model::material::Material;
use talus::setup::{Aabb, PairTable, Particles, Setup, TimeStepChoice, Wall};
use talus::{Backend, Snapshot};

fn material() -> Material {
    Material { name: "glass".into(), density: 2500.0, hz_shear: 1.0e7, hz_poiss: 0.3, fric: 0.5 }
}

fn base_setup(dt: f64, gravity: [f64; 3], domain: Aabb) -> Setup {
    let m = material();
    let pair = inherit(&m, &m, PairParams { dp_nratio: 0.1, dp_sratio: 0.1, ..PairParams::default() });
    Setup {
        name: "test".into(),
        source: "test.toml".into(),
        gravity,
        dt,
        dt_choice: TimeStepChoice::Explicit,
        steps: 0,
        output_every: 1,
        snapshot_every: 0,
        materials: vec![m],
        pairs: PairTable { n_materials: 1, entries: vec![pair] },
        particles: Particles::default(),
        walls: vec![],
        meshes: vec![],
        domain,
        periodic: [false; 3],
        inserts: Vec::new(),
        outlets: Vec::new(),
        measures: Vec::new(),
        skin: None,
        bricks: None,
        balance: false,
        checks: Default::default(),
        until_rest: None,
        checkpoint_every: 0,
        initial_contacts: Vec::new(),
        input_files: Vec::new(),
        clump_templates: Vec::new(),
        notes: Vec::new(),
        bodies: Default::default(),
    }
}

fn backend(setup: &Setup, opts: GpuOptions) -> GpuBackend {
    let ctx = open_context().unwrap_or_else(|e| panic!("this GPU test needs a GPU adapter (lavapipe counts): {e}"));
    GpuBackend::with_context(ctx, setup, opts).unwrap_or_else(|e| panic!("GpuBackend::with_context: {e}"))
}

fn unit_box() -> Aabb {
    Aabb { min: [0.0; 3], max: [1.0; 3] }
}

#[test]
fn free_fall_matches_analytic_trajectory() {
    let g = [0.0, 0.0, -9.81];
    let mut s = base_setup(1e-3, g, unit_box());
    let (x0, v0) = ([0.25, 0.5, 0.75], [0.1, -0.05, 0.3]);
    s.particles.push(x0, v0, [0.0, 0.0, 2.0], 0.005, 0);
    let mut b = backend(&s, GpuOptions { steps_per_submit: 64, ..Default::default() });
    let e0 = b.energies().unwrap();
    b.step(300).unwrap();
    assert_eq!(b.steps_done(), 300);
    let snap = b.snapshot().unwrap();
    let t = 0.3;
    assert!((snap.time - t).abs() < 1e-12);
    for a in 0..3 {
        let x = x0[a] + v0[a] * t + 0.5 * g[a] * t * t;
        let v = v0[a] + g[a] * t;
        assert!((snap.position[0][a] - x).abs() < 2e-6, "axis {a}: x {} vs analytic {x}", snap.position[0][a]);
        assert!((snap.velocity[0][a] - v).abs() < 2e-5, "axis {a}: v {} vs analytic {v}", snap.velocity[0][a]);
    }
    assert_eq!(snap.angular_velocity[0][2] as f32, 2.0);
    let e1 = b.energies().unwrap();
    assert!((e1.mechanical() - e0.mechanical()).abs() < 1e-5 * e0.mechanical().abs(), "{e0:?} -> {e1:?}");
    assert_eq!(b.contact_count().unwrap(), 0);
}

#[test]
fn position_precision_far_from_origin() {
    let mut s = base_setup(1e-3, [0.0; 3], Aabb { min: [0.0; 3], max: [10.0; 3] });
    s.particles.push([9.9, 9.9, 0.1], [1e-6, -1e-6, 1e-6], [0.0; 3], 0.005, 0);
    let mut b = backend(&s, GpuOptions { steps_per_submit: 250, ..Default::default() });
    b.step(1000).unwrap();
    let p = b.snapshot().unwrap().position[0];
    let moved = [p[0] - 9.9, p[1] - 9.9, p[2] - 0.1];
    for (a, (m, want)) in moved.iter().zip([1e-6, -1e-6, 1e-6]).enumerate() {
        assert!((m - want).abs() < 1e-9, "axis {a}: moved {m:e} m, want {want:e} ± 1e-9");
    }
}

/// Two overlapping balls; returns the snapshot before any step (initial forces).
fn pair_forces(centre: [f64; 3], domain: Aabb) -> (Snapshot, u64) {
    let mut s = base_setup(1e-5, [0.0; 3], domain);
    s.particles.push(centre, [0.0; 3], [0.0; 3], 0.005, 0);
    s.particles.push([centre[0] + 0.0095, centre[1] + 0.001, centre[2]], [0.0; 3], [0.0; 3], 0.005, 0);
    // A third particle inside the domain so the grid is not trivially empty there.
    s.particles.push([0.5, 0.5, 0.5], [0.0; 3], [0.0; 3], 0.005, 0);
    let mut b = backend(&s, GpuOptions::default());
    let snap = b.snapshot().unwrap();
    (snap, b.contact_count().unwrap())
}

#[test]
fn grid_handles_particles_outside_the_domain() {
    let (inside, n_in) = pair_forces([0.3, 0.3, 0.3], unit_box());
    let (outside, n_out) = pair_forces([-2.3, 5.7, -3.1], unit_box());
    assert_eq!(n_in, 1);
    assert_eq!(n_out, 1, "contact outside the domain lost");
    let f_in = inside.force[1];
    let f_out = outside.force[1];
    assert!(f_in[0] > 0.0, "particle 1 should be pushed away: {f_in:?}");
    for a in 0..3 {
        assert!((f_in[a] - f_out[a]).abs() <= 1e-3 * f_in[0].abs(), "axis {a}: {f_in:?} vs {f_out:?}");
        assert!((outside.force[0][a] + f_out[a]).abs() <= 1e-6 * f_in[0].abs(), "not equal and opposite");
    }
}

/// A box of 512 balls (some overlapping) on a floor between walls, settling under gravity.
fn packed_setup() -> Setup {
    let mut s = base_setup(2e-5, [0.0, 0.0, -9.81], Aabb { min: [0.0; 3], max: [0.08, 0.08, 0.2] });
    let mut k = 0u32;
    for iz in 0..8 {
        for iy in 0..8 {
            for ix in 0..8 {
                let frac = (k as f64 * 0.618_033_988_75).fract();
                let r = 0.0045 + 0.0006 * frac;
                let p = [0.006 + 0.0095 * ix as f64, 0.006 + 0.0095 * iy as f64, 0.0052 + 0.0095 * iz as f64];
                s.particles.push(p, [0.01 * (frac - 0.5), 0.0, 0.0], [0.0; 3], r, 0);
                k += 1;
            }
        }
    }
    let wall = |name: &str, point: [f64; 3], normal: [f64; 3]| Wall::plane(name, point, normal, 0);
    s.walls = vec![
        wall("floor", [0.0, 0.0, 0.0], [0.0, 0.0, 1.0]),
        wall("x0", [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]),
        wall("x1", [0.08, 0.0, 0.0], [-1.0, 0.0, 0.0]),
        wall("y0", [0.0, 0.0, 0.0], [0.0, 1.0, 0.0]),
        wall("y1", [0.0, 0.08, 0.0], [0.0, -1.0, 0.0]),
    ];
    s
}

fn bits(s: &Snapshot) -> Vec<u64> {
    let mut v = Vec::new();
    for a in [&s.position, &s.velocity, &s.angular_velocity, &s.force, &s.torque] {
        v.extend(a.iter().flatten().map(|x| x.to_bits()));
    }
    v
}

fn run_packed(opts: GpuOptions, steps: u64) -> (Snapshot, talus::Energies, u64, u32) {
    let s = packed_setup();
    let mut b = backend(&s, opts);
    b.step(steps).unwrap();
    let snap = b.snapshot().unwrap();
    let e = b.energies().unwrap();
    let n = b.contact_count().unwrap();
    (snap, e, n, b.hash_capacity())
}

#[test]
fn hash_overflow_grows_and_redoes_bit_identically() {
    let (small, e_small, n_small, cap_small) = run_packed(GpuOptions { hash_capacity: Some(8), steps_per_submit: 40, ..GpuOptions::default() }, 200);
    let (big, e_big, n_big, cap_big) = run_packed(GpuOptions { hash_capacity: Some(1 << 14), steps_per_submit: 40, ..GpuOptions::default() }, 200);
    assert!(n_big > 300, "scene should have many contacts, has {n_big}");
    assert!(cap_small > 8 && cap_small <= cap_big, "capacity did not grow: {cap_small}");
    assert_eq!(n_small, n_big);
    assert!(bits(&small) == bits(&big), "snapshots differ after growth");
    assert_eq!(e_small, e_big);
}

#[test]
fn runs_are_deterministic() {
    let (a, ea, na, _) = run_packed(GpuOptions::default(), 150);
    let (b, eb, nb, _) = run_packed(GpuOptions::default(), 150);
    assert!(bits(&a) == bits(&b), "two runs differ");
    assert_eq!(ea, eb);
    assert_eq!(na, nb);
    assert!(ea.strain > 0.0 && ea.dashpot > 0.0, "{ea:?}");
    assert!(a.position.iter().all(|p| p.iter().all(|x| x.is_finite())));
}

/// 512 separated balls whose layers converge (upper layers fall faster): the number of
/// contacts grows during the run, so the wall-contact table overflows in a later batch while it
/// holds live entries (exercises the halt, the rehash of the table the step reads and the
/// resumed step).
fn converging_setup() -> Setup {
    let mut s = packed_setup();
    for (k, (p, v)) in s.particles.position.iter_mut().zip(s.particles.velocity.iter_mut()).enumerate() {
        let (ix, iy, iz) = (k % 8, (k / 8) % 8, k / 64);
        *p = [0.006 + 0.0101 * ix as f64, 0.006 + 0.0101 * iy as f64, 0.0056 + 0.0101 * iz as f64];
        *v = [0.0, 0.0, -2.0 * iz as f64 / 7.0];
        s.particles.radius[k] = 0.0045 + 0.0005 * (k as f64 * 0.618_033_988_75).fract();
    }
    s.walls[2].point[0] = 0.09;
    s.walls[4].point[1] = 0.09;
    s.domain.max = [0.09, 0.09, 0.2];
    s
}

#[test]
fn hash_overflow_mid_run_with_live_history() {
    let s = converging_setup();
    let run = |cap: u32| {
        let mut b = backend(&s, GpuOptions { hash_capacity: Some(cap), steps_per_submit: 25, ..GpuOptions::default() });
        assert_eq!(b.contact_count().unwrap(), 0, "scene should start without contacts");
        b.step(400).unwrap();
        (b.snapshot().unwrap(), b.energies().unwrap(), b.contact_count().unwrap(), b.hash_capacity())
    };
    let (small, e_small, n_small, cap_small) = run(16);
    let (big, e_big, n_big, _) = run(1 << 14);
    assert!(n_big > 10, "contacts should form, have {n_big}");
    // more than 48 balls touch the floor and the side walls at once: 16 -> 32 -> 64 -> 128
    assert!(cap_small >= 128, "capacity did not grow: {cap_small}");
    assert_eq!(n_small, n_big);
    assert!(bits(&small) == bits(&big), "snapshots differ after mid-run growth");
    assert_eq!(e_small, e_big);
    assert!(e_big.slip > 0.0 || e_big.dashpot > 0.0, "{e_big:?}");
}

/// A packed bed (in contact from the start) with a sparse layer of balls falling onto it: the
/// half list needs more slots once they land, so a list sized for the first build overflows in
/// a later rebuild while its slots hold live pair history, and the resumed step (slots and
/// history copied into the larger list, then rebuilt) must match a run with room to spare bit
/// for bit.
#[test]
fn list_overflow_mid_run_with_live_history() {
    let mut s = talus::bench::bed_setup(512, talus::contact::params::ContactModel::HertzMindlin);
    let top = s.particles.position.iter().map(|p| p[2]).fold(f64::MIN, f64::max);
    let spacing = talus::bench::BED_SPACING;
    for ix in 0..4 {
        for iy in 0..4 {
            let p = [(2 * ix) as f64 * spacing + spacing, (2 * iy) as f64 * spacing + spacing, top + 1.5 * spacing];
            s.particles.push(p, [0.0, 0.0, -1.0], [0.0; 3], 0.001, 0);
        }
    }
    let first = backend(&s, GpuOptions::default()).list_slots().unwrap();
    let run = |list: Option<u32>| {
        let mut b = backend(&s, GpuOptions { list_capacity: list, steps_per_submit: 25, ..GpuOptions::default() });
        assert!(b.contact_count().unwrap() > 500, "the bed starts in contact");
        let start = b.list_capacity();
        b.step(1000).unwrap();
        (b.snapshot().unwrap(), b.energies().unwrap(), b.contact_count().unwrap(), start, b.list_capacity())
    };
    let (small, e_small, n_small, start, grown) = run(Some(first));
    let (big, e_big, n_big, ..) = run(None);
    assert_eq!(start, first, "the first build fits the list exactly");
    assert!(grown > first, "the list never grew mid-run ({first} slots)");
    assert_eq!(n_small, n_big);
    assert!(bits(&small) == bits(&big), "snapshots differ after the list grew mid-run");
    assert_eq!(e_small, e_big);
}

/// Export hands out every contact's history (ball pairs from the list slots, walls from the
/// wall-contact table) and import puts it back: a run that goes through an export and an import
/// into a fresh backend continues exactly as one that never stopped.
#[test]
fn export_and_import_keep_every_contact_history() {
    let s = packed_setup();
    let mut through = backend(&s, GpuOptions::default());
    let mut straight = backend(&s, GpuOptions::default());
    through.step(150).unwrap();
    straight.step(150).unwrap();
    let state = through.export_state().unwrap();
    let pairs = state.history.iter().filter(|c| c.partner & talus::layout::consts::WALL_KEY_BIT == 0).count();
    let walls = state.history.len() - pairs;
    assert!(pairs > 100 && walls > 20, "{pairs} pair and {walls} wall records");
    assert!(state.history.iter().all(|c| c.history.established == 1.0), "every stored contact is established");
    let mut fresh = backend(&s, GpuOptions::default());
    fresh.import_state(&state).unwrap();
    let again = fresh.export_state().unwrap();
    assert_eq!(again.history, state.history, "the imported history exports unchanged");
    fresh.step(150).unwrap();
    straight.step(150).unwrap();
    assert!(bits(&fresh.snapshot().unwrap()) == bits(&straight.snapshot().unwrap()), "the run through export and import differs");
    assert_eq!(fresh.contact_count().unwrap(), straight.contact_count().unwrap());
}

/// The GPU keeps no copy of the state, so a blow-up stops the backend: it points back to the
/// step of its last snapshot (a good state, read before the blow-up) and refuses to go on.
#[test]
fn blow_up_stops_the_backend_at_its_last_snapshot() {
    // two balls 190 mm apart closing by 5 mm per step: they meet in step 38, overlapping deeply
    let mut s = base_setup(1e-4, [0.0; 3], unit_box());
    s.particles.push([0.4, 0.5, 0.5], [25.0, 0.0, 0.0], [0.0; 3], 0.005, 0);
    s.particles.push([0.6, 0.5, 0.5], [-25.0, 0.0, 0.0], [0.0; 3], 0.005, 0);
    let mut b = backend(&s, GpuOptions { steps_per_submit: 8, ..Default::default() });
    b.step(5).unwrap();
    let good = b.snapshot().unwrap();
    assert!(good.position.iter().flatten().all(|x| x.is_finite()));
    let e = b.step(100).unwrap_err();
    let talus::TalusError::BlowUp { step, ref message, .. } = e else { panic!("expected a blow-up, got {e}") };
    assert!((38..=40).contains(&step), "{e}");
    assert!(message.contains("overlap") && message.contains("last snapshot, step 5"), "{e}");
    assert_eq!(b.steps_done(), 5, "the backend points at its last snapshot");
    let again = b.step(1).unwrap_err().to_string();
    assert!(again.contains("stopped after a blow-up"), "{again}");
    assert!(b.snapshot().is_err() && b.energies().is_err() && b.export_state().is_err());
}

/// `talus bench --profile` times the real step: a run profiled pass by pass ends in the same
/// state, bit for bit, as the same steps run as normal batches, and every named pass gets a
/// time (the force pass of a packed bed a positive one). A profiled batch that overflows a
/// capacity (here the wall-contact table, made tiny) is finished, grown and not counted: the
/// profile runs further batches until it has timed the steps asked for.
#[test]
fn profiled_steps_are_the_real_steps() {
    let s = talus::bench::bed_setup(2000, talus::contact::params::ContactModel::HertzMindlin);
    let (_, default_timing) = backend(&s, GpuOptions::default()).profile_passes(1).unwrap();
    // lavapipe, as desktop drivers, grants timestamps inside encoders
    let timings = if default_timing == PassTiming::Timestamps { vec![PassTiming::Timestamps, PassTiming::SubmitAndWait] } else { vec![default_timing] };
    for timing in timings {
        let mut plain = backend(&s, GpuOptions { steps_per_submit: 32, ..GpuOptions::default() });
        let mut profiled = backend(&s, GpuOptions { steps_per_submit: 32, hash_capacity: Some(8), ..GpuOptions::default() });
        // 70 steps: two full batches and a part of one
        let totals = profiled.profile_passes_timed(70, timing).unwrap();
        assert!(profiled.steps_done() > 70, "no profiled batch overflowed the tiny wall-contact table ({timing:?})");
        plain.step(profiled.steps_done()).unwrap();
        assert!(bits(&profiled.snapshot().unwrap()) == bits(&plain.snapshot().unwrap()), "profiling changed the trajectory ({timing:?})");
        assert_eq!(profiled.energies().unwrap(), plain.energies().unwrap());
        let names: Vec<&str> = totals.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["drift", "list_plan", "grid (rebuild steps)", "list (rebuild steps)", "forces", "advance", "kick (batch end)"]);
        assert!(totals.iter().all(|(_, t)| t.is_finite() && *t >= 0.0), "{totals:?} ({timing:?})");
        let forces = totals.iter().find(|(n, _)| *n == "forces").unwrap().1;
        assert!(forces > 0.0, "the force pass of a packed bed took no time: {totals:?} ({timing:?})");
    }
}

/// Two scenes of different contact models in one process: the second takes the first's
/// pipelines but for its own contact code (`Pipelines::with_contact`, through
/// `gpu::shared`), and steps bit for bit as with pipelines compiled for it alone.
#[test]
fn shared_pipelines_for_another_contact_model_step_as_their_own() {
    let load = |name: &str| talus::scene::load(std::path::Path::new(&format!("{}/scenes/{name}", env!("CARGO_MANIFEST_DIR")))).unwrap();
    let (first, second) = (load("hysteretic_drop.json"), load("hertz_mindlin_rolling.json"));
    let first = GpuBackend::new(&first, GpuOptions::default()).unwrap();
    assert_eq!(first.layout().unwrap().contact_model, Some("hysteretic"));
    let run = |mut b: GpuBackend| {
        assert_eq!(b.layout().unwrap().contact_model, Some("hertz_mindlin"));
        b.step(400).unwrap();
        (bits(&b.snapshot().unwrap()), b.energies().unwrap(), b.contact_count().unwrap())
    };
    let shared = run(GpuBackend::new(&second, GpuOptions::default()).unwrap());
    let own = run(backend(&second, GpuOptions::default()));
    assert!(shared.2 > 0, "no contacts to compare");
    assert!(shared.0 == own.0, "trajectories differ");
    assert_eq!(format!("{:?}", shared.1), format!("{:?}", own.1));
    assert_eq!(shared.2, own.2);
    drop(first);
}
