//! Runs under `mpirun` (feature `mpi`; docs/mpi.md): the exact global sum has the same bits on
//! 1, 2 and 3 ranks, `talus info` prints the rank count, a command that cannot run on several
//! ranks is refused on all of them, and the decomposed CPU backend gives the 1-rank run bit for
//! bit (logs, snapshots and checkpoints) on 2 and 3 ranks for the settle box split along x and
//! along y, the periodic chute across its periodic boundary, the hopper (insertion, outlet,
//! mesh) and the rotating drum (moving mesh); a checkpoint of 2 ranks resumes on 1 and 3, and a
//! failure on one rank stops all with one message and one exit status.
//!
//! Needs OpenMPI (`apt-get install -y libopenmpi-dev openmpi-bin libclang-dev`) and
//! `cargo test --release --features mpi --test mpi` (`bash tests/mpi.sh`, part of the README's
//! test command); the default build compiles this file to nothing. The rank programs are this test binary itself, started
//! by `mpirun` with the ignored test `mpi_child` selected.
#![cfg(feature = "mpi")]

use std::path::Path;
use std::process::{Command, Output};

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use talus::checkpoint::{Checkpoint, CHECKPOINT_FILE};
use talus::exact_sum::ExactSum;
use talus::ranks::Ranks;

const VALUES: usize = 100_003;

/// The data every rank generates alike: finite values with exponents from the subnormals to
/// 2^900, random signs, and near-cancelling partners.
fn values() -> Vec<f64> {
    let mut rng = Pcg64::seed_from_u64(35);
    let mut v = Vec::with_capacity(VALUES);
    while v.len() < VALUES {
        let biased = rng.random_range(0..1023 + 900u64);
        let frac = rng.random::<u64>() & ((1u64 << 52) - 1);
        let x = f64::from_bits((rng.random::<bool>() as u64) << 63 | biased << 52 | frac);
        v.push(x);
        if rng.random_range(0..4) == 0 && v.len() < VALUES {
            v.push(-x * (1.0 + f64::EPSILON));
        }
    }
    v
}

/// Rank r's share of n values among `size` ranks: uneven contiguous blocks (the first rank's is
/// the smallest), so the grouping differs with the rank count.
fn share(n: usize, rank: usize, size: usize) -> std::ops::Range<usize> {
    let weight = |r: usize| r + 1;
    let total: usize = (0..size).map(weight).sum();
    let start: usize = (0..rank).map(weight).sum::<usize>() * n / total;
    let end: usize = (0..=rank).map(weight).sum::<usize>() * n / total;
    start..end
}

fn mpirun(np: usize, program: &str, args: &[&str]) -> Output {
    let out = Command::new("mpirun")
        .args(["--oversubscribe", "--bind-to", "none", "-np", &np.to_string(), program])
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_mpi_yield_when_idle", "1")
        .env("RUST_TEST_THREADS", "1")
        .output();
    out.unwrap_or_else(|e| panic!("cannot start mpirun ({e}): install OpenMPI (`apt-get install -y libopenmpi-dev openmpi-bin`)"))
}

/// One rank of `exact_sum_has_the_same_bits_on_1_2_and_3_ranks` (run by mpirun only).
#[test]
#[ignore = "a rank program: started by mpirun from exact_sum_has_the_same_bits_on_1_2_and_3_ranks"]
fn mpi_child() {
    let ranks = Ranks::init().unwrap();
    // MPI is initialised once per process
    let again = Ranks::init().err().expect("a second Ranks::init must fail");
    assert!(again.contains("already initialised"), "{again}");
    let v = values();
    let mine = &v[share(v.len(), ranks.rank(), ranks.size())];
    let local = ExactSum::sum_of(mine.iter().copied());
    let global = ranks.sum_exact(&local);
    // every rank holds all the data, so each checks the reduction against the whole sum
    let whole = ExactSum::sum_of(v.iter().copied());
    assert_eq!(global.value().to_bits(), whole.value().to_bits(), "rank {}", ranks.rank());
    assert_eq!(global.to_limbs(), whole.to_limbs(), "rank {}", ranks.rank());
    assert_eq!(ranks.sum_u64(mine.len() as u64), v.len() as u64);
    let local_max = mine.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let max = ranks.max_f64(local_max);
    assert_eq!(max, v.iter().copied().fold(f64::NEG_INFINITY, f64::max));
    // a NaN on one rank is the maximum's NaN on all
    assert!(ranks.max_f64(if ranks.rank() + 1 == ranks.size() { f64::NAN } else { 1.0 }).is_nan());
    // +inf on rank 0, −inf on the last: NaN on every rank of a run with more than one
    let inf = ExactSum::sum_of([if ranks.rank() == 0 { f64::INFINITY } else { 1.0 }, if ranks.rank() + 1 == ranks.size() { f64::NEG_INFINITY } else { 1.0 }]);
    assert!(ranks.sum_exact(&inf).value().is_nan());
    if ranks.is_root() {
        println!("TALUS-MPI ranks {} sum 0x{:016x} max 0x{:016x}", ranks.size(), global.value().to_bits(), max.to_bits());
    }
}

#[test]
fn exact_sum_has_the_same_bits_on_1_2_and_3_ranks() {
    let v = values();
    let whole = ExactSum::sum_of(v.iter().copied()).value();
    // the data is sensitive to grouping: plain f64 partial sums per rank, added up, differ
    let naive = |size: usize| (0..size).map(|r| v[share(v.len(), r, size)].iter().sum::<f64>()).sum::<f64>();
    let plain = [naive(1), naive(2), naive(3)];
    assert!(plain[0] != plain[1] && plain[0] != plain[2] && plain[1] != plain[2], "the test data should tell groupings apart: {plain:?}");
    assert!(plain.iter().all(|&p| p != whole), "plain sums {plain:?} against the exact {whole:e}");
    let exe = std::env::current_exe().unwrap();
    for np in [1usize, 2, 3] {
        let out = mpirun(np, exe.to_str().unwrap(), &["--exact", "mpi_child", "--ignored", "--nocapture"]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "mpirun -np {np}: {}\n{stdout}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
        // (the harness's "test mpi_child ... " may precede it on the line)
        let lines: Vec<&str> = stdout.lines().filter_map(|l| l.find("TALUS-MPI ").map(|k| &l[k..])).collect();
        assert_eq!(lines.len(), 1, "mpirun -np {np}: one report from rank 0:\n{stdout}");
        let expected = format!("TALUS-MPI ranks {np} sum 0x{:016x} max 0x{:016x}", whole.to_bits(), v.iter().copied().fold(f64::NEG_INFINITY, f64::max).to_bits());
        assert_eq!(lines[0], expected, "mpirun -np {np}");
        // each rank ran the child test (mpirun's status says they all passed); the harness writes
        // "test result: ok" in pieces, which two ranks' output can interleave ("okok. 1 passed"),
        // while "test mpi_child" is one write
        assert_eq!(stdout.matches("test mpi_child").count(), np, "mpirun -np {np}:\n{stdout}");
    }
}

#[test]
fn talus_info_prints_the_rank_count() {
    let out = mpirun(2, env!("CARGO_BIN_EXE_talus"), &["info"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    // rank 0 speaks for the run
    assert_eq!(stdout.matches("MPI ranks: 2 (built with the `mpi` feature)").count(), 1, "{stdout}");
    assert_eq!(stdout.matches("CPU threads:").count(), 1, "{stdout}");
    // one rank alone, without mpirun: an MPI singleton
    let out = Command::new(env!("CARGO_BIN_EXE_talus")).arg("info").output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("MPI ranks: 1 (built with the `mpi` feature)"));
}

#[test]
fn other_commands_on_several_ranks_are_refused_on_all_of_them() {
    let out = mpirun(2, env!("CARGO_BIN_EXE_talus"), &["bench", "--particles", "1000", "--steps", "10"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert_eq!(stderr.matches("2 MPI ranks: `talus run`, `talus resume` and `talus info` run on several ranks").count(), 1, "{stderr}");
}

/// `talus run` of `scene` on `np` ranks (1: without mpirun) into `out`, CPU backend, one rayon
/// thread per rank; `args` added.
fn talus_run(np: usize, scene: &str, out: &Path, args: &[&str]) -> Output {
    talus(np, &[&["run", scene, "--backend", "cpu", "--no-progress", "--out", out.to_str().unwrap()], args].concat())
}

fn talus(np: usize, args: &[&str]) -> Output {
    let exe = env!("CARGO_BIN_EXE_talus");
    let out = if np == 1 {
        Command::new(exe).args(args).env("RAYON_NUM_THREADS", "1").output().unwrap()
    } else {
        mpirun(np, "env", &[&["RAYON_NUM_THREADS=1", exe], args].concat())
    };
    out
}

fn scene(name: &str) -> String {
    format!("{}/scenes/{name}.json", env!("CARGO_MANIFEST_DIR"))
}

/// Byte-identical logs and snapshots, and checkpoints that hold the same state bit for bit.
fn assert_same_outputs(a: &Path, b: &Path, what: &str) {
    let mut compared = 0;
    for f in ["energy.csv", "walls.csv", "outflow.csv"] {
        if a.join(f).exists() {
            assert_eq!(std::fs::read(a.join(f)).unwrap(), std::fs::read(b.join(f)).unwrap_or_default(), "{what}: {f} differs");
            compared += 1;
        }
    }
    assert!(compared > 0, "{what}: no logs in {}", a.display());
    if let Ok(dir) = std::fs::read_dir(a.join("snapshots")) {
        for e in dir {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap();
            assert!(std::fs::read(&p).unwrap() == std::fs::read(b.join("snapshots").join(name)).unwrap_or_default(), "{what}: snapshot {} differs", name.to_string_lossy());
        }
    }
    let (ca, cb) = (Checkpoint::read(&a.join(CHECKPOINT_FILE)).unwrap(), Checkpoint::read(&b.join(CHECKPOINT_FILE)).unwrap());
    let (sa, sb) = (&ca.state, &cb.state);
    assert_eq!(sa.step, sb.step, "{what}");
    assert_eq!(sa.len(), sb.len(), "{what}: particle counts");
    let bits = |v: &Vec<[f64; 3]>| v.iter().flat_map(|x| x.map(f64::to_bits)).collect::<Vec<u64>>();
    for (name, x, y) in [("position", &sa.particles.position, &sb.particles.position), ("velocity", &sa.particles.velocity, &sb.particles.velocity), ("angular velocity", &sa.particles.angular_velocity, &sb.particles.angular_velocity), ("force", &sa.force, &sb.force), ("torque", &sa.torque, &sb.torque)] {
        assert!(bits(x) == bits(y), "{what}: checkpoint {name}s differ");
    }
    assert_eq!(sa.image, sb.image, "{what}: images");
    assert!(sa.history == sb.history, "{what}: contact histories differ ({} and {} records)", sa.history.len(), sb.history.len());
    assert!(ca.exact.work.iter().flatten().map(|w| w.to_bits()).eq(cb.exact.work.iter().flatten().map(|w| w.to_bits())), "{what}: per-particle work differs");
    assert_eq!(ca.exact.raw, cb.exact.raw, "{what}: the CPU backend's exact arrays differ");
    assert_eq!(ca.meta.carried, cb.meta.carried, "{what}: carried energies");
}

fn ok(out: &Output, what: &str) {
    assert!(out.status.success(), "{what}: {}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
}

/// `scene` run for `steps` on 1 rank and on each of `splits` (rank count and `--set`s).
/// Every `--set` that is not a `decomposition` is given to the 1-rank run too.
fn bit_identity(name: &str, steps: u64, splits: &[(usize, &[&str])]) {
    let dir = tempfile::tempdir().unwrap();
    let steps = steps.to_string();
    let one = dir.path().join("np1");
    let mut args = vec!["--steps", &steps];
    for s in splits.iter().flat_map(|(_, set)| set.iter()).filter(|s| !s.starts_with("decomposition")).take(1) {
        args.extend(["--set", s]);
    }
    ok(&talus_run(1, &scene(name), &one, &args), name);
    for (k, (np, set)) in splits.iter().enumerate() {
        let out = dir.path().join(format!("split{k}"));
        let mut args = vec!["--steps", &steps];
        for s in *set {
            args.extend(["--set", s]);
        }
        let what = format!("{name} on {np} ranks {set:?}");
        let run = talus_run(*np, &scene(name), &out, &args);
        ok(&run, &what);
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(stderr.contains(&format!("{np} MPI ranks")), "{what}: {stderr}");
        assert_same_outputs(&one, &out, &what);
    }
}

#[test]
fn settle_box_split_along_x_y_and_z_balanced_matches_one_rank_bit_for_bit() {
    bit_identity("settle_box", 1500, &[(2, &[r#"decomposition={"bricks":[2,1,1]}"#]), (2, &[r#"decomposition={"bricks":[1,2,1]}"#]), (3, &[r#"decomposition={"bricks":[3,1,1]}"#]), (2, &[r#"decomposition={"bricks":[1,1,2],"balance":"shift"}"#])]);
}

#[test]
fn periodic_chute_across_its_periodic_boundary_matches_one_rank_bit_for_bit() {
    // contacts form from step 4164
    bit_identity("periodic_chute", 5000, &[(2, &[r#"decomposition={"bricks":[2,1,1]}"#]), (3, &[r#"decomposition={"bricks":[3,1,1]}"#])]);
}

#[test]
fn hopper_with_insertion_outlet_and_mesh_matches_one_rank_bit_for_bit() {
    // the outlet raised into the falling stream, so that it removes particles from about step
    // 2,600 (at its place in the scene the first leaves at step 26,936); contacts from 2,072
    let outlet = "outlets.0.plane.point=[0,0,0.03]";
    bit_identity("hopper_discharge", 4000, &[(2, &[outlet]), (3, &[outlet])]);
}

#[test]
fn rotating_drum_with_its_moving_mesh_matches_one_rank_bit_for_bit() {
    // contacts from step 952
    bit_identity("rotating_drum", 2000, &[(2, &[]), (3, &[])]);
}

/// Logs of two runs that may differ in the last bits of their sums: the same rows and labels,
/// every number within 1e-5 of its column's largest magnitude (`talus verify` allows 1e-2
/// between backends).
fn assert_close_logs(a: &Path, b: &Path, file: &str, what: &str) {
    let read = |p: &Path| std::fs::read_to_string(p.join(file)).unwrap();
    let (ta, tb) = (read(a), read(b));
    let rows = |t: &str| -> Vec<Vec<String>> { t.lines().skip(1).map(|l| l.split(',').map(str::to_string).collect()).collect() };
    let (ra, rb) = (rows(&ta), rows(&tb));
    assert_eq!(ta.lines().next(), tb.lines().next(), "{what}: {file} headers");
    assert_eq!(ra.len(), rb.len(), "{what}: {file} rows");
    assert!(ra.len() > 2, "{what}: {file} has too few rows");
    let num = |v: &str| v.parse::<f64>().ok();
    for c in 0..ra[0].len() {
        let scale = ra.iter().filter_map(|r| num(&r[c])).map(f64::abs).fold(0.0, f64::max);
        for (x, y) in ra.iter().zip(&rb) {
            match (num(&x[c]), num(&y[c])) {
                (Some(p), Some(q)) => assert!((p - q).abs() <= 1e-5 * scale, "{what}: {file} column {c} at step {}: {p} and {q}", x[0]),
                _ => assert_eq!(x[c], y[c], "{what}: {file} column {c}"),
            }
        }
    }
}

/// Every snapshot of `b` byte for byte the same-named one of `a` (at least `at_least` of them).
fn assert_same_snapshots(a: &Path, b: &Path, at_least: usize, what: &str) {
    let mut compared = 0;
    for e in std::fs::read_dir(b.join("snapshots")).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap();
        assert!(std::fs::read(&p).unwrap() == std::fs::read(a.join("snapshots").join(name)).unwrap_or_default(), "{what}: snapshot {} differs", name.to_string_lossy());
        compared += 1;
    }
    assert!(compared >= at_least, "{what}: {compared} snapshots");
}

/// The checkpoints of two GPU runs at the same step: positions, velocities, spins, forces,
/// torques, images, contact histories and the device's per-particle rows bit for bit.
fn assert_same_gpu_checkpoints(a: &Path, b: &Path, what: &str) {
    let (ca, cb) = (Checkpoint::read(&a.join(CHECKPOINT_FILE)).unwrap(), Checkpoint::read(&b.join(CHECKPOINT_FILE)).unwrap());
    let (sa, sb) = (&ca.state, &cb.state);
    assert_eq!((sa.step, sa.len()), (sb.step, sb.len()), "{what}");
    let bits = |v: &Vec<[f64; 3]>| v.iter().flat_map(|x| x.map(f64::to_bits)).collect::<Vec<u64>>();
    for (name, x, y) in [("position", &sa.particles.position, &sb.particles.position), ("velocity", &sa.particles.velocity, &sb.particles.velocity), ("angular velocity", &sa.particles.angular_velocity, &sb.particles.angular_velocity), ("force", &sa.force, &sb.force), ("torque", &sa.torque, &sb.torque)] {
        assert!(bits(x) == bits(y), "{what}: checkpoint {name}s differ");
    }
    assert_eq!(sa.image, sb.image, "{what}: images");
    assert!(sa.history.len() > 300, "{what}: {} contacts", sa.history.len());
    assert!(sa.history == sb.history, "{what}: contact histories differ ({} and {} records)", sa.history.len(), sb.history.len());
    // one device stores its rows in cell order, the ranks in id order (`gpu::order`): by id
    let (ea, eb) = (talus::gpu::checkpoint::in_id_order(&ca.exact).unwrap(), talus::gpu::checkpoint::in_id_order(&cb.exact).unwrap());
    for name in ["pos_block", "pos_offset", "motion", "force", "image"] {
        assert!(ea.raw(name).unwrap() == eb.raw(name).unwrap(), "{what}: the device's `{name}` rows differ");
    }
}

/// The GPU backend (lavapipe here) on several ranks against one device: the same trajectory
/// bit for bit (snapshots byte for byte, the checkpoints' state and device rows), energies and
/// wall loads within 1e-5 (f32 tree sums over the particles each device holds). On 2 ranks
/// for the whole run; on 3 ranks for its first half, whose checkpoint one device resumes.
#[test]
fn gpu_on_2_and_3_ranks_follows_the_one_device_trajectory_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    // 2,000 grains poured from 12 mm: on the floor from about step 300, 368 contacts at the end
    // (pairs and walls); a snapshot at every output (every 100 steps)
    let set = ["--set", "generators.0.count=2000", "--set", "generators.0.box.max=[0.08,0.08,0.012]", "--set", "snapshot_every=1"];
    let run = |np: usize, out: &Path, extra: &[&str]| talus(np, &[&["run", &scene("settle_box"), "--backend", "gpu", "--no-progress", "--out", out.to_str().unwrap()], &set[..], extra].concat());
    let one = dir.path().join("np1");
    ok(&run(1, &one, &["--steps", "1500"]), "one device");
    let two = dir.path().join("np2");
    let r = run(2, &two, &["--steps", "1500", "--set", r#"decomposition={"bricks":[2,1,1]}"#]);
    ok(&r, "GPU on 2 ranks");
    assert!(String::from_utf8_lossy(&r.stderr).contains("2 MPI ranks"), "{}", String::from_utf8_lossy(&r.stderr));
    assert_same_snapshots(&one, &two, 16, "GPU on 2 ranks");
    assert_close_logs(&one, &two, "energy.csv", "GPU on 2 ranks");
    assert_close_logs(&one, &two, "walls.csv", "GPU on 2 ranks");
    assert_same_gpu_checkpoints(&one, &two, "GPU on 2 ranks");
    let three = dir.path().join("np3");
    ok(&run(3, &three, &["--steps", "800", "--set", r#"decomposition={"bricks":[1,3,1]}"#]), "GPU on 3 ranks");
    assert_same_snapshots(&one, &three, 9, "GPU on 3 ranks");
    let resumed = dir.path().join("resumed");
    let ckpt = three.join(CHECKPOINT_FILE);
    ok(&talus(1, &["resume", ckpt.to_str().unwrap(), "--steps", "700", "--backend", "gpu", "--no-progress", "--out", resumed.to_str().unwrap()]), "3 GPU ranks, resumed on one device");
    assert_same_snapshots(&one, &resumed, 7, "3 GPU ranks, then one device");
    assert_same_gpu_checkpoints(&one, &resumed, "3 GPU ranks, then one device");
}

#[test]
fn a_checkpoint_written_by_2_ranks_resumes_on_1_and_3_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole");
    ok(&talus_run(1, &scene("settle_box"), &whole, &["--steps", "2400"]), "the whole run");
    let two = dir.path().join("two");
    ok(&talus_run(2, &scene("settle_box"), &two, &["--steps", "1200"]), "the first half on 2 ranks");
    for np in [1, 3] {
        let out = dir.path().join(format!("resumed{np}"));
        let ckpt = two.join(CHECKPOINT_FILE);
        ok(&talus(np, &["resume", ckpt.to_str().unwrap(), "--steps", "1200", "--backend", "cpu", "--no-progress", "--out", out.to_str().unwrap()]), &format!("resumed on {np}"));
        assert_same_outputs(&whole, &out, &format!("2 ranks, then {np}"));
    }
}

#[test]
fn a_failure_on_one_rank_stops_every_rank_with_one_message_and_status() {
    let dir = tempfile::tempdir().unwrap();
    // far too long a step: the settling spheres overlap beyond the run-time check's limit
    let set = ["--set", "time_step=4e-4", "--set", "time_step_fraction=null", "--set", "time_step_check=warn", "--set", "output.every_steps=50"];
    let one = talus_run(1, &scene("settle_box"), &dir.path().join("np1"), &[&["--steps", "3000"], &set[..]].concat());
    let three = talus_run(3, &scene("settle_box"), &dir.path().join("np3"), &[&["--steps", "3000"], &set[..]].concat());
    assert_eq!(one.status.code(), Some(3), "one rank blows up: {}", String::from_utf8_lossy(&one.stderr));
    assert_eq!(three.status.code(), Some(3), "3 ranks: {}", String::from_utf8_lossy(&three.stderr));
    let stderr = String::from_utf8_lossy(&three.stderr);
    assert_eq!(stderr.matches("run stopped at step").count(), 1, "rank 0 alone reports: {stderr}");
    let step = |s: &str| s.split("run stopped at step ").nth(1).and_then(|t| t.split([',', ':']).next()).map(str::to_string);
    assert_eq!(step(&stderr), step(&String::from_utf8_lossy(&one.stderr)), "the same step on 1 and 3 ranks");
    // the scene's warning (the long step) once, from rank 0
    assert_eq!(stderr.matches("time_step: warning").count(), 1, "{stderr}");
    // the last good state is kept
    assert!(dir.path().join("np3").join("energy.csv").exists());
    // the GPU backend on 2 ranks stops at the step one device stops at, naming the same particle
    let small = ["--set", "generators.0.count=2000", "--set", "generators.0.box.max=[0.08,0.08,0.012]", "--steps", "3000"];
    let gpu = |np: usize, out: &str| talus(np, &[&["run", &scene("settle_box"), "--backend", "gpu", "--no-progress", "--out", dir.path().join(out).to_str().unwrap()], &set[..], &small[..]].concat());
    let (one, two) = (gpu(1, "gpu1"), gpu(2, "gpu2"));
    assert_eq!(one.status.code(), Some(3), "one device blows up: {}", String::from_utf8_lossy(&one.stderr));
    assert_eq!(two.status.code(), Some(3), "2 GPU ranks: {}", String::from_utf8_lossy(&two.stderr));
    let stderr = String::from_utf8_lossy(&two.stderr);
    assert_eq!(stderr.matches("run stopped at step").count(), 1, "rank 0 alone reports: {stderr}");
    let stop = |s: &str| s.split("run stopped at step ").nth(1).and_then(|t| t.split(':').next()).map(str::to_string);
    assert_eq!(stop(&stderr), stop(&String::from_utf8_lossy(&one.stderr)), "the same step and particle on one device and 2 ranks");
    // a bad input stops every rank alike before any exchange
    let bad = talus_run(2, &scene("settle_box"), &dir.path().join("bad"), &["--set", r#"decomposition={"bricks":[3,1,1]}"#]);
    assert_eq!(bad.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(stderr.matches("decomposition.bricks").count(), 1, "{stderr}");
    assert!(stderr.contains("the run has 2 MPI ranks"), "{stderr}");
}

#[test]
fn ctrl_c_under_mpirun_writes_the_checkpoint_and_every_rank_stops() {
    use std::io::Read;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("interrupted");
    let exe = env!("CARGO_BIN_EXE_talus");
    let mut child = Command::new("mpirun")
        .args(["--oversubscribe", "--bind-to", "none", "-np", "2", "env", "RAYON_NUM_THREADS=1", exe, "run", &scene("settle_box"), "--backend", "cpu", "--no-progress", "--steps", "200000", "--out", out.to_str().unwrap()])
        .args(["--set", "output.every_steps=100"])
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_mpi_yield_when_idle", "1")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // wait for a few outputs, then interrupt mpirun as a terminal's Ctrl-C would
    let start = std::time::Instant::now();
    while std::fs::read_to_string(out.join("energy.csv")).map(|t| t.lines().count()).unwrap_or(0) < 4 {
        assert!(start.elapsed().as_secs() < 120, "the run made no outputs");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let status = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let code = child.wait().unwrap();
    let mut stderr = String::new();
    child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
    // (every rank exits with 130; mpirun, signalled itself, reports its own failure status)
    assert!(!code.success(), "{stderr}");
    assert!(stderr.contains("interrupted at step"), "{stderr}");
    let c = Checkpoint::read(&out.join(CHECKPOINT_FILE)).unwrap();
    assert!(c.meta.step > 0 && c.meta.step < 200_000 && c.meta.step % 100 == 0, "the checkpoint at an output: step {}", c.meta.step);
    assert_eq!(c.state.len(), 10_000);
}
