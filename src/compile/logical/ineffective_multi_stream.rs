//! GE: `OptimizeIneffectiveMultiStreamPass` (ge-compiler.md §4.10), the topology pass of the
//! multi-stream chain.

use std::collections::{BTreeMap, BTreeSet};

use super::{LogicalState, fact};
use crate::error::Result;
use crate::graph::{GraphId, NodeId, StreamId};

/// A node none of whose neighbours shares its stream moves onto a neighbour's stream `t`
/// (not a label stream) when its latest producer and earliest consumer on `t` are adjacent on
/// `t`: the node then costs no extra synchronisation. Candidate streams are tried in id order
/// and a node may move more than once (GE's single pass, kept as is). Labelled, MDE and
/// parallel-group nodes never move. A node is never moved onto or off a stream that carries a
/// (user) stream label; the partition keeps user-labelled nodes out of unlabelled subgraphs, so
/// a label's stream holds only its own nodes when this pass runs (fixtures `user_label_chain`,
/// `user_label_attached`).
pub fn run(st: &mut LogicalState<'_>, g: GraphId) -> Result<()> {
    let model = st.model;
    let order = &model.graphs[g].order;
    // Nodes of each stream by topological position: the positions at the start (sorted, as
    // `order` is walked in order) plus the nodes moved in since. An entry is live while its
    // node is still on that stream, so a move needs no removal.
    let mut initial: BTreeMap<StreamId, Vec<u32>> = BTreeMap::new();
    let mut moved_in: BTreeMap<StreamId, BTreeSet<u32>> = BTreeMap::new();
    let mut label_streams: BTreeSet<StreamId> = BTreeSet::new();
    for &n in order {
        if let Some(s) = st.node_stream[n] {
            initial.entry(s).or_default().push(model.topo_index[n]);
            if st.has(n, fact::LABEL) {
                label_streams.insert(s);
            }
        }
    }
    let mut candidates: BTreeSet<StreamId> = BTreeSet::new();
    for &n in order {
        if st.has(n, fact::LABEL | fact::NEW_STREAM_ID | fact::PARALLEL_GROUP) {
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
            let live = |pos: &u32| st.node_stream[order[*pos as usize]] == Some(t);
            let from_initial = initial.get(&t).and_then(|v| {
                let start = v.partition_point(|&p| p <= a);
                v[start..].iter().copied().find(|p| live(p))
            });
            let from_moved = moved_in.get(&t).and_then(|m| m.range(a + 1..).copied().find(|p| live(p)));
            let next_on_t = match (from_initial, from_moved) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, y) => x.or(y),
            };
            if next_on_t != Some(b) {
                continue;
            }
            moved_in.entry(t).or_default().insert(model.topo_index[n]);
            st.node_stream[n] = Some(t);
        }
    }
    Ok(())
}
