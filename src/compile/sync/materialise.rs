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
        sync_node_name(&model.name, tag, id, *k - 1)
    };
    let node = |end: SyncEnd, id: u32, op: &'static str, name: String, before: bool| {
        let stream = st.end_stream(end).expect("a kept sync end runs on a stream");
        InsertedNode {
            name,
            op_type: op,
            graph: model.nodes[end.node].graph,
            stream,
            logical_stream: stream,
            anchor: end.node,
            before,
            sync_id: Some(id),
        }
    };
    let (sends, recvs) = (st.send_lists(), st.recv_lists());
    let mut out = Vec::with_capacity(2 * st.alive_count());
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

/// `<graph><tag><id>`, then `_Reuse_<reuse>` when `reuse` > 0: written digit by digit, because
/// a large graph names hundreds of thousands of these and `format!` dominated the step.
pub(crate) fn sync_node_name(graph: &str, tag: &str, id: u32, reuse: u32) -> String {
    let mut name = String::with_capacity(graph.len() + tag.len() + 20);
    name.push_str(graph);
    name.push_str(tag);
    push_decimal(&mut name, id);
    if reuse > 0 {
        name.push_str("_Reuse_");
        push_decimal(&mut name, reuse);
    }
    name
}

fn push_decimal(s: &mut String, mut v: u32) {
    let mut digits = [0u8; 10];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    s.extend(digits[i..].iter().map(|&d| d as char));
}

#[cfg(test)]
mod tests {
    use super::sync_node_name;

    #[test]
    fn names_match_the_format_ge_uses() {
        for (id, reuse) in [(0, 0), (7, 0), (10, 1), (4_294_967_295, 12), (1_000_000, 0)] {
            let expected = if reuse == 0 { format!("g_Send_{id}") } else { format!("g_Send_{id}_Reuse_{reuse}") };
            assert_eq!(sync_node_name("g", "_Send_", id, reuse), expected);
        }
    }
}
