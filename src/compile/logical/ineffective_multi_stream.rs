//! GE: `OptimizeIneffectiveMultiStreamPass` (ge-compiler.md §4.10), the topology pass of the
//! multi-stream chain.

use std::collections::{BTreeMap, BTreeSet};

use super::LogicalState;
use crate::error::Result;
use crate::graph::{GraphId, NodeId, StreamId};

/// A node none of whose neighbours shares its stream moves onto a neighbour's stream `t`
/// (not a label stream) when its latest producer and earliest consumer on `t` are adjacent on
/// `t`: the node then costs no extra synchronisation. Candidate streams are tried in id order
/// and a node may move more than once (GE's single pass, kept as is). Labelled, MDE and
/// parallel-group nodes never move.
pub fn run(st: &mut LogicalState<'_>, g: GraphId) -> Result<()> {
    let model = st.model;
    let order = &model.graphs[g].order;
    let mut stream_nodes: BTreeMap<StreamId, BTreeSet<u32>> = BTreeMap::new();
    let mut label_streams: BTreeSet<StreamId> = BTreeSet::new();
    for &n in order {
        if let Some(s) = st.node_stream[n] {
            stream_nodes.entry(s).or_default().insert(model.topo_index[n]);
            if st.node_label(n).is_some() {
                label_streams.insert(s);
            }
        }
    }
    let mut candidates: BTreeSet<StreamId> = BTreeSet::new();
    for &n in order {
        let attrs = &model.nodes[n].attrs;
        if st.node_label(n).is_some() || attrs.new_stream_id.is_some() || attrs.parallel_group.is_some() {
            continue;
        }
        let Some(own) = st.node_stream[n] else { continue };
        let neighbours = || model.in_edges(n).map(|e| e.src).chain(model.out_edges(n).map(|e| e.dst));
        if neighbours().any(|m| st.node_stream[m] == Some(own)) {
            continue;
        }
        candidates.clear();
        candidates.extend(neighbours().filter_map(|m| st.node_stream[m]));
        for &t in &candidates {
            if label_streams.contains(&t) {
                continue;
            }
            let on_t = |m: &NodeId| st.node_stream[*m] == Some(t);
            let a = model.in_edges(n).map(|e| e.src).filter(on_t).map(|m| model.topo_index[m]).max();
            let b = model.out_edges(n).map(|e| e.dst).filter(on_t).map(|m| model.topo_index[m]).min();
            let (Some(a), Some(b)) = (a, b) else { continue };
            let nodes_t = &stream_nodes[&t];
            if nodes_t.range(a + 1..).next() != Some(&b) {
                continue;
            }
            let cur = st.node_stream[n].expect("a moved node keeps a stream");
            let pos = model.topo_index[n];
            if let Some(set) = stream_nodes.get_mut(&cur) {
                set.remove(&pos);
            }
            stream_nodes.entry(t).or_default().insert(pos);
            st.node_stream[n] = Some(t);
        }
    }
    Ok(())
}
