//! GE: `AssignAttachedStreamPass` with `AttachedResourceAssignHelper::ClassifyNodesByGroup`
//! (ge-compiler.md §4.13).

use std::collections::BTreeMap;

use super::LogicalState;
use crate::bail;
use crate::compile::libstdcxx;
use crate::error::Result;
use crate::graph::{AttachedFormat, AttachedStreamInfo, GraphId, Node, NodeId, StreamId};

/// The group v2 entries and v1 lists go to.
pub const DEFAULT_GROUP: &str = "_default_stream_info_group";

/// The policy a v1 single-entry `_attached_stream_info` must carry.
const V1_POLICY_GROUP: &str = "group";

/// One request: which node, which of its entries (for ordering), under which key.
struct Request {
    node: NodeId,
    entry: usize,
    key: String,
    num: u32,
}

/// Runs the pass on the root, then on every nested graph, numbering attached streams after
/// the main ones (`main_stream_num` is fixed at the first call).
pub fn run_all(st: &mut LogicalState<'_>) -> Result<()> {
    st.main_stream_num.get_or_insert(st.next_stream);
    for g in st.graphs.clone() {
        run(st, g)?;
    }
    Ok(())
}

/// Attached ("从流") streams of one graph's direct nodes (nodes with
/// `_disable_attached_resource` are skipped):
/// * v2 entries are assigned only when `required`; key = reuse key + name, plus
///   `_stream_<main stream>` unless `force_reuse`; default group;
/// * a v1 entry (policy `group`) uses its reuse key in the node's `group`;
/// * v1 list entries go to the default group with key + `_stream_<main stream>`.
///
/// (group, reuse key) of one attached-stream entry of `node`, whose main stream is `main`
/// (-1 for none); `None` for a v2 entry that is not `required`. Shared with the dynamic
/// allocator's AssignAttachedResource, which keys entries the same way.
pub fn group_and_key(node: &Node, a: &AttachedStreamInfo, main: i64) -> Result<Option<(String, String)>> {
    let (group, key) = match a.ge_format {
        AttachedFormat::V2 => {
            if a.required != Some(true) {
                return Ok(None);
            }
            let mut key = format!("{}{}", a.reuse_key, a.name);
            if !a.force_reuse {
                key.push_str(&format!("_stream_{main}"));
            }
            (DEFAULT_GROUP.to_string(), key)
        }
        AttachedFormat::V1 => {
            if a.policy.as_deref() != Some(V1_POLICY_GROUP) {
                bail!(
                    Failed,
                    "node '{}': attached stream '{}' has policy {:?}; a single _attached_stream_info must have policy \"group\"",
                    node.name,
                    a.name,
                    a.policy.as_deref().unwrap_or("")
                );
            }
            let group = a.group.clone().or_else(|| node.ge_attrs.string("group").map(str::to_string));
            (group.unwrap_or_default(), a.reuse_key.clone())
        }
        AttachedFormat::V1List => (DEFAULT_GROUP.to_string(), format!("{}_stream_{main}", a.reuse_key)),
    };
    if a.stream_num != 1 {
        bail!(
            Failed,
            "node '{}': attached stream '{}' asks for {} streams; exactly 1 is supported",
            node.name,
            a.name,
            a.stream_num
        );
    }
    Ok(Some((group, key)))
}

/// Per group, per key in key order, one stream id is shared by every node with that key;
/// `next_stream` advances by the key's stream count, which must be 1. Ids therefore follow key
/// strings, not topology, as in GE. Groups are taken in [`group_order`].
pub fn run(st: &mut LogicalState<'_>, g: GraphId) -> Result<()> {
    st.main_stream_num.get_or_insert(st.next_stream);
    let model = st.model;
    if !st.graph_has(g, super::fact::ATTACHED) {
        return Ok(());
    }
    // Groups in the order a node first names them.
    let mut groups: Vec<(String, Vec<Request>)> = Vec::new();
    for &n in &model.graphs[g].order {
        let node = &model.nodes[n];
        if !st.has(n, super::fact::ATTACHED) {
            continue;
        }
        let main = st.node_stream[n].map_or(-1, |s| i64::from(s.0));
        for (i, a) in node.attrs.attached_streams.iter().enumerate() {
            let Some((group, key)) = group_and_key(node, a, main)? else { continue };
            let request = Request { node: n, entry: i, key, num: a.stream_num };
            match groups.iter_mut().find(|(name, _)| *name == group) {
                Some((_, requests)) => requests.push(request),
                None => groups.push((group, vec![request])),
            }
        }
    }
    let mut assigned: Vec<(NodeId, usize, StreamId)> = Vec::new();
    let names: Vec<&str> = groups.iter().map(|(name, _)| name.as_str()).collect();
    let order = group_order(&names, st.options.compat_ge)?;
    let mut groups: Vec<Option<Vec<Request>>> = groups.into_iter().map(|(_, r)| Some(r)).collect();
    for requests in order.into_iter().filter_map(|i| groups[i].take()) {
        let mut by_key: BTreeMap<&str, (u32, Vec<&Request>)> = BTreeMap::new();
        for r in &requests {
            let slot = by_key.entry(r.key.as_str()).or_insert((r.num, Vec::new()));
            slot.1.push(r);
        }
        for (num, rs) in by_key.into_values() {
            let id = StreamId(st.next_stream);
            st.next_stream += num;
            assigned.extend(rs.into_iter().map(|r| (r.node, r.entry, id)));
        }
    }
    assigned.sort_by_key(|&(n, entry, _)| (n, entry));
    for (n, _, id) in assigned {
        if !st.attached[n].contains(&id) {
            st.attached[n].push(id);
        }
    }
    Ok(())
}

/// The order attached-stream groups are numbered in, given their names in the order nodes
/// first name them: under `compat=ge` the iteration order of GE's
/// `std::unordered_map<std::string, …>` of groups as GCC's libstdc++ builds it
/// ([`libstdcxx::iteration_order`]); otherwise group-name order, which reads better and does
/// not depend on a standard library's hash.
pub fn group_order(names_first_seen: &[&str], compat_ge: bool) -> Result<Vec<usize>> {
    if compat_ge {
        return libstdcxx::iteration_order(names_first_seen);
    }
    let mut order: Vec<usize> = (0..names_first_seen.len()).collect();
    order.sort_by_key(|&i| names_first_seen[i]);
    Ok(order)
}
