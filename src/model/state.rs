//! The whole state a backend hands out and takes back when particles enter or leave: particle
//! arrays, periodic images and the contact history, keyed as the backends key it.

use crate::setup::Particles;

use super::body::Bodies;

pub use super::contact_record::ContactRecord;

/// Particle state at a step boundary. Positions are wrapped into the domain on periodic axes
/// (`image` counts the periods removed); velocities are full-step values.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParticleState {
    pub step: u64,
    pub particles: Particles,
    pub image: Vec<[i32; 3]>,
    /// Contact force and torque of the last force pass (the next half kick uses them).
    pub force: Vec<[f64; 3]>,
    pub torque: Vec<[f64; 3]>,
    /// Particles whose force must be evaluated again on import: new ones and those that lost
    /// a contact partner. The others keep `force` and `torque`, so an exchange leaves them
    /// exactly as they were.
    pub refresh: Vec<bool>,
    /// Sorted by (owner, partner).
    pub history: Vec<ContactRecord>,
    /// The rigid bodies the particles are components of (empty without clumps).
    pub bodies: Bodies,
}

impl ParticleState {
    pub fn len(&self) -> usize {
        self.particles.len()
    }

    pub fn is_empty(&self) -> bool {
        self.particles.is_empty()
    }

    /// Sort the history by (owner, partner), the canonical order both backends import.
    pub fn sort_history(&mut self) {
        self.history.sort_by_key(|c| (c.owner, c.partner));
    }

    /// Keep the particles with `keep[i]`, in their order, and the contacts between kept
    /// particles (and of kept particles with walls), with ids renumbered. With bodies a body
    /// goes whole: it stays when its first component's flag is set.
    pub fn retain(&mut self, keep: &[bool]) {
        assert_eq!(keep.len(), self.len());
        let whole;
        let keep = if self.bodies.is_empty() {
            keep
        } else {
            let by_body: Vec<bool> = self.bodies.first.iter().map(|&f| keep[f as usize]).collect();
            whole = self.bodies.retain(&by_body);
            &whole[..]
        };
        let mut new_id = vec![u32::MAX; keep.len()];
        let mut next = 0u32;
        for (i, &k) in keep.iter().enumerate() {
            if k {
                new_id[i] = next;
                next += 1;
            }
        }
        let p = &mut self.particles;
        retain_by(&mut p.position, keep);
        retain_by(&mut p.velocity, keep);
        retain_by(&mut p.angular_velocity, keep);
        retain_by(&mut p.radius, keep);
        retain_by(&mut p.material, keep);
        retain_by(&mut self.image, keep);
        retain_by(&mut self.force, keep);
        retain_by(&mut self.torque, keep);
        retain_by(&mut self.refresh, keep);
        let refresh = &mut self.refresh;
        self.history.retain_mut(|c| {
            let owner = new_id[c.owner as usize];
            if owner == u32::MAX {
                if c.between_particles() && new_id[c.partner as usize] != u32::MAX {
                    refresh[new_id[c.partner as usize] as usize] = true;
                }
                return false;
            }
            c.owner = owner;
            if c.between_particles() {
                let partner = new_id[c.partner as usize];
                if partner == u32::MAX {
                    refresh[owner as usize] = true;
                    return false;
                }
                c.partner = partner;
            }
            true
        });
    }

    /// Append a particle (no contacts, image 0, force evaluated on import).
    pub fn push(&mut self, position: [f64; 3], velocity: [f64; 3], angular_velocity: [f64; 3], radius: f64, material: u32) {
        self.particles.push(position, velocity, angular_velocity, radius, material);
        self.image.push([0; 3]);
        self.force.push([0.0; 3]);
        self.torque.push([0.0; 3]);
        self.refresh.push(true);
    }
}

/// What a backend holds beyond `ParticleState` that a checkpoint keeps (`Backend::export_exact`):
/// the cumulative work of every particle, in a form either backend takes, and the backend's own
/// arrays, with which the same kind of backend continues bit for bit.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExactState {
    /// `Backend::kind` of the backend that wrote it ("cpu" or "gpu").
    pub kind: String,
    /// Per particle (id order): cumulative slip, dashpot, shear-stiffness and wall work of the
    /// contacts it owns since the last exchange, J (GPU: its Kahan sums and the steps not yet
    /// folded, added in f64).
    pub work: Vec<[f64; 4]>,
    /// The backend's own arrays by name, raw little-endian bytes (restored only by a backend of
    /// the same kind).
    pub raw: Vec<(String, Vec<u8>)>,
}

impl ExactState {
    /// The raw array `name`, or an error saying which array of which backend is missing.
    pub fn raw(&self, name: &str) -> crate::error::Result<&[u8]> {
        (self.raw.iter().find(|(n, _)| n == name).map(|(_, b)| b.as_slice()))
            .ok_or_else(|| crate::error::TalusError::Other(format!("the {} state has no array `{name}`", self.kind)))
    }
}

/// Keep the elements of `v` whose flag in `keep` is set, in order.
fn retain_by<T>(v: &mut Vec<T>, keep: &[bool]) {
    let mut k = keep.iter();
    v.retain(|_| *k.next().expect("one flag per element"));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::History;
    use crate::layout::consts::WALL_KEY_BIT;

    #[test]
    fn retain_renumbers_and_drops_contacts_of_removed_particles() {
        let mut s = ParticleState::default();
        for i in 0..4 {
            s.push([i as f64, 0.0, 0.0], [0.0; 3], [0.0; 3], 0.1, 0);
        }
        s.refresh = vec![false; 4];
        s.image = vec![[0; 3], [1, 0, 0], [0; 3], [0, 0, 2]];
        let h = |x: f64| History { normal_force: x, ..History::NEW };
        s.history = vec![
            ContactRecord { owner: 0, partner: 1, history: h(1.0) },
            ContactRecord { owner: 0, partner: 3, history: h(2.0) },
            ContactRecord { owner: 1, partner: 2, history: h(3.0) },
            ContactRecord { owner: 1, partner: WALL_KEY_BIT | 2, history: h(4.0) },
            ContactRecord { owner: 3, partner: WALL_KEY_BIT, history: h(5.0) },
        ];
        s.retain(&[true, false, true, true]);
        assert_eq!(s.particles.position, vec![[0.0, 0.0, 0.0], [2.0, 0.0, 0.0], [3.0, 0.0, 0.0]]);
        assert_eq!(s.image, vec![[0; 3], [0; 3], [0, 0, 2]]);
        let kept: Vec<(u32, u32, f64)> = s.history.iter().map(|c| (c.owner, c.partner, c.history.normal_force)).collect();
        assert_eq!(kept, vec![(0, 2, 2.0), (2, WALL_KEY_BIT, 5.0)]);
        // 0 lost partner 1; old 2 (new 1) lost partner 1; old 3 (new 2) lost nothing
        assert_eq!(s.refresh, vec![true, true, false]);
    }
}
