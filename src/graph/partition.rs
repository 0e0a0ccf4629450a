//! Engine subgraphs (GE's `SubGraphInfo`) and GE's engine partitioner
//! (`compiler/graph/partition/engine_partitioner.cc`, ge-compiler.md §2.2).
//!
//! Every stream pass iterates a graph's engine subgraphs in [`Partition::by_graph`] order. The
//! End/PlaceHolder pairs GE inserts at cut edges are represented by the cut edges themselves:
//! [`Partition::inputs`] of a subgraph are the edges entering it from another subgraph.

use std::collections::{BTreeMap, BTreeSet};

use super::Model;
use super::csr::Csr;
use super::ids::{EdgeId, EngineId, GraphId, IdVec, NodeId, SubgraphId};

/// One engine subgraph. A document's `partition` entry is the same record by name
/// ([`PartitionSpec`](super::builder::PartitionSpec)) until the builder resolves it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineSubgraph<E = EngineId, G = GraphId, N = NodeId> {
    pub name: String,
    pub engine: E,
    /// By name: `None` for the root.
    pub graph: G,
    /// `_stream_label` of the subgraph's first node.
    pub stream_label: Option<String>,
    /// `_user_stream_label` of the subgraph's first node.
    pub user_stream_label: Option<String>,
    /// Nodes in topological order (in a graph file's `partition`, as the file lists them).
    pub nodes: Vec<N>,
}

/// The engine subgraphs of every graph of a model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Partition {
    pub subgraphs: IdVec<SubgraphId, EngineSubgraph>,
    /// The subgraph each node belongs to; `None` for input data nodes (never given a stream).
    pub of_node: IdVec<NodeId, Option<SubgraphId>>,
    /// Each graph's subgraphs, in the order the stream passes iterate them.
    pub by_graph: IdVec<GraphId, Vec<SubgraphId>>,
    /// Cut edges entering each subgraph from another subgraph (GE's PlaceHolders), in the
    /// order of the destination node, then edge id. One list per subgraph in one allocation:
    /// a graph whose edges reach far back has a subgraph per few nodes.
    pub inputs: Csr<SubgraphId, EdgeId>,
    /// Cut edges leaving each subgraph to another subgraph (GE's Ends).
    pub outputs: Csr<SubgraphId, EdgeId>,
}

impl Partition {
    /// The model's own `partition` when it has one, else GE's partitioner.
    pub fn of_model(model: &Model) -> Partition {
        Self::for_compile(model, model.options.compat_ge, None)
    }

    /// [`Self::of_model`] under the compile options' `compat=ge` (which bounds the
    /// partitioner's second-path search), with `engines` standing in for the nodes' own
    /// engines where given (GE's second partitioning after cv marking).
    pub fn for_compile(model: &Model, compat_ge: bool, engines: Option<&IdVec<NodeId, EngineId>>) -> Partition {
        match &model.partition {
            Some(entries) => Self::from_entries(model, entries),
            None => partition_engines_with(model, compat_ge, engines),
        }
    }

    /// Builds from given entries (already validated: nodes exist and are listed once).
    pub fn from_entries(model: &Model, entries: &[EngineSubgraph]) -> Partition {
        let mut p = Partition::empty(model);
        for e in entries {
            let mut sub = e.clone();
            sub.nodes.sort_by_key(|&n| model.topo_index[n]);
            p.push(sub);
        }
        p.link_edges(model);
        p
    }

    fn empty(model: &Model) -> Partition {
        Partition {
            subgraphs: IdVec::new(),
            of_node: IdVec::filled(model.nodes.len(), None),
            by_graph: IdVec::filled(model.graphs.len(), Vec::new()),
            inputs: Csr::default(),
            outputs: Csr::default(),
        }
    }

    /// Adds a subgraph; its cut edges are linked once every subgraph is in ([`Self::link_edges`]).
    fn push(&mut self, sg: EngineSubgraph) -> SubgraphId {
        let graph = sg.graph;
        let id = self.subgraphs.push(sg);
        for &n in &self.subgraphs[id].nodes {
            self.of_node[n] = Some(id);
        }
        self.by_graph[graph].push(id);
        id
    }

    fn link_edges(&mut self, model: &Model) {
        let count = self.subgraphs.len();
        let (mut in_start, mut out_start) = (Vec::with_capacity(count + 1), Vec::with_capacity(count + 1));
        let (mut ins, mut outs) = (Vec::new(), Vec::new());
        in_start.push(0);
        out_start.push(0);
        for s in self.subgraphs.ids() {
            for &n in &self.subgraphs[s].nodes {
                for &e in model.adjacency.in_edges(n) {
                    if self.of_node[model.edges[e].src].is_some_and(|src| src != s) {
                        ins.push(e);
                    }
                }
                for &e in model.adjacency.out_edges(n) {
                    if self.of_node[model.edges[e].dst].is_some_and(|dst| dst != s) {
                        outs.push(e);
                    }
                }
            }
            in_start.push(ins.len() as u32);
            out_start.push(outs.len() as u32);
        }
        self.inputs = Csr::from_parts(in_start, ins);
        self.outputs = Csr::from_parts(out_start, outs);
    }

    /// Distinct producer subgraphs of `s`, in the order of its input edges.
    pub fn predecessors(&self, model: &Model, s: SubgraphId) -> Vec<SubgraphId> {
        let mut seen = BTreeSet::new();
        self.inputs.of(s).iter().filter_map(|&e| self.of_node[model.edges[e].src]).filter(|p| seen.insert(*p)).collect()
    }

    /// Distinct consumer subgraphs of `s`, in the order of its output edges.
    pub fn successors(&self, model: &Model, s: SubgraphId) -> Vec<SubgraphId> {
        let mut seen = BTreeSet::new();
        self.outputs
            .of(s)
            .iter()
            .filter_map(|&e| self.of_node[model.edges[e].dst])
            .filter(|p| seen.insert(*p))
            .collect()
    }

    pub fn len(&self) -> usize {
        self.subgraphs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.subgraphs.is_empty()
    }
}

/// GE's engine partitioner for every graph of the model.
///
/// Per graph, in topological order: one cluster per node; data-like nodes without inputs go
/// to the data pseudo-engine and stay out of every subgraph. Then (`MarkClusters`) each child
/// cluster, in index order, is merged into each parent cluster, parents taken by ascending
/// out-degree (ties by index), when both have the same engine and stream label and no second
/// path leads from the parent to the child. Subgraphs are ranked by their first node
/// (`SortSubGraphs`) and take the stream labels of that node.
///
/// GE searches for a second path without bound, which is quadratic on graphs whose edges reach
/// far back (every search walks most of the graph). Under `compat=ge` the search stays exact but
/// runs from both ends (the parent's consumers and the child's producers), which settles it in
/// the smaller of the two walks. Outside `compat=ge` a search that scans more
/// than [`SECOND_PATH_BUDGET`] cluster edges gives up and keeps the two clusters apart: a
/// conservative answer (it never merges what GE keeps apart, so the subgraphs stay acyclic), and
/// one that no graph of the corpus or of the layered, Inception-like and transformer families
/// reaches.
pub fn partition_engines(model: &Model) -> Partition {
    partition_engines_with(model, model.options.compat_ge, None)
}

fn partition_engines_with(model: &Model, compat_ge: bool, engines: Option<&IdVec<NodeId, EngineId>>) -> Partition {
    // Under compat=ge the search is exact (from both ends, `ord`-bounded); otherwise forward
    // from the parent with a budget.
    let budget = if compat_ge { usize::MAX } else { SECOND_PATH_BUDGET };
    partition_engines_searching(model, compat_ge, budget, engines)
}

/// Every graph through [`partition_graph`].
fn partition_engines_searching(
    model: &Model,
    exact: bool,
    budget: usize,
    engines: Option<&IdVec<NodeId, EngineId>>,
) -> Partition {
    let mut p = Partition::empty(model);
    for g in model.graphs.ids() {
        for sg in partition_graph(model, g, exact, budget, engines) {
            p.push(sg);
        }
    }
    p.link_edges(model);
    p
}

/// GE's own partitioner without the project's shortcuts: the forward search from the parent
/// without a budget (quadratic on graphs whose edges reach far back). The reference the
/// `compat=ge` search is held to in the tests: the same answer to every check.
pub fn partition_engines_forward(model: &Model) -> Partition {
    partition_engines_searching(model, false, usize::MAX, None)
}

/// Cluster out-list entries one second-path search may scan outside `compat=ge`.
pub const SECOND_PATH_BUDGET: usize = 64;

/// `exact`: the two-ended search (which keeps producer lists and `ord`); otherwise the forward
/// search, giving up after `budget` entries.
fn partition_graph(
    model: &Model,
    g: GraphId,
    exact: bool,
    budget: usize,
    engines: Option<&IdVec<NodeId, EngineId>>,
) -> Vec<EngineSubgraph> {
    let order = &model.graphs[g].order;
    let mut c = Clusters::new(model, order, engines, exact);

    let mut keyed: Vec<(usize, u32)> = Vec::new();
    for child in 0..order.len() as u32 {
        if c.find(child) != child || c.engine[child as usize].is_none() {
            continue;
        }
        // Clusters only ever merge into a smaller index, so `child` is still a single node
        // here and its parents are its node's producers.
        keyed.clear();
        for i in 0..c.ins.csr(child).len() {
            let p = c.find(c.ins.get(child, i));
            // Input data clusters never merge: they take no part.
            if p != child && c.engine[p as usize].is_some() {
                keyed.push((0, p));
            }
        }
        keyed.sort_unstable_by_key(|&(_, p)| p);
        keyed.dedup_by_key(|&mut (_, p)| p);
        // GE visits parents by ascending out-degree; ties by index keep it deterministic.
        // A single parent needs no ordering.
        if keyed.len() > 1 {
            for k in keyed.iter_mut() {
                k.0 = c.out_degree(k.1);
            }
            keyed.sort_unstable();
        }
        for &(_, parent) in &keyed {
            let parent = c.find(parent);
            let cur = c.find(child);
            if parent == cur || c.engine[parent as usize].is_none() {
                continue;
            }
            if c.engine[parent as usize] != c.engine[cur as usize] || c.label[parent as usize] != c.label[cur as usize]
            {
                continue;
            }
            // While the child is still its node alone, a second path has to enter it through
            // a producer in some third cluster: without one there is nothing to search.
            let searched = cur != child || c.producer_outside(child, parent);
            if searched && c.has_second_path(parent, cur, budget) {
                continue;
            }
            if !searched {
                c.nothing_between();
            }
            c.merge(parent, cur);
        }
    }

    // SortSubGraphs ranks the subgraphs by their first node in the graph's order: number the
    // clusters as a walk in that order meets them. Each cluster's members are counted first,
    // so that each list is allocated once at its size (a graph whose edges reach far back has
    // a subgraph per few nodes).
    const NONE: u32 = u32::MAX;
    let mut rank = vec![NONE; order.len()];
    let mut of_pos: Vec<u32> = Vec::with_capacity(order.len());
    let mut roots: Vec<u32> = Vec::new();
    let mut sizes: Vec<u32> = Vec::new();
    for i in 0..order.len() as u32 {
        let r = c.find(i);
        if c.engine[r as usize].is_none() {
            of_pos.push(NONE);
            continue;
        }
        if rank[r as usize] == NONE {
            rank[r as usize] = roots.len() as u32;
            roots.push(r);
            sizes.push(0);
        }
        let k = rank[r as usize];
        sizes[k as usize] += 1;
        of_pos.push(k);
    }
    let mut members: Vec<Vec<NodeId>> = sizes.iter().map(|&k| Vec::with_capacity(k as usize)).collect();
    for (&k, &n) in of_pos.iter().zip(order) {
        if k != NONE {
            members[k as usize].push(n);
        }
    }
    let gname = &model.graphs[g].name;
    members
        .into_iter()
        .zip(roots)
        .enumerate()
        .map(|(k, (nodes, r))| {
            let first = &model.nodes[nodes[0]];
            EngineSubgraph {
                name: format!("{gname}_sub_{k}"),
                engine: c.engine[r as usize].expect("only clusters with an engine have members"),
                graph: g,
                stream_label: first.attrs.stream_label.clone(),
                user_stream_label: first.attrs.user_stream_label.clone(),
                nodes,
            }
        })
        .collect()
}

/// One direction of the cluster graph's adjacency: a single-node cluster reads its list from
/// the graph's CSR; a merged one keeps a list of positions that may have been merged away
/// since: they are resolved through the union-find on use and compacted when counted.
struct Adj {
    start: Vec<u32>,
    list: Vec<u32>,
    /// Lists of merged clusters (`None` while a cluster is its founding node alone).
    merged: Vec<Option<Vec<u32>>>,
    /// Length of each merged list when it was last compacted: merges compact a list that has
    /// doubled since, so lists stay proportional to the clusters they reach.
    compacted: Vec<u32>,
    /// Under the exact search only, which reads lists in any order: compaction drops repeats
    /// by marking (`marks[c] == mark`) instead of sorting, which took most of the partition's
    /// time on graphs whose largest clusters feed most of the graph. Empty otherwise: the
    /// budgeted search must read lists sorted, as its answers depend on the order.
    marks: Vec<u32>,
    mark: u32,
}

impl Adj {
    fn new(start: Vec<u32>, list: Vec<u32>, unsorted: bool) -> Adj {
        let n = start.len().saturating_sub(1);
        let marks = if unsorted { vec![0; n] } else { Vec::new() };
        Adj { start, list, merged: vec![None; n], compacted: vec![0; n], marks, mark: 0 }
    }

    /// The graph's own list of position `x`.
    fn csr(&self, x: u32) -> &[u32] {
        &self.list[self.start[x as usize] as usize..self.start[x as usize + 1] as usize]
    }

    fn len(&self, x: u32) -> usize {
        self.merged[x as usize].as_ref().map_or_else(|| self.csr(x).len(), Vec::len)
    }

    /// Entry `i` of `x`'s list, unresolved. Read in place: copying a merged cluster's list on
    /// every visit of a search cost more than the search itself.
    fn get(&self, x: u32, i: usize) -> u32 {
        match &self.merged[x as usize] {
            Some(v) => v[i],
            None => self.list[self.start[x as usize] as usize + i],
        }
    }

    fn take(&mut self, x: u32) -> Vec<u32> {
        match self.merged[x as usize].take() {
            Some(v) => v,
            None => self.csr(x).to_vec(),
        }
    }

    /// Number of distinct clusters in `x`'s list besides `x`; compacts a merged list as a side
    /// effect, leaving it sorted (or, with `marks`, in first-seen order).
    fn compact(&mut self, x: u32, rep: &mut [u32], scratch: &mut Vec<u32>) -> usize {
        scratch.clear();
        match &self.merged[x as usize] {
            Some(v) => scratch.extend_from_slice(v),
            None => scratch.extend_from_slice(self.csr(x)),
        }
        for p in scratch.iter_mut() {
            *p = find(rep, *p);
        }
        if self.marks.is_empty() {
            scratch.retain(|&p| p != x);
            scratch.sort_unstable();
            scratch.dedup();
        } else {
            self.mark = self.mark.wrapping_add(1);
            if self.mark == 0 {
                self.marks.fill(0);
                self.mark = 1;
            }
            let (marks, mark) = (&mut self.marks, self.mark);
            marks[x as usize] = mark;
            scratch.retain(|&p| std::mem::replace(&mut marks[p as usize], mark) != mark);
        }
        let n = scratch.len();
        if let Some(list) = &mut self.merged[x as usize] {
            list.clear();
            list.extend_from_slice(scratch);
            self.compacted[x as usize] = n as u32;
        }
        n
    }

    /// Appends `child`'s list to `parent`'s (`child` has just been merged into `parent`).
    fn absorb(&mut self, parent: u32, child: u32, rep: &mut [u32], scratch: &mut Vec<u32>) {
        let mut a = self.take(parent);
        match self.merged[child as usize].take() {
            Some(mut b) => {
                if b.len() > a.len() {
                    std::mem::swap(&mut a, &mut b);
                }
                a.append(&mut b);
            }
            None => a.extend_from_slice(self.csr(child)),
        }
        let len = a.len();
        self.merged[parent as usize] = Some(a);
        if len > 2 * self.compacted[parent as usize] as usize + 16 {
            self.compact(parent, rep, scratch);
        }
    }
}

/// The union-find's representative of `x`, halving the path on the way.
fn find(rep: &mut [u32], mut x: u32) -> u32 {
    while rep[x as usize] != x {
        let up = rep[rep[x as usize] as usize];
        rep[x as usize] = up;
        x = up;
    }
    x
}

/// Clusters of one graph, indexed by the topological position of their founding node.
struct Clusters<'m> {
    /// `None`: GE's data pseudo-engine (input data nodes, never merged, never a subgraph).
    engine: Vec<Option<EngineId>>,
    /// `_stream_label` and `_user_stream_label`: GE copies a user label into the stream label
    /// (`StreamUtils::TransUserStreamLabel`) before partitioning, so a node with a user label
    /// never shares a subgraph with one that lacks it, nor with one of another user label.
    label: Vec<(Option<&'m str>, Option<&'m str>)>,
    /// Lowest and highest position of any member (bound the second-path search).
    min_pos: Vec<u32>,
    max_pos: Vec<u32>,
    /// Producers: merged clusters' lists are kept only for the exact search (`track_ins`);
    /// otherwise only single-node clusters read theirs.
    ins: Adj,
    outs: Adj,
    track_ins: bool,
    rep: Vec<u32>,
    /// Visit marks for the second-path search: `seen[x] == stamp` means visited this search
    /// (forward from the parent), `seen_back[x] == stamp` reached backward from the child.
    seen: Vec<u32>,
    seen_back: Vec<u32>,
    stamp: u32,
    stack: Vec<u32>,
    back: Vec<u32>,
    scratch: Vec<u32>,
    /// Exact search only: a topological order of the merged clusters (`ord[x]` of each
    /// representative, unique, with gaps; `by_ord` is its inverse). A second path from `a` to
    /// `b` runs through clusters strictly between their places, which bounds both sides.
    ord: Vec<u128>,
    by_ord: BTreeMap<u128, u32>,
    /// Clusters the last exact search reached forward (besides the parent) and backward, and
    /// which side ran out: that side is complete, and is what a merge moves to keep `ord` valid.
    reached: Vec<u32>,
    reached_back: Vec<u32>,
    ran_out: Side,
}

/// The side of an exact second-path search that ran out (`Clusters::ran_out`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Forward,
    Backward,
}

/// Gap between neighbouring places of [`Clusters::ord`] when (re)numbered.
const ORD_GAP: u128 = 1 << 64;

impl<'m> Clusters<'m> {
    fn new(model: &'m Model, order: &[NodeId], engines: Option<&IdVec<NodeId, EngineId>>, track_ins: bool) -> Self {
        let pos = |n: NodeId| model.topo_index[n];
        let n = order.len();
        let mut in_start = Vec::with_capacity(n + 1);
        let mut in_list = Vec::new();
        let mut out_start = Vec::with_capacity(n + 1);
        let mut out_list = Vec::new();
        let mut engine = Vec::with_capacity(n);
        let mut label = Vec::with_capacity(n);
        for &id in order {
            let node = &model.nodes[id];
            let ins = model.adjacency.in_edges(id);
            let is_input_data = node.is_data_like() && ins.is_empty();
            let own = engines.map_or(node.engine, |e| e[id]);
            engine.push(if is_input_data { None } else { Some(own) });
            label.push((node.attrs.stream_label.as_deref(), node.attrs.user_stream_label.as_deref()));
            in_start.push(in_list.len() as u32);
            in_list.extend(ins.iter().map(|&e| pos(model.edges[e].src)));
            out_start.push(out_list.len() as u32);
            out_list.extend(model.adjacency.out_edges(id).iter().map(|&e| pos(model.edges[e].dst)));
        }
        in_start.push(in_list.len() as u32);
        out_start.push(out_list.len() as u32);
        Clusters {
            engine,
            label,
            min_pos: (0..n as u32).collect(),
            max_pos: (0..n as u32).collect(),
            ins: Adj::new(in_start, in_list, track_ins),
            outs: Adj::new(out_start, out_list, track_ins),
            track_ins,
            rep: (0..n as u32).collect(),
            seen: vec![0; n],
            seen_back: vec![0; n],
            stamp: 0,
            stack: Vec::new(),
            back: Vec::new(),
            scratch: Vec::new(),
            ord: if track_ins { (1..=n as u128).map(|i| i * ORD_GAP).collect() } else { Vec::new() },
            by_ord: if track_ins {
                (0..n as u32).map(|i| ((i as u128 + 1) * ORD_GAP, i)).collect()
            } else {
                BTreeMap::new()
            },
            reached: Vec::new(),
            reached_back: Vec::new(),
            ran_out: Side::Backward,
        }
    }

    fn find(&mut self, x: u32) -> u32 {
        find(&mut self.rep, x)
    }

    /// Number of distinct clusters `x` feeds; compacts its out-list as a side effect. The list
    /// is left sorted: the second-path search pops its latest clusters first, which are the
    /// ones nearest the child, where a second path most likely closes.
    fn out_degree(&mut self, x: u32) -> usize {
        self.outs.compact(x, &mut self.rep, &mut self.scratch)
    }

    /// A stamp no entry of `seen` or `seen_back` holds yet.
    fn next_stamp(&mut self) -> u32 {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.seen.fill(0);
            self.seen_back.fill(0);
            self.stamp = 1;
        }
        self.stamp
    }

    /// Does single-node cluster `child` have a producer outside `parent` and itself that a
    /// path from `parent` could pass through? Input data clusters have no inputs: no path
    /// reaches them.
    fn producer_outside(&mut self, child: u32, parent: u32) -> bool {
        for i in 0..self.ins.csr(child).len() {
            let p = self.find(self.ins.get(child, i));
            if p != parent && p != child && self.engine[p as usize].is_some() {
                return true;
            }
        }
        false
    }

    /// Is there a path parent -> X -> ... -> child through some other cluster X? Answers yes
    /// once the search has scanned `budget` out-list entries without settling it.
    fn has_second_path(&mut self, parent: u32, child: u32, budget: usize) -> bool {
        if self.track_ins {
            return self.has_second_path_exact(parent, child);
        }
        let bound = self.max_pos[child as usize] as u128;
        let stamp = self.next_stamp();
        self.seen[parent as usize] = stamp;
        self.seen[child as usize] = stamp;
        self.stack.clear();
        self.stack.push(parent);
        let mut scanned = 0usize;
        while let Some(x) = self.stack.pop() {
            let len = self.outs.len(x);
            scanned += len;
            if scanned > budget {
                return true;
            }
            if self.forward_step(x, parent, child, bound, stamp) {
                return true;
            }
        }
        false
    }

    /// The same question without a budget, searched from both ends in turn: forward from
    /// `parent` and backward from `child`'s other producers. A second path exists exactly
    /// when the two meet (or the forward search reaches `child` from another cluster, or the
    /// backward one reaches `parent`), and not when either side runs out first. Searching
    /// forward alone walks most of a graph whose edges reach far back on every merge; the
    /// smaller side is the one that settles it.
    fn has_second_path_exact(&mut self, parent: u32, child: u32) -> bool {
        let (low, high) = (self.ord[parent as usize], self.ord[child as usize]);
        let stamp = self.next_stamp();
        self.seen[parent as usize] = stamp;
        self.seen[child as usize] = stamp;
        self.seen_back[child as usize] = stamp;
        self.stack.clear();
        self.stack.push(parent);
        self.back.clear();
        self.reached.clear();
        self.reached_back.clear();
        // A second path ends with an edge into `child` from a cluster other than `parent`, placed
        // after `parent`; input data clusters have no inputs, so no path from `parent` reaches them.
        for i in 0..self.ins.len(child) {
            let r = self.find(self.ins.get(child, i));
            if r != parent && self.within(r, low, high, stamp) {
                self.seen_back[r as usize] = stamp;
                self.back.push(r);
                self.reached_back.push(r);
            }
        }
        // Each turn goes to the side that will have scanned fewer list entries after it (the
        // model's largest cluster can feed most of the graph: its list is best left unread).
        let (mut forward, mut backward) = (0usize, 0usize);
        loop {
            let Some(&x) = self.stack.last() else {
                self.ran_out = Side::Forward;
                return false;
            };
            let Some(&y) = self.back.last() else {
                self.ran_out = Side::Backward;
                return false;
            };
            let next_forward = forward + self.outs.len(x) + 1;
            let next_backward = backward + self.ins.len(y) + 1;
            if next_forward <= next_backward {
                self.stack.pop();
                forward = next_forward;
                if self.forward_step(x, parent, child, high, stamp) {
                    return true;
                }
                continue;
            }
            self.back.pop();
            backward = next_backward;
            for i in 0..self.ins.len(y) {
                let r = self.find(self.ins.get(y, i));
                // `seen` holds `parent` and every cluster reached from it (and `child`, which
                // no producer of `child` can be fed by).
                if self.seen[r as usize] == stamp && r != child {
                    return true;
                }
                if self.within(r, low, high, stamp) {
                    self.seen_back[r as usize] = stamp;
                    self.back.push(r);
                    self.reached_back.push(r);
                }
            }
        }
    }

    /// Scans `x`'s consumers in the search from `parent`: true when one settles that a second
    /// path exists (`child` fed by another cluster, or a cluster the backward search reached
    /// from `child`); pushes the others not yet seen that could still lead into `child`.
    /// Could the backward search still meet the forward one at `r`: not yet reached backward,
    /// a cluster with inputs (`parent` reaches no input data cluster), placed after `parent`
    /// (every cluster the child's producers reach backward is placed before the child).
    fn within(&self, r: u32, low: u128, high: u128, stamp: u32) -> bool {
        let r = r as usize;
        self.seen_back[r] != stamp && self.engine[r].is_some() && self.ord[r] > low && self.ord[r] < high
    }

    /// `bound` is the child's last position outside `compat=ge`, its `ord` under it.
    fn forward_step(&mut self, x: u32, parent: u32, child: u32, bound: u128, stamp: u32) -> bool {
        for i in 0..self.outs.len(x) {
            let r = self.find(self.outs.get(x, i));
            if r == child {
                if x != parent {
                    return true;
                }
                continue;
            }
            if self.seen_back[r as usize] == stamp {
                return true;
            }
            // A cluster that starts after the child's last node, or is placed after the child,
            // cannot lead back into it.
            if self.seen[r as usize] == stamp {
                continue;
            }
            if self.track_ins {
                if self.ord[r as usize] < bound {
                    self.seen[r as usize] = stamp;
                    self.stack.push(r);
                    self.reached.push(r);
                }
            } else if self.min_pos[r as usize] as u128 <= bound {
                self.seen[r as usize] = stamp;
                self.stack.push(r);
            }
        }
        false
    }

    /// Merges `child` into `parent`: the merged cluster is found under `parent`.
    fn merge(&mut self, parent: u32, child: u32) {
        let (p, ch) = (parent as usize, child as usize);
        self.rep[ch] = parent;
        self.min_pos[p] = self.min_pos[p].min(self.min_pos[ch]);
        self.max_pos[p] = self.max_pos[p].max(self.max_pos[ch]);
        self.outs.absorb(parent, child, &mut self.rep, &mut self.scratch);
        if self.track_ins {
            self.ins.absorb(parent, child, &mut self.rep, &mut self.scratch);
            self.reorder(parent, child);
        }
    }

    /// Records that no cluster lies on a path into single-node `child` but `parent`: a merge
    /// without a search keeps `parent`'s place and moves nothing.
    fn nothing_between(&mut self) {
        self.reached_back.clear();
        self.ran_out = Side::Backward;
    }

    /// Keeps `ord` a topological order after `child` merged into `parent` (Pearce and Kelly's
    /// dynamic topological order, contracting an edge): the clusters placed between the two are
    /// either fed by `parent` (`reached`) or feed `child` (`reached_back`), never both, as there
    /// was no second path. The side that the search completed moves: the child's ancestors to
    /// just before `parent`'s place, kept by the merged cluster, or the parent's descendants to
    /// just after `child`'s place, taken by the merged cluster.
    fn reorder(&mut self, parent: u32, child: u32) {
        let (p, ch) = (parent as usize, child as usize);
        let mut moved = match self.ran_out {
            Side::Backward => {
                self.by_ord.remove(&self.ord[ch]);
                std::mem::take(&mut self.reached_back)
            }
            Side::Forward => {
                self.by_ord.remove(&self.ord[p]);
                self.ord[p] = self.ord[ch];
                self.by_ord.insert(self.ord[p], parent);
                std::mem::take(&mut self.reached)
            }
        };
        if !moved.is_empty() {
            moved.sort_unstable_by_key(|&x| self.ord[x as usize]);
            self.place(parent, &moved);
        }
        match self.ran_out {
            Side::Backward => self.reached_back = moved,
            Side::Forward => self.reached = moved,
        }
    }

    /// Gives `moved` (in order) fresh places in the gap just before `anchor` (the child's
    /// ancestors) or just after it (the parent's descendants), renumbering every place when
    /// the gap is too small.
    fn place(&mut self, anchor: u32, moved: &[u32]) {
        for &x in moved {
            self.by_ord.remove(&self.ord[x as usize]);
        }
        let gap = |c: &Self| {
            let at = c.ord[anchor as usize];
            match c.ran_out {
                Side::Backward => (c.by_ord.range(..at).next_back().map_or(0, |(&k, _)| k), at),
                Side::Forward => (at, c.by_ord.range(at + 1..).next().map_or(u128::MAX, |(&k, _)| k)),
            }
        };
        let (mut low, mut high) = gap(self);
        let mut step = (high - low) / (moved.len() as u128 + 1);
        if step == 0 {
            self.renumber();
            (low, high) = gap(self);
            step = (high - low) / (moved.len() as u128 + 1);
        }
        for (i, &x) in moved.iter().enumerate() {
            let at = low + step * (i as u128 + 1);
            self.ord[x as usize] = at;
            self.by_ord.insert(at, x);
        }
    }

    /// Spreads every place evenly again, keeping the order.
    fn renumber(&mut self) {
        let order: Vec<u32> = self.by_ord.values().copied().collect();
        self.by_ord.clear();
        for (i, x) in order.into_iter().enumerate() {
            let at = (i as u128 + 1) * ORD_GAP;
            self.ord[x as usize] = at;
            self.by_ord.insert(at, x);
        }
    }
}
