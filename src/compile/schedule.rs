//! The scheduling core the list schedules share: the device they assume (units, wait latency),
//! what a node costs on it, bottom levels and the ready-queue key. The execution order
//! ([`super::order`]), the ideal schedule (`simulate::ideal`) and the `list` and `budget:N`
//! policies all schedule on these, so a change to the cost model reaches all of them at once.
//! The checker (`verify`) keeps its own arithmetic on purpose: it must not share a bug with
//! what it checks.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::ops::IndexMut;

use crate::graph::{IdVec, Model, NodeId};

/// Compute units of the device the compile-time schedules assume (the simulator's default).
pub const UNITS: u32 = crate::graph::device::DEFAULT_UNITS;
/// Time from a record to the end of the wait on it that the schedules assume, in µs.
pub const WAIT_LATENCY_US: f64 = crate::graph::device::DEFAULT_WAIT_LATENCY_US;

/// Time a node runs: nothing for a node with no device task, whatever its `cost_us` says.
pub fn node_cost(model: &Model, n: NodeId) -> f64 {
    let node = &model.nodes[n];
    if node.tasks > 0 && node.cost_us.is_finite() && node.cost_us > 0.0 { node.cost_us } else { 0.0 }
}

/// Units a node holds while it runs on a device of `units`: none for a node with no device task.
pub fn node_units(model: &Model, n: NodeId, units: u32) -> u32 {
    if model.nodes[n].tasks == 0 { 0 } else { model.nodes[n].cores.min(units) }
}

/// Longest path from each node to an exit by `dur`, its own duration included, over every
/// node of `model` (root and subgraphs): the priority of a list schedule.
pub fn bottom_levels(model: &Model, dur: impl Fn(NodeId) -> f64) -> IdVec<NodeId, f64> {
    let mut level = IdVec::filled(model.nodes.len(), 0.0f64);
    fill_bottom_levels(&mut level, model.all_nodes().iter().rev().copied(), dur, |n| model.out_edges(n).map(|e| e.dst));
    level
}

/// The bottom-level recurrence every list schedule here runs, on whatever indexes its nodes
/// (`NodeId`s, or topological positions): for each node of `backwards`, a topological order
/// walked from the end, `level[n] = dur(n) + ` the highest level among `succ(n)` (0 with
/// none). Nodes outside `backwards` keep the level they had, so a successor outside the
/// walk (another graph's node) counts as that.
pub fn fill_bottom_levels<I, L, S>(
    level: &mut L,
    backwards: impl IntoIterator<Item = I>,
    dur: impl Fn(I) -> f64,
    succ: impl Fn(I) -> S,
) where
    I: Copy,
    L: IndexMut<I, Output = f64> + ?Sized,
    S: IntoIterator<Item = I>,
{
    for n in backwards {
        let below = succ(n).into_iter().map(|d| level[d]).fold(0.0, f64::max);
        level[n] = dur(n) + below;
    }
}

/// Ready-queue key: higher bottom level first, then the lower `tie`, the earlier node (its
/// `NodeId` in declaration order, or its topological position). Ordered by `total_cmp`, so it
/// serves a `BinaryHeap` (the best is the greatest) and an ordered set alike.
#[derive(Clone, Copy, Debug)]
pub struct Prio<T = NodeId> {
    pub level: f64,
    pub tie: T,
}

impl<T: Ord> Ord for Prio<T> {
    fn cmp(&self, o: &Self) -> Ordering {
        self.level.total_cmp(&o.level).then(o.tie.cmp(&self.tie))
    }
}

/// A timeline entry for a `BinaryHeap` that pops the earliest first: by `time`, then the lowest
/// `key` (a node, a position, or an event kind and its subject), which makes ties
/// deterministic.
#[derive(Clone, Copy, Debug)]
pub struct Timed<K> {
    pub time: f64,
    pub key: K,
}

impl<K: Ord> Ord for Timed<K> {
    fn cmp(&self, o: &Self) -> Ordering {
        o.time.total_cmp(&self.time).then(o.key.cmp(&self.key))
    }
}

/// Takes the earliest instant off a timeline: pops its first entry and every other entry at
/// the same time into `out` (cleared first), in key order, and returns that time; `None` when
/// the timeline is empty. The list schedules advance time by this, one instant at a time.
pub fn pop_instant<K: Ord>(timeline: &mut BinaryHeap<Timed<K>>, out: &mut Vec<K>) -> Option<f64> {
    out.clear();
    let first = timeline.pop()?;
    out.push(first.key);
    while timeline.peek().is_some_and(|e| e.time == first.time) {
        out.push(timeline.pop().expect("peeked").key);
    }
    Some(first.time)
}

/// `PartialEq`, `Eq` and `PartialOrd` from `Ord`, for the keys above: equal when they compare
/// equal (`total_cmp`, so the float never makes a key unequal to itself).
macro_rules! from_ord {
    ($($t:ident),*) => {$(
        impl<T: Ord> PartialEq for $t<T> {
            fn eq(&self, o: &Self) -> bool {
                self.cmp(o) == Ordering::Equal
            }
        }
        impl<T: Ord> Eq for $t<T> {}
        impl<T: Ord> PartialOrd for $t<T> {
            fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
                Some(self.cmp(o))
            }
        }
    )*};
}
from_ord!(Prio, Timed);
