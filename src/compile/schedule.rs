//! The list-scheduling engine and what it schedules on: the device the schedules assume
//! (units, wait latency), what a node costs on it, bottom levels and the ready-queue key.
//!
//! [`Engine`] owns the loop every timed list schedule of the crate runs: the clock, the
//! device's free units, the timeline of finishes and wake-ups, the count of predecessors each
//! node still waits for, and the rounds of an instant. Its users add only what is theirs
//! through [`Hooks`]: the ideal schedule (`simulate::ideal`) nothing but a ready queue, `list`
//! its stream choice, the budget merges their group binding, the execution order
//! ([`super::order`]) its stream queues and wake-up times. So a change to the cost model or to
//! the loop reaches all of them at once. The checker (`verify`) keeps its own arithmetic on
//! purpose: it must not share a bug with what it checks.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::ops::IndexMut;

use crate::graph::ids::Idx;
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

/// What one list schedule adds to the [`Engine`]'s loop: where a ready node waits, what
/// starts when, and what a finish frees besides units. `P` indexes the schedule's nodes (a
/// `NodeId`, or a `Pos` in the root order).
pub trait Hooks<P: Idx + Ord> {
    /// `p`'s last predecessor finished (or the wake-up [`Engine::wake_at`] set came): queue it,
    /// or start it at once ([`Engine::start`], [`Engine::finish_now`]).
    fn ready(&mut self, p: P, eng: &mut Engine<P>);
    /// Starts what may start at [`Engine::now`] on [`Engine::free`] units; called once per
    /// round, after every ready node of the round was handed to [`Hooks::ready`].
    fn dispatch(&mut self, eng: &mut Engine<P>);
    /// `p` finished at [`Engine::now`] (its units are free again), before its successors are
    /// released: free its stream.
    fn finished(&mut self, _p: P, _now: f64) {}
    /// `p`'s edge into `q` is released at `now`, before `q`'s countdown drops.
    fn released(&mut self, _p: P, _q: P, _now: f64) {}
}

/// An entry of the engine's timeline: a node's finish (returning the units it `held`), or its
/// wake-up (`held == WAKE`). Entries of one instant come off in node order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Entry<P> {
    node: P,
    held: u32,
}

/// [`Entry::held`] of a wake-up.
const WAKE: u32 = u32::MAX;

/// The list-scheduling loop (see the module documentation), on a device of `units` units.
/// Time moves in rounds: every node ready at an instant is handed to [`Hooks::ready`], the
/// hooks dispatch, then the earliest instant on the timeline comes off in one piece; a node
/// that finishes at an instant, even one that takes no time, makes its successors ready for
/// the next round of that instant.
pub struct Engine<P> {
    now: f64,
    units: u32,
    free: u32,
    timeline: BinaryHeap<Timed<Entry<P>>>,
    /// Nodes made ready this round, handed to [`Hooks::ready`] in this order.
    newly: Vec<P>,
    /// Nodes that finished in no time this round ([`Engine::finish_now`]).
    instant: Vec<P>,
    due: Vec<Entry<P>>,
    /// The count of predecessors each node still waits for (by index), set at the start of
    /// a run and kept from run to run.
    left: Vec<u32>,
    started: usize,
    finished: usize,
    /// Rounds run (dispatches), for the invariant tests' trace.
    rounds: u64,
}

impl<P: Idx + Ord> Engine<P> {
    pub fn new(units: u32) -> Self {
        Engine {
            now: 0.0,
            units,
            free: units,
            timeline: BinaryHeap::new(),
            newly: Vec::new(),
            instant: Vec::new(),
            due: Vec::new(),
            left: Vec::new(),
            started: 0,
            finished: 0,
            rounds: 0,
        }
    }

    /// The current instant.
    #[inline]
    pub fn now(&self) -> f64 {
        self.now
    }

    /// Units no running node holds.
    #[inline]
    pub fn free(&self) -> u32 {
        self.free
    }

    /// Whether anything is running or due to wake (so a later round will come).
    #[inline]
    pub fn busy(&self) -> bool {
        !self.timeline.is_empty()
    }

    /// Starts `p`, holding `units` of the free ones until it finishes at `end` (at least now).
    #[inline]
    pub fn start(&mut self, p: P, end: f64, units: u32) {
        debug_assert!(units <= self.free, "a start oversubscribes the units");
        debug_assert!(end >= self.now, "a node finishes before it starts");
        self.free -= units;
        self.started += 1;
        #[cfg(test)]
        trace::record(p.to_index(), self.now, end, units, self.rounds);
        self.timeline.push(Timed { time: end, key: Entry { node: p, held: units } });
    }

    /// Starts and finishes `p` now, in no time and on no units: its successors are released in
    /// this round, or, from [`Hooks::dispatch`], in a round of this instant before the timeline
    /// moves (a schedule with no clock places one node per round this way).
    #[inline]
    pub fn finish_now(&mut self, p: P) {
        self.started += 1;
        #[cfg(test)]
        trace::record(p.to_index(), self.now, self.now, 0, self.rounds);
        self.instant.push(p);
    }

    /// Hands `p` to [`Hooks::ready`] again at `time` (later than now).
    #[inline]
    pub fn wake_at(&mut self, p: P, time: f64) {
        debug_assert!(time > self.now);
        self.timeline.push(Timed { time, key: Entry { node: p, held: WAKE } });
    }

    /// Runs the schedule: `preds` is every node to place with its count of predecessors (one
    /// per edge), in the order the nodes with none are first handed to [`Hooks::ready`];
    /// `succ` is each node's successors (one per edge). Returns how many nodes finished: fewer
    /// than the nodes when the edges hold a cycle. The engine is left at the makespan, ready
    /// for another run.
    pub fn run<H, S, I>(&mut self, preds: impl IntoIterator<Item = (P, u32)>, succ: S, hooks: &mut H) -> usize
    where
        H: Hooks<P>,
        S: Fn(P) -> I,
        I: IntoIterator<Item = P>,
    {
        self.now = 0.0;
        self.free = self.units;
        self.started = 0;
        self.finished = 0;
        for (p, count) in preds {
            let i = p.to_index();
            if i >= self.left.len() {
                self.left.resize(i + 1, 0);
            }
            self.left[i] = count;
            if count == 0 {
                self.newly.push(p);
            }
        }
        #[cfg(test)]
        trace::begin(self.units);
        loop {
            while !self.newly.is_empty() || !self.instant.is_empty() {
                let mut newly = std::mem::take(&mut self.newly);
                for p in newly.drain(..) {
                    hooks.ready(p, self);
                }
                if self.newly.is_empty() {
                    self.newly = newly;
                }
                while let Some(p) = self.instant.pop() {
                    self.finish(p, &succ, hooks);
                }
            }
            hooks.dispatch(self);
            self.rounds += 1;
            if !self.instant.is_empty() {
                // Nodes the dispatch ran in no time: their successors join this instant.
                continue;
            }
            let mut due = std::mem::take(&mut self.due);
            let Some(time) = pop_instant(&mut self.timeline, &mut due) else {
                self.due = due;
                break;
            };
            self.now = time;
            for &Entry { node, held } in &due {
                if held == WAKE {
                    self.newly.push(node);
                } else {
                    self.free += held;
                    self.finish(node, &succ, hooks);
                }
            }
            self.due = due;
        }
        debug_assert_eq!(self.free, self.units, "every unit came back");
        self.finished
    }

    /// `p` finished now: its stream is freed and its successors released.
    #[inline]
    fn finish<H, S, I>(&mut self, p: P, succ: &S, hooks: &mut H)
    where
        H: Hooks<P>,
        S: Fn(P) -> I,
        I: IntoIterator<Item = P>,
    {
        self.finished += 1;
        hooks.finished(p, self.now);
        for q in succ(p) {
            hooks.released(p, q, self.now);
            let left = &mut self.left[q.to_index()];
            *left -= 1;
            if *left == 0 {
                self.newly.push(q);
            }
        }
    }
}

/// What the engine started, recorded per run while a test asks ([`trace::traced`]), and the
/// invariants every schedule on the engine keeps, checked on it.
#[cfg(test)]
pub(crate) mod trace {
    use std::cell::RefCell;

    /// One start: the node's index, the instant and round it was started in, when it
    /// finishes and the units it holds till then.
    #[derive(Clone, Copy, Debug)]
    pub struct Placed {
        pub node: usize,
        pub at: f64,
        pub end: f64,
        pub units: u32,
        pub round: u64,
    }

    /// One run of the engine: its device's units and its starts in order.
    #[derive(Debug, Default)]
    pub struct Run {
        pub units: u32,
        pub placed: Vec<Placed>,
    }

    thread_local! {
        static RUNS: RefCell<Option<Vec<Run>>> = const { RefCell::new(None) };
    }

    pub(super) fn begin(units: u32) {
        RUNS.with(|r| {
            if let Some(runs) = r.borrow_mut().as_mut() {
                runs.push(Run { units, placed: Vec::new() });
            }
        });
    }

    pub(super) fn record(node: usize, at: f64, end: f64, units: u32, round: u64) {
        RUNS.with(|r| {
            if let Some(run) = r.borrow_mut().as_mut().and_then(|runs| runs.last_mut()) {
                run.placed.push(Placed { node, at, end, units, round });
            }
        });
    }

    /// `f`'s result and every engine run it made, in order.
    pub fn traced<R>(f: impl FnOnce() -> R) -> (R, Vec<Run>) {
        RUNS.with(|r| *r.borrow_mut() = Some(Vec::new()));
        let out = f();
        (out, RUNS.with(|r| r.borrow_mut().take().unwrap_or_default()))
    }

    /// The engine's invariants on one run over `nodes` (indices below `size`) with
    /// predecessors `preds` (those among `nodes` count): every node placed exactly once; each after all its predecessors, and not before they
    /// finish; and at no time more units held than the device has (a node holds its units from
    /// the round it starts in to the instant it finishes, one that finishes at the instant it
    /// starts till the next round). `what` names the run in failures.
    pub fn check(run: &Run, size: usize, nodes: &[usize], preds: impl Fn(usize) -> Vec<usize>, what: &str) {
        const OUT: usize = usize::MAX;
        const UNPLACED: usize = usize::MAX - 1;
        let mut seen = vec![OUT; size];
        for &n in nodes {
            seen[n] = UNPLACED;
        }
        for (i, p) in run.placed.iter().enumerate() {
            assert!(seen[p.node] != OUT, "{what}: node {} is not the run's", p.node);
            assert!(seen[p.node] == UNPLACED, "{what}: node {} placed twice", p.node);
            seen[p.node] = i;
        }
        let missing = nodes.iter().filter(|&&n| seen[n] == UNPLACED).count();
        assert_eq!(missing, 0, "{what}: {missing} of {} nodes never placed", nodes.len());
        for &q in nodes {
            let iq = seen[q];
            for p in preds(q).into_iter().filter(|&p| seen[p] != OUT) {
                let (a, b) = (&run.placed[seen[p]], &run.placed[iq]);
                assert!(seen[p] < iq && a.end <= b.at, "{what}: node {q} placed before its predecessor {p} finished");
            }
        }
        let mut held: Vec<Placed> = Vec::new();
        for p in &run.placed {
            assert!(p.end >= p.at, "{what}: node {} finishes before it starts", p.node);
            held.retain(|h| h.end > p.at || (h.end == p.at && h.round >= p.round));
            if p.units > 0 {
                held.push(*p);
            }
            let used: u32 = held.iter().map(|h| h.units).sum();
            assert!(used <= run.units, "{what}: {used} units held of {} at {} us", run.units, p.at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::trace::{Run, check};

    /// The checks catch what they check: a trace with a node twice, one out of order, and one
    /// that holds more units than the device has.
    #[test]
    #[should_panic(expected = "units held")]
    fn the_unit_check_fails_on_oversubscription() {
        use super::trace::Placed;
        let placed = |node, units| Placed { node, at: 0.0, end: 1.0, units, round: 0 };
        let run = Run { units: 4, placed: vec![placed(0, 3), placed(1, 2)] };
        check(&run, 2, &[0, 1], |_| Vec::new(), "two nodes on 5 of 4 units");
    }

    #[test]
    #[should_panic(expected = "before its predecessor")]
    fn the_order_check_fails_on_a_node_before_its_predecessor() {
        use super::trace::Placed;
        let run = Run {
            units: 4,
            placed: vec![
                Placed { node: 1, at: 0.0, end: 1.0, units: 1, round: 0 },
                Placed { node: 0, at: 1.0, end: 2.0, units: 1, round: 1 },
            ],
        };
        check(&run, 2, &[0, 1], |q| if q == 1 { vec![0] } else { Vec::new() }, "1 after 0");
    }
}
