//! GE: `RefreshContinuousEvents` / `RefreshContinuousNotifies` (ge-compiler.md §6.4). The
//! runtime wants ids `0..n-1`; GE numbers them by first appearance in the send lists, walking
//! nodes in execution order, main syncs first and attached-stream syncs after.

use std::collections::HashMap;

use super::{RawSync, SyncState};

const NONE: u32 = u32::MAX;

/// Kept syncs in GE's send-list walk: by the sender's execution position, then insertion order.
/// Insertion walks senders in execution order, so this is usually insertion order itself, which
/// one pass confirms (`None`); otherwise a stable counting sort by position.
pub(super) fn send_order(st: &SyncState<'_>) -> Option<Vec<u32>> {
    let mut last = 0u32;
    for s in st.syncs.iter().filter(|s| s.alive) {
        let p = st.pos[s.from.node];
        if p < last {
            return Some(send_order_sorted(st));
        }
        last = p;
    }
    None
}

/// [`send_order`] when insertion order is not it: a stable counting sort by position.
fn send_order_sorted(st: &SyncState<'_>) -> Vec<u32> {
    let mut end = vec![0u32; st.order.len()];
    let mut alive = 0usize;
    for s in st.syncs.iter().filter(|s| s.alive) {
        end[st.pos[s.from.node] as usize] += 1;
        alive += 1;
    }
    let mut sum = 0u32;
    for e in end.iter_mut() {
        sum += *e;
        *e = sum;
    }
    let mut out = vec![0u32; alive];
    for (r, s) in st.syncs.iter().enumerate().rev().filter(|(_, s)| s.alive) {
        let slot = &mut end[st.pos[s.from.node] as usize];
        *slot -= 1;
        out[*slot as usize] = r as u32;
    }
    out
}

/// Old id → new id. Ids stay below the number of syncs except after `_event_multiplexing`,
/// whose declared ids may be anything: those go through a hash map (lookups only, never
/// iterated).
enum IdMap {
    Dense(Vec<u32>),
    Sparse(HashMap<u32, u32>),
}

impl IdMap {
    /// A map for ids up to about `syncs` (grown on demand).
    fn new(syncs: usize) -> Self {
        IdMap::Dense(vec![NONE; syncs])
    }

    /// The id mapped to `old`, taking `*next` (and advancing it) on first sight.
    #[inline]
    fn get(&mut self, old: u32, next: &mut u32) -> u32 {
        if let IdMap::Dense(v) = self {
            if old as usize >= v.len() {
                self.grow(old);
            }
        }
        let slot = match self {
            IdMap::Dense(v) => &mut v[old as usize],
            IdMap::Sparse(m) => m.entry(old).or_insert(NONE),
        };
        if *slot == NONE {
            *slot = *next;
            *next += 1;
        }
        *slot
    }

    /// Makes room for `old`: a dense map doubles, unless the id is far beyond the ids in use.
    #[cold]
    fn grow(&mut self, old: u32) {
        let IdMap::Dense(v) = self else { return };
        if old as usize > 4 * v.len() + 1024 {
            let m = v.iter().enumerate().filter(|(_, x)| **x != NONE).map(|(i, &x)| (i as u32, x)).collect();
            *self = IdMap::Sparse(m);
        } else {
            v.resize((old as usize + 1).max(2 * v.len()), NONE);
        }
    }
}

/// Renumbers the kept syncs by first appearance in send order, pairs that shared an id keeping
/// it shared: main syncs from 0 (when `main`), attached-stream syncs from `attached_base`, or
/// right after the main ids when `None`. Returns the next free id.
fn renumber(st: &mut SyncState<'_>, main: bool, attached_base: Option<u32>) -> u32 {
    let order = send_order(st);
    let len = st.syncs.len();
    let mut main_map = if main { Some(IdMap::new(len)) } else { None };
    let mut att_map: Option<IdMap> = None;
    let (mut next_main, mut next_att) = (0u32, 0u32);
    let mut visit = |s: &mut RawSync| {
        if s.attached_phase {
            // Built on first use: most graphs have no attached-stream syncs.
            let map = att_map.get_or_insert_with(|| IdMap::new(len));
            s.id = map.get(s.id, &mut next_att);
        } else if let Some(map) = main_map.as_mut() {
            s.id = map.get(s.id, &mut next_main);
        }
    };
    match &order {
        Some(order) => order.iter().for_each(|&r| visit(&mut st.syncs[r as usize])),
        None => st.syncs.iter_mut().filter(|s| s.alive).for_each(visit),
    }
    let any_attached = att_map.is_some();
    let base = attached_base.unwrap_or(next_main);
    if any_attached && base != 0 {
        for s in st.syncs.iter_mut().filter(|s| s.alive && s.attached_phase) {
            s.id += base;
        }
    }
    base + next_att
}

/// Renumbers every kept sync densely: main syncs from 0, attached-stream syncs after them.
/// Returns the number of distinct ids.
pub fn refresh_continuous_events(st: &mut SyncState<'_>) -> u32 {
    renumber(st, true, None)
}

/// Numbers only the attached-stream syncs, after `main_count` main ids that are already final
/// (GE numbers the attached maps after the multi-dims reuse of the main ones).
pub fn refresh_continuous_events_keep_main(st: &mut SyncState<'_>, main_count: u32) -> u32 {
    renumber(st, false, Some(main_count))
}

/// Number of distinct ids in use.
pub fn distinct_ids(st: &SyncState<'_>) -> u32 {
    let mut seen = IdMap::new(st.syncs.len());
    let mut n = 0u32;
    for (_, s) in st.alive() {
        seen.get(s.id, &mut n);
    }
    n
}
