//! GE's pairwise event optimisations (`OptimizeSyncEvents`, ge-compiler.md §6.3), used with
//! `compat=ge`. GE finds a sync's other end by scanning the whole node → ids map; here every raw
//! sync knows both ends, so each step is linear in the number of syncs.

use std::collections::{BTreeSet, VecDeque};

use super::insert::ActivationMaps;
use super::{NodeFacts, NodeLists, SyncState};
use crate::graph::{EdgeKind, NodeId};

/// GE: `OptimizeBySendEvents`. A receiving stream runs in order, so one signal from a sender
/// suffices: later waits on the same sender (on the same stream) are dropped.
pub fn optimize_by_send_events(st: &mut SyncState<'_>) {
    let mut seen_stamp: Vec<u32> = vec![u32::MAX; st.model.nodes.len()];
    let recvs = st.recv_lists();
    each_main_sync(st, &recvs, |st, stamp, r| {
        let sender = st.syncs[r as usize].from.node.index();
        if seen_stamp[sender] == stamp {
            st.remove(r);
        } else {
            seen_stamp[sender] = stamp;
        }
    });
}

/// GE: `OptimizeByRecvEvents`. A sending stream runs in order, so of several signals to one
/// receiver only the latest is needed: the earlier one is dropped.
pub fn optimize_by_recv_events(st: &mut SyncState<'_>) {
    let mut last: Vec<(u32, u32)> = vec![(u32::MAX, 0); st.model.nodes.len()];
    let sends = st.send_lists();
    each_main_sync(st, &sends, |st, stamp, r| {
        let slot = &mut last[st.syncs[r as usize].to.node.index()];
        if slot.0 == stamp {
            let pre = slot.1;
            slot.1 = r;
            st.remove(pre);
        } else {
            *slot = (stamp, r);
        }
    });
}

/// Both optimisations' walk: each stream's nodes in stream order, and of each node the syncs
/// `lists` gives it that are still alive and join two main streams; `f` gets the stream's
/// index and the sync.
fn each_main_sync(st: &mut SyncState<'_>, lists: &NodeLists, mut f: impl FnMut(&mut SyncState<'_>, u32, u32)) {
    for (stamp, nodes) in st.stream_nodes().into_iter().enumerate() {
        for n in nodes {
            for &r in lists.of(n) {
                let s = st.syncs[r as usize];
                if s.alive && s.to.attached.is_none() && s.from.attached.is_none() {
                    f(st, stamp as u32, r);
                }
            }
        }
    }
}

/// GE: `IsRecvNodeActivatedBySendNode`: walks activators backwards from the receiver's stream.
fn activated_by(st: &SyncState<'_>, act: &ActivationMaps, send: NodeId, recv: NodeId) -> bool {
    let model = st.model;
    if model.nodes[recv].attrs.stream_label.is_none() {
        return false;
    }
    let (Some(send_stream), Some(recv_stream)) = (st.stream[send], st.stream[recv]) else { return false };
    let recv_graph = model.nodes[recv].graph;
    let mut queue = VecDeque::from([recv_stream]);
    let mut visited = BTreeSet::new();
    while let Some(s) = queue.pop_front() {
        if !visited.insert(s) {
            return false;
        }
        for &a in act.stream_activators.get(&s).map(Vec::as_slice).unwrap_or(&[]) {
            if model.nodes[a].graph != recv_graph {
                continue;
            }
            if model.nodes[a].ge_attrs.flag("is_loop_active") {
                return false;
            }
            let ctrl: Vec<NodeId> = model.in_edges(a).filter(|e| e.kind == EdgeKind::Control).map(|e| e.src).collect();
            if !ctrl.is_empty() && ctrl.iter().all(|&c| model.nodes[c].op_type == "NextIteration") {
                continue;
            }
            for e in model.in_edges(a) {
                let i = e.src;
                if st.stream[i] == Some(send_stream) && st.pos[i] >= st.pos[send] {
                    return true;
                }
                if model.in_edges(i).any(|e2| e2.src == send) {
                    return true;
                }
            }
            if let Some(sa) = st.stream[a] {
                queue.push_back(sa);
            }
        }
    }
    false
}

/// GE: `OptimizeByStreamActivate`. A pair into a labelled stream is dropped when the activation
/// that starts that stream already waits for the sender.
pub fn optimize_by_stream_activate(st: &mut SyncState<'_>) {
    let act = ActivationMaps::build(st);
    if act.stream_activators.is_empty() {
        return;
    }
    let drop: Vec<u32> = st
        .alive()
        .filter(|(_, s)| s.from.attached.is_none() && s.to.attached.is_none())
        .filter(|(_, s)| activated_by(st, &act, s.from.node, s.to.node))
        .map(|(r, _)| r)
        .collect();
    for r in drop {
        st.remove(r);
    }
}

/// GE drops every send event of a `StreamSwitch` (with its recv): the switch activates its
/// targets, which orders them.
pub fn remove_stream_switch_sends(st: &mut SyncState<'_>) {
    if !st.facts.any(NodeFacts::STREAM_SWITCH) {
        return;
    }
    let drop: Vec<u32> = st
        .alive()
        .filter(|(_, s)| s.from.attached.is_none() && st.facts.has(s.from.node, NodeFacts::STREAM_SWITCH))
        .map(|(r, _)| r)
        .collect();
    for r in drop {
        st.remove(r);
    }
}
