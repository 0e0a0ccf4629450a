//! GE: `UpdateForMdeGroupPass` (ge-compiler.md §4.2).

use std::collections::BTreeMap;

use super::LogicalState;
use crate::error::Result;
use crate::graph::{GraphId, NodeId, StreamId};

/// Gives MDE nodes (`NewStreamId`, no `_parallel_group`) a fresh stream per distinct
/// `NewStreamId` within each bucket of nodes sharing a current stream (buckets in stream
/// order, no-stream nodes skipped).
///
/// GE runs this before NodeStreamUpdatePass, which overwrites every node with its subgraph's
/// stream, so in the full chain the ids taken here only burn stream ids (the final refresh
/// removes the holes). Kept as GE has it: the burned ids shift every later id until then.
pub fn run(st: &mut LogicalState<'_>, g: GraphId) -> Result<()> {
    let model = st.model;
    if !st.graph_has(g, super::fact::NEW_STREAM_ID) {
        return Ok(());
    }
    let mut buckets: BTreeMap<StreamId, Vec<(NodeId, i64)>> = BTreeMap::new();
    for &s in &st.partition.by_graph[g] {
        for &n in &st.partition.subgraphs[s].nodes {
            let attrs = &model.nodes[n].attrs;
            let (Some(id), None) = (attrs.new_stream_id, &attrs.parallel_group) else { continue };
            if let Some(cur) = st.node_stream[n] {
                buckets.entry(cur).or_default().push((n, id));
            }
        }
    }
    for nodes in buckets.into_values() {
        let mut fresh: Vec<(i64, StreamId)> = Vec::new();
        for (n, id) in nodes {
            let stream = match fresh.iter().find(|(k, _)| *k == id) {
                Some(&(_, s)) => s,
                None => {
                    let s = st.fresh_stream();
                    fresh.push((id, s));
                    s
                }
            };
            st.node_stream[n] = Some(stream);
        }
    }
    Ok(())
}
