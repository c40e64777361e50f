//! An exchange without the whole state (`Backend::exchange_view`, `Backend::apply_exchange`):
//! what the flow driver asks a backend for (the particles that may lie in an outlet, near an
//! insertion region or outside the lost-particle bounds) and what it hands back (the ids that
//! leave, the particles that enter). The GPU backend answers with a readback of those
//! particles only and removes and appends on the device (`gpu::flow`); the driver decides
//! exactly as it does with the whole state (`flow::driver`).

use glam::DVec3;

use super::body::Bodies;
use super::state::ParticleState;
use crate::setup::Particles;

/// Which particles an exchange must see. A backend may hand out more (it tests coarsely, by
/// the block or cell a centre lies in), never fewer. With rigid bodies a body is handed out
/// whole (every component, and its row) where a component's centre or its centre of mass is
/// wanted: outlets and the lost-particle check decide on centres of mass, insertions on
/// components.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExchangeQuery {
    /// Every particle whose centre may lie in one of these boxes (lo, hi; infinite bounds
    /// allowed).
    pub boxes: Vec<(DVec3, DVec3)>,
    /// Every particle whose centre may lie outside this box (lo, hi) on a non-periodic axis.
    pub outside: Option<(DVec3, DVec3)>,
}

impl ExchangeQuery {
    /// The query with every box grown by `reach` on each side, and the outside test's box
    /// shrunk by it: the centres within `reach` of a wanted one.
    pub fn widened(&self, reach: f64) -> ExchangeQuery {
        let r = DVec3::splat(reach);
        ExchangeQuery { boxes: self.boxes.iter().map(|(lo, hi)| (*lo - r, *hi + r)).collect(), outside: self.outside.map(|(lo, hi)| (lo + r, hi - r)) }
    }

    /// The query with every box repeated one period either way on each periodic axis (`period`
    /// where `periodic`): a widened box that crosses the domain's edge there then also takes
    /// the centres wrapped to the other side (a body's component across the boundary).
    pub fn with_images(&self, period: [f64; 3], periodic: [bool; 3]) -> ExchangeQuery {
        let mut boxes = self.boxes.clone();
        for a in (0..3).filter(|&a| periodic[a]) {
            let shift = DVec3::from(std::array::from_fn(|b| if b == a { period[a] } else { 0.0 }));
            boxes = boxes.iter().flat_map(|&(lo, hi)| [(lo - shift, hi - shift), (lo, hi), (lo + shift, hi + shift)]).collect();
        }
        ExchangeQuery { boxes, outside: self.outside }
    }

    /// Whether a centre at `x` must be handed out (the exact test a coarse one must cover).
    pub fn wants(&self, x: DVec3, periodic: [bool; 3]) -> bool {
        self.boxes.iter().any(|(lo, hi)| x.cmpge(*lo).all() && x.cmple(*hi).all())
            || self.outside.is_some_and(|(lo, hi)| (0..3).any(|a| !periodic[a] && (x[a] < lo[a] || x[a] > hi[a])))
    }
}

/// The particles an `ExchangeQuery` asked for, at the backend's current step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExchangeView {
    /// Particles held.
    pub n: usize,
    /// Ids of the particles handed out, ascending.
    pub ids: Vec<u32>,
    /// Those particles, in the order of `ids` (positions wrapped into the domain, full-step
    /// velocities; no history or forces). With bodies, `state.bodies` holds the bodies handed
    /// out, their components the particles of `state` (`first` and `body_of` count in it).
    pub state: ParticleState,
    /// Radius and material of every particle held, in id order (the backend's host copies:
    /// the held mass is summed over them).
    pub radius: Vec<f64>,
    pub material: Vec<u32>,
    /// With bodies: the ids of the bodies handed out (ascending, as `state.bodies`), and the
    /// mass of every body held, in id order (the held mass is summed over them). Empty without.
    pub body_ids: Vec<u32>,
    pub body_mass: Vec<f64>,
}

/// What an exchange changes: the particles that leave (ids ascending) and those appended
/// after the survivors (no contacts; their forces are evaluated on arrival). Survivors keep
/// their order, so ids are compacted exactly as `ParticleState::retain` compacts them. With
/// rigid bodies, also the bodies that leave (ids ascending; `removed` holds every component
/// of each, and nothing else) and those appended (`added_bodies`, whose components are the
/// particles of `added`, counted from 0).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExchangeChange {
    pub removed: Vec<u32>,
    pub added: Particles,
    pub removed_bodies: Vec<u32>,
    pub added_bodies: Bodies,
}

impl ExchangeChange {
    /// `state` after this change: survivors in order (`ParticleState::retain`, which marks the
    /// partners of removed particles for a force refresh), then the added particles.
    pub fn apply_to(&self, state: &mut ParticleState) {
        if !self.removed.is_empty() {
            let mut keep = vec![true; state.len()];
            for &i in &self.removed {
                keep[i as usize] = false;
            }
            state.retain(&keep);
        }
        state.bodies.extend_from(&self.added_bodies);
        let a = &self.added;
        for i in 0..a.len() {
            state.push(a.position[i], a.velocity[i], a.angular_velocity[i], a.radius[i], a.material[i]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_wants_centres_in_its_boxes_and_beyond_its_bounds_on_open_axes() {
        let q = ExchangeQuery { boxes: vec![(DVec3::new(f64::NEG_INFINITY, f64::NEG_INFINITY, -1.0), DVec3::new(f64::INFINITY, f64::INFINITY, 0.0))], outside: Some((DVec3::splat(-5.0), DVec3::splat(5.0))) };
        assert!(q.wants(DVec3::new(100.0, 0.0, -0.5), [true, false, false]));
        assert!(!q.wants(DVec3::new(0.0, 0.0, 0.5), [false; 3]));
        assert!(q.wants(DVec3::new(0.0, 6.0, 0.5), [false; 3]));
        assert!(!q.wants(DVec3::new(0.0, 6.0, 0.5), [false, true, false]));
    }

    #[test]
    fn a_widened_query_wants_every_centre_within_reach_of_a_wanted_one() {
        let q = ExchangeQuery { boxes: vec![(DVec3::new(-1.0, -1.0, 0.0), DVec3::new(1.0, 1.0, 0.5))], outside: Some((DVec3::splat(-5.0), DVec3::splat(5.0))) };
        let (reach, periodic) = (0.3, [false, false, true]);
        let w = q.widened(reach);
        let mut rng = 0x2545_f491_u64;
        let mut next = |span: f64| {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((rng >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) * span
        };
        let (mut wanted, mut near) = (0, 0);
        for _ in 0..20000 {
            // a body's centre and a component within `reach` of it (each axis within reach/√3)
            let y = DVec3::new(next(6.0), next(6.0), next(6.0));
            let x = y + DVec3::new(next(reach / 3f64.sqrt()), next(reach / 3f64.sqrt()), next(reach / 3f64.sqrt()));
            if q.wants(y, periodic) {
                wanted += 1;
                assert!(w.wants(x, periodic), "{x} is within {reach} of the wanted {y}");
            } else if w.wants(x, periodic) {
                near += 1;
            }
        }
        assert!(wanted > 1000 && near > 0, "{wanted} {near}");
        // with no reach the query is the same
        assert_eq!(q.widened(0.0), q);
        // across a periodic edge (z in [0, 1)): a body centred at z = 0.05 in a box [0, 0.1]
        // with a component wrapped to z = 0.95 (it sat at −0.05)
        let q = ExchangeQuery { boxes: vec![(DVec3::new(-1.0, -1.0, 0.0), DVec3::new(1.0, 1.0, 0.1))], outside: None };
        let (x, period) = (DVec3::new(0.0, 0.0, 0.95), [0.0, 0.0, 1.0]);
        assert!(q.wants(DVec3::new(0.0, 0.0, 0.05), periodic) && !q.widened(0.1).wants(x, periodic));
        let imaged = q.widened(0.1).with_images(period, periodic);
        assert!(imaged.wants(x, periodic) && imaged.boxes.len() == 3);
        assert!(!imaged.wants(DVec3::new(0.0, 0.0, 0.5), periodic));
    }

    #[test]
    fn a_change_compacts_survivors_in_order_and_appends() {
        let mut s = ParticleState::default();
        for i in 0..4 {
            s.push([i as f64, 0.0, 0.0], [0.0; 3], [0.0; 3], 0.1, 0);
        }
        s.refresh = vec![false; 4];
        let mut added = Particles::default();
        added.push([9.0, 0.0, 0.0], [0.0; 3], [0.0; 3], 0.2, 1);
        ExchangeChange { removed: vec![0, 2], added, ..Default::default() }.apply_to(&mut s);
        let x: Vec<f64> = s.particles.position.iter().map(|p| p[0]).collect();
        assert_eq!(x, vec![1.0, 3.0, 9.0]);
        assert_eq!(s.refresh, vec![false, false, true]);
    }
}
