//! GE's "MiniDAGStreamPass" custom stream pass (`dag_stream_allocator_pass.cc`,
//! ge-compiler.md §4.11) for the `LoadBalance[:N]`, `MainStream:N` and
//! `WeightedLoadBalance:N` auto multi-stream modes.
//!
//! The root graph's cost-bearing nodes (tasks > 0) with a stream, leaving out labelled nodes
//! and independent-engine (HCCL) nodes, form a DAG over the direct edges between them. A
//! minimum vertex-disjoint path cover (maximum matching by Hopcroft–Karp, O(E·√V)) gives the
//! fewest chains that can each run in order on one stream; the chains are then merged into at
//! most N streams (default 8):
//! * `LoadBalance`: chains by decreasing cost, each onto the least-loaded stream;
//! * `MainStream`: the costliest chain alone on the first stream, the rest balanced over the
//!   other N-1 (all on one stream when N = 1);
//! * `WeightedLoadBalance`: as LoadBalance, with a node's cost weighted by the compute units
//!   it occupies (`cost_us · max(cores, 1)`), so wide kernels spread first.
//!
//! Chain cost is the sum of `cost_us` (of `tasks` when the graph carries no costs). Every
//! merged stream takes a fresh id, in the order of its first node. Zero-task nodes that had a
//! stream follow their first data producer that moved. The refresh that follows removes the
//! streams left empty.

use super::LogicalState;
use crate::error::Result;
use crate::graph::{AutoMultistreamMode, EdgeKind, GraphId, NodeId, StreamId};

/// The stream cap when the mode names none.
pub const DEFAULT_MAX_STREAMS: u32 = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Strategy {
    LoadBalance,
    MainStream,
    Weighted,
}

/// Runs the pass when `mode` is a DAG mode; otherwise does nothing.
pub fn run(st: &mut LogicalState<'_>, mode: AutoMultistreamMode) -> Result<()> {
    let (strategy, cap) = match mode {
        AutoMultistreamMode::LoadBalance(n) => (Strategy::LoadBalance, n.unwrap_or(DEFAULT_MAX_STREAMS)),
        AutoMultistreamMode::MainStream(n) => (Strategy::MainStream, n),
        AutoMultistreamMode::WeightedLoadBalance(n) => (Strategy::Weighted, n),
        _ => return Ok(()),
    };
    let model = st.model;
    let g = GraphId::ROOT;
    let order = &model.graphs[g].order;
    let base = model.graphs[g].nodes.first().map_or(0, |n| n.index());
    // Vertex index of each graph position; u32::MAX = not in the DAG.
    let mut vid = vec![u32::MAX; order.len()];
    let mut verts: Vec<NodeId> = Vec::new();
    for &n in order {
        let node = &model.nodes[n];
        if node.tasks > 0
            && st.node_stream[n].is_some()
            && st.node_label(n).is_none()
            && !model.engines[st.engines.as_ref().map_or(node.engine, |e| e[n])].independent
        {
            vid[n.index() - base] = verts.len() as u32;
            verts.push(n);
        }
    }
    if verts.is_empty() {
        return Ok(());
    }
    let mut adj_start = vec![0u32; verts.len() + 1];
    let mut adj: Vec<u32> = Vec::new();
    let mut succ: Vec<u32> = Vec::new();
    for (u, &n) in verts.iter().enumerate() {
        succ.clear();
        succ.extend(model.out_edges(n).map(|e| vid[e.dst.index() - base]).filter(|&v| v != u32::MAX));
        succ.sort_unstable();
        succ.dedup();
        adj.extend_from_slice(&succ);
        adj_start[u + 1] = adj.len() as u32;
    }
    let next = hopcroft_karp(verts.len(), &adj_start, &adj);

    // Chains: start at every vertex that is nobody's matched successor.
    let mut has_pred = vec![false; verts.len()];
    for &v in next.iter().filter(|&&v| v != u32::MAX) {
        has_pred[v as usize] = true;
    }
    let weight = |n: NodeId| {
        let node = &model.nodes[n];
        match strategy {
            Strategy::Weighted => node.cost_us * f64::from(node.cores.max(1)),
            _ => node.cost_us,
        }
    };
    let use_tasks = verts.iter().all(|&n| weight(n) == 0.0);
    let mut chains: Vec<(f64, Vec<u32>)> = Vec::new();
    for start in 0..verts.len() as u32 {
        if has_pred[start as usize] {
            continue;
        }
        let mut chain = Vec::new();
        let mut cost = 0.0;
        let mut v = start;
        while v != u32::MAX {
            let n = verts[v as usize];
            cost += if use_tasks { f64::from(model.nodes[n].tasks) } else { weight(n) };
            chain.push(v);
            v = next[v as usize];
        }
        chains.push((cost, chain));
    }
    // Heaviest first; ties by the chain's first node (vertices are in topological order).
    chains.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1[0].cmp(&b.1[0])));
    let bins = (cap as usize).min(chains.len()).max(1);
    let mut load = vec![0.0f64; bins];
    let mut bin_of_chain = vec![0usize; chains.len()];
    for (i, (cost, _)) in chains.iter().enumerate() {
        let range = match strategy {
            Strategy::MainStream if i == 0 || bins == 1 => 0..1,
            Strategy::MainStream => 1..bins,
            _ => 0..bins,
        };
        let b = range.clone().min_by(|&x, &y| load[x].total_cmp(&load[y]).then(x.cmp(&y))).unwrap_or(0);
        load[b] += cost;
        bin_of_chain[i] = b;
    }
    // Fresh ids in the order of each bin's first vertex.
    let mut bin_first = vec![u32::MAX; bins];
    for (i, (_, chain)) in chains.iter().enumerate() {
        let b = bin_of_chain[i];
        bin_first[b] = bin_first[b].min(chain[0]);
    }
    let mut bin_order: Vec<usize> = (0..bins).filter(|&b| bin_first[b] != u32::MAX).collect();
    bin_order.sort_by_key(|&b| bin_first[b]);
    let mut bin_stream = vec![StreamId(0); bins];
    for b in bin_order {
        bin_stream[b] = st.fresh_stream();
    }
    let mut moved = vec![false; order.len()];
    for (i, (_, chain)) in chains.iter().enumerate() {
        for &v in chain {
            let n = verts[v as usize];
            st.node_stream[n] = Some(bin_stream[bin_of_chain[i]]);
            moved[n.index() - base] = true;
        }
    }
    for &n in order {
        let node = &model.nodes[n];
        if node.tasks > 0 || st.node_stream[n].is_none() || st.node_label(n).is_some() {
            continue;
        }
        let producer =
            model.in_edges(n).filter(|e| e.kind == EdgeKind::Data).map(|e| e.src).find(|&p| moved[p.index() - base]);
        if let Some(p) = producer {
            st.node_stream[n] = st.node_stream[p];
            moved[n.index() - base] = true;
        }
    }
    Ok(())
}

/// Maximum bipartite matching of a DAG's out-copies to its in-copies. Returns, per vertex,
/// its matched successor (`u32::MAX` = none). Iterative DFS, so depth is no concern.
pub fn hopcroft_karp(n: usize, adj_start: &[u32], adj: &[u32]) -> Vec<u32> {
    const NONE: u32 = u32::MAX;
    let mut match_l = vec![NONE; n];
    let mut match_r = vec![NONE; n];
    let mut dist = vec![0u32; n];
    let mut queue: Vec<u32> = Vec::with_capacity(n);
    let mut it = vec![0u32; n];
    let mut stack: Vec<u32> = Vec::new();
    // Greedy start: most vertices of a layered graph match on the first try.
    for u in 0..n {
        for &v in &adj[adj_start[u] as usize..adj_start[u + 1] as usize] {
            if match_r[v as usize] == NONE {
                match_l[u] = v;
                match_r[v as usize] = u as u32;
                break;
            }
        }
    }
    loop {
        // BFS layers from free left vertices.
        queue.clear();
        for u in 0..n {
            if match_l[u] == NONE {
                dist[u] = 0;
                queue.push(u as u32);
            } else {
                dist[u] = NONE;
            }
        }
        let mut found = false;
        let mut head = 0;
        while head < queue.len() {
            let u = queue[head] as usize;
            head += 1;
            for &v in &adj[adj_start[u] as usize..adj_start[u + 1] as usize] {
                let w = match_r[v as usize];
                if w == NONE {
                    found = true;
                } else if dist[w as usize] == NONE {
                    dist[w as usize] = dist[u] + 1;
                    queue.push(w);
                }
            }
        }
        if !found {
            break;
        }
        // DFS along layers for vertex-disjoint augmenting paths.
        it.copy_from_slice(&adj_start[..n]);
        for root in 0..n as u32 {
            if match_l[root as usize] != NONE {
                continue;
            }
            stack.clear();
            stack.push(root);
            while let Some(&u) = stack.last() {
                let ui = u as usize;
                if it[ui] == adj_start[ui + 1] {
                    dist[ui] = NONE;
                    stack.pop();
                    continue;
                }
                let v = adj[it[ui] as usize];
                let w = match_r[v as usize];
                if w == NONE {
                    // Augment along the stack: each vertex takes the edge its cursor points at.
                    for &x in stack.iter().rev() {
                        let xv = adj[it[x as usize] as usize];
                        match_l[x as usize] = xv;
                        match_r[xv as usize] = x;
                    }
                    for &x in &stack {
                        dist[x as usize] = NONE;
                    }
                    break;
                }
                if dist[w as usize] == dist[ui] + 1 {
                    stack.push(w);
                } else {
                    it[ui] += 1;
                }
            }
        }
    }
    match_l
}

#[cfg(test)]
mod tests {
    use super::hopcroft_karp;

    fn csr(n: usize, edges: &[(u32, u32)]) -> (Vec<u32>, Vec<u32>) {
        let mut start = vec![0u32; n + 1];
        let mut adj = Vec::new();
        for u in 0..n as u32 {
            adj.extend(edges.iter().filter(|e| e.0 == u).map(|e| e.1));
            start[u as usize + 1] = adj.len() as u32;
        }
        (start, adj)
    }

    #[test]
    fn diamond_needs_two_chains() {
        // 0 -> 1 -> 3, 0 -> 2 -> 3: two chains.
        let (s, a) = csr(4, &[(0, 1), (0, 2), (1, 3), (2, 3)]);
        let m = hopcroft_karp(4, &s, &a);
        assert_eq!(m.iter().filter(|&&v| v != u32::MAX).count(), 2);
    }

    #[test]
    fn augmenting_path_beats_greedy() {
        // Greedy matches 0->2 first; the maximum needs 0->3, 1->2.
        let (s, a) = csr(4, &[(0, 2), (0, 3), (1, 2)]);
        let m = hopcroft_karp(4, &s, &a);
        assert_eq!(m.iter().filter(|&&v| v != u32::MAX).count(), 2);
        assert_eq!(m[1], 2);
        assert_eq!(m[0], 3);
    }
}
