//! The memory-aware execution order (`execution_order=memory`, and what `memory_limit` falls
//! back to when the critical path first does not fit; docs/memory.md "The memory-aware order").
//!
//! The memory plan (src/memory/) keeps two tensors apart unless one is dead before the other is
//! produced, so on one stream the arena is the most bytes live at any step of the order:
//! the tensors already produced (or there from the start) with a reader still to run, plus the
//! outputs of the node that runs. The order decides that figure. Two orders are built here,
//! over a graph's *bearing* nodes (a device task on a stream: the nodes the plan counts; the
//! others run as soon as they are ready and change no bytes):
//!
//! - **Gated list order** (the bounded heuristic): the ready node with the highest bottom level
//!   runs next, as the critical-path-first order prefers, as long as its outputs fit under the
//!   byte limit `L` on top of what is live; otherwise, among up to [`SCAN`] ready nodes in
//!   bottom-level order, the one that frees the most net bytes (ties: the smaller step, then the
//!   bottom level). Parallel branches are thus opened only as far as live bytes allow; with
//!   `L = 0` it is a pure memory-greedy order. O((V + E) log V + V·SCAN).
//! - **Exact order** (Serenity, Ahn et al., MLSys 2020, "Ordering Chaos": dynamic programming
//!   over the graph's cuts, with divide and conquer): a node every other node is an ancestor or a
//!   descendant of splits the graph into segments that any order runs one after the other, and
//!   each segment is solved on its own. Within a segment the states are the sets of nodes run so
//!   far (downsets; their live bytes are a function of the set), level by level, keeping per set
//!   the order with the lowest peak; states whose peak exceeds the heuristic's are pruned. A
//!   segment whose states exceed [`MAX_STATES`] (or that is over [`MAX_SEGMENT`] nodes) keeps
//!   the heuristic's order there, so the effort per graph is bounded and the result is never
//!   worse than the heuristic's, segment by segment.
//!
//! Edges between graphs order nothing here, as in [`super::order`]; a tensor read from another
//! graph is kept live to the end of its own graph.

use std::collections::{BinaryHeap, HashMap};

use super::order::stitch;
use super::schedule::{Engine, Hooks, UNITS, fill_bottom_levels, node_cost};
use crate::graph::ids::define_index;
use crate::graph::{GraphId, IdVec, Model, NodeId, StreamId, ViewWalk};

define_index!(
    /// A bearing node's local index, as the scheduling engine sees it.
    Local
);

/// The gated list order's hooks on the scheduling [`Engine`], which keeps no clock here: each
/// round places one ready node, the one with the highest bottom level if its outputs fit under
/// the limit, else the best of up to [`SCAN`] for memory, and finishes it at once.
struct Gated<'f> {
    facts: &'f GraphFacts,
    limit: u64,
    /// Readers each tensor still waits for.
    left: Vec<u32>,
    ready: BinaryHeap<std::cmp::Reverse<(u32, u32)>>,
    live: u64,
    peak: u64,
    order: Vec<u32>,
    looked: Vec<std::cmp::Reverse<(u32, u32)>>,
}

impl Hooks<Local> for Gated<'_> {
    fn ready(&mut self, i: Local, _: &mut Engine<Local>) {
        self.ready.push(std::cmp::Reverse((self.facts.rank[i.index()], i.0)));
    }

    fn dispatch(&mut self, eng: &mut Engine<Local>) {
        let Some(top) = self.ready.pop() else { return };
        let f = self.facts;
        let live = self.live;
        let i = top.0.1 as usize;
        let (out, net) = f.step(i, &self.left);
        let (i, out, net) = if live + out <= self.limit {
            (i, out, net)
        } else {
            // The best of up to SCAN ready nodes for memory: most bytes freed, then the
            // smaller step, then the bottom level.
            self.looked.clear();
            self.looked.push(top);
            let mut best = (net, live + out, top.0.0, i, out);
            while self.looked.len() < SCAN {
                let Some(x) = self.ready.pop() else { break };
                let j = x.0.1 as usize;
                let (o, n) = f.step(j, &self.left);
                let key = (n, live + o, x.0.0, j, o);
                if key < best {
                    best = key;
                }
                self.looked.push(x);
            }
            for x in self.looked.drain(..) {
                if x.0.1 as usize != best.3 {
                    self.ready.push(x);
                }
            }
            (best.3, best.4, best.0)
        };
        self.peak = self.peak.max(live + out);
        self.live = (live as i64 + net) as u64;
        for &t in &f.reads[i] {
            self.left[t as usize] -= 1;
        }
        self.order.push(i as u32);
        eng.finish_now(Local::new(i));
    }
}

/// Ready nodes the heuristic looks through when the best one does not fit.
pub const SCAN: usize = 32;
/// Sets the exact order keeps per segment before it gives the segment to the heuristic.
pub const MAX_STATES: usize = 50_000;
/// Nodes of a segment the exact order takes at most.
pub const MAX_SEGMENT: usize = 2048;
/// Steps (a state and a node looked at for it) the exact order takes per graph at most.
pub const MAX_WORK: usize = 2_000_000;

/// No local index: a node that is not bearing.
const NONE: u32 = u32::MAX;

/// GE's memory alignment, as the plan aligns every tensor (`MEM_ALIGN_SIZE`).
const ALIGN: u64 = 512;

/// How the order was made, for reports and tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OrderStats {
    /// The most live bytes at any step (aligned), the arena of a one-stream plan of this order.
    pub peak_bytes: u64,
    /// Segments solved exactly, and those left to the heuristic.
    pub exact_segments: usize,
    pub heuristic_segments: usize,
}

/// The memory-aware order of every graph under the main-stream assignment `stream`, with the
/// byte limit `limit` for the gated heuristic (`0`: least memory wherever it can). Returns the
/// order of all nodes ([`Model::all_nodes`]'s structure) and the root graph's figures.
pub fn memory_first(model: &Model, stream: &IdVec<NodeId, Option<StreamId>>, limit: u64) -> (Vec<NodeId>, OrderStats) {
    let mut per_graph: IdVec<GraphId, Vec<NodeId>> = IdVec::filled(model.graphs.len(), Vec::new());
    let mut stats = OrderStats::default();
    for g in model.graphs.ids() {
        let facts = GraphFacts::of(model, g, stream);
        let (order, s) = facts.order(limit);
        per_graph[g] = facts.full_order(model, &order);
        if g == GraphId::ROOT {
            stats = s;
        }
    }
    (stitch(model, &per_graph), stats)
}

/// One tensor as the order sees it: aligned bytes, and the local bearing readers.
struct Tensor {
    bytes: u64,
    /// Local readers, ascending, without repeats.
    readers: Vec<u32>,
    /// Lives to the end of the graph (a graph output, or read from another graph).
    until_end: bool,
}

/// What the orders read of one graph: its bearing nodes (local indices in declaration order,
/// which is topological), their dependencies through non-bearing nodes, and the tensors.
struct GraphFacts {
    graph: GraphId,
    /// Bearing nodes, by local index.
    nodes: Vec<NodeId>,
    preds: Vec<Vec<u32>>,
    succs: Vec<Vec<u32>>,
    /// Bottom-level rank of each local node (0: the highest bottom level).
    rank: Vec<u32>,
    tensors: Vec<Tensor>,
    /// Tensors each local node produces, and those it reads.
    produces: Vec<Vec<u32>>,
    reads: Vec<Vec<u32>>,
    /// Bytes live before anything runs: every tensor there from the start with a use.
    start_live: u64,
}

fn aligned(b: u64) -> u64 {
    b.div_ceil(ALIGN) * ALIGN
}

impl GraphFacts {
    fn of(model: &Model, g: GraphId, stream: &IdVec<NodeId, Option<StreamId>>) -> Self {
        let all = &model.graphs[g].order;
        let bearing = |n: NodeId| model.nodes[n].tasks > 0 && stream[n].is_some();
        let mut local: IdVec<NodeId, u32> = IdVec::filled(model.nodes.len(), NONE);
        let nodes: Vec<NodeId> = all.iter().copied().filter(|&n| bearing(n)).collect();
        for (i, &n) in nodes.iter().enumerate() {
            local[n] = i as u32;
        }
        let m = nodes.len();
        // Dependencies between bearing nodes, through non-bearing nodes of the same graph.
        let mut reach: HashMap<NodeId, Vec<u32>> = HashMap::new();
        let mut preds: Vec<Vec<u32>> = vec![Vec::new(); m];
        for &n in all {
            let mut from: Vec<u32> = Vec::new();
            for e in model.in_edges(n) {
                if model.nodes[e.src].graph != g {
                    continue;
                }
                match local[e.src] {
                    NONE => from.extend(reach.get(&e.src).into_iter().flatten().copied()),
                    p => from.push(p),
                }
            }
            from.sort_unstable();
            from.dedup();
            match local[n] {
                NONE => {
                    reach.insert(n, from);
                }
                i => preds[i as usize] = from,
            }
        }
        drop(reach);
        let mut succs: Vec<Vec<u32>> = vec![Vec::new(); m];
        for (i, p) in preds.iter().enumerate() {
            for &q in p {
                succs[q as usize].push(i as u32);
            }
        }
        let mut level = IdVec::filled(model.nodes.len(), 0.0f64);
        let dur = |n: NodeId| node_cost(model, n);
        let succ_ids = |n: NodeId| succs[local[n] as usize].iter().map(|&s| nodes[s as usize]).collect::<Vec<_>>();
        fill_bottom_levels(&mut level, nodes.iter().rev().copied(), dur, succ_ids);
        let mut by_level: Vec<u32> = (0..m as u32).collect();
        by_level.sort_by(|&a, &b| level[nodes[b as usize]].total_cmp(&level[nodes[a as usize]]).then(a.cmp(&b)));
        let mut rank = vec![0u32; m];
        for (r, &i) in by_level.iter().enumerate() {
            rank[i as usize] = r as u32;
        }
        let mut f = GraphFacts {
            graph: g,
            nodes,
            preds,
            succs,
            rank,
            tensors: Vec::new(),
            produces: vec![Vec::new(); m],
            reads: vec![Vec::new(); m],
            start_live: 0,
        };
        f.add_tensors(model, g, &local, bearing);
        f
    }

    /// The tensors of the graph's nodes, as the plan's lifetimes define them (rule 8): one per
    /// output port with bytes of a node that is not a view, read through views.
    fn add_tensors(&mut self, model: &Model, g: GraphId, local: &IdVec<NodeId, u32>, bearing: impl Fn(NodeId) -> bool) {
        let mut walk = ViewWalk::default();
        for (n, port, bytes) in model.own_outputs(&model.graphs[g].order) {
            let (mut readers, mut elsewhere) = (Vec::new(), false);
            let until_end = walk.readers(model, n, port, |d| {
                if bearing(d) {
                    match local[d] {
                        // A reader in another graph: live to the end of this one.
                        r if r == NONE || model.nodes[d].graph != g => elsewhere = true,
                        r => readers.push(r),
                    }
                }
            }) || elsewhere;
            readers.sort_unstable();
            readers.dedup();
            let producer = Some(local[n]).filter(|&p| p != NONE);
            let t = self.tensors.len() as u32;
            let bytes = aligned(bytes);
            match producer {
                Some(p) => self.produces[p as usize].push(t),
                None if until_end || !readers.is_empty() => self.start_live += bytes,
                None => {}
            }
            for &r in &readers {
                self.reads[r as usize].push(t);
            }
            self.tensors.push(Tensor { bytes, readers, until_end });
        }
    }

    /// Bytes a node adds while it runs (its outputs), and the net change once it is done
    /// (outputs kept minus inputs it was the last to read), given each tensor's readers left.
    fn step(&self, i: usize, left: &[u32]) -> (u64, i64) {
        self.step_when(i, |t, _| left[t] == 1)
    }

    /// [`Self::step`] with `last(t, tensor)` saying whether node `i` is the last reader of its
    /// input `t`.
    fn step_when(&self, i: usize, last: impl Fn(usize, &Tensor) -> bool) -> (u64, i64) {
        let out: u64 = self.produces[i].iter().map(|&t| self.tensors[t as usize].bytes).sum();
        let mut net = out as i64;
        for &t in &self.produces[i] {
            let x = &self.tensors[t as usize];
            if x.readers.is_empty() && !x.until_end {
                net -= x.bytes as i64;
            }
        }
        for &t in &self.reads[i] {
            let x = &self.tensors[t as usize];
            if !x.until_end && last(t as usize, x) {
                net -= x.bytes as i64;
            }
        }
        (out, net)
    }

    /// The gated list order under `limit`, and its peak: the scheduling [`Engine`] with
    /// [`Gated`]'s choice, one node per round.
    fn gated(&self, limit: u64) -> (Vec<u32>, u64) {
        let m = self.nodes.len();
        let mut hooks = Gated {
            facts: self,
            limit,
            left: self.tensors.iter().map(|t| t.readers.len() as u32).collect(),
            ready: BinaryHeap::new(),
            live: self.start_live,
            peak: self.start_live,
            order: Vec::with_capacity(m),
            looked: Vec::with_capacity(SCAN),
        };
        let preds = self.preds.iter().enumerate().map(|(i, p)| (Local::new(i), p.len() as u32));
        Engine::new(UNITS).run(preds, |i: Local| self.succs[i.index()].iter().map(|&s| Local(s)), &mut hooks);
        (hooks.order, hooks.peak)
    }

    /// The nodes every other node is an ancestor or a descendant of, in order: the segment
    /// ends. A node at position `k` is one exactly when no edge jumps over `k`, no node before
    /// it is a sink and no node after it a source (declaration order is topological).
    fn cuts(&self) -> Vec<usize> {
        let m = self.nodes.len();
        let mut over = vec![0i32; m + 1];
        for (b, p) in self.preds.iter().enumerate() {
            for &a in p {
                let a = a as usize;
                if b > a + 1 {
                    over[a + 1] += 1;
                    over[b] -= 1;
                }
            }
        }
        let mut sink_before = vec![false; m + 1];
        for k in 0..m {
            sink_before[k + 1] = sink_before[k] || self.succs[k].is_empty();
        }
        let mut source_after = vec![false; m + 1];
        for k in (0..m).rev() {
            source_after[k] = source_after[k + 1] || self.preds[k].is_empty();
        }
        let mut cuts = Vec::new();
        let mut crossing = 0i32;
        for k in 0..m {
            crossing += over[k];
            if crossing == 0 && !sink_before[k] && !source_after[k + 1] {
                cuts.push(k);
            }
        }
        if cuts.last() != Some(&(m.wrapping_sub(1))) && m > 0 {
            cuts.push(m - 1);
        }
        cuts
    }

    /// The order of the bearing nodes: the gated heuristic when it fits `limit`, otherwise
    /// the least-memory order (exact per segment where small enough, the heuristic at
    /// `L = 0` elsewhere).
    fn order(&self, limit: u64) -> (Vec<u32>, OrderStats) {
        let (gated, gated_peak) = self.gated(limit);
        if gated_peak <= limit || self.nodes.is_empty() {
            return (gated, OrderStats { peak_bytes: gated_peak, ..OrderStats::default() });
        }
        // The heuristic's best: the least-memory greedy or the plain bottom-level order.
        let (greedy, greedy_peak) = if limit == 0 { (gated, gated_peak) } else { self.gated(0) };
        let (greedy, greedy_peak) = match self.gated(u64::MAX) {
            (o, p) if p < greedy_peak => (o, p),
            _ => (greedy, greedy_peak),
        };
        let mut pos = vec![0u32; self.nodes.len()];
        for (k, &i) in greedy.iter().enumerate() {
            pos[i as usize] = k as u32;
        }
        let mut stats = OrderStats::default();
        let mut out = Vec::with_capacity(self.nodes.len());
        let mut left: Vec<u32> = self.tensors.iter().map(|t| t.readers.len() as u32).collect();
        let (mut live, mut peak) = (self.start_live, self.start_live);
        let mut start = 0usize;
        let mut work = MAX_WORK;
        for end in self.cuts() {
            let seg: Vec<u32> = (start as u32..=end as u32).collect();
            let exact = self.exact(&seg, live, greedy_peak, &mut work);
            let part = match exact {
                Some(p) => {
                    stats.exact_segments += 1;
                    p
                }
                None => {
                    stats.heuristic_segments += 1;
                    let mut p = seg.clone();
                    p.sort_by_key(|&i| pos[i as usize]);
                    p
                }
            };
            for &i in &part {
                let (o, net) = self.step(i as usize, &left);
                peak = peak.max(live + o);
                live = (live as i64 + net) as u64;
                for &t in &self.reads[i as usize] {
                    left[t as usize] -= 1;
                }
            }
            out.extend(part);
            start = end + 1;
        }
        if peak > greedy_peak {
            // Never worse than the heuristic (the exact segments can only lower the peak).
            return (greedy, OrderStats { peak_bytes: greedy_peak, ..stats });
        }
        (out, OrderStats { peak_bytes: peak, ..stats })
    }

    /// The least-peak order of one segment (local indices `seg`, consecutive), starting with
    /// `live` bytes (the segments before it run); `None` when it takes more than [`MAX_STATES`]
    /// sets or more than `work` steps. States with a peak over `bound` are dropped.
    fn exact(&self, seg: &[u32], live0: u64, bound: u64, work: &mut usize) -> Option<Vec<u32>> {
        let n = seg.len();
        if n > MAX_SEGMENT || n > *work {
            return None;
        }
        if n <= 1 {
            return Some(seg.to_vec());
        }
        let base = seg[0] as usize;
        let words = n.div_ceil(64);
        let has = |set: &[u64], i: usize| set[(i - base) / 64] >> ((i - base) % 64) & 1 == 1;
        // A state: its set, peak, live bytes, parent state and the node that reached it.
        struct State {
            set: Vec<u64>,
            peak: u64,
            live: u64,
            parent: u32,
            node: u32,
        }
        let mut states: Vec<State> =
            vec![State { set: vec![0; words], peak: 0, live: live0, parent: u32::MAX, node: u32::MAX }];
        let mut level: Vec<u32> = vec![0];
        for _ in 0..n {
            let mut next: HashMap<Vec<u64>, u32> = HashMap::new();
            for &si in &level {
                // The graph's effort bound: a segment that would pass it keeps the heuristic.
                *work = work.checked_sub(n)?;
                for &i in seg {
                    let i = i as usize;
                    let s = &states[si as usize];
                    if has(&s.set, i) || self.preds[i].iter().any(|&p| p as usize >= base && !has(&s.set, p as usize)) {
                        continue;
                    }
                    // Readers before the segment ran; after it, they are still to run.
                    let (out, net) = self.step_when(i, |_, x| {
                        x.readers.iter().all(|&r| {
                            let r = r as usize;
                            r < base || r == i || (r < base + n && has(&s.set, r))
                        })
                    });
                    let peak = s.peak.max(s.live + out);
                    if peak > bound {
                        continue;
                    }
                    let live = (s.live as i64 + net) as u64;
                    let mut set = s.set.clone();
                    set[(i - base) / 64] |= 1 << ((i - base) % 64);
                    match next.get(&set) {
                        Some(&k) if states[k as usize].peak <= peak => {}
                        Some(&k) => {
                            let st = &mut states[k as usize];
                            st.peak = peak;
                            st.parent = si;
                            st.node = i as u32;
                        }
                        None => {
                            if states.len() >= MAX_STATES {
                                return None;
                            }
                            next.insert(set.clone(), states.len() as u32);
                            states.push(State { set, peak, live, parent: si, node: i as u32 });
                        }
                    }
                }
            }
            if next.is_empty() {
                return None;
            }
            let mut lv: Vec<u32> = next.into_values().collect();
            lv.sort_unstable();
            level = lv;
        }
        let mut best = level[0];
        for &k in &level {
            if states[k as usize].peak < states[best as usize].peak {
                best = k;
            }
        }
        let mut path = Vec::with_capacity(n);
        let mut k = best;
        while states[k as usize].parent != u32::MAX {
            path.push(states[k as usize].node);
            k = states[k as usize].parent;
        }
        path.reverse();
        Some(path)
    }

    /// The graph's whole order from the bearing nodes' order: every other node as soon as it is
    /// ready (declaration order among them), each bearing node in its turn.
    fn full_order(&self, model: &Model, bearing_order: &[u32]) -> Vec<NodeId> {
        let all = &model.graphs[self.graph].order;
        let mut at: IdVec<NodeId, u32> = IdVec::filled(model.nodes.len(), NONE);
        for (k, &n) in all.iter().enumerate() {
            at[n] = k as u32;
        }
        let mut waiting: Vec<u32> =
            all.iter().map(|&n| model.in_edges(n).filter(|e| at[e.src] != NONE).count() as u32).collect();
        let is_bearing: Vec<bool> = {
            let mut b = vec![false; all.len()];
            for &n in &self.nodes {
                b[at[n] as usize] = true;
            }
            b
        };
        let mut ready: BinaryHeap<std::cmp::Reverse<u32>> = (0..all.len() as u32)
            .filter(|&k| waiting[k as usize] == 0 && !is_bearing[k as usize])
            .map(std::cmp::Reverse)
            .collect();
        let mut out = Vec::with_capacity(all.len());
        let mut release = |k: usize, ready: &mut BinaryHeap<std::cmp::Reverse<u32>>, out: &mut Vec<NodeId>| {
            out.push(all[k]);
            for e in model.out_edges(all[k]) {
                let d = at[e.dst];
                if d != NONE {
                    waiting[d as usize] -= 1;
                    if waiting[d as usize] == 0 && !is_bearing[d as usize] {
                        ready.push(std::cmp::Reverse(d));
                    }
                }
            }
        };
        for &b in bearing_order {
            while let Some(std::cmp::Reverse(k)) = ready.pop() {
                release(k as usize, &mut ready, &mut out);
            }
            release(at[self.nodes[b as usize]] as usize, &mut ready, &mut out);
        }
        while let Some(std::cmp::Reverse(k)) = ready.pop() {
            release(k as usize, &mut ready, &mut out);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::synth::{Family, generate, with_tensor_sizes};

    /// A synthetic model with every node's outputs sized at random (the families carry no sizes).
    fn sized(family: Family, nodes: usize, seed: u64) -> Model {
        let mut m = generate(family, nodes, seed).unwrap();
        with_tensor_sizes(&mut m, seed);
        m
    }

    fn one_stream(m: &Model) -> IdVec<NodeId, Option<StreamId>> {
        m.nodes.iter().map(|_| Some(StreamId(0))).collect()
    }

    /// The peak of a bearing order, stepping as the orders do.
    fn peak_of(f: &GraphFacts, order: &[u32]) -> u64 {
        let mut left: Vec<u32> = f.tensors.iter().map(|t| t.readers.len() as u32).collect();
        let (mut live, mut peak) = (f.start_live, f.start_live);
        for &i in order {
            let (o, net) = f.step(i as usize, &left);
            peak = peak.max(live + o);
            live = (live as i64 + net) as u64;
            for &t in &f.reads[i as usize] {
                left[t as usize] -= 1;
            }
        }
        peak
    }

    /// The least peak over every topological order, by brute force.
    fn brute(f: &GraphFacts, done: &mut Vec<bool>, order: &mut Vec<u32>, best: &mut u64) {
        if order.len() == f.nodes.len() {
            *best = (*best).min(peak_of(f, order));
            return;
        }
        for i in 0..f.nodes.len() {
            if !done[i] && f.preds[i].iter().all(|&p| done[p as usize]) {
                done[i] = true;
                order.push(i as u32);
                brute(f, done, order, best);
                order.pop();
                done[i] = false;
            }
        }
    }

    fn is_topological(m: &Model, order: &[NodeId]) -> bool {
        let mut at = IdVec::filled(m.nodes.len(), usize::MAX);
        for (k, &n) in order.iter().enumerate() {
            at[n] = k;
        }
        order.len() == m.nodes.len() && m.edges.iter().all(|e| at[e.src] < at[e.dst])
    }

    #[test]
    fn the_exact_order_is_the_least_peak_on_small_graphs() {
        for seed in 0..40 {
            let family = [Family::Layered { width: 3 }, Family::Inception, Family::Random { window: Some(4) }]
                [seed as usize % 3];
            let m = sized(family, 9, seed);
            let f = GraphFacts::of(&m, GraphId::ROOT, &one_stream(&m));
            let mut best = u64::MAX;
            brute(&f, &mut vec![false; f.nodes.len()], &mut Vec::new(), &mut best);
            let (order, stats) = f.order(0);
            assert_eq!(peak_of(&f, &order), stats.peak_bytes, "seed {seed}");
            assert_eq!(stats.peak_bytes, best, "seed {seed}: {stats:?}");
            assert_eq!(stats.heuristic_segments, 0);
        }
    }

    #[test]
    fn orders_are_topological_and_never_above_the_heuristic() {
        for (k, family) in
            [Family::Layered { width: 8 }, Family::Inception, Family::Transformer, Family::Random { window: Some(32) }]
                .into_iter()
                .enumerate()
        {
            let m = sized(family, 600, 7 + k as u64);
            let stream = one_stream(&m);
            let f = GraphFacts::of(&m, GraphId::ROOT, &stream);
            let (_, greedy) = f.gated(0);
            let (_, critical) = f.gated(u64::MAX);
            for limit in [0, greedy, (greedy + critical) / 2, u64::MAX] {
                let (order, stats) = memory_first(&m, &stream, limit);
                assert!(is_topological(&m, &order), "{} limit {limit}", m.name);
                assert!(stats.peak_bytes <= greedy.max(limit.min(critical)), "{} limit {limit}: {stats:?}", m.name);
            }
            // Without a limit that binds, the gated order is the critical path first.
            let (order, stats) = f.gated(u64::MAX);
            assert_eq!(stats, critical);
            let mut by_rank = order.clone();
            by_rank.sort_by_key(|&i| f.rank[i as usize]);
            assert_eq!(order[0], by_rank[0]);
        }
    }
}
