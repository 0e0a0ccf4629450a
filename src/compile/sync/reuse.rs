//! Sync id reuse (ge-compiler.md §6.4): GE's `ReuseEventForMultiDims` and `_event_multiplexing`,
//! and the project's lifetime reuse (`event_reuse=lifetime`).

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use super::continuous::refresh_continuous_events;
use super::reduce::{Clocks, PairIndex, Points};
use super::{NodeFacts, SyncState};
use crate::err;
use crate::error::Result;
use crate::graph::csr::Csr;
use crate::graph::{GraphId, Model, NodeId};

/// GE's `kEventReuseThreshold`: multiplexing applies only above this many events.
pub const EVENT_REUSE_THRESHOLD: u32 = 65_500;
/// GE walks nested subgraphs of a multi-dims branch at most this deep.
pub const MAX_DIMS_DEPTH: usize = 10;

/// Ids free for reuse on one stream, keyed by the position of their last wait there.
type FreeIds = BinaryHeap<Reverse<(u32, u32)>>;

/// Result of the multi-dims reuse.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DimsReuse {
    /// Distinct ids afterwards.
    pub count: u32,
    /// Ids saved.
    pub saved: usize,
}

/// The multi-dims branch a graph belongs to: (`Case` node with `_batch_num`, branch index),
/// looking at most [`MAX_DIMS_DEPTH`] graphs up.
pub fn dims_branch(model: &Model, g: GraphId) -> Option<(NodeId, usize)> {
    let mut g = g;
    for _ in 0..=MAX_DIMS_DEPTH {
        let parent = model.graphs[g].parent?;
        let pn = &model.nodes[parent];
        if pn.op_type == "Case" && pn.ge_attrs.contains("_batch_num") {
            let i = pn.subgraphs.iter().position(|&x| x == g)?;
            return Some((parent, i));
        }
        g = pn.graph;
    }
    None
}

/// [`dims_branch`] of every graph, or `None` when no graph lies in a multi-dims branch (no
/// multi-batch `Case` owns a graph: the common case, decided from the graphs alone).
pub fn dims_branches(model: &Model) -> Option<Vec<Option<(NodeId, usize)>>> {
    let is_dims_case = |p: NodeId| {
        let pn = &model.nodes[p];
        pn.op_type == "Case" && pn.ge_attrs.contains("_batch_num")
    };
    if !model.graphs.iter().any(|g| g.parent.is_some_and(is_dims_case)) {
        return None;
    }
    Some(model.graphs.ids().map(|g| dims_branch(model, g)).collect())
}

/// GE: `ReuseEventForMultiDims`. The branches of a multi-batch `Case` never run together, so
/// each branch numbers the ids whose both ends lie inside it from the same base; the base then
/// moves past the largest branch. Ids outside every branch come last. Expects continuous ids;
/// an id shared by several pairs (lifetime reuse) joins a branch only when all its pairs do.
pub fn reuse_event_for_multi_dims(st: &mut SyncState<'_>) -> DimsReuse {
    let count = super::continuous::distinct_ids(st);
    reuse_event_for_multi_dims_counted(st, count)
}

/// [`reuse_event_for_multi_dims`] when the number of distinct ids is known (right after a
/// continuity refresh).
pub fn reuse_event_for_multi_dims_counted(st: &mut SyncState<'_>, count: u32) -> DimsReuse {
    let model = st.model;
    let Some(branches) = dims_branches(model) else { return DimsReuse { count, saved: 0 } };
    let branch = |n: NodeId| branches[model.nodes[n].graph.index()];
    // Branch of each id: the branch all its pairs lie in, or none. After lifetime reuse an id
    // may carry several pairs; one outside the branch keeps the id out of the sharing.
    #[derive(Clone, Copy, PartialEq)]
    enum Of {
        Unseen,
        Branch(NodeId, usize),
        Mixed,
    }
    let mut of = vec![Of::Unseen; count as usize];
    for (_, s) in st.alive() {
        let a = branch(s.from.node);
        let b = branch(s.to.node);
        let here = match a {
            Some((c, i)) if a == b => Of::Branch(c, i),
            _ => Of::Mixed,
        };
        let slot = &mut of[s.id as usize];
        *slot = if *slot == Of::Unseen || *slot == here { here } else { Of::Mixed };
    }
    let branch_of: Vec<Option<(NodeId, usize)>> =
        of.iter().map(|o| if let Of::Branch(c, i) = *o { Some((c, i)) } else { None }).collect();
    let any = branch_of.iter().any(Option::is_some);
    if !any {
        return DimsReuse { count, saved: 0 };
    }
    let mut by_case: BTreeMap<u32, BTreeMap<usize, Vec<u32>>> = BTreeMap::new();
    for (id, b) in branch_of.iter().enumerate() {
        if let Some((case, i)) = b {
            by_case.entry(st.pos[*case]).or_default().entry(*i).or_default().push(id as u32);
        }
    }
    let mut new_id = vec![u32::MAX; count as usize];
    let mut base = 0u32;
    for branches in by_case.values() {
        let mut top = base;
        for ids in branches.values() {
            let mut next = base;
            for &id in ids {
                new_id[id as usize] = next;
                next += 1;
            }
            top = top.max(next);
        }
        base = top;
    }
    for id in new_id.iter_mut() {
        if *id == u32::MAX {
            *id = base;
            base += 1;
        }
    }
    for s in st.syncs.iter_mut().filter(|s| s.alive) {
        s.id = new_id[s.id as usize];
    }
    DimsReuse { count: base, saved: (count - base) as usize }
}

/// GE: `_event_multiplexing`. Above [`EVENT_REUSE_THRESHOLD`] events, each declared
/// `SendTo;peer;id` / `RecvFrom;peer;id` makes the event between the node and its peer share
/// the declared id (offset past the current ids); then ids are refreshed.
pub fn event_multiplexing(st: &mut SyncState<'_>) -> Result<()> {
    let model = st.model;
    if !st.facts.any(NodeFacts::MULTIPLEXING) {
        return Ok(());
    }
    let event_num = super::continuous::distinct_ids(st);
    if event_num <= EVENT_REUSE_THRESHOLD {
        return Ok(());
    }
    let mut changes: Vec<(u32, u32)> = Vec::new();
    let sends = st.send_lists();
    for &n in st.order.iter().filter(|&&n| st.facts.has(n, NodeFacts::MULTIPLEXING)) {
        let node = &model.nodes[n];
        for entry in &node.attrs.event_multiplexing {
            let bad = |why: &str| err!(Attribute, "node '{}': _event_multiplexing entry \"{entry}\" {why}", node.name);
            let parts: Vec<&str> = entry.split(';').collect();
            let [dir, peer, id] = parts.as_slice() else {
                return Err(bad("must be \"SendTo;peer;id\" or \"RecvFrom;peer;id\""));
            };
            let id: i64 = id.parse().map_err(|_| bad("has a non-integer id"))?;
            if id < 0 {
                return Err(bad("has a negative id"));
            }
            let Some(peer) = model.find_node(node.graph, peer) else {
                return Err(bad("names an unknown peer"));
            };
            let (from, to) = match *dir {
                "SendTo" => (n, peer),
                "RecvFrom" => (peer, n),
                _ => return Err(bad("must start with SendTo or RecvFrom")),
            };
            for &r in sends.of(from) {
                if st.syncs[r as usize].to.node == to {
                    changes.push((r, id as u32 + event_num));
                }
            }
        }
    }
    if changes.is_empty() {
        return Ok(());
    }
    for (r, id) in changes {
        st.syncs[r as usize].id = id;
    }
    refresh_continuous_events(st);
    Ok(())
}

/// `event_reuse=lifetime` together with `ReuseEventForMultiDims`: lifetime reuse first (it
/// sees happens-before, which branches of a multi-batch Case lack), then the branches share
/// the ids whose pairs all lie in one branch. Lifetime reuse restricted to each branch never
/// does worse than multi-dims alone; free lifetime reuse (which may join pairs of different
/// branches and so lose the sharing) sometimes does better. All three are computed, each
/// near-linear, and the fewest ids win. Returns (ids, ids saved).
pub fn reuse_lifetime_with_multi_dims(st: &mut SyncState<'_>) -> (u32, usize) {
    let kept = refresh_continuous_events(st) as usize;
    if dims_branches(st.model).is_none() {
        // No branch to share: the three candidates coincide with free lifetime reuse.
        reuse_lifetime(st);
        let count = refresh_continuous_events(st);
        return (count, kept - count as usize);
    }
    let fresh: Vec<u32> = st.syncs.iter().map(|s| s.id).collect();
    let dims_only = reuse_event_for_multi_dims_counted(st, kept as u32).count;
    let dims_ids: Vec<u32> = st.syncs.iter().map(|s| s.id).collect();
    for (s, id) in st.syncs.iter_mut().zip(&fresh) {
        s.id = *id;
    }
    // Lifetime reuse inside each branch (and among the pairs outside), then the branches share.
    let classes = dims_classes(st);
    reuse_lifetime_within(st, &classes);
    let n = refresh_continuous_events(st);
    let within = reuse_event_for_multi_dims_counted(st, n).count;
    let within_ids: Vec<u32> = st.syncs.iter().map(|s| s.id).collect();
    // Free lifetime reuse, where joining pairs across branches pays more than the sharing.
    for (s, id) in st.syncs.iter_mut().zip(&fresh) {
        s.id = *id;
    }
    reuse_lifetime(st);
    let n = refresh_continuous_events(st);
    let free = reuse_event_for_multi_dims_counted(st, n).count;
    if free >= within.min(dims_only) {
        let (count, ids) = if within <= dims_only { (within, within_ids) } else { (dims_only, dims_ids) };
        for (s, id) in st.syncs.iter_mut().zip(&ids) {
            s.id = *id;
        }
        return (count, kept - count as usize);
    }
    (free, kept - free as usize)
}

/// Lifetime reuse: walking record points in execution order, a pair takes an id whose last
/// wait already happens before this record (so the runtime has consumed it), else a fresh id.
/// Per stream, free ids wait in a heap keyed by their wait's position on that stream, so each
/// record looks at one candidate per stream. Returns the ids saved.
pub fn reuse_lifetime(st: &mut SyncState<'_>) -> usize {
    let classes = vec![0u32; st.syncs.len()];
    reuse_lifetime_within(st, &classes)
}

/// Lifetime reuse that never lets pairs of different classes share an id: with the classes
/// of [`dims_classes`], each branch of a multi-batch Case reuses only its own ids, so the
/// multi-dims numbering can still share them across branches afterwards.
pub fn reuse_lifetime_within(st: &mut SyncState<'_>, classes: &[u32]) -> usize {
    let pts = Points::build(st);
    let idx = PairIndex::build(st, &pts);
    let cond = super::reduce::conditional_points(st, &pts);
    let mut clocks = Clocks::new(pts.stream_count, pts.len());
    let class_count = classes.iter().copied().max().map_or(1, |c| c as usize + 1);
    let mut heaps: Vec<Vec<FreeIds>> = vec![vec![BinaryHeap::new(); pts.stream_count]; class_count];
    // Pairs leaving each point, in send-list order (a point has one node: insertion order).
    let kept = idx.from.iter().enumerate().filter(|&(_, &f)| f != u32::MAX);
    let outs: Csr<u32, u32> = Csr::group(pts.len(), kept.map(|(r, &f)| (f, r as u32)));
    let mut next_id = 0u32;
    let mut assigned: Vec<(u32, u32)> = Vec::new();
    for p in 0..pts.len() {
        let s = pts.stream[p] as usize;
        for &r in &idx.in_list[idx.in_start[p] as usize..idx.in_start[p + 1] as usize] {
            let u = idx.from[r as usize];
            if (u as usize) < p {
                if !super::reduce::either_conditional(&cond, u as usize, p) {
                    clocks.merge(s, u, pts.stream[u as usize] as usize, pts.seq[u as usize]);
                }
                clocks.release(u);
            }
        }
        clocks.advance(s, pts.seq[p]);
        clocks.record(s, p as u32, idx.out_count[p]);
        for &r in outs.of(p as u32) {
            let heaps = &mut heaps[classes[r as usize] as usize];
            let mut best: Option<(u32, usize)> = None;
            for (t, h) in heaps.iter().enumerate() {
                if let Some(&Reverse((seq, id))) = h.peek() {
                    if clocks.covers(s, t, seq) && best.is_none_or(|(b, _)| id < b) {
                        best = Some((id, t));
                    }
                }
            }
            let id = match best {
                Some((id, t)) => {
                    heaps[t].pop();
                    id
                }
                None => {
                    next_id += 1;
                    next_id - 1
                }
            };
            let to = idx.to[r as usize];
            heaps[pts.stream[to as usize] as usize].push(Reverse((pts.seq[to as usize], id)));
            assigned.push((r, id));
        }
    }
    let kept = assigned.len();
    for (r, id) in assigned {
        st.syncs[r as usize].id = id;
    }
    kept - next_id as usize
}

/// Class of each raw sync for [`reuse_lifetime_within`]: 0 outside every multi-dims branch,
/// else one number per (Case, branch) whose graph holds both ends.
pub fn dims_classes(st: &SyncState<'_>) -> Vec<u32> {
    let model = st.model;
    let Some(branches) = dims_branches(model) else { return vec![0; st.syncs.len()] };
    let branch = |n: NodeId| branches[model.nodes[n].graph.index()];
    let mut dense: BTreeMap<(NodeId, usize), u32> = BTreeMap::new();
    st.syncs
        .iter()
        .map(|s| {
            let a = branch(s.from.node);
            match a {
                Some(b) if a == branch(s.to.node) => {
                    let k = dense.len() as u32 + 1;
                    *dense.entry(b).or_insert(k)
                }
                _ => 0,
            }
        })
        .collect()
}
