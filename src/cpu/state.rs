//! CPU particle state, f64 structure of arrays, stored in an internal order (cell Z-order after
//! `permute`) with each particle's user-visible id beside it.

use glam::DVec3;

use crate::setup::{Particles, Setup};

/// Per-particle state of the CPU reference path, in internal order. `id[i]` is the
/// user-visible id of the particle stored at `i` (its index in snapshots, exports and history
/// keys); `index_of[id]` is where it is stored.
#[derive(Clone, Debug, Default)]
pub struct State {
    pub position: Vec<DVec3>,
    pub velocity: Vec<DVec3>,
    pub angular_velocity: Vec<DVec3>,
    /// Contact force of the last force pass (gravity excluded).
    pub force: Vec<DVec3>,
    pub torque: Vec<DVec3>,
    pub radius: Vec<f64>,
    pub material: Vec<u32>,
    pub mass: Vec<f64>,
    pub inv_mass: Vec<f64>,
    pub inertia: Vec<f64>,
    pub inv_inertia: Vec<f64>,
    /// Periods the particle was moved back by on each periodic axis (unwrapped position =
    /// position + image·period).
    pub image: Vec<[i32; 3]>,
    /// User-visible id of the particle stored here.
    pub id: Vec<u32>,
    /// Angular velocity at the previous force pass, against which that pass's rolling torques
    /// acted (`ContactGeometry::previous_spin_i`); empty unless some pair books rolling work
    /// (`Setup::rolling_booked`), so that other scenes carry no extra memory.
    pub previous_spin: Vec<DVec3>,
    /// Internal index of each user id (inverse of `id`).
    pub index_of: Vec<u32>,
    /// The rigid body of the particle stored here (`crate::model::body`); empty in a scene
    /// without clumps. Pairs of one body are not listed.
    pub body: Vec<u32>,
}

/// What stepping changes in a `State` (`State::motion`): the last good state a blow-up hands
/// back, without the copy of what stays fixed (radius, material, masses, inertias).
pub struct Motion {
    id: Vec<u32>,
    position: Vec<DVec3>,
    velocity: Vec<DVec3>,
    angular_velocity: Vec<DVec3>,
    force: Vec<DVec3>,
    torque: Vec<DVec3>,
    image: Vec<[i32; 3]>,
}

/// What the contacts a particle owns produced in the last force pass. A particle owns its
/// contacts with particles of higher id and all its wall contacts. One cache line: the gather
/// reads it for every particle that owns a contact (`Owners::contacts` says which), the
/// force pass writes it for those that own one now or did in the last pass; the cumulative
/// work is kept apart (`Works`), so that a particle without contacts costs neither sweep a
/// read of it (on the falling 100k box these records were 3 of the 6.5 cache lines each
/// particle-step missed).
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(64))]
pub struct Owned {
    /// Sum of the owned contacts' forces and torques on this particle (pairs by partner id,
    /// then walls), the part of the force the particle computes itself.
    pub force: DVec3,
    pub torque: DVec3,
    /// Strain energy of the owned contacts (last force pass).
    pub strain: f64,
    /// Deepest overlap of the owned contacts (last force pass) as a fraction of the smaller
    /// radius, counted only beyond the run-time check's `OVERLAP_MAX_FRACTION`
    /// (`checks::overlap_beyond_limit`; 0 when no contact is that deep).
    pub overlap: f32,
}

/// A particle's cumulative slip, dashpot, shear-stiffness and wall work in its owned contacts,
/// added to contact by contact as the force pass books them.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(32))]
pub struct Works {
    pub slip_work: f64,
    pub dashpot_work: f64,
    pub stiffness_work: f64,
    pub wall_work: f64,
}

/// A particle's adhesion energies in its owned contacts (scenes with adhesion only): the
/// surface energy of the last force pass and the cumulative bond-break work.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct AdhesionEnergy {
    pub surface: f64,
    pub bond_break: f64,
}

/// Every particle's owned-contact records, in internal order, allocated and renumbered
/// together: `Owned`, the count of active owned contacts (`contacts`), `Works`.
#[derive(Clone, Debug, Default)]
pub struct Owners {
    pub owned: Vec<Owned>,
    /// Active owned contacts in the last force pass (0: `owned` holds zeros and is not read).
    pub contacts: Vec<u32>,
    pub works: Vec<Works>,
    /// Adhesion energies, one per particle in a scene with adhesion, else empty.
    pub adhesion: Vec<AdhesionEnergy>,
}

impl Owners {
    /// `n` particles without contacts or work.
    pub fn new(n: usize) -> Owners {
        Owners { owned: vec![Owned::default(); n], contacts: vec![0; n], works: vec![Works::default(); n], adhesion: Vec::new() }
    }

    /// `n` particles of a scene with adhesion (`adhesive`) or without.
    pub fn with_adhesion(n: usize, adhesive: bool) -> Owners {
        Owners { adhesion: if adhesive { vec![AdhesionEnergy::default(); n] } else { Vec::new() }, ..Owners::new(n) }
    }

    /// Reorder with the particles (`State::permute`).
    pub fn permute(&mut self, order: &[u32]) {
        permute(&mut self.owned, order);
        permute(&mut self.contacts, order);
        permute(&mut self.works, order);
        if !self.adhesion.is_empty() {
            permute(&mut self.adhesion, order);
        }
    }
}

impl State {
    /// The state of particles `p` (materials and densities from `setup`), ids in order.
    pub fn of(setup: &Setup, p: &Particles) -> State {
        let n = p.len();
        let v = |a: &Vec<[f64; 3]>| a.iter().map(|&x| DVec3::from(x)).collect::<Vec<_>>();
        let mass: Vec<f64> = (0..n).map(|i| setup.mass_of(p.material[i], p.radius[i])).collect();
        let inertia: Vec<f64> = (0..n).map(|i| setup.inertia_of(p.material[i], p.radius[i])).collect();
        State {
            position: v(&p.position),
            velocity: v(&p.velocity),
            angular_velocity: v(&p.angular_velocity),
            force: vec![DVec3::ZERO; n],
            torque: vec![DVec3::ZERO; n],
            radius: p.radius.clone(),
            material: p.material.clone(),
            inv_mass: mass.iter().map(|m| 1.0 / m).collect(),
            inv_inertia: inertia.iter().map(|m| 1.0 / m).collect(),
            mass,
            inertia,
            image: vec![[0; 3]; n],
            id: (0..n as u32).collect(),
            index_of: (0..n as u32).collect(),
            previous_spin: if setup.rolling_booked() { v(&p.angular_velocity) } else { Vec::new() },
            body: Vec::new(),
        }
    }

    /// The state of the components of `bodies`: each one's mass is its body's (the contacts'
    /// effective mass, spec eq (13), is that of the bodies; the components are not kicked one
    /// by one).
    pub fn with_bodies(mut self, bodies: &crate::model::body::Bodies) -> State {
        if bodies.is_empty() {
            return self;
        }
        self.body = bodies.body_of.clone();
        for (i, &b) in bodies.body_of.iter().enumerate() {
            self.mass[i] = bodies.mass[b as usize];
            self.inv_mass[i] = 1.0 / self.mass[i];
        }
        self
    }

    pub fn len(&self) -> usize {
        self.position.len()
    }

    pub fn is_empty(&self) -> bool {
        self.position.is_empty()
    }

    /// Reorder: the particle at `order[k]` moves to `k`.
    pub fn permute(&mut self, order: &[u32]) {
        permute(&mut self.position, order);
        permute(&mut self.velocity, order);
        permute(&mut self.angular_velocity, order);
        permute(&mut self.force, order);
        permute(&mut self.torque, order);
        permute(&mut self.radius, order);
        permute(&mut self.material, order);
        permute(&mut self.mass, order);
        permute(&mut self.inv_mass, order);
        permute(&mut self.inertia, order);
        permute(&mut self.inv_inertia, order);
        permute(&mut self.image, order);
        permute(&mut self.id, order);
        if !self.previous_spin.is_empty() {
            permute(&mut self.previous_spin, order);
        }
        if !self.body.is_empty() {
            permute(&mut self.body, order);
        }
        for (i, &u) in self.id.iter().enumerate() {
            self.index_of[u as usize] = i as u32;
        }
    }

    /// A copy of what stepping changes (motion, forces, images), with the ids it belongs to.
    pub fn motion(&self) -> Motion {
        Motion {
            id: self.id.clone(),
            position: self.position.clone(),
            velocity: self.velocity.clone(),
            angular_velocity: self.angular_velocity.clone(),
            force: self.force.clone(),
            torque: self.torque.clone(),
            image: self.image.clone(),
        }
    }

    /// Put `m` back, each particle by its id into where it is stored now (stepping may have
    /// renumbered the particles since `m` was taken, but not changed which there are).
    pub fn restore_motion(&mut self, m: Motion) {
        for (k, &id) in m.id.iter().enumerate() {
            let i = self.index_of[id as usize] as usize;
            self.position[i] = m.position[k];
            self.velocity[i] = m.velocity[k];
            self.angular_velocity[i] = m.angular_velocity[k];
            self.force[i] = m.force[k];
            self.torque[i] = m.torque[k];
            self.image[i] = m.image[k];
        }
    }

    /// Internal indices in user-id order.
    pub fn by_id(&self) -> impl Iterator<Item = usize> + '_ {
        self.index_of.iter().map(|&i| i as usize)
    }
}

/// `v[k] = old v[order[k]]`.
pub fn permute<T: Default>(v: &mut Vec<T>, order: &[u32]) {
    let mut old = std::mem::take(v);
    *v = order.iter().map(|&i| std::mem::take(&mut old[i as usize])).collect();
}
