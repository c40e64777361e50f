//! CPU particle state, f64 structure of arrays.

use glam::DVec3;

use crate::setup::{Particles, Setup};

/// Per-particle state and per-particle accumulators of the CPU reference path.
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
    /// Strain energy of the contacts this particle owns (last force pass).
    pub strain: Vec<f64>,
    /// Cumulative slip, dashpot, shear-stiffness and wall work of the contacts this particle owns.
    pub slip_work: Vec<f64>,
    pub dashpot_work: Vec<f64>,
    pub stiffness_work: Vec<f64>,
    pub wall_work: Vec<f64>,
    /// Active contacts this particle owns (last force pass).
    pub contacts: Vec<u32>,
    /// Periods the particle was moved back by on each periodic axis (unwrapped position =
    /// position + image·period).
    pub image: Vec<[i32; 3]>,
}

impl State {
    pub fn new(setup: &Setup) -> State {
        State::of(setup, &setup.particles)
    }

    /// The state of particles `p` (materials and densities from `setup`), accumulators zero.
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
            strain: vec![0.0; n],
            slip_work: vec![0.0; n],
            dashpot_work: vec![0.0; n],
            stiffness_work: vec![0.0; n],
            wall_work: vec![0.0; n],
            contacts: vec![0; n],
            image: vec![[0; 3]; n],
        }
    }

    /// Set every cumulative work accumulator to zero.
    pub fn clear_work(&mut self) {
        for a in [&mut self.slip_work, &mut self.dashpot_work, &mut self.stiffness_work, &mut self.wall_work] {
            a.iter_mut().for_each(|x| *x = 0.0);
        }
    }
}
