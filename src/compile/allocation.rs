//! The result of the pipeline and its allocation JSON v1 form (docs/allocation-json.md).

use std::borrow::Cow;

use serde_json::{Map, Value, json};

use crate::error::Error;
use crate::graph::{GraphId, IdVec, Model, NodeId, StreamId, SyncKind};

pub const ALLOCATION_FORMAT: &str = "stream-allocation";
pub const ALLOCATION_VERSION: u64 = 1;

/// One end of a sync: a node on its main stream, or on one of its attached streams.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SyncEnd {
    pub node: NodeId,
    /// `Some(s)`: the node's attached stream `s`.
    pub attached: Option<StreamId>,
}

impl SyncEnd {
    pub fn main(node: NodeId) -> Self {
        SyncEnd { node, attached: None }
    }
}

/// One record/wait pair: record `id` on `from`'s stream right after `from`; `to`'s stream
/// waits for it right before `to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SyncPair {
    pub id: u32,
    pub from: SyncEnd,
    pub to: SyncEnd,
}

/// A node the pipeline inserted (Send, Recv, SendNotify, RecvNotify, StreamActive).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InsertedNode {
    /// How the node is named; [`InsertedNode::name`] writes the name out.
    pub naming: Naming,
    /// Inserted nodes are GE's own operator types, so the type is never owned.
    pub op_type: &'static str,
    pub graph: GraphId,
    /// Physical stream it runs on.
    pub stream: StreamId,
    /// Logical stream it was created for.
    pub logical_stream: StreamId,
    /// The node it is placed next to.
    pub anchor: NodeId,
    /// `true`: right before the anchor (Recv); `false`: right after it (Send).
    pub before: bool,
    /// `event_id` / `notify_id` for sync nodes.
    pub sync_id: Option<u32>,
}

/// The name of an inserted node. Sync nodes are named by GE's rule from their type and id,
/// so they keep only what varies and write the name out on demand: a dense graph inserts
/// millions of them, and owning a string each was a large share of the pipeline's time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Naming {
    /// A name of its own.
    Given(String),
    /// `<graph>_<Send|Recv>[_Notify]_<sync_id>`, the tag following the node's type, then
    /// `_Reuse_<reuse>` when the base name was taken before.
    Sync { graph: GraphId, reuse: Option<u32> },
}

impl InsertedNode {
    /// The node's name (GE's `Send`/`Recv` naming for sync nodes).
    pub fn name<'a>(&'a self, model: &Model) -> Cow<'a, str> {
        match &self.naming {
            Naming::Given(name) => Cow::Borrowed(name),
            Naming::Sync { graph, reuse } => Cow::Owned(sync_node_name(
                &model.graphs[*graph].name,
                sync_tag(self.op_type),
                self.sync_id.unwrap_or(0),
                *reuse,
            )),
        }
    }
}

/// The name tag of a sync node type.
pub(crate) fn sync_tag(op_type: &str) -> &'static str {
    match op_type {
        "SendNotify" => "_Send_Notify_",
        "RecvNotify" => "_Recv_Notify_",
        "Recv" => "_Recv_",
        _ => "_Send_",
    }
}

/// `<graph><tag><id>`, then `_Reuse_<reuse>`: written digit by digit rather than through
/// `format!`, which dominated name-heavy outputs.
pub(crate) fn sync_node_name(graph: &str, tag: &str, id: u32, reuse: Option<u32>) -> String {
    let mut name = String::with_capacity(graph.len() + tag.len() + 20);
    name.push_str(graph);
    name.push_str(tag);
    push_decimal(&mut name, id);
    if let Some(reuse) = reuse {
        name.push_str("_Reuse_");
        push_decimal(&mut name, reuse);
    }
    name
}

fn push_decimal(s: &mut String, mut v: u32) {
    let mut digits = [0u8; 10];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    s.push_str(std::str::from_utf8(&digits[i..]).expect("ASCII digits"));
}

/// How far the pipeline ran.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    /// Logical stream ids only.
    Logical,
    /// Logical streams plus synchronisation.
    Sync,
    /// Physical split and activation (and Send/Recv generation).
    Split,
    /// Everything.
    #[default]
    All,
}

impl Stage {
    pub fn parse(s: &str) -> Option<Stage> {
        match s {
            "logical" => Some(Stage::Logical),
            "sync" => Some(Stage::Sync),
            "split" => Some(Stage::Split),
            "all" => Some(Stage::All),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Logical => "logical",
            Stage::Sync => "sync",
            Stage::Split => "split",
            Stage::All => "all",
        }
    }
}

/// How far a staged run has gone: GE's `ModelBuilder` hands control back to the host between
/// these stages (ge-compiler.md §1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum SessionStage {
    /// Built, nothing assigned.
    New,
    Logical,
    Sync,
    Split,
    /// Send/Recv generated: the allocation is complete.
    Generated,
}

impl SessionStage {
    pub fn as_str(self) -> &'static str {
        match self {
            SessionStage::New => "new",
            SessionStage::Logical => "logical",
            SessionStage::Sync => "sync",
            SessionStage::Split => "split",
            SessionStage::Generated => "generated",
        }
    }
}

/// Everything the pipeline decided for one model.
#[derive(Clone, Debug, PartialEq)]
pub struct Allocation {
    /// `static-multi`, `static-single`, `dynamic-single`, `dynamic-multi` or a policy name.
    pub mode: String,
    pub stage: Stage,
    /// Logical stream per node (`None`: runs on no stream).
    pub logical_stream: IdVec<NodeId, Option<StreamId>>,
    pub logical_count: u32,
    /// Physical stream per node.
    pub stream: IdVec<NodeId, Option<StreamId>>,
    pub physical_count: u32,
    /// Attached stream ids per node.
    pub attached: IdVec<NodeId, Vec<StreamId>>,
    pub attached_count: u32,
    pub sync_kind: SyncKind,
    /// Sync pairs, ordered by id then position.
    pub syncs: Vec<SyncPair>,
    /// Distinct sync ids (`0..sync_count`).
    pub sync_count: u32,
    /// Syncs the physical split added. With `sync_kind` = event they are also the last entries
    /// of `syncs` (ids continue after the logical ones); with notify they are events, a kind of
    /// their own (GE: split events are always events), kept in `split_events` with GE's event
    /// ids `0..split_event_count`. Allocation JSON lists them in `syncs` all the same, after the
    /// notifies (see [`Allocation::document_syncs`]).
    pub split_event_count: u32,
    /// The split's event pairs in notify mode (empty in event mode, see `split_event_count`).
    pub split_events: Vec<SyncPair>,
    /// Nodes that activate streams, and the physical streams each activates.
    pub activations: Vec<(NodeId, Vec<StreamId>)>,
    /// Inserted StreamActive nodes (index into `inserted`) and the physical streams each activates.
    pub inserted_activations: Vec<(usize, Vec<StreamId>)>,
    pub huge_streams: Vec<StreamId>,
    /// Logical origin of every physical stream (index = physical id).
    pub split_to_logic: Vec<StreamId>,
    pub inserted: Vec<InsertedNode>,
}

impl Allocation {
    /// A logical-only result: physical streams equal logical ones.
    pub fn from_logical(
        mode: impl Into<String>,
        sync_kind: SyncKind,
        logical_stream: IdVec<NodeId, Option<StreamId>>,
        logical_count: u32,
        attached: IdVec<NodeId, Vec<StreamId>>,
        attached_count: u32,
    ) -> Self {
        Allocation {
            mode: mode.into(),
            stage: Stage::Logical,
            stream: logical_stream.clone(),
            logical_stream,
            logical_count,
            physical_count: logical_count,
            attached,
            attached_count,
            sync_kind,
            syncs: Vec::new(),
            sync_count: 0,
            split_event_count: 0,
            split_events: Vec::new(),
            activations: Vec::new(),
            inserted_activations: Vec::new(),
            huge_streams: Vec::new(),
            split_to_logic: (0..logical_count).map(StreamId).collect(),
            inserted: Vec::new(),
        }
    }

    /// Nodes per physical stream (index = stream id), for summaries.
    pub fn nodes_per_stream(&self) -> Vec<usize> {
        let mut counts = vec![0usize; self.physical_count as usize];
        for s in self.stream.iter().flatten() {
            if let Some(c) = counts.get_mut(s.index()) {
                *c += 1;
            }
        }
        counts
    }

    fn sync_end_name(model: &Model, end: &SyncEnd, attached: &IdVec<NodeId, Vec<StreamId>>) -> String {
        let name = &model.nodes[end.node].name;
        match end.attached {
            None => name.clone(),
            Some(s) if attached[end.node].len() > 1 => format!("{name}@attached:{s}"),
            Some(_) => format!("{name}@attached"),
        }
    }

    /// Every record/wait pair as allocation JSON's `syncs` lists it, one entry per Send/Recv
    /// pair whatever its kind, with the document's id: `syncs` as they are, then, in notify
    /// mode, the split's events numbered after the notifies (`sync_count + k`) with GE's event
    /// id `k` alongside. A reader orders nodes by `syncs` and stream order alone.
    pub fn document_syncs(&self) -> impl Iterator<Item = (SyncPair, Option<u32>)> + '_ {
        let base = self.sync_count;
        self.syncs.iter().map(|p| (*p, None)).chain(
            self.split_events.iter().map(move |p| (SyncPair { id: base + p.id, from: p.from, to: p.to }, Some(p.id))),
        )
    }

    /// Distinct ids of [`Allocation::document_syncs`] (`events.count`): in notify mode the
    /// notifies and the split's events together.
    pub fn document_sync_count(&self) -> u32 {
        match self.sync_kind {
            SyncKind::Notify => self.sync_count + self.split_event_count,
            SyncKind::Event => self.sync_count,
        }
    }

    /// The allocation JSON document.
    pub fn to_json(&self, model: &Model) -> Value {
        let stream_value = |s: Option<StreamId>| s.map_or(json!(-1), |s| json!(s.0));
        let doc_syncs: Vec<(SyncPair, Option<u32>)> = self.document_syncs().collect();
        let mut sends: IdVec<NodeId, Vec<u32>> = IdVec::filled(model.nodes.len(), Vec::new());
        let mut recvs: IdVec<NodeId, Vec<u32>> = IdVec::filled(model.nodes.len(), Vec::new());
        for (p, _) in &doc_syncs {
            sends[p.from.node].push(p.id);
            recvs[p.to.node].push(p.id);
        }
        let mut before: IdVec<NodeId, Vec<&InsertedNode>> = IdVec::filled(model.nodes.len(), Vec::new());
        let mut after: IdVec<NodeId, Vec<&InsertedNode>> = IdVec::filled(model.nodes.len(), Vec::new());
        for ins in &self.inserted {
            if ins.before { before[ins.anchor].push(ins) } else { after[ins.anchor].push(ins) }
        }
        let inserted_json = |ins: &InsertedNode| {
            let mut m = Map::new();
            m.insert("name".into(), json!(ins.name(model)));
            m.insert("graph".into(), json!(model.graph_label(ins.graph)));
            m.insert("logical_stream".into(), json!(ins.logical_stream.0));
            m.insert("stream".into(), json!(ins.stream.0));
            m.insert("type".into(), json!(ins.op_type));
            m.insert("inserted".into(), json!(true));
            if let Some(id) = ins.sync_id {
                let key = if ins.op_type.contains("Notify") { "notify_id" } else { "event_id" };
                m.insert(key.into(), json!(id));
            }
            Value::Object(m)
        };
        let mut nodes = Vec::with_capacity(model.nodes.len() + self.inserted.len());
        for n in model.all_nodes() {
            for ins in &before[n] {
                nodes.push(inserted_json(ins));
            }
            let node = &model.nodes[n];
            let mut m = Map::new();
            m.insert("name".into(), json!(node.name));
            m.insert("graph".into(), json!(model.graph_label(node.graph)));
            m.insert("logical_stream".into(), stream_value(self.logical_stream[n]));
            m.insert("stream".into(), stream_value(self.stream[n]));
            m.insert("type".into(), json!(node.op_type));
            if !self.attached[n].is_empty() {
                m.insert("attached_streams".into(), json!(self.attached[n].iter().map(|s| s.0).collect::<Vec<_>>()));
            }
            if !sends[n].is_empty() {
                m.insert("send".into(), json!(sends[n]));
            }
            if !recvs[n].is_empty() {
                m.insert("recv".into(), json!(recvs[n]));
            }
            nodes.push(Value::Object(m));
            for ins in &after[n] {
                nodes.push(inserted_json(ins));
            }
        }
        let pair_json = |(p, event_id): &(SyncPair, Option<u32>)| {
            let mut m = Map::new();
            m.insert("id".into(), json!(p.id));
            m.insert("from".into(), json!(Self::sync_end_name(model, &p.from, &self.attached)));
            m.insert("to".into(), json!(Self::sync_end_name(model, &p.to, &self.attached)));
            // Names are unique per graph only: an end in a subgraph says which graph.
            for (key, end) in [("from_graph", &p.from), ("to_graph", &p.to)] {
                let g = model.nodes[end.node].graph;
                if g != GraphId::ROOT {
                    m.insert(key.into(), json!(model.graph_label(g)));
                }
            }
            if let Some(e) = event_id {
                m.insert("kind".into(), json!("event"));
                m.insert("event_id".into(), json!(e));
            }
            Value::Object(m)
        };
        let syncs: Vec<Value> = doc_syncs.iter().map(pair_json).collect();
        // An extra view in GE's numbering, not read for ordering: in notify mode the split's
        // events with their event ids (the same pairs are in `syncs`), else empty.
        let split_events: Vec<Value> = self
            .split_events
            .iter()
            .map(|p| {
                json!({
                    "id": p.id,
                    "from": Self::sync_end_name(model, &p.from, &self.attached),
                    "to": Self::sync_end_name(model, &p.to, &self.attached),
                })
            })
            .collect();
        let mut activations: Vec<Value> = self
            .activations
            .iter()
            .map(|(n, s)| json!({"node": model.nodes[*n].name, "streams": s.iter().map(|s| s.0).collect::<Vec<_>>()}))
            .collect();
        activations.extend(self.inserted_activations.iter().filter_map(|(i, s)| {
            let ins = self.inserted.get(*i)?;
            Some(json!({"node": ins.name(model), "streams": s.iter().map(|s| s.0).collect::<Vec<_>>()}))
        }));
        let attached: Vec<Value> = model
            .all_nodes()
            .into_iter()
            .filter(|&n| !self.attached[n].is_empty())
            .map(|n| json!({"node": model.nodes[n].name, "streams": self.attached[n].iter().map(|s| s.0).collect::<Vec<_>>()}))
            .collect();
        let split: Map<String, Value> =
            self.split_to_logic.iter().enumerate().map(|(p, l)| (p.to_string(), json!(l.0))).collect();
        let mut doc = json!({
            "format": ALLOCATION_FORMAT,
            "version": ALLOCATION_VERSION,
            "graph": model.name,
            "mode": self.mode,
            "stage": self.stage.as_str(),
            "streams": {
                "logical": self.logical_count,
                "physical": self.physical_count,
                "attached": self.attached_count,
                "huge": self.huge_streams.iter().map(|s| s.0).collect::<Vec<_>>(),
                "split_to_logic": split,
            },
            "events": {
                "kind": self.sync_kind.as_str(),
                "count": self.document_sync_count(),
                "split_count": self.split_event_count,
            },
            "nodes": nodes,
            "syncs": syncs,
            "split_events": split_events,
            "activations": activations,
            "attached": attached,
        });
        crate::memory::add_json_section(model, self, &mut doc);
        doc
    }

    /// Pretty allocation JSON text, newline-terminated. Byte-identical for identical results.
    pub fn to_json_string(&self, model: &Model) -> String {
        let mut s = serde_json::to_string_pretty(&self.to_json(model)).expect("JSON values always serialise");
        s.push('\n');
        s
    }
}

/// The error document of allocation JSON.
pub fn error_json(e: &Error) -> Value {
    json!({
        "format": ALLOCATION_FORMAT,
        "version": ALLOCATION_VERSION,
        "error": {"code": e.code(), "message": e.message},
    })
}

pub fn error_json_string(e: &Error) -> String {
    let mut s = serde_json::to_string_pretty(&error_json(e)).expect("JSON values always serialise");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::{sync_node_name, sync_tag};

    #[test]
    fn sync_names_follow_ge() {
        for (id, reuse) in [(0, None), (7, None), (10, Some(0)), (u32::MAX, Some(12)), (1_000_000, None)] {
            let expected = match reuse {
                None => format!("g_Send_{id}"),
                Some(k) => format!("g_Send_{id}_Reuse_{k}"),
            };
            assert_eq!(sync_node_name("g", sync_tag("Send"), id, reuse), expected);
        }
        assert_eq!(sync_node_name("m", sync_tag("RecvNotify"), 3, Some(1)), "m_Recv_Notify_3_Reuse_1");
        assert_eq!(sync_node_name("m", sync_tag("SendNotify"), 3, None), "m_Send_Notify_3");
        assert_eq!(sync_node_name("m", sync_tag("Recv"), 42, None), "m_Recv_42");
    }
}
