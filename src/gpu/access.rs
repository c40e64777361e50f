//! How the force pass's SIMD groups touch the slot-history records (issue 34, the coalesced
//! contact pass): a model of the memory accesses, from the list as the device laid it out, that
//! holds on any card with 32-thread SIMD groups (NVIDIA's warps) whatever the adapter it is
//! computed on (`talus bench --profile` prints it, on lavapipe too).
//!
//! `forces` runs a thread per owner; the threads of a SIMD group of `SCHEDULE_LANES` evaluate
//! their m-th slots together. An active contact's record (`split::RecordLayout`: 40 bytes apart
//! with every field, read in five 8-byte loads; 32 for the bench bed's law, two 16-byte loads)
//! is written in as many stores, each one instruction of the group. An
//! instruction costs the L1 one pass per 128-byte line its threads touch, and the memory one
//! 32-byte sector each; so a group reading 32 records of 32 owners' runs, three slots or so
//! apart, touches 32 lines per instruction, and 32 consecutive records (slots placed,
//! `split::SplitLayout::places`) 10.

use super::split::RecordLayout;
use crate::layout::consts::SCHEDULE_LANES;

/// The records' accesses of one force pass, per active contact, and the partner words', per
/// slot.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct RecordAccess {
    /// Active contacts (slots whose active bit is set).
    pub records: u64,
    /// 128-byte lines the SIMD groups' record loads touch, summed over the loads of each
    /// record, per active contact: 5 (full records) where no two threads share a line, 50/32 =
    /// 1.56 where a group's 32 threads read consecutive records (2 and 0.5 for 32-byte ones).
    pub lines_per_record: f64,
    /// 32-byte sectors the same loads touch, per active contact: 2 to 3 scattered, 1.25
    /// consecutive.
    pub sectors_per_record: f64,
    /// The same two with every record at its own slot (the list unplaced), for comparison.
    pub lines_per_record_at_slots: f64,
    pub sectors_per_record_at_slots: f64,
    /// List slots, and the 128-byte lines the groups' partner-word loads touch per slot (4-byte
    /// words; where slots are placed, 8 bytes apart at their places): 1 where no two threads
    /// share a line, 1/16 where a group's 32 threads read consecutive placed words; and with
    /// each word at its own slot (4 bytes apart).
    pub slots: u64,
    pub word_lines_per_slot: f64,
    pub word_lines_per_slot_at_slots: f64,
}

/// The accesses of a force pass whose threads take the particles in `order` (storage indices,
/// thread by thread), particle i owning slots `start[i] .. start[i + 1]`, of which `active`
/// ones hold active contacts, slot k's record at `place(k)` (records laid out as `record`) and
/// its word `word_stride` bytes apart by place.
pub fn record_access(order: &[u32], start: &[u32], active: impl Fn(usize) -> bool, place: impl Fn(usize) -> u64, word_stride: u64, record: RecordLayout) -> RecordAccess {
    let mut out = RecordAccess::default();
    let (mut lines, mut sectors, mut lines_at, mut sectors_at) = (0u64, 0u64, 0u64, 0u64);
    let (mut word_lines, mut word_lines_at) = (0u64, 0u64);
    let mut words: Vec<u64> = Vec::with_capacity(SCHEDULE_LANES as usize);
    let mut words_at: Vec<u64> = Vec::with_capacity(SCHEDULE_LANES as usize);
    let mut placed: Vec<u64> = Vec::with_capacity(SCHEDULE_LANES as usize);
    let mut at_slots: Vec<u64> = Vec::with_capacity(SCHEDULE_LANES as usize);
    for group in order.chunks(SCHEDULE_LANES as usize) {
        let longest = group.iter().map(|&i| start[i as usize + 1] - start[i as usize]).max().unwrap_or(0);
        for m in 0..longest {
            placed.clear();
            at_slots.clear();
            words.clear();
            words_at.clear();
            for &i in group {
                let k = start[i as usize] + m;
                if k < start[i as usize + 1] {
                    words.push(place(k as usize) * word_stride / 128);
                    words_at.push(k as u64 * 4 / 128);
                    if active(k as usize) {
                        placed.push(place(k as usize));
                        at_slots.push(k as u64);
                    }
                }
            }
            out.slots += words.len() as u64;
            for w in [&mut words, &mut words_at] {
                w.sort_unstable();
                w.dedup();
            }
            word_lines += words.len() as u64;
            word_lines_at += words_at.len() as u64;
            out.records += placed.len() as u64;
            let (l, s) = touched(&mut placed, record);
            lines += l;
            sectors += s;
            let (l, s) = touched(&mut at_slots, record);
            lines_at += l;
            sectors_at += s;
        }
    }
    let per = |x: u64| if out.records > 0 { x as f64 / out.records as f64 } else { 0.0 };
    out.lines_per_record = per(lines);
    out.sectors_per_record = per(sectors);
    out.lines_per_record_at_slots = per(lines_at);
    out.sectors_per_record_at_slots = per(sectors_at);
    let per_slot = |x: u64| if out.slots > 0 { x as f64 / out.slots as f64 } else { 0.0 };
    out.word_lines_per_slot = per_slot(word_lines);
    out.word_lines_per_slot_at_slots = per_slot(word_lines_at);
    out
}

/// The 128-byte lines (summed over the record's word loads, each an instruction of the group)
/// and the 32-byte sectors (all of them together) that one group's records at `places`, laid
/// out as `record`, touch.
fn touched(places: &mut [u64], record: RecordLayout) -> (u64, u64) {
    let mut lines = 0;
    let mut all_sectors = Vec::with_capacity(places.len() * record.accesses() as usize);
    places.sort_unstable();
    let stride = record.bytes();
    for w in (0..record.accesses()).map(|a| a * record.access_bytes()) {
        let mut at: Vec<u64> = places.iter().map(|&p| (p * stride + w) / 128).collect();
        at.dedup();
        lines += at.len() as u64;
        all_sectors.extend(places.iter().map(|&p| (p * stride + w) / 32));
    }
    all_sectors.sort_unstable();
    all_sectors.dedup();
    (lines, all_sectors.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn consecutive_records_share_lines_and_scattered_ones_do_not() {
        // 32 owners of 3 slots each, every slot active; a SIMD group takes them all
        let order: Vec<u32> = (0..32).collect();
        let start: Vec<u32> = (0..=32).map(|i| 3 * i).collect();
        // unplaced: thread t's m-th record at 3t + m, 120 bytes apart within a column
        let at_slots = record_access(&order, &start, |_| true, |k| k as u64, 4, RecordLayout::FULL);
        assert_eq!(at_slots.records, 96);
        assert!((at_slots.lines_per_record - 5.0 * 30.0 / 32.0).abs() < 0.2, "{at_slots:?}");
        assert_eq!(at_slots.lines_per_record, at_slots.lines_per_record_at_slots);
        // 32 words 12 bytes apart: 3 lines a column
        assert!((at_slots.word_lines_per_slot - 3.0 / 32.0).abs() < 0.02, "{at_slots:?}");
        // placed column by column: thread t's m-th record at 32m + t
        let placed = record_access(&order, &start, |_| true, |k| (32 * (k % 3) + k / 3) as u64, 8, RecordLayout::FULL);
        // 32 placed words 8 bytes apart: 2 lines a column
        assert!((placed.word_lines_per_slot - 2.0 / 32.0).abs() < 0.01, "{placed:?}");
        assert!((placed.lines_per_record - 50.0 / 32.0).abs() < 0.1, "{placed:?}");
        assert!((placed.sectors_per_record - 1.25).abs() < 0.01, "{placed:?}");
        assert!(placed.sectors_per_record_at_slots >= 2.0, "{placed:?}");
        // inactive slots are not read
        let none = record_access(&order, &start, |_| false, |k| k as u64, 4, RecordLayout::FULL);
        assert_eq!((none.records, none.lines_per_record, none.slots), (0, 0.0, 96));
        // owners 40 slots apart: every thread's word on a line of its own
        let sparse: Vec<u32> = (0..=32).map(|i| 40 * i).collect();
        let apart = record_access(&order, &sparse, |_| true, |k| k as u64, 4, RecordLayout::FULL);
        assert!((apart.word_lines_per_slot - 1.0).abs() < 1e-9, "{apart:?}");
        // 32-byte records (a Hertz-family law with energy booked): two 16-byte loads; 32
        // consecutive ones fill 8 lines a load and 32 sectors
        let lean = RecordLayout::HERTZ_BOOKED;
        let placed = record_access(&order, &start, |_| true, |k| (32 * (k % 3) + k / 3) as u64, 8, lean);
        assert_eq!((placed.lines_per_record, placed.sectors_per_record), (0.5, 1.0), "{placed:?}");
        // scattered, each load a line of its own, but a record one sector (32 bytes, aligned),
        // where a full one spans two
        let scattered = record_access(&order, &sparse, |_| true, |k| k as u64, 4, lean);
        assert_eq!((scattered.lines_per_record, scattered.sectors_per_record), (2.0, 1.0), "{scattered:?}");
        // untracked, 16 bytes: one load
        let untracked = record_access(&order, &sparse, |_| true, |k| k as u64, 4, RecordLayout::HERTZ_UNTRACKED);
        assert_eq!((untracked.lines_per_record, untracked.sectors_per_record), (1.0, 1.0), "{untracked:?}");
        let full = record_access(&order, &sparse, |_| true, |k| k as u64, 4, RecordLayout::FULL);
        assert_eq!((full.lines_per_record, full.sectors_per_record), (5.0, 2.0), "{full:?}");
    }
}
