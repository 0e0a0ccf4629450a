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

use super::schedule::{Prio, Timed, UNITS, WAIT_LATENCY_US, fill_bottom_levels, node_cost as cost, node_units};
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

/// What the list schedule reads of a model whatever its streams: every graph's edges as
/// successor lists of node ids, each node's duration, units and bottom level. On a graph
/// whose edges reach far back, a walk through the model's edge table is a cache miss per
/// edge; these lists are read in place.
#[derive(Clone, Debug)]
pub struct OrderFacts {
    /// Successors of every node within its own graph, one entry per edge, in edge order.
    succ: Csr<NodeId, NodeId>,
    /// Predecessors of every node within its own graph, counted by edge.
    pred_count: IdVec<NodeId, u32>,
    dur: IdVec<NodeId, f64>,
    need: IdVec<NodeId, u32>,
    /// The longest `cost_us` path from each node to an exit of its graph, its own included.
    level: IdVec<NodeId, f64>,
    /// Whether any node has a cost (without one, every order is GE's).
    costly: bool,
}

impl OrderFacts {
    pub fn of(model: &Model) -> Self {
        let nn = model.nodes.len();
        let dur: IdVec<NodeId, f64> = model.nodes.ids().map(|n| cost(model, n)).collect();
        let costly = dur.iter().any(|&d| d > 0.0);
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
        OrderFacts { succ, pred_count, dur, need: model.nodes.ids().map(|n| units(model, n)).collect(), level, costly }
    }
}

/// The graphs' orders in [`Model::all_nodes`]'s structure.
fn stitch(model: &Model, per_graph: &IdVec<GraphId, Vec<NodeId>>) -> Vec<NodeId> {
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
    facts: &'a OrderFacts,
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
    fn new(model: &'a Model, stream: &IdVec<NodeId, Option<StreamId>>, facts: &'a OrderFacts) -> Self {
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
