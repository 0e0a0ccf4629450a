//! A lower bound on the makespan of every plan of a model on the device model of
//! [`super::simulate`], whatever its streams, order or syncs: the most of
//!
//! - **the critical path with the syncs' latency.** Where a node X forks into chains (nodes
//!   with one producer and one consumer each) that meet again at one node J, either the chains
//!   share a stream and run one after another, or a chain lies on another stream than X or
//!   than J and crosses streams on its way: every crossing is a sync, and a sync's guarded node
//!   starts no earlier than its record's node ends plus the wait latency. The least time from
//!   X's end to J's start over every placement of the chains on streams (each chain whole on
//!   one stream: splitting one only adds crossings) is a gap no plan beats; the longest path
//!   with "J starts no earlier than X ends plus the gap" added bounds every plan from below.
//!   The start of the graph is a fork with no stream of its own. (The bound was first a
//!   script beside the project, `scripts/sync_bound.py`, which it replaces.)
//! - **the work over the units**: Σ duration × units held / device units.
//! - **an energy bound over windows.** A node that cannot start before time `a` (its longest
//!   path of predecessors, gaps included) runs wholly after `a`: for every `a`, the makespan is
//!   at least `a` plus the work of the nodes that start no earlier, over the units. The same
//!   from the end: a node with a path of length `b` after it ends by `makespan − b`.
//!
//! Units only add to each term, so each holds for any plan the simulator runs.

use super::{SimConfig, cost_of, units_of};
use crate::error::Result;
use crate::graph::{IdVec, Model, NodeId};

/// The bound and its terms, in µs.
#[derive(Clone, Debug, PartialEq)]
pub struct Bound {
    /// Longest path by duration, syncs free.
    pub critical_path_us: f64,
    /// Longest path with the fork/join gaps.
    pub sync_path_us: f64,
    /// Σ duration × units / device units.
    pub work_us: f64,
    /// The best window of the energy bound.
    pub energy_us: f64,
    /// The most of the terms.
    pub lower_bound_us: f64,
    /// Fork/join pairs whose gap exceeds their longest chain (they raise the path).
    pub costly_joins: usize,
}

/// Chains a fork/join may have for the exact placement search (3^k placements).
const MAX_CHAINS: usize = 8;

/// The bound of `model` on a device of `cfg.units` units with `cfg.wait_latency_us` per sync.
pub fn bound(model: &Model, cfg: &SimConfig) -> Result<Bound> {
    if cfg.units == 0 {
        crate::bail!(InvalidOption, "lower bound: units must be at least 1, got 0");
    }
    let nn = model.nodes.len();
    let order = model.all_nodes();
    let dur = |n: NodeId| cost_of(model, n);
    let work: IdVec<NodeId, f64> = model.nodes.ids().map(|n| dur(n) * units_of(model, n, cfg) as f64).collect();
    let units = cfg.units as f64;
    let work_us = work.iter().sum::<f64>() / units;
    // The fork/join gaps, by join: (fork, gap). Only on a flat graph: a subgraph's nodes run
    // under their parent's control, outside the streams' reasoning here.
    let joins = if model.graphs.len() == 1 { fork_joins(model, cfg.wait_latency_us) } else { Vec::new() };
    let mut gaps: IdVec<NodeId, Vec<(Option<NodeId>, f64)>> = IdVec::filled(nn, Vec::new());
    let mut costly_joins = 0;
    for j in &joins {
        gaps[j.join].push((j.fork, j.gap));
        costly_joins += usize::from(j.gap > j.longest + 1e-9);
    }
    // Earliest start (head) with and without the gaps; the path after each node (tail).
    let mut plain = IdVec::filled(nn, 0.0f64);
    let mut head = IdVec::filled(nn, 0.0f64);
    for &n in &order {
        let mut p = 0.0f64;
        let mut h = 0.0f64;
        for e in model.in_edges(n) {
            p = p.max(plain[e.src] + dur(e.src));
            h = h.max(head[e.src] + dur(e.src));
        }
        for &(x, gap) in &gaps[n] {
            h = h.max(x.map_or(0.0, |x| head[x] + dur(x)) + gap);
        }
        plain[n] = p;
        head[n] = h;
    }
    let mut tail = IdVec::filled(nn, 0.0f64);
    for &n in order.iter().rev() {
        tail[n] = model.out_edges(n).map(|e| tail[e.dst] + dur(e.dst)).fold(0.0, f64::max);
    }
    let critical_path_us = model.nodes.ids().map(|n| plain[n] + dur(n)).fold(0.0, f64::max);
    let sync_path_us = model.nodes.ids().map(|n| head[n] + dur(n)).fold(0.0, f64::max);
    let energy_us = window(model, &head, &work, units).max(window(model, &tail, &work, units));
    let lower_bound_us = critical_path_us.max(sync_path_us).max(work_us).max(energy_us);
    Ok(Bound { critical_path_us, sync_path_us, work_us, energy_us, lower_bound_us, costly_joins })
}

/// max over `a` of `a` + (work of the nodes whose `edge` is at least `a`) / units.
fn window(model: &Model, edge: &IdVec<NodeId, f64>, work: &IdVec<NodeId, f64>, units: f64) -> f64 {
    let mut by: Vec<NodeId> = model.nodes.ids().filter(|&n| work[n] > 0.0).collect();
    by.sort_unstable_by(|&a, &b| edge[b].total_cmp(&edge[a]).then(a.cmp(&b)));
    let mut sum = 0.0;
    let mut best = 0.0f64;
    for n in by {
        sum += work[n];
        best = best.max(edge[n] + sum / units);
    }
    best
}

/// A fork (`None`: the start of the graph) whose chains meet at `join`, and the least time
/// from the fork's end to the join's start over every placement of the chains.
struct ForkJoin {
    fork: Option<NodeId>,
    join: NodeId,
    gap: f64,
    longest: f64,
}

/// Every fork/join of the graph with two to [`MAX_CHAINS`] chains. A fork and a join are
/// nodes with a device task (they sit on a stream); a chain is a run of nodes with one
/// producer and one consumer from a consumer of the fork to the join (none: an edge straight
/// into it). Nodes with no task and no producer (inputs, weights) run on no stream and are
/// left out.
fn fork_joins(model: &Model, latency: f64) -> Vec<ForkJoin> {
    let runs = |n: NodeId| model.nodes[n].tasks > 0 || model.in_edges(n).next().is_some();
    // Producers that run; the start of the graph is the one producer of a node with none.
    let producers = |n: NodeId| model.in_edges(n).filter(|e| runs(e.src)).count().max(1);
    let consumers = |n: NodeId| model.out_edges(n).count();
    let has_task = |n: NodeId| model.nodes[n].tasks > 0;
    let mut out = Vec::new();
    let starts: Vec<NodeId> =
        model.nodes.ids().filter(|&n| runs(n) && model.in_edges(n).all(|e| !runs(e.src))).collect();
    let forks = std::iter::once((None, starts)).chain(
        model.nodes.ids().filter(|&x| has_task(x)).map(|x| (Some(x), model.out_edges(x).map(|e| e.dst).collect())),
    );
    let mut ends: Vec<(NodeId, f64)> = Vec::new();
    for (fork, succs) in forks {
        if succs.len() < 2 {
            continue;
        }
        ends.clear();
        for &s in &succs {
            let (mut length, mut at) = (0.0, s);
            while producers(at) == 1 && consumers(at) == 1 {
                length += cost_of(model, at);
                at = model.out_edges(at).next().expect("one consumer").dst;
            }
            // A chain that ends in a sink or a fork of its own meets no join; a consumer with
            // more producers is the join of a chain of none (an edge straight into it).
            if producers(at) == 1 {
                continue;
            }
            ends.push((at, length));
        }
        ends.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        for group in ends.chunk_by(|a, b| a.0 == b.0) {
            let join = group[0].0;
            if group.len() < 2 || group.len() > MAX_CHAINS || !has_task(join) {
                continue;
            }
            let lengths: Vec<f64> = group.iter().map(|g| g.1).collect();
            let gap = least_gap(&lengths, latency, fork.is_none());
            let longest = lengths.iter().copied().fold(0.0, f64::max);
            out.push(ForkJoin { fork, join, gap, longest });
        }
    }
    out
}

/// The least time from a fork's end to its join's start over placements of chains of
/// `lengths` on streams. A chain runs on the fork's stream (no latency before it), on the
/// join's (none after it), or on a stream of its own (both: sharing such a stream with
/// another chain only serialises them). Chains sharing a stream run one after another; the
/// join may share the fork's stream or not. With `free_fork` (the graph's start, on no
/// stream) no chain waits before it starts.
fn least_gap(lengths: &[f64], latency: f64, free_fork: bool) -> f64 {
    let k = lengths.len();
    let lead = if free_fork { 0.0 } else { latency };
    let mut best = f64::INFINITY;
    // Join on the fork's stream: each chain on it (0) or alone (1). Join elsewhere: each chain
    // on the fork's stream (0), the join's (1) or alone (2).
    for (join_apart, base) in [(false, 2usize), (true, 3usize)] {
        for code in 0..base.pow(k as u32) {
            let (mut fork_sum, mut join_sum, mut alone) = (None::<f64>, None::<f64>, 0.0f64);
            let mut c = code;
            for &len in lengths {
                match (c % base, join_apart) {
                    (0, _) => *fork_sum.get_or_insert(0.0) += len,
                    (1, true) => *join_sum.get_or_insert(0.0) += len,
                    _ => alone = alone.max(lead + len + latency),
                }
                c /= base;
            }
            // Chains on the fork's stream cross to the join's after them when it is apart,
            // chains on the join's cross from the fork's before them; a join apart from a fork
            // on a stream crosses once at least, whatever the chains.
            let on_fork = fork_sum.map_or(0.0, |s| if join_apart { s + latency } else { s });
            let on_join = join_sum.map_or(0.0, |s| lead + s);
            let crossing = if join_apart && !free_fork { latency } else { 0.0 };
            best = best.min(on_fork.max(on_join).max(alone).max(crossing));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gap_of_two_and_three_chains() {
        // Two chains of 5 and a latency of 1: one on the fork's stream, the other alone (1 + 5
        // + 1 = 7), or on the join's stream (1 + 5, then the fork's chain pays 5 + 1): 6; both
        // on one stream: 10.
        assert_eq!(least_gap(&[5.0, 5.0], 1.0, false), 6.0);
        // Short chains: serial beats any crossing.
        assert_eq!(least_gap(&[0.5, 0.5], 1.0, false), 1.0);
        // At the graph's start the chains pay no latency before them: 5 + 1.
        assert_eq!(least_gap(&[5.0, 5.0], 1.0, true), 6.0);
        assert_eq!(least_gap(&[5.0, 5.0, 5.0], 1.0, true), 6.0);
        // Three chains from a fork: fork's stream 5 + 1, join's 1 + 5, the third alone 7.
        assert_eq!(least_gap(&[5.0, 5.0, 5.0], 1.0, false), 7.0);
        // No latency: the longest chain.
        assert_eq!(least_gap(&[3.0, 5.0, 1.0], 0.0, false), 5.0);
    }
}
