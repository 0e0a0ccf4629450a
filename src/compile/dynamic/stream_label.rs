//! GE: `DynamicStreamAllocator::ReassignStreamByStreamLabel`.

use super::DynamicState;
use crate::graph::GraphId;

/// Every node of `g` with a stream label (`_stream_label`, or `_user_stream_label` as
/// `TransUserStreamLabel` copies it) moves to that label's stream, whatever its engine: one
/// stream per label, shared across graphs, a new id on first sight in topological order.
/// Input data nodes, which the partitioner keeps out of every subgraph and whose labels it
/// clears, keep no stream.
pub fn run(st: &mut DynamicState<'_>, g: GraphId) {
    let model = st.model;
    for &n in &model.graphs[g].order {
        if st.partition.of_node[n].is_none() {
            continue;
        }
        let attrs = &model.nodes[n].attrs;
        if let Some(label) = attrs.stream_label.as_deref().or(attrs.user_stream_label.as_deref()) {
            st.node_stream[n] = Some(st.label_stream(label));
        }
    }
}
