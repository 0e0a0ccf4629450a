//! GE: `DynamicStreamAllocator::AssignEnginesOwningStream`.

use super::{DynamicState, STREAM_OWNING_ENGINES};
use crate::graph::GraphId;

/// Gives every subgraph of AIcoreEngine, VectorEngine, DNN_HCCL and DSAEngine its engine's one
/// stream (shared across graphs; a new id on the engine's first sight).
pub fn run(st: &mut DynamicState<'_>, g: GraphId) {
    for s in st.partition.by_graph[g].clone() {
        if st.subgraph_stream[s].is_none() && STREAM_OWNING_ENGINES.contains(&st.engine_name(s)) {
            let engine = st.partition.subgraphs[s].engine;
            st.subgraph_stream[s] = Some(st.engine_stream(engine));
        }
    }
}
