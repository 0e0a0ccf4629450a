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
use crate::graph::NodeId;

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

/// The bipartite matching over task indices; the DAG is walked by root position.
struct Matching<'a, 'm> {
    ctx: &'a Ctx<'m>,
    /// Position of each task node.
    tpos: Vec<u32>,
    /// Task index at each position (`NONE` for other nodes).
    tix: Vec<u32>,
    next: Vec<u32>,
    prev: Vec<u32>,
    owner: Vec<u32>,
    /// Search marks by position.
    vis: Vec<u32>,
    lvis: Vec<u32>,
    stamp: u32,
    /// The search's L queue and DFS stack, kept for their capacity.
    lq: Vec<u32>,
    stack: Vec<u32>,
}

impl Matching<'_, '_> {
    /// Alternating search from the open tail `u`; stops at the first free R vertex and
    /// returns it. Marks are kept within a phase: whatever an earlier search of the phase
    /// explored is not explored again.
    fn search(&mut self, u: u32) -> Option<u32> {
        let stamp = self.stamp;
        let succ = &self.ctx.succ;
        let mut lq = std::mem::take(&mut self.lq);
        let mut stack = std::mem::take(&mut self.stack);
        lq.clear();
        lq.push(u);
        self.lvis[u as usize] = stamp;
        let mut found = None;
        let mut head = 0;
        'search: while head < lq.len() {
            let x = lq[head];
            head += 1;
            // Marks are only ever set within a search, so a node already marked when pushed
            // would be skipped when popped: leaving it out keeps the visiting order.
            stack.clear();
            stack.extend(succ.of(self.tpos[x as usize]).iter().filter(|&&y| self.vis[y as usize] != stamp));
            while let Some(y) = stack.pop() {
                if self.vis[y as usize] == stamp {
                    continue;
                }
                self.vis[y as usize] = stamp;
                let ty = self.tix[y as usize];
                if ty != NONE {
                    self.owner[ty as usize] = x;
                    let w = self.prev[ty as usize];
                    if w == NONE {
                        found = Some(ty);
                        break 'search;
                    } else if self.lvis[w as usize] != stamp {
                        self.lvis[w as usize] = stamp;
                        lq.push(w);
                    }
                }
                stack.extend(succ.of(y).iter().filter(|&&z| self.vis[z as usize] != stamp));
            }
        }
        self.lq = lq;
        self.stack = stack;
        found
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
    let n = ctx.order.len();
    let tasks = ctx.task_nodes();
    let t = tasks.len();
    let tpos: Vec<u32> = tasks.iter().map(|&v| ctx.pos[v]).collect();
    let mut tix = vec![NONE; n];
    for (i, &p) in tpos.iter().enumerate() {
        tix[p as usize] = i as u32;
    }
    let mut next = vec![NONE; t];
    let mut prev = vec![NONE; t];
    // Nearest task ancestors seen through task-less nodes, by position.
    let mut near: Vec<[u32; NEAR]> = vec![[NONE; NEAR]; n];
    let mut cand: Vec<u32> = Vec::new();
    for v in 0..n {
        cand.clear();
        for &src in ctx.pred.of(v as u32) {
            let p = tix[src as usize];
            if p != NONE {
                cand.push(p);
            } else {
                cand.extend(near[src as usize].iter().copied().filter(|&x| x != NONE));
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
    drop(near);
    let greedy_chains = prev.iter().filter(|&&p| p == NONE).count();
    let mut m = Matching {
        ctx,
        tpos,
        tix,
        next,
        prev,
        owner: vec![NONE; t],
        vis: vec![0; n],
        lvis: vec![0; t],
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
        for u in (0..t as u32).rev() {
            if m.next[u as usize] == NONE
                && m.lvis[u as usize] != m.stamp
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
        (0..t).filter(|&i| m.lvis[i] == stamp && m.vis[m.tpos[i] as usize] != stamp).map(|i| tasks[i]).collect();
    let mut chains = Vec::new();
    for h in 0..t {
        if m.prev[h] == NONE {
            let mut c = Vec::new();
            let mut x = h as u32;
            while x != NONE {
                c.push(tasks[x as usize]);
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
