//! GE: `DynamicStreamAllocator::AssignAttachedResource`, the attached ("从流") stream half;
//! attached notifies are the sync stage's, and dynamic graphs get no attached events.

use std::collections::BTreeMap;

use crate::compile::logical::attached_stream::group_and_key;
use crate::error::Result;
use crate::graph::{IdVec, Model, NodeId, StreamId};

/// Assigns attached streams after the `main_stream_count` main streams, graph by graph in
/// `GetAllSubgraphs` order (`AttachedResourceAssignHelper::ClassifyNodesByGroup`), skipping
/// nodes with `_disable_attached_resource`. Keys: v2 entries with `required == true` only,
/// key = reuse key + name, plus `_stream_<main stream>` unless `force_reuse`; v1 (policy
/// `group`): the node's `group`, key = reuse key; v1 list: default group, key = reuse key +
/// `_stream_<main stream>`. Per group, per key in key string order, one new id shared by every
/// entry with that key. Groups are taken in name order (GE iterates an unordered map). Returns
/// the attached ids per node (in entry order) and the attached stream count.
pub fn run(
    model: &Model,
    node_stream: &IdVec<NodeId, Option<StreamId>>,
    main_stream_count: u32,
) -> Result<(IdVec<NodeId, Vec<StreamId>>, u32)> {
    let mut attached: IdVec<NodeId, Vec<StreamId>> = IdVec::filled(model.nodes.len(), Vec::new());
    let mut next = main_stream_count;
    for g in model.all_graphs() {
        // group -> key -> (node, entry index) in topological order.
        let mut groups: BTreeMap<String, BTreeMap<String, Vec<(NodeId, usize)>>> = BTreeMap::new();
        for &n in &model.graphs[g].order {
            let node = &model.nodes[n];
            if node.ge_attrs.flag("_disable_attached_resource") {
                continue;
            }
            let main = node_stream[n].map_or(-1, |s| i64::from(s.0));
            for (i, a) in node.attrs.attached_streams.iter().enumerate() {
                let Some((group, key)) = group_and_key(node, a, main)? else { continue };
                groups.entry(group).or_default().entry(key).or_default().push((n, i));
            }
        }
        let mut assigned: Vec<(NodeId, usize, StreamId)> = Vec::new();
        for keys in groups.into_values() {
            for members in keys.into_values() {
                let id = StreamId(next);
                next += 1;
                assigned.extend(members.into_iter().map(|(n, i)| (n, i, id)));
            }
        }
        assigned.sort_unstable();
        for (n, _, id) in assigned {
            attached[n].push(id);
        }
    }
    Ok((attached, next - main_stream_count))
}
