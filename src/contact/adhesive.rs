//! Adhesion added to any model (SJKR, SJKR2, the capillary bridge), the entry point of a
//! scene with adhesion, and what a bond gives up when it breaks. Twin of
//! `shaders/contact/adhesive.wgsl`.
//!
//! A bonded contact is in one of two states (`History::established`): 1 while the surfaces
//! touch (the model's own history is kept), `BONDED_APART` while a bridge holds them apart
//! (the model's part has ended; the bridge alone acts).

use super::adhesion::{adhesive_part, tensile_range, BONDED_APART};
use super::energy::normal_step_work;
use super::geometry::ContactGeometry;
use super::hertz_mindlin_adhesive::{hertz_mindlin_adhesive_contact, previous_adhesive};
use super::history::History;
use super::model::{contact_force, ended_contact_work};
use super::output::ContactOutput;
use super::params::{Adhesion, PairParams};

/// One step of an active contact of a scene with adhesion: dry pairs as `contact_force`,
/// JKR and DMT as `hertz_mindlin_adhesive_contact`, the others `added_adhesion_contact`.
#[inline(always)]
pub fn adhesive_contact_force(p: &PairParams, g: &ContactGeometry, h: &History, dt: f64) -> ContactOutput {
    match p.adhesion {
        Adhesion::None => contact_force(p, g, h, dt),
        Adhesion::Jkr | Adhesion::Dmt => hertz_mindlin_adhesive_contact(p, g, h, dt),
        _ => added_adhesion_contact(p, g, h, dt),
    }
}

/// One step of a contact whose adhesion is added to its model: the model's step while the
/// surfaces touch (from an empty history after a bridge held them apart), nothing of it while
/// apart (its end booked in the step it ends), and the adhesive pull F_a along the normal
/// (no torque), with its surface energy and its spring work (`normal_step_work`, booked with
/// the stiffness work as the model's own stepping is).
#[inline(always)]
pub fn added_adhesion_contact(p: &PairParams, g: &ContactGeometry, h: &History, dt: f64) -> ContactOutput {
    let adhesive = adhesive_part(p, g, g.gap);
    let mut c = if g.gap - p.rgap <= 0.0 {
        let dry = if h.established == BONDED_APART { History::NEW } else { *h };
        contact_force(p, g, &dry, dt)
    } else {
        let mut apart = ContactOutput { history: History { established: BONDED_APART, ..History::NEW }, ..ContactOutput::default() };
        if h.established == 1.0 {
            let (dashpot, slip, stiffness) = ended_contact_work(p, g, h, dt);
            (apart.dashpot_work, apart.slip_work, apart.stiffness_work) = (dashpot, slip, stiffness);
        }
        apart
    };
    c.force_j -= g.normal * adhesive.force;
    c.surface = adhesive.energy;
    if p.energy_tracking {
        let before = previous_adhesive(p, g, h, dt);
        c.stiffness_work += normal_step_work(g, (-before.force, before.energy), (-adhesive.force, adhesive.energy), dt);
    }
    c
}

/// What a contact of a scene with adhesion that was active in the previous step and is not
/// in this one still books: (dashpot, slip, stiffness, bond break). The model's part as
/// `ended_contact_work` unless a bridge held the surfaces apart; a bond's last step of spring
/// work (stiffness) and its surface energy, which the break dissipates, to the bond-break
/// partition for a bond with a tensile range (JKR, capillary), else (DMT, SJKR, at a gap of
/// about one step) with the stiffness work.
pub fn ended_adhesive_work(p: &PairParams, g: &ContactGeometry, h: &History, dt: f64) -> [f64; 4] {
    let (dashpot, slip, mut stiffness) = if h.established == BONDED_APART { (0.0, 0.0, 0.0) } else { ended_contact_work(p, g, h, dt) };
    let mut broken = 0.0;
    if p.adhesion != Adhesion::None && p.energy_tracking {
        let before = previous_adhesive(p, g, h, dt);
        stiffness += normal_step_work(g, (-before.force, 0.0), (0.0, 0.0), dt);
        if tensile_range(p, g.r_bar) > 0.0 {
            broken = before.energy;
        } else {
            stiffness += before.energy;
        }
    }
    [dashpot, slip, stiffness, broken]
}
