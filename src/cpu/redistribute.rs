//! Moving particles between the ranks of a decomposed run (CPU or GPU, `cpu::decomposed`,
//! `gpu::decomposed`) without gathering them: `redistribute` sends each owned particle to the
//! rank that owns its place and to the ranks that hold it as a ghost, with the contact records
//! it owns (one all-to-all); the flow exchange (`Backend::exchange_view`, `apply_exchange`)
//! gathers on rank 0 only the particles near its outlets and insertion regions (`view`), and
//! every rank applies the change to what it owns (`apply_change`): outlets remove on the owning
//! rank, ids are compacted as one process compacts them, and the new particles go to their
//! owners. The brick (`Bricks`), the local numbering (`Local`) and the wire forms live here too.

use bytemuck::{Pod, Zeroable};
use glam::DVec3;

use crate::contact::history::{history_of, history_row, HISTORY_VALUES};
use crate::error::{Result, TalusError};
use crate::model::exchange::{ExchangeChange, ExchangeQuery, ExchangeView};
use crate::model::state::{ContactRecord, ParticleState};
use crate::ranks::Ranks;
use crate::setup::{Particles, Setup};

/// The brick of subdomains: `dims` bricks per axis, cut at `cuts[a]` (the inner cut planes,
/// increasing). The outer faces of the bricks at the ends of a non-periodic axis reach to
/// infinity, so every particle has an owner.
#[derive(Clone, Debug)]
pub struct Bricks {
    pub dims: [usize; 3],
    cuts: [Vec<f64>; 3],
    min: DVec3,
    max: DVec3,
    periodic: [bool; 3],
    period: DVec3,
}

impl Bricks {
    /// The brick for `ranks` ranks: the scene's `decomposition.bricks` when given (its product
    /// must be the rank count), else the factorisation px·py·pz = ranks with the least cut area
    /// over the domain (ties: more cuts along x first). Cut planes are evenly spaced.
    pub fn new(setup: &Setup, ranks: usize) -> Result<Bricks> {
        let (min, max) = (DVec3::from(setup.domain.min), DVec3::from(setup.domain.max));
        let extent = max - min;
        let dims = match setup.bricks {
            Some(d) => {
                let d = d.map(|x| x as usize);
                if d.iter().product::<usize>() != ranks {
                    return Err(TalusError::Scene {
                        file: setup.source.clone(),
                        key: "decomposition.bricks".into(),
                        message: format!("[{}, {}, {}] makes {} bricks; the run has {ranks} MPI ranks (one brick per rank)", d[0], d[1], d[2], d.iter().product::<usize>()),
                    });
                }
                d
            }
            None => {
                let mut best: Option<(f64, [usize; 3])> = None;
                for px in (1..=ranks).filter(|p| ranks.is_multiple_of(*p)) {
                    for py in (1..=ranks / px).filter(|p| (ranks / px).is_multiple_of(*p)) {
                        let d = [px, py, ranks / px / py];
                        let area = (d[0] - 1) as f64 * extent.y * extent.z + (d[1] - 1) as f64 * extent.x * extent.z + (d[2] - 1) as f64 * extent.x * extent.y;
                        if best.is_none_or(|(a, _)| area < a) {
                            best = Some((area, d));
                        }
                    }
                }
                best.map(|(_, d)| d).unwrap_or([1, 1, 1])
            }
        };
        let cuts = std::array::from_fn(|a| (1..dims[a]).map(|k| min[a] + extent[a] * k as f64 / dims[a] as f64).collect());
        Ok(Bricks { dims, cuts, min, max, periodic: setup.periodic, period: setup.period() })
    }

    /// Bins of the histogram along an axis that `balance` places the cut planes by.
    const BALANCE_BINS: usize = 512;

    /// Move the cut planes so that each slab of bricks along each axis holds an equal share of
    /// the particles (`Setup::balance`; LAMMPS `balance shift`, one pass): every rank bins the
    /// centres it owns along each cut axis, the histograms are summed over the ranks, and each
    /// plane goes to its quantile, interpolated within its bin and kept at least a bin from the
    /// next. Every rank computes the same planes from the same sums. Where a particle is owned
    /// changes nothing in the results, only how the work is shared.
    pub(crate) fn balance(&mut self, ranks: &Ranks, centres: impl Iterator<Item = DVec3> + Clone) {
        let cut_axes: Vec<usize> = (0..3).filter(|&a| self.dims[a] > 1).collect();
        if cut_axes.is_empty() {
            return;
        }
        let bins = Self::BALANCE_BINS;
        let mut counts = vec![0u64; bins * cut_axes.len()];
        for (k, &a) in cut_axes.iter().enumerate() {
            let (lo, width) = (self.min[a], (self.max[a] - self.min[a]) / bins as f64);
            for x in centres.clone() {
                let mut y = x[a];
                if self.periodic[a] {
                    y -= self.period[a] * ((y - self.min[a]) / self.period[a]).floor();
                }
                let b = (((y - lo) / width).floor().max(0.0) as usize).min(bins - 1);
                counts[k * bins + b] += 1;
            }
        }
        let counts = ranks.sum_u64s(&counts);
        for (k, &a) in cut_axes.iter().enumerate() {
            let h = &counts[k * bins..(k + 1) * bins];
            let total: u64 = h.iter().sum();
            if total == 0 {
                continue;
            }
            let (lo, width) = (self.min[a], (self.max[a] - self.min[a]) / bins as f64);
            let n = self.dims[a];
            let mut cuts = Vec::with_capacity(n - 1);
            let (mut below, mut b) = (0u64, 0usize);
            for c in 1..n {
                let target = total as f64 * c as f64 / n as f64;
                while b < bins && (below + h[b]) as f64 <= target {
                    below += h[b];
                    b += 1;
                }
                let within = if b < bins && h[b] > 0 { (target - below as f64) / h[b] as f64 } else { 0.0 };
                let floor = cuts.last().map_or(lo + width, |&p: &f64| p + width);
                let ceiling = self.max[a] - (n - c) as f64 * width;
                cuts.push((lo + (b as f64 + within) * width).clamp(floor, ceiling));
            }
            self.cuts[a] = cuts;
        }
    }

    pub fn count(&self) -> usize {
        self.dims.iter().product()
    }

    /// The rank whose brick holds centre `x` (on periodic axes taken into [min, max) first).
    pub fn rank_of(&self, x: DVec3) -> usize {
        let c: [usize; 3] = std::array::from_fn(|a| {
            let mut y = x[a];
            if self.periodic[a] {
                y -= self.period[a] * ((y - self.min[a]) / self.period[a]).floor();
            }
            self.cuts[a].partition_point(|&cut| cut <= y)
        });
        c[0] + self.dims[0] * (c[1] + self.dims[1] * c[2])
    }

    /// Corners of brick `r` (±∞ on the outer faces of non-periodic axes).
    fn bounds(&self, r: usize) -> (DVec3, DVec3) {
        let c = [r % self.dims[0], (r / self.dims[0]) % self.dims[1], r / (self.dims[0] * self.dims[1])];
        let (mut lo, mut hi) = (DVec3::ZERO, DVec3::ZERO);
        for a in 0..3 {
            let open = !self.periodic[a];
            lo[a] = if c[a] == 0 { if open { f64::NEG_INFINITY } else { self.min[a] } } else { self.cuts[a][c[a] - 1] };
            hi[a] = if c[a] + 1 == self.dims[a] { if open { f64::INFINITY } else { self.max[a] } } else { self.cuts[a][c[a]] };
        }
        (lo, hi)
    }

    /// Squared distance from `x` to brick `r` (on periodic axes, from the nearest image).
    fn distance2(&self, x: DVec3, r: usize) -> f64 {
        let (lo, hi) = self.bounds(r);
        let mut d2 = 0.0;
        for a in 0..3 {
            let gap = |y: f64| if y < lo[a] { lo[a] - y } else if y > hi[a] { y - hi[a] } else { 0.0 };
            let d = if self.periodic[a] { gap(x[a]).min(gap(x[a] - self.period[a])).min(gap(x[a] + self.period[a])) } else { gap(x[a]) };
            d2 += d * d;
        }
        d2
    }

    /// Whether a particle at `x` of radius `r`, owned by another rank, is a ghost of rank
    /// `rank`: within `r + r_max + margin` of its brick.
    pub(crate) fn ghost_for(&self, x: DVec3, r: f64, rank: usize, reach: &Reach) -> bool {
        let cut = r + reach.r_max + reach.margin;
        self.distance2(x, rank) <= cut * cut
    }
}

/// How far a rank's list can reach: the largest radius and the list's margin (largest gap +
/// skin + 2 × the longest step, over all ranks).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Reach {
    r_max: f64,
    margin: f64,
}

impl Reach {
    pub(crate) fn of(setup: &Setup, max_speed: f64) -> Reach {
        Reach { r_max: setup.max_radius(), margin: setup.max_reach_gap() + setup.skin() + 2.0 * max_speed * setup.dt }
    }
}


/// A contact record on the wire (owner id, partner id or wall key, history values).
#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
pub(crate) struct WireRecord {
    owner: u32,
    partner: u32,
    values: [f64; HISTORY_VALUES],
}

impl WireRecord {
    pub(crate) fn of(c: &ContactRecord) -> WireRecord {
        WireRecord { owner: c.owner, partner: c.partner, values: history_row(&c.history) }
    }
    pub(crate) fn record(&self) -> ContactRecord {
        ContactRecord { owner: self.owner, partner: self.partner, history: history_of(&self.values) }
    }
}

/// Byte messages of several typed sections.
#[derive(Default)]
pub(crate) struct Message(pub(crate) Vec<u8>);

impl Message {
    pub(crate) fn put<T: Pod>(&mut self, v: &[T]) {
        let bytes: &[u8] = bytemuck::cast_slice(v);
        self.0.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        self.0.extend_from_slice(bytes);
    }
}

pub(crate) struct Reader<'a> {
    pub(crate) bytes: &'a [u8],
}

impl Reader<'_> {
    pub(crate) fn take<T: Pod>(&mut self) -> Vec<T> {
        let len = u64::from_le_bytes(self.bytes[..8].try_into().expect("a section length")) as usize;
        let v = bytemuck::pod_collect_to_vec(&self.bytes[8..8 + len]);
        self.bytes = &self.bytes[8 + len..];
        v
    }
}

/// Which particles a rank holds and which it exchanges every step.
#[derive(Clone, Debug, Default)]
pub(crate) struct Local {
    /// Global id of each local id (increasing).
    pub(crate) gid: Vec<u32>,
    /// Whether each local id is owned here (else a ghost).
    pub(crate) owned: Vec<bool>,
    /// Per rank: the local ids of owned particles that are ghosts there, in global id order.
    pub(crate) send: Vec<Vec<u32>>,
    /// Per rank: the local ids of the ghosts it owns, in the order it sends them.
    pub(crate) recv: Vec<Vec<u32>>,
}

impl Local {
    pub(crate) fn lid(&self, gid: u32) -> Option<u32> {
        self.gid.binary_search(&gid).ok().map(|k| k as u32)
    }
}


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
    ExchangeChange { removed, added: Particles { position: r.take(), velocity: r.take(), angular_velocity: r.take(), radius: r.take(), material: r.take() }, ..Default::default() }
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
    Some(ExchangeView { n: held.len(), ids: rows.iter().map(|r| r.id).collect(), state, radius: held.iter().map(|s| s.radius).collect(), material: held.iter().map(|s| s.material).collect(), ..Default::default() })
}
