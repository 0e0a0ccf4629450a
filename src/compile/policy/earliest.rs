//! `earliest:N`: a list schedule over at most N streams that puts each node on a stream that
//! is free by the time it is ready, else on the one that frees first — the rule of
//! TensorRT-LLM's automatic multi-stream pass (NVIDIA/TensorRT-LLM
//! `tensorrt_llm/_torch/compilation/multi_stream/auto_multi_stream.py`, `pick_stream`), on the
//! project's priorities and costs. Unlike `list`, it looks at no units, no wait latency and no
//! producer's stream: a few streams filled greedily, which leaves the syncs to the sync stage's
//! contraction. On some graphs (NASNet-style cells) that greedy packing beats `list`'s, which
//! is why `auto` tries it.
//!
//! The task nodes are taken one at a time, the ready one with the highest bottom level first
//! (ties by topological position); a node is ready when its producers are placed, at the time
//! the last of them ends. It goes to the first stream whose last node ends by then, else to
//! the stream whose last node ends first, and ends at the later of the two plus its cost. A
//! task node that costs nothing joins its first placed producer's stream. Nodes the policy
//! does not place (pinned, followers, no stream) end when their producers end plus their cost.

use std::collections::BinaryHeap;

use super::{Assignment, Ctx, Role};
use crate::compile::schedule::Prio;

/// The schedule's streams for the task nodes, at most `max_streams` (at least one) of them,
/// numbered by their first node in topological order.
pub fn assign(ctx: &Ctx<'_>, max_streams: u32) -> Assignment {
    let n = ctx.order.len();
    let timing = ctx.timing();
    let is_task = |p: usize| ctx.role[ctx.order[p]] == Role::Task;
    const NONE: u32 = u32::MAX;
    let mut on = vec![NONE; n];
    let mut end = vec![0.0f64; n];
    let mut tail = vec![0.0f64; max_streams.max(1) as usize];
    let mut left: Vec<u32> = (0..n as u32).map(|p| ctx.pred.of(p).len() as u32).collect();
    let prio = |p: u32| Prio { level: timing.level[p as usize], tie: p };
    let mut ready: BinaryHeap<_> = (0..n as u32).filter(|&p| left[p as usize] == 0).map(prio).collect();
    while let Some(Prio { tie: p, .. }) = ready.pop() {
        let pu = p as usize;
        let preds = ctx.pred.of(p);
        let at = preds.iter().map(|&q| end[q as usize]).fold(0.0, f64::max);
        let cost = timing.cost[pu];
        if is_task(pu) {
            let s = if cost == 0.0 {
                preds.iter().map(|&q| on[q as usize]).find(|&s| s != NONE).unwrap_or(0) as usize
            } else {
                pick(&tail, at)
            };
            on[pu] = s as u32;
            end[pu] = at.max(tail[s]) + cost;
            tail[s] = end[pu];
        } else {
            end[pu] = at + cost;
        }
        for &q in ctx.succ.of(p) {
            left[q as usize] -= 1;
            if left[q as usize] == 0 {
                ready.push(prio(q));
            }
        }
    }
    let mut renumber = vec![NONE; tail.len()];
    let mut a = Assignment::new(ctx.model);
    for (p, &s) in on.iter().enumerate() {
        if s != NONE {
            if renumber[s as usize] == NONE {
                renumber[s as usize] = a.count;
                a.count += 1;
            }
            a.stream[ctx.order[p]] = Some(renumber[s as usize]);
        }
    }
    a
}

/// The first stream whose tail ends by `at`, else the one that ends first (the first of equals).
fn pick(tail: &[f64], at: f64) -> usize {
    if let Some(s) = tail.iter().position(|&t| t <= at) {
        return s;
    }
    let mut best = 0;
    for (s, &t) in tail.iter().enumerate() {
        if t < tail[best] {
            best = s;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every task node gets a stream below the cap, a stream is never handed a node before one
    /// of its producers on it is placed (each stream's nodes run in topological order), and
    /// two parallel branches of equal cost land on two streams.
    #[test]
    fn streams_stay_under_the_cap_and_branches_spread() {
        crate::compile::policy::testing::each_synth_ctx(|name, ctx| {
            for cap in [1, 2, 4, 8] {
                let a = assign(ctx, cap);
                assert!(a.count <= cap, "{name}: {} streams over cap {cap}", a.count);
                for n in ctx.task_nodes() {
                    assert!(a.stream[n].is_some_and(|s| s < a.count), "{name}: task node without a stream");
                }
                for &n in &ctx.order {
                    if ctx.role[n] != Role::Task {
                        assert!(a.stream[n].is_none(), "{name}: a node the policy does not place got a stream");
                    }
                }
            }
        });
        let m = crate::graph::json::load_str(
            r#"{"format": "stream-graph", "version": 1, "name": "fork",
              "nodes": [
                {"name": "a", "type": "Add", "engine": "AIcoreEngine", "cost_us": 1},
                {"name": "b", "type": "MatMul", "engine": "AIcoreEngine", "cost_us": 5},
                {"name": "c", "type": "MatMul", "engine": "AIcoreEngine", "cost_us": 5},
                {"name": "d", "type": "Add", "engine": "AIcoreEngine", "cost_us": 1}],
              "edges": [{"src": "a", "dst": "b"}, {"src": "a", "dst": "c"}, {"src": "b", "dst": "d"},
                        {"src": "c", "dst": "d"}]}"#,
        )
        .unwrap();
        let ctx = Ctx::new(&m, &m.options).unwrap();
        let a = assign(&ctx, 4);
        let s = |name: &str| a.stream[m.nodes.ids().find(|&n| m.nodes[n].name == name).unwrap()];
        // b follows a on stream 0 (free at a's end); c finds it busy and opens stream 1; d,
        // ready at 6, finds stream 0 free by then.
        assert_eq!((s("a"), s("b"), s("c"), s("d")), (Some(0), Some(0), Some(1), Some(0)));
        assert_eq!(a.count, 2);
    }
}
