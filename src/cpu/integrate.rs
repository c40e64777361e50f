//! Velocity-Verlet integration, same passes as `shaders/drift.wgsl` and `shaders/kick.wgsl`:
//! half kick + drift before the force pass, half kick after it. After a force pass,
//! `gather_kick` forms each particle's total force (`forces::gather`), applies the second half
//! kick and, inside a batch, the next step's half kick and drift in the same sweep; the
//! arithmetic is that of the separate passes, so the result does not depend on the fusion.

use glam::DVec3;
use rayon::prelude::*;

use super::forces::{gather, Incoming};
use super::neighbour::{NeighbourList, CHUNK};
use super::state::{Owners, State};
use crate::model::checks::LostParticles;
use crate::setup::Setup;

/// Constants of the drift: periodic axes, domain minimum and period, and the box a centre
/// must stay in (the run-time checks' lost-particle bound; `None` when nothing is lost).
#[derive(Clone, Copy, Debug)]
pub struct Drift {
    pub dt: f64,
    pub gravity: DVec3,
    periodic: [bool; 3],
    /// Whether any axis is periodic (the wrap and the nearest-image displacement are skipped
    /// otherwise).
    any_periodic: bool,
    min: DVec3,
    period: DVec3,
    /// The box a centre must stay in (±∞ on periodic axes, or everywhere when nothing is lost).
    keep_lo: DVec3,
    keep_hi: DVec3,
}

/// What a sweep over the particles reports: the largest squared displacement since the list
/// build, and whether some particle may have a problem for the run-time checks (a non-finite
/// quantity or a centre outside the lost-particle bound; the caller then names it with
/// `checks::first_problem`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sweep {
    pub displacement2: f64,
    pub suspicious: bool,
}

impl Sweep {
    pub(super) fn join(a: Sweep, b: Sweep) -> Sweep {
        Sweep { displacement2: a.displacement2.max(b.displacement2), suspicious: a.suspicious || b.suspicious }
    }
}

impl Drift {
    pub fn new(setup: &Setup, dt: f64) -> Drift {
        let bounds = match setup.checks.lost_particles {
            LostParticles::Error => setup.lost_bounds(),
            LostParticles::Remove => None,
        };
        let edge = |sign: f64| -> DVec3 {
            DVec3::from_array(std::array::from_fn(|a| match bounds {
                Some((lo, hi, margin)) if !setup.periodic[a] => if sign < 0.0 { lo[a] - margin } else { hi[a] + margin },
                _ => sign * f64::INFINITY,
            }))
        };
        Drift { dt, gravity: DVec3::from(setup.gravity), periodic: setup.periodic, any_periodic: setup.periodic.iter().any(|&p| p), min: DVec3::from(setup.domain.min), period: setup.period(), keep_lo: edge(-1.0), keep_hi: edge(1.0) }
    }
}

/// What a sweep over a chunk saw, for the run-time checks, accumulated without branches: the
/// box of the centres (lowest and highest coordinate on each axis), to compare with the
/// lost-particle bound once per chunk, and the sum of positions and velocities (not finite as
/// soon as one of them is not, which the box's min/max would skip; a non-finite force or
/// torque makes the velocities of the kick that used it non-finite). `suspicious` may also fire
/// for a sum that overflows; the full scan then finds nothing.
#[derive(Clone, Copy, Debug)]
pub(super) struct Watch {
    lo: DVec3,
    hi: DVec3,
    sum: DVec3,
}

impl Watch {
    pub(super) fn new() -> Watch {
        Watch { lo: DVec3::INFINITY, hi: DVec3::NEG_INFINITY, sum: DVec3::ZERO }
    }

    #[inline]
    pub(super) fn see(&mut self, x: DVec3, v: DVec3, w: DVec3) {
        self.lo = self.lo.min(x);
        self.hi = self.hi.max(x);
        self.sum += x + v + w;
    }

    pub(super) fn suspicious(&self, d: &Drift) -> bool {
        !self.sum.is_finite() || (self.lo.cmplt(d.keep_lo) | self.hi.cmpgt(d.keep_hi)).any()
    }
}

impl Drift {

    /// The increments of a half kick, v += (F/m + g)·dt/2 and ω += T/I·dt/2 (formed once where
    /// two half kicks with the same force follow each other).
    #[inline]
    pub(super) fn half_kick(&self, f: DVec3, t: DVec3, inv_mass: f64, inv_inertia: f64) -> (DVec3, DVec3) {
        let half = 0.5 * self.dt;
        ((f * inv_mass + self.gravity) * half, t * (inv_inertia * half))
    }

    /// The position after x += v·dt; a particle that left [min, max) on a periodic axis
    /// re-enters on the other side (its image count keeps the unwrapped position).
    #[inline]
    pub(super) fn drift(&self, x: DVec3, image: &mut [i32; 3], v: DVec3) -> DVec3 {
        self.wrap(x + v * self.dt, image)
    }

    /// `y` moved back into [min, max) on the periodic axes (by one period at most), the
    /// periods counted in `image`.
    #[inline]
    pub(super) fn wrap(&self, mut y: DVec3, image: &mut [i32; 3]) -> DVec3 {
        if !self.any_periodic {
            return y;
        }
        for a in 0..3 {
            if !self.periodic[a] {
                continue;
            }
            if y[a] - self.min[a] >= self.period[a] {
                y[a] -= self.period[a];
                image[a] += 1;
            } else if y[a] < self.min[a] {
                y[a] += self.period[a];
                image[a] -= 1;
            }
        }
        y
    }

    /// |x − x0|², nearest image on the periodic axes (as `Setup::minimum_image`).
    #[inline]
    pub(super) fn displacement2(&self, x: DVec3, x0: DVec3) -> f64 {
        let mut d = x - x0;
        if !self.any_periodic {
            return d.length_squared();
        }
        for a in 0..3 {
            if self.periodic[a] {
                d[a] -= self.period[a] * (d[a] / self.period[a]).round();
            }
        }
        d.length_squared()
    }
}

/// The largest squared displacement since the list build of the particles a sweep has drifted
/// so far (`x_build`, in the same order; ∞ when there is no build of this particle count yet).
pub(super) struct Moved<'a> {
    x_build: &'a [DVec3],
    pub(super) displacement2: f64,
}

impl<'a> Moved<'a> {
    pub(super) fn new(x_build: &'a [DVec3], n: usize) -> Moved<'a> {
        if x_build.len() == n {
            Moved { x_build, displacement2: 0.0 }
        } else {
            Moved { x_build: &[], displacement2: f64::INFINITY }
        }
    }

    /// Particle `i` is now at `x`.
    #[inline]
    pub(super) fn see(&mut self, d: &Drift, x: DVec3, i: usize) {
        if let Some(&x0) = self.x_build.get(i) {
            self.displacement2 = self.displacement2.max(d.displacement2(x, x0));
        }
    }
}

/// First half of a step for every particle: half kick with the stored force, then drift.
/// Returns the largest squared displacement since the list build at `x_build`.
pub fn kick_drift(s: &mut State, d: &Drift, x_build: &[DVec3]) -> Sweep {
    let n = s.len();
    let (inv_m, inv_i) = (&s.inv_mass, &s.inv_inertia);
    (s.position.par_chunks_mut(CHUNK), s.velocity.par_chunks_mut(CHUNK), s.angular_velocity.par_chunks_mut(CHUNK), s.image.par_chunks_mut(CHUNK), s.force.par_chunks(CHUNK), s.torque.par_chunks(CHUNK))
        .into_par_iter()
        // one chunk per job, as the force pass (`forces::forces`)
        .with_max_len(1)
        .enumerate()
        .map(|(c, (x, v, w, image, f, t))| {
            let mut watch = Watch::new();
            let mut moved = Moved::new(x_build, n);
            let (inv_m, inv_i) = (&inv_m[c * CHUNK..][..x.len()], &inv_i[c * CHUNK..][..x.len()]);
            for k in 0..x.len() {
                let i = c * CHUNK + k;
                let (dv, dw) = d.half_kick(f[k], t[k], inv_m[k], inv_i[k]);
                // the new state is formed in registers, stored, and watched from the registers
                // (`gather_kick`)
                let (vk, wk) = (v[k] + dv, w[k] + dw);
                let xk = d.drift(x[k], &mut image[k], vk);
                (x[k], v[k], w[k]) = (xk, vk, wk);
                watch.see(xk, vk, wk);
                moved.see(d, xk, i);
            }
            Sweep { displacement2: moved.displacement2, suspicious: watch.suspicious(d) }
        })
        .reduce(Sweep::default, Sweep::join)
}

/// After a force pass: total force of every particle, second half kick, and with `next` the
/// next step's half kick and drift. The totals are stored (`State::force`, `torque`) only
/// without `next`, at the end of a batch, where the next batch's first kick and the outputs
/// read them; inside a batch they are used where they are formed (`gather_only` stores them
/// when a check must name a particle mid-batch). Returns the largest squared displacement
/// since the list build (0 without `next`).
pub fn gather_kick(s: &mut State, list: &NeighbourList, incoming: &Incoming, owners: &Owners, d: &Drift, next: bool) -> Sweep {
    let n = s.len();
    let (inv_m, inv_i) = (&s.inv_mass, &s.inv_inertia);
    (s.position.par_chunks_mut(CHUNK), s.velocity.par_chunks_mut(CHUNK), s.angular_velocity.par_chunks_mut(CHUNK), s.image.par_chunks_mut(CHUNK), s.force.par_chunks_mut(CHUNK), s.torque.par_chunks_mut(CHUNK))
        .into_par_iter()
        // one chunk per job, as the force pass (`forces::forces`)
        .with_max_len(1)
        .enumerate()
        .map(|(c, (x, v, w, image, f, t))| {
            let mut watch = Watch::new();
            let mut moved = Moved::new(list.x_build(), n);
            // this chunk's particles, cut to its length (no bounds check per particle)
            let (inv_m, inv_i) = (&inv_m[c * CHUNK..][..x.len()], &inv_i[c * CHUNK..][..x.len()]);
            for k in 0..x.len() {
                let i = c * CHUNK + k;
                let (force, torque) = gather(list, incoming, owners, i);
                let (dv, dw) = d.half_kick(force, torque, inv_m[k], inv_i[k]);
                // the new state is formed in registers, stored, and watched from the registers:
                // read back from memory, a vector stored as 16 + 8 bytes and loaded as 8 + 16
                // failed store forwarding (a fifth of this sweep's samples on the falling box)
                let (mut vk, mut wk) = (v[k] + dv, w[k] + dw);
                let mut xk = x[k];
                if next {
                    (vk, wk) = (vk + dv, wk + dw);
                    xk = d.drift(xk, &mut image[k], vk);
                    x[k] = xk;
                    moved.see(d, xk, i);
                } else {
                    (f[k], t[k]) = (force, torque);
                }
                (v[k], w[k]) = (vk, wk);
                watch.see(xk, vk, wk);
            }
            let displacement2 = if next { moved.displacement2 } else { 0.0 };
            Sweep { displacement2, suspicious: watch.suspicious(d) }
        })
        .reduce(Sweep::default, Sweep::join)
}

/// Total force of every particle without moving anything (after a force evaluation that is
/// not part of a step).
pub fn gather_only(s: &mut State, list: &NeighbourList, incoming: &Incoming, owners: &Owners) {
    (s.force.par_chunks_mut(CHUNK), s.torque.par_chunks_mut(CHUNK)).into_par_iter().enumerate().for_each(|(c, (f, t))| {
        for k in 0..f.len() {
            let i = c * CHUNK + k;
            (f[k], t[k]) = gather(list, incoming, owners, i);
        }
    });
}
