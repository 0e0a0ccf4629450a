//! GE: `DynamicStreamAllocator::AssignAttachedResource`, the attached ("从流") stream half;
//! attached notifies are the sync stage's, and dynamic graphs get no attached events.

use std::collections::BTreeMap;

use crate::bail;
use crate::error::Result;
use crate::graph::{AttachedFormat, IdVec, Model, NodeId, StreamId};

/// The group v2 and v1-list entries go to (GE's `_default_stream_info_group`).
pub const DEFAULT_GROUP: &str = "_default_stream_info_group";

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
                let (group, key) = match a.ge_format {
                    AttachedFormat::V2 => {
                        if a.required != Some(true) {
                            continue;
                        }
                        let mut key = format!("{}{}", a.reuse_key, a.name);
                        if !a.force_reuse {
                            key.push_str(&format!("_stream_{main}"));
                        }
                        (DEFAULT_GROUP.to_string(), key)
                    }
                    AttachedFormat::V1 => {
                        if a.policy.as_deref() != Some("group") {
                            bail!(
                                Failed,
                                "node '{}': attached stream '{}' has policy {:?}; only \"group\" is supported",
                                node.name,
                                a.name,
                                a.policy.as_deref().unwrap_or("")
                            );
                        }
                        let group = a.group.as_deref().or(node.ge_attrs.string("group")).unwrap_or("");
                        (group.to_string(), a.reuse_key.clone())
                    }
                    AttachedFormat::V1List => (DEFAULT_GROUP.to_string(), format!("{}_stream_{main}", a.reuse_key)),
                };
                if a.stream_num != 1 {
                    bail!(
                        Failed,
                        "node '{}': attached stream '{}' asks for {} streams; one stream per entry is supported",
                        node.name,
                        a.name,
                        a.stream_num
                    );
                }
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
