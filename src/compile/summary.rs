//! GE's stream allocation summary (`CompiledGraphSummary::GetStreamAllocationSummary`,
//! ge-runtime-api.md §3): per graph, one [`LogicalStreamInfo`] per logical stream in ascending
//! id, GE's `ToStringInfo()` text, and a DOT rendering of the stream graph.
//!
//! Built as GE's `CollectStreamInfos` builds it: from the attributes a compile writes on the
//! nodes (`_logic_stream_id`, `stream_id`, attached ids, `_user_stream_label`,
//! `used_stream_num`) and the model's `_split_logic_stream_2_origin_logic_stream` map, so
//! the summary says what GE's own summary would say of our allocation.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde_json::{Value, json};

use super::Allocation;
use crate::bail;
use crate::error::Result;
use crate::graph::{AutoMultistreamMode, GraphId, Model, NodeId, Options, StreamId, SyncKind};

/// Model-level counts after a stage, as GE writes them in `BuildModelDefForStream`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModelCounts {
    pub logical_stream_num: u32,
    /// `stream_num`: physical streams, attached and inserted ones included.
    pub stream_num: u32,
    pub attached_stream_num: u32,
    pub event_num: u32,
    pub notify_num: u32,
}

impl ModelCounts {
    pub fn of(a: &Allocation) -> Self {
        let (event_num, notify_num) = match a.sync_kind {
            SyncKind::Event => (a.sync_count(), 0),
            SyncKind::Notify => (a.split_event_id_count(), a.sync_count()),
        };
        ModelCounts {
            logical_stream_num: a.logical_count(),
            stream_num: a.physical_count(),
            attached_stream_num: a.attached_count(),
            event_num,
            notify_num,
        }
    }
}

/// `"phys:logic,..."` in physical order.
pub fn split_map_string(split_to_logic: &[StreamId]) -> String {
    let parts: Vec<String> = split_to_logic.iter().enumerate().map(|(p, l)| format!("{p}:{}", l.0)).collect();
    parts.join(",")
}

/// Parses a `_split_logic_stream_2_origin_logic_stream` string back into the map (index =
/// physical id), as GE's summary reads it.
pub fn parse_split_map(s: &str) -> Result<Vec<StreamId>> {
    let mut out: Vec<Option<StreamId>> = Vec::new();
    for part in s.split(',').filter(|p| !p.is_empty()) {
        let Some((p, l)) = part.split_once(':') else {
            bail!(Attribute, "_split_logic_stream_2_origin_logic_stream: entry '{part}' is not 'phys:logic'");
        };
        let (Ok(p), Ok(l)) = (p.trim().parse::<u32>(), l.trim().parse::<u32>()) else {
            bail!(Attribute, "_split_logic_stream_2_origin_logic_stream: entry '{part}' is not two stream ids");
        };
        if out.len() <= p as usize {
            out.resize(p as usize + 1, None);
        }
        out[p as usize] = Some(StreamId(l));
    }
    Ok(out.into_iter().enumerate().map(|(p, l)| l.unwrap_or(StreamId(p as u32))).collect())
}

/// GE's `LogicalStreamAllocationInfo`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogicalStreamInfo {
    pub logical_stream_id: i64,
    /// `_user_stream_label` of the stream's nodes (the first one given), `""` when none.
    pub user_stream_label: String,
    /// Created by a custom stream pass (GE's `_custom_logical_stream_ids`).
    pub assigned_by_stream_pass: bool,
    /// Logical ids of the attached streams of the stream's nodes, ascending.
    pub attached_stream_ids: Vec<i64>,
    /// Distinct physical streams the logical stream became.
    pub physical_stream_num: usize,
    /// `used_stream_num` of HCCL nodes: the minimum per physical stream, summed.
    pub hccl_followed_stream_num: usize,
    /// The stream's nodes in execution order (an attached stream lists the nodes using it).
    pub nodes: Vec<NodeId>,
}

impl LogicalStreamInfo {
    /// GE's `ToStringInfo()`, byte for byte (ge-runtime-api.md §3.3): each attached id is
    /// followed by one space.
    pub fn to_string_info(&self) -> String {
        let mut s = format!(
            "logic_stream_id: {}, user_stream_label: {}, is_assigned_by_user_stream_pass: {}, attached_stream_ids: ",
            self.logical_stream_id, self.user_stream_label, self.assigned_by_stream_pass
        );
        for id in &self.attached_stream_ids {
            let _ = write!(s, "{id} ");
        }
        let _ = writeln!(
            s,
            ", physical_model_stream_num: {}, hccl_followed_stream_num: {}.",
            self.physical_stream_num, self.hccl_followed_stream_num
        );
        s
    }
}

/// The summary of one graph (GE: one sub-model).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GraphSummary {
    pub graph: GraphId,
    /// The graph's name (the model's name for the root).
    pub name: String,
    pub is_static: bool,
    /// Ascending logical id.
    pub streams: Vec<LogicalStreamInfo>,
    /// GE's `StreamGraph::ToDotString()` counterpart.
    pub stream_graph: String,
}

/// GE's `StreamAllocationSummary`, plus the model counts `CompiledGraphSummary` carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamAllocationSummary {
    pub model: String,
    /// The name of the session stage it was taken at (`driver::SessionStage::as_str`).
    pub stage: &'static str,
    pub counts: ModelCounts,
    /// Root first, then subgraphs in GE's `GetAllSubgraphs` order.
    pub graphs: Vec<GraphSummary>,
}

/// What the summary reads of one node: GE's node attributes.
struct NodeAttrsView {
    logic: Option<StreamId>,
    stream: Option<StreamId>,
    attached_physical: Vec<StreamId>,
}

impl StreamAllocationSummary {
    /// The summary of allocation `a` of `model`, taken at `stage`.
    pub fn new(model: &Model, options: &Options, a: &Allocation, stage: &'static str) -> Result<Self> {
        let split_map = parse_split_map(&split_map_string(&a.split_to_logic))?;
        let views: Vec<NodeAttrsView> = model
            .nodes
            .ids()
            .map(|n| NodeAttrsView {
                logic: a.logical_stream[n],
                stream: a.stream[n],
                attached_physical: a.attached[n].clone(),
            })
            .collect();
        let custom = custom_streams(model, options, &views)?;
        let mut graphs = Vec::new();
        for g in model.all_graphs() {
            let streams = if model.is_dynamic(g) {
                collect_unknown_shape(model, g, &views)
            } else {
                collect_known_shape(model, g, &views, &split_map, &custom)
            };
            let stream_graph = stream_graph_dot(model, a, g, &streams, &split_map)?;
            graphs.push(GraphSummary {
                graph: g,
                name: model.graphs[g].name.clone(),
                is_static: !model.is_dynamic(g),
                streams,
                stream_graph,
            });
        }
        Ok(StreamAllocationSummary { model: model.name.clone(), stage, counts: ModelCounts::of(a), graphs })
    }

    /// All graphs' `ToStringInfo()` lines, each graph under a `[name]` header.
    pub fn to_text(&self) -> String {
        let c = &self.counts;
        let mut s = format!(
            "model: {}, stage: {}, stream_num: {}, event_num: {}, notify_num: {}\n",
            self.model, self.stage, c.stream_num, c.event_num, c.notify_num
        );
        for g in &self.graphs {
            let _ = writeln!(s, "[{}]", g.name);
            for i in &g.streams {
                s.push_str(&i.to_string_info());
            }
        }
        s
    }

    /// The summary as JSON: per graph the entries (node names) and GE's flattened lists
    /// (`GEStreamAllocationSummaryGet*`).
    pub fn to_json(&self, model: &Model) -> Value {
        let graphs: Vec<Value> = self
            .graphs
            .iter()
            .map(|g| {
                let entries: Vec<Value> = g
                    .streams
                    .iter()
                    .map(|i| {
                        json!({
                            "logical_stream_id": i.logical_stream_id,
                            "user_stream_label": i.user_stream_label,
                            "is_assigned_by_stream_pass": i.assigned_by_stream_pass,
                            "attached_stream_ids": i.attached_stream_ids,
                            "physical_stream_num": i.physical_stream_num,
                            "hccl_followed_stream_num": i.hccl_followed_stream_num,
                            "nodes": i.nodes.iter().map(|&n| model.nodes[n].name.as_str()).collect::<Vec<_>>(),
                            "string_info": i.to_string_info(),
                        })
                    })
                    .collect();
                json!({
                    "name": g.name,
                    "static": g.is_static,
                    "streams": entries,
                    "logical_stream_ids": g.streams.iter().map(|i| i.logical_stream_id).collect::<Vec<_>>(),
                    "user_stream_labels": g.streams.iter().map(|i| i.user_stream_label.as_str()).collect::<Vec<_>>(),
                    "is_assigned_by_stream_pass": g.streams.iter().map(|i| i.assigned_by_stream_pass).collect::<Vec<_>>(),
                    "attached_stream_ids": g.streams.iter().map(|i| i.attached_stream_ids.clone()).collect::<Vec<_>>(),
                    "physical_stream_nums": g.streams.iter().map(|i| i.physical_stream_num).collect::<Vec<_>>(),
                    "hccl_followed_stream_nums": g.streams.iter().map(|i| i.hccl_followed_stream_num).collect::<Vec<_>>(),
                })
            })
            .collect();
        json!({
            "model": self.model,
            "stage": self.stage,
            "stream_num": self.counts.stream_num,
            "event_num": self.counts.event_num,
            "notify_num": self.counts.notify_num,
            "graphs": graphs,
        })
    }

    /// Every graph's stream graph in one DOT document (one cluster per graph).
    pub fn to_dot(&self) -> String {
        let mut s = format!("digraph {} {{\n  rankdir=LR;\n  node [shape=box];\n", dot_quote(&self.model));
        for (k, g) in self.graphs.iter().enumerate() {
            let _ = writeln!(s, "  subgraph cluster_{k} {{\n    label={};", dot_quote(&g.name));
            for line in g
                .stream_graph
                .lines()
                .filter(|l| l.starts_with("  ") && !l.contains("rankdir") && !l.contains("node ["))
            {
                // Stream ids follow a space; a quote inside a label is escaped, so it never does.
                let _ = writeln!(s, "  {}", line.replace(" \"s", &format!(" \"g{k}_s")));
            }
            s.push_str("  }\n");
        }
        s.push_str("}\n");
        s
    }
}

fn user_label(model: &Model, n: NodeId) -> Option<&str> {
    model.nodes[n].attrs.user_stream_label.as_deref().filter(|l| !l.is_empty())
}

/// Entry under construction.
#[derive(Default)]
struct Acc {
    label: Option<String>,
    attached: BTreeSet<i64>,
    physical: BTreeSet<u32>,
    nodes: Vec<NodeId>,
    /// `used_stream_num` minimum per physical stream.
    hccl: BTreeMap<u32, i64>,
}

fn finish(acc: BTreeMap<i64, Acc>, custom: &BTreeSet<i64>) -> Vec<LogicalStreamInfo> {
    acc.into_iter()
        .map(|(id, a)| LogicalStreamInfo {
            logical_stream_id: id,
            user_stream_label: a.label.unwrap_or_default(),
            assigned_by_stream_pass: custom.contains(&id),
            attached_stream_ids: a.attached.into_iter().collect(),
            physical_stream_num: a.physical.len(),
            hccl_followed_stream_num: a.hccl.values().map(|&v| v.max(0) as usize).sum(),
            nodes: a.nodes,
        })
        .collect()
}

/// Known-shape branch: `_logic_stream_id` groups the nodes; physical ids are counted per
/// logical stream, attached physical ids map back through the split map.
fn collect_known_shape(
    model: &Model,
    g: GraphId,
    views: &[NodeAttrsView],
    split_map: &[StreamId],
    custom: &BTreeSet<i64>,
) -> Vec<LogicalStreamInfo> {
    let to_logic = |p: StreamId| split_map.get(p.index()).copied().unwrap_or(p);
    let mut acc: BTreeMap<i64, Acc> = BTreeMap::new();
    for &n in &model.graphs[g].order {
        let v = &views[n.index()];
        let Some(l) = v.logic else { continue };
        let e = add_node(&mut acc, i64::from(l.0), model, n);
        if let Some(p) = v.stream {
            e.physical.insert(p.0);
            if let Some(u) = model.nodes[n].ge_attrs.int("used_stream_num") {
                e.hccl.entry(p.0).and_modify(|x| *x = (*x).min(u)).or_insert(u);
            }
        }
        for &pa in &v.attached_physical {
            let la = i64::from(to_logic(pa).0);
            e_attach(&mut acc, i64::from(l.0), la, pa.0, n);
        }
    }
    finish(acc, custom)
}

/// The entry of logical stream `id` with node `n` added; its label is the first user label
/// among its nodes.
fn add_node<'a>(acc: &'a mut BTreeMap<i64, Acc>, id: i64, model: &Model, n: NodeId) -> &'a mut Acc {
    let e = acc.entry(id).or_default();
    e.nodes.push(n);
    if e.label.is_none() {
        e.label = user_label(model, n).map(str::to_string);
    }
    e
}

fn e_attach(acc: &mut BTreeMap<i64, Acc>, main: i64, attached: i64, physical: u32, n: NodeId) {
    acc.entry(main).or_default().attached.insert(attached);
    let a = acc.entry(attached).or_default();
    a.physical.insert(physical);
    if a.nodes.last() != Some(&n) {
        a.nodes.push(n);
    }
}

/// Unknown-shape branch: the node's `stream_id` is its logical id, one physical stream each.
fn collect_unknown_shape(model: &Model, g: GraphId, views: &[NodeAttrsView]) -> Vec<LogicalStreamInfo> {
    let mut acc: BTreeMap<i64, Acc> = BTreeMap::new();
    for &n in &model.graphs[g].order {
        let v = &views[n.index()];
        let Some(s) = v.stream else { continue };
        add_node(&mut acc, i64::from(s.0), model, n).physical.insert(s.0);
        for &a in &v.attached_physical {
            e_attach(&mut acc, i64::from(s.0), i64::from(a.0), a.0, n);
        }
    }
    let mut out = finish(acc, &BTreeSet::new());
    for i in &mut out {
        i.physical_stream_num = 1;
    }
    out
}

/// Logical streams the MiniDAG custom pass created (GE records them in
/// `_custom_logical_stream_ids`). The pass moves every root node it covers (tasks > 0, on a
/// stream, unlabelled, not on an independent engine) to streams it numbers itself, so those
/// nodes' streams are exactly its streams.
fn custom_streams(model: &Model, options: &Options, views: &[NodeAttrsView]) -> Result<BTreeSet<i64>> {
    let dag = matches!(
        model.auto_multistream_mode(options)?,
        AutoMultistreamMode::LoadBalance(_)
            | AutoMultistreamMode::MainStream(_)
            | AutoMultistreamMode::WeightedLoadBalance(_)
    );
    if !dag || options.enable_single_stream || model.is_dynamic(GraphId::ROOT) {
        return Ok(BTreeSet::new());
    }
    Ok(model.graphs[GraphId::ROOT]
        .order
        .iter()
        .filter(|&&n| {
            let node = &model.nodes[n];
            node.tasks > 0
                && node.attrs.stream_label.is_none()
                && node.attrs.user_stream_label.is_none()
                && !model.engines[node.engine].independent
        })
        .filter_map(|&n| views[n.index()].logic.map(|s| i64::from(s.0)))
        .collect())
}

pub(crate) fn dot_quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// The stream graph of graph `g`: one box per logical stream (its physical ids and node count),
/// one solid edge per pair of streams a sync orders (labelled with the number of syncs; a loop
/// for the split's syncs inside one logical stream), one dashed edge per stream activation.
fn stream_graph_dot(
    model: &Model,
    a: &Allocation,
    g: GraphId,
    streams: &[LogicalStreamInfo],
    split_map: &[StreamId],
) -> Result<String> {
    let to_logic = |p: StreamId| split_map.get(p.index()).copied().unwrap_or(p).0;
    let dynamic = model.is_dynamic(g);
    let stream_of = |end: &super::SyncEnd| -> Option<u32> {
        match end.attached {
            Some(p) => Some(if dynamic { p.0 } else { to_logic(p) }),
            None if dynamic => a.stream[end.node].map(|s| s.0),
            None => a.logical_stream[end.node].map(|s| s.0),
        }
    };
    let in_graph = |n: NodeId| model.nodes[n].graph == g;
    let mut edges: BTreeMap<(u32, u32), usize> = BTreeMap::new();
    for p in a.syncs.iter().chain(&a.split_events) {
        if !in_graph(p.from.node) && !in_graph(p.to.node) {
            continue;
        }
        if let (Some(f), Some(t)) = (stream_of(&p.from), stream_of(&p.to)) {
            *edges.entry((f, t)).or_default() += 1;
        }
    }
    let mut activations: BTreeSet<(u32, u32)> = BTreeSet::new();
    for (n, list) in &a.activations {
        if !in_graph(*n) {
            continue;
        }
        if let Some(f) = a.logical_stream[*n] {
            for &p in list {
                activations.insert((f.0, to_logic(p)));
            }
        }
    }
    let mut s = format!("digraph {} {{\n  rankdir=LR;\n  node [shape=box];\n", dot_quote(&model.graphs[g].name));
    let mut declared: BTreeSet<u32> = BTreeSet::new();
    for i in streams {
        let id = i.logical_stream_id as u32;
        declared.insert(id);
        let phys: Vec<String> = if dynamic {
            vec![id.to_string()]
        } else {
            split_map.iter().enumerate().filter(|(_, l)| l.0 == id).map(|(p, _)| p.to_string()).collect()
        };
        let mut label = format!("logical stream {id}\\nphysical {}\\n{} node(s)", phys.join(","), i.nodes.len());
        if !i.user_stream_label.is_empty() {
            let _ = write!(label, "\\nlabel {}", i.user_stream_label.replace('\\', "\\\\").replace('"', "\\\""));
        }
        let _ = writeln!(s, "  \"s{id}\" [label=\"{label}\"];");
    }
    for &id in edges.keys().flat_map(|(f, t)| [f, t]).chain(activations.iter().flat_map(|(f, t)| [f, t])) {
        if declared.insert(id) {
            let _ = writeln!(s, "  \"s{id}\" [label=\"logical stream {id}\\n(other graph)\", style=dotted];");
        }
    }
    let kind = if a.sync_kind == crate::graph::SyncKind::Notify { "sync" } else { "event" };
    for ((f, t), k) in &edges {
        let _ = writeln!(s, "  \"s{f}\" -> \"s{t}\" [label=\"{k} {kind}(s)\"];");
    }
    for (f, t) in &activations {
        let _ = writeln!(s, "  \"s{f}\" -> \"s{t}\" [style=dashed, label=\"activates\"];");
    }
    s.push_str("}\n");
    Ok(s)
}
