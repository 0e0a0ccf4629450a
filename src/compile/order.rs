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

use super::schedule::{Engine, Hooks, UNITS, WAIT_LATENCY_US, fill_bottom_levels, node_cost as cost, node_units};
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
                stream: StreamId::invalid(),
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
#[cfg(test)]
fn from_total_key(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

/// Every node of `model`, the root graph's in `root` and every nested graph's in its own
/// order, stitched as [`Model::all_nodes`] stitches them.
pub fn with_root_order(model: &Model, root: Vec<NodeId>) -> Vec<NodeId> {
    let mut per_graph: IdVec<GraphId, Vec<NodeId>> = model.graphs.iter().map(|g| g.order.clone()).collect();
    per_graph[GraphId::ROOT] = root;
    stitch(model, &per_graph)
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

/// Everything the schedule reads or writes of one node, in one place (32 bytes): its earliest
/// start from the predecessors finished so far, its duration, what it still waits for when
/// the streams are interleaved ([`Scheduler::interleave`]; the engine counts down the
/// schedule's own), its stream (invalid: none), its [`ready_ranks`] place and the units it
/// holds.
#[derive(Clone, Copy, Debug)]
struct Slot {
    ready_at: f64,
    dur: f64,
    preds_left: u32,
    stream: StreamId,
    rank: u32,
    need: u32,
}

/// A node on a ready queue: its rank above its id, so the lowest key is the best node.
fn ready_key(rank: u32, n: NodeId) -> Reverse<u64> {
    Reverse((u64::from(rank) << 32) | u64::from(n.0))
}

/// The list schedule's state, its buffers reused from graph to graph: the scheduling
/// [`Engine`] and the execution order's hooks.
struct Scheduler<'a> {
    model: &'a Model,
    facts: &'a OrderFacts,
    engine: Engine<NodeId>,
    queues: Queues,
    /// For [`Scheduler::interleave`]: the node after each one on its stream, and the last
    /// node seen on each stream (invalid: none).
    next: IdVec<NodeId, NodeId>,
    last: IdVec<StreamId, NodeId>,
}

/// The execution order's hooks: every stream an in-order queue of its ready nodes, by
/// [`ready_key`], that starts its best one whenever it is idle and the units allow; a node
/// waits for the wait latency after a predecessor on another stream (a wake-up on the
/// engine's timeline); nodes on no stream run at once, in no time.
struct Queues {
    /// Each node's figures and schedule state, side by side.
    slot: IdVec<NodeId, Slot>,
    /// Ready nodes of each stream, by [`ready_key`].
    ready: IdVec<StreamId, BinaryHeap<Reverse<u64>>>,
    busy: IdVec<StreamId, bool>,
    /// Streams that may start a node at the current time.
    dirty: Vec<StreamId>,
    in_dirty: IdVec<StreamId, bool>,
    /// Streams whose best ready node waits for units, by the units it needs (fewest first) above
    /// the stream: released units wake only those that may fit now.
    blocked: BinaryHeap<Reverse<u64>>,
    /// The nodes in the order the schedule starts them.
    started: Vec<NodeId>,
}

impl Queues {
    fn mark(&mut self, s: StreamId) {
        if !self.in_dirty[s] {
            self.in_dirty[s] = true;
            self.dirty.push(s);
        }
    }
}

impl Hooks<NodeId> for Queues {
    /// A node on no stream runs at once; one that waits for a wait latency wakes when it is
    /// over; the others join their stream's queue.
    fn ready(&mut self, n: NodeId, eng: &mut Engine<NodeId>) {
        let Slot { stream: s, rank, ready_at, .. } = self.slot[n];
        if s.is_invalid() {
            self.started.push(n);
            eng.finish_now(n);
        } else if ready_at > eng.now() {
            eng.wake_at(n, ready_at);
        } else {
            self.ready[s].push(ready_key(rank, n));
            self.mark(s);
        }
    }

    /// Idle streams start their best ready node, lowest stream id first.
    fn dispatch(&mut self, eng: &mut Engine<NodeId>) {
        let (t, mut free) = (eng.now(), eng.free());
        while let Some(&Reverse(b)) = self.blocked.peek() {
            if (b >> 32) as u32 > free {
                break;
            }
            self.blocked.pop();
            self.mark(StreamId(b as u32));
        }
        let mut dirty = std::mem::take(&mut self.dirty);
        dirty.sort_unstable();
        for &s in &dirty {
            self.in_dirty[s] = false;
            if self.busy[s] {
                continue;
            }
            let Some(&Reverse(k)) = self.ready[s].peek() else { continue };
            let p = NodeId(k as u32);
            let Slot { need: u, dur: d, .. } = self.slot[p];
            if u > free {
                self.blocked.push(Reverse((u64::from(u) << 32) | u64::from(s.0)));
                continue;
            }
            self.ready[s].pop();
            free -= u;
            self.busy[s] = true;
            self.started.push(p);
            eng.start(p, t + d, u);
        }
        dirty.clear();
        self.dirty = dirty;
    }

    fn finished(&mut self, n: NodeId, _: f64) {
        let s = self.slot[n].stream;
        if s.is_valid() {
            self.busy[s] = false;
            self.mark(s);
        }
    }

    /// A successor on another stream than `n`'s waits for the wait latency.
    fn released(&mut self, n: NodeId, d: NodeId, now: f64) {
        let s = self.slot[n].stream;
        let slot = &mut self.slot[d];
        let ds = slot.stream;
        let lat = if s.is_valid() && ds.is_valid() && s != ds { WAIT_LATENCY_US } else { 0.0 };
        slot.ready_at = slot.ready_at.max(now + lat);
    }
}

impl<'a> Scheduler<'a> {
    fn new(model: &'a Model, stream: &IdVec<NodeId, Option<StreamId>>, facts: &'a OrderFacts) -> Self {
        let nn = model.nodes.len();
        let streams = stream.iter().flatten().map(|s| s.index() + 1).max().unwrap_or(0);
        Scheduler {
            model,
            facts,
            engine: Engine::new(UNITS),
            queues: Queues {
                slot: facts
                    .slots
                    .iter()
                    .zip(stream.iter())
                    .map(|(slot, s)| Slot { stream: s.unwrap_or(StreamId::invalid()), ..*slot })
                    .collect(),
                ready: IdVec::filled(streams, BinaryHeap::new()),
                busy: IdVec::filled(streams, false),
                dirty: Vec::new(),
                in_dirty: IdVec::filled(streams, false),
                blocked: BinaryHeap::new(),
                started: Vec::new(),
            },
            next: IdVec::filled(nn, NodeId::invalid()),
            last: IdVec::filled(streams, NodeId::invalid()),
        }
    }

    /// The order in which the schedule starts graph `g`'s nodes; GE's order for the graph if
    /// its edges hold a cycle. Each graph runs once: its nodes' slots are as
    /// [`OrderFacts::slots`] left them.
    fn graph(&mut self, g: GraphId) -> Vec<NodeId> {
        let facts = self.facts;
        let nodes = &self.model.graphs[g].order;
        let q = &mut self.queues;
        q.started = Vec::with_capacity(nodes.len());
        let preds = nodes.iter().map(|&n| (n, facts.pred_count[n]));
        self.engine.run(preds, |n| facts.succ.of(n).iter().copied(), q);
        q.blocked.clear();
        let order = std::mem::take(&mut q.started);
        if order.len() != nodes.len() {
            // A cycle: nothing of it became ready.
            for r in q.ready.iter_mut() {
                r.clear();
            }
            q.busy.iter_mut().for_each(|b| *b = false);
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
        let slots = &mut self.queues.slot;
        self.last.iter_mut().for_each(|l| *l = NodeId::invalid());
        // `preds_left` counts again: predecessors, then the stream predecessor.
        for &n in started {
            let mut k = facts.pred_count[n];
            self.next[n] = NodeId::invalid();
            let s = slots[n].stream;
            if s.is_valid() {
                let p = self.last[s];
                if p.is_valid() {
                    self.next[p] = n;
                    k += 1;
                }
                self.last[s] = n;
            }
            slots[n].preds_left = k;
        }
        // GE's position above the node: the lowest key is the first in GE's order.
        let topo = &model.topo_index;
        let key = |n: NodeId| Reverse((u64::from(topo[n]) << 32) | u64::from(n.0));
        let mut heap: BinaryHeap<Reverse<u64>> =
            started.iter().filter(|&&n| slots[n].preds_left == 0).map(|&n| key(n)).collect();
        let mut out = Vec::with_capacity(started.len());
        while let Some(Reverse(k)) = heap.pop() {
            let n = NodeId(k as u32);
            out.push(n);
            let next = self.next[n];
            let after = next.is_valid().then_some(next);
            for d in facts.succ.of(n).iter().copied().chain(after) {
                let slot = &mut slots[d];
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
    use crate::compile::policy::{self, Bounded, Ctx, budget, list, min_streams, table};
    use crate::graph::synth::{Family, generate};

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

    /// The execution order is the engine's schedule, and keeps the engine's invariants (one
    /// run per graph with a cost, over its own edges) under every assignment of the synthetic
    /// families and of corpus graphs with subgraphs, with nodes on no stream among them; and
    /// it is a topological order that reorders some graph.
    #[test]
    fn the_order_keeps_the_engine_invariants() {
        use crate::compile::schedule::trace::{check, traced};
        let mut models = crate::graph::synth::test_models(1500, Some(20), &["bert_base", "resnet50_train"]);
        let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
        for entry in std::fs::read_dir(&corpus).expect("the corpus is there") {
            let path = entry.expect("a directory entry").path();
            if path.extension().is_some_and(|x| x == "json") {
                let model = crate::graph::json::load_file(&path).expect("corpus graph loads");
                if model.graphs.len() > 1 {
                    models.push(model);
                }
            }
        }
        let (mut runs, mut reordered) = (0, 0);
        for model in &models {
            let facts = OrderFacts::of(model);
            let graphs: Vec<GraphId> = model.graphs.ids().filter(|&g| facts.graph_costly[g]).collect();
            let mut pred_lists = vec![Vec::new(); model.nodes.len()];
            for n in model.nodes.ids() {
                for &d in facts.succ.of(n) {
                    pred_lists[d.index()].push(n.index());
                }
            }
            for (what, stream) in assignments(model) {
                let (order, traced) = traced(|| critical_path_first_with(model, &stream, &facts));
                assert_eq!(
                    traced.len(),
                    if facts.costly { graphs.len() } else { 0 },
                    "{}: a run per graph",
                    model.name
                );
                for (r, &g) in traced.iter().zip(&graphs) {
                    let nodes: Vec<usize> = model.graphs[g].order.iter().map(|v| v.index()).collect();
                    let preds = |q: usize| pred_lists[q].clone();
                    check(r, model.nodes.len(), &nodes, preds, &format!("{} under {what}", model.name));
                }
                runs += traced.len();
                if let Some(order) = order {
                    reordered += 1;
                    let mut at = IdVec::filled(model.nodes.len(), usize::MAX);
                    for (i, &n) in order.iter().enumerate() {
                        assert_eq!(at[n], usize::MAX, "{} under {what}: a node listed twice", model.name);
                        at[n] = i;
                    }
                    for n in model.nodes.ids() {
                        for &d in facts.succ.of(n) {
                            assert!(at[n] < at[d], "{} under {what}: an edge listed backwards", model.name);
                        }
                    }
                }
            }
        }
        assert!(runs > 50 && reordered > 10, "{runs} runs, {reordered} orders not GE's");
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

    /// A node with no device task runs in no time in every compile-time schedule, whatever its
    /// `cost_us` says, as in the simulator: erasing those costs changes neither the `list`
    /// streams, the `budget:N` merge nor the execution order (under GE's streams, where those
    /// nodes sit on streams too). The dense family gives one node in five no task and a cost
    /// of 1–9 µs anyway.
    #[test]
    fn a_node_without_tasks_costs_nothing_in_list_budget_and_order() {
        for seed in 1..=4 {
            let model = generate(Family::Dense { density: 6, mixed: false }, 300, seed).expect("valid");
            let mut erased = model.clone();
            for node in erased.nodes.iter_mut().filter(|n| n.tasks == 0) {
                node.cost_us = 0.0;
            }
            assert!(
                model.nodes.iter().any(|n| n.tasks == 0 && n.cost_us > 0.0),
                "seed {seed}: a costed node without tasks"
            );
            let schedules = |m: &Model| {
                let ctx = Ctx::new(m, &m.options).expect("GE's pass chain runs");
                let cover = min_streams::chain_cover(&ctx);
                assert!(cover.chains.len() > 4, "seed {seed}: more chains than the budgets below");
                let mut streams = vec![list::assign(&ctx, 4).stream];
                streams.extend([2, 4].map(|b| budget::merge(&ctx, &cover, b).stream));
                (streams, critical_path_first(m, &ctx.base.node_stream))
            };
            let (before, after) = (schedules(&model), schedules(&erased));
            for (i, what) in ["list", "budget:2", "budget:4"].iter().enumerate() {
                assert!(before.0[i] == after.0[i], "seed {seed}: {what}");
            }
            assert!(before.1 == after.1, "seed {seed}: execution order");
        }
    }
}
