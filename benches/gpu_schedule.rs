//! `cargo bench --bench gpu_schedule`: the GPU force pass with its schedule (each workgroup's
//! particles longest neighbour run first, `shaders/schedule.wgsl`) against without, on the
//! bench's packed bed with its ids shuffled (neighbours in space scattered in id order, as in a
//! poured scene) and numbered row by row (its lattice order: every run alike). Two backends in
//! one process, the rounds alternated, so that the machine's drift falls on both alike: on
//! lavapipe separate `talus bench` runs vary by ±15 %. Plain `harness = false` binary; without
//! a GPU adapter it says so and exits.
//!
//! Environment: `TALUS_BENCH_PARTICLES` (default 100000), `TALUS_BENCH_STEPS` (steps per round,
//! default 128), `TALUS_BENCH_ROUNDS` (default 4).

use talus::contact::ContactModel;
use talus::gpu::{GpuBackend, GpuOptions};
use talus::Backend;

fn env_or<T: std::str::FromStr>(key: &str, default: T) -> T {
    std::env::var(key).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn main() {
    let n: usize = env_or("TALUS_BENCH_PARTICLES", 100_000);
    let steps: u64 = env_or("TALUS_BENCH_STEPS", 128);
    let rounds: u32 = env_or("TALUS_BENCH_ROUNDS", 4);
    for shuffled in [true, false] {
        let mut setup = talus::bench::bed_setup(n, ContactModel::HertzMindlin);
        if shuffled {
            talus::bench::shuffle_ids(&mut setup, talus::bench::SHUFFLE_SEED);
        }
        let make = |balanced| GpuBackend::new(&setup, GpuOptions { balanced: Some(balanced), ..GpuOptions::default() });
        let mut runs = match (make(true), make(false)) {
            (Ok(a), Ok(b)) => [a, b],
            (Err(e), _) | (_, Err(e)) => {
                println!("no GPU backend: {}", e.to_string().lines().next().unwrap_or(""));
                return;
            }
        };
        for r in runs.iter_mut() {
            r.step(steps).expect("warm-up");
        }
        let mut seconds = [0.0f64; 2];
        for _ in 0..rounds {
            for (k, r) in runs.iter_mut().enumerate() {
                let t = std::time::Instant::now();
                r.step(steps).expect("step");
                r.energies().expect("energies");
                seconds[k] += t.elapsed().as_secs_f64();
            }
        }
        let taken = runs[0].force_schedule().map(|s| s.2).unwrap_or(false);
        let rate = |k: usize| (setup.particles.len() as f64) * (rounds as u64 * steps) as f64 / seconds[k];
        println!(
            "packed bed, {} grains, ids {}: with the schedule {:.3e} particle-steps/s (taken: {taken}), without {:.3e}, ratio {:.3}",
            setup.particles.len(),
            if shuffled { "shuffled" } else { "row by row" },
            rate(0),
            rate(1),
            rate(0) / rate(1)
        );
    }
}
