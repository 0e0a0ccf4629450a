//! A discrete-event model of the device, to compare assignments.
//!
//! Each physical stream is a FIFO queue in the allocation's execution order, holding what
//! runs on the device: the graph nodes on that stream and the nodes the pipeline inserted
//! beside them (Send, Recv, SendNotify, RecvNotify from GE's `GenerateSyncEventNodes`;
//! StreamActive from `UpdateStreamSwitchByLogicStream`), each where allocation JSON lists
//! it. An entry runs for its `cost_us` holding `min(cores, units)` of the device's compute
//! units; inserted nodes and nodes with no device task (`tasks: 0`) take no time and no
//! units. A sync's wait gates the node it guards (the one right after its Recv): that node
//! starts no earlier than the record's node finished plus the wait latency.
//!
//! Ties are broken by rounds, the rule the independent simulator (check_alloc.py) follows:
//! time moves from event to event (an entry finishes, a wait's latency passes), and at each
//! instant the streams whose head may start are tried one after another, each starting its
//! head when the entry before it has finished, its waits are over and enough units are left
//! after the streams tried before it in the same round. The order of a round is the
//! [`Arbitration`]: by default the head that became startable first (its predecessor's end,
//! its waits' ends plus the latency) goes first, the longest waiter, and the stream id breaks
//! only exact ties, so renumbering streams does not change the answer; `StreamId` is the older
//! rule, lowest id first. An entry finishes at the earliest in the next round, even with zero
//! duration, so each inserted or task-less entry costs its stream one round at that instant.
//! The result is deterministic and independent of hash or thread order. docs/simulate.md has
//! the whole model and the figures.

pub mod bound;
pub mod dot;
pub mod ideal;
pub mod trace;

pub use bound::{Bound, bound};
pub use ideal::{Ideal, ideal};

use std::collections::{BTreeSet, BinaryHeap};

use serde_json::{Value, json};

use crate::bail;
use crate::compile::Allocation;
use crate::compile::schedule::{Timed, pop_instant};
use crate::error::Result;
use crate::graph::csr::Csr;
use crate::graph::ids::Idx;
use crate::graph::{IdVec, InsertedId, Model, NodeId, StreamId};

/// Which stream head gets compute units first when several may start at one instant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Arbitration {
    /// The head that became startable first (the longest waiter); the stream id breaks only
    /// exact ties. The answer does not depend on how streams are numbered.
    #[default]
    Ready,
    /// Lowest stream id first: renumbering the streams of one allocation can move its makespan.
    StreamId,
}

impl Arbitration {
    /// The name check_alloc.py's `--arbitration` uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Arbitration::Ready => "ready",
            Arbitration::StreamId => "stream-id",
        }
    }

    pub fn parse(s: &str) -> Result<Self> {
        match s {
            "ready" => Ok(Arbitration::Ready),
            "stream-id" => Ok(Arbitration::StreamId),
            _ => bail!(InvalidOption, "arbitration must be 'ready' or 'stream-id', got '{s}'"),
        }
    }
}

/// Device parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimConfig {
    /// Compute units of the device (a node takes `min(cores, units)` of them).
    pub units: u32,
    /// Time from a record to the end of the wait on it, in µs.
    pub wait_latency_us: f64,
    /// Which head gets units first.
    pub arbitration: Arbitration,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            units: crate::graph::device::DEFAULT_UNITS,
            wait_latency_us: crate::graph::device::DEFAULT_WAIT_LATENCY_US,
            arbitration: Arbitration::Ready,
        }
    }
}

impl SimConfig {
    /// The device profile's units and wait latency, with the default arbitration.
    pub fn from_device(device: &crate::graph::device::DeviceProfile) -> Self {
        SimConfig { units: device.units, wait_latency_us: device.wait_latency_us, ..SimConfig::default() }
    }
}

/// What one simulation measured.
#[derive(Clone, Debug, PartialEq)]
pub struct SimResult {
    pub makespan_us: f64,
    /// Longest path by `cost_us`.
    pub critical_path_us: f64,
    /// Σ cost × units taken / device units.
    pub work_bound_us: f64,
    /// max(critical path, work bound).
    pub lower_bound_us: f64,
    /// Σ cost: everything on one stream without waits.
    pub single_stream_us: f64,
    /// Busy unit-time / (units × makespan).
    pub utilisation: f64,
    pub streams: u32,
    pub syncs: usize,
    /// Start and finish of every node on a stream.
    pub span: IdVec<NodeId, Option<(f64, f64)>>,
    /// Physical stream of every node.
    pub stream: IdVec<NodeId, Option<StreamId>>,
    /// Every wait (record node, waiting node).
    pub waits: Vec<(NodeId, NodeId)>,
}

impl SimResult {
    /// makespan / lower bound (1 when the graph has no work).
    pub fn ratio(&self) -> f64 {
        ratio(self.makespan_us, self.lower_bound_us)
    }

    pub fn to_json(&self) -> Value {
        let mut v = times_json(self.makespan_us, self.lower_bound_us, self.critical_path_us, self.work_bound_us);
        v["single_stream_us"] = json!(round3(self.single_stream_us));
        v["ratio"] = json!(round3(self.ratio()));
        v["utilisation"] = json!(round3(self.utilisation));
        v["streams"] = json!(self.streams);
        v["syncs"] = json!(self.syncs);
        v
    }
}

/// makespan / lower bound (1 when the graph has no work).
fn ratio(makespan_us: f64, lower_bound_us: f64) -> f64 {
    if lower_bound_us > 0.0 { makespan_us / lower_bound_us } else { 1.0 }
}

/// What every schedule reports, simulated or ideal: its makespan and the bounds below it.
fn times_json(makespan_us: f64, lower_bound_us: f64, critical_path_us: f64, work_bound_us: f64) -> Value {
    json!({
        "makespan_us": round3(makespan_us),
        "lower_bound_us": round3(lower_bound_us),
        "critical_path_us": round3(critical_path_us),
        "work_bound_us": round3(work_bound_us),
    })
}

/// Rounds to 0.001 for reports (simulated times are sums of input costs).
pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// What an event of the device's timeline says. Events of one instant come finishes first,
/// then by task or stream id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Happens {
    /// A task finishes.
    Finish(u32),
    /// A stream's wait latency has passed.
    WaitOver(u32),
}

/// Units a node holds while it runs: none for a node with no device task.
fn units_of(model: &Model, n: NodeId, cfg: &SimConfig) -> u32 {
    crate::compile::schedule::node_units(model, n, cfg.units)
}

use crate::compile::schedule::node_cost as cost_of;

/// Longest path by `cost_us` over the nodes that run on a stream.
pub fn critical_path(model: &Model, on_stream: impl Fn(NodeId) -> bool) -> f64 {
    let mut finish = IdVec::filled(model.nodes.len(), 0.0f64);
    let mut best = 0.0f64;
    for n in model.all_nodes() {
        let start = model.in_edges(n).map(|e| finish[e.src]).fold(0.0, f64::max);
        let f = start + if on_stream(n) { cost_of(model, n) } else { 0.0 };
        finish[n] = f;
        best = best.max(f);
    }
    best
}

/// A task of [`Queues`]: graph nodes first, then inserted nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct TaskIx(u32);

impl TaskIx {
    fn index(self) -> usize {
        self.0 as usize
    }
}

impl Idx for TaskIx {
    fn from_index(i: usize) -> Self {
        TaskIx(i as u32)
    }
    fn to_index(self) -> usize {
        self.0 as usize
    }
}

/// What a stream's queue holds: a graph node, or a node the pipeline inserted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    Node(NodeId),
    Inserted(InsertedId),
}

/// Every physical stream's queue in execution order, as allocation JSON lists it: each graph
/// node with the inserted nodes placed before and after it. A queue entry is a task index:
/// graph nodes first (`NodeId`), then inserted nodes (`node count + InsertedId`).
struct Queues {
    lists: Vec<Vec<u32>>,
    /// Stream of every task (`u32::MAX`: on no stream).
    stream_of: Vec<u32>,
    nodes: usize,
}

impl Queues {
    fn build(model: &Model, alloc: &Allocation, order: &[NodeId]) -> Queues {
        let nn = model.nodes.len();
        let inserted = alloc.inserted();
        let side = |before: bool| -> Csr<NodeId, InsertedId> {
            Csr::group(nn, inserted.enumerate().filter(move |(_, x)| x.before == before).map(|(i, x)| (x.anchor, i)))
        };
        let (before, after) = (side(true), side(false));
        let streams = inserted
            .iter()
            .map(|x| x.stream.0 + 1)
            .chain(alloc.stream().iter().flatten().map(|s| s.0 + 1))
            .fold(alloc.physical_count(), u32::max);
        let mut stream_of = vec![u32::MAX; nn + inserted.len()];
        let mut lists: Vec<Vec<u32>> = vec![Vec::new(); streams as usize];
        let mut push = |task: usize, s: StreamId| {
            stream_of[task] = s.0;
            lists[s.index()].push(task as u32);
        };
        for &n in order {
            for &i in before.of(n) {
                push(nn + i.index(), inserted[i].stream);
            }
            if let Some(s) = alloc.stream()[n] {
                push(n.index(), s);
            }
            for &i in after.of(n) {
                push(nn + i.index(), inserted[i].stream);
            }
        }
        Queues { lists, stream_of, nodes: nn }
    }

    fn slot(&self, task: u32) -> Slot {
        let t = task as usize;
        if t < self.nodes { Slot::Node(NodeId::new(t)) } else { Slot::Inserted(InsertedId::new(t - self.nodes)) }
    }

    fn name(&self, model: &Model, alloc: &Allocation, task: u32) -> String {
        match self.slot(task) {
            Slot::Node(n) => model.nodes[n].name.clone(),
            Slot::Inserted(i) => alloc.inserted()[i].name(model).into_owned(),
        }
    }

    /// An error naming the first stream stuck before its end when fewer than all the queued
    /// tasks ran (`done`; `head`: each stream's next task): the queues deadlock.
    fn check_finished(&self, model: &Model, alloc: &Allocation, head: &[usize], done: usize) -> Result<()> {
        let total: usize = self.lists.iter().map(Vec::len).sum();
        if done < total {
            let (s, task) = self
                .lists
                .iter()
                .enumerate()
                .find_map(|(s, l)| l.get(head[s]).map(|&n| (s, n)))
                .expect("an unfinished stream exists");
            bail!(
                Failed,
                "simulate: deadlock in '{}': stream {s} is stuck at node '{}' ({} of {total} nodes ran)",
                model.name,
                self.name(model, alloc, task),
                done
            );
        }
        Ok(())
    }
}

/// Simulates an allocation (any stage; physical streams are used).
pub fn simulate(model: &Model, alloc: &Allocation, cfg: &SimConfig) -> Result<SimResult> {
    if cfg.units == 0 {
        bail!(InvalidOption, "simulate: units must be at least 1, got 0");
    }
    if !(cfg.wait_latency_us.is_finite() && cfg.wait_latency_us >= 0.0) {
        bail!(InvalidOption, "simulate: wait latency must be a finite number >= 0, got {}", cfg.wait_latency_us);
    }
    let order = alloc.order(model);
    let queues = Queues::build(model, alloc, &order);
    let waits = node_waits(alloc);
    let played = play(model, alloc, cfg, &queues, &task_waits(alloc, &queues, &waits))?;
    let on_stream = |n: NodeId| alloc.stream()[n].is_some();
    let cp = critical_path(model, on_stream);
    let mut work = 0.0;
    let mut single = 0.0;
    for &n in order.iter() {
        if on_stream(n) {
            work += cost_of(model, n) * units_of(model, n, cfg) as f64;
            single += cost_of(model, n);
        }
    }
    let work_bound = work / cfg.units as f64;
    let makespan = played.makespan;
    Ok(SimResult {
        makespan_us: makespan,
        critical_path_us: cp,
        work_bound_us: work_bound,
        lower_bound_us: cp.max(work_bound),
        single_stream_us: single,
        utilisation: if makespan > 0.0 { played.busy_area / (cfg.units as f64 * makespan) } else { 0.0 },
        streams: alloc.physical_count(),
        syncs: alloc.syncs().len() + alloc.split_events().len(),
        span: played.span,
        stream: alloc.stream().clone(),
        waits,
    })
}

/// Every sync between two different nodes on streams, as (record node, waiting node).
fn node_waits(alloc: &Allocation) -> Vec<(NodeId, NodeId)> {
    alloc
        .syncs()
        .iter()
        .chain(alloc.split_events().iter())
        .map(|p| (p.from.node, p.to.node))
        .filter(|&(f, t)| alloc.stream()[f].is_some() && alloc.stream()[t].is_some() && f != t)
        .collect()
}

/// The tasks each sync joins: its nodes (`waits`), or the Send/Recv node an end is where the
/// split separated the two (`Allocation::end_via`).
fn task_waits(alloc: &Allocation, queues: &Queues, waits: &[(NodeId, NodeId)]) -> Vec<(TaskIx, TaskIx)> {
    if !alloc.has_end_via() {
        return waits.iter().map(|&(f, t)| (TaskIx(f.index() as u32), TaskIx(t.index() as u32))).collect();
    }
    let nn = queues.nodes;
    let task = |n: NodeId, via: Option<InsertedId>| TaskIx(via.map_or(n.index(), |i| nn + i.index()) as u32);
    alloc
        .syncs()
        .iter()
        .chain(alloc.split_events().iter())
        .enumerate()
        .map(|(k, p)| (task(p.from.node, alloc.end_via(k, false)), task(p.to.node, alloc.end_via(k, true))))
        .filter(|&(f, t)| {
            f != t && queues.stream_of[f.0 as usize] != u32::MAX && queues.stream_of[t.0 as usize] != u32::MAX
        })
        .collect()
}

/// What playing the queues gave: when the last task finished, the busy unit-time, and every
/// graph node's start and finish.
struct Played {
    makespan: f64,
    busy_area: f64,
    span: IdVec<NodeId, Option<(f64, f64)>>,
}

/// Plays the queues on the device: each stream runs its queue in order, a task starting once
/// its waits are over (plus the wait latency) and its units are free; streams compete for
/// units in `cfg.arbitration`'s order. An error when the queues deadlock.
fn play(
    model: &Model,
    alloc: &Allocation,
    cfg: &SimConfig,
    queues: &Queues,
    task_waits: &[(TaskIx, TaskIx)],
) -> Result<Played> {
    let nn = queues.nodes;
    let streams = queues.lists.len();
    let tasks = nn + alloc.inserted().len();
    // Waiters of each record task (CSR); a wait gates the task it guards.
    let waiters: Csr<TaskIx, TaskIx> = Csr::group(tasks, task_waits.iter().copied());
    let mut waits_left = vec![0u32; tasks];
    for &(_, t) in task_waits {
        waits_left[t.index()] += 1;
    }
    let mut wait_ready = vec![0.0f64; tasks];
    let slot_cost = |task: u32| -> (f64, u32) {
        match queues.slot(task) {
            Slot::Node(n) => (cost_of(model, n), units_of(model, n, cfg)),
            Slot::Inserted(_) => (0.0, 0),
        }
    };
    let lists = &queues.lists;
    let mut head = vec![0usize; streams];
    let mut busy = vec![false; streams];
    // When each stream's last entry finished: with the head's waits, when the head became
    // startable (the `Ready` arbitration's key).
    let mut prev_end = vec![0.0f64; streams];
    let mut round: Vec<(f64, u32)> = Vec::new();
    let mut span: IdVec<NodeId, Option<(f64, f64)>> = IdVec::filled(nn, None);
    let mut free_units = cfg.units;
    let mut heap: BinaryHeap<Timed<Happens>> = BinaryHeap::new();
    let mut batch = Vec::new();
    let mut blocked: BTreeSet<u32> = BTreeSet::new();
    let mut candidates: BTreeSet<u32> = (0..streams as u32).collect();
    let mut done = 0usize;
    let mut busy_area = 0.0f64;
    let mut t = 0.0f64;
    loop {
        // One round: every candidate stream, in arbitration order, starts its head if it can;
        // a stream blocked on units retries whenever units are released.
        round.clear();
        round.extend(std::mem::take(&mut candidates).into_iter().map(|s| {
            let si = s as usize;
            let key = match (cfg.arbitration, lists[si].get(head[si])) {
                (Arbitration::Ready, Some(&task)) => prev_end[si].max(wait_ready[task as usize]),
                _ => 0.0,
            };
            (key, s)
        }));
        if cfg.arbitration == Arbitration::Ready {
            round.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        }
        for &(_, s) in &round {
            let si = s as usize;
            if busy[si] || head[si] >= lists[si].len() {
                continue;
            }
            let task = lists[si][head[si]];
            let ti = task as usize;
            if waits_left[ti] > 0 {
                continue;
            }
            if wait_ready[ti] > t {
                heap.push(Timed { time: wait_ready[ti], key: Happens::WaitOver(s) });
                continue;
            }
            let (c, need) = slot_cost(task);
            if need > free_units {
                blocked.insert(s);
                continue;
            }
            blocked.remove(&s);
            free_units -= need;
            busy[si] = true;
            busy_area += c * need as f64;
            if let Slot::Node(n) = queues.slot(task) {
                span[n] = Some((t, t + c));
            }
            heap.push(Timed { time: t + c, key: Happens::Finish(task) });
        }
        let Some(time) = pop_instant(&mut heap, &mut batch) else { break };
        t = time;
        // Streams blocked on units retry only when units come back: with no more free than
        // when they last tried, they still cannot start.
        let mut freed = false;
        for &ev in &batch {
            let task = match ev {
                Happens::WaitOver(s) => {
                    candidates.insert(s);
                    continue;
                }
                Happens::Finish(task) => task,
            };
            let s = queues.stream_of[task as usize];
            busy[s as usize] = false;
            head[s as usize] += 1;
            prev_end[s as usize] = t;
            done += 1;
            let released = slot_cost(task).1;
            free_units += released;
            freed |= released > 0;
            candidates.insert(s);
            for &w in waiters.of(TaskIx(task)) {
                waits_left[w.index()] -= 1;
                wait_ready[w.index()] = wait_ready[w.index()].max(t + cfg.wait_latency_us);
                candidates.insert(queues.stream_of[w.index()]);
            }
        }
        if freed {
            candidates.extend(blocked.iter().copied());
        }
    }
    queues.check_finished(model, alloc, &head, done)?;
    Ok(Played { makespan: t, busy_area, span })
}
