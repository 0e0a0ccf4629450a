//! Static logical stream allocation: GE's `LogicalStreamAllocator` (ge-compiler.md §4).
//!
//! One [`LogicalState`] is shared by every graph of the model (GE's `Context`: one
//! `next_stream` counter across graphs). Each pass is its own module, named after what it does,
//! with its GE name in the doc comment.

pub mod node_stream_update;
pub mod refresh_continuous;
pub mod single_stream;
pub mod skipped_engine;

use crate::error::Result;
use crate::graph::partition::Partition;
use crate::graph::{GraphId, IdVec, Model, NodeId, StreamId, SubgraphId};

/// The state the logical passes share (GE's `LogicalStreamAllocator::Context` plus the
/// subgraph and node stream ids it writes).
#[derive(Clone, Debug)]
pub struct LogicalState<'m> {
    pub model: &'m Model,
    pub partition: Partition,
    /// Stream of each engine subgraph (GE's `Subgraph::stream_id`, -1 = `None`).
    pub subgraph_stream: IdVec<SubgraphId, Option<StreamId>>,
    /// Stream of each node (GE's `OpDesc::GetStreamId`).
    pub node_stream: IdVec<NodeId, Option<StreamId>>,
    /// The next fresh logical stream id, shared by every graph.
    pub next_stream: u32,
    /// Attached stream ids per node (AssignAttachedStreamPass).
    pub attached: IdVec<NodeId, Vec<StreamId>>,
}

impl<'m> LogicalState<'m> {
    pub fn new(model: &'m Model, partition: Partition) -> Self {
        let subgraphs = partition.subgraphs.len();
        LogicalState {
            model,
            partition,
            subgraph_stream: IdVec::filled(subgraphs, None),
            node_stream: IdVec::filled(model.nodes.len(), None),
            next_stream: 0,
            attached: IdVec::filled(model.nodes.len(), Vec::new()),
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

/// Runs the single-stream chain (`SingleStreamPass` → `NodeStreamUpdatePass` →
/// `UpdateForSkippedEnginePass`) on every graph, then `RefreshContinuousStreams`.
pub fn assign_single_stream(model: &Model) -> Result<LogicalResult> {
    let mut st = LogicalState::new(model, Partition::of_model(model));
    let auto_mode = model.auto_multistream_mode()?;
    for g in model.all_graphs() {
        let default_stream = st.default_stream(g);
        single_stream::run(&mut st, g, default_stream, auto_mode)?;
        node_stream_update::run(&mut st, g, default_stream)?;
        skipped_engine::run(&mut st, g)?;
    }
    refresh_continuous::run(&mut st);
    Ok(st.finish())
}

impl LogicalState<'_> {
    /// Packages the state as a result (after the refresh).
    pub fn finish(self) -> LogicalResult {
        let attached_count = self.attached.iter().flatten().map(|s| s.0 + 1).max().map_or(0, |m| m - self.next_stream);
        LogicalResult {
            node_stream: self.node_stream,
            main_stream_count: self.next_stream,
            attached: self.attached,
            attached_count,
        }
    }
}
