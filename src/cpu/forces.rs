//! The force pass, pair-once: every contact is evaluated once, by its owner (the lower id of a
//! ball pair, the ball of a ball–wall contact), in canonical order (i = lower id), over the
//! owner's slots of the neighbour list (`neighbour.rs`), its listed plane walls and every
//! mesh wall. The owner keeps its own share, the history and the energies; the partner's share
//! goes to the pair's slot, and `gather` sums each particle's contacts in a fixed id order
//! (no atomics, no dependence on the list). Plane and mesh contacts share `surface_contact`
//! once their geometry (distance, normal, surface velocity) is known.

use std::sync::atomic::{AtomicU32, Ordering};

use glam::DVec3;
use rayon::prelude::*;

use super::isa;
use super::neighbour::{NeighbourList, SlotHistory, CHUNK};
use super::prefetch::{prefetch, prefetch_at};
use super::state::{AdhesionEnergy, Owned, Owners, State, Works};
use crate::contact::adhesion::{bonded_active, tensile_range};
use crate::contact::adhesive::{adhesive_contact_force, ended_adhesive_work};
use crate::contact::params::Adhesion;
use crate::contact::params::PairParams;
use crate::contact::hertz_mindlin::hertz_mindlin_contact;
use crate::contact::hertz_viscous::hertz_viscous_contact;
use crate::contact::hooke::hooke_contact;
use crate::contact::hysteretic::hysteretic_contact;
use crate::contact::{ball_ball_geometry, ball_wall_geometry, contact_active, contact_force, ended_contact_work, hertz_contact, ContactGeometry, ContactModel, ContactOutput, History};
use crate::layout::consts::{MESH_KEY_BIT, WALL_KEY_BIT};
use crate::mesh::contacts::MESH_REACH_SLACK;
use crate::model::checks::{overlap_beyond_limit, OVERLAP_MAX_FRACTION};
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

/// What a slot's partner takes from the contact, stored at the slot's index (the partner
/// finds it through `NeighbourList::in_slot`).
#[derive(Clone, Copy, Debug, Default)]
pub struct SlotForce {
    pub force_j: DVec3,
    pub torque_j: DVec3,
}

/// The partner shares of the last force pass, in slot order. A slot's share is exact +0
/// unless its contact is active: active contacts write theirs, a contact that ends writes +0
/// (`end_contact`), and a new list starts from zeros (`clear_shares`), so the gather adds
/// every incoming share as it is (+0 changes no bit of a sum that starts at +0).
#[derive(Debug, Default)]
pub struct Incoming {
    pub shares: Vec<SlotForce>,
    /// Per particle (internal order): the last pass in which some contact it is partner of
    /// was active (so the gather skips the runs of particles nothing pushed; set by the
    /// owners, several of which may write the same value at once).
    pub partnered: Vec<AtomicU32>,
    /// The current force pass (≥ 1; a mark of 0 is never current).
    pub pass: u32,
}

impl Incoming {
    /// Room for `slots` shares and `n` particles, and a new pass number (all marks cleared
    /// when it wraps).
    fn begin_pass(&mut self, slots: usize, n: usize) {
        self.shares.resize(slots, SlotForce::default());
        self.partnered.resize_with(n, || AtomicU32::new(0));
        self.pass = match self.pass.checked_add(1) {
            Some(p) => p,
            None => {
                self.partnered.iter_mut().for_each(|s| *s.get_mut() = 0);
                1
            }
        };
    }

    /// Whether some contact particle `i` is partner of was active in the current pass.
    #[inline]
    fn partnered(&self, i: usize) -> bool {
        self.partnered[i].load(Ordering::Relaxed) == self.pass
    }

    /// Every share back to +0, for a new list (its slots are other pairs than the old
    /// list's; `begin_pass` then fills them with zeros). The array is freed, not only emptied:
    /// a rebuild calls this first, so that the shares (48 bytes a slot) are not resident
    /// beside the contact records the rebuild hands over (72 bytes a contact), which set the
    /// peak memory of a dense packing.
    pub fn clear_shares(&mut self) {
        self.shares = Vec::new();
    }
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
    /// Largest positive reference gap over all pairs (interaction distance margin).
    pub max_rgap: f64,
    /// Whether any axis is periodic (pair separations then take the nearest image).
    pub periodic: bool,
}

fn lookup(history: &OwnedHistory, partner: u32) -> History {
    history.iter().find(|(k, _)| *k == partner).map(|(_, h)| *h).unwrap_or(History::NEW)
}

/// Owners ahead of the one being evaluated whose partners' state the force pass asks the
/// cache for (`prefetch_partners`), when that owner had contacts in the last pass (most slots
/// of a loose packing are out of reach, and their partners' velocity and spin are never read:
/// prefetching them cost the falling settle box 6 %).
const PARTNERS_AHEAD: usize = 4;

/// Per-particle outputs of the force pass that a chunk of owners writes.
pub struct OwnerOutputs<'a> {
    /// Their records (the contact counts of the last pass on entry, of this pass on return).
    pub owners: &'a mut Owners,
    pub wall_history: &'a mut [OwnedHistory],
    pub wall_contacts: &'a mut [WallContacts],
}

/// One force pass at the current positions, each contact evaluated once by its owner: pair
/// slots of the list (history updated in place, the partner's share into `incoming`), then
/// the owner's plane and mesh walls. `dt` = 0 gives forces without advancing dissipation.
/// Reads `old_wall_history`, fills `out.wall_history`. The particles' totals are formed by
/// `gather`. Returns the deepest overlap beyond the run-time check's limit as a fraction of
/// the smaller radius (`Owned::overlap`; 0 when no contact is that deep).
pub fn forces(ctx: &ForceContext, s: &State, list: &mut NeighbourList, incoming: &mut Incoming, old_wall_history: &[OwnedHistory], out: OwnerOutputs, dt: f64) -> f32 {
    incoming.begin_pass(list.slots(), s.len());
    let histories = split_at_bounds(&mut list.history, &list.chunk_bounds);
    let contact_flags = split_at_bounds(&mut list.in_contact, &list.chunk_bounds);
    let shares = split_at_bounds(&mut incoming.shares, &list.chunk_bounds);
    let pass = Pass { ctx, s, view: PairView::new(s), partners: PartnerMarks { partnered: &incoming.partnered[..s.len()], pass: incoming.pass }, list: ListView { start: &list.start, partner: &list.partner, wall_start: &list.wall_start, wall_ids: &list.wall_ids }, old_wall_history, dt };
    let single_model = ctx.pairs.single_model();
    let adhesive = ctx.pairs.entries.iter().any(|p| p.adhesion != Adhesion::None);
    let rolling = ctx.pairs.entries.iter().any(|p| p.rolling_fric != 0.0);
    let isa = isa::isa();
    let o = out.owners;
    let owners = (o.owned.par_chunks_mut(CHUNK), o.contacts.par_chunks_mut(CHUNK), o.works.par_chunks_mut(CHUNK), adhesion_chunks(&mut o.adhesion, s.len()));
    (histories, contact_flags, shares, owners, out.wall_history.par_chunks_mut(CHUNK), out.wall_contacts.par_chunks_mut(CHUNK))
        .into_par_iter()
        // one chunk per job: a thread that runs out of work steals single chunks (pieces of
        // several let the 10k falling box's two threads idle at each join; one per job ran
        // it 4 % faster)
        .with_max_len(1)
        .enumerate()
        .map_init(MeshScratch::default, |scratch, (c, (history, in_contact, shares, (owned, contacts, works, adhesion), wall_history, wall_contacts))| {
            let chunk = Chunk { first: c * CHUNK, history, in_contact, shares, owned, contacts, works, adhesion, wall_history, wall_contacts };
            if adhesive {
                // a scene with adhesion: every pair through `adhesive_contact_force`, with
                // the bonded activity rule (dry pairs take their preset within it)
                return isa::hot(isa, #[inline(always)] || pass.chunk::<true>(chunk, scratch, adhesive_contact_force));
            }
            // a table of one model calls its preset directly (`contact_force` would pick the
            // same one per contact); the branch is taken once per chunk. The chunk runs the
            // widest copy the CPU has (`isa::hot`; the closures are inlined into each).
            isa::hot(isa, #[inline(always)] || match single_model {
                // without rolling friction anywhere, the preset sees μ_r = 0 as a constant and
                // its rolling part is compiled away (the table's μ_r is 0 anyway)
                Some(ContactModel::HertzMindlin) if !rolling => pass.chunk::<false>(chunk, scratch, #[inline(always)] |p: &PairParams, g: &ContactGeometry, h: &History, dt| hertz_mindlin_contact(&PairParams { rolling_fric: 0.0, ..*p }, g, h, dt)),
                Some(ContactModel::HertzMindlin) => pass.chunk::<false>(chunk, scratch, hertz_mindlin_contact),
                Some(ContactModel::Hertz) => pass.chunk::<false>(chunk, scratch, hertz_contact),
                Some(ContactModel::Hysteretic) => pass.chunk::<false>(chunk, scratch, hysteretic_contact),
                Some(ContactModel::Hooke) => pass.chunk::<false>(chunk, scratch, hooke_contact),
                Some(ContactModel::HertzViscous) => pass.chunk::<false>(chunk, scratch, hertz_viscous_contact),
                None => pass.chunk::<false>(chunk, scratch, contact_force),
            })
        })
        .reduce(|| 0.0, f32::max)
}

/// What every chunk of a force pass reads.
struct Pass<'a> {
    ctx: &'a ForceContext<'a>,
    s: &'a State,
    view: PairView<'a>,
    partners: PartnerMarks<'a>,
    list: ListView<'a>,
    old_wall_history: &'a [OwnedHistory],
    dt: f64,
}

/// The neighbour list's slot and wall runs (`NeighbourList`), read-only.
struct ListView<'a> {
    start: &'a [u32],
    partner: &'a [u32],
    wall_start: &'a [u32],
    wall_ids: &'a [u32],
}

/// One chunk of `CHUNK` owners from `first`: their slots' history, contact flags and partner
/// shares, and their per-particle outputs.
struct Chunk<'a> {
    first: usize,
    history: &'a mut [SlotHistory],
    in_contact: &'a mut [bool],
    shares: &'a mut [SlotForce],
    owned: &'a mut [Owned],
    contacts: &'a mut [u32],
    works: &'a mut [Works],
    /// Their adhesion energies (empty in a scene without adhesion).
    adhesion: &'a mut [AdhesionEnergy],
    wall_history: &'a mut [OwnedHistory],
    wall_contacts: &'a mut [WallContacts],
}

/// The adhesion energies cut into the force pass's chunks; empty pieces in a scene without
/// adhesion (`Owners::adhesion` empty). Nothing is allocated: this runs every step.
fn adhesion_chunks(adhesion: &mut [AdhesionEnergy], n: usize) -> impl IndexedParallelIterator<Item = &mut [AdhesionEnergy]> {
    if adhesion.is_empty() {
        rayon::iter::Either::Left((0..n.div_ceil(CHUNK)).into_par_iter().map(|_| &mut [][..]))
    } else {
        rayon::iter::Either::Right(adhesion[..n].par_chunks_mut(CHUNK))
    }
}

impl Pass<'_> {
    /// The owners of `c` in id order: their pair contacts with `law`, then their walls.
    /// Returns the deepest overlap beyond the check's limit (`Owned::overlap`). `A`: the
    /// scene has adhesion (bonded activity rule, bond-break booking, surface energies).
    #[inline(always)]
    fn chunk<const A: bool>(&self, c: Chunk, scratch: &mut MeshScratch, law: impl Fn(&PairParams, &ContactGeometry, &History, f64) -> ContactOutput + Copy) -> f32 {
        let (ctx, list) = (self.ctx, &self.list);
        // the chunk's runs, cut to its owners (no bounds check per owner)
        let m = c.owned.len();
        let (contacts, works) = (&mut c.contacts[..m], &mut c.works[..m]);
        let (start, wall_start) = (&list.start[c.first..][..m + 1], &list.wall_start[c.first..][..m + 1]);
        let (wall_history, on_walls, old_wall_history) = (&mut c.wall_history[..m], &mut c.wall_contacts[..m], &self.old_wall_history[c.first..][..m]);
        let slot0 = start[0] as usize;
        let mut deepest = 0.0f32;
        for o in 0..m {
            let i = c.first + o;
            if o + PARTNERS_AHEAD < m && contacts[o + PARTNERS_AHEAD] != 0 {
                prefetch_partners(&self.view, list.partner, start[o + PARTNERS_AHEAD] as usize);
                prefetch_slots(c.history, c.shares, start[o + PARTNERS_AHEAD] as usize - slot0);
            }
            if o + WALLS_AHEAD < m && wall_start[o + WALLS_AHEAD] != wall_start[o + WALLS_AHEAD + 1] {
                prefetch_wall_lists(&old_wall_history[o + WALLS_AHEAD], &wall_history[o + WALLS_AHEAD], &on_walls[o + WALLS_AHEAD]);
            }
            let mut own = Booking { force: DVec3::ZERO, torque: DVec3::ZERO, strain: 0.0, surface: 0.0, bond_break: 0.0, overlap: 0.0, contacts: 0, works: &mut works[o] };
            let slots = start[o] as usize..start[o + 1] as usize;
            let local = slots.start - slot0..slots.end - slot0;
            let slot = SlotRun { partner: &list.partner[slots], history: &mut c.history[local.clone()], in_contact: &mut c.in_contact[local.clone()], shares: &mut c.shares[local] };
            pair_contacts::<A>(ctx, &self.view, i, slot, &self.partners, &mut own, self.dt, law);
            let walls = &list.wall_ids[wall_start[o] as usize..wall_start[o + 1] as usize];
            // most particles have no wall listed: their wall lists are kept empty
            // (`CpuBackend::clear_unlisted_walls`) and not read at all
            if !walls.is_empty() || !ctx.meshes.is_empty() {
                if !wall_history[o].is_empty() {
                    wall_history[o].clear();
                }
                if !on_walls[o].is_empty() {
                    on_walls[o].clear();
                }
                wall_contacts::<A>(ctx, self.s, i, walls, &old_wall_history[o], &mut own, &mut wall_history[o], &mut on_walls[o], scratch, self.dt, law);
            }
            if A {
                let e = &mut c.adhesion[o];
                e.surface = own.surface;
                e.bond_break += own.bond_break;
            }
            deepest = deepest.max(own.overlap);
            // a particle without contacts in this pass and the last keeps its record (all
            // zeros) as it is, untouched
            if own.contacts != 0 || contacts[o] != 0 {
                // field by field: an `Owned` built on the stack and copied whole was read back
                // across two of its stores, a failed store forwarding per owner (6 % of the
                // dense box's force pass samples on that one load)
                let rec = &mut c.owned[o];
                (rec.force, rec.torque, rec.strain, rec.overlap) = (own.force, own.torque, own.strain, own.overlap);
                contacts[o] = own.contacts;
            }
        }
        deepest
    }
}

/// One owner's sums in a force pass, from zero (`Owned`), and its cumulative work, added to
/// contact by contact in its record (`Works`: touched only by an owner that books a contact).
struct Booking<'a> {
    force: DVec3,
    torque: DVec3,
    strain: f64,
    /// Surface energy of the owned contacts (this pass; scenes with adhesion).
    surface: f64,
    /// Bond-break work of the owned contacts that broke in this pass.
    bond_break: f64,
    overlap: f32,
    contacts: u32,
    works: &'a mut Works,
}

impl Booking<'_> {
    /// Keeps the deepest overlap beyond the run-time check's limit (`overlap_beyond_limit`) of
    /// a contact of overlap `depth` and smaller radius `r`. A contact within the limit, nearly
    /// every one, costs one comparison: an f32 `max` per contact, with its NaN handling, was
    /// 33 instructions per particle-step of the dense 10k settle box.
    #[inline(always)]
    fn deepen(&mut self, depth: f64, r: f64) {
        if depth > OVERLAP_MAX_FRACTION * r {
            self.overlap = self.overlap.max(overlap_beyond_limit(depth, r));
        }
    }
}

/// Where the force pass marks the particles some active contact pushed in this pass
/// (`Incoming::partnered`, cut to the particle count).
struct PartnerMarks<'a> {
    partnered: &'a [AtomicU32],
    pass: u32,
}

impl PartnerMarks<'_> {
    /// Marks particle `j` as pushed in this pass.
    #[inline(always)]
    fn mark(&self, j: Checked) {
        // SAFETY: `j` is below the particle count (`PairView::at`), the length of `partnered`
        // (`forces` cuts it to the count, which panics for a shorter one)
        unsafe { self.partnered.get_unchecked(j.0) }.store(self.pass, Ordering::Relaxed);
    }
}

/// One owner's slots of the neighbour list.
struct SlotRun<'a> {
    partner: &'a [u32],
    history: &'a mut [SlotHistory],
    in_contact: &'a mut [bool],
    /// The partner shares of these slots (`Incoming`).
    shares: &'a mut [SlotForce],
}

/// The state arrays the pair loop reads, each cut to the particle count `n`, so that one
/// bounds check of a particle index (`PairView::at`) covers them all.
struct PairView<'a> {
    n: usize,
    position: &'a [DVec3],
    radius: &'a [f64],
    mass: &'a [f64],
    velocity: &'a [DVec3],
    angular_velocity: &'a [DVec3],
    material: &'a [u32],
    /// The spins of the previous force pass (empty unless rolling work is booked).
    previous_spin: &'a [DVec3],
}

/// A particle index checked against `PairView::n` (made only by `PairView::at`).
#[derive(Clone, Copy)]
struct Checked(usize);

impl<'a> PairView<'a> {
    /// Puts the previous spins of the pair (i, j) into its geometry `g` when rolling work is
    /// booked.
    #[inline(always)]
    fn add_previous_spins(&self, g: &mut ContactGeometry, i: usize, j: usize) {
        if !self.previous_spin.is_empty() {
            (g.previous_spin_i, g.previous_spin_j) = (self.previous_spin[i], self.previous_spin[j]);
        }
    }

    fn new(s: &'a State) -> Self {
        let n = s.len();
        PairView { n, position: &s.position[..n], radius: &s.radius[..n], mass: &s.mass[..n], velocity: &s.velocity[..n], angular_velocity: &s.angular_velocity[..n], material: &s.material[..n], previous_spin: &s.previous_spin }
    }

    /// Particle `j`, checked once for every array of the view (the pair loop read seven
    /// arrays per slot, each with its own check: 8 % of the dense box's instructions).
    #[inline(always)]
    fn at(&self, j: usize) -> Checked {
        assert!(j < self.n, "particle index {j} out of {} particles", self.n);
        Checked(j)
    }

    // SAFETY (here and in `prefetch_partners`): `Checked(j)` has j < n, and every slice of the view has length n
    // (`new` cuts each to n, which panics for a shorter one).
    #[inline(always)]
    fn position(&self, j: Checked) -> DVec3 {
        unsafe { *self.position.get_unchecked(j.0) }
    }

    #[inline(always)]
    fn radius(&self, j: Checked) -> f64 {
        unsafe { *self.radius.get_unchecked(j.0) }
    }

    /// Mass, velocity, spin and material of particle `j`: what the pair loop reads of a pair
    /// within reach only.
    #[inline(always)]
    fn motion(&self, j: Checked) -> (f64, DVec3, DVec3, u32) {
        unsafe { (*self.mass.get_unchecked(j.0), *self.velocity.get_unchecked(j.0), *self.angular_velocity.get_unchecked(j.0), *self.material.get_unchecked(j.0)) }
    }
}

/// The contacts of owner `i` with its listed partners, in list (partner-id) order; the
/// partner's share of an active slot goes to the slot's place in the incoming shares. `law`
/// is `contact_force`, or the preset every pair of the table uses (the same results; inlined
/// whole, the contact's geometry and output then stay in registers).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn pair_contacts<const A: bool>(ctx: &ForceContext, s: &PairView, i: usize, slots: SlotRun, partners: &PartnerMarks, own: &mut Booking, dt: f64, law: impl Fn(&PairParams, &ContactGeometry, &History, f64) -> ContactOutput) {
    let m = slots.partner.len();
    if m == 0 {
        return;
    }
    // the owner's mass, velocity, spin and material are read only for a slot within reach
    // (most slots of a loose packing are not)
    let ci = s.at(i);
    let (x_i, r_i) = (s.position(ci), s.radius(ci));
    let (partner, history, touching, shares) = (slots.partner, &mut slots.history[..m], &mut slots.in_contact[..m], &mut slots.shares[..m]);
    for k in 0..m {
        let j = partner[k] as usize;
        let cj = s.at(j);
        let r_j = s.radius(cj);
        let reach = r_i + r_j + ctx.max_rgap;
        // canonical separation x_j − x_i (i has the lower id), nearest image across periodic boundaries
        let mut d = s.position(cj) - x_i;
        if ctx.periodic {
            d = ctx.setup.minimum_image(d);
        }
        // a slot that stays apart keeps its NEW history without touching it; a contact that
        // ended books the rest of its last step's dissipation first
        if d.length_squared() > reach * reach {
            if touching[k] {
                let ((m_i, v_i, w_i, mat_i), (m_j, v_j, w_j, mat_j)) = (s.motion(ci), s.motion(cj));
                let mut g = ball_ball_geometry(d, r_i, r_j, m_i, m_j, v_i, w_i, v_j, w_j);
                s.add_previous_spins(&mut g, i, j);
                end_contact::<A>(own, ctx.pairs.get(mat_i, mat_j), g, &mut history[k].0, &mut touching[k], &mut shares[k], dt);
            }
            continue;
        }
        let ((m_i, v_i, w_i, mat_i), (m_j, v_j, w_j, mat_j)) = (s.motion(ci), s.motion(cj));
        let mut g = ball_ball_geometry(d, r_i, r_j, m_i, m_j, v_i, w_i, v_j, w_j);
        s.add_previous_spins(&mut g, i, j);
        let p = ctx.pairs.get(mat_i, mat_j);
        let active = if A { bonded_active(p, &g, &history[k].0) } else { contact_active(p, &g) };
        if !active {
            if touching[k] {
                end_contact::<A>(own, p, g, &mut history[k].0, &mut touching[k], &mut shares[k], dt);
            }
            continue;
        }
        let c = law(p, &g, &history[k].0, dt);
        own.deepen(-g.gap, r_i.min(r_j));
        own.force -= c.force_j;
        own.torque += c.torque_i;
        history[k].0 = c.history;
        touching[k] = true;
        add_energies::<A>(own, &c);
        shares[k] = SlotForce { force_j: c.force_j, torque_j: c.torque_j };
        partners.mark(cj);
    }
}

/// A listed pair contact that was active in the previous pass and is not in this one: books
/// the rest of its last step (`book_ended_contact`) and clears its slot, its partner share
/// included (`Incoming`). Takes the geometry by value, so that the pair loop's own copy never
/// has its address taken and stays in registers.
#[allow(clippy::too_many_arguments)]
#[cold]
fn end_contact<const A: bool>(own: &mut Booking, p: &PairParams, g: ContactGeometry, history: &mut History, touching: &mut bool, share: &mut SlotForce, dt: f64) {
    book_ended_contact::<A>(own, p, &g, history, dt);
    *history = History::NEW;
    *touching = false;
    *share = SlotForce::default();
}

/// The contacts of ball `iu` with its listed plane walls and with every mesh wall, with `law`
/// (as `pair_contacts`). Not inlined: most owners touch no wall, and the pair loop stays compact.
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn wall_contacts<const A: bool>(ctx: &ForceContext, s: &State, iu: usize, walls: &[u32], old: &OwnedHistory, own: &mut Booking, owned: &mut OwnedHistory, on_walls: &mut WallContacts, scratch: &mut MeshScratch, dt: f64, law: impl Fn(&PairParams, &ContactGeometry, &History, f64) -> ContactOutput + Copy) {
    let x_i = s.position[iu];
    for &w in walls {
        let (wall, now) = (&ctx.walls[w as usize], &ctx.wall_states[w as usize]);
        let n_w = now.normal;
        let s_dist = n_w.dot(x_i - now.point);
        let p = ctx.pairs.get(s.material[iu], wall.material);
        let key = WALL_KEY_BIT | w;
        let Some((history, active)) = surface_touched::<A>(p, s.radius[iu], key, s_dist, old) else { continue };
        // the wall's surface point under the ball's centre, and its velocity
        let x_p = x_i - n_w * s_dist;
        let u = now.pose.surface_velocity(x_p);
        let Some(c) = surface_contact::<A>(p, s, iu, (&history, active), s_dist, n_w, u, own, dt, law) else { continue };
        own.deepen(s.radius[iu] - s_dist, s.radius[iu]);
        book_wall_contact::<A>(own, owned, on_walls, w, key, &c, u, x_p - DVec3::from(wall.load_point), dt);
    }
    for (m, mesh) in ctx.meshes.iter().enumerate() {
        mesh_contacts::<A>(ctx, s, iu, mesh, scratch, dt);
        let p = ctx.pairs.get(s.material[iu], mesh.wall.material);
        let wall_index = (ctx.walls.len() + m) as u32;
        for mc in &scratch.found {
            // back from the mesh's t = 0 frame: the normal, the surface point under the ball
            let key = WALL_KEY_BIT | MESH_KEY_BIT | (mesh.group_base + mc.group);
            let Some((history, active)) = surface_touched::<A>(p, s.radius[iu], key, mc.distance, old) else { continue };
            let n = mesh.to_world(mc.normal);
            let x_p = x_i - n * mc.distance;
            let u = mesh.pose.surface_velocity(x_p);
            let Some(c) = surface_contact::<A>(p, s, iu, (&history, active), mc.distance, n, u, own, dt, law) else { continue };
            own.deepen(s.radius[iu] - mc.distance, s.radius[iu]);
            book_wall_contact::<A>(own, owned, on_walls, wall_index, key, &c, u, x_p - DVec3::from(mesh.wall.load_point), dt);
        }
    }
}

/// `v` cut at `bounds` (ascending, first 0, last `v.len()`) into consecutive pieces.
fn split_at_bounds<'a, T>(mut v: &'a mut [T], bounds: &[usize]) -> Vec<&'a mut [T]> {
    let mut pieces = Vec::with_capacity(bounds.len());
    for w in bounds.windows(2) {
        let (head, tail) = v.split_at_mut(w[1] - w[0]);
        pieces.push(head);
        v = tail;
    }
    pieces
}

/// Entries of `NeighbourList::in_slot` ahead of the one being gathered whose share the
/// gather asks the cache for (the shares sit scattered over the slot array, where the
/// hardware prefetchers cannot guess them). One prefetch per entry gathered, at a fixed
/// distance in the entry array: a loop of its own over the incoming run of a particle some
/// entries ahead cost a mispredicted exit per particle (0.7 per particle-step on a dense
/// packing).
const SHARES_AHEAD: usize = 24;

/// The total contact force and torque on particle `i`: the contacts it is partner of, by
/// owner id (their slots listed in `NeighbourList::in_slot`; a contact that is not active
/// adds its +0 share, and the run is skipped when none was active), then its own contacts
/// (pairs by partner id, then walls: `Owners::owned`, read only when `Owners::contacts` says
/// it owns one). The order depends on ids only, never on when the list was built or how particles
/// are stored (a +0 changes no bit of a sum that starts at +0 and so is never −0).
#[inline(always)]
pub fn gather(list: &NeighbourList, incoming: &Incoming, owners: &Owners, i: usize) -> (DVec3, DVec3) {
    let mut force = DVec3::ZERO;
    let mut torque = DVec3::ZERO;
    if incoming.partnered(i) {
        let (in_slot, shares) = (&list.in_slot, &incoming.shares);
        let last = in_slot.len().saturating_sub(1);
        for q in list.in_start[i] as usize..list.in_start[i + 1] as usize {
            prefetch(&shares[in_slot[(q + SHARES_AHEAD).min(last)] as usize]);
            let share = &shares[in_slot[q] as usize];
            force += share.force_j;
            torque += share.torque_j;
        }
    }
    if owners.contacts[i] == 0 {
        // its own record holds zeros (and is not read)
        return (force, torque);
    }
    let own = &owners.owned[i];
    (force + own.force, torque + own.torque)
}

/// Owners ahead of the one being evaluated whose wall lists the force pass asks the cache
/// for (`prefetch_wall_lists`), when they have plane walls listed.
const WALLS_AHEAD: usize = 4;

/// Asks the cache for the heap buffers of one owner's wall lists: the history it reads
/// (`old`), and the history and wall loads it writes (emptied, with their room kept). Each is
/// an allocation of its own, which the hardware prefetchers cannot find: reading `old` missed
/// the cache for nearly every ball at a wall of the dense 100k settle box, 4 % of its time.
#[inline(always)]
fn prefetch_wall_lists(old: &OwnedHistory, new: &OwnedHistory, on_walls: &WallContacts) {
    if !old.is_empty() {
        prefetch_at(old.as_ptr());
    }
    if new.capacity() != 0 {
        prefetch_at(new.as_ptr());
    }
    if on_walls.capacity() != 0 {
        prefetch_at(on_walls.as_ptr());
    }
}

/// Slots from an owner's first whose history and share `prefetch_slots` asks for (a settled
/// packing lists 3.4 slots per owner, 2 of them in contact).
const SLOTS_PREFETCHED: usize = 3;

/// Asks the cache for the history and the share of the slots `first..first +
/// SLOTS_PREFETCHED` of a chunk (those beyond its end are left out): the force pass reads and
/// writes the history of every slot in contact, and writes its share. The slots lie in order,
/// but the pass touches only those in contact, and the hardware prefetchers followed that
/// broken stream too late: asking a few owners ahead ran the dense 100k settle box 4 % faster.
#[inline(always)]
fn prefetch_slots(history: &[SlotHistory], shares: &[SlotForce], first: usize) {
    for t in 0..SLOTS_PREFETCHED {
        if let Some(h) = history.get(first + t) {
            prefetch(h);
        }
    }
    // the shares of the run, 48 bytes each, lie within the lines of its first and last
    for t in [first, first + SLOTS_PREFETCHED - 1] {
        if let Some(share) = shares.get(t) {
            prefetch(share);
        }
    }
}

/// Slots from an owner's first whose partners' state `prefetch_partners` asks for: a fixed
/// count, so that the prefetch needs no loop with a data-dependent exit (a settled packing
/// lists 3.4 partners per owner; the slots beyond an owner's run are the next owner's).
const PARTNERS_PREFETCHED: usize = 4;

/// Asks the cache for the state the pair loop reads of the partners of slots `first..first +
/// PARTNERS_PREFETCHED` (by partner index, which the hardware prefetchers cannot follow): all
/// six arrays, mass and material included (without those two, the dense 100k settle box ran
/// 3 % slower); the force pass calls it a few owners ahead.
#[inline(always)]
fn prefetch_partners(view: &PairView, partner: &[u32], first: usize) {
    let Some(last) = partner.len().checked_sub(1) else { return };
    for t in 0..PARTNERS_PREFETCHED {
        let j = view.at(partner[(first + t).min(last)] as usize);
        unsafe {
            prefetch(view.position.get_unchecked(j.0));
            prefetch(view.radius.get_unchecked(j.0));
            prefetch(view.velocity.get_unchecked(j.0));
            prefetch(view.angular_velocity.get_unchecked(j.0));
            prefetch(view.mass.get_unchecked(j.0));
            prefetch(view.material.get_unchecked(j.0));
        }
    }
}

/// The contacts of ball `iu` with `mesh` into `scratch.found`: the ball centre in the mesh's
/// t = 0 frame, the triangle grid's candidates within its reach, then `ball_mesh_contacts`.
/// The reach is the contact reach plus the step's relative travel (`mesh_travel`), so that a
/// contact that ended in this step is still found, inactive, and books the rest of its last
/// step (as the plane walls' list margin does); the active contacts are those of the contact
/// reach alone (a triangle through a point within it is itself within it).
fn mesh_contacts<const A: bool>(ctx: &ForceContext, s: &State, iu: usize, mesh: &MeshView, scratch: &mut MeshScratch, dt: f64) {
    let p = ctx.pairs.get(s.material[iu], mesh.wall.material);
    // a bond of an adhesive pair holds to its tensile range
    let gap = if A { p.rgap.max(tensile_range(p, 2.0 * s.radius[iu])) } else { p.rgap };
    let contact_reach = (s.radius[iu] + gap.max(0.0)) * MESH_REACH_SLACK;
    let reach = contact_reach + mesh_travel(&mesh.pose, s.position[iu], s.velocity[iu], contact_reach, dt);
    let x_b = mesh.to_mesh_frame(s.position[iu]);
    mesh.grid.candidates_into(x_b, reach, &mut scratch.candidates);
    ball_mesh_contacts_into(x_b, reach, &mesh.wall.mesh, &scratch.candidates, &mut scratch.contacts, &mut scratch.found);
}

/// How far a ball at `x` moving with `v` and a mesh moving with `pose` can have separated
/// in one step within `reach` of the ball: (|v| + |V| + |Ω| (|x − c| + reach)) Δt, with 1 %
/// to spare. Twin of `mesh_travel` in shaders/wall_contact.wgsl.
pub fn mesh_travel(pose: &Pose, x: DVec3, v: DVec3, reach: f64, dt: f64) -> f64 {
    1.01 * (v.length() + pose.velocity.length() + pose.omega.length() * ((x - pose.center).length() + reach)) * dt
}

/// The history of the contact `key` of a ball of radius `r` with a wall surface at signed
/// centre distance `dist`, from `old` (the ball's list of the previous step), and whether the
/// contact is active now, when it is or was in the previous step; `None` otherwise. This is `contact_active` on
/// the gap alone (the geometry's gap is dist − r): most listed walls are out of contact, and of
/// those only one that was active in the previous step needs its geometry, to book its end.
/// The callers form the surface's velocity only past this test.
#[inline(always)]
fn surface_touched<const A: bool>(p: &PairParams, r: f64, key: u32, dist: f64, old: &OwnedHistory) -> Option<(History, bool)> {
    let mut active = dist - r - p.rgap <= 0.0;
    if !active && old.is_empty() {
        // (most listed walls: apart now, and no wall contact in the previous step)
        return None;
    }
    let history = lookup(old, key);
    if A && !active {
        // a bond holds to the pair's tensile range (`bonded_active`; a wall's R̄ is 2r)
        active = history.established != 0.0 && dist - r < tensile_range(p, 2.0 * r);
    }
    (active || history.established != 0.0).then_some((history, active))
}

/// The contact of ball `iu` with a wall surface (plane or mesh) whose unit normal `n_w` points
/// towards the ball, at signed centre distance `dist`, moving with `u` at the surface point
/// under the centre, with its history and whether it is active (`surface_touched`); `None` when inactive (a contact that
/// was active in the previous step first books the rest of its dissipation into `own`). Twin
/// of `surface_contact` in shaders/wall_contact.wgsl.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn surface_contact<const A: bool>(p: &PairParams, s: &State, iu: usize, (history, active): (&History, bool), dist: f64, n_w: DVec3, u: DVec3, own: &mut Booking, dt: f64, law: impl Fn(&PairParams, &ContactGeometry, &History, f64) -> ContactOutput) -> Option<ContactOutput> {
    let mut g = ball_wall_geometry(dist, n_w, s.radius[iu], s.mass[iu], s.velocity[iu], s.angular_velocity[iu], u);
    if !s.previous_spin.is_empty() {
        g.previous_spin_i = s.previous_spin[iu];
    }
    debug_assert_eq!(active, if A { bonded_active(p, &g, history) } else { contact_active(p, &g) });
    if !active {
        book_ended_contact::<A>(own, p, &g, history, dt);
        return None;
    }
    Some(law(p, &g, history, dt))
}

/// The rest of the last step's dissipation of a contact that ended in this step
/// (`contact::ended_contact_work`), booked by its owner.
fn book_ended_contact<const A: bool>(own: &mut Booking, p: &PairParams, g: &ContactGeometry, h: &History, dt: f64) {
    let (dashpot, slip, stiffness) = if A {
        let [dashpot, slip, stiffness, broken] = ended_adhesive_work(p, g, h, dt);
        own.bond_break += broken;
        (dashpot, slip, stiffness)
    } else {
        ended_contact_work(p, g, h, dt)
    };
    own.works.dashpot_work += dashpot;
    own.works.slip_work += slip;
    own.works.stiffness_work += stiffness;
}

/// The ball's share of wall contact `c` (force, torque, history, energies), the wall's work on
/// it, and what it puts on wall `wall` (force, torque about the load point; `lever` = surface
/// point − load point).
#[allow(clippy::too_many_arguments)]
fn book_wall_contact<const A: bool>(out: &mut Booking, owned: &mut OwnedHistory, on_walls: &mut WallContacts, wall: u32, key: u32, c: &ContactOutput, u: DVec3, lever: DVec3, dt: f64) {
    out.force -= c.force_j;
    out.torque += c.torque_i;
    owned.push((key, c.history));
    add_energies::<A>(out, c);
    // the wall drives the contact point at u: its work on the ball is −F_j·u Δt
    out.works.wall_work -= c.force_j.dot(u) * dt;
    on_walls.push((wall, c.force_j, lever.cross(c.force_j) + c.torque_j));
}

fn add_energies<const A: bool>(out: &mut Booking, c: &ContactOutput) {
    out.strain += c.strain;
    if A {
        out.surface += c.surface;
    }
    out.works.slip_work += c.slip_work;
    out.works.dashpot_work += c.dashpot_work;
    out.works.stiffness_work += c.stiffness_work;
    out.contacts += 1;
}
