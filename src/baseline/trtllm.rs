//! TensorRT-LLM's automatic multi-stream pass (NVIDIA/TensorRT-LLM
//! `tensorrt_llm/_torch/compilation/multi_stream/auto_multi_stream.py`, `MultiStreamDAG`),
//! re-implemented on the task graph ([`super::TaskGraph`]); departures in docs/peers.md.
//!
//! - Each node has a weight: its own table (`estimate_time`: MoE 20, GEMM 10, views 0, any
//!   other op 1), or in the `cost` variant its `cost_us`.
//! - Its priority is its distance to the exit: the longest path of weights to a sink, its own
//!   weight excluded (`compute_distance`); ties go to the earlier node in graph order.
//! - A ready node (every producer assigned) goes, highest priority first, to the first of the
//!   `N` streams whose tail ends no later than the node's ready time (the latest end of its
//!   producers), else to the stream whose tail ends first (`pick_stream`); it ends at
//!   max(ready, tail) + weight. A zero-weight node goes to its first producer's stream (stream
//!   0 without one).
//! - Every producer consumed on another stream records one event; every cross-stream edge
//!   waits on it (no pruning).
//! - Each stream runs its nodes in the order they were assigned.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::TaskGraph;
use crate::compile::schedule::{Engine, Hooks, UNITS};
use crate::graph::Model;
use crate::graph::ids::define_index;

/// TRT-LLM's weight for an op type (`estimate_time`): MoE 20, GEMM 10, views 0, other 1.
pub fn table_weight(op_type: &str) -> f64 {
    let t = op_type.to_ascii_lowercase();
    if t.contains("moe") {
        20.0
    } else if super::peers::gemm_like(op_type) {
        10.0
    } else if VIEWS.contains(&t.as_str()) {
        0.0
    } else {
        1.0
    }
}

/// Op types that only re-describe a tensor: the view ops TRT-LLM's table gives no cost
/// (`view`, `alias`, `permute`, `getitem`), in the graph format's spellings.
const VIEWS: [&str; 10] = [
    "reshape",
    "view",
    "permute",
    "transpose",
    "squeeze",
    "unsqueeze",
    "flatten",
    "identity",
    "selectview",
    "expanddims",
];

/// The pass's answer on the task graph: a stream per node, the waits (producer, consumer), and
/// the order the nodes were assigned in (each stream runs its nodes in it).
pub struct Answer {
    pub stream: Vec<u32>,
    pub waits: Vec<(usize, usize)>,
    pub order: Vec<usize>,
}

/// The assignment onto at most `streams` streams (at least one), weights by the table or, with
/// `cost`, by each node's `cost_us`.
pub fn assign(model: &Model, g: &TaskGraph, streams: u32, cost: bool) -> Answer {
    let n = g.len();
    let weight: Vec<f64> = g
        .order
        .iter()
        .map(|&v| {
            let node = &model.nodes[v];
            if cost { node.cost_us.max(0.0) } else { table_weight(&node.op_type) }
        })
        .collect();
    let mut succ = vec![Vec::new(); n];
    for (v, ps) in g.preds.iter().enumerate() {
        for &u in ps {
            succ[u].push(v);
        }
    }
    // Distance to the exit, own weight excluded: dense indices are a topological order.
    let mut distance = vec![0.0f64; n];
    for u in (0..n).rev() {
        distance[u] = succ[u].iter().map(|&v| weight[v] + distance[v]).fold(0.0, f64::max);
    }
    let mut hooks = Pass {
        g,
        weight: &weight,
        distance: &distance,
        ready: BinaryHeap::new(),
        tail: vec![0.0f64; streams.max(1) as usize],
        end: vec![0.0f64; n],
        stream: vec![0u32; n],
        order: Vec::with_capacity(n),
    };
    let preds = g.preds.iter().enumerate().map(|(v, p)| (Vertex::new(v), p.len() as u32));
    Engine::new(UNITS).run(preds, |v: Vertex| succ[v.index()].iter().map(|&w| Vertex::new(w)), &mut hooks);
    let Pass { stream, order, .. } = hooks;
    // A wait on every cross-stream edge, in assignment order (each on its producer's event).
    let mut waits = Vec::new();
    for &v in &order {
        waits.extend(g.preds[v].iter().filter(|&&u| stream[u] != stream[v]).map(|&u| (u, v)));
    }
    Answer { stream, waits, order }
}

define_index!(
    /// A node of the task graph, as the scheduling engine sees it.
    Vertex
);

/// The pass on the scheduling [`Engine`], which keeps no clock here: each round assigns the
/// ready node with the highest priority and finishes it at once, which releases its successors
/// before the next choice; its end is the pass's own arithmetic.
struct Pass<'a> {
    g: &'a TaskGraph,
    weight: &'a [f64],
    distance: &'a [f64],
    ready: BinaryHeap<Ready>,
    tail: Vec<f64>,
    end: Vec<f64>,
    stream: Vec<u32>,
    order: Vec<usize>,
}

impl Hooks<Vertex> for Pass<'_> {
    fn ready(&mut self, v: Vertex, _: &mut Engine<Vertex>) {
        let v = v.index();
        self.ready.push(Ready { distance: self.distance[v], index: Reverse(v) });
    }

    fn dispatch(&mut self, eng: &mut Engine<Vertex>) {
        let Some(Ready { index: Reverse(v), .. }) = self.ready.pop() else { return };
        let preds = &self.g.preds[v];
        let at = preds.iter().map(|&u| self.end[u]).fold(0.0, f64::max);
        let s = if self.weight[v] == 0.0 {
            preds.first().map_or(0, |&u| self.stream[u] as usize)
        } else {
            pick(&self.tail, at)
        };
        self.stream[v] = s as u32;
        self.end[v] = at.max(self.tail[s]) + self.weight[v];
        self.tail[s] = self.end[v];
        self.order.push(v);
        eng.finish_now(Vertex::new(v));
    }
}

/// `pick_stream`: the first stream whose tail ends by `at`, else the one that ends first
/// (the first of equals).
fn pick(tail: &[f64], at: f64) -> usize {
    if let Some(s) = tail.iter().position(|&t| t <= at) {
        return s;
    }
    let mut best = 0;
    for (s, &t) in tail.iter().enumerate() {
        if t < tail[best] {
            best = s;
        }
    }
    best
}

/// A ready node's priority: the longer distance first, then the earlier node.
#[derive(Clone, Copy, PartialEq)]
struct Ready {
    distance: f64,
    index: Reverse<usize>,
}

impl Eq for Ready {}

impl PartialOrd for Ready {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ready {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.distance.total_cmp(&other.distance).then(self.index.cmp(&other.index))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fork into a long GEMM branch and a short one that meet again, and a view.
    fn graph() -> (Model, TaskGraph) {
        let m = crate::graph::json::load_str(include_str!("../../tests/fixtures/peers/fork_gemm_branch_and_view.json"))
            .unwrap();
        let g = TaskGraph::of(&m);
        (m, g)
    }

    #[test]
    fn table_weights_follow_the_pass() {
        assert_eq!(table_weight("MatMul"), 10.0);
        assert_eq!(table_weight("FusedMoe"), 20.0);
        assert_eq!(table_weight("Reshape"), 0.0);
        assert_eq!(table_weight("Relu"), 1.0);
    }

    #[test]
    fn own_weights_and_cost_weights_place_the_branches_differently() {
        let (m, g) = graph();
        // Table weights: a's distance is 21, g1's 11, g2's and r's 1 (g2 first, the earlier
        // node). g1 and g2 follow a on stream 0 (its tail ends at their ready times); r, ready
        // at 1, finds stream 0 busy till 21 and takes stream 1; v, a view, follows r; d waits
        // on v across streams.
        let a = assign(&m, &g, 2, false);
        assert_eq!(a.order, [0, 1, 2, 3, 4, 5]);
        assert_eq!(a.stream, [0, 0, 0, 1, 1, 0]);
        assert_eq!(a.waits, [(0, 3), (4, 5)]);
        // By cost: r's distance (2) now beats g2's (1), so r is placed before g2, on stream 1
        // (stream 0 busy till 3); v (cost 1, ready at 10) goes back to stream 0, whose tail
        // (g2, ending at 5) ends by then.
        let c = assign(&m, &g, 2, true);
        assert_eq!(c.order, [0, 1, 3, 2, 4, 5]);
        assert_eq!(c.stream, [0, 0, 0, 1, 0, 0]);
        assert_eq!(c.waits, [(0, 3), (3, 4)]);
        // One stream: everything on it, no wait.
        let one = assign(&m, &g, 1, false);
        assert!(one.stream.iter().all(|&s| s == 0) && one.waits.is_empty());
    }
}
