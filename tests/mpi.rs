//! Runs under `mpirun` (feature `mpi`; docs/mpi.md): the exact global sum has the same bits on
//! 1, 2 and 3 ranks, `talus info` prints the rank count, and a command that cannot run on
//! several ranks yet is refused on all of them.
//!
//! Needs OpenMPI (`apt-get install -y libopenmpi-dev openmpi-bin libclang-dev`) and
//! `cargo test --release --features mpi --test mpi`; the default build (and CI, which has no
//! MPI) compiles this file to nothing. The rank programs are this test binary itself, started
//! by `mpirun` with the ignored test `mpi_child` selected.
#![cfg(feature = "mpi")]

use std::process::{Command, Output};

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
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
        // each rank ran the child test and passed
        assert_eq!(stdout.matches("test result: ok. 1 passed").count(), np, "mpirun -np {np}:\n{stdout}");
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
fn a_run_on_several_ranks_is_refused_on_all_of_them() {
    let scene = concat!(env!("CARGO_MANIFEST_DIR"), "/scenes/settle_box.json");
    let out = mpirun(2, env!("CARGO_BIN_EXE_talus"), &["run", scene, "--out", "/nonexistent/talus-mpi-refused"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert_eq!(stderr.matches("2 MPI ranks: only `talus info` runs on several ranks so far").count(), 1, "{stderr}");
    assert!(!std::path::Path::new("/nonexistent/talus-mpi-refused").exists());
}
