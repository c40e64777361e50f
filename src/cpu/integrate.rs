//! Velocity-Verlet integration, same passes as `shaders/drift.wgsl` and the kick at the end of
//! `shaders/forces.wgsl`: half kick + drift before the force pass, half kick after it.

use glam::DVec3;

use super::state::State;
use crate::setup::Setup;

/// v += (F/m + g)·dt/2, ω += T/I·dt/2.
pub fn kick(s: &mut State, gravity: DVec3, dt: f64) {
    let half = 0.5 * dt;
    for i in 0..s.position.len() {
        s.velocity[i] += (s.force[i] * s.inv_mass[i] + gravity) * half;
        s.angular_velocity[i] += s.torque[i] * (s.inv_inertia[i] * half);
    }
}

/// Half kick, then x += v·dt, then a particle that left [min, max) on a periodic axis
/// re-enters on the other side (its image count keeps the unwrapped position).
pub fn drift(s: &mut State, setup: &Setup, gravity: DVec3, dt: f64) {
    kick(s, gravity, dt);
    let (min, period) = (DVec3::from(setup.domain.min), setup.period());
    for i in 0..s.position.len() {
        let mut x = s.position[i] + s.velocity[i] * dt;
        for a in 0..3 {
            if !setup.periodic[a] {
                continue;
            }
            if x[a] - min[a] >= period[a] {
                x[a] -= period[a];
                s.image[i][a] += 1;
            } else if x[a] < min[a] {
                x[a] += period[a];
                s.image[i][a] -= 1;
            }
        }
        s.position[i] = x;
    }
}
