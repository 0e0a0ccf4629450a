//! `min-streams`: the fewest streams that keep every two independent task nodes apart, which
//! is the width of the task nodes' reachability order (Dilworth 1950), found as a maximum
//! matching on that order (Fulkerson 1956) as Nimble does, without building the V×V closure.
//!
//! A greedy chain cover first links each task node to a still-open chain ending in one of its
//! nearest task ancestors. Kuhn-style augmenting paths then merge chains: a search from an
//! open chain tail walks the DAG below it (every task node reached is a reachability edge of
//! the bipartite graph) and follows matched links back to their predecessors; nodes are
//! stamped once per search, so a search costs O(V + E) and there is one per initial chain
//! tail. König's theorem turns the final search forest into an antichain of the same size as
//! the chain count: the optimality certificate.

use super::{Assignment, Ctx, Role};
use crate::graph::ids::define_index;
use crate::graph::{IdVec, NodeId, Pos};

define_index!(
    /// A task node's index among the task nodes, in topological order: a vertex on both sides
    /// of the bipartite matching ([`Task::invalid`]: none).
    Task
);

/// Nearest task ancestors remembered through task-less nodes (the greedy only needs a few;
/// the augmenting phase repairs what the cap misses).
const NEAR: usize = 4;

/// A minimum chain cover of the task nodes and its antichain certificate.
pub struct ChainCover {
    /// Chains in order of their first node; each chain in topological order.
    pub chains: Vec<Vec<NodeId>>,
    /// Mutually independent task nodes, as many as there are chains.
    pub antichain: Vec<NodeId>,
    /// Chains the greedy pass produced before augmentation.
    pub greedy_chains: usize,
}

/// The bipartite matching over task indices; the DAG is walked by root position.
struct Matching<'a, 'm> {
    ctx: &'a Ctx<'m>,
    /// Position of each task node.
    tpos: IdVec<Task, Pos>,
    /// Task index at each position (invalid for other nodes).
    tix: IdVec<Pos, Task>,
    next: IdVec<Task, Task>,
    prev: IdVec<Task, Task>,
    owner: IdVec<Task, Task>,
    /// Search marks by position.
    vis: IdVec<Pos, u32>,
    lvis: IdVec<Task, u32>,
    stamp: u32,
    /// The search's L queue and DFS stack, kept for their capacity.
    lq: Vec<Task>,
    stack: Vec<Pos>,
}

impl Matching<'_, '_> {
    /// Alternating search from the open tail `u`; stops at the first free R vertex and
    /// returns it. Marks are kept within a phase: whatever an earlier search of the phase
    /// explored is not explored again.
    fn search(&mut self, u: Task) -> Option<Task> {
        let stamp = self.stamp;
        let succ = &self.ctx.succ;
        let mut lq = std::mem::take(&mut self.lq);
        let mut stack = std::mem::take(&mut self.stack);
        lq.clear();
        lq.push(u);
        self.lvis[u] = stamp;
        let mut found = None;
        let mut head = 0;
        'search: while head < lq.len() {
            let x = lq[head];
            head += 1;
            // Marks are only ever set within a search, so a node already marked when pushed
            // would be skipped when popped: leaving it out keeps the visiting order.
            stack.clear();
            stack.extend(succ.of(self.tpos[x]).iter().filter(|&&y| self.vis[y] != stamp));
            while let Some(y) = stack.pop() {
                if self.vis[y] == stamp {
                    continue;
                }
                self.vis[y] = stamp;
                let ty = self.tix[y];
                if ty.is_valid() {
                    self.owner[ty] = x;
                    let w = self.prev[ty];
                    if w.is_invalid() {
                        found = Some(ty);
                        break 'search;
                    } else if self.lvis[w] != stamp {
                        self.lvis[w] = stamp;
                        lq.push(w);
                    }
                }
                stack.extend(succ.of(y).iter().filter(|&&z| self.vis[z] != stamp));
            }
        }
        self.lq = lq;
        self.stack = stack;
        found
    }

    fn flip(&mut self, mut cur: Task, u: Task) {
        loop {
            let x = self.owner[cur];
            let old = self.next[x];
            self.next[x] = cur;
            self.prev[cur] = x;
            if x == u {
                break;
            }
            cur = old;
        }
    }
}

/// Greedy chains, then augmenting paths, then the König antichain.
pub fn chain_cover(ctx: &Ctx<'_>) -> ChainCover {
    let n = ctx.order.len();
    let tasks: IdVec<Task, NodeId> = IdVec::from_vec(ctx.task_nodes());
    let t = tasks.len();
    let tpos: IdVec<Task, Pos> = tasks.iter().map(|&v| ctx.pos[v]).collect();
    let mut tix = IdVec::filled(n, Task::invalid());
    for (i, &p) in tpos.enumerate() {
        tix[p] = i;
    }
    let mut next = IdVec::filled(t, Task::invalid());
    let mut prev = IdVec::filled(t, Task::invalid());
    // Nearest task ancestors seen through task-less nodes, by position.
    let mut near: IdVec<Pos, [Task; NEAR]> = IdVec::filled(n, [Task::invalid(); NEAR]);
    let mut cand: Vec<Task> = Vec::new();
    for v in ctx.order.ids() {
        cand.clear();
        for &src in ctx.pred.of(v) {
            let p = tix[src];
            if p.is_valid() {
                cand.push(p);
            } else {
                cand.extend(near[src].iter().copied().filter(|x| x.is_valid()));
            }
        }
        let tv = tix[v];
        if tv.is_invalid() {
            cand.sort_unstable_by(|a, b| b.cmp(a));
            cand.dedup();
            for (slot, &c) in near[v].iter_mut().zip(cand.iter()) {
                *slot = c;
            }
            continue;
        }
        // The latest open tail among the nearest ancestors.
        if let Some(&p) = cand.iter().filter(|&&p| next[p].is_invalid()).max() {
            next[p] = tv;
            prev[tv] = p;
        }
    }
    drop(near);
    let greedy_chains = prev.iter().filter(|p| p.is_invalid()).count();
    let mut m = Matching {
        ctx,
        tpos,
        tix,
        next,
        prev,
        owner: IdVec::filled(t, Task::invalid()),
        vis: IdVec::filled(n, 0),
        lvis: IdVec::filled(t, 0),
        stamp: 0,
        lq: Vec::new(),
        stack: Vec::new(),
    };
    // Phases of Kuhn searches sharing their marks (each phase O(V + E)); a phase without an
    // augmentation explored everything alternating-reachable from every open tail, so the
    // matching is maximum.
    loop {
        m.stamp += 1;
        let mut augmented = 0usize;
        for u in tasks.ids().rev() {
            if m.next[u].is_invalid()
                && m.lvis[u] != m.stamp
                && let Some(free) = m.search(u)
            {
                m.flip(free, u);
                augmented += 1;
            }
        }
        if augmented == 0 {
            break;
        }
    }
    // König: Z = vertices alternating-reachable from the open tails. The last phase found
    // no augmenting path, so its marks are exactly Z: every open tail was searched or reached,
    // and no search stopped early.
    let stamp = m.stamp;
    let antichain: Vec<NodeId> =
        tasks.ids().filter(|&i| m.lvis[i] == stamp && m.vis[m.tpos[i]] != stamp).map(|i| tasks[i]).collect();
    let mut chains = Vec::new();
    for h in tasks.ids() {
        if m.prev[h].is_invalid() {
            let mut c = Vec::new();
            let mut x = h;
            while x.is_valid() {
                c.push(tasks[x]);
                x = m.next[x];
            }
            chains.push(c);
        }
    }
    ChainCover { chains, antichain, greedy_chains }
}

impl ChainCover {
    /// One stream per chain.
    pub fn assignment(&self, ctx: &Ctx<'_>) -> Assignment {
        let mut a = Assignment::new(ctx.model);
        for (i, c) in self.chains.iter().enumerate() {
            for &n in c {
                debug_assert_eq!(ctx.role[n], Role::Task);
                a.stream[n] = Some(i as u32);
            }
        }
        a.count = self.chains.len() as u32;
        a
    }
}
