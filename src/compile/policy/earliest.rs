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

use super::{Assignment, Ctx, Role, Timing};
use crate::compile::schedule::{Engine, Hooks, Prio};
use crate::graph::ids::define_index;
use crate::graph::{IdVec, Pos};

define_index!(
    /// One of the schedule's streams ([`Lane::invalid`]: none).
    Lane
);

/// The schedule's streams for the task nodes, at most `max_streams` (at least one) of them,
/// numbered by their first node in topological order.
pub fn assign(ctx: &Ctx<'_>, max_streams: u32) -> Assignment {
    place(ctx, max_streams, &ctx.timing().level).0
}

/// The schedule by `priority` (higher first; ties by topological position): the streams of
/// [`assign`], and the root positions in the order the schedule placed them (every root
/// position once, a topological order).
pub(super) fn place(ctx: &Ctx<'_>, max_streams: u32, priority: &IdVec<Pos, f64>) -> (Assignment, Vec<Pos>) {
    let n = ctx.order.len();
    let mut hooks = Earliest {
        ctx,
        timing: ctx.timing(),
        priority,
        on: IdVec::filled(n, Lane::invalid()),
        end: IdVec::filled(n, 0.0f64),
        tail: IdVec::filled(max_streams.max(1) as usize, 0.0f64),
        ready: BinaryHeap::new(),
        placed: Vec::with_capacity(n),
    };
    ctx.schedule(&mut hooks);
    let mut renumber: IdVec<Lane, Option<u32>> = IdVec::filled(hooks.tail.len(), None);
    let mut a = Assignment::new(ctx.model);
    for (p, &s) in hooks.on.enumerate() {
        if s.is_valid() {
            let id = *renumber[s].get_or_insert_with(|| {
                a.count += 1;
                a.count - 1
            });
            a.stream[ctx.order[p]] = Some(id);
        }
    }
    (a, hooks.placed)
}

/// `earliest:N`'s hooks on the scheduling [`Engine`], which has no clock to keep here: the
/// best ready node is placed, one per round, and finishes at once, which releases its
/// successors before the next is chosen. Its end is the schedule's own arithmetic.
struct Earliest<'c, 'm> {
    ctx: &'c Ctx<'m>,
    timing: &'c Timing,
    /// The ready order's key, higher first.
    priority: &'c IdVec<Pos, f64>,
    on: IdVec<Pos, Lane>,
    end: IdVec<Pos, f64>,
    /// When each stream's last node ends.
    tail: IdVec<Lane, f64>,
    ready: BinaryHeap<Prio<Pos>>,
    /// The positions in the order they were placed.
    placed: Vec<Pos>,
}

impl Hooks<Pos> for Earliest<'_, '_> {
    fn ready(&mut self, p: Pos, _: &mut Engine<Pos>) {
        self.ready.push(Prio { level: self.priority[p], tie: p });
    }

    fn dispatch(&mut self, eng: &mut Engine<Pos>) {
        let Some(Prio { tie: p, .. }) = self.ready.pop() else { return };
        let ctx = self.ctx;
        let preds = ctx.pred.of(p);
        let at = preds.iter().map(|&q| self.end[q]).fold(0.0, f64::max);
        let cost = self.timing.cost[p];
        if ctx.role[ctx.order[p]] == Role::Task {
            let s = if cost == 0.0 {
                preds.iter().map(|&q| self.on[q]).find(|s| s.is_valid()).unwrap_or(Lane(0))
            } else {
                pick(&self.tail, at)
            };
            self.on[p] = s;
            self.end[p] = at.max(self.tail[s]) + cost;
            self.tail[s] = self.end[p];
        } else {
            self.end[p] = at + cost;
        }
        self.placed.push(p);
        eng.finish_now(p);
    }
}

/// The first stream whose tail ends by `at`, else the one that ends first (the first of equals).
fn pick(tail: &IdVec<Lane, f64>, at: f64) -> Lane {
    if let Some((s, _)) = tail.enumerate().find(|&(_, &t)| t <= at) {
        return s;
    }
    let mut best = Lane(0);
    for (s, &t) in tail.enumerate() {
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
                crate::compile::policy::testing::assert_streams_within(name, ctx, &assign(ctx, cap), cap);
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
