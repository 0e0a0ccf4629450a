//! `budget:N`: at most N policy streams. The min-streams chains are bound to N streams by a
//! list schedule (Graham) on `cost_us` and `cores`: whenever nodes are ready, the one with
//! the longest remaining path (critical path first) starts first; a chain is bound to the
//! stream that is free when its first node starts, and its later nodes wait for that stream.
//!
//! The same machinery keeps every other policy within `max_streams` ([`merge_groups`]): the
//! streams a policy made are the groups, bound to the budget's streams the same way.

use std::collections::{BTreeSet, BinaryHeap};

use super::min_streams::ChainCover;
use super::{Assignment, Ctx, Role};
use crate::compile::schedule::{Prio, Timed, UNITS, pop_instant};
use crate::graph::NodeId;

/// The min-streams chains on at most `budget` streams.
pub fn merge(ctx: &Ctx<'_>, cover: &ChainCover, budget: u32) -> Assignment {
    if cover.chains.len() as u32 <= budget {
        return cover.assignment(ctx);
    }
    merge_groups(ctx, &cover.chains, budget)
}

/// A policy's streams on at most `budget` streams: each stream's task nodes as a group.
pub fn merge_assignment(ctx: &Ctx<'_>, a: &Assignment, budget: u32) -> Assignment {
    if a.count <= budget {
        return Assignment { stream: a.stream.clone(), count: a.count };
    }
    let mut groups = vec![Vec::new(); a.count as usize];
    for &n in &ctx.order {
        if ctx.role[n] == Role::Task
            && let Some(s) = a.stream[n]
        {
            groups[s as usize].push(n);
        }
    }
    groups.retain(|g| !g.is_empty());
    merge_groups(ctx, &groups, budget.max(1))
}

/// Binds groups of task nodes (each in topological order) to `budget` streams by the list
/// schedule; a group may have several ready nodes at once (a policy stream need not be a
/// chain), which then queue on the group's stream.
pub fn merge_groups(ctx: &Ctx<'_>, groups: &[Vec<NodeId>], budget: u32) -> Assignment {
    let model = ctx.model;
    let width = groups.len() as u32;
    if width <= budget {
        let mut a = Assignment::new(model);
        for (i, g) in groups.iter().enumerate() {
            for &n in g {
                a.stream[n] = Some(i as u32);
            }
        }
        a.count = width;
        return a;
    }
    if budget == 1 {
        return one_stream(model, groups);
    }
    schedule_groups(ctx, groups, budget)
}

/// [`merge_groups`] onto a single stream: every group binds to stream 0 whatever the list
/// schedule's order, so the schedule is skipped (the event budget's narrowing ends here for
/// every candidate of `auto`, on graphs of any size).
fn one_stream(model: &crate::graph::Model, groups: &[Vec<NodeId>]) -> Assignment {
    let mut a = Assignment::new(model);
    for &n in groups.iter().flatten() {
        a.stream[n] = Some(0);
        a.count = 1;
    }
    a
}

/// The list schedule of [`merge_groups`] for more groups than `budget`.
///
/// Everything is indexed by topological position, with each node's cost, units and group
/// read once into flat arrays: the schedule looks at them many times per node. The free
/// streams with a ready bound node are kept in an ordered set by their best node's key
/// (keys are unique: the position breaks ties), so a dispatch takes the best one that fits
/// the free units without scanning every free stream.
fn schedule_groups(ctx: &Ctx<'_>, groups: &[Vec<NodeId>], budget: u32) -> Assignment {
    let model = ctx.model;
    let width = groups.len() as u32;
    let np = ctx.order.len();
    let mut group_of = vec![NONE; np];
    for (i, c) in groups.iter().enumerate() {
        for &n in c {
            group_of[ctx.pos[n] as usize] = i as u32;
        }
    }
    // As the simulator times them: a node with no device task takes no time. Only the
    // groups' task nodes hold units. Bottom levels by position: the priority of the schedule.
    let timing = ctx.timing();
    let (cost, bl) = (&timing.cost, &timing.level);
    let need: Vec<u32> = (0..np).map(|p| if group_of[p] != NONE { timing.units[p] } else { 0 }).collect();
    let mut indeg: Vec<u32> = (0..np as u32).map(|p| ctx.pred.of(p).len() as u32).collect();
    // Heap key: longest remaining path first, then topological position.
    let prio = |p: u32| Prio { level: bl[p as usize], tie: p };
    let mut binding = vec![NONE; width as usize];
    let mut st = Streams::new(budget);
    // Ready task nodes of unbound groups (those of groups bound since they were queued move to
    // their stream when they surface).
    let mut unbound: BinaryHeap<Key> = BinaryHeap::new();
    let mut free_units = UNITS;
    // Running nodes by position, earliest finish first, then the lower position.
    let mut running: BinaryHeap<Timed<u32>> = BinaryHeap::new();
    let mut finished = Vec::new();
    let mut t = 0.0f64;
    let mut newly: Vec<u32> = (0..np as u32).filter(|&p| indeg[p as usize] == 0).collect();
    loop {
        for p in newly.drain(..) {
            let g = group_of[p as usize];
            if g == NONE {
                running.push(Timed { time: t + cost[p as usize], key: p });
            } else if binding[g as usize] == NONE {
                unbound.push(prio(p));
            } else {
                st.push(binding[g as usize], prio(p));
            }
        }
        loop {
            while let Some(&k) = unbound.peek()
                && binding[group_of[k.tie as usize] as usize] != NONE
            {
                unbound.pop();
                st.push(binding[group_of[k.tie as usize] as usize], k);
            }
            // The best ready node of a free stream that fits the free units.
            let mut best = st.ready.iter().rev().find(|&&(k, _)| need[k.tie as usize] <= free_units).copied();
            if let Some(&k) = unbound.peek()
                && st.any_free()
                && need[k.tie as usize] <= free_units
                && best.is_none_or(|(b, _)| k > b)
            {
                best = Some((k, NONE));
            }
            let Some((k, from)) = best else { break };
            let p = k.tie;
            let s = if from != NONE {
                st.take(from);
                st.bound[from as usize].pop();
                from
            } else {
                unbound.pop();
                // The lowest free stream with nothing bound waiting, else the lowest free one.
                let s = st.free_empty.first().or_else(|| st.free.first()).copied().expect("a free stream");
                st.take(s);
                binding[group_of[p as usize] as usize] = s;
                s
            };
            debug_assert!(!st.is_free[s as usize]);
            free_units -= need[p as usize];
            running.push(Timed { time: t + cost[p as usize], key: p });
        }
        let Some(time) = pop_instant(&mut running, &mut finished) else { break };
        t = time;
        for &p in &finished {
            let g = group_of[p as usize];
            if g != NONE {
                free_units += need[p as usize];
                st.release(binding[g as usize]);
            }
            for &q in ctx.succ.of(p) {
                indeg[q as usize] -= 1;
                if indeg[q as usize] == 0 {
                    newly.push(q);
                }
            }
        }
    }
    bound_assignment(model, groups, &binding)
}

/// Each group on the stream it was bound to, the streams used renumbered densely in id order.
fn bound_assignment(model: &crate::graph::Model, groups: &[Vec<NodeId>], binding: &[u32]) -> Assignment {
    let mut used: Vec<u32> = binding.iter().copied().filter(|&s| s != NONE).collect();
    used.sort_unstable();
    used.dedup();
    let mut a = Assignment::new(model);
    for (c, chain) in groups.iter().enumerate() {
        // Every chain was scheduled: the order is a DAG, so the list schedule runs every node.
        let s = used.binary_search(&binding[c]).unwrap_or(0) as u32;
        for &n in chain {
            a.stream[n] = Some(s);
        }
    }
    a.count = used.len() as u32;
    a
}

const NONE: u32 = u32::MAX;
type Key = Prio<u32>;

/// The budget's streams as [`schedule_groups`] keeps them: each stream's queue of ready
/// nodes of its bound groups, which streams are free, and the free streams indexed two ways.
struct Streams {
    bound: Vec<BinaryHeap<Key>>,
    is_free: Vec<bool>,
    /// Free streams, lowest id first.
    free: BTreeSet<u32>,
    /// Free streams with no ready bound node, lowest id first: where a new group binds.
    free_empty: BTreeSet<u32>,
    /// Free streams with a ready bound node, by their best node's key.
    ready: BTreeSet<(Key, u32)>,
}

impl Streams {
    fn new(budget: u32) -> Self {
        Streams {
            bound: vec![BinaryHeap::new(); budget as usize],
            is_free: vec![true; budget as usize],
            free: (0..budget).collect(),
            free_empty: (0..budget).collect(),
            ready: BTreeSet::new(),
        }
    }

    fn any_free(&self) -> bool {
        !self.free.is_empty()
    }

    /// Queues ready node `k` on stream `s`.
    fn push(&mut self, s: u32, k: Key) {
        let heap = &mut self.bound[s as usize];
        if self.is_free[s as usize] {
            match heap.peek() {
                None => {
                    self.free_empty.remove(&s);
                    self.ready.insert((k, s));
                }
                Some(&top) if k > top => {
                    self.ready.remove(&(top, s));
                    self.ready.insert((k, s));
                }
                Some(_) => {}
            }
        }
        heap.push(k);
    }

    /// Stream `s`, free, starts a node.
    fn take(&mut self, s: u32) {
        match self.bound[s as usize].peek() {
            Some(&top) => self.ready.remove(&(top, s)),
            None => self.free_empty.remove(&s),
        };
        self.free.remove(&s);
        self.is_free[s as usize] = false;
    }

    /// Stream `s` finished its node.
    fn release(&mut self, s: u32) {
        self.is_free[s as usize] = true;
        self.free.insert(s);
        match self.bound[s as usize].peek() {
            Some(&top) => self.ready.insert((top, s)),
            None => self.free_empty.insert(s),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::policy::testing::each_synth_ctx;
    use crate::compile::policy::{min_streams, per_operator};
    use crate::graph::IdVec;
    use crate::graph::Model;

    /// The one-stream shortcut is the list schedule's own answer on one stream.
    #[test]
    fn one_stream_is_the_schedule_on_one_stream() {
        each_synth_ctx(|family, ctx| {
            let groups = min_streams::chain_cover(ctx).chains;
            assert!(groups.len() > 1, "{family}: more than one chain to merge");
            let (short, full) = (one_stream(ctx.model, &groups), schedule_groups(ctx, &groups, 1));
            assert_eq!((short.stream, short.count), (full.stream, full.count), "{family}");
        });
    }

    /// The list schedule as first written: by node, every free stream scanned per dispatch.
    /// [`schedule_groups`] must bind every group exactly as this does.
    fn reference_schedule_groups(ctx: &Ctx<'_>, groups: &[Vec<NodeId>], budget: u32) -> Assignment {
        let model = ctx.model;
        let width = groups.len() as u32;
        let nn = model.nodes.len();
        let cost = |n: NodeId| ctx.cost(n);
        let mut chain_of = IdVec::filled(nn, u32::MAX);
        for (i, c) in groups.iter().enumerate() {
            for &n in c {
                chain_of[n] = i as u32;
            }
        }
        let bl = ctx.bottom_levels(cost);
        let mut indeg = IdVec::filled(nn, 0u32);
        for &n in &ctx.order {
            indeg[n] = model.in_edges(n).count() as u32;
        }
        let need = |n: NodeId| if chain_of[n] != u32::MAX { ctx.units(n) } else { 0 };
        let prio = |n: NodeId| Prio { level: bl[ctx.pos[n] as usize], tie: ctx.pos[n] };
        let node = |k: Key| ctx.order[k.tie as usize];
        let mut unbound: BinaryHeap<Key> = BinaryHeap::new();
        let mut bound: Vec<BinaryHeap<Key>> = vec![BinaryHeap::new(); budget as usize];
        let mut free_streams: BTreeSet<u32> = (0..budget).collect();
        let mut binding = vec![u32::MAX; width as usize];
        let mut free_units = UNITS;
        let mut running: BinaryHeap<Timed<NodeId>> = BinaryHeap::new();
        let mut finished = Vec::new();
        let mut t = 0.0f64;
        let mut newly: Vec<NodeId> = ctx.order.iter().copied().filter(|&n| indeg[n] == 0).collect();
        loop {
            for n in newly.drain(..) {
                if chain_of[n] == u32::MAX {
                    running.push(Timed { time: t + cost(n), key: n });
                } else if binding[chain_of[n] as usize] == u32::MAX {
                    unbound.push(prio(n));
                } else {
                    bound[binding[chain_of[n] as usize] as usize].push(prio(n));
                }
            }
            loop {
                while let Some(&k) = unbound.peek()
                    && binding[chain_of[node(k)] as usize] != u32::MAX
                {
                    unbound.pop();
                    bound[binding[chain_of[node(k)] as usize] as usize].push(k);
                }
                let mut best: Option<(Key, Option<u32>)> = None;
                for &s in &free_streams {
                    if let Some(&k) = bound[s as usize].peek()
                        && need(node(k)) <= free_units
                        && best.is_none_or(|(b, _)| k > b)
                    {
                        best = Some((k, Some(s)));
                    }
                }
                if let Some(&k) = unbound.peek()
                    && !free_streams.is_empty()
                    && need(node(k)) <= free_units
                    && best.is_none_or(|(b, _)| k > b)
                {
                    best = Some((k, None));
                }
                let Some((k, from)) = best else { break };
                let n = node(k);
                let s = match from {
                    Some(s) => {
                        bound[s as usize].pop();
                        s
                    }
                    None => {
                        unbound.pop();
                        let s = free_streams
                            .iter()
                            .copied()
                            .find(|&s| bound[s as usize].is_empty())
                            .or_else(|| free_streams.first().copied())
                            .expect("a free stream");
                        binding[chain_of[n] as usize] = s;
                        s
                    }
                };
                free_streams.remove(&s);
                free_units -= need(n);
                running.push(Timed { time: t + cost(n), key: n });
            }
            let Some(time) = pop_instant(&mut running, &mut finished) else { break };
            t = time;
            for &n in &finished {
                if chain_of[n] != u32::MAX {
                    free_units += need(n);
                    free_streams.insert(binding[chain_of[n] as usize]);
                }
                for e in model.out_edges(n) {
                    indeg[e.dst] -= 1;
                    if indeg[e.dst] == 0 && ctx.pos[e.dst] != u32::MAX {
                        newly.push(e.dst);
                    }
                }
            }
        }
        bound_assignment(model, groups, &binding)
    }

    /// Synthetic graphs of every shape the benches use, and corpus graphs.
    fn models() -> Vec<Model> {
        crate::graph::synth::test_models(
            3000,
            Some(6),
            &["bert_base", "googlenet", "resnet50_train", "densenet121", "vit_b_16"],
        )
    }

    /// The indexed schedule binds every group as the scanning one does: chains (one ready node
    /// per group) and per-operator's streams (several at once), under budgets from 2 to 64,
    /// with nodes that hold several units among them.
    #[test]
    fn schedule_groups_matches_the_scanning_schedule() {
        let mut compared = 0;
        let mut wide_nodes = false;
        for model in &models() {
            let ctx = Ctx::new(model, &model.options).expect("GE's pass chain runs");
            wide_nodes |= ctx.task_nodes().iter().any(|&n| ctx.units(n) > 1);
            let per_op = per_operator::assign(&ctx);
            let mut op_groups = vec![Vec::new(); per_op.count as usize];
            for &n in &ctx.order {
                if let Some(s) = per_op.stream[n] {
                    op_groups[s as usize].push(n);
                }
            }
            for groups in [min_streams::chain_cover(&ctx).chains, op_groups] {
                for budget in [2, 3, 8, 64] {
                    if groups.len() as u32 <= budget {
                        continue;
                    }
                    let (fast, slow) =
                        (schedule_groups(&ctx, &groups, budget), reference_schedule_groups(&ctx, &groups, budget));
                    assert_eq!((fast.stream, fast.count), (slow.stream, slow.count), "{} budget {budget}", model.name);
                    compared += 1;
                }
            }
        }
        assert!(compared > 30, "{compared} schedules compared");
        assert!(wide_nodes, "some node holds several units");
    }
}
