//! What an assignment could achieve, computed from the graph alone (and the document's stream
//! per node): the edge minimum (the fewest syncs when each joins the ends of one dependency),
//! and the graph's width.

use std::collections::{BTreeSet, VecDeque};

use super::doc::{Dep, Doc};
use crate::graph::Model;

/// Above this many points (or task nodes) the quadratic-memory bitsets are not built.
pub const MAX_POINTS: usize = 30_000;

/// A fixed-size bitset.
#[derive(Clone)]
struct Bits(Vec<u64>);

impl Bits {
    fn new(n: usize) -> Self {
        Bits(vec![0; n.div_ceil(64)])
    }
    fn set(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    fn get(&self, i: usize) -> bool {
        self.0[i / 64] >> (i % 64) & 1 == 1
    }
    fn or(&mut self, o: &Bits) {
        for (a, b) in self.0.iter_mut().zip(&o.0) {
            *a |= b;
        }
    }
    fn ones(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &x)| {
            let mut x = x;
            std::iter::from_fn(move || {
                if x == 0 {
                    return None;
                }
                let b = x.trailing_zeros() as usize;
                x &= x - 1;
                Some(w * 64 + b)
            })
        })
    }
}

/// The graph nodes the minimums place (not inserted, on a stream), in `nodes` order, and each
/// document node's position among them (`usize::MAX`: not placed).
fn placed(doc: &Doc) -> (Vec<usize>, Vec<usize>) {
    let order: Vec<usize> =
        (0..doc.nodes.len()).filter(|&i| !doc.nodes[i].inserted && doc.nodes[i].stream.is_some()).collect();
    let mut idx = vec![usize::MAX; doc.nodes.len()];
    for (k, &i) in order.iter().enumerate() {
        idx[i] = k;
    }
    (order, idx)
}

/// The dependencies as (producer, consumer) positions of [`placed`]; `None` when one runs
/// backwards in `nodes` (rule 1 reports it) or has an unplaced end: no reduction is defined.
fn placed_deps(deps: &[Dep], idx: &[usize]) -> Option<Vec<(usize, usize)>> {
    deps.iter().map(|d| (idx[d.from], idx[d.to])).map(|(j, k)| (j < k).then_some((j, k))).collect()
}

/// The edge minimum: the fewest syncs that order every dependency (graph edges with task-less
/// nodes contracted, [`Doc::dependencies`]) when each sync joins the two ends of one. These are
/// the cross-stream dependencies u → v such that no other predecessor of v (its stream
/// predecessor or another producer) is reachable from u: the cross-stream arcs of the
/// transitive reduction of stream order plus dependencies, which is unique for a DAG.
///
/// Not a lower bound for syncs in general: a sync between other points (the split's, from the
/// end of one piece of a stream to the start of the next) can order several dependencies that
/// would each need a sync of their own here.
///
/// Reachability is a bitset per placed graph node, built in `nodes` order; above
/// [`MAX_POINTS`] nodes, [`edge_sync_minimum_by_stream_reach`] answers instead.
pub fn edge_sync_minimum(doc: &Doc, deps: &[Dep]) -> Option<usize> {
    let (order, idx) = placed(doc);
    if order.len() > MAX_POINTS {
        return edge_sync_minimum_by_stream_reach(doc, deps);
    }
    let n = order.len();
    let mut producers: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (j, k) in placed_deps(deps, &idx)? {
        producers[k].push(j);
    }
    let mut reach: Vec<Bits> = Vec::with_capacity(n);
    let mut last_on: std::collections::BTreeMap<u32, usize> = std::collections::BTreeMap::new();
    let mut count = 0usize;
    for (k, &i) in order.iter().enumerate() {
        let s = doc.nodes[i].stream?;
        let mut preds: BTreeSet<usize> = BTreeSet::new();
        if let Some(&p) = last_on.get(&s) {
            preds.insert(p);
        }
        let mut cross: BTreeSet<usize> = BTreeSet::new();
        for &j in &producers[k] {
            preds.insert(j);
            if doc.nodes[order[j]].stream != Some(s) {
                cross.insert(j);
            }
        }
        for &u in &cross {
            if !preds.iter().any(|&w| w != u && reach[w].get(u)) {
                count += 1;
            }
        }
        let mut r = Bits::new(n);
        for &p in &preds {
            r.or(&reach[p]);
            r.set(p);
        }
        reach.push(r);
        last_on.insert(s, k);
    }
    Some(count)
}

/// Most entries (nodes × streams) the sparse minimum keeps: 256 MiB of `u32`.
pub const MAX_STREAM_REACH: usize = 1 << 26;

/// [`edge_sync_minimum`] for graphs too large for a bitset per node: a backward sweep keeping,
/// per node and stream, the earliest position on that stream the node reaches. A cross-stream
/// dependency u → v is needed unless another successor of u (its stream successor or another
/// consumer) reaches v's stream at or before v. O((V + E) · S) time and V · S memory.
pub fn edge_sync_minimum_by_stream_reach(doc: &Doc, deps: &[Dep]) -> Option<usize> {
    let (order, idx) = placed(doc);
    let n = order.len();
    let mut lane: std::collections::BTreeMap<u32, usize> = std::collections::BTreeMap::new();
    for &i in &order {
        let next = lane.len();
        lane.entry(doc.nodes[i].stream?).or_insert(next);
    }
    let lanes = lane.len().max(1);
    if n.checked_mul(lanes)? > MAX_STREAM_REACH {
        return None;
    }
    let mut consumers: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (j, k) in placed_deps(deps, &idx)? {
        consumers[j].push(k);
    }
    let lane_of: Vec<usize> = order.iter().map(|&i| lane[&doc.nodes[i].stream.expect("filtered")]).collect();
    let mut pos = vec![0u32; n];
    let mut filled = vec![0u32; lanes];
    for k in 0..n {
        pos[k] = filled[lane_of[k]];
        filled[lane_of[k]] += 1;
    }
    let mut next_on_lane = vec![usize::MAX; n];
    let mut seen_lane = vec![usize::MAX; lanes];
    for k in (0..n).rev() {
        next_on_lane[k] = seen_lane[lane_of[k]];
        seen_lane[lane_of[k]] = k;
    }
    let mut reach = vec![u32::MAX; n * lanes];
    let mut count = 0usize;
    let mut succs: Vec<usize> = Vec::new();
    for k in (0..n).rev() {
        succs.clear();
        if next_on_lane[k] != usize::MAX {
            succs.push(next_on_lane[k]);
        }
        succs.extend_from_slice(&consumers[k]);
        succs.sort_unstable();
        succs.dedup();
        for &v in &succs {
            if lane_of[v] == lane_of[k] {
                continue;
            }
            let (lv, pv) = (lane_of[v], pos[v]);
            if !succs.iter().any(|&w| w != v && reach[w * lanes + lv] <= pv) {
                count += 1;
            }
        }
        let (head, tail) = reach.split_at_mut((k + 1) * lanes);
        let row = &mut head[k * lanes..];
        row[lane_of[k]] = pos[k];
        for &w in &succs {
            let other = &tail[(w - k - 1) * lanes..(w - k) * lanes];
            for (r, &o) in row.iter_mut().zip(other) {
                *r = (*r).min(o);
            }
        }
    }
    Some(count)
}

/// The largest antichain of task nodes (`tasks > 0`) under the graph's edges, with a witness:
/// Dilworth's theorem by Hopcroft–Karp matching on the comparability relation, the antichain
/// read from König's vertex cover. Graphs of a model are linked only by their own edges.
pub fn width(model: &Model) -> (Option<usize>, Vec<String>) {
    let all = model.all_nodes();
    let tasks: Vec<usize> = all.iter().map(|n| n.index()).filter(|&n| model.nodes.as_slice()[n].tasks > 0).collect();
    if tasks.len() > MAX_POINTS {
        return (None, Vec::new());
    }
    let t = tasks.len();
    let mut tidx = vec![usize::MAX; model.nodes.len()];
    for (k, &n) in tasks.iter().enumerate() {
        tidx[n] = k;
    }
    // reach[n]: task nodes that reach n (strictly).
    let mut reach: Vec<Option<Bits>> = vec![None; model.nodes.len()];
    // Each graph's order is topological; nodes of one graph only touch their own graph.
    for g in model.graphs.iter() {
        for &n in &g.order {
            let mut r = Bits::new(t);
            for e in model.in_edges(n) {
                if let Some(pr) = &reach[e.src.index()] {
                    r.or(pr);
                }
                if tidx[e.src.index()] != usize::MAX {
                    r.set(tidx[e.src.index()]);
                }
            }
            reach[n.index()] = Some(r);
        }
    }
    // Left u -> right v when u reaches v.
    let mut adj: Vec<Vec<u32>> = vec![Vec::new(); t];
    for (v, &n) in tasks.iter().enumerate() {
        if let Some(r) = &reach[n] {
            for u in r.ones() {
                adj[u].push(v as u32);
            }
        }
    }
    let (match_l, match_r) = hopcroft_karp(&adj, t);
    let matched = match_l.iter().filter(|m| m.is_some()).count();
    // König: Z = vertices reachable from free left vertices by alternating paths.
    let mut zl = vec![false; t];
    let mut zr = vec![false; t];
    let mut q: VecDeque<usize> = (0..t).filter(|&u| match_l[u].is_none()).collect();
    for &u in &q {
        zl[u] = true;
    }
    while let Some(u) = q.pop_front() {
        for &v in &adj[u] {
            let v = v as usize;
            if zr[v] || match_l[u] == Some(v) {
                continue;
            }
            zr[v] = true;
            if let Some(w) = match_r[v] {
                if !zl[w] {
                    zl[w] = true;
                    q.push_back(w);
                }
            }
        }
    }
    let antichain: Vec<String> =
        (0..t).filter(|&x| zl[x] && !zr[x]).map(|x| model.nodes.as_slice()[tasks[x]].name.clone()).collect();
    debug_assert_eq!(antichain.len(), t - matched);
    (Some(t - matched), antichain)
}

fn hopcroft_karp(adj: &[Vec<u32>], n: usize) -> (Vec<Option<usize>>, Vec<Option<usize>>) {
    let mut ml: Vec<Option<usize>> = vec![None; n];
    let mut mr: Vec<Option<usize>> = vec![None; n];
    let inf = u32::MAX;
    loop {
        let mut dist = vec![inf; n];
        let mut q = VecDeque::new();
        for u in 0..n {
            if ml[u].is_none() {
                dist[u] = 0;
                q.push_back(u);
            }
        }
        let mut found = false;
        while let Some(u) = q.pop_front() {
            for &v in &adj[u] {
                match mr[v as usize] {
                    None => found = true,
                    Some(w) if dist[w] == inf => {
                        dist[w] = dist[u] + 1;
                        q.push_back(w);
                    }
                    _ => {}
                }
            }
        }
        if !found {
            return (ml, mr);
        }
        let mut it = vec![0usize; n];
        for u in 0..n {
            if ml[u].is_none() {
                augment(u, adj, &mut ml, &mut mr, &mut dist, &mut it);
            }
        }
    }
}

/// Iterative DFS along the BFS layers for one augmenting path from `root`.
fn augment(
    root: usize,
    adj: &[Vec<u32>],
    ml: &mut [Option<usize>],
    mr: &mut [Option<usize>],
    dist: &mut [u32],
    it: &mut [usize],
) -> bool {
    let mut stack: Vec<(usize, usize)> = vec![(root, usize::MAX)];
    while let Some(&(u, _)) = stack.last() {
        if it[u] >= adj[u].len() {
            dist[u] = u32::MAX;
            stack.pop();
            continue;
        }
        let v = adj[u][it[u]] as usize;
        it[u] += 1;
        match mr[v] {
            None => {
                // Flip the path: each stacked left vertex takes the right vertex it stepped to.
                let mut v = v;
                while let Some((u, via)) = stack.pop() {
                    ml[u] = Some(v);
                    mr[v] = Some(u);
                    v = via;
                }
                return true;
            }
            Some(w) if dist[w] == dist[u] + 1 => stack.push((w, v)),
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::json;
    use serde_json::Value;

    /// Both minimum algorithms agree on a multi-stream corpus-like graph with forks, joins and
    /// redundant edges.
    #[test]
    fn stream_reach_minimum_agrees_with_bitsets() {
        let doc = include_str!("../../tests/fixtures/verify/stream_reach_forks_joins.json");
        let model = json::load_str(doc).unwrap();
        // The stages a session from given streams runs up to sync (the checker sits beside the
        // driver, so it calls the compile stages itself).
        let o = &model.options;
        let mut alloc = crate::compile::preassigned_logical(&model, o).unwrap();
        crate::compile::choose_order(&model, o, &mut alloc);
        crate::compile::sync_stage(&model, o, &mut alloc).unwrap();
        let value: Value = alloc.json(&model).to_value();
        let d = Doc::parse(&model, &value).unwrap();
        let deps = d.dependencies(&model);
        let dense = edge_sync_minimum(&d, &deps).unwrap();
        let sparse = edge_sync_minimum_by_stream_reach(&d, &deps).unwrap();
        assert_eq!(dense, sparse);
        assert_eq!(dense, alloc.syncs().len());
        assert!(dense >= 3, "{dense}");
    }
}
