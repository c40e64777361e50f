//! Choosing the particles that leave: a particle whose centre lies in an outlet leaves through
//! the first such outlet in scene order, and its mass is booked to that outlet.

use glam::DVec3;

use crate::model::flow::Outlet;
use crate::model::state::ParticleState;
use crate::setup::Setup;

/// What the outlets take at one batch boundary.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Removal {
    /// Per particle: stays.
    pub keep: Vec<bool>,
    /// Per outlet: particles and kilograms taken, summed in id order.
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

/// The particles of `state` that `outlets` take (positions as wrapped into the domain).
pub fn select(outlets: &[Outlet], state: &ParticleState, setup: &Setup) -> Removal {
    let p = &state.particles;
    let mut r = Removal { keep: vec![true; p.len()], count: vec![0; outlets.len()], mass: vec![0.0; outlets.len()], lost: 0 };
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
