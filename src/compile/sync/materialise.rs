//! GE: `GenerateSyncEventNodes` (ge-compiler.md §6.5). Every kept pair becomes a `Send` node
//! right after its sender and a `Recv` node right before its receiver (`SendNotify` /
//! `RecvNotify` in notify mode), anchored to the existing nodes so topological ids stay stable.

use super::SyncState;
use crate::compile::allocation::{InsertedNode, SyncEnd};
use crate::graph::SyncKind;

/// The inserted nodes, in execution order of their anchors. Names follow GE:
/// `<root graph>_Send_<id>`, `_Recv_<id>` (`_Send_Notify_<id>`, `_Recv_Notify_<id>`); a name
/// used before gets `_Reuse_<k>`, k counting from 1.
pub fn generate_sync_event_nodes(st: &SyncState<'_>) -> Vec<InsertedNode> {
    let model = st.model;
    let (send_type, recv_type, send_tag, recv_tag) = match st.kind {
        SyncKind::Event => ("Send", "Recv", "_Send_", "_Recv_"),
        SyncKind::Notify => ("SendNotify", "RecvNotify", "_Send_Notify_", "_Recv_Notify_"),
    };
    // A base name depends only on the side and the id, so uses are counted per (side, id).
    let ids = st.syncs.iter().map(|s| s.id as usize + 1).max().unwrap_or(0);
    let mut uses = [vec![0u32; ids], vec![0u32; ids]];
    let mut unique = |side: usize, tag: &str, id: u32| -> String {
        let k = &mut uses[side][id as usize];
        *k += 1;
        if *k == 1 { format!("{}{tag}{id}", model.name) } else { format!("{}{tag}{id}_Reuse_{}", model.name, *k - 1) }
    };
    let mut out = Vec::new();
    let node = |end: SyncEnd, id: u32, op: &str, name: String, before: bool| {
        let stream = st.end_stream(end).expect("a kept sync end runs on a stream");
        InsertedNode {
            name,
            op_type: op.to_string(),
            graph: model.nodes[end.node].graph,
            stream,
            logical_stream: stream,
            anchor: end.node,
            before,
            sync_id: Some(id),
        }
    };
    let (sends, recvs) = (st.send_lists(), st.recv_lists());
    for &n in &st.order {
        for &r in sends.of(n) {
            let s = &st.syncs[r as usize];
            let name = unique(0, send_tag, s.id);
            out.push(node(s.from, s.id, send_type, name, false));
        }
        for &r in recvs.of(n) {
            let s = &st.syncs[r as usize];
            let name = unique(1, recv_tag, s.id);
            out.push(node(s.to, s.id, recv_type, name, true));
        }
    }
    out
}
