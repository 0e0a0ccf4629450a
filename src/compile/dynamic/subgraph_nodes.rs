//! GE: `DynamicStreamAllocator::SetSubgraphStreamToNodes`.

use super::DynamicState;
use crate::graph::GraphId;

/// Every direct node of `g` goes to no stream, then every node of an engine subgraph to the
/// subgraph's stream. Input data nodes (in no subgraph) stay unassigned.
pub fn run(st: &mut DynamicState<'_>, g: GraphId) {
    for &n in &st.model.graphs[g].nodes {
        st.node_stream[n] = None;
    }
    for &s in &st.partition.by_graph[g] {
        for &n in &st.partition.subgraphs[s].nodes {
            st.node_stream[n] = st.subgraph_stream[s];
        }
    }
}
