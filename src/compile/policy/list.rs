//! `list`: a priority-aware assignment. The task nodes are list-scheduled on the simulator's
//! device model (24 units; a node holds `min(cores, units)` of them for its `cost_us`) onto at
//! most `max_streams` streams: whenever units and a stream are free, the ready node with the
//! highest bottom level (longest cost-weighted path to an exit, its own cost included; ties
//! by topological position) starts, on the stream that lets it start earliest. A stream other
//! than a producer's costs the wait latency, so a node stays on its latest producer's stream
//! when that is as early, which saves syncs; a fresh stream is opened only when it starts the
//! node strictly earlier. A stream runs its nodes in topological order in the pipeline, so a
//! node only joins a stream whose last node comes before it there (unless nothing else could
//! ever run). Nodes without tasks, pinned nodes and nodes on no stream take no stream and no
//! units here; followers join a neighbour's stream afterwards, as for every policy.

use std::collections::{BTreeSet, BinaryHeap};

use super::{Assignment, Ctx, Role};
use crate::compile::schedule::{Prio, Timed, UNITS, WAIT_LATENCY_US, pop_instant};

const NONE: u32 = u32::MAX;
/// Stream mark of pinned nodes: always another stream than a policy stream.
const PINNED: u32 = u32::MAX - 1;
/// Ready nodes a round looks past when they can not start (too few units, no stream that
/// precedes them), and idle streams a node looks through: bounds the work per event.
const SCAN: usize = 128;

/// The list schedule's streams for the task nodes, at most `max_streams` of them.
pub fn assign(ctx: &Ctx<'_>, max_streams: u32) -> Assignment {
    if max_streams <= 1 {
        return one_stream(ctx);
    }
    schedule(ctx, max_streams as usize)
}

/// The list schedule of [`assign`] onto at most `cap` streams.
fn schedule(ctx: &Ctx<'_>, cap: usize) -> Assignment {
    let n = ctx.order.len();
    let node = |p: u32| ctx.order[p as usize];
    // Each node's role, cost and units in flat arrays by position (the costs, units and
    // bottom levels computed once per input): the schedule looks at them many times per node,
    // up to `SCAN` ready nodes per round. As the simulator times them: a node with no device
    // task takes no time.
    let timing = ctx.timing();
    let tasks: Vec<bool> = ctx.order.iter().map(|&v| ctx.role[v] == Role::Task).collect();
    let cost = |p: u32| timing.cost[p as usize];
    let is_task = |p: u32| tasks[p as usize];
    let need = |p: u32| timing.units[p as usize];
    let bl = &timing.level;
    let mut preds_left: Vec<u32> = (0..n as u32).map(|p| ctx.pred.of(p).len() as u32).collect();
    // Stream of each position as the schedule sees it (followers take their first producer's).
    let mut on = vec![NONE; n];
    let mut finish = vec![0.0f64; n];
    let mut st = Streams { last: Vec::new(), busy: Vec::new(), idle: BTreeSet::new(), cap };
    let mut homes = Vec::new();
    // Ready task nodes, highest bottom level first, then the earlier position. The keys never
    // change, so the task nodes are ranked by them once and the ready ones are a set of ranks:
    // a round looks at up to `SCAN` nodes it may not start, walked in place in rank order with
    // their positions and units side by side.
    let mut by_rank: Vec<u32> = (0..n as u32).filter(|&p| is_task(p)).collect();
    by_rank
        .sort_unstable_by(|&a, &b| Prio { level: bl[b as usize], tie: b }.cmp(&Prio { level: bl[a as usize], tie: a }));
    let mut rank = vec![NONE; n];
    for (r, &p) in by_rank.iter().enumerate() {
        rank[p as usize] = r as u32;
    }
    let need_by_rank: Vec<u32> = by_rank.iter().map(|&p| need(p)).collect();
    let mut ready = RankSet::new(by_rank.len());
    let mut newly: Vec<u32> = (0..n as u32).filter(|&p| preds_left[p as usize] == 0).collect();
    // Running nodes by position, earliest finish first, then the lower position.
    let mut running: BinaryHeap<Timed<u32>> = BinaryHeap::new();
    let mut finished = Vec::new();
    let mut free_units = UNITS;
    let mut t = 0.0f64;
    let mut done = 0usize;
    loop {
        // Nodes that take no stream start at once.
        for p in newly.drain(..) {
            if is_task(p) {
                ready.insert(rank[p as usize] as usize);
                continue;
            }
            on[p as usize] = match ctx.role[node(p)] {
                Role::Pinned => PINNED,
                Role::Follower => ctx.pred.of(p).iter().map(|&q| on[q as usize]).find(|&s| s != NONE).unwrap_or(NONE),
                _ => NONE,
            };
            running.push(Timed { time: t + cost(p), key: p });
        }
        for strict in [true, false] {
            let mut skipped = 0;
            let mut placed = false;
            // The idle streams a node could follow under `strict`, while no fresh stream is
            // left and `pick` sees every idle stream: a node at or before the lowest last
            // position among them has none, and is passed over without asking `pick`.
            let mut lowest_last = None;
            let mut next = ready.next(0);
            while let Some(r) = next {
                if !(st.can_take() && free_units > 0 && skipped < SCAN) {
                    break;
                }
                next = ready.next(r + 1);
                if need_by_rank[r] > free_units {
                    skipped += 1;
                    continue;
                }
                let p = by_rank[r];
                if strict && st.last.len() >= st.cap && st.idle.len() <= SCAN {
                    let lowest = *lowest_last
                        .get_or_insert_with(|| st.idle.iter().map(|&s| st.last[s as usize]).min().unwrap_or(0));
                    if p <= lowest {
                        skipped += 1;
                        continue;
                    }
                }
                let Some((s, at)) = pick(ctx, p, &on, &finish, &st, t, strict, &mut homes) else {
                    skipped += 1;
                    continue;
                };
                st.take(s, p);
                on[p as usize] = s as u32;
                free_units -= need(p);
                running.push(Timed { time: at + cost(p), key: p });
                ready.remove(r);
                placed = true;
                lowest_last = None;
            }
            // Out-of-order placement only when nothing else could ever start.
            if placed || !running.is_empty() {
                break;
            }
        }
        let Some(time) = pop_instant(&mut running, &mut finished) else { break };
        t = time;
        for &p in &finished {
            done += 1;
            finish[p as usize] = t;
            if is_task(p) {
                free_units += need(p);
                st.release(on[p as usize] as usize);
            }
            for &q in ctx.succ.of(p) {
                preds_left[q as usize] -= 1;
                if preds_left[q as usize] == 0 {
                    newly.push(q);
                }
            }
        }
    }
    debug_assert_eq!(done, n, "the root order is a DAG");
    numbered(ctx, &on, is_task, st.last.len())
}

/// The task nodes on the streams the schedule put them `on` (by position, `NONE`: none), the
/// `streams` numbered by their first node in topological order.
fn numbered(ctx: &Ctx<'_>, on: &[u32], is_task: impl Fn(u32) -> bool, streams: usize) -> Assignment {
    let mut renumber = vec![NONE; streams];
    let mut count = 0;
    let mut a = Assignment::new(ctx.model);
    for (p, &s) in on.iter().enumerate() {
        if is_task(p as u32) && s != NONE {
            if renumber[s as usize] == NONE {
                renumber[s as usize] = count;
                count += 1;
            }
            a.stream[ctx.order[p]] = Some(renumber[s as usize]);
        }
    }
    a.count = count;
    a
}

/// [`assign`] with one stream: every task node lands on it whatever the schedule's order, so
/// the schedule is skipped (the event budget's narrowing often asks for exactly this).
fn one_stream(ctx: &Ctx<'_>) -> Assignment {
    let mut a = Assignment::new(ctx.model);
    for &n in &ctx.order {
        if ctx.role[n] == Role::Task {
            a.stream[n] = Some(0);
            a.count = 1;
        }
    }
    a
}

/// A set of ranks `0..len`, walked upwards: a bit per rank, and a bit per word that says
/// whether the word has any, so a walk skips empty stretches 4096 ranks at a time.
struct RankSet {
    words: Vec<u64>,
    summary: Vec<u64>,
}

impl RankSet {
    fn new(len: usize) -> Self {
        let words = len.div_ceil(64);
        RankSet { words: vec![0; words], summary: vec![0; words.div_ceil(64)] }
    }

    fn insert(&mut self, r: usize) {
        self.words[r / 64] |= 1 << (r % 64);
        self.summary[r / 4096] |= 1 << (r / 64 % 64);
    }

    fn remove(&mut self, r: usize) {
        let w = &mut self.words[r / 64];
        *w &= !(1 << (r % 64));
        if *w == 0 {
            self.summary[r / 4096] &= !(1 << (r / 64 % 64));
        }
    }

    /// The lowest rank in the set at or above `from`.
    fn next(&self, from: usize) -> Option<usize> {
        let w = from / 64;
        if w >= self.words.len() {
            return None;
        }
        let here = self.words[w] & (u64::MAX << (from % 64));
        if here != 0 {
            return Some(w * 64 + here.trailing_zeros() as usize);
        }
        // The next word with any, through the summary.
        let first = w + 1;
        let mut sw = first / 64;
        let mut bits = u64::MAX << (first % 64);
        while sw < self.summary.len() {
            let m = self.summary[sw] & bits;
            if m != 0 {
                let word = sw * 64 + m.trailing_zeros() as usize;
                return Some(word * 64 + self.words[word].trailing_zeros() as usize);
            }
            sw += 1;
            bits = u64::MAX;
        }
        None
    }
}

/// Streams as the schedule keeps them.
struct Streams {
    /// Last position placed on each stream.
    last: Vec<u32>,
    busy: Vec<bool>,
    /// Idle streams, lowest id first.
    idle: BTreeSet<u32>,
    cap: usize,
}

impl Streams {
    /// Places position `p` on stream `s` (`s == last.len()`: a fresh one).
    fn take(&mut self, s: usize, p: u32) {
        if s == self.last.len() {
            self.last.push(p);
            self.busy.push(true);
        } else {
            self.idle.remove(&(s as u32));
            self.last[s] = p;
            self.busy[s] = true;
        }
    }

    fn release(&mut self, s: usize) {
        self.busy[s] = false;
        self.idle.insert(s as u32);
    }

    fn can_take(&self) -> bool {
        !self.idle.is_empty() || self.last.len() < self.cap
    }
}

/// The stream that starts position `p` earliest at time `t`, and when: an idle stream whose
/// last node precedes `p` (any idle stream unless `strict`), or a fresh one within the cap.
/// Only a producer's stream can start it earlier than any other stream, so those are looked
/// at one by one and the rest as one. Ties go to the latest-finishing producer's stream, then
/// to producers' streams, then to other streams in use.
#[allow(clippy::too_many_arguments)]
fn pick(
    ctx: &Ctx<'_>,
    p: u32,
    on: &[u32],
    finish: &[f64],
    st: &Streams,
    t: f64,
    strict: bool,
    homes: &mut Vec<u32>,
) -> Option<(usize, f64)> {
    let preds = ctx.pred.of(p);
    // The latest wait per stream, as the two largest from different streams.
    let mut first = (f64::NEG_INFINITY, NONE);
    let mut second = f64::NEG_INFINITY;
    let mut home: Option<(f64, u32, u32)> = None;
    homes.clear();
    for &q in preds {
        let s = on[q as usize];
        if s == NONE {
            continue;
        }
        let w = finish[q as usize] + WAIT_LATENCY_US;
        if s == first.1 {
            first.0 = first.0.max(w);
        } else if w > first.0 {
            second = second.max(first.0);
            first = (w, s);
        } else {
            second = second.max(w);
        }
        if s != PINNED {
            homes.push(s);
            let key = (finish[q as usize], q, s);
            if home.is_none_or(|h| key.0 > h.0 || (key.0 == h.0 && key.1 > h.1)) {
                home = Some(key);
            }
        }
    }
    let home = home.map(|h| h.2 as usize);
    let start_on = |s: u32| if s == first.1 { second.max(t) } else { first.0.max(t) };
    let eligible = |s: usize| !st.busy[s] && (!strict || st.last[s] < p);
    homes.sort_unstable();
    homes.dedup();
    let mut best: Option<(usize, f64)> = None;
    let mut consider = |s: usize, at: f64| {
        let better = match best {
            None => true,
            Some((b, bt)) => at < bt || (at == bt && home == Some(s) && home != Some(b)),
        };
        if better {
            best = Some((s, at));
        }
    };
    for &s in homes.iter() {
        if eligible(s as usize) {
            consider(s as usize, start_on(s));
        }
    }
    // Any other idle stream: every producer is across, so the lowest eligible one will do
    // (looked for among the first few, which keeps a wide graph's schedule linear).
    let other = st
        .idle
        .iter()
        .take(SCAN)
        .find(|&&s| homes.binary_search(&s).is_err() && eligible(s as usize))
        .map(|&s| s as usize);
    if let Some(s) = other {
        consider(s, start_on(NONE - 2));
    }
    if st.last.len() < st.cap {
        consider(st.last.len(), start_on(NONE - 2));
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::policy::testing::each_synth_ctx;

    /// The list schedule as first written: its ready nodes in an ordered set, costs and units
    /// read from the model each time. [`schedule`] must place every node as this does.
    fn reference_schedule(ctx: &Ctx<'_>, cap: usize) -> Assignment {
        let n = ctx.order.len();
        let node = |p: u32| ctx.order[p as usize];
        // As the simulator times them: a node with no device task takes no time.
        let cost = |p: u32| ctx.cost(node(p));
        let is_task = |p: u32| ctx.role[node(p)] == Role::Task;
        let need = |p: u32| ctx.units(node(p));
        let bl = ctx.bottom_levels(|n| ctx.cost(n));
        let mut preds_left: Vec<u32> = (0..n as u32).map(|p| ctx.pred.of(p).len() as u32).collect();
        // Stream of each position as the schedule sees it (followers take their first producer's).
        let mut on = vec![NONE; n];
        let mut finish = vec![0.0f64; n];
        let mut st = Streams { last: Vec::new(), busy: Vec::new(), idle: BTreeSet::new(), cap };
        let mut homes = Vec::new();
        // Ready task nodes, highest bottom level first, then the earlier position.
        // An ordered set rather than a heap: a round looks at up to `SCAN` nodes it may not start,
        // which a set walks in place where a heap would pop and push each of them again.
        let mut ready: BTreeSet<Prio<u32>> = BTreeSet::new();
        let mut placed = Vec::new();
        let mut newly: Vec<u32> = (0..n as u32).filter(|&p| preds_left[p as usize] == 0).collect();
        // Running nodes by position, earliest finish first, then the lower position.
        let mut running: BinaryHeap<Timed<u32>> = BinaryHeap::new();
        let mut finished = Vec::new();
        let mut free_units = UNITS;
        let mut t = 0.0f64;
        let mut done = 0usize;
        loop {
            // Nodes that take no stream start at once.
            for p in newly.drain(..) {
                if is_task(p) {
                    ready.insert(Prio { level: bl[p as usize], tie: p });
                    continue;
                }
                on[p as usize] = match ctx.role[node(p)] {
                    Role::Pinned => PINNED,
                    Role::Follower => {
                        ctx.pred.of(p).iter().map(|&q| on[q as usize]).find(|&s| s != NONE).unwrap_or(NONE)
                    }
                    _ => NONE,
                };
                running.push(Timed { time: t + cost(p), key: p });
            }
            for strict in [true, false] {
                let mut skipped = 0;
                placed.clear();
                // The idle streams a node could follow under `strict`, while no fresh stream is
                // left and `pick` sees every idle stream: a node at or before the lowest last
                // position among them has none, and is passed over without asking `pick`.
                let mut lowest_last = None;
                for &k in ready.iter().rev() {
                    if !(st.can_take() && free_units > 0 && skipped < SCAN) {
                        break;
                    }
                    let p = k.tie;
                    if need(p) > free_units {
                        skipped += 1;
                        continue;
                    }
                    if strict && st.last.len() >= st.cap && st.idle.len() <= SCAN {
                        let lowest = *lowest_last
                            .get_or_insert_with(|| st.idle.iter().map(|&s| st.last[s as usize]).min().unwrap_or(0));
                        if p <= lowest {
                            skipped += 1;
                            continue;
                        }
                    }
                    let Some((s, at)) = pick(ctx, p, &on, &finish, &st, t, strict, &mut homes) else {
                        skipped += 1;
                        continue;
                    };
                    st.take(s, p);
                    on[p as usize] = s as u32;
                    free_units -= need(p);
                    running.push(Timed { time: at + cost(p), key: p });
                    placed.push(k);
                    lowest_last = None;
                }
                for k in &placed {
                    ready.remove(k);
                }
                // Out-of-order placement only when nothing else could ever start.
                if !placed.is_empty() || !running.is_empty() {
                    break;
                }
            }
            let Some(time) = pop_instant(&mut running, &mut finished) else { break };
            t = time;
            for &p in &finished {
                done += 1;
                finish[p as usize] = t;
                if is_task(p) {
                    free_units += need(p);
                    st.release(on[p as usize] as usize);
                }
                for &q in ctx.succ.of(p) {
                    preds_left[q as usize] -= 1;
                    if preds_left[q as usize] == 0 {
                        newly.push(q);
                    }
                }
            }
        }
        debug_assert_eq!(done, n, "the root order is a DAG");
        numbered(ctx, &on, is_task, st.last.len())
    }

    /// The schedule over ranked ready nodes places every node as the ordered set does: on
    /// synthetic families and corpus graphs, under caps that bind and one that does not.
    #[test]
    fn schedule_matches_the_ordered_set_schedule() {
        let models = crate::graph::synth::test_models(
            3000,
            Some(6),
            &["bert_base", "googlenet", "resnet50_train", "densenet121", "vit_b_16"],
        );
        for model in &models {
            let ctx = Ctx::new(model, &model.options).expect("GE's pass chain runs");
            for cap in [2, 3, 8, 64, usize::MAX] {
                let (fast, slow) = (schedule(&ctx, cap), reference_schedule(&ctx, cap));
                assert_eq!((fast.stream, fast.count), (slow.stream, slow.count), "{} cap {cap}", model.name);
            }
        }
    }

    /// The one-stream shortcut is the schedule's own answer on one stream.
    #[test]
    fn one_stream_is_the_schedule_on_one_stream() {
        each_synth_ctx(|family, ctx| {
            let (short, full) = (one_stream(ctx), schedule(ctx, 1));
            assert_eq!((short.stream, short.count), (full.stream, full.count), "{family}");
        });
    }
}
