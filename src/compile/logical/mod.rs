//! Static logical stream allocation: GE's `LogicalStreamAllocator` (ge-compiler.md §4).
//!
//! One [`LogicalState`] is shared by every graph of the model (GE's `Context`: one
//! `next_stream` counter across graphs). Each pass is its own module, named after what it does,
//! with its GE name in the doc comment. [`assign_multi_stream`] and [`assign_single_stream`] are
//! GE's `Assign` driver for the two chains; `compile::passes` runs any named subset.

pub mod all_reduce_parallel;
pub mod attached_stream;
pub mod by_dependency;
pub mod by_label;
pub mod cv_parallel;
pub mod independent_stream;
pub mod ineffective_multi_stream;
pub mod mde_group;
pub mod node_stream_update;
pub mod parallel_group;
pub mod path_cover;
pub mod refresh_continuous;
pub mod single_stream;
pub mod skipped_engine;

use crate::graph::partition::Partition;
use crate::graph::{EngineId, GraphId, IdVec, Model, NodeId, Options, StreamId, SubgraphId};

/// The state the logical passes share (GE's `LogicalStreamAllocator::Context` plus the
/// subgraph and node stream ids it writes).
#[derive(Clone, Debug)]
pub struct LogicalState<'m> {
    pub model: &'m Model,
    /// The compile options; passes read these, never the graph document's own.
    pub options: &'m Options,
    pub partition: Partition,
    /// Every node's engine where it differs from the model's (cv marking moves nodes to
    /// `VectorEngine`); `None`: the model's own.
    pub engines: Option<IdVec<NodeId, EngineId>>,
    /// Stream of each engine subgraph (GE's `Subgraph::stream_id`, -1 = `None`).
    pub subgraph_stream: IdVec<SubgraphId, Option<StreamId>>,
    /// Stream of each node (GE's `OpDesc::GetStreamId`).
    pub node_stream: IdVec<NodeId, Option<StreamId>>,
    /// The next fresh logical stream id, shared by every graph.
    pub next_stream: u32,
    /// Attached stream ids per node (AssignAttachedStreamPass).
    pub attached: IdVec<NodeId, Vec<StreamId>>,
    /// Main streams, fixed when the attached-stream pass starts numbering after them.
    pub main_stream_num: Option<u32>,
    /// Each subgraph's position in its graph's pass order (cut edges never leave a graph, so
    /// this is a per-graph local index).
    pub subgraph_pos: IdVec<SubgraphId, u32>,
    /// What the passes ask of each node, read once from its attributes (passes then touch
    /// one byte per node instead of the whole node).
    pub facts: IdVec<NodeId, u8>,
    /// Union of `facts` over each graph's nodes: a pass skips a graph without its attribute.
    pub graph_facts: IdVec<GraphId, u8>,
    /// Graphs in GE's `DoAssign` order (`Model::all_graphs`), computed once.
    pub graphs: Vec<GraphId>,
}

/// Bits of [`LogicalState::facts`].
pub mod fact {
    /// `_stream_label` or `_user_stream_label`.
    pub const LABEL: u8 = 1;
    pub const USER_LABEL: u8 = 2;
    /// MDE `NewStreamId`.
    pub const NEW_STREAM_ID: u8 = 4;
    pub const PARALLEL_GROUP: u8 = 8;
    pub const FORCE_ATTACH: u8 = 16;
    /// Attached-stream requests, not disabled.
    pub const ATTACHED: u8 = 32;
    /// `_rts_label_node`.
    pub const RTS_LABEL: u8 = 64;
}

fn node_facts(model: &Model) -> (IdVec<NodeId, u8>, IdVec<GraphId, u8>) {
    let mut graph_facts = IdVec::filled(model.graphs.len(), 0u8);
    let facts = IdVec::from_vec(
        model
            .nodes
            .iter()
            .map(|node| {
                let a = &node.attrs;
                let mut f = 0;
                if a.stream_label.is_some() || a.user_stream_label.is_some() {
                    f |= fact::LABEL;
                }
                if a.user_stream_label.is_some() {
                    f |= fact::USER_LABEL;
                }
                if a.new_stream_id.is_some() {
                    f |= fact::NEW_STREAM_ID;
                }
                if a.parallel_group.is_some() {
                    f |= fact::PARALLEL_GROUP;
                }
                if a.rts_label_node {
                    f |= fact::RTS_LABEL;
                }
                if !node.ge_attrs.is_empty() && node.ge_attrs.flag("_force_attach_stream") {
                    f |= fact::FORCE_ATTACH;
                }
                if !a.attached_streams.is_empty()
                    && (node.ge_attrs.is_empty() || !node.ge_attrs.flag("_disable_attached_resource"))
                {
                    f |= fact::ATTACHED;
                }
                graph_facts[node.graph] |= f;
                f
            })
            .collect(),
    );
    (facts, graph_facts)
}
fn positions_in_graph(p: &Partition) -> IdVec<SubgraphId, u32> {
    let mut pos = IdVec::filled(p.subgraphs.len(), 0u32);
    for list in p.by_graph.iter() {
        for (i, &s) in list.iter().enumerate() {
            pos[s] = i as u32;
        }
    }
    pos
}

impl<'m> LogicalState<'m> {
    /// The state `allocate` starts from. Every node starts on its pre-assigned stream, or on
    /// stream 0 (GE's `OpDesc` default): UpdateForMdeGroupPass buckets nodes by that value
    /// before NodeStreamUpdatePass overwrites it.
    pub fn new(model: &'m Model, options: &'m Options, partition: Partition) -> Self {
        let (facts, graph_facts) = node_facts(model);
        let subgraphs = partition.subgraphs.len();
        LogicalState {
            model,
            options,
            subgraph_pos: positions_in_graph(&partition),
            partition,
            engines: None,
            subgraph_stream: IdVec::filled(subgraphs, None),
            node_stream: IdVec::from_vec(model.nodes.iter().map(|n| Some(n.stream.unwrap_or(StreamId(0)))).collect()),
            next_stream: 0,
            attached: IdVec::filled(model.nodes.len(), Vec::new()),
            main_stream_num: None,
            facts,
            graph_facts,
            graphs: model.all_graphs(),
        }
    }

    /// The state `stream-alloc pass` starts from: the file's pre-assigned node streams (absent
    /// = no stream) and attached ids, `next_stream` past every id in use unless the option
    /// `next_stream` sets it (GE's unit tests start a fresh context at 0). Subgraphs start
    /// without a stream, as GE's `ConvertSubgraphs` creates them.
    pub fn from_preassigned(model: &'m Model, options: &'m Options, partition: Partition) -> Self {
        let (facts, graph_facts) = node_facts(model);
        let node_stream: IdVec<NodeId, Option<StreamId>> =
            IdVec::from_vec(model.nodes.iter().map(|n| n.stream).collect());
        let attached: IdVec<NodeId, Vec<StreamId>> =
            IdVec::from_vec(model.nodes.iter().map(|n| n.attached_stream_ids.clone()).collect());
        let next_stream = node_stream.iter().flatten().chain(attached.iter().flatten()).map(|s| s.0 + 1).max();
        LogicalState {
            model,
            options,
            subgraph_pos: positions_in_graph(&partition),
            subgraph_stream: IdVec::filled(partition.subgraphs.len(), None),
            partition,
            engines: None,
            node_stream,
            next_stream: options.next_stream.or(next_stream).unwrap_or(0),
            attached,
            main_stream_num: None,
            facts,
            graph_facts,
            graphs: model.all_graphs(),
        }
    }

    /// Takes `next_stream++`.
    pub fn fresh_stream(&mut self) -> StreamId {
        let s = StreamId(self.next_stream);
        self.next_stream += 1;
        s
    }

    /// GE's `default_stream` for a graph in `DoAssign`: -1 for the root and for graphs whose
    /// parent node lives in an unknown-shape graph, else the parent node's stream.
    pub fn default_stream(&self, g: GraphId) -> Option<StreamId> {
        let parent = self.model.graphs[g].parent?;
        let parent_graph = self.model.nodes[parent].graph;
        if self.model.is_dynamic(parent_graph) {
            return None;
        }
        self.node_stream[parent]
    }

    /// The engine subgraphs of one graph, in pass order.
    pub fn subgraphs_of(&self, g: GraphId) -> Vec<SubgraphId> {
        self.partition.by_graph[g].clone()
    }

    /// The effective stream label of a subgraph: `_stream_label`, or the user label that
    /// `StreamUtils::TransUserStreamLabel` copies into it.
    pub fn subgraph_label(&self, s: SubgraphId) -> Option<&str> {
        let sg = &self.partition.subgraphs[s];
        sg.stream_label.as_deref().or(sg.user_stream_label.as_deref())
    }

    /// Whether node `n` has fact bit `f`.
    #[inline]
    pub fn has(&self, n: NodeId, f: u8) -> bool {
        self.facts[n] & f != 0
    }

    /// Whether some node of graph `g` has fact bit `f`.
    #[inline]
    pub fn graph_has(&self, g: GraphId, f: u8) -> bool {
        self.graph_facts[g] & f != 0
    }

    /// The effective stream label of a node (user label copied in, as for subgraphs).
    pub fn node_label(&self, n: NodeId) -> Option<&str> {
        let a = &self.model.nodes[n].attrs;
        a.stream_label.as_deref().or(a.user_stream_label.as_deref())
    }
}

/// The result of logical allocation.
#[derive(Clone, Debug, PartialEq)]
pub struct LogicalResult {
    pub node_stream: IdVec<NodeId, Option<StreamId>>,
    /// Main streams after the continuity refresh (ids `0..main_stream_count`).
    pub main_stream_count: u32,
    pub attached: IdVec<NodeId, Vec<StreamId>>,
    /// Attached streams (ids `main_stream_count..main_stream_count + attached_count`).
    pub attached_count: u32,
}

impl LogicalState<'_> {
    /// Packages the state as a result.
    pub fn finish(self) -> LogicalResult {
        let main = self.main_stream_num.unwrap_or(self.next_stream);
        LogicalResult {
            node_stream: self.node_stream,
            main_stream_count: main,
            attached_count: self.next_stream.saturating_sub(main),
            attached: self.attached,
        }
    }
}
