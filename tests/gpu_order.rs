//! Cell order on the device (`gpu::order`, issue 34 item 3): the GPU stores the particles in
//! cell order (set by the host at the start, renumbered on the device every
//! `renumber_every` steps), and the physics keeps the order of their ids, so a run stored in
//! cell order and one stored in id order give bit-identical positions, velocities, spins,
//! forces and torques. Only the f32 energy and wall-load sums, grouped by storage index, may
//! differ in their last bits; runs that renumber alike (any skin, lists and tables grown from
//! tiny, reruns, a resumed run) match in every bit. A checkpoint keeps the order, and an
//! exchange of particles on the device keeps it too (`tests/checkpoint.rs` and
//! `tests/hopper.rs` compare those runs bit for bit with runs that never stopped or exchanged
//! through the host).

mod common;

use common::lowered_settling_box;
use talus::contact::params::ContactModel;
use talus::gpu::{GpuBackend, GpuOptions};
use talus::Backend;

fn gpu(setup: &talus::setup::Setup, cell_order: bool) -> GpuBackend {
    with(setup, GpuOptions { cell_order: Some(cell_order), ..GpuOptions::default() })
}

fn with(setup: &talus::setup::Setup, opts: GpuOptions) -> GpuBackend {
    GpuBackend::new(setup, opts).unwrap_or_else(|e| panic!("GPU backend unavailable ({e}); GPU tests need a Vulkan driver (apt-get install mesa-vulkan-drivers)"))
}

/// Every f64 of a snapshot's positions, velocities, spins, forces and torques, as bits.
fn trajectory_bits(b: &mut dyn Backend) -> Vec<u64> {
    let s = b.snapshot().unwrap();
    [&s.position, &s.velocity, &s.angular_velocity, &s.force, &s.torque].iter().flat_map(|v| v.iter().flatten().map(|x| x.to_bits())).collect()
}

fn close(a: f64, b: f64, scale: f64, what: &str) {
    assert!((a - b).abs() <= 1e-6 * scale, "{what}: {a} in cell order, {b} in id order (scale {scale})");
}

/// The bench's packed bed of `n` grains (Hertz–Mindlin, so spins and slip are exercised), its
/// ids shuffled: neighbours in space are scattered in id order, as in a poured scene.
fn shuffled_bed(n: usize) -> talus::setup::Setup {
    let mut setup = talus::bench::bed_setup(n, ContactModel::HertzMindlin);
    talus::bench::shuffle_ids(&mut setup, talus::bench::SHUFFLE_SEED);
    setup
}

#[test]
fn cell_order_moves_the_storage_and_leaves_the_trajectories() {
    let setup = shuffled_bed(2000);
    let n = setup.particles.len();
    let mut cells = gpu(&setup, true);
    let mut ids = gpu(&setup, false);
    let stored = cells.stored_ids().unwrap();
    let identity: Vec<u32> = (0..n as u32).collect();
    assert_ne!(stored, identity, "the shuffled bed is not stored in cell order");
    assert_eq!(ids.stored_ids().unwrap(), identity);
    // neighbours in storage are near in space: the mean distance between the centres of
    // consecutive stored particles is far below that of consecutive ids
    let x = cells.snapshot().unwrap().position;
    let gap = |order: &[u32]| order.windows(2).map(|w| glam::DVec3::from(x[w[0] as usize]).distance(glam::DVec3::from(x[w[1] as usize]))).sum::<f64>() / (order.len() - 1) as f64;
    let (by_cell, by_id) = (gap(&stored), gap(&identity));
    assert!(by_cell < 0.3 * by_id, "consecutive stored particles lie {by_cell} m apart in cell order, {by_id} m in id order");

    let mut contacts = 0;
    for batch in 1..=3u64 {
        cells.step(100).unwrap();
        ids.step(100).unwrap();
        assert!(trajectory_bits(&mut cells) == trajectory_bits(&mut ids), "the two storage orders differ after {} steps", 100 * batch);
        let (c, i) = (cells.contact_count().unwrap(), ids.contact_count().unwrap());
        assert_eq!(c, i, "contact counts after {} steps", 100 * batch);
        contacts = contacts.max(c);
        let (ec, ei) = (cells.energies().unwrap(), ids.energies().unwrap());
        let scale = ec.kinetic_translational + ec.strain + ec.gravitational.abs();
        for (what, a, b) in [("kinetic", ec.kinetic_translational, ei.kinetic_translational), ("rotational", ec.kinetic_rotational, ei.kinetic_rotational), ("strain", ec.strain, ei.strain), ("gravitational", ec.gravitational, ei.gravitational), ("dashpot", ec.dashpot, ei.dashpot), ("slip", ec.slip, ei.slip)] {
            close(a, b, scale, what);
        }
        for (lc, li) in cells.wall_loads().unwrap().iter().zip(ids.wall_loads().unwrap()) {
            let f = glam::DVec3::from(li.force).length().max(1e-30);
            for a in 0..3 {
                assert!((lc.force[a] - li.force[a]).abs() <= 1e-5 * f, "wall load {:?} against {:?}", lc.force, li.force);
            }
        }
    }
    assert!(contacts > 1000, "only {contacts} contacts: the comparison proves little");
    // the exported contact history is in ids, whatever the storage
    let (hc, hi) = (cells.export_state().unwrap(), ids.export_state().unwrap());
    assert_eq!(hc.history.len(), hi.history.len());
    assert!(hc.history.iter().zip(&hi.history).all(|(a, b)| a.owner == b.owner && a.partner == b.partner && a.history == b.history), "the exported contact records differ");
}

#[test]
fn a_resumed_state_is_stored_as_it_was_saved() {
    let setup = lowered_settling_box(600);
    let mut run = gpu(&setup, true);
    run.step(150).unwrap();
    let (state, exact) = (run.export_state().unwrap(), run.export_exact().unwrap());
    assert!(exact.raw("order").is_ok(), "a GPU state stored in cell order saves its order");
    // a backend that stores in id order takes the state, then the order it was saved in
    let mut resumed = gpu(&setup, false);
    resumed.import_state(&state).unwrap();
    assert_ne!(resumed.stored_ids().unwrap(), run.stored_ids().unwrap());
    resumed.import_exact(&exact).unwrap();
    assert_eq!(resumed.stored_ids().unwrap(), run.stored_ids().unwrap());
    run.step(100).unwrap();
    resumed.step(100).unwrap();
    assert!(common::fingerprint(&mut run) == common::fingerprint(&mut resumed), "the resumed run differs, energies included");
    // an order that is not one is refused, naming the array
    let mut bad = exact.clone();
    for (name, bytes) in bad.raw.iter_mut() {
        if name == "order" {
            bytes[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        }
    }
    let e = resumed.import_exact(&bad).unwrap_err().to_string();
    assert!(e.contains("`order`"), "{e}");
}

/// Renumbering every 64 steps on the device: the storage moves, the trajectories do not.
#[test]
fn renumbering_on_the_device_moves_the_storage_and_leaves_the_trajectories() {
    let setup = shuffled_bed(2000);
    let n = setup.particles.len() as u32;
    let mut moving = with(&setup, GpuOptions { renumber_every: Some(64), ..GpuOptions::default() });
    let mut ids = gpu(&setup, false);
    let at_start = moving.stored_ids().unwrap();
    for batch in 1..=3u64 {
        moving.step(100).unwrap();
        ids.step(100).unwrap();
        assert!(trajectory_bits(&mut moving) == trajectory_bits(&mut ids), "renumbering on the device changed the trajectories by step {}", 100 * batch);
        assert_eq!(moving.contact_count().unwrap(), ids.contact_count().unwrap());
    }
    let now = moving.stored_ids().unwrap();
    assert_ne!(now, at_start, "the device never renumbered");
    let mut sorted = now.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..n).collect::<Vec<u32>>(), "the device's order is not a permutation");
    let (hc, hi) = (moving.export_state().unwrap(), ids.export_state().unwrap());
    assert!(hc.history == hi.history, "the exported contact records differ after renumbering");
}

/// Runs that renumber at the same steps match in every bit, energies and wall loads included:
/// skin 0 against the default skin, a list from 16 slots and wall tables from 4 (both overflow,
/// grow and redo steps, some of them renumbering steps), and a rerun.
#[test]
fn renumbering_runs_are_bit_identical_whatever_the_skin_and_capacities() {
    // the shuffled bed in its bin: ball pairs and wall contacts (whose records are re-keyed)
    let mut setup = shuffled_bed(1000);
    let every = Some(32);
    setup.skin = Some(0.0);
    let mut every_step = with(&setup, GpuOptions { renumber_every: every, ..GpuOptions::default() });
    setup.skin = None;
    let mut skinned = with(&setup, GpuOptions { renumber_every: every, ..GpuOptions::default() });
    let mut tiny = with(&setup, GpuOptions { renumber_every: every, list_capacity: Some(16), hash_capacity: Some(4), steps_per_submit: 16, ..GpuOptions::default() });
    let start = skinned.stored_ids().unwrap();
    for batch in 1..=3u64 {
        for b in [&mut every_step, &mut skinned, &mut tiny] {
            b.step(64).unwrap();
        }
        let (a, b, c) = (common::fingerprint(&mut every_step), common::fingerprint(&mut skinned), common::fingerprint(&mut tiny));
        assert!(a == b, "skin 0 and the default skin differ after {} steps", 64 * batch);
        assert!(b == c, "lists and tables grown from tiny differ after {} steps", 64 * batch);
        assert_eq!(every_step.stored_ids().unwrap(), skinned.stored_ids().unwrap());
    }
    assert_ne!(skinned.stored_ids().unwrap(), start, "the device never renumbered");
    assert!(tiny.list_capacity() > 16 && tiny.hash_capacity() > 4, "the tiny capacities never grew");
    assert!(skinned.contact_count().unwrap() > 1000, "too few contacts for the comparison to mean much");
    let mut again = with(&setup, GpuOptions { renumber_every: every, ..GpuOptions::default() });
    again.step(192).unwrap();
    assert!(common::fingerprint(&mut again) == common::fingerprint(&mut skinned), "two runs differ");
}

/// A checkpoint taken between renumberings resumes into the same storage and the same later
/// renumberings: bit for bit the run that never stopped.
#[test]
fn a_run_resumed_between_renumberings_renumbers_as_the_first() {
    let setup = lowered_settling_box(800);
    let opts = GpuOptions { renumber_every: Some(64), ..GpuOptions::default() };
    let mut run = with(&setup, opts.clone());
    run.step(100).unwrap();
    let (state, exact) = (run.export_state().unwrap(), run.export_exact().unwrap());
    let mut resumed = with(&setup, opts);
    resumed.import_state(&state).unwrap();
    resumed.import_exact(&exact).unwrap();
    for _ in 0..2 {
        run.step(100).unwrap();
        resumed.step(100).unwrap();
        assert!(common::fingerprint(&mut run) == common::fingerprint(&mut resumed), "the resumed run differs");
        assert_eq!(run.stored_ids().unwrap(), resumed.stored_ids().unwrap());
    }
}

/// A blow-up names the particle id order names (the lowest id beyond the overlap limit), not
/// the lowest storage index the device flagged.
#[test]
fn an_overlap_blow_up_names_the_same_particle_in_either_order() {
    let bed = shuffled_bed(500);
    // two deep overlaps, owned by ids lo < hi (each with a partner of a higher id), chosen so
    // that cell order stores hi first: the device's lowest flagged index is then hi's
    let (setup, lo) = (0..40u32)
        .flat_map(|lo| (300..340u32).map(move |hi| (lo, hi)))
        .find_map(|(lo, hi)| {
            let mut setup = bed.clone();
            let x = &mut setup.particles.position;
            x[(hi + 1) as usize] = [x[hi as usize][0] + 1e-5, x[hi as usize][1], x[hi as usize][2]];
            x[(lo + 200) as usize] = [x[lo as usize][0], x[lo as usize][1] + 1e-5, x[lo as usize][2]];
            let order = talus::gpu::order::for_positions(&setup.particles.position, &setup.particles.radius, true);
            (order.slot(hi as usize) < order.slot(lo as usize)).then_some((setup, lo))
        })
        .expect("a pair of owners stored against their id order");
    let named = |cell_order: bool| match GpuBackend::new(&setup, GpuOptions { cell_order: Some(cell_order), ..GpuOptions::default() }) {
        Err(talus::TalusError::BlowUp { particle, .. }) => particle,
        Err(e) => panic!("not a blow-up: {e}"),
        Ok(_) => panic!("the overlaps were not caught"),
    };
    assert_eq!(named(false), Some(lo));
    assert_eq!(named(true), Some(lo));
}

/// The force pass's schedule (`shaders/schedule.wgsl`): each workgroup's particles, longest run
/// first, every one taken by exactly one thread of its own workgroup.
fn assert_sorted_schedule(b: &GpuBackend) {
    let (order, runs, _) = b.force_schedule().unwrap();
    let n = runs.len();
    let group = talus::layout::consts::WORKGROUP_SIZE as usize;
    let longest = talus::layout::consts::SCHEDULE_LONGEST;
    for (w, window) in order[..n].chunks(group).enumerate() {
        let mut taken: Vec<u32> = window.to_vec();
        taken.sort_unstable();
        let own: Vec<u32> = ((w * group) as u32..((w + 1) * group).min(n) as u32).collect();
        assert_eq!(taken, own, "workgroup {w} does not take its own particles once each");
        for pair in window.windows(2) {
            let (a, b) = (runs[pair[0] as usize].min(longest), runs[pair[1] as usize].min(longest));
            assert!(a > b || (a == b && pair[0] < pair[1]), "workgroup {w}: particle {} (run {a}) before {} (run {b})", pair[0], pair[1]);
        }
    }
}

#[test]
fn the_force_pass_schedule_sorts_runs_and_changes_no_bit() {
    // a shuffled bed: runs of binomial length, the case the schedule is for; renumbered on the
    // device every 64 steps, so the schedule follows the storage as it moves
    let setup = shuffled_bed(2000);
    let opts = |balanced| GpuOptions { balanced: Some(balanced), renumber_every: Some(64), ..GpuOptions::default() };
    let mut sorted = with(&setup, opts(true));
    let mut plain = with(&setup, opts(false));
    for batch in 1..=2u64 {
        sorted.step(100).unwrap();
        plain.step(100).unwrap();
        assert!(common::fingerprint(&mut sorted) == common::fingerprint(&mut plain), "the schedule changed a bit after {} steps", 100 * batch);
        assert_sorted_schedule(&sorted);
        let (_, _, taken) = sorted.force_schedule().unwrap();
        assert!(taken, "the shuffled bed's schedule does not pay after {} steps", 100 * batch);
    }
    // off, thread k takes particle k
    let (order, _, taken) = plain.force_schedule().unwrap();
    assert!(!taken && order.iter().enumerate().all(|(k, &i)| i as usize == k), "without the schedule the threads take the particles in storage order");

    // the same bed numbered row by row: its runs are alike, the schedule gains nothing and the
    // force pass takes the particles in storage order
    let lattice = talus::bench::bed_setup(2000, ContactModel::HertzMindlin);
    let mut rows = with(&lattice, opts(true));
    rows.step(100).unwrap();
    assert_sorted_schedule(&rows);
    let (_, _, taken) = rows.force_schedule().unwrap();
    assert!(!taken, "the lattice bed takes the schedule");
}

#[test]
fn the_force_pass_schedule_keeps_adhesion_sums() {
    // a lattice of wet beads, the larger ones overlapping their neighbours, in a box with walls, its ids
    // shuffled: every bead starts in contact with bridges, so the adhesion rows of the work
    // sums (surface energy, bond-break work) go by the particle's place too
    let text = r#"{
        "gravity": [0, 0, -9.81], "time_step": "auto", "time_step_fraction": 0.2, "steps": 200,
        "output": { "every_steps": 100 },
        "materials": { "glass": { "density": 2500, "youngsModulus": 1e7, "poissonsRatio": 0.25, "fric": 0.5 } },
        "contacts": { "default": { "model": "hertz_mindlin", "coefficientRestitution": 0.4, "rolling_fric": 0.05, "adhesion": "capillary", "liquid_volume": 1e-11, "surface_tension": 0.072, "contact_angle": 0 } },
        "generators": [ { "type": "lattice", "origin": [0.0015, 0.0015, 0.0015], "count": [10, 10, 8], "spacing": 0.00301,
            "radius": { "distribution": "uniform", "min": 0.00145, "max": 0.0015 }, "material": "glass", "seed": 3 } ],
        "walls": [ { "type": "box", "name": "bin", "min": [0, 0, 0], "max": [0.0301, 0.0301, 0.05], "material": "glass", "open": ["+z"] } ]
    }"#;
    let mut setup = talus::scene::parse_str(text, std::path::Path::new("wet_lattice.json")).unwrap_or_else(|e| panic!("scene: {e}"));
    assert!(setup.has_adhesion());
    // grown after the generator's check: the larger beads overlap their neighbours
    for r in &mut setup.particles.radius {
        *r *= 1.01;
    }
    talus::bench::shuffle_ids(&mut setup, 3);
    let opts = |balanced| GpuOptions { balanced: Some(balanced), ..GpuOptions::default() };
    let mut sorted = with(&setup, opts(true));
    let mut plain = with(&setup, opts(false));
    sorted.step(200).unwrap();
    plain.step(200).unwrap();
    assert!(sorted.contact_count().unwrap() > 300, "{} contacts", sorted.contact_count().unwrap());
    assert!(common::fingerprint(&mut sorted) == common::fingerprint(&mut plain), "the schedule changed a bit of a scene with adhesion");
    let (es, ep) = (sorted.energies().unwrap(), plain.energies().unwrap());
    assert!(es.surface != 0.0, "no surface energy: adhesion is not exercised");
    assert!(sorted.force_schedule().unwrap().2, "the shuffled wet lattice does not take the schedule");
    assert_eq!(es.surface.to_bits(), ep.surface.to_bits(), "surface energy");
    assert_eq!(es.bond_break.to_bits(), ep.bond_break.to_bits(), "bond-break work");
    assert_sorted_schedule(&sorted);
}

/// Slots placed by SIMD group (`SplitLayout::places`): every slot's place is a permutation of
/// the list's slots, and within each workgroup, taken in the force pass's order and cut into
/// SIMD groups of `SCHEDULE_LANES` threads, the groups' slots follow each other and each group's
/// go column by column: the first slot of every thread, then the second of every thread that
/// has one, and so on, each column in thread order. So the threads of a SIMD group reading their
/// m-th contacts read consecutive records and shares.
fn assert_placed_by_group(b: &GpuBackend) {
    let places = b.slot_places().unwrap().expect("slots placed");
    let (order, runs, taken) = b.force_schedule().unwrap();
    let n = runs.len();
    let total = places.len();
    let mut seen = vec![false; total];
    for &p in &places {
        assert!((p as usize) < total && !seen[p as usize], "place {p} out of the {total} slots or taken twice");
        seen[p as usize] = true;
    }
    assert!(places.iter().enumerate().any(|(k, &p)| k != p as usize), "every slot at its own place: nothing was laid out");
    // the run starts, from the runs
    let mut start = vec![0u32; n + 1];
    for i in 0..n {
        start[i + 1] = start[i] + runs[i];
    }
    let group = talus::layout::consts::WORKGROUP_SIZE as usize;
    let lanes = talus::layout::consts::SCHEDULE_LANES as usize;
    for (w, window) in order[..n].chunks(group).enumerate() {
        // the force pass's order: the schedule where it is taken, else storage order
        let threads: Vec<usize> = if taken { window.iter().map(|&i| i as usize).collect() } else { (w * group..(w * group + window.len())).collect() };
        let mut next = start[w * group];
        for simd in threads.chunks(lanes) {
            let longest = simd.iter().map(|&i| runs[i]).max().unwrap_or(0);
            for m in 0..longest {
                for &i in simd.iter().filter(|&&i| runs[i] > m) {
                    let p = places[(start[i] + m) as usize];
                    assert_eq!(p, next, "workgroup {w}: particle {i}'s slot {m} at place {p}, the column layout puts it at {next}");
                    next += 1;
                }
            }
        }
    }
}

#[test]
fn slots_placed_by_simd_group_change_no_bit() {
    // the shuffled bed, renumbered on the device every 64 steps (the runs are laid out by the
    // old indices until the next build); with and without the schedule
    let setup = shuffled_bed(2000);
    let opts = |places, balanced| GpuOptions { slot_places: Some(places), balanced: Some(balanced), renumber_every: Some(64), ..GpuOptions::default() };
    let mut plain = with(&setup, opts(false, true));
    let mut placed = with(&setup, opts(true, true));
    let mut unscheduled = with(&setup, opts(true, false));
    // a list grown from 16 slots (`tests/gpu_split.rs` splits placed slots across bindings)
    let mut grown = with(&setup, GpuOptions { list_capacity: Some(16), ..opts(true, true) });
    assert!(plain.slot_places().unwrap().is_none());
    for batch in 1..=2u64 {
        for b in [&mut plain, &mut placed, &mut unscheduled, &mut grown] {
            b.step(100).unwrap();
        }
        let reference = common::fingerprint(&mut plain);
        for (what, b) in [("placed", &mut placed), ("placed, no schedule", &mut unscheduled), ("placed, grown", &mut grown)] {
            assert!(common::fingerprint(b) == reference, "{what}: a bit changed after {} steps", 100 * batch);
            assert_placed_by_group(b);
        }
        assert!(placed.force_schedule().unwrap().2, "placed slots: the force pass does not take the schedule");
    }
    assert!(grown.list_capacity() > 16, "the list never grew");
    assert!(placed.layout().unwrap().to_string().contains("slots placed by SIMD group"), "{}", placed.layout().unwrap());

    // a state export and import (a checkpoint's path): the records are read from their places
    // and written to the new list's
    let state = placed.export_state().unwrap();
    assert_eq!(state.history, plain.export_state().unwrap().history, "the exported pair history");
    let mut again_placed = with(&setup, opts(true, true));
    let mut again_plain = with(&setup, opts(false, true));
    again_placed.import_state(&state).unwrap();
    again_plain.import_state(&state).unwrap();
    for b in [&mut again_placed, &mut again_plain] {
        b.step(100).unwrap();
    }
    assert!(common::fingerprint(&mut again_placed) == common::fingerprint(&mut again_plain), "placed slots: a bit changed after an import");
    assert_placed_by_group(&again_placed);
}
