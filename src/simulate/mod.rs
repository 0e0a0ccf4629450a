//! A discrete-event model of the device, to compare assignments.
//!
//! Each physical stream is a FIFO in the allocation's execution order. A node starts when it
//! is at the head of its stream (the node before it has finished), every sync it waits on has
//! been recorded and the wait latency has passed, and `cores` of the device's compute units
//! are free; it runs for `cost_us`. Streams compete for units in stream-id order, so the
//! result is deterministic. Nodes on no stream take no time.

pub mod dot;
pub mod trace;

use std::cmp::Ordering;
use std::collections::{BTreeSet, BinaryHeap};

use serde_json::{Value, json};

use crate::bail;
use crate::compile::Allocation;
use crate::error::Result;
use crate::graph::csr::Csr;
use crate::graph::{IdVec, Model, NodeId, StreamId};

/// Device parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimConfig {
    /// Compute units of the device (a node takes `min(cores, units)` of them).
    pub units: u32,
    /// Time from a record to the end of the wait on it, in µs.
    pub wait_latency_us: f64,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig { units: crate::compile::policy::budget::DEVICE_UNITS, wait_latency_us: 1.0 }
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
        if self.lower_bound_us > 0.0 { self.makespan_us / self.lower_bound_us } else { 1.0 }
    }

    pub fn to_json(&self) -> Value {
        json!({
            "makespan_us": round3(self.makespan_us),
            "lower_bound_us": round3(self.lower_bound_us),
            "critical_path_us": round3(self.critical_path_us),
            "work_bound_us": round3(self.work_bound_us),
            "single_stream_us": round3(self.single_stream_us),
            "ratio": round3(self.ratio()),
            "utilisation": round3(self.utilisation),
            "streams": self.streams,
            "syncs": self.syncs,
        })
    }
}

/// Rounds to 0.001 for reports (simulated times are sums of input costs).
pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Event {
    time: f64,
    /// 0: a node finishes (`id` = node); 1: a stream's wait latency has passed (`id` = stream).
    kind: u8,
    id: u32,
}

impl Eq for Event {}
impl Ord for Event {
    fn cmp(&self, o: &Self) -> Ordering {
        // Min-heap on (time, kind, id).
        o.time.total_cmp(&self.time).then(o.kind.cmp(&self.kind)).then(o.id.cmp(&self.id))
    }
}
impl PartialOrd for Event {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

fn units_of(model: &Model, n: NodeId, cfg: &SimConfig) -> u32 {
    model.nodes[n].cores.min(cfg.units)
}

fn cost_of(model: &Model, n: NodeId) -> f64 {
    let c = model.nodes[n].cost_us;
    if c.is_finite() && c > 0.0 { c } else { 0.0 }
}

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

/// Simulates an allocation (any stage; physical streams are used).
pub fn simulate(model: &Model, alloc: &Allocation, cfg: &SimConfig) -> Result<SimResult> {
    if cfg.units == 0 {
        bail!(InvalidOption, "simulate: units must be at least 1, got 0");
    }
    if !(cfg.wait_latency_us.is_finite() && cfg.wait_latency_us >= 0.0) {
        bail!(InvalidOption, "simulate: wait latency must be a finite number >= 0, got {}", cfg.wait_latency_us);
    }
    let nn = model.nodes.len();
    let order = model.all_nodes();
    let streams = alloc.physical_count().max(alloc.stream().iter().flatten().map(|s| s.0 + 1).max().unwrap_or(0));
    let mut lists: Vec<Vec<NodeId>> = vec![Vec::new(); streams as usize];
    for &n in &order {
        if let Some(s) = alloc.stream()[n] {
            lists[s.index()].push(n);
        }
    }
    let waits: Vec<(NodeId, NodeId)> = alloc
        .syncs()
        .iter()
        .chain(alloc.split_events().iter())
        .map(|p| (p.from.node, p.to.node))
        .filter(|&(f, t)| alloc.stream()[f].is_some() && alloc.stream()[t].is_some() && f != t)
        .collect();
    // Waiters of each record node (CSR).
    let waiters: Csr<NodeId, NodeId> = Csr::group(nn, waits.iter().copied());
    let mut waits_left = IdVec::filled(nn, 0u32);
    for &(_, t) in &waits {
        waits_left[t] += 1;
    }
    let mut wait_ready = IdVec::filled(nn, 0.0f64);
    let mut head = vec![0usize; streams as usize];
    let mut busy = vec![false; streams as usize];
    let mut span: IdVec<NodeId, Option<(f64, f64)>> = IdVec::filled(nn, None);
    let mut free_units = cfg.units;
    let mut heap: BinaryHeap<Event> = BinaryHeap::new();
    let mut blocked: BTreeSet<u32> = BTreeSet::new();
    let mut candidates: BTreeSet<u32> = (0..streams).collect();
    let total: usize = lists.iter().map(Vec::len).sum();
    let mut done = 0usize;
    let mut busy_area = 0.0f64;
    let mut t = 0.0f64;
    loop {
        // Try every candidate stream, lowest id first; a stream blocked on units retries
        // whenever units are released.
        for s in std::mem::take(&mut candidates) {
            let si = s as usize;
            if busy[si] || head[si] >= lists[si].len() {
                continue;
            }
            let n = lists[si][head[si]];
            if waits_left[n] > 0 {
                continue;
            }
            if wait_ready[n] > t {
                heap.push(Event { time: wait_ready[n], kind: 1, id: s });
                continue;
            }
            let need = units_of(model, n, cfg);
            if need > free_units {
                blocked.insert(s);
                continue;
            }
            blocked.remove(&s);
            free_units -= need;
            busy[si] = true;
            let c = cost_of(model, n);
            busy_area += c * need as f64;
            span[n] = Some((t, t + c));
            heap.push(Event { time: t + c, kind: 0, id: n.0 });
        }
        let Some(first) = heap.pop() else { break };
        t = first.time;
        let mut batch = vec![first];
        while heap.peek().is_some_and(|e| e.time == t) {
            batch.push(heap.pop().expect("peeked"));
        }
        for ev in batch {
            if ev.kind == 1 {
                candidates.insert(ev.id);
                continue;
            }
            let n = NodeId(ev.id);
            let s = alloc.stream()[n].expect("simulated nodes have a stream");
            busy[s.index()] = false;
            head[s.index()] += 1;
            done += 1;
            free_units += units_of(model, n, cfg);
            candidates.insert(s.0);
            candidates.extend(blocked.iter().copied());
            for &w in waiters.of(n) {
                waits_left[w] -= 1;
                wait_ready[w] = wait_ready[w].max(t + cfg.wait_latency_us);
                if let Some(ws) = alloc.stream()[w] {
                    candidates.insert(ws.0);
                }
            }
        }
    }
    if done < total {
        let (s, n) = lists
            .iter()
            .enumerate()
            .find_map(|(s, l)| l.get(head[s]).map(|&n| (s, n)))
            .expect("an unfinished stream exists");
        bail!(
            Failed,
            "simulate: deadlock in '{}': stream {s} is stuck at node '{}' ({} of {total} nodes ran)",
            model.name,
            model.nodes[n].name,
            done
        );
    }
    let on_stream = |n: NodeId| alloc.stream()[n].is_some();
    let cp = critical_path(model, on_stream);
    let mut work = 0.0;
    let mut single = 0.0;
    for &n in &order {
        if on_stream(n) {
            work += cost_of(model, n) * units_of(model, n, cfg) as f64;
            single += cost_of(model, n);
        }
    }
    let work_bound = work / cfg.units as f64;
    let makespan = t;
    Ok(SimResult {
        makespan_us: makespan,
        critical_path_us: cp,
        work_bound_us: work_bound,
        lower_bound_us: cp.max(work_bound),
        single_stream_us: single,
        utilisation: if makespan > 0.0 { busy_area / (cfg.units as f64 * makespan) } else { 0.0 },
        streams: alloc.physical_count(),
        syncs: alloc.syncs().len() + alloc.split_events().len(),
        span,
        stream: alloc.stream().clone(),
        waits,
    })
}
