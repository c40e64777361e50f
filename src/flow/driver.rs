//! The exchange at a batch boundary: outlets take particles, insertions add them, the backend
//! takes the new state back, and the energy the particles carried in and out is booked.
//!
//! With rigid bodies (`Setup::has_bodies`) the unit is the body: outlets and the lost-particle
//! check take whole bodies by their centres of mass, counts are bodies and masses body masses
//! (a clump's component spheres overlap, so their sphere masses would not add up to it), and
//! the energy a body brings or takes is its kinetic (½ M v² + ½ L·ω) and gravitational energy,
//! as the backends sum it.

use glam::DVec3;

use super::insert::{Inserter, Obstacles};
use super::outlet;
use crate::backend::{Backend, Energies};
use crate::cpu::forces::MeshView;
use crate::error::Result;
use crate::mesh::TriangleGrid;
use crate::model::body::Bodies;
use crate::model::checks::{outside, LostParticles};
use crate::model::exchange::{ExchangeChange, ExchangeQuery, ExchangeView};
use crate::model::flow::OutletShape;
use crate::model::state::ParticleState;
use crate::setup::{mesh_group_bases, Particles, Setup};

/// Cumulative particle counts and masses of a run with insertions and outlets.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FlowTotals {
    /// Particles and kilograms inserted, per insertion (scene order). With rigid bodies every
    /// count here is bodies and every mass the bodies' masses.
    pub inserted_count: Vec<u64>,
    pub inserted_mass: Vec<f64>,
    /// Particles and kilograms taken, per outlet (scene order).
    pub outlet_count: Vec<u64>,
    pub outlet_mass: Vec<f64>,
    /// Particles held and their mass after the last exchange.
    pub held_count: u64,
    pub held_mass: f64,
    /// Particles that could not be placed when due, per insertion (the region was full).
    pub deferred: Vec<u64>,
    /// Particles removed because their centre left the domain (`"lost_particles": "remove"`),
    /// their mass (kg) and their mechanical energy when removed (kinetic + gravitational, J).
    pub lost_count: u64,
    pub lost_mass: f64,
    pub lost_energy: f64,
}

impl FlowTotals {
    pub fn inserted_total(&self) -> f64 {
        self.inserted_mass.iter().sum()
    }
    pub fn outlet_total(&self) -> f64 {
        self.outlet_mass.iter().sum()
    }
}

/// What a `FlowDriver` carries from one exchange to the next (a checkpoint keeps it): every
/// insertion's random stream and counts, and the totals.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FlowState {
    pub inserters: Vec<Inserter>,
    pub totals: FlowTotals,
}

/// Runs the insertions and outlets of a set-up at batch boundaries.
#[derive(Clone)]
pub struct FlowDriver {
    inserters: Vec<Inserter>,
    mesh_grids: Vec<TriangleGrid>,
    mesh_group_bases: Vec<u32>,
    clearance: f64,
    /// The state carries a body table (`Setup::has_bodies`).
    bodies: bool,
    totals: FlowTotals,
}

/// Mass of the particles of `p`, summed in id order; with bodies (`bodies` not empty), of the
/// bodies, in body order.
pub fn held_mass(setup: &Setup, p: &crate::setup::Particles, bodies: &Bodies) -> f64 {
    if !bodies.is_empty() {
        return bodies.mass.iter().fold(0.0, |a, m| a + m);
    }
    (0..p.len()).map(|i| setup.mass_of(p.material[i], p.radius[i])).fold(0.0, |a, m| a + m)
}

/// What is held: particles, or bodies when there are any.
fn held_count(p: &crate::setup::Particles, bodies: &Bodies) -> u64 {
    (if bodies.is_empty() { p.len() } else { bodies.len() }) as u64
}

/// Kinetic (translational + rotational) and gravitational energy of body `b` in gravity `g`,
/// as `Backend::energies` sums it: ½ M v² + ½ L·ω − M g·x, x the centre unwrapped with its
/// image count over the periods `period`.
pub fn body_energy(bodies: &Bodies, b: usize, g: DVec3, period: DVec3) -> f64 {
    let (t, r) = bodies.kinetic(b);
    let k = bodies.image[b];
    let x = DVec3::from(bodies.position[b]) + DVec3::new(k[0] as f64, k[1] as f64, k[2] as f64) * period;
    t + r - bodies.mass[b] * g.dot(x)
}

impl FlowDriver {
    /// A driver for `setup`, or `None` when it has no insertions and no outlets.
    pub fn new(setup: &Setup) -> Result<Option<FlowDriver>> {
        let removes_lost = setup.checks.lost_particles == LostParticles::Remove && setup.checks.lost_margin.is_some();
        if setup.inserts.is_empty() && setup.outlets.is_empty() && !removes_lost {
            return Ok(None);
        }
        let clearance = crate::cpu::max_positive_rgap(setup);
        let totals = FlowTotals {
            inserted_count: vec![0; setup.inserts.len()],
            inserted_mass: vec![0.0; setup.inserts.len()],
            outlet_count: vec![0; setup.outlets.len()],
            outlet_mass: vec![0.0; setup.outlets.len()],
            held_count: held_count(&setup.particles, &setup.bodies),
            held_mass: held_mass(setup, &setup.particles, &setup.bodies),
            deferred: vec![0; setup.inserts.len()],
            ..FlowTotals::default()
        };
        Ok(Some(FlowDriver {
            inserters: setup.inserts.iter().map(Inserter::new).collect(),
            mesh_grids: crate::cpu::mesh_grids(setup, clearance)?,
            mesh_group_bases: mesh_group_bases(&setup.meshes)?,
            clearance,
            bodies: setup.has_bodies(),
            totals,
        }))
    }

    pub fn totals(&self) -> &FlowTotals {
        &self.totals
    }

    /// The running state, for a checkpoint.
    pub fn state(&self) -> FlowState {
        FlowState { inserters: self.inserters.clone(), totals: self.totals.clone() }
    }

    /// Continue from `state` (saved by `state` for the same set-up).
    pub fn restore(&mut self, state: FlowState) -> Result<()> {
        let t = &state.totals;
        let (n_in, n_out) = (self.inserters.len(), self.totals.outlet_count.len());
        if state.inserters.len() != n_in || t.inserted_count.len() != n_in || t.deferred.len() != n_in || t.outlet_count.len() != n_out || t.outlet_mass.len() != n_out {
            return Err(crate::error::TalusError::Other(format!(
                "the saved flow state has {} insertions and {} outlets; the scene has {n_in} and {n_out}",
                state.inserters.len(),
                t.outlet_count.len()
            )));
        }
        self.inserters = state.inserters;
        self.totals = state.totals;
        Ok(())
    }

    /// Apply the outlets and insertions at the backend's current step. A backend that hands
    /// out only the particles an exchange looks at (`Backend::exchange_view`: the GPU's) is
    /// changed in place (`exchange_in_place`); otherwise its whole state goes out and back.
    pub fn exchange(&mut self, setup: &Setup, backend: &mut dyn Backend) -> Result<()> {
        let time = backend.steps_done() as f64 * setup.dt;
        let before = backend.energies()?;
        if let Some(view) = backend.exchange_view(&self.query(setup, time))? {
            return self.exchange_in_place(setup, backend, view, before, time);
        }
        let mut state = backend.export_state()?;
        let mut removal = outlet::select(&setup.outlets, &state, setup);
        self.remove_lost(setup, &state, &mut removal);
        if removal.any() {
            state.retain(&removal.keep);
        }
        self.book_removal(&removal);

        let (first_new, first_new_body) = (state.len(), state.bodies.len());
        self.insert(setup, time, &mut state);
        self.totals.held_count = held_count(&state.particles, &state.bodies);
        self.totals.held_mass = held_mass(setup, &state.particles, &state.bodies);
        if !removal.any() && state.len() == first_new {
            return Ok(());
        }

        let brought = self.brought(setup, &state, first_new, first_new_body);
        backend.import_state(&state)?;
        self.book_energy(backend, before, brought)
    }

    /// What an exchange must see of the particles: those that may lie in an outlet (its
    /// region's bounds; a plane's half-space bounded on its axis when its normal is one, else
    /// everywhere), near an insertion region (its bounds grown by the largest radius inserted,
    /// the largest radius held and the clearance: every particle a new one could overlap) or
    /// beyond the lost-particle bounds (`"lost_particles": "remove"`). An insertion that owes
    /// nothing at `time` looks at no particle and adds no box.
    fn query(&self, setup: &Setup, time: f64) -> ExchangeQuery {
        let inf = DVec3::splat(f64::INFINITY);
        let mut boxes: Vec<(DVec3, DVec3)> = setup.outlets.iter().map(|o| match &o.shape {
            OutletShape::Region(r) => r.bounds(),
            OutletShape::Plane { point, normal } => {
                let (mut lo, mut hi) = (-inf, inf);
                if let Some(a) = (0..3).find(|&a| normal[a] != 0.0 && (0..3).all(|b| b == a || normal[b] == 0.0)) {
                    // (x − p)·n < 0 on the axis of n
                    if normal[a] > 0.0 {
                        hi[a] = point[a];
                    } else {
                        lo[a] = point[a];
                    }
                }
                (lo, hi)
            }
        }).collect();
        for (spec, ins) in setup.inserts.iter().zip(&self.inserters) {
            if !ins.may_insert(spec, time) {
                continue;
            }
            let (lo, hi) = spec.region.bounds();
            let reach = DVec3::splat(spec.radius.max() + setup.max_radius() + self.clearance);
            boxes.push((lo - reach, hi + reach));
        }
        let outside = match (setup.checks.lost_particles, setup.lost_bounds()) {
            (LostParticles::Remove, Some((lo, hi, margin))) => Some((lo - DVec3::splat(margin), hi + DVec3::splat(margin))),
            _ => None,
        };
        ExchangeQuery { boxes, outside }
    }

    /// The exchange of a backend that handed out `view` (see `exchange`): the same decisions
    /// on the particles it holds (outlets and lost particles among them, insertions clear of
    /// them), in the same order, so the same particles leave and enter with the same sums.
    fn exchange_in_place(&mut self, setup: &Setup, backend: &mut dyn Backend, view: ExchangeView, before: Energies, time: f64) -> Result<()> {
        let mut near = view.state;
        let mut removal = outlet::select(&setup.outlets, &near, setup);
        self.remove_lost(setup, &near, &mut removal);
        let removed: Vec<u32> = (0..near.len()).filter(|&k| !removal.keep[k]).map(|k| view.ids[k]).collect();
        let removed_bodies: Vec<u32> = (0..near.bodies.len()).filter(|&k| !removal.keep[near.bodies.first[k] as usize]).map(|k| view.body_ids[k]).collect();
        if removal.any() {
            near.retain(&removal.keep);
        }
        self.book_removal(&removal);
        let (first_new, first_new_body) = (near.len(), near.bodies.len());
        self.insert(setup, time, &mut near);
        let added = near.len() - first_new;
        let p = &near.particles;
        if self.bodies {
            // the held mass in body order: survivors, then the new bodies
            let survivors = without(view.body_mass.len(), &removed_bodies).map(|k| view.body_mass[k]);
            self.totals.held_mass = survivors.chain(near.bodies.mass[first_new_body..].iter().copied()).fold(0.0, |a, m| a + m);
            self.totals.held_count = (view.body_mass.len() - removed_bodies.len() + near.bodies.len() - first_new_body) as u64;
        } else {
            // the held mass in id order: survivors, then the new particles
            let masses = without(view.n, &removed).map(|i| setup.mass_of(view.material[i], view.radius[i]));
            let new_masses = (first_new..near.len()).map(|i| setup.mass_of(p.material[i], p.radius[i]));
            self.totals.held_mass = masses.chain(new_masses).fold(0.0, |a, m| a + m);
            self.totals.held_count = (view.n - removed.len() + added) as u64;
        }
        if !removal.any() && added == 0 {
            return Ok(());
        }
        let brought = self.brought(setup, &near, first_new, first_new_body);
        let mut change = ExchangeChange { removed, removed_bodies, added: Particles::default(), added_bodies: near.bodies.tail(first_new_body) };
        for i in first_new..near.len() {
            change.added.push(p.position[i], p.velocity[i], p.angular_velocity[i], p.radius[i], p.material[i]);
        }
        backend.apply_exchange(&change)?;
        self.book_energy(backend, before, brought)
    }

    /// Mark what left the domain by more than the margin (`"lost_particles": "remove"`) and
    /// book it: the bodies of `state` whose centres of mass did, whole, or where it has no
    /// bodies the spheres whose centres did.
    fn remove_lost(&mut self, setup: &Setup, state: &ParticleState, removal: &mut outlet::Removal) {
        if setup.checks.lost_particles != LostParticles::Remove {
            return;
        }
        let Some((lo, hi, margin)) = setup.lost_bounds() else { return };
        let b = &state.bodies;
        if b.is_empty() {
            return self.remove_lost_spheres(setup, &state.particles, removal);
        }
        let (g, period) = (DVec3::from(setup.gravity), setup.period());
        for k in 0..b.len() {
            let first = b.first[k] as usize;
            if removal.keep[first] && outside(DVec3::from(b.position[k]), lo, hi, margin, setup.periodic) {
                removal.keep[first..first + b.count[k] as usize].fill(false);
                removal.lost += 1;
                self.totals.lost_count += 1;
                self.totals.lost_mass += b.mass[k];
                self.totals.lost_energy += body_energy(b, k, g, period);
            }
        }
    }

    /// Mark the spheres of `p` whose centres left the domain by more than the margin
    /// (`"lost_particles": "remove"`) and book them.
    fn remove_lost_spheres(&mut self, setup: &Setup, p: &Particles, removal: &mut outlet::Removal) {
        let Some((lo, hi, margin)) = setup.lost_bounds() else { return };
        let g = DVec3::from(setup.gravity);
        for i in 0..p.len() {
            let x = DVec3::from(p.position[i]);
            if removal.keep[i] && outside(x, lo, hi, margin, setup.periodic) {
                removal.keep[i] = false;
                removal.lost += 1;
                let (m, r) = (setup.mass_of(p.material[i], p.radius[i]), p.radius[i]);
                let (v, w) = (DVec3::from(p.velocity[i]), DVec3::from(p.angular_velocity[i]));
                self.totals.lost_count += 1;
                self.totals.lost_mass += m;
                self.totals.lost_energy += 0.5 * m * v.length_squared() + 0.5 * (0.4 * m * r * r) * w.length_squared() - m * g.dot(x);
            }
        }
    }

    /// Energy the new particles of `state` (from `first_new`; with bodies, the new bodies from
    /// `first_new_body`) bring: kinetic + gravitational (they touch nothing; in a scene with
    /// bodies the backends sum these from the bodies).
    fn brought(&self, setup: &Setup, state: &ParticleState, first_new: usize, first_new_body: usize) -> f64 {
        if self.bodies {
            let (g, period) = (DVec3::from(setup.gravity), setup.period());
            (first_new_body..state.bodies.len()).map(|b| body_energy(&state.bodies, b, g, period)).sum()
        } else {
            sphere_energies(setup, &state.particles, first_new)
        }
    }

    fn book_removal(&mut self, removal: &outlet::Removal) {
        for k in 0..self.totals.outlet_count.len() {
            self.totals.outlet_count[k] += removal.count[k];
            self.totals.outlet_mass[k] += removal.mass[k];
        }
    }

    /// Run every insertion at `time` into `state` (appended).
    fn insert(&mut self, setup: &Setup, time: f64, state: &mut ParticleState) {
        let meshes: Vec<MeshView> = (setup.meshes.iter().zip(&self.mesh_grids).zip(&self.mesh_group_bases))
            .map(|((wall, grid), &group_base)| MeshView { wall, grid, group_base, pose: wall.pose_at(time) })
            .collect();
        let obstacles = Obstacles { setup, time, meshes: &meshes, clearance: self.clearance, bodies: self.bodies };
        for (k, (spec, ins)) in setup.inserts.iter().zip(&mut self.inserters).enumerate() {
            ins.insert(spec, state, &obstacles);
            self.totals.inserted_count[k] = ins.count;
            self.totals.inserted_mass[k] = ins.mass;
            self.totals.deferred[k] = ins.deferred;
        }
    }

    /// After the backend took the changed state: carry the work totals over and book what
    /// entered (`brought`) and what left (the mechanical energy that vanished with the removed
    /// particles and the contacts they broke).
    fn book_energy(&self, backend: &mut dyn Backend, before: Energies, brought: f64) -> Result<()> {
        let after = backend.energies()?;
        let left = before.mechanical() - (after.mechanical() - brought);
        let carried = Energies {
            slip: before.slip,
            dashpot: before.dashpot,
            stiffness_work: before.stiffness_work,
            bond_break: before.bond_break,
            wall_work: before.wall_work,
            inserted: before.inserted + brought,
            removed: before.removed + left,
            ..Energies::default()
        };
        backend.set_carried(carried);
        Ok(())
    }
}

/// The indices below `n` that are not in `gone` (ascending), in order.
fn without(n: usize, gone: &[u32]) -> impl Iterator<Item = usize> + '_ {
    let mut gone = gone.iter().peekable();
    (0..n).filter(move |&i| if gone.peek() == Some(&&(i as u32)) { gone.next(); false } else { true })
}

/// Kinetic and gravitational energy of the spheres of `p` from `first` on (new particles: they
/// touch nothing), summed in id order.
fn sphere_energies(setup: &Setup, p: &Particles, first: usize) -> f64 {
    let g = DVec3::from(setup.gravity);
    (first..p.len())
        .map(|i| {
            let (m, r) = (setup.mass_of(p.material[i], p.radius[i]), p.radius[i]);
            let (v, w, x) = (DVec3::from(p.velocity[i]), DVec3::from(p.angular_velocity[i]), DVec3::from(p.position[i]));
            0.5 * m * v.length_squared() + 0.5 * (0.4 * m * r * r) * w.length_squared() - m * g.dot(x)
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_count_once_with_their_energy_as_the_backends_sum_it() {
        let mut b = Bodies::default();
        let mut p = crate::setup::Particles::default();
        // a two-sphere body spinning about its body y axis, one period up in x; a lone sphere
        let (m, i) = (2.0, [0.1, 0.4, 0.4]);
        let l = crate::model::body::angular_momentum([1.0, 0.0, 0.0, 0.0], i, [0.0, 3.0, 0.0]);
        b.push([0.5, 0.0, 1.0], [1.0, 0.0, 0.0, 0.0], [1.0, 2.0, 0.0], l, m, i, 0, 0, &[[-0.1, 0.0, 0.0], [0.1, 0.0, 0.0]]);
        b.image[0] = [1, 0, 0];
        b.push_sphere([0.0; 3], [0.0; 3], [0.0, 0.0, 2.0], 1.0, 0.5, 2);
        for _ in 0..3 {
            p.push([0.0; 3], [0.0; 3], [0.0; 3], 0.1, 0);
        }
        b.check(3).unwrap();
        assert_eq!(held_count(&p, &b), 2);
        assert_eq!(held_count(&p, &Bodies::default()), 3);
        let (g, period) = (DVec3::new(1.0, 0.0, -10.0), DVec3::new(2.0, 0.0, 0.0));
        // ½ M v² + ½ L·ω − M g·x with x unwrapped: 5 + 0.5·0.4·9 − 2·(2.5 − 10)
        assert!((body_energy(&b, 0, g, period) - (5.0 + 1.8 + 15.0)).abs() < 1e-12);
        // a lone sphere: ½ (2/5 m r²) ω² = ½ · 0.1 · 4
        assert!((body_energy(&b, 1, g, period) - 0.2).abs() < 1e-15);
    }
}
