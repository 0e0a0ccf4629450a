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
use std::collections::BinaryHeap;

use super::{Assignment, Ctx, Role};
use crate::graph::ids::define_index;
use crate::graph::{IdVec, Pos};

define_index!(
    /// A DALI stream id, tentative or fixed.
    Sid
);
define_index!(
    /// An entry of [`Buckets`]' linked lists ([`Link::invalid`]: the end of a list).
    Link
);

/// Lowest free id, taking fresh ones past everything handed out so far. A flag per id says
/// whether it is free; the heap may hold ids taken since they were given back, which are
/// dropped when they surface.
struct Pool {
    is_free: IdVec<Sid, bool>,
    heap: BinaryHeap<Reverse<Sid>>,
    next: u32,
}

impl Pool {
    fn take_lowest(&mut self) -> Sid {
        while let Some(Reverse(s)) = self.heap.pop() {
            if self.is_free[s] {
                self.is_free[s] = false;
                return s;
            }
        }
        self.next += 1;
        self.is_free.push(false)
    }
    fn give_back(&mut self, s: Sid) {
        if !self.is_free[s] {
            self.is_free[s] = true;
            self.heap.push(Reverse(s));
        }
    }
    fn take(&mut self, s: Sid) -> bool {
        std::mem::replace(&mut self.is_free[s], false)
    }
}

/// Tentative ids waiting at each position: singly linked lists in flat arrays.
struct Buckets {
    head: IdVec<Pos, Link>,
    link: IdVec<Link, Link>,
    val: IdVec<Link, Sid>,
}

impl Buckets {
    fn push(&mut self, p: Pos, s: Sid) {
        self.link.push(self.head[p]);
        self.head[p] = self.val.push(s);
    }
}

/// DALI's stream id per root-graph node (before clearing), in the order of `ctx.order`.
///
/// Every entry is pushed for a later position than the one being popped, so the queue is a
/// bucket per position (a linked list of tentative ids), drained in position order with each
/// bucket sorted: the pops come out exactly in (position, id) order.
fn raw_ids(ctx: &Ctx<'_>) -> IdVec<Pos, Sid> {
    let n = ctx.order.len();
    let mut pool = Pool { is_free: IdVec::new(), heap: BinaryHeap::new(), next: 0 };
    // At most one entry per root and one per edge.
    let cap = n + ctx.succ.entries();
    let mut q = Buckets {
        head: IdVec::filled(n, Link::invalid()),
        link: IdVec::with_capacity(cap),
        val: IdVec::with_capacity(cap),
    };
    for i in ctx.order.ids() {
        if ctx.pred.of(i).is_empty() {
            q.push(i, pool.take_lowest());
        }
    }
    let mut id = IdVec::filled(n, Sid::invalid());
    let mut bucket: Vec<Sid> = Vec::new();
    let mut consumers: Vec<Pos> = Vec::new();
    for i in ctx.order.ids() {
        bucket.clear();
        let mut k = q.head[i];
        while k.is_valid() {
            bucket.push(q.val[k]);
            k = q.link[k];
        }
        bucket.sort_unstable();
        for (j, &s) in bucket.iter().enumerate() {
            pool.give_back(s);
            if j > 0 {
                continue;
            }
            id[i] = s;
            ctx.consumers_into(i, &mut consumers);
            for (k, &c) in consumers.iter().enumerate() {
                let t = if k == 0 && pool.take(s) { s } else { pool.take_lowest() };
                q.push(c, t);
            }
        }
    }
    id
}

pub fn assign(ctx: &Ctx<'_>) -> Assignment {
    let raw = raw_ids(ctx);
    let mut used: Vec<Sid> =
        ctx.order.iter().zip(&raw).filter(|&(&v, _)| ctx.role[v] == Role::Task).map(|(_, &s)| s).collect();
    used.sort_unstable();
    used.dedup();
    let mut stream = IdVec::filled(ctx.model.nodes.len(), None);
    for (&v, &s) in ctx.order.iter().zip(&raw) {
        if ctx.role[v] == Role::Task {
            stream[v] = Some(used.binary_search(&s).expect("id listed") as u32);
        }
    }
    Assignment { stream, count: used.len() as u32, order: Vec::new() }
}
