//! The execution order: which of a stream's nodes runs first (issue 15).
//!
//! Allocation JSON lists the nodes in execution order, and each stream runs its nodes in that
//! order. GE's order is `GetAllNodes`, the model's declaration-based topological order, which
//! can put a short branch ahead of the critical path on a shared stream: the stream then
//! serialises work a dynamic runtime would overlap. Outside `compat=ge` the order is chosen
//! with the stream assignment, by a list schedule of the assignment on the device model of
//! [`crate::simulate`]: every stream is an in-order queue that starts, whenever it is idle,
//! the ready node of its own with the highest bottom level (the longest `cost_us` path from
//! the node to an exit, its own cost included; nodes with no device task cost nothing), ties
//! by declaration order; a node is ready when all its predecessors (data and control edges)
//! have finished, plus the wait latency for a predecessor on another stream, and it starts
//! when the device has the units it holds; nodes on no stream run, in no time, as soon as they
//! are ready. Each stream's nodes are listed in the order the schedule starts them; the streams
//! are then interleaved as close to GE's order as the edges allow, so where the schedule keeps
//! a stream's GE sequence nothing about that stream changes, and where it keeps them all the
//! order is GE's own.
//!
//! Each graph of a model is ordered on its own (its edges only) and the graphs are stitched
//! as [`Model::all_nodes`] stitches them: a node's subgraphs' nodes right after the node.
//! O((V + E) log V).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::schedule::{UNITS, WAIT_LATENCY_US, fill_bottom_levels, node_cost as cost, node_units};
use crate::graph::csr::Csr;
use crate::graph::{GraphId, IdVec, Model, NodeId, StreamId};

/// Units a node holds while it runs.
fn units(model: &Model, n: NodeId) -> u32 {
    node_units(model, n, UNITS)
}

/// The execution order of `model` under the main-stream assignment `stream`: the list
/// schedule described in the module documentation, every graph on its own. A graph none of
/// whose nodes has a cost keeps GE's order (there is no critical path to run first). `None`
/// when the result is GE's order, [`Model::all_nodes`].
pub fn critical_path_first(model: &Model, stream: &IdVec<NodeId, Option<StreamId>>) -> Option<Vec<NodeId>> {
    critical_path_first_with(model, stream, &OrderFacts::of(model))
}

/// [`critical_path_first`] from the model's [`OrderFacts`], computed once by a caller that
/// orders many assignments of one model (`auto`'s candidates, the improvement pass's trials).
pub fn critical_path_first_with(
    model: &Model,
    stream: &IdVec<NodeId, Option<StreamId>>,
    facts: &OrderFacts,
) -> Option<Vec<NodeId>> {
    if !facts.costly {
        return None;
    }
    let mut sched = Scheduler::new(model, stream, facts);
    let mut per_graph: IdVec<GraphId, Vec<NodeId>> = IdVec::filled(model.graphs.len(), Vec::new());
    let mut changed = false;
    for g in model.graphs.ids() {
        let nodes = &model.graphs[g].order;
        if !facts.graph_costly[g] {
            per_graph[g] = nodes.clone();
            continue;
        }
        let started = sched.graph(g);
        per_graph[g] = sched.interleave(&started);
        changed |= per_graph[g] != *nodes;
    }
    changed.then(|| stitch(model, &per_graph))
}

/// What the list schedule reads of a model whatever its streams: every graph's edges as
/// successor lists of node ids, and each node's duration, units and place in the ready order.
/// On a graph whose edges reach far back, a walk through the model's edge table is a cache
/// miss per edge; these lists are read in place, and a node's own figures sit in one
/// [`Slot`] beside its schedule state.
#[derive(Clone, Debug)]
pub struct OrderFacts {
    /// Successors of every node within its own graph, one entry per edge, in edge order.
    succ: Csr<NodeId, NodeId>,
    /// Predecessors of every node within its own graph, counted by edge.
    pred_count: IdVec<NodeId, u32>,
    /// Every node's slot before the schedule starts: no stream yet, nothing finished.
    slots: IdVec<NodeId, Slot>,
    /// Whether any node of each graph has a cost (without one, the graph keeps GE's order).
    graph_costly: IdVec<GraphId, bool>,
    /// Whether any node has a cost (without one, every order is GE's).
    costly: bool,
}

impl OrderFacts {
    pub fn of(model: &Model) -> Self {
        let Graphs { succ, pred_count, dur, level } = Graphs::of(model);
        let costly = dur.iter().any(|&d| d > 0.0);
        let rank = ready_ranks(&level);
        let slots = model
            .nodes
            .ids()
            .map(|n| Slot {
                ready_at: 0.0,
                dur: dur[n],
                preds_left: pred_count[n],
                stream: NO_STREAM,
                rank: rank[n],
                need: units(model, n),
            })
            .collect();
        let graph_costly = model.graphs.iter().map(|g| g.order.iter().any(|&n| dur[n] > 0.0)).collect();
        OrderFacts { succ, pred_count, slots, graph_costly, costly }
    }
}

/// Every graph's edges within it and each node's duration and bottom level: what any list
/// schedule of the model reads, whatever its streams.
struct Graphs {
    succ: Csr<NodeId, NodeId>,
    pred_count: IdVec<NodeId, u32>,
    dur: IdVec<NodeId, f64>,
    level: IdVec<NodeId, f64>,
}

impl Graphs {
    fn of(model: &Model) -> Self {
        let nn = model.nodes.len();
        let dur: IdVec<NodeId, f64> = model.nodes.ids().map(|n| cost(model, n)).collect();
        // Edges between graphs (none in a model of one graph) order nothing.
        let one_graph = model.graphs.len() == 1;
        let graph: IdVec<NodeId, GraphId> = model.nodes.iter().map(|n| n.graph).collect();
        let inner = model.edges.iter().filter(|e| one_graph || graph[e.src] == graph[e.dst]);
        let succ = Csr::group(nn, inner.clone().map(|e| (e.src, e.dst)));
        let mut pred_count = IdVec::filled(nn, 0u32);
        for e in inner {
            pred_count[e.dst] += 1;
        }
        let mut level = IdVec::filled(nn, 0.0f64);
        for g in model.graphs.ids() {
            let backwards = model.graphs[g].order.iter().rev().copied();
            fill_bottom_levels(&mut level, backwards, |n| dur[n], |n| succ.of(n).iter().copied());
        }
        Graphs { succ, pred_count, dur, level }
    }
}

/// Every node's place in the order a stream prefers its ready nodes: the highest bottom level
/// first, ties by the lower `NodeId` (declaration order), as [`super::schedule::Prio`] orders
/// them. Ready queues then compare one integer, not a float and a node.
fn ready_ranks(level: &IdVec<NodeId, f64>) -> IdVec<NodeId, u32> {
    let mut keys: Vec<u128> =
        level.iter().enumerate().map(|(i, &l)| (u128::from(!total_key(l)) << 32) | i as u128).collect();
    keys.sort_unstable();
    let mut rank = IdVec::filled(level.len(), 0u32);
    for (r, &k) in keys.iter().enumerate() {
        rank[NodeId(k as u32)] = r as u32;
    }
    rank
}

/// `x` as an unsigned integer ordered as `f64::total_cmp` orders the floats.
fn total_key(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 { !b } else { b | 1 << 63 }
}

/// The float whose [`total_key`] is `k`.
fn from_total_key(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

/// The graphs' orders in [`Model::all_nodes`]'s structure.
pub(super) fn stitch(model: &Model, per_graph: &IdVec<GraphId, Vec<NodeId>>) -> Vec<NodeId> {
    if model.graphs.len() == 1 {
        return per_graph[GraphId::ROOT].clone();
    }
    let mut out = Vec::with_capacity(model.nodes.len());
    let mut stack: Vec<(GraphId, usize)> = vec![(GraphId::ROOT, 0)];
    while let Some((g, i)) = stack.pop() {
        let Some(&n) = per_graph[g].get(i) else { continue };
        out.push(n);
        stack.push((g, i + 1));
        for &sub in model.nodes[n].subgraphs.iter().rev() {
            stack.push((sub, 0));
        }
    }
    out
}

/// A timed event, earliest first: by time (its [`total_key`]), then a node's finish before a
/// node's ready event of the same instant, then by sequence number, for determinism.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Event {
    time: u64,
    /// `READY_EVENT` set for a ready event, and the sequence number.
    kind_seq: u64,
    node: NodeId,
}

/// The kind bit of [`Event::kind_seq`], above any sequence number.
const READY_EVENT: u64 = 1 << 32;

/// No stream, in [`Slot::stream`].
const NO_STREAM: u32 = u32::MAX;
/// No node, in [`Scheduler::next`] and [`Scheduler::last`].
const NO_NODE: u32 = u32::MAX;

/// Everything the schedule reads or writes of one node, in one place (32 bytes): its earliest
/// start from the predecessors finished so far, its duration, the predecessors it still waits
/// for, its stream (`NO_STREAM`: none), its [`ready_ranks`] place and the units it holds.
#[derive(Clone, Copy, Debug)]
struct Slot {
    ready_at: f64,
    dur: f64,
    preds_left: u32,
    stream: u32,
    rank: u32,
    need: u32,
}

/// A node on a ready queue: its rank above its id, so the lowest key is the best node.
fn ready_key(rank: u32, n: NodeId) -> Reverse<u64> {
    Reverse((u64::from(rank) << 32) | u64::from(n.0))
}

/// The list schedule's state, its buffers reused from graph to graph.
struct Scheduler<'a> {
    model: &'a Model,
    facts: &'a OrderFacts,
    /// Each node's figures and schedule state, side by side.
    slot: IdVec<NodeId, Slot>,
    /// Ready nodes of each stream, by [`ready_key`].
    ready: Vec<BinaryHeap<Reverse<u64>>>,
    busy: Vec<bool>,
    /// Streams that may start a node at the current time.
    dirty: Vec<u32>,
    in_dirty: Vec<bool>,
    /// Streams whose best ready node waits for units, by the units it needs (fewest first) above
    /// the stream: released units wake only those that may fit now.
    blocked: BinaryHeap<Reverse<u64>>,
    events: BinaryHeap<Reverse<Event>>,
    seq: u32,
    /// For [`Scheduler::interleave`]: the node after each one on its stream, and the last
    /// node seen on each stream (`NO_NODE`: none).
    next: IdVec<NodeId, u32>,
    last: Vec<u32>,
}

impl<'a> Scheduler<'a> {
    fn new(model: &'a Model, stream: &IdVec<NodeId, Option<StreamId>>, facts: &'a OrderFacts) -> Self {
        let nn = model.nodes.len();
        let streams = stream.iter().flatten().map(|s| s.index() + 1).max().unwrap_or(0);
        Scheduler {
            model,
            facts,
            slot: facts
                .slots
                .iter()
                .zip(stream.iter())
                .map(|(slot, s)| Slot { stream: s.map_or(NO_STREAM, |s| s.0), ..*slot })
                .collect(),
            ready: vec![BinaryHeap::new(); streams],
            busy: vec![false; streams],
            dirty: Vec::new(),
            in_dirty: vec![false; streams],
            blocked: BinaryHeap::new(),
            events: BinaryHeap::new(),
            seq: 0,
            next: IdVec::filled(nn, NO_NODE),
            last: vec![NO_NODE; streams],
        }
    }

    fn push(&mut self, time: f64, finish: bool, node: NodeId) {
        let kind_seq = if finish { 0 } else { READY_EVENT } | u64::from(self.seq);
        self.events.push(Reverse(Event { time: total_key(time), kind_seq, node }));
        self.seq = self.seq.wrapping_add(1);
    }

    fn mark(&mut self, s: usize) {
        if !self.in_dirty[s] {
            self.in_dirty[s] = true;
            self.dirty.push(s as u32);
        }
    }

    /// The order in which the schedule starts graph `g`'s nodes; GE's order for the graph if
    /// its edges hold a cycle. Each graph runs once: its nodes' slots are as
    /// [`OrderFacts::slots`] left them.
    fn graph(&mut self, g: GraphId) -> Vec<NodeId> {
        let facts = self.facts;
        let nodes = &self.model.graphs[g].order;
        // Nodes to handle at the current instant: (node, finished) — a node ready now, or one
        // that finished now without taking time.
        let mut now: Vec<(NodeId, bool)> =
            nodes.iter().rev().filter(|&&n| facts.pred_count[n] == 0).map(|&n| (n, false)).collect();
        let mut order = Vec::with_capacity(nodes.len());
        let mut free = UNITS;
        let mut t = 0.0f64;
        loop {
            let t_key = total_key(t);
            // Everything of this instant: finishes free their stream and units and release
            // successors (one ready now joins this instant), ready nodes join their stream's
            // queue, and nodes on no stream run at once.
            loop {
                let (n, finished) = match now.pop() {
                    Some(x) => x,
                    None => match self.events.peek() {
                        Some(Reverse(e)) if e.time <= t_key => {
                            let e = self.events.pop().expect("peeked").0;
                            (e.node, e.kind_seq & READY_EVENT == 0)
                        }
                        _ => break,
                    },
                };
                let Slot { stream: s, rank, need, .. } = self.slot[n];
                if !finished {
                    if s == NO_STREAM {
                        order.push(n);
                        now.push((n, true));
                    } else {
                        self.ready[s as usize].push(ready_key(rank, n));
                        self.mark(s as usize);
                    }
                    continue;
                }
                if s != NO_STREAM {
                    self.busy[s as usize] = false;
                    self.mark(s as usize);
                }
                free += need;
                while let Some(&Reverse(b)) = self.blocked.peek() {
                    if (b >> 32) as u32 > free {
                        break;
                    }
                    self.blocked.pop();
                    self.mark(b as u32 as usize);
                }
                for &d in facts.succ.of(n) {
                    let slot = &mut self.slot[d];
                    let ds = slot.stream;
                    let lat = if s != NO_STREAM && ds != NO_STREAM && s != ds { WAIT_LATENCY_US } else { 0.0 };
                    slot.ready_at = slot.ready_at.max(t + lat);
                    slot.preds_left -= 1;
                    if slot.preds_left == 0 {
                        let at = slot.ready_at;
                        if at <= t {
                            now.push((d, false));
                        } else {
                            self.push(at, false, d);
                        }
                    }
                }
            }
            // Idle streams start their best ready node, lowest stream id first.
            let mut dirty = std::mem::take(&mut self.dirty);
            dirty.sort_unstable();
            for &s in &dirty {
                let si = s as usize;
                self.in_dirty[si] = false;
                if self.busy[si] {
                    continue;
                }
                let Some(&Reverse(k)) = self.ready[si].peek() else { continue };
                let p = NodeId(k as u32);
                let Slot { need: u, dur: d, .. } = self.slot[p];
                if u > free {
                    self.blocked.push(Reverse((u64::from(u) << 32) | u64::from(s)));
                    continue;
                }
                self.ready[si].pop();
                free -= u;
                self.busy[si] = true;
                order.push(p);
                if d > 0.0 {
                    self.push(t + d, true, p);
                } else {
                    now.push((p, true));
                }
            }
            dirty.clear();
            self.dirty = dirty;
            if !now.is_empty() {
                continue;
            }
            match self.events.peek() {
                Some(Reverse(e)) => t = t.max(from_total_key(e.time)),
                None => break,
            }
        }
        self.blocked.clear();
        if order.len() != nodes.len() {
            // A cycle: nothing of it became ready.
            for q in &mut self.ready {
                q.clear();
            }
            self.busy.iter_mut().for_each(|b| *b = false);
            return nodes.clone();
        }
        order
    }

    /// One graph's nodes with each stream's nodes in the order the schedule `started` them,
    /// interleaved as close to GE's order as the edges and those stream sequences allow: of
    /// the nodes whose predecessors and stream predecessor are listed, the first in GE's order
    /// comes next. Where the schedule keeps every stream's GE sequence the result is GE's
    /// order itself, so only the streams it reorders change the document.
    fn interleave(&mut self, started: &[NodeId]) -> Vec<NodeId> {
        let (model, facts) = (self.model, self.facts);
        self.last.iter_mut().for_each(|l| *l = NO_NODE);
        // `preds_left` counts again: predecessors, then the stream predecessor.
        for &n in started {
            let mut k = facts.pred_count[n];
            self.next[n] = NO_NODE;
            let s = self.slot[n].stream;
            if s != NO_STREAM {
                let p = self.last[s as usize];
                if p != NO_NODE {
                    self.next[NodeId(p)] = n.0;
                    k += 1;
                }
                self.last[s as usize] = n.0;
            }
            self.slot[n].preds_left = k;
        }
        // GE's position above the node: the lowest key is the first in GE's order.
        let topo = &model.topo_index;
        let key = |n: NodeId| Reverse((u64::from(topo[n]) << 32) | u64::from(n.0));
        let mut heap: BinaryHeap<Reverse<u64>> =
            started.iter().filter(|&&n| self.slot[n].preds_left == 0).map(|&n| key(n)).collect();
        let mut out = Vec::with_capacity(started.len());
        while let Some(Reverse(k)) = heap.pop() {
            let n = NodeId(k as u32);
            out.push(n);
            let next = self.next[n];
            let after = (next != NO_NODE).then_some(NodeId(next));
            for d in facts.succ.of(n).iter().copied().chain(after) {
                let slot = &mut self.slot[d];
                slot.preds_left -= 1;
                if slot.preds_left == 0 {
                    heap.push(key(d));
                }
            }
        }
        debug_assert_eq!(out.len(), started.len(), "the schedule's order satisfies every constraint");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::policy::{self, Bounded, table};

    /// The list schedule as first written: float bottom levels in [`super::super::schedule::Prio`]
    /// ready queues, [`super::super::schedule::Timed`] events and separate arrays per figure. The
    /// schedule above must give its order node for node.
    mod reference {
        use std::cmp::Reverse;
        use std::collections::BinaryHeap;

        use super::super::super::schedule::{Prio, Timed, UNITS, WAIT_LATENCY_US};
        use super::super::{stitch, units};
        use crate::graph::csr::Csr;
        use crate::graph::{GraphId, IdVec, Model, NodeId, StreamId};

        pub struct RefFacts {
            succ: Csr<NodeId, NodeId>,
            pred_count: IdVec<NodeId, u32>,
            dur: IdVec<NodeId, f64>,
            need: IdVec<NodeId, u32>,
            level: IdVec<NodeId, f64>,
            costly: bool,
        }

        impl RefFacts {
            pub fn of(model: &Model) -> Self {
                let super::super::Graphs { succ, pred_count, dur, level } = super::super::Graphs::of(model);
                let costly = dur.iter().any(|&d| d > 0.0);
                let need = model.nodes.ids().map(|n| units(model, n)).collect();
                RefFacts { succ, pred_count, dur, need, level, costly }
            }
        }

        pub fn critical_path_first(model: &Model, stream: &IdVec<NodeId, Option<StreamId>>) -> Option<Vec<NodeId>> {
            let facts = RefFacts::of(model);
            if !facts.costly {
                return None;
            }
            let mut sched = Scheduler::new(model, stream, &facts);
            let mut per_graph: IdVec<GraphId, Vec<NodeId>> = IdVec::filled(model.graphs.len(), Vec::new());
            let mut changed = false;
            for g in model.graphs.ids() {
                let nodes = &model.graphs[g].order;
                if !nodes.iter().any(|&n| facts.dur[n] > 0.0) {
                    per_graph[g] = nodes.clone();
                    continue;
                }
                let started = sched.graph(g);
                per_graph[g] = sched.interleave(&started);
                changed |= per_graph[g] != *nodes;
            }
            changed.then(|| stitch(model, &per_graph))
        }

        /// What a timed event says: a node finishes, or becomes ready (its waits are over). Events of
        /// one instant come finishes first, then by sequence number, for determinism.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
        enum Happens {
            Finish(u32, NodeId),
            Ready(u32, NodeId),
        }

        /// No stream, in [`Slot::stream`].
        const NO_STREAM: u32 = u32::MAX;

        /// A node's stream (`NO_STREAM`: none), the predecessors it still waits for and its earliest
        /// start from those finished so far.
        #[derive(Clone, Copy, Debug)]
        struct Slot {
            ready_at: f64,
            preds_left: u32,
            stream: u32,
        }

        /// The list schedule's state, its buffers reused from graph to graph.
        struct Scheduler<'a> {
            model: &'a Model,
            facts: &'a RefFacts,
            /// What the walk reads of a successor when a node finishes, side by side.
            slot: IdVec<NodeId, Slot>,
            /// Ready nodes of each stream.
            ready: Vec<BinaryHeap<Prio>>,
            busy: Vec<bool>,
            /// Streams that may start a node at the current time.
            dirty: Vec<u32>,
            in_dirty: Vec<bool>,
            /// Streams whose best ready node waits for units, by the units it needs (fewest first):
            /// released units wake only those that may fit now.
            blocked: BinaryHeap<Reverse<(u32, u32)>>,
            events: BinaryHeap<Timed<Happens>>,
            seq: u32,
            /// For [`Scheduler::interleave`]: the node after each one on its stream, and the last
            /// node seen on each stream.
            next: IdVec<NodeId, Option<NodeId>>,
            last: Vec<Option<NodeId>>,
        }

        impl<'a> Scheduler<'a> {
            fn new(model: &'a Model, stream: &IdVec<NodeId, Option<StreamId>>, facts: &'a RefFacts) -> Self {
                let nn = model.nodes.len();
                let streams = stream.iter().flatten().map(|s| s.index() + 1).max().unwrap_or(0);
                Scheduler {
                    model,
                    facts,
                    slot: stream
                        .iter()
                        .map(|s| Slot { ready_at: 0.0, preds_left: 0, stream: s.map_or(NO_STREAM, |s| s.0) })
                        .collect(),
                    ready: vec![BinaryHeap::new(); streams],
                    busy: vec![false; streams],
                    dirty: Vec::new(),
                    in_dirty: vec![false; streams],
                    blocked: BinaryHeap::new(),
                    events: BinaryHeap::new(),
                    seq: 0,
                    next: IdVec::filled(nn, None),
                    last: vec![None; streams],
                }
            }

            fn push(&mut self, time: f64, finish: bool, node: NodeId) {
                let key = if finish { Happens::Finish(self.seq, node) } else { Happens::Ready(self.seq, node) };
                self.events.push(Timed { time, key });
                self.seq = self.seq.wrapping_add(1);
            }

            fn mark(&mut self, s: usize) {
                if !self.in_dirty[s] {
                    self.in_dirty[s] = true;
                    self.dirty.push(s as u32);
                }
            }

            /// The order in which the schedule starts graph `g`'s nodes; GE's order for the graph if
            /// its edges hold a cycle.
            fn graph(&mut self, g: GraphId) -> Vec<NodeId> {
                let (model, facts) = (self.model, self.facts);
                let nodes = &model.graphs[g].order;
                // Nodes to handle at the current instant: (node, finished) — a node ready now, or one
                // that finished now without taking time.
                let mut now: Vec<(NodeId, bool)> = Vec::new();
                for &n in nodes {
                    let k = facts.pred_count[n];
                    let slot = &mut self.slot[n];
                    slot.preds_left = k;
                    slot.ready_at = 0.0;
                    if k == 0 {
                        now.push((n, false));
                    }
                }
                now.reverse();
                let mut order = Vec::with_capacity(nodes.len());
                let mut free = UNITS;
                let mut t = 0.0f64;
                loop {
                    // Everything of this instant: finishes free their stream and units and release
                    // successors (one ready now joins this instant), ready nodes join their stream's
                    // queue, and nodes on no stream run at once.
                    loop {
                        let (n, finished) = match now.pop() {
                            Some(x) => x,
                            None => match self.events.peek() {
                                Some(e) if e.time <= t => match self.events.pop().expect("peeked").key {
                                    Happens::Finish(_, n) => (n, true),
                                    Happens::Ready(_, n) => (n, false),
                                },
                                _ => break,
                            },
                        };
                        let s = self.slot[n].stream;
                        if !finished {
                            if s == NO_STREAM {
                                order.push(n);
                                now.push((n, true));
                            } else {
                                self.ready[s as usize].push(Prio { level: facts.level[n], tie: n });
                                self.mark(s as usize);
                            }
                            continue;
                        }
                        if s != NO_STREAM {
                            self.busy[s as usize] = false;
                            self.mark(s as usize);
                        }
                        free += facts.need[n];
                        while let Some(&Reverse((need, b))) = self.blocked.peek() {
                            if need > free {
                                break;
                            }
                            self.blocked.pop();
                            self.mark(b as usize);
                        }
                        for &d in facts.succ.of(n) {
                            let slot = &mut self.slot[d];
                            let ds = slot.stream;
                            let lat = if s != NO_STREAM && ds != NO_STREAM && s != ds { WAIT_LATENCY_US } else { 0.0 };
                            slot.ready_at = slot.ready_at.max(t + lat);
                            slot.preds_left -= 1;
                            if slot.preds_left == 0 {
                                let at = slot.ready_at;
                                if at <= t {
                                    now.push((d, false));
                                } else {
                                    self.push(at, false, d);
                                }
                            }
                        }
                    }
                    // Idle streams start their best ready node, lowest stream id first.
                    let mut dirty = std::mem::take(&mut self.dirty);
                    dirty.sort_unstable();
                    for &s in &dirty {
                        let si = s as usize;
                        self.in_dirty[si] = false;
                        if self.busy[si] {
                            continue;
                        }
                        let Some(&p) = self.ready[si].peek() else { continue };
                        let u = facts.need[p.tie];
                        if u > free {
                            self.blocked.push(Reverse((u, s)));
                            continue;
                        }
                        self.ready[si].pop();
                        free -= u;
                        self.busy[si] = true;
                        order.push(p.tie);
                        let d = facts.dur[p.tie];
                        if d > 0.0 {
                            self.push(t + d, true, p.tie);
                        } else {
                            now.push((p.tie, true));
                        }
                    }
                    dirty.clear();
                    self.dirty = dirty;
                    if !now.is_empty() {
                        continue;
                    }
                    match self.events.peek() {
                        Some(e) => t = t.max(e.time),
                        None => break,
                    }
                }
                self.blocked.clear();
                if order.len() != nodes.len() {
                    // A cycle: nothing of it became ready.
                    for q in &mut self.ready {
                        q.clear();
                    }
                    self.busy.iter_mut().for_each(|b| *b = false);
                    return nodes.clone();
                }
                order
            }

            /// One graph's nodes with each stream's nodes in the order the schedule `started` them,
            /// interleaved as close to GE's order as the edges and those stream sequences allow: of
            /// the nodes whose predecessors and stream predecessor are listed, the first in GE's order
            /// comes next. Where the schedule keeps every stream's GE sequence the result is GE's
            /// order itself, so only the streams it reorders change the document.
            fn interleave(&mut self, started: &[NodeId]) -> Vec<NodeId> {
                let (model, facts) = (self.model, self.facts);
                self.last.iter_mut().for_each(|l| *l = None);
                // `preds_left` counts again: predecessors, then the stream predecessor.
                for &n in started {
                    let mut k = facts.pred_count[n];
                    self.next[n] = None;
                    let s = self.slot[n].stream;
                    if s != NO_STREAM {
                        if let Some(p) = self.last[s as usize] {
                            self.next[p] = Some(n);
                            k += 1;
                        }
                        self.last[s as usize] = Some(n);
                    }
                    self.slot[n].preds_left = k;
                }
                let topo = &model.topo_index;
                let mut heap: BinaryHeap<Reverse<(u32, NodeId)>> =
                    started.iter().filter(|&&n| self.slot[n].preds_left == 0).map(|&n| Reverse((topo[n], n))).collect();
                let mut out = Vec::with_capacity(started.len());
                while let Some(Reverse((_, n))) = heap.pop() {
                    out.push(n);
                    for d in facts.succ.of(n).iter().copied().chain(self.next[n]) {
                        let slot = &mut self.slot[d];
                        slot.preds_left -= 1;
                        if slot.preds_left == 0 {
                            heap.push(Reverse((topo[d], d)));
                        }
                    }
                }
                debug_assert_eq!(out.len(), started.len(), "the schedule's order satisfies every constraint");
                out
            }
        }
    }

    /// Streams for `model`: GE's, each policy's within 64 streams, and seeded random ones (some
    /// nodes on no stream), with a name for each.
    fn assignments(model: &Model) -> Vec<(String, IdVec<NodeId, Option<StreamId>>)> {
        let mut out =
            vec![("ge".to_string(), policy::ge_logical(model, &model.options).expect("GE's passes run").node_stream)];
        for name in ["per-operator", "min-streams", "list", "budget:2", "budget:8", "per-backend", "single"] {
            let chosen = table::parse(name).expect("a policy");
            let options = chosen.options(&model.options);
            let bounded = Bounded::new(model, &options, chosen, None).expect("the policy assigns");
            out.push((name.to_string(), bounded.logical().node_stream));
        }
        let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ model.nodes.len() as u64;
        let mut draw = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for streams in [1u64, 2, 5, 40] {
            let stream = model
                .nodes
                .ids()
                .map(|_| {
                    let r = draw();
                    (r % 8 != 0).then(|| StreamId((r >> 8) as u32 % streams as u32))
                })
                .collect();
            out.push((format!("random-{streams}"), stream));
        }
        out
    }

    /// Checks the schedule against the reference on every assignment of `model`, from facts
    /// computed once, as `auto` shares them; returns how many orders differed from GE's.
    fn check_model(model: &Model) -> usize {
        let facts = OrderFacts::of(model);
        let mut reordered = 0;
        for (what, stream) in assignments(model) {
            let fast = critical_path_first_with(model, &stream, &facts);
            let slow = reference::critical_path_first(model, &stream);
            assert!(fast == slow, "{} under {what}: the order differs from the reference", model.name);
            reordered += usize::from(fast.is_some());
        }
        reordered
    }

    /// The synthetic families, and each with its costs rounded to whole µs, where many nodes
    /// tie on their bottom level and the ties decide.
    #[test]
    fn the_schedule_matches_the_reference_on_the_synthetic_families() {
        for model in crate::graph::synth::test_models(2000, Some(20), &[]) {
            let mut rounded = model.clone();
            for node in rounded.nodes.iter_mut() {
                node.cost_us = node.cost_us.round();
            }
            for m in [&model, &rounded] {
                assert!(check_model(m) > 0, "{}: some order is not GE's", model.name);
            }
        }
    }

    /// Every corpus graph, its subgraphs and dynamic shapes among them.
    #[test]
    fn the_schedule_matches_the_reference_on_the_corpus() {
        let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
        let mut graphs: Vec<_> = std::fs::read_dir(&corpus)
            .expect("the corpus is there")
            .map(|e| e.expect("a directory entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        graphs.sort();
        assert!(graphs.len() >= 10, "the corpus has its graphs");
        let mut reordered = 0;
        for path in graphs {
            let model = crate::graph::json::load_file(&path).expect("corpus graph loads");
            reordered += check_model(&model);
        }
        assert!(reordered > 0, "some corpus order is not GE's");
    }

    /// The integer keys order floats as `total_cmp` does, and give them back.
    #[test]
    fn total_keys_order_as_total_cmp() {
        let xs =
            [f64::NEG_INFINITY, -3.5, -1e-300, -0.0, 0.0, 1e-300, 1.0, 2.5, 1e300, f64::INFINITY, f64::NAN, -f64::NAN];
        for &a in &xs {
            assert_eq!(from_total_key(total_key(a)).to_bits(), a.to_bits());
            for &b in &xs {
                assert_eq!(total_key(a).cmp(&total_key(b)), a.total_cmp(&b), "{a} against {b}");
            }
        }
    }
}
