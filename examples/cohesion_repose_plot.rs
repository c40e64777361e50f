//! Draws the angle of repose of scenes/cohesive_heap.json against the JKR surface energy
//! (docs/measurements.md, "Angle of repose against adhesion") with the project's chart
//! (`talus::plot::chart`): each seed's runs as one series, and the mean over the seeds with
//! mean ± one sample standard deviation as two more.
//!
//! `cargo run --release --example cohesion_repose_plot -- RESULTS.csv OUT.png`, where
//! RESULTS.csv has the header `surface_energy,seed,angle` (J/m², the generator's seed, degrees).

use std::collections::BTreeMap;
use std::path::Path;

use talus::plot::{chart, Series};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, csv, png] = args.as_slice() else {
        eprintln!("usage: cohesion_repose_plot RESULTS.csv OUT.png");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(csv).unwrap_or_else(|e| panic!("{csv}: {e}"));
    let mut lines = text.lines();
    assert_eq!(lines.next().map(str::trim), Some("surface_energy,seed,angle"), "{csv}: header");
    // seed -> [(γ, angle)], γ (as bits, ordered) -> [angle]
    let mut by_seed: BTreeMap<u64, Vec<(f64, f64)>> = BTreeMap::new();
    let mut by_gamma: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
    for l in lines.filter(|l| !l.trim().is_empty()) {
        let f: Vec<&str> = l.split(',').map(str::trim).collect();
        let (g, seed, a): (f64, u64, f64) = (f[0].parse().unwrap(), f[1].parse().unwrap(), f[2].parse().unwrap());
        by_seed.entry(seed).or_default().push((g, a));
        by_gamma.entry(g.to_bits()).or_default().push(a);
    }
    let mut series = Vec::new();
    let (mut mean, mut lo, mut hi) = (Vec::new(), Vec::new(), Vec::new());
    for (bits, a) in &by_gamma {
        let n = a.len() as f64;
        let m = a.iter().sum::<f64>() / n;
        let s = if a.len() > 1 { (a.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0)).sqrt() } else { 0.0 };
        let g = f64::from_bits(*bits);
        println!("surface energy {g} J/m2: {} runs, mean {m:.2} deg, std {s:.2} deg", a.len());
        mean.push((g, m));
        lo.push((g, m - s));
        hi.push((g, m + s));
    }
    series.push(Series { name: "mean over seeds".into(), points: mean });
    series.push(Series { name: "mean - 1 std".into(), points: lo });
    series.push(Series { name: "mean + 1 std".into(), points: hi });
    for (seed, mut p) in by_seed {
        p.sort_by(|a, b| a.0.total_cmp(&b.0));
        series.push(Series { name: format!("seed {seed}"), points: p });
    }
    let text = chart(Path::new(png), "cohesive_heap: angle of repose against JKR surface energy", "surface energy (J/m2)", "angle of repose (deg)", &[], &series)
        .unwrap_or_else(|e| panic!("{e}"));
    if !text {
        eprintln!("no font found: the chart has no text");
    }
    println!("chart: {png}");
}
