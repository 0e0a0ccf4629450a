//! Ids of the split's own events. GE gives each event of `AddEventIdWhenStreamSplit` an id of
//! its own after the sync stage's (`event_num_++`, ge-compiler.md §8), and so does the split
//! here, unless those ids would take a policy's plan over its event budget: then an event takes
//! an id whose last wait already comes before its record, the rule of the sync stage's lifetime
//! reuse (`ReuseEventsByLifetime`, docs/policies.md "The split's events").
//!
//! Why one logical stream's order is enough to prove it: the split keeps every logical
//! stream's order (each cut is ordered by its own event, or by syncs that already order its two
//! sides, [`super::plan`]), so a wait before the entry at position q of a logical stream happens
//! before a record after any entry at position x ≥ q of the same stream, whatever pieces the
//! two land on. An event records after the last entry of one piece and waits before the first
//! of the next, so the events of one stream follow each other, and an event may also take a
//! sync id whose every pair is over by then: one whose last pair waits on that stream at or
//! before the event's record.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};

use super::Entry;
use crate::compile::allocation::{Allocation, SyncEnd};
use crate::compile::sync::reuse::dims_branches;
use crate::graph::{EventId, IdVec, Model, NodeId, SyncKind};

/// One planned event of the split: its logical stream and the positions, among that stream's
/// entries, of the entry it records after and of the entry it waits before.
#[derive(Clone, Copy, Debug)]
pub(super) struct PlannedEvent {
    pub stream: usize,
    pub from: usize,
    pub to: usize,
}

/// The ids of `planned` (in the split's numbering order), from `first` on: each its own, or,
/// with `reuse`, by lifetime on its stream ([`freed_sync_ids`] for the sync ids it may take).
/// Returns the ids and whether any is shared.
pub(super) fn split_event_ids(
    model: &Model,
    alloc: &Allocation,
    streams: &[Vec<Entry>],
    planned: &[PlannedEvent],
    first: u32,
    reuse: bool,
) -> (Vec<EventId>, bool) {
    if !reuse {
        return ((0..planned.len() as u32).map(|k| EventId(first + k)).collect(), false);
    }
    let wanted: BTreeSet<usize> = planned.iter().map(|e| e.stream).collect();
    let mut free = freed_sync_ids(model, alloc, streams, &wanted);
    // Per stream, ids whose last wait is reached (the smallest first) and those still ahead.
    let mut ready: BTreeMap<usize, BTreeSet<u32>> = BTreeMap::new();
    let mut next = first;
    let mut shared = false;
    let ids = planned
        .iter()
        .map(|e| {
            let ahead = free.entry(e.stream).or_default();
            let here = ready.entry(e.stream).or_default();
            while let Some(&Reverse((q, id))) = ahead.peek() {
                if q > e.from {
                    break;
                }
                ahead.pop();
                here.insert(id);
            }
            let id = match here.pop_first() {
                Some(id) => {
                    shared = true;
                    id
                }
                None => {
                    next += 1;
                    next - 1
                }
            };
            ahead.push(Reverse((e.to, id)));
            EventId(id)
        })
        .collect();
    (ids, shared)
}

/// Ids waiting for reuse on one stream, keyed by the position of their last wait there.
type Freed = BinaryHeap<Reverse<(usize, u32)>>;

/// The sync stage's ids (event mode) that a split event may take, by the logical stream of the
/// `streams` in `wanted` their last pair waits on, keyed by that wait's entry. An id qualifies
/// when its pairs run forward in the execution order and follow each other (one pair, or ids
/// the sync stage numbered by lifetime); none does in notify mode (the split's events are
/// events, the syncs notifies), or where ids are shared by other rules (a multi-batch Case's
/// branches, `_event_multiplexing`).
fn freed_sync_ids(
    model: &Model,
    alloc: &Allocation,
    streams: &[Vec<Entry>],
    wanted: &BTreeSet<usize>,
) -> BTreeMap<usize, Freed> {
    let mut out: BTreeMap<usize, Freed> = BTreeMap::new();
    if alloc.sync_kind != SyncKind::Event
        || alloc.syncs.is_empty()
        || dims_branches(model).is_some()
        || model.nodes.iter().any(|n| !n.attrs.event_multiplexing.is_empty())
    {
        return out;
    }
    let mut rank: IdVec<NodeId, u32> = IdVec::filled(model.nodes.len(), 0);
    for (i, &n) in alloc.order(model).iter().enumerate() {
        rank[n] = i as u32;
    }
    // Per id: its pairs, whether all run forward, and its last pair (the latest record).
    let ids = alloc.sync_count() as usize;
    let mut pairs = vec![0u32; ids];
    let mut forward = vec![true; ids];
    let mut last: Vec<Option<(u32, SyncEnd)>> = vec![None; ids];
    for p in &alloc.syncs {
        let (id, from) = (p.id.index(), rank[p.from.node]);
        pairs[id] += 1;
        forward[id] &= from < rank[p.to.node];
        if last[id].is_none_or(|(r, _)| from > r) {
            last[id] = Some((from, p.to));
        }
    }
    // The entry of each last wait, on the streams the split's events need.
    let mut at: BTreeMap<SyncEnd, Vec<u32>> = BTreeMap::new();
    for (id, l) in last.iter().enumerate() {
        let Some((_, to)) = *l else { continue };
        let Some(stream) = to.attached.or(alloc.logical_stream[to.node]) else { continue };
        if forward[id] && (pairs[id] == 1 || alloc.lifetime_ids) && wanted.contains(&stream.index()) {
            at.entry(to).or_default().push(id as u32);
        }
    }
    for &s in wanted.iter() {
        for (p, e) in streams[s].iter().enumerate().filter(|(_, e)| e.inserted().is_none()) {
            if let Some(list) = at.get(&e.end()) {
                out.entry(s).or_default().extend(list.iter().map(|&id| Reverse((p, id))));
            }
        }
    }
    out
}
