//! GE: `UpdateForSkippedEnginePass` (ge-compiler.md §4.9).

use std::collections::BTreeSet;

use super::LogicalState;
use crate::error::Result;
use crate::graph::GraphId;

/// Places the nodes of skip-engine subgraphs (GE_LOCAL, HOST_CPU, FFTS+) that carry no stream
/// label, walking `g` in topological order and updating in place: a node with no subgraphs
/// whose every predecessor is on no stream goes to no stream; otherwise a node with outputs
/// whose valid-stream neighbours all share one stream moves to that stream.
pub fn run(st: &mut LogicalState<'_>, g: GraphId) -> Result<()> {
    let model = st.model;
    for &n in &model.graphs[g].order {
        let Some(s) = st.partition.of_node[n] else { continue };
        let sg = &st.partition.subgraphs[s];
        if !model.engines[sg.engine].skip_assign_stream || st.subgraph_label(s).is_some() {
            continue;
        }
        if st.node_stream[n].is_none() {
            continue;
        }
        let node = &model.nodes[n];
        let all_preds_unassigned = model.in_edges(n).all(|e| st.node_stream[e.src].is_none());
        if node.subgraphs.is_empty() && all_preds_unassigned {
            st.node_stream[n] = None;
            continue;
        }
        if model.adjacency.out_edges(n).is_empty() {
            continue;
        }
        let neighbours: BTreeSet<_> = model
            .in_edges(n)
            .map(|e| e.src)
            .chain(model.out_edges(n).map(|e| e.dst))
            .filter_map(|m| st.node_stream[m])
            .collect();
        if neighbours.len() == 1 {
            st.node_stream[n] = neighbours.first().copied();
        }
    }
    Ok(())
}
