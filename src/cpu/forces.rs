//! The force pass, same structure as `shaders/forces.wgsl`: every particle gathers over its
//! neighbour cells and all walls. A ball pair is always evaluated in canonical order
//! (a = lower id, b = higher id) so both particles see the identical contact; only the owner
//! (a, or the ball for a ball–wall contact) stores the new history and the energies.

use glam::DVec3;
use rayon::prelude::*;

use super::grid::Grid;
use super::state::State;
use crate::contact::{History, ball_ball_geometry, ball_wall_geometry, contact_active, contact_force, ContactOutput};
use crate::layout::consts::WALL_KEY_BIT;
use crate::setup::{PairTable, Setup, Wall, WallState};

/// Contact history one owner keeps: (partner key, history), partner = particle id or WALL_KEY_BIT | wall.
pub type OwnedHistory = Vec<(u32, History)>;

/// What one ball's wall contacts put on the walls in the last force pass: (wall, force on the
/// wall, torque on the wall about its load point).
pub type WallContacts = Vec<(u32, DVec3, DVec3)>;

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
        .map(|(i, (owned, on_walls))| gather(ctx, state, old_history, owned, on_walls, i as u32, dt))
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

fn gather(ctx: &ForceContext, s: &State, old_history: &[OwnedHistory], owned: &mut OwnedHistory, on_walls: &mut WallContacts, i: u32, dt: f64) -> Gathered {
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
        let g = ball_wall_geometry(s_dist, n_w, r_i, s.mass[iu], s.velocity[iu], s.angular_velocity[iu], u);
        if !contact_active(p, &g) {
            continue;
        }
        let key = WALL_KEY_BIT | w as u32;
        let c = contact_force(p, &g, &lookup(&old_history[iu], key), dt);
        out.force -= c.force_j;
        out.torque += c.torque_i;
        add_owned(&mut out, owned, key, &c);
        // the wall drives the contact point at u: its work on the ball is −F_j·u Δt
        out.wall_work -= c.force_j.dot(u) * dt;
        let lever = x_p - DVec3::from(wall.load_point);
        on_walls.push((w as u32, c.force_j, lever.cross(c.force_j) + c.torque_j));
    }
    out
}

fn add_owned(out: &mut Gathered, owned: &mut OwnedHistory, key: u32, c: &ContactOutput) {
    owned.push((key, c.history));
    out.strain += c.strain;
    out.slip_work += c.slip_work;
    out.dashpot_work += c.dashpot_work;
    out.stiffness_work += c.stiffness_work;
    out.contacts += 1;
}
