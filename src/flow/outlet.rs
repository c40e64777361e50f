//! Choosing the particles that leave: a particle whose centre lies in an outlet leaves through
//! the first such outlet in scene order, and its mass is booked to that outlet. With bodies
//! (rigid clumps) a body leaves whole when its centre of mass is in an outlet, whatever its
//! components do; it counts once, with the body's mass.

use glam::DVec3;

use crate::model::flow::Outlet;
use crate::model::state::ParticleState;
use crate::setup::Setup;

/// What the outlets take at one batch boundary.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Removal {
    /// Per particle: stays (with bodies, every component of a body carries its body's flag).
    pub keep: Vec<bool>,
    /// Per outlet: particles (with bodies: bodies) and kilograms taken, summed in id order.
    pub count: Vec<u64>,
    pub mass: Vec<f64>,
    /// Particles removed as lost (`"lost_particles": "remove"`, set by the flow driver).
    pub lost: u64,
}

impl Removal {
    pub fn any(&self) -> bool {
        self.lost > 0 || self.count.iter().any(|&c| c > 0)
    }
}

/// The particles of `state` that `outlets` take (positions as wrapped into the domain); with
/// bodies, the bodies whose centres they hold, each with all its components.
pub fn select(outlets: &[Outlet], state: &ParticleState, setup: &Setup) -> Removal {
    let p = &state.particles;
    let mut r = Removal { keep: vec![true; p.len()], count: vec![0; outlets.len()], mass: vec![0.0; outlets.len()], lost: 0 };
    let b = &state.bodies;
    if !b.is_empty() {
        for k in 0..b.len() {
            let x = DVec3::from(b.position[k]);
            if let Some(o) = outlets.iter().position(|o| o.takes(x)) {
                let run = b.first[k] as usize..(b.first[k] + b.count[k]) as usize;
                r.keep[run].fill(false);
                r.count[o] += 1;
                r.mass[o] += b.mass[k];
            }
        }
        return r;
    }
    for i in 0..p.len() {
        let x = DVec3::from(p.position[i]);
        if let Some(k) = outlets.iter().position(|o| o.takes(x)) {
            r.keep[i] = false;
            r.count[k] += 1;
            r.mass[k] += setup.mass_of(p.material[i], p.radius[i]);
        }
    }
    r
}
