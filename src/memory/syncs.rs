//! Syncs added for memory: record/wait pairs that let the memory plan reuse bytes across
//! streams (docs/memory.md, "Syncs added for memory").
//!
//! On several streams a tensor's bytes can be reused only once every use of it *happens
//! before* the reusing producer ([`Lifetimes::ordered`]); a tensor read on a side stream stays
//! reserved until a sync proves the read done, even when the simulated schedule finished it
//! long before. PyTorch answers the same question at run time with `record_stream` (the
//! caching allocator holds a block until an event recorded on every using stream has
//! completed, `c10/cuda/CUDACachingAllocator.cpp`), and torch_npu's `MULTI_STREAM_MEMORY_REUSE`
//! modes choose between holding the block and waiting for the other stream. Here the choice
//! is made at compile time, and the wait is an ordinary sync in the allocation: a record after
//! a tensor's last use on its stream and a wait before a later producer on another stream,
//! which both checkers see like any other.
//!
//! **Choice.** One sweep over the tensors in order of their start, as the plan's conflict
//! sweep ([`super::plan::conflicts`]): at each producer `p` the bytes still reserved are the
//! earlier tensors not ordered before `p`'s tensor, under the allocation's syncs plus the ones
//! chosen so far (carried along `p`'s stream, since everything after `p` on its stream sees
//! what `p` saw). Where reserved bytes plus the new tensor exceed `target`, tensors whose every
//! use comes before `p` in the execution order are freed, the earliest finished in the
//! simulated schedule first (a wait on a use long done costs only its latency), until the bytes
//! fit; each stream holding a use not yet seen gets one pair from its latest such use to `p`.
//! A pair always goes forward in the execution order, so the order stays a topological order
//! of the graph and its syncs, and the allocation stays acyclic. The sync stage reduces the
//! pairs with its own (one implied by others is dropped) and numbers them.
//!
//! Cost: the sweep's, O(T·S·log T + C·d) as [`super::plan::conflicts`], plus sorting the
//! candidates at each producer over the target.

use std::collections::BTreeSet;

use super::lifetime::Lifetimes;
use super::plan::aligned;
use crate::compile::Allocation;
use crate::graph::{Model, NodeId};
use crate::simulate::SimResult;

/// What one sweep chose: the pairs, and the most bytes reserved at a producer after them
/// (the sweep's estimate of the arena; the plan's placement may need more).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Chosen {
    /// `(recording node, waiting node)`, in execution order of the waiting node.
    pub pairs: Vec<(NodeId, NodeId)>,
    pub reserved: u64,
    /// The most bytes of tensors live at a producer that no sync can free: those with a use at
    /// or after it in the execution order (or until the end), with its own. They are live
    /// together in this order whatever the syncs, so every plan of this order and these
    /// streams needs at least this arena.
    pub floor: u64,
}

/// Per tensor, what freeing it asks: the last execution position of a use, and when its uses
/// finished in the simulated schedule.
struct Uses {
    last_pos: Vec<u32>,
    done_us: Vec<f64>,
}

impl Uses {
    fn of(l: &Lifetimes, sim: &SimResult) -> Uses {
        let t = &l.tensors;
        let mut last_pos = vec![0u32; t.len()];
        let mut done_us = vec![0f64; t.len()];
        for i in 0..t.len() {
            let producer = t.produced[i].then_some(t.list[i].node);
            for u in t.readers[i].iter().copied().chain(producer) {
                last_pos[i] = last_pos[i].max(t.pos[u]);
                if let Some((_, f)) = sim.span[u] {
                    done_us[i] = done_us[i].max(f);
                }
            }
        }
        Uses { last_pos, done_us }
    }
}

/// Chooses pairs so that the bytes reserved at every producer of `alloc` (under its syncs,
/// `sim` its simulated schedule) come under `target` where freeing earlier tensors can bring
/// them there.
pub fn choose(model: &Model, alloc: &Allocation, sim: &SimResult, latency_us: f64, target: u64) -> Chosen {
    let l = Lifetimes::of(model, alloc);
    let streams = l.hb.streams;
    // The node at each (stream, seq).
    let mut at_seq: Vec<Vec<NodeId>> = vec![Vec::new(); streams];
    for &n in alloc.order(model).iter() {
        if let Some((s, _)) = l.hb.at[n] {
            at_seq[s as usize].push(n);
        }
    }
    let uses = Uses::of(&l, sim);
    let mut c =
        Choice { l: &l, uses, sim, latency_us, at_seq, extra: vec![0; streams * streams], out: Chosen::default() };
    c.sweep(target);
    c.out
}

/// The sweep's state.
struct Choice<'a> {
    l: &'a Lifetimes,
    uses: Uses,
    sim: &'a SimResult,
    latency_us: f64,
    at_seq: Vec<Vec<NodeId>>,
    /// `extra[t * streams + s]`: what stream `t` has seen of stream `s` through the pairs
    /// chosen so far.
    extra: Vec<u32>,
    out: Chosen,
}

impl Choice<'_> {
    fn sweep(&mut self, target: u64) {
        let (l, streams) = (self.l, self.l.hb.streams);
        let t = &l.tensors;
        let mut sweep: Vec<usize> = (0..t.len()).collect();
        let start = |i: usize| if t.produced[i] { u64::from(t.pos[t.list[i].node]) + 1 } else { 0 };
        sweep.sort_by_key(|&i| (start(i), i));
        let mut by_stream: Vec<BTreeSet<(u32, u32)>> = vec![BTreeSet::new(); streams];
        let mut forever: Vec<u32> = Vec::new();
        let mut stamp = vec![u32::MAX; t.len()];
        let mut eff = vec![0u32; streams];
        let mut live: Vec<u32> = Vec::new();
        for (k, &b) in sweep.iter().enumerate() {
            if let (Some(c), Some((own, _))) = (l.start_clock(b), l.hb.at[t.list[b].node]) {
                let own = own as usize;
                for (s, e) in eff.iter_mut().enumerate() {
                    *e = c.get(s).max(if s == own { 0 } else { self.extra[own * streams + s] });
                }
                live.clear();
                live.extend(forever.iter().copied());
                for (s, set) in by_stream.iter().enumerate() {
                    for &(_, a) in set.range((eff[s] + 1, 0)..) {
                        if stamp[a as usize] != k as u32 {
                            stamp[a as usize] = k as u32;
                            live.push(a);
                        }
                    }
                }
                let mine = aligned(t.list[b].bytes);
                let reserved: u64 = live.iter().map(|&a| aligned(t.list[a as usize].bytes)).sum::<u64>() + mine;
                let p = t.pos[t.list[b].node];
                let fixed = live
                    .iter()
                    .map(|&a| a as usize)
                    .filter(|&a| t.until_end[a] || self.uses.last_pos[a] >= p)
                    .map(|a| aligned(t.list[a].bytes))
                    .sum::<u64>();
                self.out.floor = self.out.floor.max(fixed + mine);
                let freed = if reserved > target { self.free(b, own, &eff, &live, reserved - target) } else { 0 };
                self.out.reserved = self.out.reserved.max(reserved - freed);
            }
            if t.until_end[b] {
                forever.push(b as u32);
            } else {
                for &(s, q) in &l.footprint[b] {
                    by_stream[s as usize].insert((q, b as u32));
                }
            }
        }
    }

    /// Frees at least `over` bytes of `live` for tensor `b`'s producer (on stream `own`,
    /// having seen `eff` of each stream) where tensors used before it allow, the earliest
    /// finished first; returns the bytes freed.
    fn free(&mut self, b: usize, own: usize, eff: &[u32], live: &[u32], over: u64) -> u64 {
        let (l, uses) = (self.l, &self.uses);
        let t = &l.tensors;
        let p = t.list[b].node;
        let mut cands: Vec<usize> =
            live.iter().map(|&a| a as usize).filter(|&a| !t.until_end[a] && uses.last_pos[a] < t.pos[p]).collect();
        cands.sort_by(|&x, &y| uses.done_us[x].total_cmp(&uses.done_us[y]).then(x.cmp(&y)));
        let mut want = eff.to_vec();
        let mut freed = 0u64;
        for a in cands {
            if freed >= over {
                break;
            }
            freed += aligned(t.list[a].bytes);
            for &(s, q) in &l.footprint[a] {
                let s = s as usize;
                want[s] = want[s].max(q);
            }
        }
        let streams = l.hb.streams;
        for (s, (&w, &e)) in want.iter().zip(eff).enumerate() {
            if w > e && s != own {
                let q = w.max(self.free_reach(s, p));
                self.out.pairs.push((self.at_seq[s][q as usize - 1], p));
                self.extra[own * streams + s] = q;
            }
        }
        freed
    }

    /// How far a wait of `p` on stream `s` can reach at no cost in the simulated schedule: the
    /// last node of `s` that comes before `p` in the execution order and whose record arrives
    /// before `p` starts (a node count; 0 for none). Waiting on it rather than on the use the
    /// tensor needs shows `p`'s stream more of `s`, so later producers need fewer pairs.
    fn free_reach(&self, s: usize, p: NodeId) -> u32 {
        let (t, nodes) = (&self.l.tensors, &self.at_seq[s]);
        let Some((start, _)) = self.sim.span[p] else { return 0 };
        let before = nodes.partition_point(|&n| t.pos[n] < t.pos[p]);
        let arrived =
            nodes[..before].partition_point(|&n| self.sim.span[n].is_some_and(|(_, f)| f + self.latency_us <= start));
        arrived as u32
    }
}
