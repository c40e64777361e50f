//! Rigid bodies on the CPU (clumps, `crate::model::body`): the body state, the two body
//! sweeps of a step and the placement of the components.
//!
//! A step of a scene with bodies: `kick_drift` (per body: half kick of v and L with the last
//! totals, drift of the centre, rotation drift of q, `crate::rigid::integrate`) → `place` (per
//! component: position, velocity and spin from its body) → the force pass on the components,
//! exactly as for spheres (pairs of one body are not listed) → `forces::gather` per component
//! (`integrate::gather_only`) → `gather_kick` (per body: its components' forces and torques
//! summed in template order, the lever arm R(q)·offset from the centre; second half kick) →
//! `place_velocities`. The component arrays are in the state's internal order; a body finds
//! its components through `State::index_of`, so the sums do not depend on that order.

use glam::{DQuat, DVec3};
use rayon::prelude::*;

use super::integrate::{Drift, Moved, Sweep, Watch};
use super::neighbour::CHUNK;
use super::state::State;
use crate::model::body::{quat, wxyz, Bodies};
use crate::rigid::integrate::{angular_velocity, body_to_space, rotation_drift};

/// The body state the CPU steps, in body-id order, with the per-particle-id body and offset.
#[derive(Clone, Debug, Default)]
pub struct BodyState {
    pub position: Vec<DVec3>,
    pub image: Vec<[i32; 3]>,
    pub orientation: Vec<DQuat>,
    pub velocity: Vec<DVec3>,
    pub angular_momentum: Vec<DVec3>,
    /// ω of the current orientation and momentum (`model::body::omega`).
    pub omega: Vec<DVec3>,
    pub mass: Vec<f64>,
    pub inv_mass: Vec<f64>,
    pub moments: Vec<DVec3>,
    /// Total force and torque (about the centre) of the last force pass, gravity excluded.
    pub force: Vec<DVec3>,
    pub torque: Vec<DVec3>,
    pub first: Vec<u32>,
    pub count: Vec<u32>,
    pub template: Vec<u32>,
    /// Per particle id.
    pub body_of: Vec<u32>,
    pub offset: Vec<DVec3>,
}

impl BodyState {
    pub fn of(b: &Bodies) -> BodyState {
        let v = |a: &Vec<[f64; 3]>| a.iter().map(|&x| DVec3::from(x)).collect::<Vec<_>>();
        let n = b.len();
        BodyState {
            position: v(&b.position),
            image: b.image.clone(),
            orientation: b.orientation.iter().map(|&q| quat(q)).collect(),
            velocity: v(&b.velocity),
            angular_momentum: v(&b.angular_momentum),
            omega: (0..n).map(|k| angular_velocity(quat(b.orientation[k]), DVec3::from(b.moments[k]), DVec3::from(b.angular_momentum[k]))).collect(),
            mass: b.mass.clone(),
            inv_mass: b.mass.iter().map(|m| 1.0 / m).collect(),
            moments: v(&b.moments),
            force: vec![DVec3::ZERO; n],
            torque: vec![DVec3::ZERO; n],
            first: b.first.clone(),
            count: b.count.clone(),
            template: b.template.clone(),
            body_of: b.body_of.clone(),
            offset: v(&b.offset),
        }
    }

    pub fn len(&self) -> usize {
        self.mass.len()
    }

    pub fn is_empty(&self) -> bool {
        self.mass.is_empty()
    }

    /// The table in the exchange form.
    pub fn export(&self) -> Bodies {
        let a = |v: &Vec<DVec3>| v.iter().map(|x| x.to_array()).collect::<Vec<_>>();
        Bodies {
            position: a(&self.position),
            image: self.image.clone(),
            orientation: self.orientation.iter().map(|&q| wxyz(q)).collect(),
            velocity: a(&self.velocity),
            angular_momentum: a(&self.angular_momentum),
            mass: self.mass.clone(),
            moments: a(&self.moments),
            first: self.first.clone(),
            count: self.count.clone(),
            template: self.template.clone(),
            body_of: self.body_of.clone(),
            offset: a(&self.offset),
        }
    }

    /// The lever arm of particle id `u` (its offset turned into the space frame).
    #[inline]
    pub fn arm(&self, u: usize) -> DVec3 {
        let b = self.body_of[u] as usize;
        body_to_space(self.orientation[b], self.offset[u])
    }

    /// The centre of body `b` without the periodic wrapping.
    pub fn unwrapped(&self, b: usize, period: DVec3) -> DVec3 {
        let k = self.image[b];
        self.position[b] + DVec3::new(k[0] as f64, k[1] as f64, k[2] as f64) * period
    }
}

/// First half of a step for every body: half kick of v and L with the last totals, drift of
/// the centre and of the orientation.
pub fn kick_drift(bodies: &mut BodyState, d: &Drift) {
    let (inv_m, moments, f, t) = (&bodies.inv_mass, &bodies.moments, &bodies.force, &bodies.torque);
    (bodies.position.par_iter_mut(), bodies.image.par_iter_mut(), bodies.orientation.par_iter_mut(), bodies.velocity.par_iter_mut(), bodies.angular_momentum.par_iter_mut(), bodies.omega.par_iter_mut())
        .into_par_iter()
        .enumerate()
        .for_each(|(b, (x, image, q, v, l, w))| {
            let (dv, dl) = d.half_kick(f[b], t[b], inv_m[b], 1.0);
            *v += dv;
            *l += dl;
            *x = d.drift(*x, image, *v);
            *q = rotation_drift(*q, *l, moments[b], d.dt);
            *w = angular_velocity(*q, moments[b], *l);
        });
}

/// Every component placed on its body: position (wrapped on periodic axes, with its image),
/// velocity v + ω × arm and spin ω. Returns what the sweep saw, as `integrate::kick_drift`.
pub fn place(s: &mut State, bodies: &BodyState, d: &Drift, x_build: &[DVec3]) -> Sweep {
    let n = s.len();
    let ids = &s.id;
    (s.position.par_chunks_mut(CHUNK), s.velocity.par_chunks_mut(CHUNK), s.angular_velocity.par_chunks_mut(CHUNK), s.image.par_chunks_mut(CHUNK))
        .into_par_iter()
        .with_max_len(1)
        .enumerate()
        .map(|(c, (x, v, w, image))| {
            let mut watch = Watch::new();
            let mut moved = Moved::new(x_build, n);
            for k in 0..x.len() {
                let i = c * CHUNK + k;
                let u = ids[i] as usize;
                let b = bodies.body_of[u] as usize;
                let arm = bodies.arm(u);
                let mut img = bodies.image[b];
                let xk = d.wrap(bodies.position[b] + arm, &mut img);
                let wk = bodies.omega[b];
                let vk = bodies.velocity[b] + wk.cross(arm);
                (x[k], v[k], w[k], image[k]) = (xk, vk, wk, img);
                watch.see(xk, vk, wk);
                moved.see(d, xk, i);
            }
            Sweep { displacement2: moved.displacement2, suspicious: watch.suspicious(d) }
        })
        .reduce(Sweep::default, Sweep::join)
}

/// After a force pass whose per-component totals are in `State::force`, `torque`
/// (`integrate::gather_only`): each body's total force and torque about its centre, its
/// components in template order, then the second half kick.
pub fn gather_kick(s: &State, bodies: &mut BodyState, d: &Drift) {
    let (first, count, offset, orientation, moments, inv_m) = (&bodies.first, &bodies.count, &bodies.offset, &bodies.orientation, &bodies.moments, &bodies.inv_mass);
    (bodies.velocity.par_iter_mut(), bodies.angular_momentum.par_iter_mut(), bodies.omega.par_iter_mut(), bodies.force.par_iter_mut(), bodies.torque.par_iter_mut())
        .into_par_iter()
        .enumerate()
        .for_each(|(b, (v, l, w, f_out, t_out))| {
            let (f, t) = totals(s, first[b], count[b], offset, orientation[b]);
            let (dv, dl) = d.half_kick(f, t, inv_m[b], 1.0);
            *v += dv;
            *l += dl;
            *w = angular_velocity(orientation[b], moments[b], *l);
            (*f_out, *t_out) = (f, t);
        });
}

/// The total force and torque about the centre of the body at orientation `q` whose
/// components are the `count` particle ids from `first`, summed in that order.
#[inline]
fn totals(s: &State, first: u32, count: u32, offset: &[DVec3], q: DQuat) -> (DVec3, DVec3) {
    let (mut f, mut t) = (DVec3::ZERO, DVec3::ZERO);
    let run = first as usize..(first + count) as usize;
    for (&i, &o) in s.index_of[run.clone()].iter().zip(&offset[run]) {
        let i = i as usize;
        let arm = body_to_space(q, o);
        f += s.force[i];
        t += arm.cross(s.force[i]) + s.torque[i];
    }
    (f, t)
}

/// The components' velocities and spins from their bodies (positions unchanged).
pub fn place_velocities(s: &mut State, bodies: &BodyState) {
    let ids = &s.id;
    (s.velocity.par_chunks_mut(CHUNK), s.angular_velocity.par_chunks_mut(CHUNK)).into_par_iter().enumerate().for_each(|(c, (v, w))| {
        for k in 0..v.len() {
            let u = ids[c * CHUNK + k] as usize;
            let b = bodies.body_of[u] as usize;
            let wk = bodies.omega[b];
            (v[k], w[k]) = (bodies.velocity[b] + wk.cross(bodies.arm(u)), wk);
        }
    });
}

/// Totals of every body from the per-component totals, without kicking (after a force
/// evaluation that is not part of a step).
pub fn gather_only(s: &State, bodies: &mut BodyState) {
    for b in 0..bodies.len() {
        (bodies.force[b], bodies.torque[b]) = totals(s, bodies.first[b], bodies.count[b], &bodies.offset, bodies.orientation[b]);
    }
}
