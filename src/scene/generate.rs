//! Particle generators (lattice, random_fill); overlap checks through the grids of
//! `src/model/overlap.rs` (the shared hash grid; a random fill searches a flat grid over its
//! box, `BoxGrid`).

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use super::parse::{fmt_num, fmt_vec, join, Cx};

/// The most particles one generator makes: the most the GPU backend addresses
/// (`SLOT_PARTNER_MASK`).
const LATTICE_MAX: u64 = crate::layout::consts::SLOT_PARTNER_MASK as u64;
use crate::error::Result;
use crate::model::distribution::RadiusDist;
use crate::model::overlap::{BoxGrid, Grid};
use crate::setup::Particles;
use super::geometry::Obstacles;

/// Placement attempts per particle before random_fill gives up.
pub const MAX_ATTEMPTS: usize = 10_000;

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
    /// The key path a particle came from: `particles[k]` or `generators[g]`.
    pub fn key(&self, j: usize) -> String {
        let mut src = (0, None);
        for &(s, g) in &self.starts {
            if s <= j {
                src = (s, g);
            }
        }
        match src.1 {
            None => format!("particles[{}]", j - src.0),
            Some(g) => format!("generators[{g}]"),
        }
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
    walls: &Obstacles,
) -> Result<()> {
    let n = count[0] as u128 * count[1] as u128 * count[2] as u128;
    if n > LATTICE_MAX as u128 {
        return Err(cx.err(&join(path, "count"), format!("{n} particles is too many (limit {LATTICE_MAX}, the most the GPU backend addresses)")));
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
    // jitter moves a centre by at most jitter·√3, so lattice neighbours stay at least
    // spacing − 2√3·jitter apart: with no particles before it and twice the largest radius
    // within that, the lattice cannot overlap itself and the search is skipped (a 100M-particle
    // lattice loads in seconds, not minutes)
    let alone = particles.is_empty() && 2.0 * c.radius.max() <= spacing - 2.0 * 3f64.sqrt() * jitter;
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
                if let Some(o) = (!alone).then(|| grid.overlap(particles, x, r)).flatten() {
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
                if let Some(hit) = walls.cut(x, r) {
                    let n = idx - 1;
                    let span = |k: usize| origin[k] + (count[k] - 1) as f64 * spacing;
                    let lo = std::array::from_fn(|k| origin[k] - jitter);
                    let hi = std::array::from_fn(|k| span(k) + jitter);
                    let fix = walls.fix(&hit, lo, hi, c.radius.max(), "lattice");
                    let fix = format!("{fix} (move origin or lower count)");
                    let label = format!("lattice particle {n} (i, j, k = {i}, {j}, {k}; particle #{} of the scene)", particles.len());
                    return Err(super::geometry::cut_error(cx, path, walls, &hit, &label, x, r, &fix));
                }
                particles.push(x, c.velocity, c.angular_velocity, r, c.material);
                if !alone {
                    grid.sync(particles);
                }
            }
        }
    }
    // (a search after it starts with `Grid::prepare`, which takes these particles in)
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
    walls: &Obstacles,
) -> Result<()> {
    if count > LATTICE_MAX {
        return Err(cx.err(&join(path, "count"), format!("{count} particles is too many (limit {LATTICE_MAX}, the most the GPU backend addresses)")));
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
    // the attempts search a flat grid over the box (`BoxGrid`: the same answers as the shared
    // hash grid, which takes the new spheres at the end), or the hash grid itself for a box
    // such a grid does not suit
    let mut cells = BoxGrid::new(particles, min, max, c.radius.max(), radii.len());
    if cells.is_none() {
        grid.prepare(particles, c.radius.max());
    }
    // the last wall a place was rejected for, and how many were
    let (mut cut, mut cuts): (Option<crate::cpu::wall_hits::WallHit>, u64) = (None, 0);
    for (n, &r) in radii.iter().enumerate() {
        let lo = [min[0] + r, min[1] + r, min[2] + r];
        let w = [max[0] - r - lo[0], max[1] - r - lo[1], max[2] - r - lo[2]];
        let mut placed = false;
        if n > 0 {
            cuts = 0;
        }
        for _ in 0..MAX_ATTEMPTS {
            let u: [f64; 3] = [rng.random(), rng.random(), rng.random()];
            let x = [lo[0] + w[0] * u[0], lo[1] + w[1] * u[1], lo[2] + w[2] * u[2]];
            let free = match &cells {
                Some(cells) => !cells.overlaps(x, r),
                None => grid.overlap(particles, x, r).is_none(),
            };
            // places that cut a wall or mesh are rejected, as insertion rejects them
            let free = free && match walls.cut_place(x, r) {
                None => true,
                Some(hit) => {
                    cut = Some(hit);
                    cuts += 1;
                    false
                }
            };
            if free {
                particles.push(x, c.velocity, c.angular_velocity, r, c.material);
                match &mut cells {
                    Some(cells) => cells.insert(x, r),
                    None => grid.sync(particles),
                }
                placed = true;
                break;
            }
        }
        if !placed {
            if let Some(hit) = cut.filter(|_| 2 * cuts >= MAX_ATTEMPTS as u64) {
                // most attempts cut a wall: the box reaches through it
                return Err(cx.err(
                    path,
                    format!(
                        "could not place particle {} of {count} (radius {}): {cuts} of the attempted places cut {}; {}",
                        n + 1,
                        fmt_num(r),
                        walls.name(&hit),
                        walls.fix(&hit, min, max, 0.0, "box")
                    ),
                ));
            }
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
    grid.prepare(particles, c.radius.max());
    Ok(())
}
