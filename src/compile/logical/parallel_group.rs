//! GE: `UpdateForParallelGroupPass` (ge-compiler.md §4.7).

use std::collections::BTreeMap;

use super::LogicalState;
use crate::error::Result;
use crate::graph::{EdgeKind, GraphId, NodeId, StreamId};

/// The group name that means "stay on the single producer's stream".
pub const REUSE_PRODUCER_GROUP: &str = "-1";

/// Nodes with a `_parallel_group` (and no user stream label), bucketed by their current
/// stream, get one fresh stream per group within each bucket; the same group in two buckets
/// gets two streams. Group `"-1"` keeps the stream of the node's only data producer when it
/// has exactly one data input on a valid stream, and is an ordinary group otherwise.
pub fn run(st: &mut LogicalState<'_>, g: GraphId) -> Result<()> {
    let model = st.model;
    if !st.graph_has(g, super::fact::PARALLEL_GROUP) {
        return Ok(());
    }
    let mut buckets: BTreeMap<StreamId, Vec<NodeId>> = BTreeMap::new();
    for &s in &st.partition.by_graph[g] {
        for &n in &st.partition.subgraphs[s].nodes {
            if !st.has(n, super::fact::PARALLEL_GROUP) || st.has(n, super::fact::USER_LABEL) {
                continue;
            }
            if let Some(cur) = st.node_stream[n] {
                buckets.entry(cur).or_default().push(n);
            }
        }
    }
    for nodes in buckets.into_values() {
        let mut groups: BTreeMap<&str, StreamId> = BTreeMap::new();
        for n in nodes {
            let group = model.nodes[n].attrs.parallel_group.as_deref().unwrap_or_default();
            if group == REUSE_PRODUCER_GROUP {
                let mut data_in = model.in_edges(n).filter(|e| e.kind == EdgeKind::Data);
                if let (Some(e), None) = (data_in.next(), data_in.next()) {
                    if let Some(producer_stream) = st.node_stream[e.src] {
                        st.node_stream[n] = Some(producer_stream);
                        continue;
                    }
                }
            }
            let stream = match groups.get(group) {
                Some(&s) => s,
                None => {
                    let s = st.fresh_stream();
                    groups.insert(group, s);
                    s
                }
            };
            st.node_stream[n] = Some(stream);
        }
    }
    Ok(())
}
