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
use crate::graph::{IdVec, NodeId};

const NONE: u32 = u32::MAX;
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

struct Matching<'a, 'm> {
    ctx: &'a Ctx<'m>,
    tasks: Vec<NodeId>,
    /// Task index of each node (`NONE` for other nodes).
    tix: IdVec<NodeId, u32>,
    next: Vec<u32>,
    prev: Vec<u32>,
    owner: Vec<u32>,
    vis: IdVec<NodeId, u32>,
    lvis: Vec<u32>,
    stamp: u32,
}

impl Matching<'_, '_> {
    /// Alternating search from the L vertices in `starts`; stops at the first free R vertex
    /// when `augment` is set. Returns the free R vertex found.
    /// Marks are kept within a phase (`fresh` = false): whatever an earlier search of the
    /// phase explored is not explored again.
    fn search(&mut self, starts: &[u32], augment: bool, fresh: bool) -> Option<u32> {
        if fresh {
            self.stamp += 1;
        }
        let stamp = self.stamp;
        let model = self.ctx.model;
        let mut lq: std::collections::VecDeque<u32> = starts.iter().copied().collect();
        for &u in starts {
            self.lvis[u as usize] = stamp;
        }
        let mut stack: Vec<NodeId> = Vec::new();
        while let Some(x) = lq.pop_front() {
            stack.extend(model.out_edges(self.tasks[x as usize]).map(|e| e.dst));
            while let Some(y) = stack.pop() {
                if self.vis[y] == stamp {
                    continue;
                }
                self.vis[y] = stamp;
                let ty = self.tix[y];
                if ty != NONE {
                    self.owner[ty as usize] = x;
                    let w = self.prev[ty as usize];
                    if w == NONE {
                        if augment {
                            return Some(ty);
                        }
                    } else if self.lvis[w as usize] != stamp {
                        self.lvis[w as usize] = stamp;
                        lq.push_back(w);
                    }
                }
                stack.extend(model.out_edges(y).map(|e| e.dst));
            }
        }
        None
    }

    fn flip(&mut self, mut cur: u32, u: u32) {
        loop {
            let x = self.owner[cur as usize];
            let old = self.next[x as usize];
            self.next[x as usize] = cur;
            self.prev[cur as usize] = x;
            if x == u {
                break;
            }
            cur = old;
        }
    }
}

/// Greedy chains, then augmenting paths, then the König antichain.
pub fn chain_cover(ctx: &Ctx<'_>) -> ChainCover {
    let model = ctx.model;
    let tasks = ctx.task_nodes();
    let t = tasks.len();
    let mut tix = IdVec::filled(model.nodes.len(), NONE);
    for (i, &n) in tasks.iter().enumerate() {
        tix[n] = i as u32;
    }
    let mut next = vec![NONE; t];
    let mut prev = vec![NONE; t];
    // Nearest task ancestors seen through task-less nodes.
    let mut near: IdVec<NodeId, [u32; NEAR]> = IdVec::filled(model.nodes.len(), [NONE; NEAR]);
    let mut cand: Vec<u32> = Vec::new();
    for &v in &ctx.order {
        cand.clear();
        for e in model.in_edges(v) {
            let p = tix[e.src];
            if p != NONE {
                cand.push(p);
            } else {
                cand.extend(near[e.src].iter().copied().filter(|&x| x != NONE));
            }
        }
        let tv = tix[v];
        if tv == NONE {
            cand.sort_unstable_by(|a, b| b.cmp(a));
            cand.dedup();
            for (slot, &c) in near[v].iter_mut().zip(cand.iter()) {
                *slot = c;
            }
            continue;
        }
        // The latest open tail among the nearest ancestors.
        if let Some(&p) = cand.iter().filter(|&&p| next[p as usize] == NONE).max() {
            next[p as usize] = tv;
            prev[tv as usize] = p;
        }
    }
    let greedy_chains = prev.iter().filter(|&&p| p == NONE).count();
    let mut m = Matching {
        ctx,
        tix,
        next,
        prev,
        owner: vec![NONE; t],
        vis: IdVec::filled(model.nodes.len(), 0),
        lvis: vec![0; t],
        stamp: 0,
        tasks,
    };
    // Phases of Kuhn searches sharing their marks (each phase O(V + E)); a phase without an
    // augmentation explored everything alternating-reachable from every open tail, so the
    // matching is maximum.
    loop {
        m.stamp += 1;
        let mut augmented = 0usize;
        for u in (0..t as u32).rev() {
            if m.next[u as usize] == NONE
                && m.lvis[u as usize] != m.stamp
                && let Some(free) = m.search(&[u], true, false)
            {
                m.flip(free, u);
                augmented += 1;
            }
        }
        if augmented == 0 {
            break;
        }
    }
    // König: Z = vertices alternating-reachable from the open tails.
    let tails: Vec<u32> = (0..t as u32).filter(|&u| m.next[u as usize] == NONE).collect();
    m.search(&tails, false, true);
    let stamp = m.stamp;
    let antichain: Vec<NodeId> =
        (0..t).filter(|&i| m.lvis[i] == stamp && m.vis[m.tasks[i]] != stamp).map(|i| m.tasks[i]).collect();
    let mut chains = Vec::new();
    for h in 0..t {
        if m.prev[h] == NONE {
            let mut c = Vec::new();
            let mut x = h as u32;
            while x != NONE {
                c.push(m.tasks[x as usize]);
                x = m.next[x as usize];
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
