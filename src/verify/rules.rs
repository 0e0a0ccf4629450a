//! The six rules of allocation-json.md. Happens-before comes from one sweep over the document's
//! execution points (each node's stream, then its attached streams, in `nodes` order) with a
//! vector clock per stream; syncs and activations join the sender's clock into the receiver's.

use std::collections::{BTreeMap, BTreeSet};

use super::Violation;
use super::doc::{Dep, Doc, End};
use crate::graph::{GraphId, Model, NodeId};

fn v(rule: u32, message: String) -> Violation {
    Violation { rule, message }
}

/// Vector clocks are `streams²` words; documents with more streams are refused.
pub const MAX_STREAMS: usize = crate::graph::device::MAX_LOGICAL_STREAMS;

/// Execution points of the document.
struct Points {
    start: Vec<usize>,
    stream: Vec<usize>,
    seq: Vec<u32>,
    streams: usize,
}

impl Points {
    fn build(doc: &Doc) -> (Points, BTreeMap<u32, usize>) {
        let mut dense: BTreeMap<u32, usize> = BTreeMap::new();
        for n in &doc.nodes {
            for s in n.stream.iter().chain(n.attached.iter()) {
                let k = dense.len();
                dense.entry(*s).or_insert(k);
            }
        }
        let mut p = Points { start: Vec::new(), stream: Vec::new(), seq: Vec::new(), streams: dense.len() };
        let mut next = vec![0u32; dense.len()];
        for n in &doc.nodes {
            p.start.push(p.stream.len());
            let mut seen = BTreeSet::new();
            for s in n.stream.iter().chain(n.attached.iter()) {
                if !seen.insert(*s) {
                    continue;
                }
                let d = dense[s];
                p.stream.push(d);
                p.seq.push(next[d]);
                next[d] += 1;
            }
        }
        p.start.push(p.stream.len());
        (p, dense)
    }

    fn of(&self, dense: &BTreeMap<u32, usize>, end: End) -> Option<usize> {
        let d = *dense.get(&end.stream)?;
        (self.start[end.node]..self.start[end.node + 1]).find(|&p| self.stream[p] == d)
    }

    fn main(&self, doc: &Doc, dense: &BTreeMap<u32, usize>, node: usize) -> Option<usize> {
        let s = doc.nodes[node].stream?;
        self.of(dense, End { node, stream: s })
    }
}

/// A pair's multi-dims class: pairs of different branches of one multi-batch `Case` (or of
/// different `dims`) never run together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    Free,
    Branch(NodeId, usize),
    Dim(i64),
}

fn branch_of(model: &Model, mut g: GraphId) -> Option<(NodeId, usize)> {
    for _ in 0..=10 {
        let parent = model.graphs[g].parent?;
        let p = &model.nodes[parent];
        if p.op_type == "Case" && p.ge_attrs.get("_batch_num").is_some() {
            return p.subgraphs.iter().position(|&x| x == g).map(|i| (parent, i));
        }
        g = p.graph;
    }
    None
}

fn class(model: &Model, doc: &Doc, from: usize, to: usize) -> Class {
    let (Some(a), Some(b)) = (doc.nodes[from].model, doc.nodes[to].model) else { return Class::Free };
    let (ba, bb) = (branch_of(model, model.nodes[a].graph), branch_of(model, model.nodes[b].graph));
    if let (Some(x), Some(y)) = (ba, bb) {
        if x == y {
            return Class::Branch(x.0, x.1);
        }
    }
    match (model.nodes[a].attrs.dims, model.nodes[b].attrs.dims) {
        (Some(x), Some(y)) if x == y => Class::Dim(x),
        _ => Class::Free,
    }
}

fn exempt(a: Class, b: Class) -> bool {
    match (a, b) {
        (Class::Branch(c1, i), Class::Branch(c2, j)) => c1 == c2 && i != j,
        (Class::Dim(x), Class::Dim(y)) => x != y,
        _ => false,
    }
}

/// What a happens-before query proves.
enum Query {
    /// A dependency: document nodes `from` and `to`, and the task-less node it passes through.
    Edge(usize, usize, Option<NodeId>),
    Reuse {
        id: u64,
        earlier: usize,
        later: usize,
    },
}

/// "edge a -> b", or "dependency a -> b (through task-less 'x')" for a contracted one.
fn dep_name(model: &Model, doc: &Doc, from: usize, to: usize, via: Option<NodeId>) -> String {
    let (a, b) = (&doc.nodes[from].name, &doc.nodes[to].name);
    match via {
        None => format!("edge {a} -> {b}"),
        Some(x) => format!("dependency {a} -> {b} (through task-less '{}')", model.nodes[x].name),
    }
}

/// Happens-before queries by the point that answers them (the later one): (earlier point, what
/// the order proves).
type Queries = Vec<Vec<(usize, Query)>>;

/// Arcs between points other than stream order: (from, to, the sync's index, `None` for an
/// activation).
type Arcs = Vec<(usize, usize, Option<usize>)>;

/// Checks rules 1 to 6; returns the number of dependencies checked under rule 1 (edges between
/// task-bearing nodes, through task-less ones).
pub fn check_rules(model: &Model, doc: &Doc, deps: &[Dep], out: &mut Vec<Violation>) -> usize {
    check_ids_and_streams(doc, out);
    check_placed(model, doc, out);
    let (pts, dense) = Points::build(doc);
    if pts.streams > MAX_STREAMS {
        out.push(v(0, format!("{} streams are more than the checker handles ({MAX_STREAMS})", pts.streams)));
        return 0;
    }
    let order = Order { model, doc, pts, dense };
    let loop_carried: Vec<bool> = doc.syncs.iter().map(|s| is_loop_carried(model, doc, s)).collect();
    let arcs = order.arcs(&loop_carried, out);
    check_acyclic(doc, &order.pts, &arcs, out);
    let mut queries: Queries = (0..order.pts.stream.len()).map(|_| Vec::new()).collect();
    let edges_checked = order.dependency_queries(deps, &mut queries, out);
    order.reuse_queries(&loop_carried, &mut queries, out);
    order.sweep(&arcs, &queries, out);
    edges_checked
}

/// The document's execution points, and the dense index of each stream id, with what the
/// order rules read.
struct Order<'a> {
    model: &'a Model,
    doc: &'a Doc,
    pts: Points,
    dense: BTreeMap<u32, usize>,
}

impl Order<'_> {
    /// Rule 3 (a sync joins two streams, its record first in `nodes` unless it is loop-carried)
    /// and the arcs of the syncs and the activations.
    fn arcs(&self, loop_carried: &[bool], out: &mut Vec<Violation>) -> Arcs {
        let (doc, pts, dense) = (self.doc, &self.pts, &self.dense);
        let mut arcs: Arcs = Vec::new();
        for (i, s) in doc.syncs.iter().enumerate() {
            let name = || format!("sync id {} ({} -> {})", s.id, s.from_name, s.to_name);
            if s.from.stream == s.to.stream {
                out.push(v(3, format!("{} joins stream {} to itself", name(), s.from.stream)));
            }
            if s.from.node >= s.to.node {
                if loop_carried[i] {
                    // Orders this iteration's record before the next iteration's wait: no arc
                    // inside one iteration.
                    continue;
                }
                out.push(v(3, format!("{}: 'from' does not precede 'to' in nodes", name())));
            }
            if let (Some(f), Some(t)) = (pts.of(dense, s.from), pts.of(dense, s.to)) {
                arcs.push((f, t, Some(i)));
            }
        }
        let np = pts.stream.len();
        for (a, streams) in &doc.activations {
            let Some(f) = pts.main(doc, dense, *a) else { continue };
            for s in streams {
                let Some(&d) = dense.get(s) else { continue };
                if let Some(t) = (f + 1..np).find(|&p| pts.stream[p] == d) {
                    arcs.push((f, t, None));
                }
            }
        }
        arcs
    }

    /// Rule 1: each dependency between nodes on streams runs in `nodes` order, and asks the
    /// sweep whether stream order and syncs order it. Returns how many were checked.
    fn dependency_queries(&self, deps: &[Dep], queries: &mut Queries, out: &mut Vec<Violation>) -> usize {
        let (model, doc, pts, dense) = (self.model, self.doc, &self.pts, &self.dense);
        let mut edges_checked = 0;
        for d in deps {
            let (Some(pa), Some(pb)) = (pts.main(doc, dense, d.from), pts.main(doc, dense, d.to)) else { continue };
            edges_checked += 1;
            if pa >= pb {
                out.push(v(
                    1,
                    format!(
                        "{} is not ordered: '{}' comes after '{}' in nodes",
                        dep_name(model, doc, d.from, d.to, d.via),
                        doc.nodes[d.from].name,
                        doc.nodes[d.to].name
                    ),
                ));
                continue;
            }
            queries[pb].push((pa, Query::Edge(d.from, d.to, d.via)));
        }
        edges_checked
    }

    /// Rule 4: pairs sharing a sync id, other than those that never run together, follow each
    /// other (the earlier wait before the later record), which the sweep confirms; a
    /// loop-carried sync keeps its id to itself.
    fn reuse_queries(&self, loop_carried: &[bool], queries: &mut Queries, out: &mut Vec<Violation>) {
        let (model, doc, pts, dense) = (self.model, self.doc, &self.pts, &self.dense);
        for (id, pairs) in doc.by_id() {
            if pairs.len() < 2 {
                continue;
            }
            if let Some(&i) = pairs.iter().find(|&&i| loop_carried[i]) {
                let s = &doc.syncs[i];
                out.push(v(
                    4,
                    format!(
                        "sync id {id} of the loop sync {} -> {} is shared with {} other pair(s); a sync that spans two \
                         iterations needs an id of its own",
                        s.from_name,
                        s.to_name,
                        pairs.len() - 1
                    ),
                ));
                continue;
            }
            let mut pairs = pairs;
            pairs.sort_by_key(|&i| (doc.syncs[i].from.node, i));
            let mut last: BTreeMap<Class, usize> = BTreeMap::new();
            for &i in &pairs {
                let s = &doc.syncs[i];
                let c = class(model, doc, s.from.node, s.to.node);
                for (&c2, &j) in &last {
                    if exempt(c, c2) {
                        continue;
                    }
                    let prev = &doc.syncs[j];
                    match (pts.of(dense, prev.to), pts.of(dense, s.from)) {
                        (Some(pt), Some(pf)) if pt <= pf => {
                            queries[pf].push((pt, Query::Reuse { id, earlier: j, later: i }));
                        }
                        _ => out.push(v(
                            4,
                            format!(
                                "sync id {id} is reused unsafely: the wait of {} -> {} does not precede the record of {} -> {}",
                                prev.from_name, prev.to_name, s.from_name, s.to_name
                            ),
                        )),
                    }
                }
                last.insert(c, i);
            }
        }
    }

    /// The sweep: a vector clock per stream over the points in order, the sender's clock joined
    /// into the receiver's along each arc; each query is answered at its later point.
    fn sweep(&self, arcs: &Arcs, queries: &Queries, out: &mut Vec<Violation>) {
        let pts = &self.pts;
        let np = pts.stream.len();
        let mut incoming: Vec<Vec<usize>> = (0..np).map(|_| Vec::new()).collect();
        let mut is_source = vec![false; np];
        for &(f, t, _) in arcs {
            if f < t {
                incoming[t].push(f);
                is_source[f] = true;
            }
        }
        let s_n = pts.streams;
        let mut cur = vec![0u32; s_n * s_n];
        let mut snaps: BTreeMap<usize, Vec<u32>> = BTreeMap::new();
        for p in 0..np {
            let s = pts.stream[p];
            for &u in &incoming[p] {
                let t = pts.stream[u];
                if let Some(snap) = snaps.get(&u) {
                    for k in 0..s_n {
                        cur[s * s_n + k] = cur[s * s_n + k].max(snap[k]);
                    }
                }
                cur[s * s_n + t] = cur[s * s_n + t].max(pts.seq[u] + 1);
            }
            cur[s * s_n + s] = pts.seq[p] + 1;
            if is_source[p] {
                snaps.insert(p, cur[s * s_n..(s + 1) * s_n].to_vec());
            }
            for (q, what) in &queries[p] {
                if cur[s * s_n + pts.stream[*q]] > pts.seq[*q] {
                    continue;
                }
                out.push(self.unordered(what, pts.stream[*q], s));
            }
        }
    }

    /// The violation of a query the sweep found unanswered: its earlier point on stream `from`
    /// (dense), its later on `to`.
    fn unordered(&self, what: &Query, from: usize, to: usize) -> Violation {
        let (model, doc, dense) = (self.model, self.doc, &self.dense);
        match what {
            Query::Edge(a, b, via) => v(
                1,
                format!(
                    "{} is not ordered: no chain of stream order and syncs leads from '{}' (stream {}) to '{}' (stream {})",
                    dep_name(model, doc, *a, *b, *via),
                    doc.nodes[*a].name,
                    stream_name(dense, from),
                    doc.nodes[*b].name,
                    stream_name(dense, to)
                ),
            ),
            Query::Reuse { id, earlier, later } => {
                let (e, l) = (&doc.syncs[*earlier], &doc.syncs[*later]);
                v(
                    4,
                    format!(
                        "sync id {id} is reused unsafely: the wait of {} -> {} is not ordered before the record of {} -> {}",
                        e.from_name, e.to_name, l.from_name, l.to_name
                    ),
                )
            }
        }
    }
}

/// A sync into a training loop's StreamSwitch (one whose control outputs reach an
/// `is_loop_active` node within two hops) from a node at or after the switch in `nodes`: it
/// makes the next iteration's switch wait for this iteration's sender (GE's
/// `SetActiveStreamsForLoop` events).
fn is_loop_carried(model: &Model, doc: &Doc, s: &super::doc::DocSync) -> bool {
    if s.from.node < s.to.node {
        return false;
    }
    let Some(sw) = doc.nodes[s.to.node].model else { return false };
    if model.nodes[sw].op_type != "StreamSwitch" {
        return false;
    }
    let control_out = |n: NodeId| {
        model.out_edges(n).filter(|e| e.kind == crate::graph::EdgeKind::Control).map(|e| e.dst).collect::<Vec<_>>()
    };
    let loop_active = |n: NodeId| model.nodes[n].ge_attrs.flag("is_loop_active");
    control_out(sw).into_iter().any(|c| loop_active(c) || control_out(c).into_iter().any(loop_active))
}

fn stream_name(dense: &BTreeMap<u32, usize>, d: usize) -> u32 {
    dense.iter().find(|(_, x)| **x == d).map_or(u32::MAX, |(s, _)| *s)
}

/// Rule 2: stream order plus syncs and activations has no cycle (Kahn's algorithm).
fn check_acyclic(doc: &Doc, pts: &Points, arcs: &[(usize, usize, Option<usize>)], out: &mut Vec<Violation>) {
    let np = pts.stream.len();
    let mut succ: Vec<Vec<usize>> = (0..np).map(|_| Vec::new()).collect();
    let mut indeg = vec![0u32; np];
    let mut last_on: Vec<Option<usize>> = vec![None; pts.streams];
    for p in 0..np {
        if let Some(q) = last_on[pts.stream[p]] {
            succ[q].push(p);
            indeg[p] += 1;
        }
        last_on[pts.stream[p]] = Some(p);
    }
    for &(f, t, _) in arcs {
        succ[f].push(t);
        indeg[t] += 1;
    }
    let mut ready: Vec<usize> = (0..np).filter(|&p| indeg[p] == 0).collect();
    let mut done = 0;
    while let Some(p) = ready.pop() {
        done += 1;
        for &q in &succ[p] {
            indeg[q] -= 1;
            if indeg[q] == 0 {
                ready.push(q);
            }
        }
    }
    if done == np {
        return;
    }
    let stuck = arcs.iter().find(|&&(f, t, _)| indeg[f] > 0 && indeg[t] > 0);
    let what = match stuck {
        Some(&(_, _, Some(i))) => {
            let s = &doc.syncs[i];
            format!("sync id {} ({} -> {}) lies on it", s.id, s.from_name, s.to_name)
        }
        Some(&(f, _, None)) => format!("an activation by '{}' lies on it", node_of_point(doc, pts, f)),
        None => "it runs through stream order alone".into(),
    };
    out.push(v(2, format!("stream order plus syncs has a cycle ({} points deadlock); {what}", np - done)));
}

fn node_of_point<'d>(doc: &'d Doc, pts: &Points, p: usize) -> &'d str {
    let i = pts.start.partition_point(|&s| s <= p) - 1;
    &doc.nodes[i].name
}

/// Rule 1's premise: a node with device tasks runs on a stream. Nodes without any (Data,
/// Const, views, NetOutput) may run on none.
fn check_placed(model: &Model, doc: &Doc, out: &mut Vec<Violation>) {
    for n in doc.nodes.iter().filter(|n| n.stream.is_none() && n.tasks > 0) {
        let Some(id) = n.model else { continue };
        out.push(v(
            1,
            format!(
                "node '{}' of graph '{}' has {} device task(s) but runs on no stream (-1): nothing orders it",
                n.name,
                model.graph_label(model.nodes[id].graph),
                n.tasks
            ),
        ));
    }
}

/// Rules 5 and 6: continuous sync and stream ids, notify limit.
fn check_ids_and_streams(doc: &Doc, out: &mut Vec<Violation>) {
    let count = doc.event_count;
    let ids: BTreeSet<u64> = doc.syncs.iter().map(|s| s.id).collect();
    if let Some(&bad) = ids.iter().find(|&&i| i >= count) {
        out.push(v(5, format!("sync id {bad} is not below events.count = {count}")));
    }
    if let Some(missing) = (0..count).find(|i| !ids.contains(i)) {
        out.push(v(5, format!("sync ids are not continuous: id {missing} of 0..{count} (events.count) is unused")));
    }
    // The device creates fewer than MAX_STREAM_NUM streams, attached ones included.
    let device = crate::graph::device::MAX_STREAM_NUM as u64 - 1;
    if doc.physical.saturating_add(doc.attached_count) > device {
        out.push(v(
            5,
            format!(
                "{} physical and {} attached streams are more than the device creates ({device}, MAX_STREAM_NUM {})",
                doc.physical,
                doc.attached_count,
                device + 1
            ),
        ));
    }
    let main: BTreeSet<u32> = doc.nodes.iter().filter_map(|n| n.stream).collect();
    let attached: BTreeSet<u32> = doc.nodes.iter().flat_map(|n| n.attached.iter().copied()).collect();
    let main_only: BTreeSet<u32> = main.difference(&attached).copied().collect();
    if let Some(&bad) = main_only.iter().find(|&&s| u64::from(s) >= doc.physical) {
        out.push(v(5, format!("stream {bad} is not below streams.physical = {}", doc.physical)));
    }
    // GE reports at least one stream (PostProcessOfSplitStreams: stream_num 0 -> 1), so a model
    // whose nodes all run on no stream has one empty stream 0.
    let at_ge_minimum = doc.physical == 1 && main.is_empty();
    if let Some(missing) = (0..doc.physical).find(|&s| !at_ge_minimum && !main.contains(&(s as u32))) {
        out.push(v(5, format!("stream ids are not continuous: stream {missing} of 0..{} runs no node", doc.physical)));
    }
    let logical: BTreeSet<u32> = doc.nodes.iter().filter(|n| !n.inserted).filter_map(|n| n.logical_stream).collect();
    if let Some(&bad) = logical.iter().find(|&&s| u64::from(s) >= doc.logical && !attached.contains(&s)) {
        out.push(v(5, format!("logical stream {bad} is not below streams.logical = {}", doc.logical)));
    }
    if !attached.is_empty() {
        let (lo, hi) = (*attached.first().unwrap_or(&0), *attached.last().unwrap_or(&0));
        if u64::from(hi - lo + 1) != attached.len() as u64 || attached.len() as u64 != doc.attached_count {
            out.push(v(
                5,
                format!(
                    "attached stream ids {attached:?} are not continuous or do not match streams.attached = {}",
                    doc.attached_count
                ),
            ));
        }
    }
    if doc.notify && doc.event_count > 1024 {
        out.push(v(6, format!("events.count = {} notifies exceeds the limit of 1024", doc.event_count)));
    }
}
