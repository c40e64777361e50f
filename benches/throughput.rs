//! `cargo bench --bench throughput`: throughput of the CPU and (when an adapter is found) GPU
//! backends on the settling-box benchmark of `talus::bench`. Plain `harness = false` binary.
//!
//! Environment: `TALUS_BENCH_PARTICLES` (comma-separated, default `10000`),
//! `TALUS_BENCH_STEPS` (default 200), `TALUS_BENCH_WARMUP` (default 20).

use talus::bench::bench;
use talus::run::BackendChoice;

fn env_or<T: std::str::FromStr>(key: &str, default: T) -> T {
    std::env::var(key).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` passes nothing or filters: run small then.
    let quick = !std::env::args().any(|a| a == "--bench");
    let sizes: Vec<usize> = std::env::var("TALUS_BENCH_PARTICLES")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![if quick { 1000 } else { 10_000 }]);
    let steps = env_or("TALUS_BENCH_STEPS", if quick { 10 } else { 200 });
    let warmup = env_or("TALUS_BENCH_WARMUP", if quick { 2 } else { 20 });
    for &n in &sizes {
        for choice in [BackendChoice::Cpu, BackendChoice::Gpu] {
            match bench(choice, n, steps, warmup, false, talus::contact::ContactModel::Hertz, talus::contact::params::Adhesion::None, talus::bench::Packing::Settling, talus::bench::Ids::Placed, true) {
                Ok(r) => println!("{r}\n"),
                Err(e) => println!("{choice} backend, {n} particles: skipped ({})\n", e.to_string().lines().next().unwrap_or("")),
            }
        }
    }
}
