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

use std::collections::BTreeSet;

use super::{Assignment, Ctx, Role, Timing};
use crate::compile::schedule::{Engine, Hooks, Prio, WAIT_LATENCY_US};
use crate::graph::ids::define_index;
use crate::graph::{IdVec, Pos};

define_index!(
    /// A stream of the schedule, numbered in the order it opened ([`Lane::invalid`]: none).
    Lane
);
define_index!(
    /// A task node's place in the ready order: highest bottom level first, then the earlier
    /// position.
    Rank
);

/// Stream mark of pinned nodes: always another stream than a policy stream.
const PINNED: Lane = Lane(u32::MAX - 1);
/// A stream no producer is on, for [`pick`]'s start time on any other stream.
const ACROSS: Lane = Lane(u32::MAX - 2);
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

/// The list schedule of [`assign`] onto at most `cap` streams, run by the scheduling
/// [`Engine`] with [`List`]'s stream choice.
fn schedule(ctx: &Ctx<'_>, cap: usize) -> Assignment {
    let n = ctx.order.len();
    // Each node's role, cost and units in flat arrays by position (the costs, units and
    // bottom levels computed once per input): the schedule looks at them many times per node,
    // up to `SCAN` ready nodes per round. As the simulator times them: a node with no device
    // task takes no time.
    let timing = ctx.timing();
    let task: IdVec<Pos, bool> = ctx.order.iter().map(|&v| ctx.role[v] == Role::Task).collect();
    let bl = &timing.level;
    // Ready task nodes, highest bottom level first, then the earlier position. The keys never
    // change, so the task nodes are ranked by them once and the ready ones are a set of ranks:
    // a round looks at up to `SCAN` nodes it may not start, walked in place in rank order with
    // their positions and units side by side.
    let mut by_rank: Vec<Pos> = ctx.order.ids().filter(|&p| task[p]).collect();
    by_rank.sort_unstable_by(|&a, &b| Prio { level: bl[b], tie: b }.cmp(&Prio { level: bl[a], tie: a }));
    let by_rank: IdVec<Rank, Pos> = IdVec::from_vec(by_rank);
    let mut rank = IdVec::filled(n, Rank::invalid());
    for (r, &p) in by_rank.enumerate() {
        rank[p] = r;
    }
    let mut list = List {
        ctx,
        timing,
        on: IdVec::filled(n, Lane::invalid()),
        finish: IdVec::filled(n, 0.0f64),
        st: Streams { last: IdVec::new(), busy: IdVec::new(), idle: BTreeSet::new(), cap },
        homes: Vec::new(),
        need_by_rank: by_rank.iter().map(|&p| timing.units[p]).collect(),
        ready: RankSet::new(by_rank.len()),
        by_rank,
        rank,
        task,
    };
    let done = ctx.schedule(&mut list);
    debug_assert_eq!(done, n, "the root order is a DAG");
    numbered(ctx, &list.on, &list.task, list.st.last.len())
}

/// `list`'s hooks: a ready task node waits in the ready set by rank and starts, whenever units
/// and a stream are free, on the stream [`pick`] chooses; other nodes take no stream and start
/// at once (followers see their first producer's stream).
struct List<'c, 'm> {
    ctx: &'c Ctx<'m>,
    timing: &'c Timing,
    task: IdVec<Pos, bool>,
    /// Stream of each position as the schedule sees it (followers take their first producer's).
    on: IdVec<Pos, Lane>,
    finish: IdVec<Pos, f64>,
    st: Streams,
    homes: Vec<Lane>,
    by_rank: IdVec<Rank, Pos>,
    rank: IdVec<Pos, Rank>,
    need_by_rank: IdVec<Rank, u32>,
    ready: RankSet,
}

impl Hooks<Pos> for List<'_, '_> {
    /// Nodes that take no stream start at once.
    fn ready(&mut self, p: Pos, eng: &mut Engine<Pos>) {
        if self.task[p] {
            self.ready.insert(self.rank[p]);
            return;
        }
        let ctx = self.ctx;
        self.on[p] = match ctx.role[ctx.order[p]] {
            Role::Pinned => PINNED,
            Role::Follower => {
                ctx.pred.of(p).iter().map(|&q| self.on[q]).find(|&s| s.is_valid()).unwrap_or(Lane::invalid())
            }
            _ => Lane::invalid(),
        };
        eng.start(p, eng.now() + self.timing.cost[p], 0);
    }

    fn dispatch(&mut self, eng: &mut Engine<Pos>) {
        let t = eng.now();
        for strict in [true, false] {
            let mut skipped = 0;
            let mut placed = false;
            // The idle streams a node could follow under `strict`, while no fresh stream is
            // left and `pick` sees every idle stream: a node at or before the lowest last
            // position among them has none, and is passed over without asking `pick`.
            let mut lowest_last = None;
            let mut next = self.ready.next(Rank(0));
            while let Some(r) = next {
                if !(self.st.can_take() && eng.free() > 0 && skipped < SCAN) {
                    break;
                }
                next = self.ready.next(Rank(r.0 + 1));
                if self.need_by_rank[r] > eng.free() {
                    skipped += 1;
                    continue;
                }
                let p = self.by_rank[r];
                let st = &self.st;
                if strict && st.last.len() >= st.cap && st.idle.len() <= SCAN {
                    let lowest =
                        *lowest_last.get_or_insert_with(|| st.idle.iter().map(|&s| st.last[s]).min().unwrap_or(Pos(0)));
                    if p <= lowest {
                        skipped += 1;
                        continue;
                    }
                }
                let Some((s, at)) = pick(self.ctx, p, &self.on, &self.finish, st, t, strict, &mut self.homes) else {
                    skipped += 1;
                    continue;
                };
                self.st.take(s, p);
                self.on[p] = s;
                eng.start(p, at + self.timing.cost[p], self.timing.units[p]);
                self.ready.remove(r);
                placed = true;
                lowest_last = None;
            }
            // Out-of-order placement only when nothing else could ever start.
            if placed || eng.busy() {
                break;
            }
        }
    }

    fn finished(&mut self, p: Pos, now: f64) {
        self.finish[p] = now;
        if self.task[p] {
            self.st.release(self.on[p]);
        }
    }
}

/// The task nodes on the streams the schedule put them `on` (by position; none: invalid), the
/// `streams` numbered by their first node in topological order.
fn numbered(ctx: &Ctx<'_>, on: &IdVec<Pos, Lane>, task: &IdVec<Pos, bool>, streams: usize) -> Assignment {
    let mut renumber: IdVec<Lane, Option<u32>> = IdVec::filled(streams, None);
    let mut count = 0;
    let mut a = Assignment::new(ctx.model);
    for (p, &s) in on.enumerate() {
        if task[p] && s.is_valid() {
            let id = *renumber[s].get_or_insert_with(|| {
                count += 1;
                count - 1
            });
            a.stream[ctx.order[p]] = Some(id);
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

    fn insert(&mut self, r: Rank) {
        let r = r.index();
        self.words[r / 64] |= 1 << (r % 64);
        self.summary[r / 4096] |= 1 << (r / 64 % 64);
    }

    fn remove(&mut self, r: Rank) {
        let r = r.index();
        let w = &mut self.words[r / 64];
        *w &= !(1 << (r % 64));
        if *w == 0 {
            self.summary[r / 4096] &= !(1 << (r / 64 % 64));
        }
    }

    /// The lowest rank in the set at or above `from`.
    fn next(&self, from: Rank) -> Option<Rank> {
        let from = from.index();
        let w = from / 64;
        if w >= self.words.len() {
            return None;
        }
        let here = self.words[w] & (u64::MAX << (from % 64));
        if here != 0 {
            return Some(Rank::new(w * 64 + here.trailing_zeros() as usize));
        }
        // The next word with any, through the summary.
        let first = w + 1;
        let mut sw = first / 64;
        let mut bits = u64::MAX << (first % 64);
        while sw < self.summary.len() {
            let m = self.summary[sw] & bits;
            if m != 0 {
                let word = sw * 64 + m.trailing_zeros() as usize;
                return Some(Rank::new(word * 64 + self.words[word].trailing_zeros() as usize));
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
    last: IdVec<Lane, Pos>,
    busy: IdVec<Lane, bool>,
    /// Idle streams, lowest id first.
    idle: BTreeSet<Lane>,
    cap: usize,
}

impl Streams {
    /// Places position `p` on stream `s` (`s == last.len()`: a fresh one).
    fn take(&mut self, s: Lane, p: Pos) {
        if s.index() == self.last.len() {
            self.last.push(p);
            self.busy.push(true);
        } else {
            self.idle.remove(&s);
            self.last[s] = p;
            self.busy[s] = true;
        }
    }

    fn release(&mut self, s: Lane) {
        self.busy[s] = false;
        self.idle.insert(s);
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
    p: Pos,
    on: &IdVec<Pos, Lane>,
    finish: &IdVec<Pos, f64>,
    st: &Streams,
    t: f64,
    strict: bool,
    homes: &mut Vec<Lane>,
) -> Option<(Lane, f64)> {
    let preds = ctx.pred.of(p);
    // The latest wait per stream, as the two largest from different streams.
    let mut first = (f64::NEG_INFINITY, Lane::invalid());
    let mut second = f64::NEG_INFINITY;
    let mut home: Option<(f64, Pos, Lane)> = None;
    homes.clear();
    for &q in preds {
        let s = on[q];
        if s.is_invalid() {
            continue;
        }
        let w = finish[q] + WAIT_LATENCY_US;
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
            let key = (finish[q], q, s);
            if home.is_none_or(|h| key.0 > h.0 || (key.0 == h.0 && key.1 > h.1)) {
                home = Some(key);
            }
        }
    }
    let home = home.map(|h| h.2);
    let start_on = |s: Lane| if s == first.1 { second.max(t) } else { first.0.max(t) };
    let eligible = |s: Lane| !st.busy[s] && (!strict || st.last[s] < p);
    homes.sort_unstable();
    homes.dedup();
    let mut best: Option<(Lane, f64)> = None;
    let mut consider = |s: Lane, at: f64| {
        let better = match best {
            None => true,
            Some((b, bt)) => at < bt || (at == bt && home == Some(s) && home != Some(b)),
        };
        if better {
            best = Some((s, at));
        }
    };
    for &s in homes.iter() {
        if eligible(s) {
            consider(s, start_on(s));
        }
    }
    // Any other idle stream: every producer is across, so the lowest eligible one will do
    // (looked for among the first few, which keeps a wide graph's schedule linear).
    let other = st.idle.iter().take(SCAN).find(|&&s| homes.binary_search(&s).is_err() && eligible(s)).copied();
    if let Some(s) = other {
        consider(s, start_on(ACROSS));
    }
    if st.last.len() < st.cap {
        consider(Lane::new(st.last.len()), start_on(ACROSS));
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compile::policy::testing::each_synth_ctx;

    /// The one-stream shortcut is the schedule's own answer on one stream.
    #[test]
    fn one_stream_is_the_schedule_on_one_stream() {
        each_synth_ctx(|family, ctx| {
            let (short, full) = (one_stream(ctx), schedule(ctx, 1));
            assert_eq!((short.stream, short.count), (full.stream, full.count), "{family}");
        });
    }
}
