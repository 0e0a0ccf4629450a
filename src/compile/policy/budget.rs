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
use crate::graph::{IdVec, NodeId};

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
fn schedule_groups(ctx: &Ctx<'_>, groups: &[Vec<NodeId>], budget: u32) -> Assignment {
    let model = ctx.model;
    let width = groups.len() as u32;
    let nn = model.nodes.len();
    // As the simulator times them: a node with no device task takes no time.
    let cost = |n: NodeId| ctx.cost(n);
    let mut chain_of = IdVec::filled(nn, u32::MAX);
    for (i, c) in groups.iter().enumerate() {
        for &n in c {
            chain_of[n] = i as u32;
        }
    }
    // Bottom levels by position: the priority of the list schedule.
    let bl = ctx.bottom_levels(cost);
    let mut indeg = IdVec::filled(nn, 0u32);
    for &n in &ctx.order {
        indeg[n] = model.in_edges(n).count() as u32;
    }
    let need = |n: NodeId| if chain_of[n] != u32::MAX { ctx.units(n) } else { 0 };
    // Heap key: longest remaining path first, then topological position.
    let prio = |n: NodeId| Prio { level: bl[ctx.pos[n] as usize], tie: ctx.pos[n] };
    let node = |k: Key| ctx.order[k.tie as usize];
    type Key = Prio<u32>;
    // Ready task nodes of unbound chains, and of the chains bound to each stream (a chain has
    // at most one ready node, so each event looks at no more than budget + 1 candidates).
    let mut unbound: BinaryHeap<Key> = BinaryHeap::new();
    let mut bound: Vec<BinaryHeap<Key>> = vec![BinaryHeap::new(); budget as usize];
    let mut free_streams: BTreeSet<u32> = (0..budget).collect();
    let mut binding = vec![u32::MAX; width as usize];
    let mut free_units = UNITS;
    // Running nodes, earliest finish first, then the lower id.
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
            // Ready nodes of a group bound since they were queued move to its stream.
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
    let mut used: Vec<u32> = binding.iter().copied().filter(|&s| s != u32::MAX).collect();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::policy::min_streams;
    use crate::compile::policy::testing::each_synth_ctx;

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
}
