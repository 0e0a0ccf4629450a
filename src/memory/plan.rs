//! The memory plan: every tensor at an offset in one arena, greedy by size with best fit
//! (TFLite's `GreedyBySize`, GE's block assigner) over happens-before-aware conflicts.
//!
//! **Conflicts.** Two tensors conflict (must not share bytes) unless one is ordered before the
//! other ([`Lifetimes::ordered`]). They are enumerated by one sweep over the tensors in order
//! of their start (tensors that exist from the start first, then by producer position).
//! For a tensor `b` and any earlier-started `a`, `b` can never be ordered before `a`, so they
//! conflict exactly when `a` is not ordered before `b`: when `a` is used on some stream `s`
//! after the point `b`'s producer has seen of `s`. Keeping, per stream, the swept tensors by
//! their last use on that stream, the conflicts of `b` are the tails of those sets past `b`'s
//! clock; a tensor ordered before `b` never shows up, and a stream whose largest last use the
//! clock has seen is not searched. Cost: O(T·S + T·S'·log T + C·d) time for T tensors, S
//! streams, S' streams per tensor with a use its producer has not seen (few in a graph split
//! into many streams by the task limit), C conflicting pairs and d streams a tensor touches;
//! O(T + C) memory, each pair stored once (under whichever of the two is placed later).
//!
//! **Placement.** Tensors by size (aligned), largest first; each goes to the smallest gap
//! between its already placed conflicting tensors that fits, else past the last of them.
//! O(C log C). The arena is the largest end.

use std::collections::BTreeSet;

use super::lifetime::Lifetimes;
use crate::graph::csr::Csr;

/// Offsets and arena sizes are multiples of GE's memory alignment (`MEM_ALIGN_SIZE`).
pub const ALIGN: u64 = 512;

/// Bytes a tensor takes in the arena.
pub fn aligned(bytes: u64) -> u64 {
    bytes.div_ceil(ALIGN) * ALIGN
}

/// Offsets of every tensor of a [`Lifetimes`], by tensor index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    pub offsets: Vec<u64>,
    /// Arena bytes: the largest aligned end.
    pub peak_bytes: u64,
    /// Conflicting pairs the plan had to keep apart.
    pub conflicts: usize,
}

/// Every conflicting pair `(a, b)` once, with `a` swept before `b`.
pub fn conflicts(l: &Lifetimes) -> Vec<(u32, u32)> {
    let t = &l.tensors;
    let mut sweep: Vec<usize> = (0..t.len()).collect();
    let start = |i: usize| if t.produced[i] { u64::from(t.pos[t.list[i].node]) + 1 } else { 0 };
    sweep.sort_by_key(|&i| (start(i), i));
    let mut by_stream: Vec<BTreeSet<(u32, u32)>> = vec![BTreeSet::new(); l.hb.streams];
    // The largest last use in each stream's set (0: empty; uses count from 1): a stream whose
    // uses the clock has all seen holds no conflict, and is passed over without a search.
    let mut top: Vec<u32> = vec![0; l.hb.streams];
    let mut forever: Vec<u32> = Vec::new();
    let mut swept: Vec<u32> = Vec::new();
    let mut stamp = vec![u32::MAX; t.len()];
    let mut pairs = Vec::new();
    for (k, &b) in sweep.iter().enumerate() {
        let b32 = b as u32;
        let stamp_k = k as u32;
        match l.start_clock(b) {
            // Exists from the start: nothing is ordered before it.
            None => pairs.extend(swept.iter().map(|&a| (a, b32))),
            Some(c) => {
                for &a in &forever {
                    stamp[a as usize] = stamp_k;
                    pairs.push((a, b32));
                }
                let live = top.iter().zip(c.entries()).enumerate().filter(|&(_, (&top, seen))| top > seen);
                for (s, (_, seen)) in live {
                    for &(_, a) in by_stream[s].range((seen + 1, 0)..) {
                        if stamp[a as usize] != stamp_k {
                            stamp[a as usize] = stamp_k;
                            pairs.push((a, b32));
                        }
                    }
                }
            }
        }
        swept.push(b32);
        if t.until_end[b] {
            forever.push(b32);
        } else {
            for &(s, q) in &l.footprint[b] {
                by_stream[s as usize].insert((q, b32));
                top[s as usize] = top[s as usize].max(q);
            }
        }
    }
    pairs
}

/// Greedy by size, best fit.
pub fn place(l: &Lifetimes) -> Placement {
    let t = &l.tensors;
    let n = t.len();
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(aligned(t.list[i].bytes)), t.pos[t.list[i].node], t.list[i].port));
    let mut rank = vec![0u32; n];
    for (r, &i) in order.iter().enumerate() {
        rank[i] = r as u32;
    }
    let pairs = conflicts(l);
    let count = pairs.len();
    // Each pair under its later-placed tensor, by rank.
    let later: Csr<u32, u32> = Csr::group(
        n,
        pairs.iter().map(|&(a, b)| {
            if rank[a as usize] < rank[b as usize] { (rank[b as usize], a) } else { (rank[a as usize], b) }
        }),
    );
    drop(pairs);
    let mut offsets = vec![0u64; n];
    let mut peak = 0u64;
    let mut busy: Vec<(u64, u64)> = Vec::new();
    for (r, &i) in order.iter().enumerate() {
        let size = aligned(t.list[i].bytes);
        busy.clear();
        busy.extend(
            later
                .of(r as u32)
                .iter()
                .map(|&a| (offsets[a as usize], offsets[a as usize] + aligned(t.list[a as usize].bytes))),
        );
        busy.sort_unstable();
        let mut best: Option<(u64, u64)> = None;
        let mut end = 0u64;
        for &(o, e) in &busy {
            if o > end {
                let gap = o - end;
                if gap >= size && best.is_none_or(|(g, _)| gap < g) {
                    best = Some((gap, end));
                }
            }
            end = end.max(e);
        }
        let off = best.map_or(end, |(_, o)| o);
        offsets[i] = off;
        peak = peak.max(off + size);
    }
    Placement { offsets, peak_bytes: peak, conflicts: count }
}
