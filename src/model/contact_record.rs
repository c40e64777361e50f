//! One contact's history keyed by the particles (or the ball and wall) it joins: what
//! `ParticleState` carries across an exchange or a checkpoint, and what a scene's
//! `initial_state` of format `checkpoint` starts from (`Setup::initial_contacts`).

use crate::contact::History;
use crate::layout::consts::WALL_KEY_BIT;

/// The history of one active contact: owner (the lower particle id, or the ball of a
/// ball–wall contact) and partner key (particle id, or `WALL_KEY_BIT | …` for walls and mesh
/// facet groups).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactRecord {
    pub owner: u32,
    pub partner: u32,
    pub history: History,
}

impl ContactRecord {
    /// Whether the partner is a particle (not a wall or mesh).
    pub fn between_particles(&self) -> bool {
        self.partner < WALL_KEY_BIT
    }
}
