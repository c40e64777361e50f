//! Arrays split across storage bindings (`gpu::split`, issue 34): a run whose arrays are cut into
//! parts by a low binding cap is bit-identical to one that keeps them whole, through list
//! growth across a part boundary (the pipelines are compiled again with more parts), a state
//! export and import, and on the command line with `TALUS_GPU_MAX_BINDING_BYTES` (energy.csv,
//! walls.csv and every snapshot byte for byte). Needs a Vulkan driver (lavapipe is enough).

use std::path::Path;
use std::process::Command;
use talus::backend::Backend;
use talus::contact::params::ContactModel;
use talus::gpu::split::Split;
use talus::gpu::{GpuBackend, GpuOptions};
use talus::Setup;

mod common;
use common::{fingerprint, lowered_settling_box};

fn gpu(setup: &Setup, opts: GpuOptions) -> GpuBackend {
    GpuBackend::new(setup, opts).unwrap_or_else(|e| panic!("GPU backend unavailable ({e}); GPU tests need a Vulkan driver (apt-get install mesa-vulkan-drivers)"))
}

/// 1000 grains lowered onto the floor of their box: contacts form and end from the first steps.
fn settling() -> Setup {
    lowered_settling_box(1000)
}

/// At a 31.5 KiB cap the 1000-grain box's motion rows take 2 bindings and, once its list has
/// grown from 16 slots (one part) and the pipelines are compiled again, its shares and history
/// tables several each; the run matches the whole arrays bit for bit, and again after a state
/// export and import into both. The same box without rolling friction keeps two motion rows
/// (32 B a grain), which take 2 bindings at a 29.25 KiB cap. Its records keep the fields its
/// law reads (32 bytes, `RecordLayout`); once with every field (40 bytes, which do not divide a
/// part's bytes) the tables take three bindings or more.
#[test]
fn capped_bindings_change_nothing() {
    let rolling = settling();
    assert!(rolling.rolling_booked());
    let mut dry = settling();
    for p in &mut dry.pairs.entries {
        p.rolling_fric = 0.0;
    }
    assert!(!dry.rolling_booked());
    capped_bindings_match_whole(&rolling, 2304 * 14, 3, 2, false, 16, true);
    capped_bindings_match_whole(&rolling, 2304 * 14, 3, 2, false, 16, false);
    capped_bindings_match_whole(&dry, 2304 * 13, 2, 2, false, 16, false);
    // slots placed by SIMD group: two words a slot (partner word, place), in 2 parts at a
    // 31.5 KiB cap from 4032 slots on (the 16-slot list grows to 1842 only; the motion rows
    // stay whole, so that the force pass's 31 bindings fit lavapipe's 32)
    capped_bindings_match_whole(&dry, 2304 * 14, 2, 1, true, 4100, false);
}

fn capped_bindings_match_whole(setup: &Setup, cap: u64, rows: u32, motion_parts: u32, places: bool, list: u32, full_records: bool) {
    let opts = GpuOptions { slot_places: Some(places), full_records: Some(full_records), ..GpuOptions::default() };
    let mut whole = gpu(setup, opts.clone());
    let mut cut = gpu(setup, GpuOptions { max_binding_bytes: Some(cap), list_capacity: Some(list), ..opts.clone() });
    assert_eq!(cut.split_layout().motion_rows, rows);
    assert_eq!(cut.split_layout().places, places);
    assert_eq!(cut.split_layout().parts(Split::Motion), motion_parts, "1000 particles × {} B of motion rows at a {cap}-byte cap", 16 * rows);
    for batch in 1..=3u64 {
        whole.step(40).unwrap();
        cut.step(40).unwrap();
        assert!(fingerprint(&mut whole) == fingerprint(&mut cut), "{rows} motion rows: split arrays differ from whole ones after {} steps", 40 * batch);
    }
    let grown = cut.split_layout().clone();
    assert!(cut.list_capacity() > 16, "the list never grew from 16 slots");
    assert_eq!(grown.record == talus::gpu::split::RecordLayout::FULL, full_records);
    assert!(grown.parts(Split::History) >= if full_records { 3 } else { 2 }, "the grown list's history tables should take several bindings: {grown:?}");
    assert!(grown.parts(Split::Shares) >= 2, "the grown list's shares should take several bindings: {grown:?}");
    assert!(grown.describe().is_some_and(|d| d.contains("slot history")), "{:?}", grown.describe());
    if places {
        assert!(grown.parts(Split::ListPartner) >= 2, "the grown list's partner words and places should take several bindings: {grown:?}");
    }
    assert!(whole.split_layout().describe().is_none(), "nothing is split without a cap");

    // a state export and import (a checkpoint's path) with the arrays cut
    let state = cut.export_state().unwrap();
    assert!(state.history.iter().any(|c| c.partner & talus::layout::consts::WALL_KEY_BIT == 0), "no pair history to carry: the import test proves nothing");
    let mut cut_again = gpu(setup, GpuOptions { max_binding_bytes: Some(cap), ..opts.clone() });
    let mut whole_again = gpu(setup, opts);
    cut_again.import_state(&state).unwrap();
    whole_again.import_state(&state).unwrap();
    for b in [&mut cut_again, &mut whole_again] {
        b.step(40).unwrap();
    }
    assert!(fingerprint(&mut cut_again) == fingerprint(&mut whole_again), "{rows} motion rows: split and whole arrays differ after an import");
}

/// A binding cap too low for the positions of every particle is refused with the limit named.
#[test]
fn too_low_a_cap_is_refused() {
    match GpuBackend::new(&settling(), GpuOptions { max_binding_bytes: Some(2304 * 4), ..GpuOptions::default() }) {
        Err(e) => assert!(e.to_string().contains("576 particles") && e.to_string().contains("9216 bytes"), "{e}"),
        Ok(_) => panic!("1000 particles cannot have 16-byte arrays in a 9216-byte binding"),
    }
}

/// `talus run` with `TALUS_GPU_MAX_BINDING_BYTES` = 1 MiB: the 10k settle box's history tables
/// (35,000 slots × 32 B) take two bindings each, and every output is byte-identical to the run
/// without the cap. The fill starts on the floor (its box lowered by the 2 mm that the shipped
/// scene leaves under it), so that contacts, and with them the split history tables, are live
/// from the first steps of the 300 (the shipped scene falls about 850 steps before its first
/// contact, so 500 steps of it left the tables empty).
#[test]
fn capped_run_writes_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/settle_box.json");
    let mut scene: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&source).unwrap()).unwrap();
    scene["snapshot_every"] = 2.into();
    let fill = &mut scene["generators"][0]["box"];
    assert_eq!((fill["min"][2].as_f64(), fill["max"][2].as_f64()), (Some(0.002), Some(0.062)), "settle_box's fill box");
    fill["min"][2] = 0.0.into();
    fill["max"][2] = 0.06.into();
    let path = dir.path().join("settle_box_snapshots.json");
    std::fs::write(&path, serde_json::to_string(&scene).unwrap()).unwrap();
    let run = |out: &str, cap: Option<&str>| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_talus"));
        cmd.args(["run", path.to_str().unwrap(), "--backend", "gpu", "--steps", "300", "--no-progress", "--out"]).arg(dir.path().join(out)).env("NO_COLOR", "1");
        if let Some(cap) = cap {
            cmd.env(talus::gpu::split::MAX_BINDING_ENV, cap);
        }
        let o = cmd.output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert!(o.status.success(), "talus run failed: {err}");
        err
    };
    let plain = run("plain", None);
    let capped = run("capped", Some("1048576"));
    assert!(!plain.contains("split across storage bindings"), "{plain}");
    assert!(capped.contains("arrays split across storage bindings of at most 1048320 bytes") && capped.contains("slot history (each table) 2 parts"), "{capped}");
    let mut compared = 0;
    for entry in std::fs::read_dir(dir.path().join("plain")).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            for inner in std::fs::read_dir(entry.path()).unwrap() {
                let inner = inner.unwrap().path();
                let rel = inner.strip_prefix(dir.path().join("plain")).unwrap().to_path_buf();
                let b = std::fs::read(dir.path().join("capped").join(&rel)).unwrap();
                assert!(std::fs::read(&inner).unwrap() == b, "{} differs between the capped and the plain run", rel.display());
                compared += 1;
            }
            continue;
        }
        let name = entry.file_name().into_string().unwrap();
        if name.ends_with(".csv") || name.ends_with(".vtu") || name.ends_with(".pvd") {
            let a = std::fs::read(dir.path().join("plain").join(&name)).unwrap();
            let b = std::fs::read(dir.path().join("capped").join(&name)).unwrap();
            assert!(a == b, "{name} differs between the capped and the plain run");
            compared += 1;
        }
    }
    // energy.csv, walls.csv, particles.pvd and the snapshots (outputs 0, 2 and the last)
    assert!(compared >= 6, "only {compared} output files compared");
    // the history tables held contacts: strain energy at the last output
    let energy = std::fs::read_to_string(dir.path().join("plain/energy.csv")).unwrap();
    let header: Vec<&str> = energy.lines().next().unwrap().split(',').collect();
    let strain = header.iter().position(|h| *h == "strain").unwrap();
    let last: f64 = energy.lines().last().unwrap().split(',').nth(strain).unwrap().parse().unwrap();
    assert!(last > 0.0, "no contact at the end of the run: the split history tables held nothing");
}

/// The bytes planned before a set-up is uploaded (what the check against the adapter's memory
/// uses) are the bytes its buffers then take; the motion rows are three only where rolling work
/// is booked (the rolling friction of `hertz_mindlin` in the bench's scenes), and then take 16
/// B/particle more.
#[test]
fn planned_bytes_are_the_bytes_made() {
    let mut made_bytes = Vec::new();
    for (setup, rows) in [(settling(), 3), (talus::bench::bed_setup(3000, ContactModel::Hertz), 2), (talus::bench::bed_setup(3000, ContactModel::HertzMindlin), 3)] {
        assert_eq!(setup.rolling_booked(), rows == 3);
        let g = gpu(&setup, GpuOptions::default());
        assert_eq!(g.split_layout().motion_rows, rows);
        let (planned, made) = g.buffer_bytes();
        assert_eq!(planned, made, "planned {planned} bytes, made {made}");
        made_bytes.push(made);
    }
    // the two beds hold the same particles and walls, lists and tables
    let (hertz, mindlin) = (made_bytes[1], made_bytes[2]);
    let n = talus::bench::bed_setup(3000, ContactModel::Hertz).particles.len() as u64;
    assert_eq!(mindlin - hertz, 16 * n, "the third motion row of {n} particles");
    // list slots carrying their place: 4 bytes more a slot, and the force pass's column starts
    // (4 bytes a particle, rounded up to a workgroup)
    let g = gpu(&talus::bench::bed_setup(3000, ContactModel::Hertz), GpuOptions { slot_places: Some(true), ..GpuOptions::default() });
    let (planned, made) = g.buffer_bytes();
    assert_eq!(planned, made, "slots placed: planned {planned} bytes, made {made}");
    let columns = 4 * n.div_ceil(64) * 64;
    let grew = made - hertz;
    assert!(grew.abs_diff(4 * g.list_capacity() as u64 + columns) <= 16, "{grew} bytes more: a place per slot of {} slots and {columns} bytes of column starts", g.list_capacity());
}

/// A set-up larger than the device's memory is refused before anything is made, with the count
/// that would fit.
#[test]
fn a_set_up_larger_than_the_device_is_refused() {
    let gb = 1_000_000_000u64;
    let e = talus::gpu::check_fits(20_000_000, 11 * gb, 70_000_000, Some(8 * gb), 2 * gb, "a card").unwrap_err().to_string();
    assert!(e.contains("20000000 particles need 11.00 GB") && e.contains("a card has 8.00 GB") && e.contains("about 14545454 particles fit"), "{e}");
    // a binding of 1 GB holds 62.5M 16-byte rows: the count that fits is the lesser
    let e = talus::gpu::check_fits(200_000_000, 110 * gb, 700_000_000, Some(80 * gb), gb, "a card").unwrap_err().to_string();
    assert!(e.contains("about 62500000 particles fit"), "{e}");
    assert!(talus::gpu::check_fits(20_000_000, 11 * gb, 70_000_000, None, 2 * gb, "a card").is_ok(), "no memory size, no refusal");
    assert!(talus::gpu::check_fits(1000, gb, 3500, Some(8 * gb), 2 * gb, "a card").is_ok());
}

/// `TALUS_GPU_MAX_DEVICE_BYTES` lowers the device memory the backend plans with: the 10k settle
/// box does not fit 2 MB, and `talus run` refuses it before it starts, naming the budget and the
/// count that fits; a value that is not a number of bytes is refused naming the variable.
#[test]
fn a_device_memory_budget_is_a_refusal_before_the_start() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenes/settle_box.json");
    let dir = tempfile::tempdir().unwrap();
    let run = |value: &str, out: &str| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_talus"));
        cmd.args(["run", path.to_str().unwrap(), "--backend", "gpu", "--steps", "10", "--no-progress", "--out"]).arg(dir.path().join(out)).env(talus::gpu::MAX_DEVICE_ENV, value);
        cmd.output().unwrap()
    };
    let o = run("2000000", "small");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("10000 particles need") && err.contains("memory budget") && err.contains("particles fit"), "{err}");
    assert!(!dir.path().join("small").join("energy.csv").exists(), "nothing is written before the refusal");
    let o = run("lots", "bad");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("TALUS_GPU_MAX_DEVICE_BYTES = `lots`"), "{err}");
}

/// A neighbour list that must grow past the device memory budget (here the bytes the set-up
/// made, with a list of 16 slots, plus 1 kB) is refused with a message naming the slots and the
/// memory, instead of making the buffers anyway; with room, the same list grows.
#[test]
fn a_list_growth_beyond_the_memory_budget_is_refused() {
    let setup = talus::bench::bed_setup(1000, ContactModel::Hertz);
    let small = GpuOptions { list_capacity: Some(16), ..GpuOptions::default() };
    let made = gpu(&setup, small.clone()).device_bytes();
    // the bed's contacts overflow the 16 slots at the set-up's first force evaluation
    let e = GpuBackend::new(&setup, GpuOptions { max_device_bytes: Some(made + 1000), ..small.clone() }).err().expect("refused").to_string();
    assert!(e.contains("step 0: the neighbour list needs") && e.contains("memory budget") && e.contains("MB held"), "{e}");
    let mut roomy = gpu(&setup, GpuOptions { max_device_bytes: Some(3 * made), ..small });
    roomy.step(5).unwrap();
    assert!(roomy.list_capacity() > 16);
}

/// The same for the wall-contact tables: their growth holds the old tables beside the new.
#[test]
fn a_wall_table_growth_beyond_the_memory_budget_is_refused() {
    let setup = talus::bench::bed_setup(1000, ContactModel::Hertz);
    let small = GpuOptions { hash_capacity: Some(4), ..GpuOptions::default() };
    let made = gpu(&setup, small.clone()).device_bytes();
    // the bed's floor contacts overflow the 4-slot tables in the first step (the initial force
    // evaluation writes no history)
    let mut tight = gpu(&setup, GpuOptions { max_device_bytes: Some(made + 100), ..small.clone() });
    let e = tight.step(5).err().expect("refused").to_string();
    assert!(e.contains("step 0: the wall-contact tables overflowed at 4 slots") && e.contains("memory budget") && e.contains("MB held"), "{e}");
    let mut roomy = gpu(&setup, GpuOptions { max_device_bytes: Some(3 * made), ..small });
    roomy.step(5).unwrap();
    assert!(roomy.hash_capacity() > 4);
}

/// The slot records keep only the fields their set-up's laws read (`RecordLayout::of_setup`):
/// 32 bytes for a Hertz-family law with energy booked, 16 without it, 24 with the impact
/// velocity of the hooke and hysteretic laws and no energy booked, 40 for those with energy
/// booked. Each such run is bit-identical to one that stores every field
/// (`GpuOptions::full_records`): trajectories, forces and energies, the exported pair history
/// (but for the shear compliance, which only booked energy reads and an untracked run does
/// not keep), and a run resumed from it; and its two tables take what the layout says less.
#[test]
fn slot_records_keep_what_the_laws_read_and_change_no_bit() {
    use talus::gpu::split::RecordLayout;
    let untracked = |mut s: Setup| {
        s.pairs.entries.iter_mut().for_each(|p| p.energy_tracking = false);
        s
    };
    let hysteretic = || {
        let mut s = settling();
        s.pairs.entries.iter_mut().for_each(|p| p.model = ContactModel::Hysteretic);
        s
    };
    let cases = [
        ("hertz_mindlin, energy booked", settling(), RecordLayout::HERTZ_BOOKED),
        ("hertz_mindlin, untracked", untracked(settling()), RecordLayout::HERTZ_UNTRACKED),
        ("hysteretic, untracked", untracked(hysteretic()), RecordLayout { impact: true, booked: false }),
        ("hysteretic, energy booked", hysteretic(), RecordLayout::FULL),
    ];
    for (what, setup, record) in cases {
        assert_eq!(RecordLayout::of_setup(&setup), record, "{what}");
        let mut lean = gpu(&setup, GpuOptions { full_records: Some(false), ..GpuOptions::default() });
        let mut full = gpu(&setup, GpuOptions { full_records: Some(true), ..GpuOptions::default() });
        assert_eq!((lean.split_layout().record, full.split_layout().record), (record, RecordLayout::FULL), "{what}");
        let slots = lean.list_capacity() as u64;
        assert_eq!(lean.list_capacity(), full.list_capacity());
        assert_eq!(full.device_bytes() - lean.device_bytes(), 2 * slots * (40 - record.bytes()), "{what}: the two tables' bytes");
        for batch in 1..=3u64 {
            lean.step(40).unwrap();
            full.step(40).unwrap();
            assert!(fingerprint(&mut lean) == fingerprint(&mut full), "{what}: a bit changed after {} steps", 40 * batch);
            assert_eq!(format!("{:?}", lean.energies().unwrap()), format!("{:?}", full.energies().unwrap()), "{what}: the energies after {} steps", 40 * batch);
        }
        // the exported history (a checkpoint's) is the same, and so is a run resumed from it
        let state = lean.export_state().unwrap();
        assert!(state.history.iter().any(|c| c.partner & talus::layout::consts::WALL_KEY_BIT == 0), "{what}: no pair history to carry");
        let mut full_history = full.export_state().unwrap().history;
        if !record.booked {
            // (pairs only: the wall tables keep every field)
            let mut pairs = full_history.iter_mut().filter(|c| c.partner & talus::layout::consts::WALL_KEY_BIT == 0).peekable();
            assert!(pairs.peek().is_some());
            let mut left_out = 0;
            for c in pairs {
                left_out += (c.history.shear_compliance != 0.0) as usize;
                c.history.shear_compliance = 0.0;
            }
            assert!(left_out > 0, "{what}: no compliance to leave out");
        }
        assert_eq!(state.history, full_history, "{what}: the exported pair history");
        let mut lean_again = gpu(&setup, GpuOptions { full_records: Some(false), ..GpuOptions::default() });
        let mut full_again = gpu(&setup, GpuOptions { full_records: Some(true), ..GpuOptions::default() });
        lean_again.import_state(&state).unwrap();
        full_again.import_state(&state).unwrap();
        for b in [&mut lean_again, &mut full_again] {
            b.step(40).unwrap();
        }
        assert!(fingerprint(&mut lean_again) == fingerprint(&mut full_again), "{what}: a bit changed after an import");
        assert_eq!(format!("{:?}", lean_again.energies().unwrap()), format!("{:?}", full_again.energies().unwrap()), "{what}: the energies after an import");
    }
}
