//! The force pass, same structure as `shaders/forces.wgsl`: every particle gathers over its
//! neighbour cells, all plane walls and all mesh walls. A ball pair is always evaluated in
//! canonical order (a = lower id, b = higher id) so both particles see the identical contact;
//! only the owner (a, or the ball for a ball–wall contact) stores the new history and the
//! energies. Plane and mesh contacts share `surface_contact` once their geometry (distance,
//! normal, surface velocity) is known.

use glam::DVec3;
use rayon::prelude::*;

use super::grid::Grid;
use super::state::State;
use crate::contact::params::PairParams;
use crate::contact::{History, ball_ball_geometry, ball_wall_geometry, contact_active, contact_force, ContactOutput};
use crate::layout::consts::{MESH_KEY_BIT, WALL_KEY_BIT};
use crate::mesh::contacts::MESH_REACH_SLACK;
use crate::mesh::{ball_mesh_contacts_into, ContactScratch, MeshContact, TriangleGrid};
use crate::motion::Pose;
use crate::setup::{MeshWall, PairTable, Setup, Wall, WallState};

/// Contact history one owner keeps: (partner key, history), partner = particle id,
/// WALL_KEY_BIT | wall, or WALL_KEY_BIT | MESH_KEY_BIT | global facet group.
pub type OwnedHistory = Vec<(u32, History)>;

/// What one ball's wall contacts put on the walls in the last force pass: (wall, force on the
/// wall, torque on the wall about its load point). Walls are numbered planes first, then
/// meshes (`Backend::wall_loads` order).
pub type WallContacts = Vec<(u32, DVec3, DVec3)>;

/// A mesh wall as the force pass sees it: the mesh, its triangle grid (t = 0 frame), its first
/// global facet group and its pose at the time of the pass.
pub struct MeshView<'a> {
    pub wall: &'a MeshWall,
    pub grid: &'a TriangleGrid,
    pub group_base: u32,
    pub pose: Pose,
}

impl MeshView<'_> {
    /// Whether the mesh moves (static meshes skip the frame transforms).
    fn moving(&self) -> bool {
        !self.wall.motion.is_static()
    }

    /// A point x at the time of the pass in the mesh's t = 0 frame: c0 + Rᵀ(x − c(t)).
    pub(crate) fn to_mesh_frame(&self, x: DVec3) -> DVec3 {
        if !self.moving() {
            return x;
        }
        self.wall.motion.center + self.pose.rotation.inverse() * (x - self.pose.center)
    }

    /// A direction of the t = 0 frame at the time of the pass: R n.
    fn to_world(&self, n: DVec3) -> DVec3 {
        if !self.moving() {
            return n;
        }
        self.pose.rotation * n
    }
}

/// Per-thread buffers of the mesh contact search.
#[derive(Default)]
pub struct MeshScratch {
    candidates: Vec<u32>,
    contacts: ContactScratch,
    found: Vec<MeshContact>,
}

/// What one particle's gather produces.
#[derive(Clone, Copy, Debug, Default)]
struct Gathered {
    force: DVec3,
    torque: DVec3,
    strain: f64,
    slip_work: f64,
    dashpot_work: f64,
    stiffness_work: f64,
    wall_work: f64,
    contacts: u32,
}

/// Everything the force pass needs besides the particle state.
pub struct ForceContext<'a> {
    /// For the periodic axes (`Setup::minimum_image`).
    pub setup: &'a Setup,
    pub pairs: &'a PairTable,
    pub walls: &'a [Wall],
    /// The walls at the time of this force pass (same order as `walls`).
    pub wall_states: &'a [WallState],
    /// The mesh walls at the time of this force pass.
    pub meshes: &'a [MeshView<'a>],
    pub grid: &'a Grid,
    /// Largest positive reference gap over all pairs (search radius margin).
    pub max_rgap: f64,
}

fn lookup(history: &OwnedHistory, partner: u32) -> History {
    history.iter().find(|(k, _)| *k == partner).map(|(_, h)| *h).unwrap_or(History::NEW)
}

/// One force pass at the current positions. `dt` = 0 gives the initial forces without
/// advancing shear history or dissipation. Reads `old_history`, fills `new_history`.
pub fn forces(ctx: &ForceContext, s: &mut State, old_history: &[OwnedHistory], new_history: &mut [OwnedHistory], wall_contacts: &mut [WallContacts], dt: f64) {
    let state: &State = s;
    let gathered: Vec<Gathered> = new_history
        .par_iter_mut()
        .zip(wall_contacts.par_iter_mut())
        .enumerate()
        .map_init(MeshScratch::default, |scratch, (i, (owned, on_walls))| gather(ctx, state, old_history, owned, on_walls, scratch, i as u32, dt))
        .collect();
    for (i, g) in gathered.into_iter().enumerate() {
        s.force[i] = g.force;
        s.torque[i] = g.torque;
        s.strain[i] = g.strain;
        s.slip_work[i] += g.slip_work;
        s.dashpot_work[i] += g.dashpot_work;
        s.stiffness_work[i] += g.stiffness_work;
        s.wall_work[i] += g.wall_work;
        s.contacts[i] = g.contacts;
    }
}

#[allow(clippy::too_many_arguments)]
fn gather(ctx: &ForceContext, s: &State, old_history: &[OwnedHistory], owned: &mut OwnedHistory, on_walls: &mut WallContacts, scratch: &mut MeshScratch, i: u32, dt: f64) -> Gathered {
    owned.clear();
    on_walls.clear();
    let mut out = Gathered::default();
    let iu = i as usize;
    let x_i = s.position[iu];
    let r_i = s.radius[iu];
    ctx.grid.for_each_neighbour(x_i, |j| {
        if j == i {
            return;
        }
        let ju = j as usize;
        let reach = r_i + s.radius[ju] + ctx.max_rgap;
        let (a, b) = if i < j { (iu, ju) } else { (ju, iu) };
        // canonical separation x_b − x_a, nearest image across periodic boundaries
        let d = ctx.setup.minimum_image(s.position[b] - s.position[a]);
        if d.length_squared() > reach * reach {
            return;
        }
        let g = ball_ball_geometry(
            d,
            s.radius[a],
            s.radius[b],
            s.mass[a],
            s.mass[b],
            s.velocity[a],
            s.angular_velocity[a],
            s.velocity[b],
            s.angular_velocity[b],
        );
        let p = ctx.pairs.get(s.material[a], s.material[b]);
        if !contact_active(p, &g) {
            return;
        }
        let c = contact_force(p, &g, &lookup(&old_history[a], b as u32), dt);
        if a == iu {
            out.force -= c.force_j;
            out.torque += c.torque_i;
            add_owned(&mut out, owned, b as u32, &c);
        } else {
            out.force += c.force_j;
            out.torque += c.torque_j;
        }
    });
    for (w, (wall, now)) in ctx.walls.iter().zip(ctx.wall_states).enumerate() {
        let n_w = now.normal;
        let s_dist = n_w.dot(x_i - now.point);
        let p = ctx.pairs.get(s.material[iu], wall.material);
        // the wall's surface point under the ball's centre, and its velocity
        let x_p = x_i - n_w * s_dist;
        let u = now.pose.surface_velocity(x_p);
        let key = WALL_KEY_BIT | w as u32;
        let Some(c) = surface_contact(p, s, iu, key, s_dist, n_w, u, &old_history[iu], dt) else { continue };
        book_wall_contact(&mut out, owned, on_walls, w as u32, key, &c, u, x_p - DVec3::from(wall.load_point), dt);
    }
    for (m, mesh) in ctx.meshes.iter().enumerate() {
        mesh_contacts(ctx, s, iu, mesh, scratch);
        let p = ctx.pairs.get(s.material[iu], mesh.wall.material);
        let wall_index = (ctx.walls.len() + m) as u32;
        for mc in &scratch.found {
            // back from the mesh's t = 0 frame: the normal, the surface point under the ball
            let n = mesh.to_world(mc.normal);
            let x_p = x_i - n * mc.distance;
            let u = mesh.pose.surface_velocity(x_p);
            let key = WALL_KEY_BIT | MESH_KEY_BIT | (mesh.group_base + mc.group);
            let Some(c) = surface_contact(p, s, iu, key, mc.distance, n, u, &old_history[iu], dt) else { continue };
            book_wall_contact(&mut out, owned, on_walls, wall_index, key, &c, u, x_p - DVec3::from(mesh.wall.load_point), dt);
        }
    }
    out
}

/// The contacts of ball `iu` with `mesh` into `scratch.found`: the ball centre in the mesh's
/// t = 0 frame, the triangle grid's candidates within its reach, then `ball_mesh_contacts`.
fn mesh_contacts(ctx: &ForceContext, s: &State, iu: usize, mesh: &MeshView, scratch: &mut MeshScratch) {
    let p = ctx.pairs.get(s.material[iu], mesh.wall.material);
    let reach = (s.radius[iu] + p.rgap.max(0.0)) * MESH_REACH_SLACK;
    let x_b = mesh.to_mesh_frame(s.position[iu]);
    mesh.grid.candidates_into(x_b, reach, &mut scratch.candidates);
    ball_mesh_contacts_into(x_b, reach, &mesh.wall.mesh, &scratch.candidates, &mut scratch.contacts, &mut scratch.found);
}

/// The contact of ball `iu` with a wall surface (plane or mesh) whose unit normal `n_w` points
/// towards the ball, at signed centre distance `dist`, moving with `u` at the surface point
/// under the centre, with the history of `key` in `old` (the ball's list of the previous
/// step); `None` when inactive. Twin of `surface_contact` in shaders/wall_contact.wgsl.
#[allow(clippy::too_many_arguments)]
fn surface_contact(p: &PairParams, s: &State, iu: usize, key: u32, dist: f64, n_w: DVec3, u: DVec3, old: &OwnedHistory, dt: f64) -> Option<ContactOutput> {
    let g = ball_wall_geometry(dist, n_w, s.radius[iu], s.mass[iu], s.velocity[iu], s.angular_velocity[iu], u);
    if !contact_active(p, &g) {
        return None;
    }
    Some(contact_force(p, &g, &lookup(old, key), dt))
}

/// The ball's share of wall contact `c` (force, torque, history, energies), the wall's work on
/// it, and what it puts on wall `wall` (force, torque about the load point; `lever` = surface
/// point − load point).
#[allow(clippy::too_many_arguments)]
fn book_wall_contact(out: &mut Gathered, owned: &mut OwnedHistory, on_walls: &mut WallContacts, wall: u32, key: u32, c: &ContactOutput, u: DVec3, lever: DVec3, dt: f64) {
    out.force -= c.force_j;
    out.torque += c.torque_i;
    add_owned(out, owned, key, c);
    // the wall drives the contact point at u: its work on the ball is −F_j·u Δt
    out.wall_work -= c.force_j.dot(u) * dt;
    on_walls.push((wall, c.force_j, lever.cross(c.force_j) + c.torque_j));
}

fn add_owned(out: &mut Gathered, owned: &mut OwnedHistory, key: u32, c: &ContactOutput) {
    owned.push((key, c.history));
    out.strain += c.strain;
    out.slip_work += c.slip_work;
    out.dashpot_work += c.dashpot_work;
    out.stiffness_work += c.stiffness_work;
    out.contacts += 1;
}
