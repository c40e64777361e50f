//! Moving particles between the ranks of a decomposed run (CPU or GPU, `cpu::decomposed`,
//! `gpu::decomposed`) without gathering them: `redistribute` sends each owned particle to the
//! rank that owns its place and to the ranks that hold it as a ghost, with the contact records
//! it owns (one all-to-all); the flow exchange (`Backend::exchange_view`, `apply_exchange`)
//! gathers on rank 0 only the particles near its outlets and insertion regions (`view`), and
//! every rank applies the change to what it owns (`apply_change`): outlets remove on the owning
//! rank, ids are compacted as one process compacts them, and the new particles go to their
//! owners.

use bytemuck::{Pod, Zeroable};
use glam::DVec3;

use super::decomposed::{Bricks, Local, Message, Reach, Reader, WireRecord};
use crate::model::exchange::{ExchangeChange, ExchangeQuery, ExchangeView};
use crate::model::state::{ContactRecord, ParticleState};
use crate::ranks::Ranks;
use crate::setup::{Particles, Setup};

/// A particle as it travels between ranks (`Row` on the CPU, `GpuRow` on the GPU).
pub(crate) trait Placed: Pod {
    fn gid(&self) -> u32;
    fn set_gid(&mut self, gid: u32);
    /// Its centre as stored (wrapped on periodic axes).
    fn place(&self) -> DVec3;
    fn size(&self) -> f64;
    fn speed(&self) -> f64;
    /// Particle `k` of `p`, added by a flow exchange with id `gid` (no contacts, no force yet).
    fn added(gid: u32, p: &Particles, k: usize) -> Self;
    /// Append it to `s` (particle, image, force and torque; not its refresh flag).
    fn push_to(&self, s: &mut ParticleState);
}

/// The methods of `Placed` that read the fields every wire row has (`id`, `position`,
/// `velocity`, `spin`, `radius`, `material`, `image`, `force`, `torque`).
macro_rules! placed_fields {
    () => {
        fn gid(&self) -> u32 {
            self.id
        }
        fn set_gid(&mut self, gid: u32) {
            self.id = gid;
        }
        fn place(&self) -> glam::DVec3 {
            glam::DVec3::from(self.position)
        }
        fn size(&self) -> f64 {
            self.radius
        }
        fn speed(&self) -> f64 {
            glam::DVec3::from(self.velocity).length()
        }
        fn push_to(&self, s: &mut crate::model::state::ParticleState) {
            s.particles.push(self.position, self.velocity, self.spin, self.radius, self.material);
            s.image.push(self.image);
            s.force.push(self.force);
            s.torque.push(self.torque);
        }
    };
}
pub(crate) use placed_fields;

/// A state of `rows` (id order) with their `refresh` flags and `history` (ids of the rows'
/// numbering), the history sorted.
pub(crate) fn state_of<T: Placed>(step: u64, rows: &[T], refresh: Vec<bool>, history: Vec<ContactRecord>) -> ParticleState {
    let mut state = ParticleState { step, ..Default::default() };
    for r in rows {
        r.push_to(&mut state);
    }
    state.refresh = refresh;
    state.history = history;
    state.sort_history();
    state
}

/// Records (global ids) restricted to the particles of `local`, in local ids: pair records
/// between two particles it holds, wall records of those it owns.
pub(crate) fn local_records(records: &[ContactRecord], local: &Local) -> Vec<ContactRecord> {
    let mut out = Vec::new();
    for c in records {
        let Some(owner) = local.lid(c.owner) else { continue };
        if c.between_particles() {
            if let Some(partner) = local.lid(c.partner) {
                out.push(ContactRecord { owner, partner, history: c.history });
            }
        } else if local.owned[owner as usize] {
            out.push(ContactRecord { owner, partner: c.partner, history: c.history });
        }
    }
    out
}

/// What a rank holds after `redistribute`: rows and their flags in id order, the records that
/// arrived (global ids) and the local numbering with its exchange lists.
pub(crate) struct Held<T> {
    pub rows: Vec<T>,
    pub flags: Vec<u8>,
    pub records: Vec<ContactRecord>,
    pub local: Local,
}

/// Collective: every row of `owned` (the particles this rank owns, ascending ids, each with a
/// flag) to the rank whose brick holds its centre and to every rank that holds it as a ghost
/// (`Bricks::ghost_for` with `reach`), each of `records` (global ids, owned by a particle of
/// `owned`) with its owner particle. Every particle is owned by exactly one rank before, so
/// each arrives once.
pub(crate) fn redistribute<T: Placed>(ranks: &Ranks, bricks: &Bricks, reach: &Reach, owned: &[T], flags: &[u8], records: &[ContactRecord]) -> Held<T> {
    let (me, size) = (ranks.rank(), ranks.size());
    let mut rows_to: Vec<Vec<T>> = vec![Vec::new(); size];
    let mut flags_to: Vec<Vec<u8>> = vec![Vec::new(); size];
    let mut records_to: Vec<Vec<WireRecord>> = vec![Vec::new(); size];
    let mut dests: Vec<Vec<usize>> = Vec::with_capacity(owned.len());
    for (k, r) in owned.iter().enumerate() {
        let x = r.place();
        let owner = bricks.rank_of(x);
        let mut d = vec![owner];
        d.extend((0..size).filter(|&q| q != owner && bricks.ghost_for(x, r.size(), q, reach)));
        for &q in &d {
            rows_to[q].push(*r);
            flags_to[q].push(flags[k]);
        }
        dests.push(d);
    }
    for c in records {
        let k = owned.binary_search_by_key(&c.owner, |r| r.gid()).expect("a record travels with the particle that owns it");
        for &q in &dests[k] {
            records_to[q].push(WireRecord::of(c));
        }
    }
    let messages = (0..size)
        .map(|q| {
            let mut m = Message::default();
            m.put(&rows_to[q]);
            m.put(&flags_to[q]);
            m.put(&records_to[q]);
            m.0
        })
        .collect();
    let got = ranks.all_to_all(messages);
    let mut held: Vec<(T, u8)> = Vec::new();
    let mut arrived: Vec<ContactRecord> = Vec::new();
    for bytes in &got {
        let mut r = Reader { bytes };
        let rows: Vec<T> = r.take();
        let flags: Vec<u8> = r.take();
        held.extend(rows.into_iter().zip(flags));
        arrived.extend(r.take::<WireRecord>().iter().map(WireRecord::record));
    }
    held.sort_unstable_by_key(|(r, _)| r.gid());
    let owner_of: Vec<usize> = held.iter().map(|(r, _)| bricks.rank_of(r.place())).collect();
    let mut local = Local { gid: held.iter().map(|(r, _)| r.gid()).collect(), owned: owner_of.iter().map(|&o| o == me).collect(), send: vec![Vec::new(); size], recv: vec![Vec::new(); size] };
    for (l, (r, _)) in held.iter().enumerate() {
        if local.owned[l] {
            for q in (0..size).filter(|&q| q != me && bricks.ghost_for(r.place(), r.size(), q, reach)) {
                local.send[q].push(l as u32);
            }
        } else {
            local.recv[owner_of[l]].push(l as u32);
        }
    }
    let (rows, flags) = held.into_iter().unzip();
    Held { rows, flags, records: arrived, local }
}

/// Collective: the reach of the ghosts for the particles `owned` (their fastest over all
/// ranks), the cut planes balanced first where the scene asks.
pub(crate) fn reach_for<T: Placed>(ranks: &Ranks, bricks: &mut Bricks, setup: &Setup, owned: &[T]) -> Reach {
    if setup.balance {
        bricks.balance(ranks, owned.iter().map(Placed::place));
    }
    let speed = owned.iter().map(Placed::speed).fold(0.0, f64::max);
    Reach::of(setup, ranks.max_f64(speed))
}

/// Collective: a flow exchange's `change` (rank 0's; the others pass `None`) applied to the
/// particles of this rank, `rows` (every particle it holds, local id order) with `records`
/// (every record it holds, global ids): as `ExchangeChange::apply_to` changes the whole state
/// (the removed dropped, ids compacted, the survivors that lost a partner refreshed, the new
/// particles appended), then redistributed. Returns this rank's part of the changed state (as
/// `local_state` would cut it from the whole one) and its numbering.
pub(crate) fn apply_change<T: Placed>(ranks: &Ranks, bricks: &mut Bricks, setup: &Setup, local: &Local, rows: &[T], records: &[ContactRecord], change: Option<&ExchangeChange>) -> (ParticleState, Local) {
    let change = share_change(ranks, change);
    let removed = &change.removed;
    let gone = |g: u32| removed.binary_search(&g).is_ok();
    let shift = |g: u32| g - removed.partition_point(|&r| r < g) as u32;
    // a survivor whose partner leaves has its force evaluated again (`ParticleState::retain`)
    let mut refresh: Vec<u32> = Vec::new();
    for c in records.iter().filter(|c| c.between_particles()) {
        if gone(c.owner) && !gone(c.partner) {
            refresh.push(c.partner);
        }
        if gone(c.partner) && !gone(c.owner) {
            refresh.push(c.owner);
        }
    }
    refresh.sort_unstable();
    let n_owned = (0..rows.len()).filter(|&l| local.owned[l]).count() as u64;
    let first_new = (ranks.sum_u64(n_owned) - removed.len() as u64) as u32;
    let mut owned: Vec<T> = Vec::new();
    let mut flags: Vec<u8> = Vec::new();
    for (l, r) in rows.iter().enumerate() {
        let g = r.gid();
        if local.owned[l] && !gone(g) {
            let mut r = *r;
            r.set_gid(shift(g));
            owned.push(r);
            flags.push(refresh.binary_search(&g).is_ok() as u8);
        }
    }
    let me = ranks.rank();
    let a = &change.added;
    for k in (0..a.len()).filter(|&k| bricks.rank_of(DVec3::from(a.position[k])) == me) {
        owned.push(T::added(first_new + k as u32, a, k));
        flags.push(1);
    }
    let is_owned = |g: u32| local.lid(g).is_some_and(|l| local.owned[l as usize]);
    let kept: Vec<ContactRecord> = records
        .iter()
        .filter(|c| is_owned(c.owner) && !gone(c.owner) && !(c.between_particles() && gone(c.partner)))
        .map(|c| ContactRecord { owner: shift(c.owner), partner: if c.between_particles() { shift(c.partner) } else { c.partner }, history: c.history })
        .collect();
    let reach = reach_for(ranks, bricks, setup, &owned);
    let held = redistribute(ranks, bricks, &reach, &owned, &flags, &kept);
    let history = local_records(&held.records, &held.local);
    (state_of(0, &held.rows, held.flags.iter().map(|&f| f != 0).collect(), history), held.local)
}

/// One particle of an exchange view on the wire.
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub(crate) struct ViewRow {
    pub position: [f64; 3],
    pub velocity: [f64; 3],
    pub spin: [f64; 3],
    pub radius: f64,
    pub id: u32,
    pub material: u32,
}

/// Radius and material of one particle (the held mass is summed over every particle).
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub(crate) struct Size {
    pub radius: f64,
    pub id: u32,
    pub material: u32,
}

/// Collective: rank 0's query on every rank.
pub(crate) fn share_query(ranks: &Ranks, query: Option<&ExchangeQuery>) -> ExchangeQuery {
    let mut m = Message::default();
    if let Some(q) = query {
        let boxes: Vec<[f64; 6]> = q.boxes.iter().map(|(lo, hi)| [lo.x, lo.y, lo.z, hi.x, hi.y, hi.z]).collect();
        let outside: Vec<[f64; 6]> = q.outside.iter().map(|(lo, hi)| [lo.x, lo.y, lo.z, hi.x, hi.y, hi.z]).collect();
        m.put(&boxes);
        m.put(&outside);
    }
    ranks.broadcast(&mut m.0);
    let mut r = Reader { bytes: &m.0 };
    let pair = |b: &[f64; 6]| (DVec3::new(b[0], b[1], b[2]), DVec3::new(b[3], b[4], b[5]));
    let boxes: Vec<[f64; 6]> = r.take();
    let outside: Vec<[f64; 6]> = r.take();
    ExchangeQuery { boxes: boxes.iter().map(pair).collect(), outside: outside.first().map(pair) }
}

/// Collective: rank 0's change on every rank.
fn share_change(ranks: &Ranks, change: Option<&ExchangeChange>) -> ExchangeChange {
    let mut m = Message::default();
    if let Some(c) = change {
        let a = &c.added;
        m.put(&c.removed);
        m.put(&a.position);
        m.put(&a.velocity);
        m.put(&a.angular_velocity);
        m.put(&a.radius);
        m.put(&a.material);
    }
    ranks.broadcast(&mut m.0);
    let mut r = Reader { bytes: &m.0 };
    let removed = r.take();
    ExchangeChange { removed, added: Particles { position: r.take(), velocity: r.take(), angular_velocity: r.take(), radius: r.take(), material: r.take() } }
}

/// Collective: the view on rank 0 from every rank's `picked` (owned particles the query wants)
/// and `sizes` (every owned particle), in id order.
pub(crate) fn gather_view(ranks: &Ranks, step: u64, picked: &[ViewRow], sizes: &[Size]) -> Option<ExchangeView> {
    let mut m = Message::default();
    m.put(picked);
    m.put(sizes);
    let all = ranks.gather(&m.0)?;
    let mut rows: Vec<ViewRow> = Vec::new();
    let mut held: Vec<Size> = Vec::new();
    for b in &all {
        let mut r = Reader { bytes: b };
        rows.extend(r.take::<ViewRow>());
        held.extend(r.take::<Size>());
    }
    rows.sort_unstable_by_key(|r| r.id);
    held.sort_unstable_by_key(|s| s.id);
    assert!(held.iter().enumerate().all(|(k, s)| s.id as usize == k), "the ranks' particles are ids 0..n, each once");
    let mut state = ParticleState { step, ..Default::default() };
    for r in &rows {
        state.push(r.position, r.velocity, r.spin, r.radius, r.material);
    }
    Some(ExchangeView { n: held.len(), ids: rows.iter().map(|r| r.id).collect(), state, radius: held.iter().map(|s| s.radius).collect(), material: held.iter().map(|s| s.material).collect() })
}
