//! `fifo:N`: TensorRT-LLM's automatic multi-stream pass on the project's costs, each stream
//! running its nodes in the order the pass placed them (NVIDIA/TensorRT-LLM
//! `tensorrt_llm/_torch/compilation/multi_stream/auto_multi_stream.py`: `compute_distance`
//! for the priority, `pick_stream` for the stream, and the streams launched in assignment
//! order), where every other policy leaves the order to the pipeline's critical-path-first
//! schedule (`compile::order`). The syncs are the sync stage's, contracted and reduced as for
//! any policy, not the pass's wait per cross-stream edge.
//!
//! The placement is `earliest:N`'s ([`super::earliest`]) with the pass's priority: a node's
//! distance to the exit, the longest path of costs from it to a sink *without* its own cost
//! (`earliest:N` counts it), ties by topological position. The pass's order is every root
//! node once, producers first, so it is an execution order as it stands; nested graphs keep
//! theirs.

use super::{Assignment, Ctx, earliest};
use crate::graph::{IdVec, Pos};

/// At most `max_streams` (at least one) streams for the task nodes, numbered by their first
/// node in topological order, and the root positions in the order they were placed.
pub fn assign(ctx: &Ctx<'_>, max_streams: u32) -> Assignment {
    let level = &ctx.timing().level;
    // The longest path below a node without it: its successors' bottom levels.
    let distance: IdVec<Pos, f64> =
        ctx.order.ids().map(|p| ctx.succ.of(p).iter().map(|&q| level[q]).fold(0.0, f64::max)).collect();
    let (mut a, placed) = earliest::place(ctx, max_streams, &distance);
    // One stream runs in any order alike: GE's keeps the document as `single`'s.
    if a.count > 1 {
        a.order = placed;
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::policy::Role;
    use crate::compile::policy::testing::{assert_streams_within, each_synth_ctx};

    /// Every task node gets a stream below the cap, and the order lists every root position
    /// once, each after its producers; on one stream there is no order of the policy's own.
    #[test]
    fn the_order_is_every_root_node_once_producers_first() {
        each_synth_ctx(|name, ctx| {
            for cap in [1, 2, 4, 8] {
                let a = assign(ctx, cap);
                assert_streams_within(name, ctx, &a, cap);
                if a.count <= 1 {
                    assert!(a.order.is_empty(), "{name}: an order of its own on one stream");
                    continue;
                }
                let mut at = IdVec::filled(ctx.order.len(), usize::MAX);
                for (i, &p) in a.order.iter().enumerate() {
                    assert_eq!(at[p], usize::MAX, "{name}: a position placed twice");
                    at[p] = i;
                }
                assert_eq!(a.order.len(), ctx.order.len(), "{name}: every root position placed");
                for p in ctx.order.ids() {
                    assert!(ctx.pred.of(p).iter().all(|&q| at[q] < at[p]), "{name}: a producer placed later");
                }
                let nodes = a.root_order(ctx).expect("an order");
                assert!(nodes.iter().zip(&a.order).all(|(&n, &p)| ctx.order[p] == n), "{name}: root nodes");
            }
        });
    }

    /// The pass's priority leaves a node's own cost out: after `s`, `y` (1 µs, then `z`, 5 µs:
    /// 5 below it) goes before `x` (10 µs, nothing below), where `earliest:N`, counting the
    /// own cost (10 against 6), places `x` first. So `y` follows `s` on stream 0, `x` opens
    /// stream 1, `z` finds stream 0 free when `y` ends; and the streams run in that order.
    #[test]
    fn the_distance_leaves_the_own_cost_out_and_the_placement_is_the_order() {
        let m = crate::graph::json::load_str(
            r#"{"format": "stream-graph", "version": 1, "name": "fork",
              "nodes": [{"name": "s", "type": "Add", "engine": "AIcoreEngine", "cost_us": 1},
                        {"name": "x", "type": "MatMul", "engine": "AIcoreEngine", "cost_us": 10},
                        {"name": "y", "type": "Add", "engine": "AIcoreEngine", "cost_us": 1},
                        {"name": "z", "type": "MatMul", "engine": "AIcoreEngine", "cost_us": 5}],
              "edges": [{"src": "s", "dst": "x"}, {"src": "s", "dst": "y"}, {"src": "y", "dst": "z"}]}"#,
        )
        .unwrap();
        let ctx = Ctx::new(&m, &m.options).unwrap();
        assert!(ctx.order.iter().all(|&n| ctx.role[n] == Role::Task));
        let name = |n: crate::graph::NodeId| m.nodes[n].name.as_str();
        let streams = |a: &Assignment| -> Vec<(&str, u32)> {
            ctx.order.iter().map(|&n| (name(n), a.stream[n].expect("a stream"))).collect()
        };
        let a = assign(&ctx, 2);
        assert_eq!(streams(&a), [("s", 0), ("x", 1), ("y", 0), ("z", 0)]);
        let order: Vec<&str> = a.root_order(&ctx).expect("an order").into_iter().map(name).collect();
        assert_eq!(order, ["s", "y", "x", "z"]);
        let e = earliest::assign(&ctx, 2);
        assert_eq!(streams(&e), [("s", 0), ("x", 0), ("y", 1), ("z", 1)]);
        assert!(e.order.is_empty(), "earliest:N leaves the order to the pipeline");
    }
}
