//! Particle generators (lattice, random_fill) and overlap checks through a hash grid.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use super::distribution::RadiusDist;
use super::parse::{fmt_num, fmt_vec, join, Cx};
use crate::error::Result;
use crate::setup::Particles;

/// Placement attempts per particle before random_fill gives up.
pub const MAX_ATTEMPTS: usize = 10_000;

const NONE: u32 = u32::MAX;

/// Small fast hasher for the grid's integer keys.
#[derive(Default)]
pub(crate) struct CellHasher(u64);

impl Hasher for CellHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, x: u64) {
        // splitmix64 finaliser: every input bit reaches the low bits hashbrown indexes with.
        let mut z = (self.0 ^ x).wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        self.0 = z ^ (z >> 31);
    }
}

/// Hash grid over all particles placed so far. Cell size ≥ 2 × the largest radius, so a
/// sphere can only touch spheres in the 27 cells around its centre.
pub(crate) struct Grid {
    cell: f64,
    inv: f64,
    head: HashMap<u64, u32, BuildHasherDefault<CellHasher>>,
    next: Vec<u32>,
}

fn cell_coord(x: f64, inv: f64) -> i64 {
    (x * inv).floor() as i64
}

fn key(c: [i64; 3]) -> u64 {
    const M: u64 = (1 << 21) - 1;
    ((c[0] as u64 & M) << 42) | ((c[1] as u64 & M) << 21) | (c[2] as u64 & M)
}

impl Grid {
    pub fn new() -> Grid {
        Grid { cell: 0.0, inv: 0.0, head: HashMap::default(), next: Vec::new() }
    }

    /// Make sure the grid covers spheres up to radius `r_max` and holds every particle of `p`.
    pub fn prepare(&mut self, p: &Particles, r_max: f64) {
        let need = 2.0 * r_max.max(p.radius.iter().cloned().fold(0.0, f64::max));
        if need > self.cell || self.next.len() > p.len() {
            self.cell = need;
            self.inv = 1.0 / need;
            self.head.clear();
            self.next.clear();
        }
        for i in self.next.len()..p.len() {
            self.insert(p, i);
        }
    }

    fn insert(&mut self, p: &Particles, i: usize) {
        debug_assert_eq!(self.next.len(), i);
        let x = p.position[i];
        let k = key([cell_coord(x[0], self.inv), cell_coord(x[1], self.inv), cell_coord(x[2], self.inv)]);
        let prev = self.head.insert(k, i as u32).unwrap_or(NONE);
        self.next.push(prev);
    }

    /// Add the particles of `p` that are not in the grid yet (their radii must be ≤ the
    /// radius given to `prepare`).
    pub fn sync(&mut self, p: &Particles) {
        for i in self.next.len()..p.len() {
            self.insert(p, i);
        }
    }

    /// The first particle of `p` in the grid that overlaps the sphere (x, r) (touching is not
    /// overlapping).
    pub fn overlap(&self, p: &Particles, x: [f64; 3], r: f64) -> Option<usize> {
        let c = [cell_coord(x[0], self.inv), cell_coord(x[1], self.inv), cell_coord(x[2], self.inv)];
        for dz in -1..=1 {
            for dy in -1..=1 {
                for dx in -1..=1 {
                    let Some(&h) = self.head.get(&key([c[0] + dx, c[1] + dy, c[2] + dz])) else { continue };
                    let mut j = h;
                    while j != NONE {
                        let y = p.position[j as usize];
                        let s = r + p.radius[j as usize];
                        let d2 = (x[0] - y[0]).powi(2) + (x[1] - y[1]).powi(2) + (x[2] - y[2]).powi(2);
                        if d2 < s * s {
                            return Some(j as usize);
                        }
                        j = self.next[j as usize];
                    }
                }
            }
        }
        None
    }
}

/// Where each particle came from, for messages.
#[derive(Default)]
pub(crate) struct Sources {
    /// (first particle index, generator index or None for explicit particles)
    starts: Vec<(usize, Option<usize>)>,
}

impl Sources {
    pub fn begin(&mut self, first: usize, generator: Option<usize>) {
        self.starts.push((first, generator));
    }
    pub fn label(&self, j: usize) -> String {
        let mut src = (0, None);
        for &(s, g) in &self.starts {
            if s <= j {
                src = (s, g);
            }
        }
        match src.1 {
            None => format!("particles[{}]", j - src.0),
            Some(g) => format!("particle #{j} (from generators[{g}])"),
        }
    }
}

/// Settings shared by both generator types.
pub(crate) struct Common {
    pub radius: RadiusDist,
    pub material: u32,
    pub velocity: [f64; 3],
    pub angular_velocity: [f64; 3],
    pub seed: u64,
}

/// Regular lattice origin + (i, j, k) × spacing, x fastest, each coordinate moved by a
/// uniform random amount in [−jitter, jitter] (drawn after the radii, from the same stream).
#[allow(clippy::too_many_arguments)]
pub(crate) fn lattice(
    cx: &Cx,
    path: &str,
    origin: [f64; 3],
    count: [u64; 3],
    spacing: f64,
    jitter: f64,
    c: &Common,
    particles: &mut Particles,
    grid: &mut Grid,
    sources: &Sources,
) -> Result<()> {
    let n = count[0] as u128 * count[1] as u128 * count[2] as u128;
    if n > 50_000_000 {
        return Err(cx.err(&join(path, "count"), format!("{n} particles is too many (limit 50,000,000)")));
    }
    if 2.0 * c.radius.max() > spacing {
        return Err(cx.err(
            &join(path, "spacing"),
            format!(
                "spacing {} is smaller than the largest diameter {} (particles would overlap)",
                fmt_num(spacing),
                fmt_num(2.0 * c.radius.max())
            ),
        ));
    }
    let mut rng = Pcg64::seed_from_u64(c.seed);
    let radii = c.radius.sample_n(n as usize, &mut rng, cx, &join(path, "radius"))?;
    grid.prepare(particles, c.radius.max());
    let mut idx = 0;
    for k in 0..count[2] {
        for j in 0..count[1] {
            for i in 0..count[0] {
                let mut x = [
                    origin[0] + i as f64 * spacing,
                    origin[1] + j as f64 * spacing,
                    origin[2] + k as f64 * spacing,
                ];
                if jitter > 0.0 {
                    for x in &mut x {
                        *x += rng.random_range(-jitter..=jitter);
                    }
                }
                let r = radii[idx];
                idx += 1;
                if let Some(o) = grid.overlap(particles, x, r) {
                    return Err(cx.err(
                        path,
                        format!(
                            "lattice particle at {} (radius {}) overlaps {} at {} (radius {})",
                            fmt_vec(x),
                            fmt_num(r),
                            sources.label(o),
                            fmt_vec(particles.position[o]),
                            fmt_num(particles.radius[o])
                        ),
                    ));
                }
                particles.push(x, c.velocity, c.angular_velocity, r, c.material);
                grid.sync(particles);
            }
        }
    }
    Ok(())
}

/// Random non-overlapping placement inside `[min, max]` (each sphere fully inside), radii
/// drawn first and placed largest first.
#[allow(clippy::too_many_arguments)]
pub(crate) fn random_fill(
    cx: &Cx,
    path: &str,
    min: [f64; 3],
    max: [f64; 3],
    count: u64,
    c: &Common,
    particles: &mut Particles,
    grid: &mut Grid,
) -> Result<()> {
    if count > 50_000_000 {
        return Err(cx.err(&join(path, "count"), format!("{count} particles is too many (limit 50,000,000)")));
    }
    let mut rng = Pcg64::seed_from_u64(c.seed);
    let mut radii = c.radius.sample_n(count as usize, &mut rng, cx, &join(path, "radius"))?;
    radii.sort_by(|a, b| b.total_cmp(a));
    let box_vol = (max[0] - min[0]) * (max[1] - min[1]) * (max[2] - min[2]);
    let solid: f64 = radii.iter().map(|r| 4.0 / 3.0 * std::f64::consts::PI * r * r * r).sum();
    let phi = solid / box_vol;
    if let Some(&r) = radii.first() {
        for k in 0..3 {
            if 2.0 * r > max[k] - min[k] {
                return Err(cx.err(
                    &join(path, "radius"),
                    format!(
                        "largest radius {} does not fit in the box {} .. {} (diameter {} > box width {} on {})",
                        fmt_num(r),
                        fmt_vec(min),
                        fmt_vec(max),
                        fmt_num(2.0 * r),
                        fmt_num(max[k] - min[k]),
                        ["x", "y", "z"][k]
                    ),
                ));
            }
        }
    }
    grid.prepare(particles, c.radius.max());
    for (n, &r) in radii.iter().enumerate() {
        let lo = [min[0] + r, min[1] + r, min[2] + r];
        let w = [max[0] - r - lo[0], max[1] - r - lo[1], max[2] - r - lo[2]];
        let mut placed = false;
        for _ in 0..MAX_ATTEMPTS {
            let u: [f64; 3] = [rng.random(), rng.random(), rng.random()];
            let x = [lo[0] + w[0] * u[0], lo[1] + w[1] * u[1], lo[2] + w[2] * u[2]];
            if grid.overlap(particles, x, r).is_none() {
                particles.push(x, c.velocity, c.angular_velocity, r, c.material);
                grid.sync(particles);
                placed = true;
                break;
            }
        }
        if !placed {
            return Err(cx.err(
                path,
                format!(
                    "could not place particle {} of {count} (radius {}) after {MAX_ATTEMPTS} attempts; \
                     the packing fraction asked for is {:.3} (solid volume {} in box volume {}); \
                     random placement rarely exceeds ~0.3: enlarge the box or lower count",
                    n + 1,
                    fmt_num(r),
                    phi,
                    fmt_num(solid),
                    fmt_num(box_vol)
                ),
            ));
        }
    }
    Ok(())
}
