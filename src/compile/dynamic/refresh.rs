//! GE: `DynamicStreamAllocator::RefreshContinuousStreams` (with `RetainEngineOwingNodes`).

use std::collections::{BTreeMap, BTreeSet};

use super::DynamicState;
use crate::graph::{GraphId, IdVec, Model, Node, NodeId, StreamId, is_data_like_type};

/// Renumbers the streams densely and puts the main-stream nodes on stream 0; returns the main
/// stream count (at least 1).
///
/// Engine streams that lost every node (to stream labels) are dropped (`RetainEngineOwingNodes`).
/// As in GE this looks before main-stream nodes move to stream 0, so an engine stream held
/// only by such a node (a `NetOutput` that attached to it) is kept, empty. The remaining engine
/// streams come first, ordered by engine (priority, name), then the label streams in label
/// string order. GE sorts engines with `p1 < p2 || n1 < n2`, which is not a strict weak order
/// (`DNN_VM_AICPU`(4) and `DSAEngine`(2) are each "less" than the other); the strict
/// lexicographic (priority, name) order used here agrees with GE's wherever GE's is well
/// defined. Label streams are kept even when empty, as GE keeps them.
pub fn run(st: &mut DynamicState<'_>) -> u32 {
    let model = st.model;
    let used: BTreeSet<StreamId> = st.node_stream.iter().flatten().copied().collect();
    let mut engines: Vec<_> = st.engine_streams.iter().filter(|(_, s)| used.contains(s)).collect();
    engines.sort_by(|(a, _), (b, _)| {
        let (a, b) = (&model.engines[**a], &model.engines[**b]);
        (a.priority_key(), &a.name).cmp(&(b.priority_key(), &b.name))
    });
    let mut remap: BTreeMap<StreamId, StreamId> = BTreeMap::new();
    for (_, &old) in engines {
        let new = StreamId(remap.len() as u32);
        remap.insert(old, new);
    }
    for &old in st.label_streams.values() {
        let new = StreamId(remap.len() as u32);
        remap.insert(old, new);
    }
    for n in model.nodes.ids() {
        let s = &mut st.node_stream[n];
        *s = match *s {
            Some(old) if !on_main_stream(&model.nodes[n]) => remap.get(&old).copied().or(Some(StreamId(0))),
            _ => Some(StreamId(0)),
        };
    }
    (remap.len() as u32).max(1)
}

/// Nodes GE keeps on the main stream whatever their engine: the Data family, variables and
/// constants (`FileConstant`, `ConstPlaceHolder`), `NetOutput`, and control-flow nodes that own
/// subgraphs.
pub fn on_main_stream(node: &Node) -> bool {
    is_data_like_type(&node.op_type) || node.op_type == "NetOutput" || !node.subgraphs.is_empty()
}

/// GE: `RefreshContinuousStreamsByNodeIds`, after the MiniDAG custom pass on a dynamic root
/// (also a `pass` step of its own, `refresh_by_node_ids`).
///
/// It walks the direct nodes of the root and of every dynamic-shape subgraph; known-shape
/// subgraphs keep their ids as given. Of those nodes, the ones without a stream, the ones GE
/// forces onto the main stream ([`on_main_stream`]: the Data family, variables, constants,
/// `FileConstant`, `ConstPlaceHolder`, `NetOutput`) and the ones that own subgraphs are
/// skipped; the ids the others hold are renumbered densely from 0 in increasing order, and the
/// skipped nodes go to stream 0. A stream the path cover emptied is therefore gone, and the
/// task-less main-stream nodes join whichever stream becomes 0. Returns the stream count:
/// the ids counted, at least 1.
pub fn run_by_node_ids(model: &Model, node_stream: &mut IdVec<NodeId, Option<StreamId>>) -> u32 {
    let walked: Vec<NodeId> = model
        .all_graphs()
        .into_iter()
        .filter(|&g| g == GraphId::ROOT || model.is_dynamic(g))
        .flat_map(|g| model.graphs[g].order.iter().copied())
        .collect();
    let keeps = |n: NodeId, s: &Option<StreamId>| s.is_some() && !on_main_stream(&model.nodes[n]);
    let used: BTreeSet<StreamId> =
        walked.iter().filter(|&&n| keeps(n, &node_stream[n])).filter_map(|&n| node_stream[n]).collect();
    let remap: BTreeMap<StreamId, StreamId> =
        used.iter().enumerate().map(|(i, &old)| (old, StreamId(i as u32))).collect();
    for &n in &walked {
        let s = &mut node_stream[n];
        *s = match *s {
            Some(old) if keeps(n, s) => remap.get(&old).copied(),
            _ => Some(StreamId(0)),
        };
    }
    (remap.len() as u32).max(1)
}
