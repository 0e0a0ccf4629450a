//! GE: `DynamicStreamAllocator::AssignWithReuse`.

use super::{AICPU_ENGINES, DynamicState};
use crate::graph::{EngineConf, GraphId, SubgraphId};

/// Each subgraph still without a stream, in order, continues a neighbour's stream: first a
/// reusable producer, else a reusable consumer. Among several reusable neighbours the one with
/// the best engine priority wins; ties go to the first in input (resp. output) edge order, a
/// stable rule where GE compares pointers. The chosen neighbour is replaced by the subgraph it
/// reused itself (its owner), and the stream is taken only if that owner already has one.
pub fn run(st: &mut DynamicState<'_>, g: GraphId) {
    for s in st.partition.by_graph[g].clone() {
        if st.subgraph_stream[s].is_some() {
            continue;
        }
        let model = st.model;
        let preds = st.partition.predecessors(model, s);
        let succs = st.partition.successors(model, s);
        for peers in [preds, succs] {
            let Some(peer) = top_priority(st, s, &peers) else { continue };
            let owner = st.reused[peer].unwrap_or(peer);
            if let Some(stream) = st.subgraph_stream[owner] {
                st.subgraph_stream[s] = Some(stream);
                st.reused[s] = Some(owner);
                break;
            }
        }
    }
}

/// The reusable peer with the lowest priority value; the first one on ties.
fn top_priority(st: &DynamicState<'_>, s: SubgraphId, peers: &[SubgraphId]) -> Option<SubgraphId> {
    let engines = &st.model.engines;
    let engine_of = |x: SubgraphId| &engines[st.partition.subgraphs[x].engine];
    peers
        .iter()
        .copied()
        .filter(|&p| could_reuse(engine_of(s), engine_of(p), st.reused[p].map(engine_of)))
        .min_by_key(|&p| engine_of(p).priority_key())
}

/// GE's dynamic `CouldReuse(s, peer)`: an AICPU subgraph never continues an independent
/// (HCCL) stream; the same engine, or an attach engine, may continue any stream; and a
/// subgraph may continue a peer that itself continued a subgraph of its own engine
/// (A → attach(B) → A stays on A's stream).
pub fn could_reuse(s: &EngineConf, peer: &EngineConf, peer_reused: Option<&EngineConf>) -> bool {
    if AICPU_ENGINES.contains(&s.name.as_str()) && peer.independent {
        return false;
    }
    if s.name == peer.name || s.attach {
        return true;
    }
    peer_reused.is_some_and(|r| r.name == s.name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::EngineTable;

    #[test]
    fn could_reuse_rules() {
        let t = EngineTable::builtin();
        let e = |n: &str| &t[t.lookup(n).unwrap()];
        let (aicore, hccl, aicpu, rts, custom) =
            (e("AIcoreEngine"), e("DNN_HCCL"), e("DNN_VM_AICPU"), e("DNN_VM_RTS"), e("DNN_VM_CUSTOM"));
        // AICPU never attaches to HCCL, though it attaches to anything else.
        assert!(!could_reuse(aicpu, hccl, None));
        assert!(could_reuse(aicpu, aicore, None));
        // Other attach engines may continue HCCL.
        assert!(could_reuse(rts, hccl, None));
        // Same engine.
        assert!(could_reuse(custom, custom, None));
        // Non-attach, different engine: only through the peer's owner.
        assert!(!could_reuse(custom, rts, None));
        assert!(!could_reuse(custom, rts, Some(aicore)));
        assert!(could_reuse(custom, rts, Some(custom)));
        assert!(!could_reuse(aicore, hccl, None));
    }
}
