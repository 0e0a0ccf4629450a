//! GE: `DynamicStreamAllocator::AssignAttachedResource`, the attached ("从流") stream half;
//! attached notifies are the sync stage's, and dynamic graphs get no attached events.

use std::collections::BTreeMap;

use crate::compile::logical::attached_stream::{group_and_key, group_order};
use crate::error::Result;
use crate::graph::{IdVec, Model, NodeId, StreamId};

/// A group's reuse keys, each with its (node, entry index) in topological order.
type Keys = BTreeMap<String, Vec<(NodeId, usize)>>;

/// Assigns attached streams after the `main_stream_count` main streams, graph by graph in
/// `GetAllSubgraphs` order (`AttachedResourceAssignHelper::ClassifyNodesByGroup`), skipping
/// nodes with `_disable_attached_resource`. Keys: v2 entries with `required == true` only,
/// key = reuse key + name, plus `_stream_<main stream>` unless `force_reuse`; v1 (policy
/// `group`): the node's `group`, key = reuse key; v1 list: default group, key = reuse key +
/// `_stream_<main stream>`. Per group, per key in key string order, one new id shared by every
/// entry with that key. Groups are taken in [`group_order`] (GE iterates an unordered map).
/// Returns the attached ids per node (in entry order) and the attached stream count.
pub fn run(
    model: &Model,
    node_stream: &IdVec<NodeId, Option<StreamId>>,
    main_stream_count: u32,
    compat_ge: bool,
) -> Result<(IdVec<NodeId, Vec<StreamId>>, u32)> {
    let mut attached: IdVec<NodeId, Vec<StreamId>> = IdVec::filled(model.nodes.len(), Vec::new());
    let mut next = main_stream_count;
    for g in model.all_graphs() {
        // Groups in the order a node first names them; key -> (node, entry index) in
        // topological order.
        let mut groups: Vec<(String, Keys)> = Vec::new();
        for &n in &model.graphs[g].order {
            let node = &model.nodes[n];
            if node.ge_attrs.flag("_disable_attached_resource") {
                continue;
            }
            let main = node_stream[n].map_or(-1, |s| i64::from(s.0));
            for (i, a) in node.attrs.attached_streams.iter().enumerate() {
                let Some((group, key)) = group_and_key(node, a, main)? else { continue };
                let at = match groups.iter().position(|(name, _)| *name == group) {
                    Some(at) => at,
                    None => {
                        groups.push((group, BTreeMap::new()));
                        groups.len() - 1
                    }
                };
                groups[at].1.entry(key).or_default().push((n, i));
            }
        }
        let mut assigned: Vec<(NodeId, usize, StreamId)> = Vec::new();
        let names: Vec<&str> = groups.iter().map(|(name, _)| name.as_str()).collect();
        let order = group_order(&names, compat_ge)?;
        let mut groups: Vec<Option<Keys>> = groups.into_iter().map(|(_, keys)| Some(keys)).collect();
        for keys in order.into_iter().filter_map(|i| groups[i].take()) {
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
