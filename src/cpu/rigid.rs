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
    /// Per particle id: its lever arm, the offset turned into the space frame by its body's
    /// current orientation (`arm`), kept with the orientation (`kick_drift`), so that
    /// `place` and the totals of `gather_kick` read it rather than turn the offset twice a step.
    pub arm: Vec<DVec3>,
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
            arm: (0..b.body_of.len()).map(|u| body_to_space(quat(b.orientation[b.body_of[u] as usize]), DVec3::from(b.offset[u]))).collect(),
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

    /// The lever arm of particle id `u` (its offset turned into the space frame by its body's
    /// orientation).
    #[inline]
    pub fn arm(&self, u: usize) -> DVec3 {
        self.arm[u]
    }

    /// The centre of body `b` without the periodic wrapping.
    pub fn unwrapped(&self, b: usize, period: DVec3) -> DVec3 {
        let k = self.image[b];
        self.position[b] + DVec3::new(k[0] as f64, k[1] as f64, k[2] as f64) * period
    }
}

/// `arm` (per particle id) cut into the runs of `bodies`-body chunks, chunk after chunk: a
/// body's components are consecutive ids in body order (`Bodies::check`).
fn arm_chunks<'a>(arm: &'a mut [DVec3], first: &[u32], count: &[u32], bodies: usize) -> Vec<&'a mut [DVec3]> {
    let mut rest = arm;
    let mut out = Vec::with_capacity(first.len().div_ceil(bodies));
    for c in 0..first.len().div_ceil(bodies) {
        let last = ((c + 1) * bodies).min(first.len()) - 1;
        let (run, tail) = rest.split_at_mut((first[last] + count[last] - first[c * bodies]) as usize);
        out.push(run);
        rest = tail;
    }
    out
}

/// First half of a step for every body: half kick of v and L with the last totals, drift of
/// the centre and of the orientation. The rotation drifts of `LANES` bodies at a time run side
/// by side (`rotation_drift_lanes`, the same bits as one by one), compiled for the widest
/// instruction set the CPU has (`isa::hot`): the drift was half of a clump step.
pub fn kick_drift(bodies: &mut BodyState, d: &Drift) {
    const BODIES: usize = 64 * LANES;
    let isa = super::isa::isa();
    let (inv_m, moments, f, t, offset) = (&bodies.inv_mass, &bodies.moments, &bodies.force, &bodies.torque, &bodies.offset);
    let arms = arm_chunks(&mut bodies.arm, &bodies.first, &bodies.count, BODIES);
    let (starts, counts) = (&bodies.first, &bodies.count);
    (bodies.position.par_chunks_mut(BODIES), bodies.image.par_chunks_mut(BODIES), bodies.orientation.par_chunks_mut(BODIES), bodies.velocity.par_chunks_mut(BODIES), bodies.angular_momentum.par_chunks_mut(BODIES), bodies.omega.par_chunks_mut(BODIES), arms)
        .into_par_iter()
        .enumerate()
        .for_each(|(c, (x, image, q, v, l, w, arm))| {
            let first = c * BODIES;
            for k in 0..x.len() {
                let b = first + k;
                let (dv, dl) = d.half_kick(f[b], t[b], inv_m[b], 1.0);
                v[k] += dv;
                l[k] += dl;
                x[k] = d.drift(x[k], &mut image[k], v[k]);
            }
            let whole = q.len() / LANES * LANES;
            super::isa::hot(isa, #[inline(always)] || {
                for (g, (qs, ls)) in q[..whole].chunks_exact_mut(LANES).zip(l[..whole].chunks_exact(LANES)).enumerate() {
                    let b = first + g * LANES;
                    let turned = rotation_drift_lanes(std::array::from_fn(|k| qs[k]), std::array::from_fn(|k| ls[k]), std::array::from_fn(|k| moments[b + k]), d.dt);
                    qs.copy_from_slice(&turned);
                }
            });
            for k in whole..q.len() {
                q[k] = rotation_drift(q[k], l[k], moments[first + k], d.dt);
            }
            for k in 0..q.len() {
                w[k] = angular_velocity(q[k], moments[first + k], l[k]);
            }
            // the components' lever arms at the new orientation (`BodyState::arm`)
            let base = starts[first] as usize;
            for k in 0..q.len() {
                let run = starts[first + k] as usize..(starts[first + k] + counts[first + k]) as usize;
                for u in run {
                    arm[u - base] = body_to_space(q[k], offset[u]);
                }
            }
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
    let (first, count, arm, orientation, moments, inv_m) = (&bodies.first, &bodies.count, &bodies.arm, &bodies.orientation, &bodies.moments, &bodies.inv_mass);
    (bodies.velocity.par_iter_mut(), bodies.angular_momentum.par_iter_mut(), bodies.omega.par_iter_mut(), bodies.force.par_iter_mut(), bodies.torque.par_iter_mut())
        .into_par_iter()
        .enumerate()
        .for_each(|(b, (v, l, w, f_out, t_out))| {
            let (f, t) = totals(s, first[b], count[b], arm);
            let (dv, dl) = d.half_kick(f, t, inv_m[b], 1.0);
            *v += dv;
            *l += dl;
            *w = angular_velocity(orientation[b], moments[b], *l);
            (*f_out, *t_out) = (f, t);
        });
}

/// The total force and torque about the centre of the body whose components are the `count`
/// particle ids from `first`, summed in that order, their lever arms `arm` (per id).
#[inline]
fn totals(s: &State, first: u32, count: u32, arm: &[DVec3]) -> (DVec3, DVec3) {
    let (mut f, mut t) = (DVec3::ZERO, DVec3::ZERO);
    let run = first as usize..(first + count) as usize;
    for (&i, &arm) in s.index_of[run.clone()].iter().zip(&arm[run]) {
        let i = i as usize;
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
        (bodies.force[b], bodies.torque[b]) = totals(s, bodies.first[b], bodies.count[b], &bodies.arm);
    }
}

/// Bodies whose rotation drift `kick_drift` evaluates together, one per SIMD lane.
pub const LANES: usize = 4;

/// `LANES` values of one quantity.
type Lanes = [f64; LANES];

/// A 3-vector of `LANES` bodies.
#[derive(Clone, Copy)]
struct V3 {
    x: Lanes,
    y: Lanes,
    z: Lanes,
}

#[inline(always)]
fn lanes(f: impl Fn(usize) -> f64) -> Lanes {
    std::array::from_fn(f)
}

impl V3 {
    #[inline(always)]
    fn of(v: [DVec3; LANES]) -> V3 {
        V3 { x: lanes(|k| v[k].x), y: lanes(|k| v[k].y), z: lanes(|k| v[k].z) }
    }
    #[inline(always)]
    fn splat(v: DVec3) -> V3 {
        V3 { x: [v.x; LANES], y: [v.y; LANES], z: [v.z; LANES] }
    }
    #[inline(always)]
    fn map(self, o: V3, f: impl Fn(f64, f64) -> f64) -> V3 {
        V3 { x: lanes(|k| f(self.x[k], o.x[k])), y: lanes(|k| f(self.y[k], o.y[k])), z: lanes(|k| f(self.z[k], o.z[k])) }
    }
    #[inline(always)]
    fn scale(self, s: Lanes) -> V3 {
        V3 { x: lanes(|k| self.x[k] * s[k]), y: lanes(|k| self.y[k] * s[k]), z: lanes(|k| self.z[k] * s[k]) }
    }
    /// glam's `DVec3::dot`: (x x') + (y y') + (z z').
    #[inline(always)]
    fn dot(self, o: V3) -> Lanes {
        lanes(|k| (self.x[k] * o.x[k]) + (self.y[k] * o.y[k]) + (self.z[k] * o.z[k]))
    }
    /// glam's `DVec3::cross`.
    #[inline(always)]
    fn cross(self, o: V3) -> V3 {
        V3 {
            x: lanes(|k| self.y[k] * o.z[k] - o.y[k] * self.z[k]),
            y: lanes(|k| self.z[k] * o.x[k] - o.z[k] * self.x[k]),
            z: lanes(|k| self.x[k] * o.y[k] - o.x[k] * self.y[k]),
        }
    }
}

/// `rigid::integrate::rotation_drift` of `LANES` bodies at once: the same IEEE operations in
/// the same order in every lane (so the same bits, `tests` below), written over arrays so that
/// the compiler runs the lanes in SIMD registers. The series of `cos_sin` is evaluated in every
/// lane; a lane whose half angle is beyond `ROTOR_SERIES_LIMIT` takes the builtins instead.
#[inline(always)]
fn rotation_drift_lanes(q: [DQuat; LANES], l: [DVec3; LANES], moments: [DVec3; LANES], dt: f64) -> [DQuat; LANES] {
    use crate::rigid::integrate::{inverse_moments, ROTOR_SERIES_LIMIT};
    let inv = V3::of(std::array::from_fn(|k| inverse_moments(moments[k])));
    let half = 0.5 * dt;
    // q as (vector part u, scalar w); Rᵀ(q) l = R(q*) l (`space_to_body`, `body_to_space`)
    let (mut u, mut w) = (V3 { x: lanes(|k| q[k].x), y: lanes(|k| q[k].y), z: lanes(|k| q[k].z) }, lanes(|k| q[k].w));
    let conj = V3 { x: lanes(|k| -u.x[k]), y: lanes(|k| -u.y[k]), z: lanes(|k| -u.z[k]) };
    let v = V3::of(l);
    let t = conj.cross(v).scale([2.0; LANES]);
    let mut lb = v.map(t.scale(w), |a, b| a + b).map(conj.cross(t), |a, b| a + b);
    for (axis, h) in [(DVec3::X, half), (DVec3::Y, half), (DVec3::Z, dt), (DVec3::Y, half), (DVec3::X, half)] {
        // `rotor_substep`
        let e = V3::splat(axis);
        let lb_k = e.dot(lb);
        let rate = e.dot(inv);
        let theta = lanes(|k| lb_k[k] * rate[k] * h);
        let phi = lanes(|k| 0.5 * theta[k]);
        // `cos_sin`
        let p2 = lanes(|k| phi[k] * phi[k]);
        let mut s = lanes(|k| phi[k] * (1.0 - p2[k] / 6.0 * (1.0 - p2[k] / 20.0 * (1.0 - p2[k] / 42.0 * (1.0 - p2[k] / 72.0 * (1.0 - p2[k] / 110.0 * (1.0 - p2[k] / 156.0)))))));
        let mut c = lanes(|k| 1.0 - p2[k] / 2.0 * (1.0 - p2[k] / 12.0 * (1.0 - p2[k] / 30.0 * (1.0 - p2[k] / 56.0 * (1.0 - p2[k] / 90.0 * (1.0 - p2[k] / 132.0 * (1.0 - p2[k] / 182.0)))))));
        for k in 0..LANES {
            if phi[k].abs() >= ROTOR_SERIES_LIMIT || phi[k].is_nan() {
                (c[k], s[k]) = (phi[k].cos(), phi[k].sin());
            }
        }
        let cos_t = lanes(|k| 1.0 - 2.0 * s[k] * s[k]);
        let sin_t = lanes(|k| 2.0 * s[k] * c[k]);
        let along = e.scale(lb_k);
        lb = along.map(lb.map(along, |a, b| a - b).scale(cos_t), |a, b| a + b).map(e.cross(lb).scale(sin_t), |a, b| a - b);
        // q ⊗ (turn, c): `quat_mul`
        let turn = e.scale(s);
        let nw = lanes(|k| w[k] * c[k] - u.dot(turn)[k]);
        u = turn.scale(w).map(u.scale(c), |a, b| a + b).map(u.cross(turn), |a, b| a + b);
        w = nw;
    }
    // `quat_normalize`: (x, y, z, w) / |(x, y, z, w)|
    let norm = lanes(|k| ((u.x[k] * u.x[k]) + (u.y[k] * u.y[k]) + (u.z[k] * u.z[k]) + (w[k] * w[k])).sqrt());
    std::array::from_fn(|k| DQuat::from_xyzw(u.x[k] / norm[k], u.y[k] / norm[k], u.z[k] / norm[k], w[k] / norm[k]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// The lanes give `rotation_drift`'s bits, for small and large angles, zero and negative
    /// moments, and a lane beside a non-finite one.
    #[test]
    fn rotation_drift_in_lanes_is_the_scalar_one_bit_for_bit() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(9);
        for case in 0..20_000 {
            let q: [DQuat; LANES] = std::array::from_fn(|_| DQuat::from_xyzw(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0)).normalize());
            let scale = [1e-12, 1e-6, 1e-3, 1.0, 1e3][case % 5];
            let l: [DVec3; LANES] = std::array::from_fn(|_| DVec3::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0)) * scale);
            let mut moments: [DVec3; LANES] = std::array::from_fn(|_| DVec3::new(rng.random_range(1e-9..1e-6), rng.random_range(1e-9..1e-6), rng.random_range(1e-9..1e-6)));
            if case % 7 == 0 {
                moments[1].y = 0.0;
                moments[2].z = -1e-7;
            }
            let mut l = l;
            if case % 11 == 0 {
                l[3].x = f64::NAN;
            }
            let dt = [1e-6, 1e-5, 1e-4][case % 3];
            let lanes = rotation_drift_lanes(q, l, moments, dt);
            for k in 0..LANES {
                let one = rotation_drift(q[k], l[k], moments[k], dt);
                let bits = |x: DQuat| [x.x, x.y, x.z, x.w].map(f64::to_bits);
                assert!(bits(lanes[k]) == bits(one) || (l[k].x.is_nan() && lanes[k].is_nan() && one.is_nan()), "case {case}, lane {k}: {:?} against {:?}", lanes[k], one);
            }
        }
    }
}
