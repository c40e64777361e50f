//! Velocity-Verlet integration, same passes as `shaders/drift.wgsl` and the kick at the end of
//! `shaders/forces.wgsl`: half kick + drift before the force pass, half kick after it.

use glam::DVec3;

use super::state::State;

/// v += (F/m + g)·dt/2, ω += T/I·dt/2.
pub fn kick(s: &mut State, gravity: DVec3, dt: f64) {
    let half = 0.5 * dt;
    for i in 0..s.position.len() {
        s.velocity[i] += (s.force[i] * s.inv_mass[i] + gravity) * half;
        s.angular_velocity[i] += s.torque[i] * (s.inv_inertia[i] * half);
    }
}

/// Half kick, then x += v·dt.
pub fn drift(s: &mut State, gravity: DVec3, dt: f64) {
    kick(s, gravity, dt);
    for i in 0..s.position.len() {
        s.position[i] += s.velocity[i] * dt;
    }
}
