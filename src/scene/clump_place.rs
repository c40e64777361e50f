//! Generators of rigid clumps (`"clump": <template name>` in a `lattice` or `random_fill`
//! generator): each body is a template, scaled by a draw of `scale` and turned by a seeded
//! uniformly random orientation (or kept as the template was written, `"orientation":
//! "template"`), whose component spheres become particles; the overlap checks use the
//! component spheres, so clumps pack by their real shapes. `bodies` turns the runs of
//! components into the scene's body table, every other particle a one-component body.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use super::generate::{Sources, MAX_ATTEMPTS};
use super::geometry::{cut_error, Obstacles};
use super::parse::{fmt_num, fmt_vec, join, Cx};
use crate::error::Result;
use crate::model::body::{random_orientation, rotate, Bodies};
use crate::model::clump::ClumpTemplate;
use crate::model::distribution::RadiusDist;
use crate::model::overlap::{BoxGrid, Grid};
use crate::setup::Particles;

/// How a clump generator orients its bodies (shared with clump insertions).
pub(crate) use crate::model::flow::ClumpOrientation as Orientation;

/// What a clump generator places: template, scale distribution, orientation, material of the
/// spheres (the template's), initial velocity, seed.
pub(crate) struct ClumpGen<'a> {
    pub template: &'a ClumpTemplate,
    pub template_index: u32,
    pub scale: RadiusDist,
    pub orientation: Orientation,
    pub velocity: [f64; 3],
    pub seed: u64,
}

/// One body placed by a generator: its first component's particle id, template, scale and
/// orientation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct ClumpRun {
    pub first: u32,
    pub template: u32,
    pub scale: f64,
    pub orientation: [f64; 4],
    pub centre: [f64; 3],
}


impl ClumpGen<'_> {
    fn orientation(&self, rng: &mut Pcg64) -> [f64; 4] {
        match self.orientation {
            Orientation::Random => random_orientation(rng),
            // the body frame is the principal frame, which `to_principal` turns onto the
            // template's own frame
            Orientation::Template => self.template.to_principal,
        }
    }

    /// The component spheres (centre, radius) of a body at `centre` with `q` and `scale`.
    fn spheres(&self, centre: [f64; 3], q: [f64; 4], scale: f64) -> Vec<([f64; 3], f64)> {
        self.template.spheres.iter().map(|s| {
            let arm = rotate(q, s.offset.map(|c| c * scale));
            (std::array::from_fn(|a| centre[a] + arm[a]), s.radius * scale)
        }).collect()
    }

    fn push(&self, particles: &mut Particles, runs: &mut Vec<ClumpRun>, centre: [f64; 3], q: [f64; 4], scale: f64) {
        runs.push(ClumpRun { first: particles.len() as u32, template: self.template_index, scale, orientation: q, centre });
        for (x, r) in self.spheres(centre, q, scale) {
            particles.push(x, self.velocity, [0.0; 3], r, self.template.material);
        }
    }
}

/// A lattice of clumps: centres at origin + (i, j, k) × spacing, x fastest. The spacing must
/// hold the largest scaled body (twice its bounding radius), so lattice bodies never touch;
/// they are checked against the particles placed before, and every component against the walls
/// and meshes (as a sphere lattice is).
#[allow(clippy::too_many_arguments)]
pub(crate) fn lattice(cx: &Cx, path: &str, origin: [f64; 3], count: [u64; 3], spacing: f64, g: &ClumpGen, particles: &mut Particles, runs: &mut Vec<ClumpRun>, grid: &mut Grid, sources: &Sources, walls: &Obstacles) -> Result<()> {
    let n = count[0] * count[1] * count[2];
    let extent = 2.0 * g.template.bounding_radius * g.scale.max();
    if extent > spacing {
        return Err(cx.err(&join(path, "spacing"), format!("spacing {} is smaller than the largest clump's extent {} (twice its bounding radius; bodies would overlap)", fmt_num(spacing), fmt_num(extent))));
    }
    let mut rng = Pcg64::seed_from_u64(g.seed);
    let scales = g.scale.sample_n(n as usize, &mut rng, cx, &join(path, "scale"))?;
    let r_max = g.template.spheres.iter().map(|s| s.radius).fold(0.0, f64::max) * g.scale.max();
    let alone = particles.is_empty();
    grid.prepare(particles, r_max);
    let mut k = 0;
    for iz in 0..count[2] {
        for iy in 0..count[1] {
            for ix in 0..count[0] {
                let centre = [origin[0] + ix as f64 * spacing, origin[1] + iy as f64 * spacing, origin[2] + iz as f64 * spacing];
                let q = g.orientation(&mut rng);
                let scale = scales[k];
                k += 1;
                for (c, (x, r)) in g.spheres(centre, q, scale).into_iter().enumerate() {
                    if let Some(o) = (!alone).then(|| grid.overlap(particles, x, r)).flatten() {
                        return Err(cx.err(path, format!("lattice clump at {} has a sphere at {} (radius {}) that overlaps {} at {} (radius {})", fmt_vec(centre), fmt_vec(x), fmt_num(r), sources.label(o), fmt_vec(particles.position[o]), fmt_num(particles.radius[o]))));
                    }
                    if let Some(hit) = walls.cut(x, r) {
                        let span = |a: usize| origin[a] + (count[a] - 1) as f64 * spacing;
                        let fix = walls.fix(&hit, origin, std::array::from_fn(span), extent / 2.0, "lattice");
                        let label = format!("lattice clump {} (i, j, k = {ix}, {iy}, {iz}; centre {}), its sphere {c}", k - 1, fmt_vec(centre));
                        return Err(cut_error(cx, path, walls, &hit, &label, x, r, &format!("{fix} (move origin or lower count)")));
                    }
                }
                g.push(particles, runs, centre, q, scale);
            }
        }
    }
    Ok(())
}

/// Random non-overlapping placement of `count` clumps with their bounding spheres inside
/// `[min, max]`, largest scale first; the overlap checks use the component spheres, and places
/// where a component cuts a wall or mesh are rejected (as a sphere fill's are).
#[allow(clippy::too_many_arguments)]
pub(crate) fn random_fill(cx: &Cx, path: &str, min: [f64; 3], max: [f64; 3], count: u64, g: &ClumpGen, particles: &mut Particles, runs: &mut Vec<ClumpRun>, grid: &mut Grid, walls: &Obstacles) -> Result<()> {
    let mut rng = Pcg64::seed_from_u64(g.seed);
    let mut scales = g.scale.sample_n(count as usize, &mut rng, cx, &join(path, "scale"))?;
    scales.sort_by(|a, b| b.total_cmp(a));
    let r_max = g.template.spheres.iter().map(|s| s.radius).fold(0.0, f64::max) * g.scale.max();
    let reach = g.template.bounding_radius * g.scale.max();
    for k in 0..3 {
        if 2.0 * reach > max[k] - min[k] {
            return Err(cx.err(&join(path, "box"), format!("the largest clump (extent {}) does not fit in the box {} .. {} on {}", fmt_num(2.0 * reach), fmt_vec(min), fmt_vec(max), ["x", "y", "z"][k])));
        }
    }
    let spheres = count as usize * g.template.spheres.len();
    let mut cells = BoxGrid::new(particles, min, max, r_max, spheres);
    if cells.is_none() {
        grid.prepare(particles, r_max);
    }
    for (n, &scale) in scales.iter().enumerate() {
        let b = g.template.bounding_radius * scale;
        let lo = [min[0] + b, min[1] + b, min[2] + b];
        let w = [max[0] - b - lo[0], max[1] - b - lo[1], max[2] - b - lo[2]];
        let mut placed = false;
        // the last wall a place was rejected for, and how many were
        let (mut cut, mut cuts) = (None, 0u64);
        for _ in 0..MAX_ATTEMPTS {
            let u: [f64; 3] = [rng.random(), rng.random(), rng.random()];
            let centre = [lo[0] + w[0] * u[0], lo[1] + w[1] * u[1], lo[2] + w[2] * u[2]];
            let q = g.orientation(&mut rng);
            let parts = g.spheres(centre, q, scale);
            let free = parts.iter().all(|&(x, r)| match &cells {
                Some(cells) => !cells.overlaps(x, r),
                None => grid.overlap(particles, x, r).is_none(),
            });
            // places where a component cuts a wall or mesh are rejected
            let free = free && match parts.iter().find_map(|&(x, r)| walls.cut_place(x, r)) {
                None => true,
                Some(hit) => {
                    cut = Some(hit);
                    cuts += 1;
                    false
                }
            };
            if free {
                g.push(particles, runs, centre, q, scale);
                for &(x, r) in &parts {
                    match &mut cells {
                        Some(cells) => cells.insert(x, r),
                        None => grid.sync(particles),
                    }
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
                    format!("could not place clump {} of {count} (scale {}): {cuts} of the attempted places cut {}; {}", n + 1, fmt_num(scale), walls.name(&hit), walls.fix(&hit, min, max, 0.0, "box")),
                ));
            }
            return Err(cx.err(path, format!("could not place clump {} of {count} (scale {}) after {MAX_ATTEMPTS} attempts: enlarge the box or lower count", n + 1, fmt_num(scale))));
        }
    }
    grid.prepare(particles, r_max);
    Ok(())
}

/// The body table of a scene whose generators placed `runs` (empty: no clumps, no bodies,
/// unless `always`, as for a scene whose insertions bring clumps later). Every particle outside
/// a run becomes a one-component body (isotropic moments 2/5 m r², its spin kept);
/// `density(material)` gives the components' density.
pub(crate) fn bodies(particles: &Particles, runs: &[ClumpRun], templates: &[ClumpTemplate], density: impl Fn(u32) -> f64, always: bool) -> Bodies {
    let mut bodies = Bodies::default();
    if runs.is_empty() && !always {
        return bodies;
    }
    let mut next_run = runs.iter().peekable();
    let mut i = 0usize;
    while i < particles.len() {
        match next_run.peek() {
            Some(run) if run.first as usize == i => {
                let t = &templates[run.template as usize];
                let s = run.scale;
                // the template's mass and moments are at its material's density
                let (mass, moments) = (t.mass * s.powi(3), t.principal_moments.map(|m| m * s.powi(5)));
                let offsets: Vec<[f64; 3]> = t.spheres.iter().map(|c| c.offset.map(|x| x * s)).collect();
                let v = particles.velocity[i];
                bodies.push(run.centre, run.orientation, v, [0.0; 3], mass, moments, run.template, i as u32, &offsets);
                i += offsets.len();
                next_run.next();
            }
            _ => {
                let r = particles.radius[i];
                let mass = density(particles.material[i]) * 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
                bodies.push_sphere(particles.position[i], particles.velocity[i], particles.angular_velocity[i], mass, r, i as u32);
                i += 1;
            }
        }
    }
    bodies
}
