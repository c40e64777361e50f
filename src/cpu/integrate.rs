//! Velocity-Verlet integration, same passes as `shaders/drift.wgsl` and `shaders/kick.wgsl`:
//! half kick + drift before the force pass, half kick after it. After a force pass,
//! `gather_kick` forms each particle's total force (`forces::gather`), applies the second half
//! kick and, inside a batch, the next step's half kick and drift in the same sweep; the
//! arithmetic is that of the separate passes, so the result does not depend on the fusion.

use glam::DVec3;
use rayon::prelude::*;

use super::forces::{gather, SlotForce};
use super::neighbour::{NeighbourList, CHUNK};
use super::state::{Owned, State};
use crate::setup::Setup;

/// Constants of the drift: periodic axes, domain minimum and period.
#[derive(Clone, Copy, Debug)]
pub struct Drift {
    pub dt: f64,
    pub gravity: DVec3,
    periodic: [bool; 3],
    min: DVec3,
    period: DVec3,
}

impl Drift {
    pub fn new(setup: &Setup, dt: f64) -> Drift {
        Drift { dt, gravity: DVec3::from(setup.gravity), periodic: setup.periodic, min: DVec3::from(setup.domain.min), period: setup.period() }
    }

    /// v += (F/m + g)·dt/2, ω += T/I·dt/2.
    #[inline]
    fn half_kick(&self, v: &mut DVec3, w: &mut DVec3, f: DVec3, t: DVec3, inv_mass: f64, inv_inertia: f64) {
        let half = 0.5 * self.dt;
        *v += (f * inv_mass + self.gravity) * half;
        *w += t * (inv_inertia * half);
    }

    /// x += v·dt; a particle that left [min, max) on a periodic axis re-enters on the other
    /// side (its image count keeps the unwrapped position).
    #[inline]
    fn drift(&self, x: &mut DVec3, image: &mut [i32; 3], v: DVec3) {
        let mut y = *x + v * self.dt;
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
        *x = y;
    }
}

/// First half of a step for every particle: half kick with the stored force, then drift.
pub fn kick_drift(s: &mut State, d: &Drift) {
    let (inv_m, inv_i) = (&s.inv_mass, &s.inv_inertia);
    (s.position.par_chunks_mut(CHUNK), s.velocity.par_chunks_mut(CHUNK), s.angular_velocity.par_chunks_mut(CHUNK), s.image.par_chunks_mut(CHUNK), s.force.par_chunks(CHUNK), s.torque.par_chunks(CHUNK))
        .into_par_iter()
        .enumerate()
        .for_each(|(c, (x, v, w, image, f, t))| {
            for k in 0..x.len() {
                let i = c * CHUNK + k;
                d.half_kick(&mut v[k], &mut w[k], f[k], t[k], inv_m[i], inv_i[i]);
                d.drift(&mut x[k], &mut image[k], v[k]);
            }
        });
}

/// After a force pass: total force of every particle, second half kick, and with `next` the
/// next step's half kick and drift.
pub fn gather_kick(s: &mut State, list: &NeighbourList, slot_force: &[SlotForce], owned: &[Owned], d: &Drift, next: bool) {
    let (inv_m, inv_i) = (&s.inv_mass, &s.inv_inertia);
    (s.position.par_chunks_mut(CHUNK), s.velocity.par_chunks_mut(CHUNK), s.angular_velocity.par_chunks_mut(CHUNK), s.image.par_chunks_mut(CHUNK), s.force.par_chunks_mut(CHUNK), s.torque.par_chunks_mut(CHUNK))
        .into_par_iter()
        .enumerate()
        .for_each(|(c, (x, v, w, image, f, t))| {
            for k in 0..x.len() {
                let i = c * CHUNK + k;
                (f[k], t[k]) = gather(list, slot_force, &owned[i], i);
                d.half_kick(&mut v[k], &mut w[k], f[k], t[k], inv_m[i], inv_i[i]);
                if next {
                    d.half_kick(&mut v[k], &mut w[k], f[k], t[k], inv_m[i], inv_i[i]);
                    d.drift(&mut x[k], &mut image[k], v[k]);
                }
            }
        });
}

/// Total force of every particle without moving anything (after a force evaluation that is
/// not part of a step).
pub fn gather_only(s: &mut State, list: &NeighbourList, slot_force: &[SlotForce], owned: &[Owned]) {
    (s.force.par_chunks_mut(CHUNK), s.torque.par_chunks_mut(CHUNK)).into_par_iter().enumerate().for_each(|(c, (f, t))| {
        for k in 0..f.len() {
            let i = c * CHUNK + k;
            (f[k], t[k]) = gather(list, slot_force, &owned[i], i);
        }
    });
}
