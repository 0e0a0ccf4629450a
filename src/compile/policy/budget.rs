//! `budget:N`: at most N policy streams. The min-streams chains are bound to N streams by a
//! list schedule (Graham) on `cost_us` and `cores`: whenever nodes are ready, the one with
//! the longest remaining path (critical path first) starts first; a chain is bound to the
//! stream that is free when its first node starts, and its later nodes wait for that stream.
//!
//! The same machinery keeps every other policy within `max_streams` ([`merge_groups`]): the
//! streams a policy made are the groups, bound to the budget's streams the same way.

use std::collections::{BTreeSet, BinaryHeap};

use super::min_streams::ChainCover;
use super::{Assignment, Ctx, Role, Timing};
use crate::compile::schedule::{Engine, Hooks, Prio};
use crate::graph::ids::define_index;
use crate::graph::{IdVec, NodeId, Pos};

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
        return Assignment { stream: a.stream.clone(), count: a.count, order: a.order.clone() };
    }
    let mut groups: IdVec<Group, Vec<NodeId>> = IdVec::filled(a.count as usize, Vec::new());
    for &n in &ctx.order {
        if ctx.role[n] == Role::Task
            && let Some(s) = a.stream[n]
        {
            groups[Group(s)].push(n);
        }
    }
    let mut groups = groups.into_vec();
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

/// The list schedule of [`merge_groups`] for more groups than `budget`, run by the scheduling
/// [`Engine`] with [`Merge`]'s group binding.
///
/// Everything is indexed by topological position, with each node's cost, units and group
/// read once into flat arrays: the schedule looks at them many times per node. The free
/// streams with a ready bound node are kept in an ordered set by their best node's key
/// (keys are unique: the position breaks ties), so a dispatch takes the best one that fits
/// the free units without scanning every free stream.
fn schedule_groups(ctx: &Ctx<'_>, groups: &[Vec<NodeId>], budget: u32) -> Assignment {
    let np = ctx.order.len();
    let mut group_of = IdVec::filled(np, Group::invalid());
    for (i, c) in groups.iter().enumerate() {
        for &n in c {
            group_of[ctx.pos[n]] = Group::new(i);
        }
    }
    // As the simulator times them: a node with no device task takes no time. Only the
    // groups' task nodes hold units. Bottom levels by position: the priority of the schedule.
    let timing = ctx.timing();
    let need = ctx.order.ids().map(|p| if group_of[p].is_valid() { timing.units[p] } else { 0 }).collect();
    let mut merge = Merge {
        timing,
        group_of,
        need,
        binding: IdVec::filled(groups.len(), Lane::invalid()),
        st: Streams::new(budget),
        unbound: BinaryHeap::new(),
    };
    ctx.schedule(&mut merge);
    bound_assignment(ctx.model, groups, &merge.binding)
}

/// The budget merges' hooks: a ready node of a group already bound queues on its stream; one
/// of an unbound group waits among the unbound, and binds its group to the free stream it
/// starts on. Nodes of no group start at once, on no stream.
struct Merge<'c> {
    timing: &'c Timing,
    group_of: IdVec<Pos, Group>,
    need: IdVec<Pos, u32>,
    binding: IdVec<Group, Lane>,
    st: Streams,
    /// Ready task nodes of unbound groups (those of groups bound since they were queued move to
    /// their stream when they surface). Heap key: longest remaining path first, then
    /// topological position.
    unbound: BinaryHeap<Key>,
}

impl Merge<'_> {
    fn prio(&self, p: Pos) -> Key {
        Prio { level: self.timing.level[p], tie: p }
    }
}

impl Hooks<Pos> for Merge<'_> {
    fn ready(&mut self, p: Pos, eng: &mut Engine<Pos>) {
        let g = self.group_of[p];
        if g.is_invalid() {
            eng.start(p, eng.now() + self.timing.cost[p], 0);
        } else if self.binding[g].is_invalid() {
            self.unbound.push(self.prio(p));
        } else {
            self.st.push(self.binding[g], self.prio(p));
        }
    }

    fn dispatch(&mut self, eng: &mut Engine<Pos>) {
        loop {
            while let Some(&k) = self.unbound.peek()
                && self.binding[self.group_of[k.tie]].is_valid()
            {
                self.unbound.pop();
                self.st.push(self.binding[self.group_of[k.tie]], k);
            }
            // The best ready node of a free stream that fits the free units.
            let free = eng.free();
            let mut best = self.st.ready.iter().rev().find(|&&(k, _)| self.need[k.tie] <= free).copied();
            if let Some(&k) = self.unbound.peek()
                && self.st.any_free()
                && self.need[k.tie] <= free
                && best.is_none_or(|(b, _)| k > b)
            {
                best = Some((k, Lane::invalid()));
            }
            let Some((k, from)) = best else { break };
            let p = k.tie;
            let s = if from.is_valid() {
                self.st.take(from);
                self.st.bound[from].pop();
                from
            } else {
                self.unbound.pop();
                // The lowest free stream with nothing bound waiting, else the lowest free one.
                let st = &mut self.st;
                let s = st.free_empty.first().or_else(|| st.free.first()).copied().expect("a free stream");
                st.take(s);
                self.binding[self.group_of[p]] = s;
                s
            };
            debug_assert!(!self.st.is_free[s]);
            eng.start(p, eng.now() + self.timing.cost[p], self.need[p]);
        }
    }

    fn finished(&mut self, p: Pos, _: f64) {
        let g = self.group_of[p];
        if g.is_valid() {
            self.st.release(self.binding[g]);
        }
    }
}

/// Each group on the stream it was bound to, the streams used renumbered densely in id order.
fn bound_assignment(model: &crate::graph::Model, groups: &[Vec<NodeId>], binding: &IdVec<Group, Lane>) -> Assignment {
    let mut used: Vec<Lane> = binding.iter().copied().filter(|s| s.is_valid()).collect();
    used.sort_unstable();
    used.dedup();
    let mut a = Assignment::new(model);
    for (c, chain) in binding.ids().zip(groups) {
        // Every chain was scheduled: the order is a DAG, so the list schedule runs every node.
        let s = used.binary_search(&binding[c]).unwrap_or(0) as u32;
        for &n in chain {
            a.stream[n] = Some(s);
        }
    }
    a.count = used.len() as u32;
    a
}

define_index!(
    /// A group of task nodes the merge binds to one stream.
    Group
);
define_index!(
    /// One of the budget's streams.
    Lane
);
type Key = Prio<Pos>;

/// The budget's streams as [`schedule_groups`] keeps them: each stream's queue of ready
/// nodes of its bound groups, which streams are free, and the free streams indexed two ways.
struct Streams {
    bound: IdVec<Lane, BinaryHeap<Key>>,
    is_free: IdVec<Lane, bool>,
    /// Free streams, lowest id first.
    free: BTreeSet<Lane>,
    /// Free streams with no ready bound node, lowest id first: where a new group binds.
    free_empty: BTreeSet<Lane>,
    /// Free streams with a ready bound node, by their best node's key.
    ready: BTreeSet<(Key, Lane)>,
}

impl Streams {
    fn new(budget: u32) -> Self {
        let lanes = || (0..budget as usize).map(Lane::new);
        Streams {
            bound: IdVec::filled(budget as usize, BinaryHeap::new()),
            is_free: IdVec::filled(budget as usize, true),
            free: lanes().collect(),
            free_empty: lanes().collect(),
            ready: BTreeSet::new(),
        }
    }

    fn any_free(&self) -> bool {
        !self.free.is_empty()
    }

    /// Queues ready node `k` on stream `s`.
    fn push(&mut self, s: Lane, k: Key) {
        let heap = &mut self.bound[s];
        if self.is_free[s] {
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
    fn take(&mut self, s: Lane) {
        match self.bound[s].peek() {
            Some(&top) => self.ready.remove(&(top, s)),
            None => self.free_empty.remove(&s),
        };
        self.free.remove(&s);
        self.is_free[s] = false;
    }

    /// Stream `s` finished its node.
    fn release(&mut self, s: Lane) {
        self.is_free[s] = true;
        self.free.insert(s);
        match self.bound[s].peek() {
            Some(&top) => self.ready.insert((top, s)),
            None => self.free_empty.insert(s),
        };
    }
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
