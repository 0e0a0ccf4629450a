//! GE: `GenerateSyncEventNodes` (ge-compiler.md §6.5). Every kept pair becomes a `Send` node
//! right after its sender and a `Recv` node right before its receiver (`SendNotify` /
//! `RecvNotify` in notify mode), anchored to the existing nodes so topological ids stay stable.

use super::SyncState;
use crate::compile::allocation::{InsertedKind, InsertedNode, Naming, SyncEnd};
use crate::graph::{EventId, GraphId};

/// The inserted nodes, in execution order of their anchors. Names follow GE (written out by
/// [`InsertedNode::name`]): `<root graph>_Send_<id>`, `_Recv_<id>` (`_Send_Notify_<id>`, `_Recv_Notify_<id>`); a name
/// used before gets `_Reuse_<k>`, k counting from 1.
pub fn generate_sync_event_nodes(st: &SyncState<'_>) -> Vec<InsertedNode> {
    let model = st.model;
    let (send_type, recv_type) = InsertedKind::sync_pair(st.kind);
    // A base name depends only on the side and the id, so uses are counted per (side, id).
    let ids = st.syncs.iter().map(|s| s.id as usize + 1).max().unwrap_or(0);
    let mut uses = [vec![0u32; ids], vec![0u32; ids]];
    let mut naming = |side: usize, id: u32| -> Naming {
        let k = &mut uses[side][id as usize];
        *k += 1;
        Naming::Sync { graph: GraphId::ROOT, reuse: (*k > 1).then(|| *k - 1) }
    };
    let node = |end: SyncEnd, id: u32, kind: InsertedKind, naming: Naming, before: bool| {
        let stream = st.end_stream(end).expect("a kept sync end runs on a stream");
        InsertedNode {
            naming,
            kind,
            graph: model.nodes[end.node].graph,
            stream,
            logical_stream: stream,
            anchor: end.node,
            before,
            sync_id: Some(EventId(id)),
        }
    };
    let (sends, recvs) = (st.send_lists(), st.recv_lists());
    // Room for the Send/Recv pairs the split adds later (one per new piece, and a piece holds
    // hundreds of tasks): appending them then does not copy a list of millions.
    let kept = st.alive_count();
    let mut out = Vec::with_capacity(2 * kept + kept / 32 + 64);
    for &n in &st.order {
        for &r in sends.of(n) {
            let s = &st.syncs[r as usize];
            let name = naming(0, s.id);
            out.push(node(s.from, s.id, send_type, name, false));
        }
        for &r in recvs.of(n) {
            let s = &st.syncs[r as usize];
            let name = naming(1, s.id);
            out.push(node(s.to, s.id, recv_type, name, true));
        }
    }
    out
}
