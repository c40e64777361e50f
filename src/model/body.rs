//! Rigid bodies (clumps of component spheres, issue 32): the body table a scene resolves to and
//! the backends export and import.
//!
//! Components are particles: every sphere a contact sees is one, at
//! `body centre + R(q)·offset`, moving with `v + ω × R(q)·offset` and spinning at ω. A body
//! owns a contiguous run of particle ids (`first`, `count`), in the order its template lists
//! them; that order is the fixed order in which the body sums its components' forces. A scene
//! without clumps has an empty table and steps as before; a scene with clumps makes every
//! particle a body (a lone sphere is a one-component body with isotropic moments).
//!
//! The state is the centre (wrapped into the domain on periodic axes like a particle, with its
//! image count), the orientation q (unit quaternion w, x, y, z, body → space), the velocity and
//! the angular momentum L in the space frame; the body frame is the principal frame, so the
//! inertia is three principal moments. ω = R diag(1/I) Rᵀ L (`crate::rigid`).

use glam::{DQuat, DVec3};

use crate::rigid::integrate::{angular_velocity, body_to_space, space_to_body};

/// A particle that belongs to no body (`Bodies::body_of` of a scene without clumps is empty).
pub const NO_BODY: u32 = u32::MAX;

/// Every body of a scene or a backend's exported state, in body-id order, with the body-frame
/// offset of every component in particle-id order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Bodies {
    /// Centre of mass, m (wrapped into the domain on periodic axes).
    pub position: Vec<[f64; 3]>,
    /// Periods removed from the centre on each periodic axis.
    pub image: Vec<[i32; 3]>,
    /// Unit quaternion (w, x, y, z) that turns the body (principal) frame into the space frame.
    pub orientation: Vec<[f64; 4]>,
    /// m/s
    pub velocity: Vec<[f64; 3]>,
    /// Angular momentum about the centre, space frame, kg m²/s.
    pub angular_momentum: Vec<[f64; 3]>,
    /// kg
    pub mass: Vec<f64>,
    /// Principal moments about the centre, kg m² (the body frame's axes).
    pub moments: Vec<[f64; 3]>,
    /// First component's particle id and the number of components.
    pub first: Vec<u32>,
    pub count: Vec<u32>,
    /// Index into `Setup::clump_templates` of the body's shape (`NO_BODY` for a lone sphere).
    pub template: Vec<u32>,
    /// Per particle id: the body it belongs to.
    pub body_of: Vec<u32>,
    /// Per particle id: its centre in the body frame, relative to the body's centre, m.
    pub offset: Vec<[f64; 3]>,
}

impl Bodies {
    /// Number of bodies.
    pub fn len(&self) -> usize {
        self.mass.len()
    }

    pub fn is_empty(&self) -> bool {
        self.mass.is_empty()
    }

    /// The largest distance of a component's centre from its body's centre of mass, m.
    pub fn reach(&self) -> f64 {
        self.offset.iter().map(|o| (o[0] * o[0] + o[1] * o[1] + o[2] * o[2]).sqrt()).fold(0.0, f64::max)
    }

    /// Append a body at rest of `mass` and principal `moments` whose components are the
    /// `offsets.len()` particles from id `first` on.
    #[allow(clippy::too_many_arguments)]
    pub fn push(&mut self, position: [f64; 3], orientation: [f64; 4], velocity: [f64; 3], angular_momentum: [f64; 3], mass: f64, moments: [f64; 3], template: u32, first: u32, offsets: &[[f64; 3]]) {
        let b = self.len() as u32;
        assert_eq!(first as usize, self.body_of.len(), "a body's components are the next particle ids");
        self.position.push(position);
        self.image.push([0; 3]);
        self.orientation.push(orientation);
        self.velocity.push(velocity);
        self.angular_momentum.push(angular_momentum);
        self.mass.push(mass);
        self.moments.push(moments);
        self.first.push(first);
        self.count.push(offsets.len() as u32);
        self.template.push(template);
        self.body_of.extend(std::iter::repeat_n(b, offsets.len()));
        self.offset.extend_from_slice(offsets);
    }

    /// Append a lone sphere of `mass` and radius `r` as a one-component body (isotropic
    /// moments 2/5 m r², identity orientation, spinning at `angular_velocity`) whose component
    /// is particle id `first`.
    pub fn push_sphere(&mut self, position: [f64; 3], velocity: [f64; 3], angular_velocity: [f64; 3], mass: f64, r: f64, first: u32) {
        let m = 0.4 * mass * r * r;
        let q = [1.0, 0.0, 0.0, 0.0];
        let l = angular_momentum(q, [m; 3], angular_velocity);
        self.push(position, q, velocity, l, mass, [m; 3], NO_BODY, first, &[[0.0; 3]]);
    }

    /// Keep the bodies with `keep[b]` and their components (particle flags in `keep_particle`
    /// must agree: a body is removed whole), renumbering bodies and component ids in order.
    pub fn retain(&mut self, keep: &[bool]) -> Vec<bool> {
        assert_eq!(keep.len(), self.len());
        let mut keep_particle = Vec::with_capacity(self.body_of.len());
        for &b in &self.body_of {
            keep_particle.push(keep[b as usize]);
        }
        let mut k = keep.iter();
        let mut next_first = 0u32;
        let mut new_id = vec![NO_BODY; keep.len()];
        let mut nb = 0u32;
        for (b, &kb) in keep.iter().enumerate() {
            if kb {
                new_id[b] = nb;
                nb += 1;
            }
        }
        macro_rules! by_body {
            ($($f:ident),*) => {$({
                let mut k = keep.iter();
                self.$f.retain(|_| *k.next().unwrap());
            })*};
        }
        by_body!(position, image, orientation, velocity, angular_momentum, mass, moments, template);
        let counts: Vec<u32> = self.count.iter().copied().filter(|_| *k.next().unwrap()).collect();
        self.first.clear();
        for &c in &counts {
            self.first.push(next_first);
            next_first += c;
        }
        self.count = counts;
        let mut kp = keep_particle.iter();
        self.offset.retain(|_| *kp.next().unwrap());
        self.body_of = self.body_of.iter().filter(|&&b| keep[b as usize]).map(|&b| new_id[b as usize]).collect();
        keep_particle
    }

    /// Append the bodies of `other` (whose components are its own particle ids from 0) after
    /// these, their components the particles after this table's: `first` and `body_of` moved
    /// on by the particles and bodies held here.
    pub fn extend_from(&mut self, other: &Bodies) {
        let (n, nb) = (self.body_of.len() as u32, self.len() as u32);
        self.position.extend_from_slice(&other.position);
        self.image.extend_from_slice(&other.image);
        self.orientation.extend_from_slice(&other.orientation);
        self.velocity.extend_from_slice(&other.velocity);
        self.angular_momentum.extend_from_slice(&other.angular_momentum);
        self.mass.extend_from_slice(&other.mass);
        self.moments.extend_from_slice(&other.moments);
        self.first.extend(other.first.iter().map(|&f| f + n));
        self.count.extend_from_slice(&other.count);
        self.template.extend_from_slice(&other.template);
        self.body_of.extend(other.body_of.iter().map(|&b| b + nb));
        self.offset.extend_from_slice(&other.offset);
    }

    /// The bodies from body `b` on, as a table of their own (components from particle id 0).
    pub fn tail(&self, b: usize) -> Bodies {
        let n0 = self.first.get(b).copied().unwrap_or(self.body_of.len() as u32);
        let p = n0 as usize;
        Bodies {
            position: self.position[b..].to_vec(),
            image: self.image[b..].to_vec(),
            orientation: self.orientation[b..].to_vec(),
            velocity: self.velocity[b..].to_vec(),
            angular_momentum: self.angular_momentum[b..].to_vec(),
            mass: self.mass[b..].to_vec(),
            moments: self.moments[b..].to_vec(),
            first: self.first[b..].iter().map(|&f| f - n0).collect(),
            count: self.count[b..].to_vec(),
            template: self.template[b..].to_vec(),
            body_of: self.body_of[p..].iter().map(|&k| k - b as u32).collect(),
            offset: self.offset[p..].to_vec(),
        }
    }

    /// Whether the table is consistent with `n` particles: every particle in exactly the body
    /// whose run holds it, runs contiguous from id 0, positive masses and non-negative moments.
    pub fn check(&self, n: usize) -> Result<(), String> {
        let nb = self.len();
        if self.body_of.len() != n || self.offset.len() != n {
            return Err(format!("{} body ids and {} offsets for {n} particles", self.body_of.len(), self.offset.len()));
        }
        let mut next = 0u32;
        for b in 0..nb {
            if self.first[b] != next || self.count[b] == 0 {
                return Err(format!("body {b} holds particles {}..+{}, expected to start at {next} with at least one", self.first[b], self.count[b]));
            }
            if let Some(i) = (next..next + self.count[b]).find(|&i| self.body_of.get(i as usize) != Some(&(b as u32))) {
                return Err(format!("particle {i} is listed in body {b} but says it belongs to body {}", self.body_of.get(i as usize).copied().unwrap_or(NO_BODY)));
            }
            let bad = |x: f64| x.is_nan() || x < 0.0;
            if bad(self.mass[b]) || self.mass[b] == 0.0 || self.moments[b].iter().any(|&m| bad(m)) {
                let m = self.moments[b];
                return Err(format!("body {b} has mass {} and moments [{}, {}, {}]", crate::error::fmt_num(self.mass[b]), crate::error::fmt_num(m[0]), crate::error::fmt_num(m[1]), crate::error::fmt_num(m[2])));
            }
            next += self.count[b];
        }
        if next as usize != n {
            return Err(format!("the bodies hold {next} particles, not {n}"));
        }
        Ok(())
    }

    /// Translational and rotational kinetic energy of body `b` (½ M v², ½ L·ω).
    pub fn kinetic(&self, b: usize) -> (f64, f64) {
        let v = self.velocity[b];
        let t = 0.5 * self.mass[b] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        let w = omega(self.orientation[b], self.moments[b], self.angular_momentum[b]);
        let l = self.angular_momentum[b];
        (t, 0.5 * (l[0] * w[0] + l[1] * w[1] + l[2] * w[2]))
    }
}

/// A uniformly distributed unit quaternion (Shoemake's method).
pub fn random_orientation(rng: &mut rand_pcg::Pcg64) -> [f64; 4] {
    use rand::Rng;
    let (u1, u2, u3): (f64, f64, f64) = (rng.random(), rng.random(), rng.random());
    let (a, b) = ((1.0 - u1).sqrt(), u1.sqrt());
    let tau = std::f64::consts::TAU;
    [a * (tau * u2).sin(), a * (tau * u2).cos(), b * (tau * u3).sin(), b * (tau * u3).cos()]
}

/// The quaternion (w, x, y, z) of the tables as glam's `DQuat`.
#[inline]
pub fn quat(q: [f64; 4]) -> DQuat {
    DQuat::from_xyzw(q[1], q[2], q[3], q[0])
}

/// A `DQuat` as the tables store it, (w, x, y, z).
#[inline]
pub fn wxyz(q: DQuat) -> [f64; 4] {
    [q.w, q.x, q.y, q.z]
}

/// Rotate `v` by the unit quaternion `q` (w, x, y, z): body frame → space.
pub fn rotate(q: [f64; 4], v: [f64; 3]) -> [f64; 3] {
    body_to_space(quat(q), DVec3::from(v)).to_array()
}

/// Rotate `v` by the inverse of the unit quaternion `q`: space → body frame.
pub fn rotate_back(q: [f64; 4], v: [f64; 3]) -> [f64; 3] {
    space_to_body(quat(q), DVec3::from(v)).to_array()
}

/// ω = R diag(1/I) Rᵀ L (a zero moment gives no rate about its axis).
pub fn omega(q: [f64; 4], moments: [f64; 3], l: [f64; 3]) -> [f64; 3] {
    angular_velocity(quat(q), DVec3::from(moments), DVec3::from(l)).to_array()
}

/// L = R diag(I) Rᵀ ω.
pub fn angular_momentum(q: [f64; 4], moments: [f64; 3], w: [f64; 3]) -> [f64; 3] {
    let wb = space_to_body(quat(q), DVec3::from(w));
    body_to_space(quat(q), DVec3::from(moments) * wb).to_array()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotation_and_momentum_round_trip() {
        let h = 0.5f64.sqrt();
        // 90° about z
        let q = [h, 0.0, 0.0, h];
        let r = rotate(q, [1.0, 0.0, 0.0]);
        assert!((r[0]).abs() < 1e-15 && (r[1] - 1.0).abs() < 1e-15);
        let back = rotate_back(q, r);
        assert!((back[0] - 1.0).abs() < 1e-15 && back[1].abs() < 1e-15);
        let m = [1.0, 2.0, 3.0];
        let w = [0.3, -0.2, 0.7];
        let l = angular_momentum(q, m, w);
        let w2 = omega(q, m, l);
        for a in 0..3 {
            assert!((w2[a] - w[a]).abs() < 1e-14);
        }
    }

    #[test]
    fn retain_removes_whole_bodies_and_renumbers() {
        let mut b = Bodies::default();
        b.push([0.0; 3], [1.0, 0.0, 0.0, 0.0], [0.0; 3], [0.0; 3], 1.0, [1.0; 3], 0, 0, &[[0.0; 3], [1.0, 0.0, 0.0]]);
        b.push([5.0; 3], [1.0, 0.0, 0.0, 0.0], [0.0; 3], [0.0; 3], 2.0, [1.0; 3], 0, 2, &[[0.0; 3]]);
        b.push([9.0; 3], [1.0, 0.0, 0.0, 0.0], [0.0; 3], [0.0; 3], 3.0, [1.0; 3], 0, 3, &[[0.0; 3], [2.0, 0.0, 0.0], [3.0, 0.0, 0.0]]);
        let kp = b.retain(&[true, false, true]);
        assert_eq!(kp, vec![true, true, false, true, true, true]);
        assert_eq!(b.mass, vec![1.0, 3.0]);
        assert_eq!(b.first, vec![0, 2]);
        assert_eq!(b.count, vec![2, 3]);
        assert_eq!(b.body_of, vec![0, 0, 1, 1, 1]);
        assert_eq!(b.offset[3], [2.0, 0.0, 0.0]);
    }

    #[test]
    fn a_tail_appended_again_gives_the_table_back() {
        let mut b = Bodies::default();
        b.push([0.0; 3], [1.0, 0.0, 0.0, 0.0], [0.0; 3], [0.0; 3], 1.0, [1.0; 3], 0, 0, &[[0.0; 3], [1.0, 0.0, 0.0]]);
        b.push([5.0; 3], [1.0, 0.0, 0.0, 0.0], [1.0; 3], [0.0; 3], 2.0, [1.0; 3], 1, 2, &[[0.5; 3]]);
        b.push([9.0; 3], [1.0, 0.0, 0.0, 0.0], [0.0; 3], [2.0; 3], 3.0, [1.0; 3], 0, 3, &[[0.0; 3], [2.0, 0.0, 0.0], [3.0, 0.0, 0.0]]);
        b.image[2] = [1, 0, -1];
        let t = b.tail(1);
        t.check(4).unwrap();
        assert_eq!((t.first.clone(), t.body_of.clone(), t.mass.clone()), (vec![0, 1], vec![0, 1, 1, 1], vec![2.0, 3.0]));
        assert_eq!(t.image[1], [1, 0, -1]);
        let mut head = b.clone();
        head.retain(&[true, false, false]);
        head.extend_from(&t);
        head.check(6).unwrap();
        assert_eq!(head, b);
        assert!(b.tail(3).is_empty() && b.tail(3).body_of.is_empty());
    }
}
