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

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use crate::graph::{GraphId, IdVec, Model, NodeId, StreamId};

/// Compute units of the device the schedule assumes (the simulator's default).
const UNITS: u32 = super::policy::budget::DEVICE_UNITS;
/// Latency of a wait between streams the schedule assumes, in µs (the simulator's default).
const WAIT_LATENCY_US: f64 = 1.0;

/// Time a node runs: nothing for a node with no device task.
fn cost(model: &Model, n: NodeId) -> f64 {
    let node = &model.nodes[n];
    if node.tasks > 0 && node.cost_us.is_finite() && node.cost_us > 0.0 { node.cost_us } else { 0.0 }
}

/// Units a node holds while it runs.
fn units(model: &Model, n: NodeId) -> u32 {
    if model.nodes[n].tasks == 0 { 0 } else { model.nodes[n].cores.min(UNITS) }
}

/// The execution order of `model` under the main-stream assignment `stream`: the list
/// schedule described in the module documentation, every graph on its own. A graph none of
/// whose nodes has a cost keeps GE's order (there is no critical path to run first). `None`
/// when the result is GE's order, [`Model::all_nodes`].
pub fn critical_path_first(model: &Model, stream: &IdVec<NodeId, Option<StreamId>>) -> Option<Vec<NodeId>> {
    let streams = stream.iter().flatten().map(|s| s.index() + 1).max().unwrap_or(0);
    let mut per_graph: IdVec<GraphId, Vec<NodeId>> = IdVec::filled(model.graphs.len(), Vec::new());
    let mut sched = Scheduler::new(model, stream, streams);
    let mut last = vec![None; streams];
    let mut next = IdVec::filled(model.nodes.len(), None);
    let mut left = IdVec::filled(model.nodes.len(), 0u32);
    let mut changed = false;
    for g in model.graphs.ids() {
        let nodes = &model.graphs[g].order;
        if !nodes.iter().any(|&n| cost(model, n) > 0.0) {
            per_graph[g] = nodes.clone();
            continue;
        }
        let started = sched.graph(g);
        per_graph[g] = interleave(model, stream, g, &started, &mut last, &mut next, &mut left);
        changed |= per_graph[g] != *nodes;
    }
    changed.then(|| stitch(model, &per_graph))
}

/// Graph `g`'s nodes with each stream's nodes in the order `started` gives them, interleaved
/// as close to GE's order as the edges and those stream sequences allow: of the nodes whose
/// predecessors and stream predecessor are listed, the first in GE's order comes next. Where
/// the schedule keeps every stream's GE sequence the result is GE's order itself, so only the
/// streams it reorders change the document.
fn interleave(
    model: &Model,
    stream: &IdVec<NodeId, Option<StreamId>>,
    g: GraphId,
    started: &[NodeId],
    last: &mut [Option<NodeId>],
    next: &mut IdVec<NodeId, Option<NodeId>>,
    left: &mut IdVec<NodeId, u32>,
) -> Vec<NodeId> {
    last.iter_mut().for_each(|l| *l = None);
    for &n in started {
        let mut k = model.in_edges(n).filter(|e| model.nodes[e.src].graph == g).count() as u32;
        next[n] = None;
        if let Some(s) = stream[n] {
            if let Some(p) = last[s.index()] {
                next[p] = Some(n);
                k += 1;
            }
            last[s.index()] = Some(n);
        }
        left[n] = k;
    }
    let mut heap: BinaryHeap<Reverse<(u32, NodeId)>> =
        started.iter().filter(|&&n| left[n] == 0).map(|&n| Reverse((model.topo_index[n], n))).collect();
    let mut out = Vec::with_capacity(started.len());
    while let Some(Reverse((_, n))) = heap.pop() {
        out.push(n);
        let succ = model.out_edges(n).map(|e| e.dst).filter(|&d| model.nodes[d].graph == g);
        for d in succ.chain(next[n]) {
            left[d] -= 1;
            if left[d] == 0 {
                heap.push(Reverse((model.topo_index[d], d)));
            }
        }
    }
    debug_assert_eq!(out.len(), started.len(), "the schedule's order satisfies every constraint");
    out
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

/// Ready-queue key: higher bottom level first, then the earlier declared node.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Prio {
    level: f64,
    node: NodeId,
}

impl Eq for Prio {}
impl Ord for Prio {
    fn cmp(&self, o: &Self) -> Ordering {
        self.level.total_cmp(&o.level).then(o.node.cmp(&self.node))
    }
}
impl PartialOrd for Prio {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// A timed event, earliest first: a node finishes (`finish`) or becomes ready (its waits
/// are over); then by sequence number, for determinism.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Event {
    time: f64,
    finish: bool,
    seq: u32,
    node: NodeId,
}

impl Eq for Event {}
impl Ord for Event {
    fn cmp(&self, o: &Self) -> Ordering {
        // Min-heap on (time, finishes first, seq).
        o.time.total_cmp(&self.time).then(self.finish.cmp(&o.finish)).then(o.seq.cmp(&self.seq))
    }
}
impl PartialOrd for Event {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// The list schedule's state, its buffers reused from graph to graph.
struct Scheduler<'a> {
    model: &'a Model,
    stream: &'a IdVec<NodeId, Option<StreamId>>,
    level: IdVec<NodeId, f64>,
    preds_left: IdVec<NodeId, u32>,
    /// Earliest start of a node from the predecessors finished so far.
    ready_at: IdVec<NodeId, f64>,
    /// Ready nodes of each stream.
    ready: Vec<BinaryHeap<Prio>>,
    busy: Vec<bool>,
    /// Streams that may start a node at the current time.
    dirty: Vec<u32>,
    in_dirty: Vec<bool>,
    /// Streams whose best ready node waits for units.
    blocked: Vec<u32>,
    events: BinaryHeap<Event>,
    seq: u32,
}

impl<'a> Scheduler<'a> {
    fn new(model: &'a Model, stream: &'a IdVec<NodeId, Option<StreamId>>, streams: usize) -> Self {
        let nn = model.nodes.len();
        Scheduler {
            model,
            stream,
            level: IdVec::filled(nn, 0.0),
            preds_left: IdVec::filled(nn, 0),
            ready_at: IdVec::filled(nn, 0.0),
            ready: vec![BinaryHeap::new(); streams],
            busy: vec![false; streams],
            dirty: Vec::new(),
            in_dirty: vec![false; streams],
            blocked: Vec::new(),
            events: BinaryHeap::new(),
            seq: 0,
        }
    }

    /// Predecessors of `n` in its own graph.
    fn preds(&self, n: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        let g = self.model.nodes[n].graph;
        self.model.in_edges(n).map(|e| e.src).filter(move |&p| self.model.nodes[p].graph == g)
    }

    fn push(&mut self, time: f64, finish: bool, node: NodeId) {
        self.events.push(Event { time, finish, seq: self.seq, node });
        self.seq = self.seq.wrapping_add(1);
    }

    fn mark(&mut self, s: usize) {
        if !self.in_dirty[s] {
            self.in_dirty[s] = true;
            self.dirty.push(s as u32);
        }
    }

    /// The order of graph `g`'s nodes; GE's order for the graph if its edges hold a cycle.
    fn graph(&mut self, g: GraphId) -> Vec<NodeId> {
        let model = self.model;
        let nodes = &model.graphs[g].order;
        for &n in nodes.iter().rev() {
            let below = model
                .out_edges(n)
                .filter(|e| model.nodes[e.dst].graph == g)
                .map(|e| self.level[e.dst])
                .fold(0.0, f64::max);
            self.level[n] = cost(model, n) + below;
        }
        for &n in nodes {
            self.preds_left[n] = self.preds(n).count() as u32;
            self.ready_at[n] = 0.0;
            if self.preds_left[n] == 0 {
                self.push(0.0, false, n);
            }
        }
        let mut order = Vec::with_capacity(nodes.len());
        let mut free = UNITS;
        let mut t = 0.0f64;
        loop {
            // Every event of this instant: finishes free their stream and units and release
            // successors (a successor ready now joins this instant), then ready nodes join
            // their stream's queue.
            while let Some(ev) = self.events.peek().copied().filter(|e| e.time <= t) {
                self.events.pop();
                let n = ev.node;
                if ev.finish {
                    let s = self.stream[n];
                    if let Some(s) = s {
                        self.busy[s.index()] = false;
                        self.mark(s.index());
                    }
                    let u = units(model, n);
                    if u > 0 {
                        free += u;
                        for b in std::mem::take(&mut self.blocked) {
                            self.mark(b as usize);
                        }
                    }
                    for e in model.out_edges(n) {
                        let d = e.dst;
                        if model.nodes[d].graph != g {
                            continue;
                        }
                        let lat = match (s, self.stream[d]) {
                            (Some(a), Some(b)) if a != b => WAIT_LATENCY_US,
                            _ => 0.0,
                        };
                        self.ready_at[d] = self.ready_at[d].max(t + lat);
                        self.preds_left[d] -= 1;
                        if self.preds_left[d] == 0 {
                            let at = self.ready_at[d];
                            self.push(at, false, d);
                        }
                    }
                } else {
                    match self.stream[n] {
                        // On no stream: runs as soon as it is ready, in no time.
                        None => {
                            order.push(n);
                            self.push(t, true, n);
                        }
                        Some(s) => {
                            self.ready[s.index()].push(Prio { level: self.level[n], node: n });
                            self.mark(s.index());
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
                let u = units(model, p.node);
                if u > free {
                    self.blocked.push(s);
                    continue;
                }
                self.ready[si].pop();
                free -= u;
                self.busy[si] = true;
                order.push(p.node);
                self.push(t + cost(model, p.node), true, p.node);
            }
            dirty.clear();
            self.dirty = dirty;
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
}
