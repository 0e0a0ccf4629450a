//! GE: `NodeStreamUpdatePass` (ge-compiler.md §4.6).

use super::LogicalState;
use crate::bail;
use crate::error::Result;
use crate::graph::{GraphId, Shape, StreamId};

/// Copies subgraph streams onto their nodes. Every direct node of `g` first goes to -1; RTS
/// label nodes go to the graph's default stream; the `NetOutput` of a static `While` body whose
/// `While` lives in an unknown-shape graph goes to stream 0. A non-skip subgraph without a
/// stream is an internal error (E19999), as in GE.
pub fn run(st: &mut LogicalState<'_>, g: GraphId, default_stream: Option<StreamId>) -> Result<()> {
    let model = st.model;
    for &n in &model.graphs[g].nodes {
        st.node_stream[n] = None;
    }
    let while_body_in_dynamic = model.graphs[g].shape == Shape::Static
        && model.graphs[g]
            .parent
            .is_some_and(|p| model.nodes[p].op_type == "While" && model.is_dynamic(model.nodes[p].graph));
    for s in st.subgraphs_of(g) {
        let sg = &st.partition.subgraphs[s];
        let stream = st.subgraph_stream[s];
        if stream.is_none() && !model.engines[sg.engine].skip_assign_stream {
            bail!(Internal, "Subgraph {} has not yet been assigned a stream", sg.name);
        }
        for &n in &sg.nodes {
            let node = &model.nodes[n];
            st.node_stream[n] = if st.has(n, super::fact::RTS_LABEL) {
                default_stream
            } else if while_body_in_dynamic && node.op_type == "NetOutput" {
                Some(StreamId(0))
            } else {
                stream
            };
        }
    }
    Ok(())
}
