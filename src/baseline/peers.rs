//! The four assignment rules, each on the task graph ([`super::TaskGraph`]): a stream per
//! node (dense index) and the waits (record index, wait index), both in the peer's own terms.
//! Sources and departures: docs/peers.md.

use petgraph::algo::maximum_matching;
use petgraph::algo::tred::{dag_to_toposorted_adjacency_list, dag_transitive_reduction_closure};
use petgraph::graph::{DiGraph, NodeIndex, UnGraph};
use petgraph::visit::{EdgeRef, IntoNeighbors};

use super::TaskGraph;
use crate::graph::Model;

/// Streams (index = task node) and waits (record, wait).
type Answer = (Vec<u32>, Vec<(usize, usize)>);

/// The task graph as a petgraph digraph, node index = dense index (a topological order).
fn digraph(g: &TaskGraph) -> DiGraph<(), ()> {
    let mut d = DiGraph::with_capacity(g.len(), g.preds.iter().map(Vec::len).sum());
    for _ in 0..g.len() {
        d.add_node(());
    }
    for (v, ps) in g.preds.iter().enumerate() {
        for &u in ps {
            d.add_edge(NodeIndex::new(u), NodeIndex::new(v), ());
        }
    }
    d
}

/// The transitive reduction and closure (successor lists, dense indices), by petgraph.
fn reduction_closure(g: &TaskGraph) -> (Vec<Vec<usize>>, Vec<Vec<usize>>) {
    let d = digraph(g);
    // Dense indices are already a topological order.
    let topo: Vec<NodeIndex> = (0..g.len()).map(NodeIndex::new).collect();
    let (list, _) = dag_to_toposorted_adjacency_list::<_, u32>(&d, &topo);
    let (red, clo) = dag_transitive_reduction_closure(&list);
    let succ = |l: &petgraph::adj::List<(), u32>| -> Vec<Vec<usize>> {
        (0..g.len())
            .map(|i| {
                let mut v: Vec<usize> = l.neighbors(i as u32).map(|x| x as usize).collect();
                v.sort_unstable();
                v
            })
            .collect()
    };
    (succ(&red), succ(&clo))
}

/// The waits of "one per cross-stream input": every (u, v) dependency whose ends differ, in
/// the waiting node's order, then the record's.
fn every_cross_edge(g: &TaskGraph, stream: &[u32]) -> Vec<(usize, usize)> {
    let mut w = Vec::new();
    for (v, ps) in g.preds.iter().enumerate() {
        for &u in ps {
            if stream[u] != stream[v] {
                w.push((u, v));
            }
        }
    }
    w
}

/// Matrix multiplications and convolutions: what XLA's legacy pass ran as cuBLAS / cuDNN
/// calls and coloured apart.
pub(super) fn gemm_like(op_type: &str) -> bool {
    let t = op_type.to_ascii_lowercase();
    t.contains("matmul") || t.contains("gemm") || t.starts_with("conv") || t.contains("convolution")
}

/// XLA's legacy `StreamAssignment` (tensorflow `service/gpu/stream_assignment.cc`, paraphrased
/// in docs/peers.md): in topological order, a non-GEMM op takes the highest stream among its
/// operands (0 without one); a GEMM takes the lowest existing stream that no earlier GEMM
/// unordered with it holds, else a new one. The waits depend on the order: [`xla_waits`].
pub fn xla(model: &Model, g: &TaskGraph) -> Answer {
    let (_, closure) = reduction_closure(g);
    let ordered = |u: usize, v: usize| closure[u].binary_search(&v).is_ok() || closure[v].binary_search(&u).is_ok();
    let mut stream = vec![0u32; g.len()];
    let mut count = 0u32;
    let mut gemms: Vec<usize> = Vec::new();
    for v in 0..g.len() {
        let s = if gemm_like(&model.nodes[g.order[v]].op_type) {
            let taken: std::collections::BTreeSet<u32> =
                gemms.iter().filter(|&&u| !ordered(u, v)).map(|&u| stream[u]).collect();
            gemms.push(v);
            (0..count).find(|s| !taken.contains(s)).unwrap_or(count)
        } else {
            g.preds[v].iter().map(|&u| stream[u]).max().unwrap_or(0)
        };
        stream[v] = s;
        count = count.max(s + 1);
    }
    (stream, Vec::new())
}

/// XLA's waits (`thunk_schedule.cc`) over the order the streams will run in (`run`, dense
/// indices): on each operand on another stream, unless the waiting stream already waited on
/// that stream at that operand's position or later (a stream × stream last-wait matrix).
pub fn xla_waits(g: &TaskGraph, stream: &[u32], run: &[usize]) -> Vec<(usize, usize)> {
    let k = stream.iter().map(|&s| s as usize + 1).max().unwrap_or(0);
    let mut pos = vec![0usize; g.len()];
    let mut len = vec![0usize; k];
    for &v in run {
        pos[v] = len[stream[v] as usize];
        len[stream[v] as usize] += 1;
    }
    let mut last: Vec<Option<usize>> = vec![None; k * k];
    let mut waits = Vec::new();
    for &v in run {
        let a = stream[v] as usize;
        for &u in &g.preds[v] {
            let b = stream[u] as usize;
            if a == b || last[a * k + b].is_some_and(|p| p >= pos[u]) {
                continue;
            }
            last[a * k + b] = Some(pos[u]);
            waits.push((u, v));
        }
    }
    waits
}

/// Nimble (`snuspl/nimble` `DAGDecomposition.cpp`): the minimum equivalent graph (transitive
/// reduction), a maximum bipartite matching on its edges (u out -> v in), and the matched
/// edges chained into node-disjoint paths, one stream each, numbered by their first node. The
/// runtime waits on every cross-stream parent edge.
pub fn nimble(g: &TaskGraph) -> Answer {
    let (reduction, _) = reduction_closure(g);
    let n = g.len();
    // Bipartite graph: 0..n the "out" sides, n..2n the "in" sides.
    let mut b: UnGraph<(), ()> = UnGraph::with_capacity(2 * n, reduction.iter().map(Vec::len).sum());
    for _ in 0..2 * n {
        b.add_node(());
    }
    for (u, succ) in reduction.iter().enumerate() {
        for &v in succ {
            b.add_edge(NodeIndex::new(u), NodeIndex::new(n + v), ());
        }
    }
    let m = maximum_matching(&b);
    let mut next: Vec<Option<usize>> = vec![None; n];
    let mut has_prev = vec![false; n];
    for e in b.edge_references() {
        let (u, v) = (e.source().index(), e.target().index() - n);
        if m.contains_edge(e.source(), e.target()) {
            next[u] = Some(v);
            has_prev[v] = true;
        }
    }
    let mut stream = vec![u32::MAX; n];
    for (chain, head) in (0..n).filter(|&h| !has_prev[h]).enumerate() {
        let mut v = Some(head);
        while let Some(x) = v {
            stream[x] = chain as u32;
            v = next[x];
        }
    }
    let waits = every_cross_edge(g, &stream);
    (stream, waits)
}

/// Opara (`OparaSys/Opara` `StreamAllocator.py`): in topological order, a node that is the
/// first user of one of its inputs takes that input's stream (the first such input); any other
/// node opens a new stream, never reused. A wait on every input on another stream.
pub fn opara(g: &TaskGraph) -> Answer {
    let n = g.len();
    let mut first_user: Vec<Option<usize>> = vec![None; n];
    for v in 0..n {
        for &u in &g.preds[v] {
            first_user[u].get_or_insert(v);
        }
    }
    let mut stream = vec![0u32; n];
    let mut count = 0u32;
    for v in 0..n {
        stream[v] = match g.preds[v].iter().find(|&&u| first_user[u] == Some(v)) {
            Some(&u) => stream[u],
            None => {
                count += 1;
                count - 1
            }
        };
    }
    let waits = every_cross_edge(g, &stream);
    (stream, waits)
}

/// ONNX Runtime's `DeviceBasedPartitioner`: one stream per device, here per engine, numbered
/// in order of first appearance. A wait (notification + barrier) on every cross-stream edge.
pub fn ort(model: &Model, g: &TaskGraph) -> Answer {
    let mut ids: Vec<crate::graph::EngineId> = Vec::new();
    let stream: Vec<u32> = g
        .order
        .iter()
        .map(|&n| {
            let e = model.nodes[n].engine;
            match ids.iter().position(|&x| x == e) {
                Some(i) => i as u32,
                None => {
                    ids.push(e);
                    ids.len() as u32 - 1
                }
            }
        })
        .collect();
    let waits = every_cross_edge(g, &stream);
    (stream, waits)
}
