//! Engine subgraphs (GE's `SubGraphInfo`) and GE's engine partitioner
//! (`compiler/graph/partition/engine_partitioner.cc`, ge-compiler.md §2.2).
//!
//! Every stream pass iterates a graph's engine subgraphs in [`Partition::by_graph`] order. The
//! End/PlaceHolder pairs GE inserts at cut edges are represented by the cut edges themselves:
//! [`Partition::inputs`] of a subgraph are the edges entering it from another subgraph.

use std::collections::BTreeSet;

use super::ids::{EdgeId, EngineId, GraphId, IdVec, NodeId, SubgraphId};
use super::{Model, PartitionEntry};

/// One engine subgraph.
#[derive(Clone, Debug, PartialEq)]
pub struct EngineSubgraph {
    pub name: String,
    pub engine: EngineId,
    pub graph: GraphId,
    /// `_stream_label` of the subgraph's first node.
    pub stream_label: Option<String>,
    /// `_user_stream_label` of the subgraph's first node.
    pub user_stream_label: Option<String>,
    /// Nodes in topological order.
    pub nodes: Vec<NodeId>,
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
    /// order of the destination node, then edge id.
    pub inputs: IdVec<SubgraphId, Vec<EdgeId>>,
    /// Cut edges leaving each subgraph to another subgraph (GE's Ends).
    pub outputs: IdVec<SubgraphId, Vec<EdgeId>>,
}

impl Partition {
    /// The model's own `partition` when it has one, else GE's partitioner.
    pub fn of_model(model: &Model) -> Partition {
        match &model.partition {
            Some(entries) => Self::from_entries(model, entries),
            None => partition_engines(model),
        }
    }

    /// Builds from given entries (already validated: nodes exist and are listed once).
    pub fn from_entries(model: &Model, entries: &[PartitionEntry]) -> Partition {
        let mut p = Partition::empty(model);
        for e in entries {
            let mut nodes = e.nodes.clone();
            nodes.sort_by_key(|&n| model.topo_index[n]);
            p.push(EngineSubgraph {
                name: e.name.clone(),
                engine: e.engine,
                graph: e.graph,
                stream_label: e.stream_label.clone(),
                user_stream_label: e.user_stream_label.clone(),
                nodes,
            });
        }
        p.link_edges(model);
        p
    }

    fn empty(model: &Model) -> Partition {
        Partition {
            subgraphs: IdVec::new(),
            of_node: IdVec::filled(model.nodes.len(), None),
            by_graph: IdVec::filled(model.graphs.len(), Vec::new()),
            inputs: IdVec::new(),
            outputs: IdVec::new(),
        }
    }

    fn push(&mut self, sg: EngineSubgraph) -> SubgraphId {
        let graph = sg.graph;
        let nodes = sg.nodes.clone();
        let id = self.subgraphs.push(sg);
        for n in nodes {
            self.of_node[n] = Some(id);
        }
        self.by_graph[graph].push(id);
        self.inputs.push(Vec::new());
        self.outputs.push(Vec::new());
        id
    }

    fn link_edges(&mut self, model: &Model) {
        for s in self.subgraphs.ids() {
            for &n in &self.subgraphs[s].nodes {
                for &e in model.adjacency.in_edges(n) {
                    if let Some(src) = self.of_node[model.edges[e].src] {
                        if src != s {
                            self.inputs[s].push(e);
                        }
                    }
                }
                for &e in model.adjacency.out_edges(n) {
                    if let Some(dst) = self.of_node[model.edges[e].dst] {
                        if dst != s {
                            self.outputs[s].push(e);
                        }
                    }
                }
            }
        }
    }

    /// Distinct producer subgraphs of `s`, in the order of its input edges.
    pub fn predecessors(&self, model: &Model, s: SubgraphId) -> Vec<SubgraphId> {
        let mut seen = BTreeSet::new();
        self.inputs[s].iter().filter_map(|&e| self.of_node[model.edges[e].src]).filter(|p| seen.insert(*p)).collect()
    }

    /// Distinct consumer subgraphs of `s`, in the order of its output edges.
    pub fn successors(&self, model: &Model, s: SubgraphId) -> Vec<SubgraphId> {
        let mut seen = BTreeSet::new();
        self.outputs[s].iter().filter_map(|&e| self.of_node[model.edges[e].dst]).filter(|p| seen.insert(*p)).collect()
    }

    pub fn len(&self) -> usize {
        self.subgraphs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.subgraphs.is_empty()
    }
}

/// A cluster during partitioning; `None` engine marks GE's `kEngineDefaultData`.
struct Cluster {
    engine: Option<EngineId>,
    label: Option<String>,
    /// Highest topological position of any member (bounds the second-path search).
    max_pos: u32,
    nodes: Vec<NodeId>,
    ins: BTreeSet<u32>,
    outs: BTreeSet<u32>,
}

/// GE's engine partitioner for every graph of the model.
///
/// Per graph, in topological order: one cluster per node; data-like nodes without inputs go
/// to the data pseudo-engine and stay out of every subgraph. Then (`MarkClusters`) each child
/// cluster, in index order, is merged into each parent cluster, parents taken by ascending
/// out-degree (ties by index), when both have the same engine and stream label and no second
/// path leads from the parent to the child. Subgraphs are ranked by their first node
/// (`SortSubGraphs`) and take the stream labels of that node.
pub fn partition_engines(model: &Model) -> Partition {
    let mut p = Partition::empty(model);
    for g in model.graphs.ids() {
        for sg in partition_graph(model, g) {
            p.push(sg);
        }
    }
    p.link_edges(model);
    p
}

fn partition_graph(model: &Model, g: GraphId) -> Vec<EngineSubgraph> {
    let order = &model.graphs[g].order;
    let pos = |n: NodeId| model.topo_index[n];
    // Cluster index == topological position of the founding node.
    let mut clusters: Vec<Cluster> = order
        .iter()
        .map(|&n| {
            let node = &model.nodes[n];
            let has_inputs = !model.adjacency.in_edges(n).is_empty();
            let is_input_data = node.is_data_like() && !has_inputs;
            Cluster {
                engine: if is_input_data { None } else { Some(node.engine) },
                label: node.attrs.stream_label.clone(),
                max_pos: pos(n),
                nodes: vec![n],
                ins: model.in_edges(n).map(|e| pos(e.src)).collect(),
                outs: model.out_edges(n).map(|e| pos(e.dst)).collect(),
            }
        })
        .collect();
    // Union-find from position to the representative cluster index.
    let mut rep: Vec<u32> = (0..order.len() as u32).collect();
    fn find(rep: &mut [u32], mut x: u32) -> u32 {
        while rep[x as usize] != x {
            let up = rep[rep[x as usize] as usize];
            rep[x as usize] = up;
            x = up;
        }
        x
    }

    for child in 0..clusters.len() as u32 {
        if find(&mut rep, child) != child || clusters[child as usize].engine.is_none() {
            continue;
        }
        let mut parents: Vec<u32> = clusters[child as usize].ins.iter().map(|&i| find(&mut rep, i)).collect();
        parents.sort_unstable();
        parents.dedup();
        parents.sort_by_key(|&q| (clusters[q as usize].outs.len(), q));
        let mut cur = child;
        for parent in parents {
            let parent = find(&mut rep, parent);
            cur = find(&mut rep, cur);
            if parent == cur {
                continue;
            }
            let (pc, cc) = (&clusters[parent as usize], &clusters[cur as usize]);
            if pc.engine.is_none() || pc.engine != cc.engine || pc.label != cc.label {
                continue;
            }
            if has_second_path(&clusters, &mut rep, parent, cur) {
                continue;
            }
            merge(&mut clusters, &mut rep, parent, cur);
        }
    }

    let mut out: Vec<EngineSubgraph> = Vec::new();
    for i in 0..clusters.len() as u32 {
        if find(&mut rep, i) != i || clusters[i as usize].engine.is_none() {
            continue;
        }
        let c = &mut clusters[i as usize];
        c.nodes.sort_by_key(|&n| pos(n));
        let first = &model.nodes[c.nodes[0]];
        out.push(EngineSubgraph {
            name: String::new(),
            engine: c.engine.expect("filtered"),
            graph: g,
            stream_label: first.attrs.stream_label.clone(),
            user_stream_label: first.attrs.user_stream_label.clone(),
            nodes: std::mem::take(&mut c.nodes),
        });
    }
    // SortSubGraphs: rank by first appearance in the graph's node order.
    out.sort_by_key(|s| pos(s.nodes[0]));
    let gname = &model.graphs[g].name;
    for (k, s) in out.iter_mut().enumerate() {
        s.name = format!("{gname}_sub_{k}");
    }
    out
}

/// Is there a path parent -> X -> ... -> child through some other cluster X?
fn has_second_path(clusters: &[Cluster], rep: &mut [u32], parent: u32, child: u32) -> bool {
    let bound = clusters[child as usize].max_pos;
    let mut stack: Vec<u32> = Vec::new();
    let mut seen: BTreeSet<u32> = BTreeSet::new();
    for &o in &clusters[parent as usize].outs {
        let r = find_root(rep, o);
        if r != child && r != parent && seen.insert(r) {
            stack.push(r);
        }
    }
    while let Some(x) = stack.pop() {
        for &o in &clusters[x as usize].outs {
            let r = find_root(rep, o);
            if r == child {
                return true;
            }
            // A cluster that starts after the child's last node cannot lead back into it.
            if r != parent && r <= bound && seen.insert(r) {
                stack.push(r);
            }
        }
    }
    false
}

fn find_root(rep: &mut [u32], mut x: u32) -> u32 {
    while rep[x as usize] != x {
        let up = rep[rep[x as usize] as usize];
        rep[x as usize] = up;
        x = up;
    }
    x
}

/// Merges `child` into `parent`: the parent keeps its index.
fn merge(clusters: &mut [Cluster], rep: &mut [u32], parent: u32, child: u32) {
    rep[child as usize] = parent;
    let moved = std::mem::take(&mut clusters[child as usize].nodes);
    let ins = std::mem::take(&mut clusters[child as usize].ins);
    let outs = std::mem::take(&mut clusters[child as usize].outs);
    let max_pos = clusters[child as usize].max_pos;
    let pc = &mut clusters[parent as usize];
    pc.nodes.extend(moved);
    pc.max_pos = pc.max_pos.max(max_pos);
    pc.ins.extend(ins);
    pc.outs.extend(outs);
    // Edges inside the merged cluster are no longer cluster edges; stale members resolve via `rep`.
    let resolved_ins: BTreeSet<u32> = pc.ins.iter().map(|&i| find_root(rep, i)).filter(|&i| i != parent).collect();
    let resolved_outs: BTreeSet<u32> =
        clusters[parent as usize].outs.iter().map(|&i| find_root(rep, i)).filter(|&i| i != parent).collect();
    clusters[parent as usize].ins = resolved_ins;
    clusters[parent as usize].outs = resolved_outs;
}
