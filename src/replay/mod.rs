//! Replay: executes an allocation for real, measures it and catches missing syncs.
//!
//! Every other figure the project gives comes from its simulator; a replay runs the plan on
//! truly concurrent streams instead: one stream per physical stream (a CUDA stream, [`cuda`], or
//! a host thread, [`cpu`]), every task-bearing node in its stream's order as a kernel that holds
//! its `cores` share of the device for `cost_us`, an event recorded after every sync source and
//! a wait before every sync target, exactly where allocation JSON puts them. Task-less nodes run
//! nothing.
//!
//! Each kernel sets a completion flag when it finishes and, when it starts, checks the flags of
//! every node it depends on (the graph's edges with task-less nodes contracted, as the checker
//! reads them: [`crate::verify::doc::Doc::dependencies`]). A producer found unfinished is a
//! violation: the plan let the consumer start too early. A dependency of two kernels on one
//! stream, the producer first, is ordered by the stream itself and not checked.
//!
//! The plan is read as allocation JSON ([`Program::build`]), so a file and a freshly compiled
//! allocation replay alike. Two readings are fixed here:
//! - a sync whose `from` does not precede its `to` in `nodes` orders one iteration's record
//!   before the next iteration's wait (the checker's loop-carried case); a replay runs one
//!   iteration, so it has no wait;
//! - an activation orders the activating node before the next node of each activated stream,
//!   as the checker reads it, and is replayed as one more record / wait pair.
//!
//! One device event stands for each record / wait pair. Ascend events and CUDA events differ
//! (an Ascend wait consumes the record; a CUDA wait sees the last record enqueued before it), so
//! a sync id the plan reuses becomes one event per pair; the order of the pairs is the plan's.

#![forbid(unsafe_code)]

pub mod cpu;
pub mod cuda;
pub mod trace;

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::bail;
use crate::error::Result;
use crate::graph::Model;
use crate::simulate::{SimConfig, round3};
use crate::verify::doc::Doc;

/// What a stream does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Wait for arc `.0`'s record.
    Wait(u32),
    /// Run kernel `.0`.
    Kernel(u32),
    /// Record arc `.0`.
    Record(u32),
}

/// Why two points of the plan are joined.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArcKind {
    /// Entry `index` of `syncs`, sync id `id`.
    Sync { index: usize, id: u64 },
    /// An activation by the `from` node of the `to` node's stream.
    Activation,
}

/// A record / wait pair: recorded on `from_stream` right after document node `from`, waited
/// for on `to_stream` right before document node `to`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arc {
    pub from: usize,
    pub to: usize,
    pub from_stream: u32,
    pub to_stream: u32,
    pub kind: ArcKind,
}

/// A node that runs: a task-bearing graph node on a stream.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    /// Document node index.
    pub node: usize,
    pub name: String,
    pub op_type: String,
    pub stream: u32,
    /// `cost_us` of the node (0 when absent or not positive).
    pub cost_us: f64,
    /// `min(cores, units)`: the share of the device it holds.
    pub units: u32,
    /// Kernels that must have finished when this one starts, with the task-less node the
    /// dependency passes through, if any.
    pub deps: Vec<(u32, Option<String>)>,
}

/// An allocation as a program of per-stream operations.
#[derive(Clone, Debug)]
pub struct Program {
    pub graph: String,
    pub streams: Vec<Vec<Op>>,
    pub kernels: Vec<Kernel>,
    pub arcs: Vec<Arc>,
    /// Syncs whose `from` does not precede `to`: orderings across iterations, not replayed.
    pub loop_carried: usize,
    /// Device units the shares were computed for.
    pub units: u32,
}

/// A dependency found unfinished when its consumer started.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Violation {
    /// Kernel indexes: the consumer and the producer it found unfinished.
    pub kernel: u32,
    pub dep: u32,
}

/// One execution of a program.
#[derive(Clone, Debug, Default)]
pub struct Run {
    /// First kernel start to last kernel end, in µs of wall time.
    pub makespan_us: f64,
    /// Start and end of every kernel, µs from the run's start.
    pub spans: Vec<(f64, f64)>,
    pub violations: Vec<Violation>,
}

/// Something that executes programs: host threads or a device.
pub trait Executor {
    /// The device in words, for reports.
    fn device(&self) -> String;
    /// Runs the program once; `run` numbers the runs from 1.
    fn run(&mut self, program: &Program, run: u32) -> Result<Run>;
}

impl Program {
    /// The program of allocation document `doc` for `model`, kernels sized for `units`.
    pub fn build(model: &Model, doc: &Doc, units: u32) -> Result<Program> {
        if units == 0 {
            bail!(InvalidOption, "replay: units must be at least 1, got 0");
        }
        let nn = doc.nodes.len();
        let mut arcs: Vec<Arc> = Vec::new();
        let mut loop_carried = 0;
        for s in &doc.syncs {
            if s.from.node >= s.to.node {
                loop_carried += 1;
                continue;
            }
            arcs.push(Arc {
                from: s.from.node,
                to: s.to.node,
                from_stream: s.from.stream,
                to_stream: s.to.stream,
                kind: ArcKind::Sync { index: s.index, id: s.id },
            });
        }
        for (a, streams) in &doc.activations {
            let Some(from_stream) = doc.nodes[*a].stream else { continue };
            for &s in streams {
                if let Some(j) = (a + 1..nn).find(|&j| doc.nodes[j].stream == Some(s)) {
                    arcs.push(Arc { from: *a, to: j, from_stream, to_stream: s, kind: ArcKind::Activation });
                }
            }
        }
        let mut waits_at: Vec<Vec<u32>> = vec![Vec::new(); nn];
        let mut records_at: Vec<Vec<u32>> = vec![Vec::new(); nn];
        for (i, a) in arcs.iter().enumerate() {
            waits_at[a.to].push(i as u32);
            records_at[a.from].push(i as u32);
        }
        let stream_count = doc
            .nodes
            .iter()
            .filter_map(|n| n.stream)
            .chain(arcs.iter().flat_map(|a| [a.from_stream, a.to_stream]))
            .map(|s| s as usize + 1)
            .max()
            .unwrap_or(0);
        let mut streams: Vec<Vec<Op>> = vec![Vec::new(); stream_count];
        let mut kernels: Vec<Kernel> = Vec::new();
        let mut kernel_of = vec![u32::MAX; nn];
        // Position of each kernel in its stream, to leave out dependencies the stream orders.
        let mut position: Vec<usize> = Vec::new();
        for i in 0..nn {
            for &a in &waits_at[i] {
                streams[arcs[a as usize].to_stream as usize].push(Op::Wait(a));
            }
            if doc.bearing(i) {
                let d = &doc.nodes[i];
                let node = &model.nodes[d.model.expect("bearing nodes are graph nodes")];
                let s = d.stream.expect("bearing nodes have a stream");
                let k = kernels.len() as u32;
                kernel_of[i] = k;
                position.push(streams[s as usize].len());
                streams[s as usize].push(Op::Kernel(k));
                kernels.push(Kernel {
                    node: i,
                    name: d.name.clone(),
                    op_type: node.op_type.clone(),
                    stream: s,
                    cost_us: if node.cost_us.is_finite() && node.cost_us > 0.0 { node.cost_us } else { 0.0 },
                    units: node.cores.min(units),
                    deps: Vec::new(),
                });
            }
            for &a in &records_at[i] {
                streams[arcs[a as usize].from_stream as usize].push(Op::Record(a));
            }
        }
        for dep in doc.dependencies(model) {
            let (kf, kt) = (kernel_of[dep.from], kernel_of[dep.to]);
            if kf == u32::MAX || kt == u32::MAX || kf == kt {
                continue;
            }
            let (f, t) = (&kernels[kf as usize], &kernels[kt as usize]);
            if f.stream == t.stream && position[kf as usize] < position[kt as usize] {
                continue;
            }
            let via = dep.via.map(|v| model.nodes[v].name.clone());
            kernels[kt as usize].deps.push((kf, via));
        }
        Ok(Program { graph: model.name.clone(), streams, kernels, arcs, loop_carried, units })
    }

    /// Dependencies the kernels check, in all.
    pub fn checked_deps(&self) -> usize {
        self.kernels.iter().map(|k| k.deps.len()).sum()
    }

    /// An order in which a host can issue every operation so that each wait comes after its
    /// record (what CUDA's `cuStreamWaitEvent` needs): each stream in turn, as far as it can go.
    /// A plan whose stream order and syncs form a cycle has none: the error names the streams
    /// that are stuck and what they wait for. (A program built from a document always has
    /// one, document order, since every replayed arc goes forward in it; the check guards the
    /// executors, whose waits would otherwise block for ever.)
    pub fn issue_order(&self) -> Result<Vec<(u32, u32)>> {
        let mut head = vec![0usize; self.streams.len()];
        let mut recorded = vec![false; self.arcs.len()];
        let total: usize = self.streams.iter().map(Vec::len).sum();
        let mut order = Vec::with_capacity(total);
        loop {
            let mut progress = false;
            for (s, ops) in self.streams.iter().enumerate() {
                while let Some(&op) = ops.get(head[s]) {
                    if let Op::Wait(a) = op
                        && !recorded[a as usize]
                    {
                        break;
                    }
                    if let Op::Record(a) = op {
                        recorded[a as usize] = true;
                    }
                    order.push((s as u32, head[s] as u32));
                    head[s] += 1;
                    progress = true;
                }
            }
            if !progress {
                break;
            }
        }
        if order.len() < total {
            let stuck: Vec<String> = self
                .streams
                .iter()
                .enumerate()
                .filter_map(|(s, ops)| match ops.get(head[s]) {
                    Some(Op::Wait(a)) => Some(format!("stream {s} waits for {}", self.arc_name(*a))),
                    _ => None,
                })
                .take(4)
                .collect();
            bail!(
                Failed,
                "replay: the plan of '{}' deadlocks (stream order and syncs form a cycle): {}",
                self.graph,
                stuck.join("; ")
            );
        }
        Ok(order)
    }

    /// `sync id 3 (a -> b)` or `activation (a -> b)`, with document node names.
    pub fn arc_name(&self, a: u32) -> String {
        let arc = &self.arcs[a as usize];
        let name = |i: usize| {
            self.kernels.iter().find(|k| k.node == i).map_or_else(|| format!("node #{i}"), |k| k.name.clone())
        };
        match arc.kind {
            ArcKind::Sync { id, .. } => format!("sync id {id} ({} -> {})", name(arc.from), name(arc.to)),
            ArcKind::Activation => format!("activation ({} -> {})", name(arc.from), name(arc.to)),
        }
    }

    /// The makespan of this program on the simulator's device model: kernels hold their units
    /// for `cost_us`, a wait ends `wait_latency_us` after its record. The simulator's round
    /// tie-break is not modelled, so for a compiled allocation `simulate` is the reference.
    pub fn model_makespan(&self, cfg: &SimConfig) -> Result<f64> {
        self.issue_order()?;
        let ns = self.streams.len();
        let mut head = vec![0usize; ns];
        let mut busy_until: Vec<Option<f64>> = vec![None; ns];
        let mut recorded: Vec<Option<f64>> = vec![None; self.arcs.len()];
        let mut free = cfg.units;
        let mut t = 0.0f64;
        let mut end = 0.0f64;
        loop {
            // Finish what ends now, then start what can start, lowest stream first.
            for s in 0..ns {
                if busy_until[s].is_some_and(|f| f <= t) {
                    busy_until[s] = None;
                    if let Some(Op::Kernel(k)) = self.streams[s].get(head[s]) {
                        free += self.kernels[*k as usize].units;
                    }
                    head[s] += 1;
                }
            }
            let mut next: Option<f64> = None;
            let mut soonest = |x: f64| next = Some(next.map_or(x, |n: f64| n.min(x)));
            for s in 0..ns {
                if busy_until[s].is_some() {
                    continue;
                }
                while let Some(&op) = self.streams[s].get(head[s]) {
                    match op {
                        Op::Record(a) => {
                            recorded[a as usize] = Some(t);
                            head[s] += 1;
                        }
                        Op::Wait(a) => match recorded[a as usize] {
                            Some(r) if r + cfg.wait_latency_us <= t => head[s] += 1,
                            Some(r) => {
                                soonest(r + cfg.wait_latency_us);
                                break;
                            }
                            None => break,
                        },
                        Op::Kernel(k) => {
                            let kern = &self.kernels[k as usize];
                            if kern.units.min(cfg.units) <= free {
                                free -= kern.units.min(cfg.units);
                                busy_until[s] = Some(t + kern.cost_us);
                                end = end.max(t + kern.cost_us);
                            }
                            break;
                        }
                    }
                }
            }
            for f in busy_until.iter().flatten() {
                soonest(*f);
            }
            // A zero-cost kernel ends at `t` itself: the next pass completes it.
            let Some(n) = next else { break };
            t = n;
        }
        Ok(end)
    }
}

/// What the command reports.
#[derive(Clone, Debug)]
pub struct Report {
    pub graph: String,
    pub policy: String,
    pub backend: String,
    pub device: String,
    pub streams: usize,
    pub kernels: usize,
    pub events: usize,
    pub loop_carried: usize,
    pub checked_deps: usize,
    pub time_scale: f64,
    /// Every run's makespan, wall µs.
    pub runs_us: Vec<f64>,
    /// The median run's makespan divided by the time scale: µs of the plan's clock.
    pub measured_us: f64,
    pub simulated_us: f64,
    /// Which model gave `simulated_us`: `simulate` (a compiled allocation) or `program`.
    pub simulated_by: &'static str,
    /// Violations: (consumer, producer, through) names → runs that saw it.
    pub violations: BTreeMap<(String, String, Option<String>), u32>,
    /// The median run, for the trace.
    pub median_run: Run,
}

impl Report {
    pub fn ratio(&self) -> f64 {
        if self.simulated_us > 0.0 { self.measured_us / self.simulated_us } else { 1.0 }
    }

    pub fn to_json(&self) -> Value {
        let violations: Vec<Value> = self
            .violations
            .iter()
            .map(|((to, from, via), runs)| json!({"from": from, "to": to, "via": via, "runs": runs}))
            .collect();
        json!({
            "graph": self.graph,
            "policy": self.policy,
            "backend": self.backend,
            "device": self.device,
            "streams": self.streams,
            "kernels": self.kernels,
            "events": self.events,
            "loop_carried_syncs": self.loop_carried,
            "checked_dependencies": self.checked_deps,
            "repeat": self.runs_us.len(),
            "time_scale": self.time_scale,
            "runs_us": self.runs_us.iter().map(|&x| round3(x)).collect::<Vec<_>>(),
            "measured_us": round3(self.measured_us),
            "simulated_us": round3(self.simulated_us),
            "simulated_by": self.simulated_by,
            "ratio": round3(self.ratio()),
            "violations": violations,
        })
    }

    pub fn text(&self) -> String {
        let mut s = format!(
            "{}: policy {}, {} backend on {}\n  {} streams, {} kernels, {} events, {} dependencies checked per run\n  \
             measured {:.3} us (median of {}, time scale {}), simulated {:.3} us ({}), measured / simulated {:.3}\n",
            self.graph,
            self.policy,
            self.backend,
            self.device,
            self.streams,
            self.kernels,
            self.events,
            self.checked_deps,
            self.measured_us,
            self.runs_us.len(),
            self.time_scale,
            self.simulated_us,
            self.simulated_by,
            self.ratio()
        );
        if self.loop_carried > 0 {
            s.push_str(&format!("  {} loop-carried syncs order iterations and are not replayed\n", self.loop_carried));
        }
        if self.violations.is_empty() {
            s.push_str("  no missing sync: every kernel found its producers finished\n");
        } else {
            s.push_str(&format!("  {} dependencies were not ordered (missing sync):\n", self.violations.len()));
            for ((to, from, via), runs) in &self.violations {
                let through = via.as_ref().map_or(String::new(), |v| format!(" (through '{v}')"));
                s.push_str(&format!(
                    "    '{from}' -> '{to}'{through}: '{to}' started before '{from}' finished in {runs} of {} runs\n",
                    self.runs_us.len()
                ));
            }
        }
        s
    }
}

/// Runs `program` `repeat` times on `exec`; the report's simulated figure is filled by the
/// caller's choice (`simulated_us`, `simulated_by`).
pub fn replay(
    program: &Program,
    exec: &mut dyn Executor,
    repeat: u32,
    time_scale: f64,
    backend: &str,
) -> Result<Report> {
    if repeat == 0 {
        bail!(InvalidOption, "replay: --repeat must be at least 1");
    }
    if !(time_scale.is_finite() && time_scale > 0.0) {
        bail!(InvalidOption, "replay: the time scale must be a finite number > 0, got {time_scale}");
    }
    program.issue_order()?;
    let mut runs: Vec<Run> = Vec::with_capacity(repeat as usize);
    let mut violations: BTreeMap<(String, String, Option<String>), u32> = BTreeMap::new();
    for r in 1..=repeat {
        let run = exec.run(program, r)?;
        let mut seen: Vec<Violation> = run.violations.clone();
        seen.sort_unstable();
        seen.dedup();
        for v in seen {
            let k = &program.kernels[v.kernel as usize];
            let via = k.deps.iter().find(|(d, _)| *d == v.dep).and_then(|(_, via)| via.clone());
            let key = (k.name.clone(), program.kernels[v.dep as usize].name.clone(), via);
            *violations.entry(key).or_insert(0) += 1;
        }
        runs.push(run);
    }
    let runs_us: Vec<f64> = runs.iter().map(|r| r.makespan_us).collect();
    let mut by_time: Vec<usize> = (0..runs.len()).collect();
    by_time.sort_by(|&a, &b| runs[a].makespan_us.total_cmp(&runs[b].makespan_us));
    let median = by_time[(by_time.len() - 1) / 2];
    let median_run = runs.swap_remove(median);
    Ok(Report {
        graph: program.graph.clone(),
        policy: String::new(),
        backend: backend.to_string(),
        device: exec.device(),
        streams: program.streams.iter().filter(|s| !s.is_empty()).count(),
        kernels: program.kernels.len(),
        events: program.arcs.len(),
        loop_carried: program.loop_carried,
        checked_deps: program.checked_deps(),
        time_scale,
        measured_us: median_run.makespan_us / time_scale,
        runs_us,
        simulated_us: 0.0,
        simulated_by: "program",
        violations,
        median_run,
    })
}
