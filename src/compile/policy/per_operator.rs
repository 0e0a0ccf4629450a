//! `per-operator`: DALI Executor 2.0's `PerOperator` stream assignment (seed
//! dali-executor2-stream-assignment.txt), on GE's graphs.
//!
//! A min-priority queue of (topological index, tentative stream id) and a pool of free ids.
//! Roots enter with the lowest free ids. The first pop of a node fixes its id and returns the
//! id to the pool; its consumers are then pushed, the first one with the node's own id and the
//! others with the lowest free ids. A later pop of an already fixed node only returns its
//! tentative id. Nodes that hold no stream in the end (GE's data nodes, the analogue of DALI's
//! CPU contributors, and pinned nodes) take part in the traversal and are cleared afterwards;
//! the ids left are compacted in order.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

use super::{Assignment, Ctx, Role};
use crate::graph::IdVec;

/// Lowest free id, taking fresh ones past everything handed out so far.
struct Pool {
    free: BTreeSet<u32>,
    next: u32,
}

impl Pool {
    fn take_lowest(&mut self) -> u32 {
        match self.free.pop_first() {
            Some(s) => s,
            None => {
                self.next += 1;
                self.next - 1
            }
        }
    }
    fn give_back(&mut self, s: u32) {
        self.free.insert(s);
    }
    fn take(&mut self, s: u32) -> bool {
        self.free.remove(&s)
    }
}

/// DALI's stream id per root-graph node (before clearing), in the order of `ctx.order`.
pub fn raw_ids(ctx: &Ctx<'_>) -> Vec<u32> {
    let model = ctx.model;
    let n = ctx.order.len();
    let mut pool = Pool { free: BTreeSet::new(), next: 0 };
    let mut heap: BinaryHeap<Reverse<(u32, u32)>> = BinaryHeap::new();
    for (i, &v) in ctx.order.iter().enumerate() {
        if model.in_edges(v).next().is_none() {
            heap.push(Reverse((i as u32, pool.take_lowest())));
        }
    }
    let mut id = vec![u32::MAX; n];
    while let Some(Reverse((i, s))) = heap.pop() {
        pool.give_back(s);
        if id[i as usize] != u32::MAX {
            continue;
        }
        id[i as usize] = s;
        for (k, c) in ctx.consumers(ctx.order[i as usize]).into_iter().enumerate() {
            let t = if k == 0 && pool.take(s) { s } else { pool.take_lowest() };
            heap.push(Reverse((ctx.pos[c], t)));
        }
    }
    id
}

pub fn assign(ctx: &Ctx<'_>) -> Assignment {
    let raw = raw_ids(ctx);
    let mut used: Vec<u32> =
        ctx.order.iter().zip(&raw).filter(|&(&v, _)| ctx.role[v] == Role::Task).map(|(_, &s)| s).collect();
    used.sort_unstable();
    used.dedup();
    let mut stream = IdVec::filled(ctx.model.nodes.len(), None);
    for (&v, &s) in ctx.order.iter().zip(&raw) {
        if ctx.role[v] == Role::Task {
            stream[v] = Some(used.binary_search(&s).expect("id listed") as u32);
        }
    }
    Assignment { stream, count: used.len() as u32 }
}
