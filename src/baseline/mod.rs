//! The peers' published stream-assignment algorithms, as baselines to measure the project's
//! policies against on the same device model (docs/peers.md): XLA's legacy StreamAssignment,
//! Nimble, Opara, ONNX Runtime and TensorRT-LLM's automatic multi-stream pass. Each gives every node a stream by its own rule and
//! synchronises by its own rule, without the project's sync reduction or id reuse, so a
//! comparison sees the peer's real cost. The execution order and the physical split are the
//! pipeline's (an allocation needs them; the peers' own launch orders are not modelled).
//!
//! The graph algorithms (transitive reduction and closure, bipartite matching) are petgraph's,
//! not the passes' own, so that the baselines stay independent of what they are compared with.
//!
//! Every peer sees the same graph: the nodes with a device task (`tasks > 0`) and, between
//! them, the dependencies that pass through task-less nodes (constants, views), which get no
//! stream. This module sits above the driver: it builds a model with the streams and syncs
//! given and runs the pipeline from there.

#![forbid(unsafe_code)]

mod peers;
mod trtllm;

use crate::bail;
use crate::compile::policy::PolicyReport;
use crate::compile::policy::report::{Section, flattened};
use crate::compile::{Stage, TaskLimits};
use crate::driver::{Compiled, Session};
use crate::error::{Error, Result};
use crate::graph::{GivenEvent, IdVec, Model, NodeId, Options, Shape, StreamId};

/// A peer system whose assignment rule is re-implemented here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    /// XLA's legacy `StreamAssignment`: non-GEMM ops on their operands' highest stream, GEMMs
    /// coloured greedily by reachability, waits pruned by a stream × stream last-wait matrix.
    Xla,
    /// Nimble: a minimum path cover of the transitive reduction by bipartite matching; a wait
    /// on every cross-stream parent edge.
    Nimble,
    /// Opara: the first user of an input inherits its stream, any other node opens a new one; a
    /// wait on every cross-stream input.
    Opara,
    /// ONNX Runtime's device partitioner: one stream per engine; a wait on every cross-stream
    /// edge.
    Ort,
    /// TensorRT-LLM's automatic multi-stream pass on `streams` streams: a list schedule by
    /// distance to the exit, each node to the first stream free by its ready time; one event
    /// per producer, a wait on every cross-stream edge. `cost`: weights by `cost_us` instead of
    /// the pass's own table.
    Trtllm { streams: u32, cost: bool },
}

/// Every peer's spelling in `--policies`, for error texts.
pub const SPELLINGS: &str = "xla, nimble, opara, ort, trtllm[:N], trtllm-cost[:N] (N >= 1)";

/// Streams of `trtllm` without `:N`: the count the issue measured TensorRT-LLM's pass with
/// (its own default, one stream, would be the single-stream plan).
pub const TRTLLM_STREAMS: u32 = 4;

impl Peer {
    /// One of each, `trtllm` with its default streams.
    pub const ALL: [Peer; 6] = [
        Peer::Xla,
        Peer::Nimble,
        Peer::Opara,
        Peer::Ort,
        Peer::Trtllm { streams: TRTLLM_STREAMS, cost: false },
        Peer::Trtllm { streams: TRTLLM_STREAMS, cost: true },
    ];

    /// The `--policies` entry that names it (`trtllm:N` and `trtllm-cost:N` away from the
    /// default streams).
    pub fn name(self) -> String {
        match self {
            Peer::Xla => "xla".into(),
            Peer::Nimble => "nimble".into(),
            Peer::Opara => "opara".into(),
            Peer::Ort => "ort".into(),
            Peer::Trtllm { streams, cost } => {
                let base = if cost { "trtllm-cost" } else { "trtllm" };
                if streams == TRTLLM_STREAMS { base.into() } else { format!("{base}:{streams}") }
            }
        }
    }

    /// The peer a `--policies` entry names, if it names one: `xla`, `nimble`, `opara`, `ort`,
    /// `trtllm[:N]`, `trtllm-cost[:N]` (N >= 1 streams).
    pub fn parse(name: &str) -> Option<Peer> {
        let (base, streams) = match name.split_once(':') {
            Some((b, n)) => (b, Some(n.parse::<u32>().ok().filter(|&n| n >= 1)?)),
            None => (name, None),
        };
        let streams = streams.unwrap_or(TRTLLM_STREAMS);
        match base {
            "trtllm" => Some(Peer::Trtllm { streams, cost: false }),
            "trtllm-cost" => Some(Peer::Trtllm { streams, cost: true }),
            _ if streams != TRTLLM_STREAMS || name.contains(':') => None,
            _ => Peer::ALL.into_iter().find(|p| p.name() == base),
        }
    }
}

/// A peer's answer: a stream for every node with a task, and the waits (record node, waiting
/// node) its own rule inserts.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub stream: IdVec<NodeId, Option<StreamId>>,
    pub waits: Vec<(NodeId, NodeId)>,
    /// The peer's own execution order, where it fixes one (TensorRT-LLM: the assignment
    /// order); `None`: the pipeline's.
    pub order: Option<Vec<NodeId>>,
}

impl Plan {
    pub fn streams(&self) -> u32 {
        self.stream.iter().flatten().map(|s| s.0 + 1).max().unwrap_or(0)
    }
}

/// The graph every peer sees: nodes with a device task, and for each such node its nearest
/// task-bearing ancestors (edges through task-less nodes bridged), in a topological order.
pub(crate) struct TaskGraph {
    /// Task-bearing nodes in the model's topological order.
    pub order: Vec<NodeId>,
    /// Direct dependencies of each node of `order` (dense indices, ascending, distinct).
    pub preds: Vec<Vec<usize>>,
}

impl TaskGraph {
    pub fn of(model: &Model) -> TaskGraph {
        let topo = model.all_nodes();
        let has_task = |n: NodeId| model.nodes[n].tasks > 0;
        let mut index: IdVec<NodeId, Option<usize>> = IdVec::filled(model.nodes.len(), None);
        let mut order = Vec::new();
        for &n in &topo {
            if has_task(n) {
                index[n] = Some(order.len());
                order.push(n);
            }
        }
        // The task-bearing nodes each node stands for: itself, or (task-less) what reaches it.
        let mut through: IdVec<NodeId, Vec<usize>> = IdVec::filled(model.nodes.len(), Vec::new());
        let mut preds = vec![Vec::new(); order.len()];
        for &n in &topo {
            let mut p: Vec<usize> = model.in_edges(n).flat_map(|e| through[e.src].iter().copied()).collect();
            p.sort_unstable();
            p.dedup();
            match index[n] {
                Some(i) => {
                    preds[i] = p;
                    through[n] = vec![i];
                }
                None => through[n] = p,
            }
        }
        TaskGraph { order, preds }
    }

    pub fn len(&self) -> usize {
        self.order.len()
    }
}

/// The peer's streams and waits for `model`, compiled with `options`.
pub fn plan(model: &Model, peer: Peer, options: &Options) -> Result<Plan> {
    if model.graphs.len() > 1 {
        bail!(
            InvalidOption,
            "policy {}: graph '{}' has subgraphs; the peers' algorithms are defined on one flat graph",
            peer.name(),
            model.name
        );
    }
    let g = TaskGraph::of(model);
    if runs_on_one_stream(model, options) {
        return Ok(one_stream(model, &g));
    }
    let (streams, waits) = match peer {
        Peer::Xla => peers::xla(model, &g),
        Peer::Nimble => peers::nimble(&g),
        Peer::Opara => peers::opara(&g),
        Peer::Ort => peers::ort(model, &g),
        Peer::Trtllm { streams, cost } => return Ok(trtllm_plan(model, &g, streams, cost)),
    };
    let mut stream = IdVec::filled(model.nodes.len(), None);
    for (i, &n) in g.order.iter().enumerate() {
        stream[n] = Some(StreamId(streams[i]));
    }
    // XLA prunes waits by position on each stream: the positions of the order the pipeline
    // will run the streams in (its own, as every peer here gets).
    let waits = if peer == Peer::Xla {
        let mut index: IdVec<NodeId, Option<usize>> = IdVec::filled(model.nodes.len(), None);
        for (i, &n) in g.order.iter().enumerate() {
            index[n] = Some(i);
        }
        let count = streams.iter().map(|&s| s + 1).max().unwrap_or(0);
        let run = if options.compat_ge || count <= 1 {
            None
        } else {
            crate::compile::order::critical_path_first(model, &stream)
        };
        let run: Vec<usize> = run.unwrap_or_else(|| model.all_nodes()).into_iter().filter_map(|n| index[n]).collect();
        peers::xla_waits(&g, &streams, &run)
    } else {
        waits
    };
    let waits = waits.into_iter().map(|(u, v)| (g.order[u], g.order[v])).collect();
    Ok(Plan { stream, waits, order: None })
}

/// GE's runtime runs a dynamic-shape root on one stream unless the host enables multi-stream
/// for it (`dynamic_multi_stream`, GE's `ENABLE_DYNAMIC_SHAPE_MULTI_STREAM`): a peer's plan on
/// several streams could not run there, so every peer is held to the rule the project's own
/// policies follow (`compile::policy::PolicyInput::new`).
fn runs_on_one_stream(model: &Model, options: &Options) -> bool {
    model.root().shape == Shape::Dynamic && (options.compat_ge || !options.dynamic_multi_stream)
}

/// Every task-bearing node on stream 0, with no wait: what the runtime runs under that rule.
fn one_stream(model: &Model, g: &TaskGraph) -> Plan {
    let mut stream = IdVec::filled(model.nodes.len(), None);
    for &n in &g.order {
        stream[n] = Some(StreamId(0));
    }
    Plan { stream, waits: Vec::new(), order: None }
}

/// TensorRT-LLM's plan: its streams, its waits, and its
/// assignment order as the execution order, with each task-less node placed right before the
/// first task node that needs it (the rest at the end, in graph order).
fn trtllm_plan(model: &Model, g: &TaskGraph, streams: u32, cost: bool) -> Plan {
    let a = trtllm::assign(model, g, streams, cost);
    let mut stream = IdVec::filled(model.nodes.len(), None);
    for (i, &n) in g.order.iter().enumerate() {
        stream[n] = Some(StreamId(a.stream[i]));
    }
    let mut placed: IdVec<NodeId, bool> = IdVec::filled(model.nodes.len(), false);
    let mut order = Vec::with_capacity(model.nodes.len());
    let mut stack = Vec::new();
    for &i in &a.order {
        // The task-less ancestors not yet placed, each after its own producers.
        stack.push((g.order[i], false));
        while let Some((n, expanded)) = stack.pop() {
            if placed[n] {
                continue;
            }
            if expanded {
                placed[n] = true;
                order.push(n);
                continue;
            }
            stack.push((n, true));
            let mut ins: Vec<NodeId> = model.in_edges(n).map(|e| e.src).filter(|&u| !placed[u]).collect();
            ins.sort_unstable_by_key(|&u| std::cmp::Reverse(model.topo_index[u]));
            stack.extend(ins.into_iter().map(|u| (u, false)));
        }
    }
    order.extend(model.all_nodes().into_iter().filter(|&n| !placed[n]));
    let waits = a.waits.iter().map(|&(u, v)| (g.order[u], g.order[v])).collect();
    Plan { stream, waits, order: Some(order) }
}

/// Runs the pipeline on the peer's plan: its streams as the logical streams, its waits as the
/// syncs (one id each, as the peers do not reuse; GE's event is one record and one wait, so
/// TensorRT-LLM's event per producer becomes one per wait), then the split and the rest of the stages.
/// The result has the peer's report and the run's memory plan.
pub fn allocate(model: &Model, peer: Peer, options: &Options, limits: TaskLimits) -> Result<Compiled> {
    allocate_plan(model, peer, &plan(model, peer, options)?, options, limits)
}

/// [`allocate`] from the peer's plan `p`, computed before.
pub fn allocate_plan(model: &Model, peer: Peer, p: &Plan, options: &Options, limits: TaskLimits) -> Result<Compiled> {
    let mut m = model.clone();
    for (n, node) in m.nodes.iter_mut().enumerate() {
        node.stream = p.stream[NodeId::new(n)];
        node.attached_stream_ids.clear();
    }
    m.events = p
        .waits
        .iter()
        .enumerate()
        .map(|(i, &(from, to))| GivenEvent { id: i as u32, from, from_attached: None, to, to_attached: None })
        .collect();
    let mut s = Session::new(&m, options.clone(), limits).from_given_syncs();
    if let Some(order) = p.order.clone() {
        s = s.with_order(order);
    }
    s.run_to(Stage::All).map_err(|e| Error::new(e.kind, format!("policy {}: {}", peer.name(), e.message)))?;
    // The session's memory plan comes along: it is `model`'s too, since a plan reads the
    // graph's edges, tensors and tasks and the allocation, never the streams and events given.
    let mut compiled = s.into_compiled()?;
    let peer_report = PeerReport { streams: p.streams(), waits: p.waits.len() };
    compiled.report = Some(PolicyReport::with_section(peer.name(), peer_report));
    Ok(compiled)
}

/// A peer allocator's plan: its streams and waits (`simulate --policy PEER`), a section of
/// its policy report.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct PeerReport {
    pub streams: u32,
    pub waits: usize,
}

impl Section for PeerReport {
    fn entries(&self) -> serde_json::Map<String, serde_json::Value> {
        flattened(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::json::load_str;

    /// a feeds b and c, both feed d; e hangs off a constant. GEMMs: b and c.
    const DIAMOND: &str = include_str!("../../tests/fixtures/peers/diamond.json");

    fn streams(m: &Model, p: &Plan) -> Vec<i64> {
        m.nodes.ids().map(|n| p.stream[n].map_or(-1, |s| i64::from(s.0))).collect()
    }

    fn names(m: &Model, p: &Plan) -> Vec<(String, String)> {
        p.waits.iter().map(|&(f, t)| (m.nodes[f].name.clone(), m.nodes[t].name.clone())).collect()
    }

    #[test]
    fn each_peer_follows_its_rule_on_a_diamond() {
        let m = load_str(DIAMOND).unwrap();
        let w = |v: &[(&str, &str)]| v.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect::<Vec<_>>();
        // XLA: b and c are independent GEMMs, so c opens stream 1; d takes the highest operand
        // stream (1). d's wait on a is pruned: stream 1 already waited on a for c; its wait on
        // b (later on stream 0) is not.
        let x = plan(&m, Peer::Xla, &m.options).unwrap();
        assert_eq!(streams(&m, &x), [-1, 0, 0, 1, 1, 0]);
        assert_eq!(names(&m, &x), w(&[("a", "c"), ("b", "d")]));
        // Nimble: the reduction drops a -> d, whose four edges match two at most: three
        // chains (a with one of b, c, and d after one of them), e alone; a wait on every
        // dependency (a -> d included) between chains.
        let n = plan(&m, Peer::Nimble, &m.options).unwrap();
        assert_eq!(n.streams(), 3);
        let s = streams(&m, &n);
        assert_eq!((s[0], s[1], s[5]), (-1, 0, 2));
        let deps = [(1, 2), (1, 3), (2, 4), (3, 4), (1, 4)];
        let cross: Vec<(String, String)> = deps
            .iter()
            .filter(|&&(u, v)| s[u] != s[v])
            .map(|&(u, v)| (m.nodes[NodeId::new(u)].name.clone(), m.nodes[NodeId::new(v)].name.clone()))
            .collect();
        let mut got = names(&m, &n);
        got.sort();
        let mut cross = cross;
        cross.sort();
        assert_eq!(got, cross);
        // Opara: b is a's first user, c is not; d is b's first user.
        let o = plan(&m, Peer::Opara, &m.options).unwrap();
        assert_eq!(streams(&m, &o), [-1, 0, 0, 1, 0, 2]);
        assert_eq!(names(&m, &o), w(&[("a", "c"), ("c", "d")]));
        // ORT: one stream per engine.
        let r = plan(&m, Peer::Ort, &m.options).unwrap();
        assert_eq!(streams(&m, &r), [-1, 0, 0, 0, 0, 1]);
        assert!(r.waits.is_empty());
    }

    #[test]
    fn every_peer_allocates_and_passes_the_checker() {
        let m = load_str(DIAMOND).unwrap();
        for peer in Peer::ALL {
            let c = allocate(&m, peer, &m.options, TaskLimits::from_options(&m.options)).unwrap();
            let check = crate::verify::check(&m, &c.document(&m).to_value());
            assert!(check.ok(), "{}: {:?}", peer.name(), check.violations);
            assert_eq!(c.report.map(|r| r.name), Some(peer.name()));
        }
    }

    #[test]
    fn a_dynamic_root_runs_every_peer_on_one_stream_unless_multi_stream_is_enabled() {
        let dynamic = DIAMOND.replace(r#""name": "diamond","#, r#""name": "diamond", "shape": "dynamic","#);
        let m = load_str(&dynamic).unwrap();
        for peer in Peer::ALL {
            let p = plan(&m, peer, &m.options).unwrap();
            assert_eq!(streams(&m, &p), [-1, 0, 0, 0, 0, 0], "{}", peer.name());
            assert!(p.waits.is_empty(), "{}", peer.name());
            let mut multi = m.options.clone();
            multi.dynamic_multi_stream = true;
            assert_eq!(plan(&m, peer, &multi).unwrap(), plan(&load_str(DIAMOND).unwrap(), peer, &multi).unwrap());
        }
    }
}
