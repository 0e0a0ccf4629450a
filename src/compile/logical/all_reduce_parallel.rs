//! GE: `AllReduceParallelPass` (ge-compiler.md §4.8).

use std::collections::BTreeMap;

use super::LogicalState;
use crate::error::Result;
use crate::graph::{EdgeKind, GraphId, NodeId, StreamId};

/// Operator types GE's pass starts from.
const ALL_REDUCE_TYPES: &[&str] = &["HcomAllReduce", "HorovodAllreduce"];

/// GE's `IsHcomNode`: collective-communication operators stay on their streams.
pub fn is_hcom_type(t: &str) -> bool {
    t.starts_with("Hcom") || t.starts_with("Horovod") || t.starts_with("HvdCallback")
}

/// With `hcom_parallel`: every node downstream (over data edges) of a fused all-reduce
/// (`fusion` > 0, no user label) moves to a fresh stream, one per old stream, so the compute
/// that follows the all-reduce does not block the stream it came from. Successors are kept
/// while their label equals the all-reduce's, or, if the all-reduce has a label, while they
/// have none. HCOM nodes in that set keep their stream but still take their stream's mapping.
///
/// GE keeps the set in pointer order, which decides which old stream gets which new id; here
/// it is visited in topological order. GE's breadth-first walk has no visited set; this one
/// has (same set, linear time).
pub fn run(st: &mut LogicalState<'_>, g: GraphId) -> Result<()> {
    let model = st.model;
    if !st.options.hcom_parallel {
        return Ok(());
    }
    let mut in_set = vec![false; model.graphs[g].nodes.len()];
    let base = model.graphs[g].nodes.first().map_or(0, |n| n.index());
    let mut members: Vec<NodeId> = Vec::new();
    let mut frontier: Vec<NodeId> = Vec::new();
    for &ar in &model.graphs[g].order {
        let node = &model.nodes[ar];
        if !ALL_REDUCE_TYPES.contains(&node.op_type.as_str())
            || node.ge_attrs.int("fusion").is_none_or(|f| f <= 0)
            || node.attrs.user_stream_label.is_some()
        {
            continue;
        }
        let label = st.node_label(ar).map(str::to_string);
        frontier.clear();
        frontier.push(ar);
        while let Some(cur) = frontier.pop() {
            for e in model.out_edges(cur).filter(|e| e.kind == EdgeKind::Data) {
                let succ_label = st.node_label(e.dst);
                let keep = succ_label == label.as_deref() || (label.is_some() && succ_label.is_none());
                let slot = &mut in_set[e.dst.index() - base];
                if keep && !*slot {
                    *slot = true;
                    members.push(e.dst);
                    frontier.push(e.dst);
                }
            }
        }
    }
    members.sort_by_key(|&n| model.topo_index[n]);
    let mut fresh: BTreeMap<StreamId, StreamId> = BTreeMap::new();
    for n in members {
        let Some(old) = st.node_stream[n] else { continue };
        let new = match fresh.get(&old) {
            Some(&s) => s,
            None => {
                let s = st.fresh_stream();
                fresh.insert(old, s);
                s
            }
        };
        if !is_hcom_type(&model.nodes[n].op_type) {
            st.node_stream[n] = Some(new);
        }
    }
    Ok(())
}
