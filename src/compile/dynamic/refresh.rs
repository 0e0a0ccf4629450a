//! GE: `DynamicStreamAllocator::RefreshContinuousStreams` (with `RetainEngineOwingNodes`).

use std::collections::{BTreeMap, BTreeSet};

use super::DynamicState;
use crate::graph::{IdVec, Model, Node, NodeId, StreamId, is_data_like_type};

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

/// GE: `RefreshContinuousStreamsByNodeIds`, after the MiniDAG custom pass on a dynamic root.
///
/// The path cover hands out fresh ids past the dynamic ones and can leave engine streams
/// empty. The main-stream nodes ([`on_main_stream`]) and nodes without a stream go back to
/// stream 0, as the dynamic refresh put them; the ids held by the other nodes are renumbered
/// densely in increasing order (streams that lost every node disappear; label and
/// independent-engine streams keep their relative order). Only the ids of the nodes that stay
/// are counted, so a stream the pass emptied is not kept alive for the task-less main-stream
/// nodes: they join whichever stream becomes 0. Returns the main stream count (at least 1).
pub fn run_by_node_ids(model: &Model, node_stream: &mut IdVec<NodeId, Option<StreamId>>) -> u32 {
    let used: BTreeSet<StreamId> =
        model.nodes.ids().filter(|&n| !on_main_stream(&model.nodes[n])).filter_map(|n| node_stream[n]).collect();
    let remap: BTreeMap<StreamId, StreamId> =
        used.iter().enumerate().map(|(i, &old)| (old, StreamId(i as u32))).collect();
    for n in model.nodes.ids() {
        let s = &mut node_stream[n];
        *s = match *s {
            Some(old) if !on_main_stream(&model.nodes[n]) => remap.get(&old).copied(),
            _ => Some(StreamId(0)),
        };
    }
    (remap.len() as u32).max(1)
}
