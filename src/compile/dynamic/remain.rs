//! GE: `DynamicStreamAllocator::AssignRemainSubgraphNeedAssignStream`.

use super::DynamicState;
use crate::graph::GraphId;

/// Every subgraph still without a stream takes its engine's stream, except subgraphs of
/// skip-assign engines (GE_LOCAL, HOST_CPU, FFTS+), which stay unassigned and end on the main
/// stream.
pub fn run(st: &mut DynamicState<'_>, g: GraphId) {
    for s in st.partition.by_graph[g].clone() {
        let engine = st.partition.subgraphs[s].engine;
        if st.subgraph_stream[s].is_none() && !st.model.engines[engine].skip_assign_stream {
            st.subgraph_stream[s] = Some(st.engine_stream(engine));
        }
    }
}
