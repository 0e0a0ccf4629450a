//! The graph model: a root graph and its nested subgraphs, with nodes, edges, engines,
//! options and attributes. A [`Model`] is immutable once built; every pipeline stage reads
//! it and writes its results into separate tables indexed by [`NodeId`], so topological ids
//! stay stable across stages (GE's graph-structure-stability principle).

#![forbid(unsafe_code)]

pub mod attrs;
pub mod builder;
pub mod csr;
pub mod device;
pub mod engines;
pub mod fields;
pub mod ids;
pub mod json;
mod json_check;
mod json_scan;
pub mod names;
pub mod options;
pub mod partition;
pub mod synth;
pub mod tasks;
pub mod topo;

use std::collections::BTreeMap;

use serde_json::Value;

use csr::Csr;

/// The graph JSON format's name and version (graph-json.md), which the loader checks.
pub const GRAPH_FORMAT: &str = "stream-graph";
pub const GRAPH_VERSION: u64 = 1;

pub use attrs::{AttachedFormat, AttachedStreamInfo, GeAttrs};
pub use builder::{EventEnd, EventSpec, ModelBuilder};
pub use engines::{EngineConf, EngineTable};
pub use fields::{Node, NodeAttrs};
pub use ids::{EdgeId, EngineId, EventId, GraphId, IdVec, InsertedId, NodeId, Pos, StreamId, SubgraphId};
pub use options::{AutoMultistreamMode, ExecutionOrder, MemoryLimit, Options, Policy, SyncKind};

/// Which allocation pipeline applies to a graph.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Shape {
    #[default]
    Static,
    Dynamic,
}

impl Shape {
    pub fn as_str(self) -> &'static str {
        match self {
            Shape::Static => "static",
            Shape::Dynamic => "dynamic",
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EdgeKind {
    #[default]
    Data,
    Control,
}

impl EdgeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Data => "data",
            EdgeKind::Control => "control",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Edge {
    pub src: NodeId,
    pub dst: NodeId,
    pub kind: EdgeKind,
    pub src_port: u32,
    pub dst_port: u32,
}

impl Node {
    /// Data-like node without a device task of its own: GE's partitioner keeps such nodes out
    /// of every engine subgraph when they have no inputs.
    pub fn is_data_like(&self) -> bool {
        is_data_like_type(&self.op_type)
    }
}

/// `Const`, `Constant`, the `Data` family and variables (GE's `kEngineDefaultData` test).
pub fn is_data_like_type(t: &str) -> bool {
    matches!(
        t,
        "Const"
            | "Constant"
            | "Data"
            | "RefData"
            | "AippData"
            | "AnnData"
            | "MultiShapeData"
            | "QueueData"
            | "Variable"
            | "VariableV2"
            | "VarHandleOp"
            | "FileConstant"
            | "ConstPlaceHolder"
    )
}

#[derive(Clone, Debug, PartialEq)]
pub struct Graph {
    pub name: String,
    pub shape: Shape,
    /// Owning node (If, While, Case, PartitionedCall…); `None` for the root.
    pub parent: Option<NodeId>,
    /// Nodes in declaration order.
    pub nodes: Vec<NodeId>,
    /// Nodes in stable topological order: declaration order wherever it already is topological.
    pub order: Vec<NodeId>,
    pub edges: Vec<EdgeId>,
}

/// Compressed adjacency: for each node, its in- and out-edges in edge-id order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Adjacency {
    outs: Csr<NodeId, EdgeId>,
    ins: Csr<NodeId, EdgeId>,
}

impl Adjacency {
    pub fn build(node_count: usize, edges: &IdVec<EdgeId, Edge>) -> Self {
        Adjacency {
            outs: Csr::group(node_count, edges.enumerate().map(|(id, e)| (e.src, id))),
            ins: Csr::group(node_count, edges.enumerate().map(|(id, e)| (e.dst, id))),
        }
    }

    #[inline]
    pub fn out_edges(&self, n: NodeId) -> &[EdgeId] {
        self.outs.of(n)
    }

    #[inline]
    pub fn in_edges(&self, n: NodeId) -> &[EdgeId] {
        self.ins.of(n)
    }
}

/// Largest id a given event may carry: the steps size tables by the largest id in use.
pub const MAX_GIVEN_EVENT_ID: u32 = (1 << 20) - 1;

/// A sync pair given with the graph (graph JSON `events`): what GE's event maps hold before a
/// step after logical allocation runs (`stream-alloc pass`, `allocate --from`). The stages
/// that compute streams ignore it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GivenEvent {
    /// Event id (a notify id under `event=notify`).
    pub id: u32,
    pub from: NodeId,
    /// `Some(s)`: the record sits on the node's attached stream `s`.
    pub from_attached: Option<StreamId>,
    pub to: NodeId,
    /// `Some(s)`: the wait sits on the node's attached stream `s`.
    pub to_attached: Option<StreamId>,
}

/// A whole model: the root graph (always `GraphId::ROOT`) and every nested subgraph.
#[derive(Clone, Debug)]
pub struct Model {
    pub name: String,
    pub source: Option<String>,
    pub graphs: IdVec<GraphId, Graph>,
    pub nodes: IdVec<NodeId, Node>,
    pub edges: IdVec<EdgeId, Edge>,
    pub adjacency: Adjacency,
    /// Position of each node in its graph's topological `order` (GE's topo id).
    pub topo_index: IdVec<NodeId, u32>,
    pub engines: EngineTable,
    pub options: Options,
    /// Root-graph attributes (`graph_attrs`).
    pub graph_attrs: BTreeMap<String, Value>,
    /// The engine subgraphs given with the graph, if any.
    pub partition: Option<Vec<partition::EngineSubgraph>>,
    /// The JSON `engines` field, kept for writing the graph back.
    pub engine_overrides: BTreeMap<String, engines::EngineOverride>,
    /// Events given with the graph, in the order given.
    pub events: Vec<GivenEvent>,
}

/// The data readers of one output followed through views (nodes whose output aliases an
/// input): the walk the memory plan and the memory-aware order share. Keeps its buffers between
/// walks.
#[derive(Debug, Default)]
pub struct ViewWalk {
    stack: Vec<(NodeId, u32)>,
    seen: Vec<(NodeId, u32)>,
}

impl ViewWalk {
    /// Calls `reader` with each node that reads output `port` of `n`, directly or through views
    /// (a node may come more than once); true when a `NetOutput` reads it.
    pub fn readers(&mut self, model: &Model, n: NodeId, port: u32, mut reader: impl FnMut(NodeId)) -> bool {
        let mut until_end = false;
        self.stack.clear();
        self.seen.clear();
        self.stack.push((n, port));
        while let Some((src, p)) = self.stack.pop() {
            if self.seen.contains(&(src, p)) {
                continue;
            }
            self.seen.push((src, p));
            for e in model.out_edges(src) {
                if e.kind != EdgeKind::Data || e.src_port != p {
                    continue;
                }
                let v = &model.nodes[e.dst];
                if v.op_type == "NetOutput" {
                    until_end = true;
                }
                if v.alias_input == Some(e.dst_port) {
                    let ports = v.out_bytes.as_ref().map_or(1, |b| b.len().max(1));
                    self.stack.extend((0..ports as u32).map(|q| (e.dst, q)));
                }
                reader(e.dst);
            }
        }
        until_end
    }
}

impl Model {
    pub fn root(&self) -> &Graph {
        &self.graphs[GraphId::ROOT]
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id]
    }

    pub fn edge(&self, id: EdgeId) -> &Edge {
        &self.edges[id]
    }

    pub fn graph(&self, id: GraphId) -> &Graph {
        &self.graphs[id]
    }

    pub fn engine(&self, id: NodeId) -> &EngineConf {
        &self.engines[self.nodes[id].engine]
    }

    pub fn out_edges(&self, n: NodeId) -> impl Iterator<Item = &Edge> + '_ {
        self.adjacency.out_edges(n).iter().map(|&e| &self.edges[e])
    }

    pub fn in_edges(&self, n: NodeId) -> impl Iterator<Item = &Edge> + '_ {
        self.adjacency.in_edges(n).iter().map(|&e| &self.edges[e])
    }

    /// The outputs of `nodes` that hold memory of their own, as `(node, port, bytes)`: each
    /// output with bytes of a node that is not a view (a view's output is its input's memory).
    pub fn own_outputs<'a>(&'a self, nodes: &'a [NodeId]) -> impl Iterator<Item = (NodeId, u32, u64)> + 'a {
        nodes.iter().filter(|&&n| self.nodes[n].alias_input.is_none()).flat_map(move |&n| {
            let sizes = self.nodes[n].out_bytes.as_deref().unwrap_or(&[]);
            sizes.iter().enumerate().filter(|&(_, &b)| b > 0).map(move |(port, &b)| (n, port as u32, b))
        })
    }

    /// Finds a node of `graph` by name.
    pub fn find_node(&self, graph: GraphId, name: &str) -> Option<NodeId> {
        self.graphs[graph].nodes.iter().copied().find(|&n| self.nodes[n].name == name)
    }

    pub fn find_graph(&self, name: &str) -> Option<GraphId> {
        self.graphs.ids().find(|&g| self.graphs[g].name == name)
    }

    /// The graph name as allocation JSON writes it: `""` for the root.
    pub fn graph_label(&self, g: GraphId) -> &str {
        if g == GraphId::ROOT { "" } else { &self.graphs[g].name }
    }

    /// Every node of every graph in GE's `GetAllNodes` order: each graph in topological
    /// order, with a node's subgraphs' nodes following that node (recursively).
    pub fn all_nodes(&self) -> Vec<NodeId> {
        if self.graphs.len() == 1 {
            return self.graphs[GraphId::ROOT].order.clone();
        }
        let mut out = Vec::with_capacity(self.nodes.len());
        let mut stack: Vec<(GraphId, usize)> = vec![(GraphId::ROOT, 0)];
        while let Some((g, i)) = stack.pop() {
            let order = &self.graphs[g].order;
            if i >= order.len() {
                continue;
            }
            let n = order[i];
            out.push(n);
            stack.push((g, i + 1));
            for &sub in self.nodes[n].subgraphs.iter().rev() {
                stack.push((sub, 0));
            }
        }
        out
    }

    /// Graphs in GE's `GetAllSubgraphs` order (root first, then depth-first by owning node).
    pub fn all_graphs(&self) -> Vec<GraphId> {
        let mut out = vec![GraphId::ROOT];
        if self.graphs.len() == 1 {
            return out;
        }
        for n in self.all_nodes() {
            out.extend_from_slice(&self.nodes[n].subgraphs);
        }
        out
    }

    /// `ge.autoMultistreamParallelMode`: the root-graph attribute wins over the option.
    pub fn auto_multistream_mode(&self, options: &Options) -> crate::Result<AutoMultistreamMode> {
        match self.graph_attrs.get("auto_multistream_parallel_mode") {
            Some(Value::String(s)) => AutoMultistreamMode::parse(s, true, "graph_attrs.auto_multistream_parallel_mode"),
            Some(other) => Err(crate::err!(
                InvalidOption,
                "graph_attrs.auto_multistream_parallel_mode must be a string, got {other}"
            )),
            None => Ok(options.auto_multistream_parallel_mode),
        }
    }

    /// Whether a node (transitively) lives in a dynamic-shape graph.
    pub fn is_dynamic(&self, g: GraphId) -> bool {
        self.graphs[g].shape == Shape::Dynamic
    }
}
