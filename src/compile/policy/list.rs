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

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::budget::DEVICE_UNITS;
use super::{Assignment, Ctx, Role};

/// Time from a record to the end of the wait on it: the simulator's default, in µs.
pub const WAIT_LATENCY_US: f64 = 1.0;

const NONE: u32 = u32::MAX;
/// Stream mark of pinned nodes: always another stream than a policy stream.
const PINNED: u32 = u32::MAX - 1;

/// A running node by position, earliest finish first, then the lower position.
#[derive(Clone, Copy, PartialEq)]
struct Finish(f64, u32);
impl Eq for Finish {}
impl Ord for Finish {
    fn cmp(&self, o: &Self) -> Ordering {
        o.0.total_cmp(&self.0).then(o.1.cmp(&self.1))
    }
}
impl PartialOrd for Finish {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

/// The list schedule's streams for the task nodes, at most `max_streams` of them.
pub fn assign(ctx: &Ctx<'_>, max_streams: u32) -> Assignment {
    let model = ctx.model;
    let n = ctx.order.len();
    let cap = max_streams.max(1) as usize;
    let node = |p: u32| ctx.order[p as usize];
    // As the simulator times them: a node with no device task takes no time.
    let cost = |p: u32| {
        let r = &model.nodes[node(p)];
        if ctx.role[node(p)] != Role::None && r.tasks > 0 && r.cost_us.is_finite() && r.cost_us > 0.0 {
            r.cost_us
        } else {
            0.0
        }
    };
    let is_task = |p: u32| ctx.role[node(p)] == Role::Task;
    let need = |p: u32| if is_task(p) { model.nodes[node(p)].cores.min(DEVICE_UNITS) } else { 0 };
    let mut bl = vec![0.0f64; n];
    for p in (0..n as u32).rev() {
        bl[p as usize] = cost(p) + ctx.succ.of(p).iter().map(|&q| bl[q as usize]).fold(0.0, f64::max);
    }
    let mut preds_left: Vec<u32> = (0..n as u32).map(|p| ctx.pred.of(p).len() as u32).collect();
    // Stream of each position as the schedule sees it (followers take their first producer's).
    let mut on = vec![NONE; n];
    let mut finish = vec![0.0f64; n];
    // Per stream: busy until, last position, and whether it is running a node now.
    let mut last: Vec<u32> = Vec::new();
    let mut busy: Vec<bool> = Vec::new();
    let mut ready: Vec<u32> = (0..n as u32).filter(|&p| preds_left[p as usize] == 0).collect();
    let mut running: BinaryHeap<Finish> = BinaryHeap::new();
    let mut free_units = DEVICE_UNITS;
    let mut t = 0.0f64;
    let mut done = 0usize;
    loop {
        // Nodes that take no stream start at once.
        let mut k = 0;
        while k < ready.len() {
            let p = ready[k];
            if is_task(p) {
                k += 1;
                continue;
            }
            ready.swap_remove(k);
            let r = node(p);
            on[p as usize] = match ctx.role[r] {
                Role::Pinned => PINNED,
                Role::Follower => ctx.pred.of(p).iter().map(|&q| on[q as usize]).find(|&s| s != NONE).unwrap_or(NONE),
                _ => NONE,
            };
            running.push(Finish(t + cost(p), p));
        }
        ready.sort_unstable_by(|&a, &b| bl[b as usize].total_cmp(&bl[a as usize]).then(a.cmp(&b)));
        let mut started = Vec::new();
        for strict in [true, false] {
            for &p in &ready {
                if need(p) > free_units || started.contains(&p) {
                    continue;
                }
                let Some((s, at)) = pick(ctx, p, &on, &finish, &last, &busy, cap, t, strict) else { continue };
                if s == last.len() {
                    last.push(p);
                    busy.push(true);
                } else {
                    last[s] = p;
                    busy[s] = true;
                }
                on[p as usize] = s as u32;
                free_units -= need(p);
                running.push(Finish(at + cost(p), p));
                started.push(p);
            }
            // Out-of-order placement only when nothing else could ever start.
            if !started.is_empty() || !running.is_empty() {
                break;
            }
        }
        ready.retain(|p| !started.contains(p));
        let Some(Finish(time, first)) = running.pop() else { break };
        t = time;
        let mut finished = vec![first];
        while running.peek().is_some_and(|f| f.0 == t) {
            finished.push(running.pop().expect("peeked").1);
        }
        for p in finished {
            done += 1;
            finish[p as usize] = t;
            if is_task(p) {
                free_units += need(p);
                busy[on[p as usize] as usize] = false;
            }
            for &q in ctx.succ.of(p) {
                preds_left[q as usize] -= 1;
                if preds_left[q as usize] == 0 {
                    ready.push(q);
                }
            }
        }
    }
    debug_assert_eq!(done, n, "the root order is a DAG");
    // Streams numbered by their first node in topological order.
    let mut renumber = vec![NONE; last.len()];
    let mut count = 0;
    let mut a = Assignment::new(model);
    for p in 0..n as u32 {
        let s = on[p as usize];
        if is_task(p) && s != NONE {
            if renumber[s as usize] == NONE {
                renumber[s as usize] = count;
                count += 1;
            }
            a.stream[node(p)] = Some(renumber[s as usize]);
        }
    }
    a.count = count;
    a
}

/// The stream that starts position `p` earliest at time `t`, and when: an idle stream whose
/// last node precedes `p` (any idle stream unless `strict`), or a fresh one within the cap.
/// Ties go to the latest-finishing producer's stream, then to streams in use, lowest first.
#[allow(clippy::too_many_arguments)]
fn pick(
    ctx: &Ctx<'_>,
    p: u32,
    on: &[u32],
    finish: &[f64],
    last: &[u32],
    busy: &[bool],
    cap: usize,
    t: f64,
    strict: bool,
) -> Option<(usize, f64)> {
    let preds = ctx.pred.of(p);
    let start_on = |s: u32| {
        preds
            .iter()
            .filter(|&&q| on[q as usize] != NONE && on[q as usize] != s)
            .map(|&q| finish[q as usize] + WAIT_LATENCY_US)
            .fold(t, f64::max)
    };
    let home = preds
        .iter()
        .filter(|&&q| on[q as usize] != NONE && on[q as usize] != PINNED)
        .max_by(|&&a, &&b| finish[a as usize].total_cmp(&finish[b as usize]).then(a.cmp(&b)))
        .map(|&q| on[q as usize] as usize);
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
    for s in 0..last.len() {
        if !busy[s] && (!strict || last[s] < p) {
            consider(s, start_on(s as u32));
        }
    }
    if last.len() < cap {
        consider(last.len(), start_on(NONE - 2));
    }
    best
}
