//! An execution order that needs few syncs for a given assignment: the event budget's last
//! resort when one policy stream is still over `max_events` in the pipeline's own order
//! ([`super::Bounded::phase_order`]). It speaks for no speed; it only groups the syncs.
//!
//! **Phases.** A root node's phase is the most edges between two different streams on any path
//! into it (nodes on no stream count as a stream of their own): an edge within a stream keeps
//! the phase, one across streams adds one. So no edge joins two streams inside one phase, and a
//! stream's nodes of one phase wait only on the other streams' earlier phases. The order runs
//! phase after phase.
//!
//! **Within a phase.** The sync stage keeps a wait only where the waits kept before it on its
//! stream do not already order its producer ([`crate::compile::sync::reduce`]). So inside a
//! phase each stream first runs the node whose cross-stream producer ran latest (its
//! *urgency*: that producer's place in the order; the nodes of the same stream and phase that
//! must run before it inherit it), and the wait it keeps covers the producers of the nodes after
//! it that ran earlier on that stream: about one wait per stream, producing stream and phase.
//! Ties (and nodes with no cross-stream producer, last) by topological position, so the order
//! is topological: an edge inside a phase joins one stream, and its producer's urgency is at
//! least its consumer's.
//!
//! On the random family at 100,000 nodes under `event_reuse=never`, the one-policy-stream
//! assignment needs 737 sync ids in this order, 1,519 in declaration order and 5,819 in the
//! pipeline's critical-path-first order (tests/it/budgets.rs). O(V + E + V log V) on the root.

use super::Ctx;
use crate::graph::{IdVec, NodeId, Pos, StreamId};

/// Whether the edge from root position `q` to `p` joins two streams (or leaves a node on none).
fn across(ctx: &Ctx<'_>, stream: &IdVec<NodeId, Option<StreamId>>, q: Pos, p: Pos) -> bool {
    let on = |p: Pos| stream[ctx.order[p]];
    on(q).is_none() || on(q) != on(p)
}

/// Each root position's phase (the module comment) under the streams `stream` gives the nodes.
pub fn phases(ctx: &Ctx<'_>, stream: &IdVec<NodeId, Option<StreamId>>) -> IdVec<Pos, u32> {
    let mut phase = IdVec::filled(ctx.order.len(), 0u32);
    for p in ctx.order.ids() {
        phase[p] = ctx.pred.of(p).iter().map(|&q| phase[q] + u32::from(across(ctx, stream, q, p))).max().unwrap_or(0);
    }
    phase
}

/// Every root position once, phase after phase and by urgency inside one (the module comment),
/// for the streams `stream` gives the nodes.
pub fn phase_order(ctx: &Ctx<'_>, stream: &IdVec<NodeId, Option<StreamId>>) -> Vec<Pos> {
    let across = |q: Pos, p: Pos| across(ctx, stream, q, p);
    let phase = phases(ctx, stream);
    let mut phases: Vec<Vec<Pos>> = vec![Vec::new(); phase.iter().max().map_or(0, |&m| m as usize + 1)];
    for p in ctx.order.ids() {
        phases[phase[p] as usize].push(p);
    }
    // A position's place in the order, once its phase is placed; urgency -1: no cross-stream
    // producer before it or below it in its phase.
    let mut at = IdVec::filled(ctx.order.len(), 0i64);
    let mut urgency = IdVec::filled(ctx.order.len(), -1i64);
    let mut out = Vec::with_capacity(ctx.order.len());
    for mut nodes in phases {
        for &p in nodes.iter().rev() {
            let producers = ctx.pred.of(p).iter().filter(|&&q| across(q, p)).map(|&q| at[q]);
            let below = ctx.succ.of(p).iter().filter(|&&q| phase[q] == phase[p]).map(|&q| urgency[q]);
            urgency[p] = producers.chain(below).max().unwrap_or(-1);
        }
        nodes.sort_unstable_by_key(|&p| (std::cmp::Reverse(urgency[p]), p));
        for p in nodes {
            at[p] = out.len() as i64;
            out.push(p);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::policy::testing::each_synth_ctx;
    use crate::compile::policy::{finish, list, single};
    use crate::compile::sync::ModelFacts;
    use crate::graph::NodeId;

    /// The sync ids of `ctx`'s streams `stream` in root order `root` (`None`: the pipeline's).
    fn ids(ctx: &Ctx<'_>, a: &super::super::Assignment, root: Option<Vec<NodeId>>) -> u32 {
        let model = ctx.model;
        let mut alloc = crate::compile::logical_allocation_with(model, &model.options, "t", finish(ctx, a), None, root);
        let facts = ModelFacts::build(model);
        let c = crate::compile::sync_stage_within(model, &model.options, &mut alloc, u32::MAX, Some(&facts)).unwrap();
        c.event_num + c.notify_num
    }

    /// The order lists every root position once, each after its producers, for one policy
    /// stream and for several; on the random family (edges reaching anywhere) one stream needs
    /// fewer sync ids in it than in the pipeline's order.
    #[test]
    fn the_order_is_every_root_position_once_producers_first() {
        each_synth_ctx(|name, ctx| {
            for a in [single(ctx), list::assign(ctx, 4)] {
                let order = phase_order(ctx, &finish(ctx, &a).node_stream);
                let mut at = IdVec::filled(ctx.order.len(), usize::MAX);
                for (i, &p) in order.iter().enumerate() {
                    assert_eq!(at[p], usize::MAX, "{name}: a position placed twice");
                    at[p] = i;
                }
                assert_eq!(order.len(), ctx.order.len(), "{name}: every root position placed");
                for p in ctx.order.ids() {
                    assert!(ctx.pred.of(p).iter().all(|&q| at[q] < at[p]), "{name}: a producer placed later");
                }
            }
            if name.starts_with("random") {
                let a = single(ctx);
                let phased = phase_order(ctx, &finish(ctx, &a).node_stream).iter().map(|&p| ctx.order[p]).collect();
                let (own, phased) = (ids(ctx, &a, None), ids(ctx, &a, Some(phased)));
                assert!(phased < own, "{name}: {phased} ids in phases, {own} in the pipeline's order");
            }
        });
    }
}
