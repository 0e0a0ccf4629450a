//! The result of the pipeline and its allocation JSON v1 form (docs/allocation-json.md).

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::{Value, json};

use crate::error::Error;
use crate::graph::csr::Csr;
use crate::graph::{EventId, GraphId, IdVec, InsertedId, Model, NodeId, StreamId, SyncKind};

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
    pub id: EventId,
    pub from: SyncEnd,
    pub to: SyncEnd,
}

/// What an inserted node is: GE's own operator types, the only ones the pipeline creates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum InsertedKind {
    /// Event record after its anchor.
    Send,
    /// Event wait before its anchor.
    Recv,
    /// Notify record after its anchor.
    SendNotify,
    /// Notify wait before its anchor.
    RecvNotify,
    /// Activates the streams of a `StreamSwitch` branch.
    StreamActive,
}

impl InsertedKind {
    /// GE's operator type.
    pub fn as_str(self) -> &'static str {
        match self {
            InsertedKind::Send => "Send",
            InsertedKind::Recv => "Recv",
            InsertedKind::SendNotify => "SendNotify",
            InsertedKind::RecvNotify => "RecvNotify",
            InsertedKind::StreamActive => "StreamActive",
        }
    }

    /// The record and wait kinds of a sync kind.
    pub fn sync_pair(kind: SyncKind) -> (InsertedKind, InsertedKind) {
        match kind {
            SyncKind::Event => (InsertedKind::Send, InsertedKind::Recv),
            SyncKind::Notify => (InsertedKind::SendNotify, InsertedKind::RecvNotify),
        }
    }

    /// A record or a wait (not a `StreamActive`).
    pub fn is_sync(self) -> bool {
        self != InsertedKind::StreamActive
    }

    pub fn is_notify(self) -> bool {
        matches!(self, InsertedKind::SendNotify | InsertedKind::RecvNotify)
    }

    /// Run-time tasks of a sync node: a wait is GE's event-wait plus its reset (2), a record 1.
    /// `None` for a `StreamActive`, whose tasks the split charges by what it activates.
    pub fn sync_tasks(self) -> Option<u64> {
        match self {
            InsertedKind::Recv | InsertedKind::RecvNotify => Some(2),
            InsertedKind::Send | InsertedKind::SendNotify => Some(1),
            InsertedKind::StreamActive => None,
        }
    }

    /// The tag of GE's sync node names.
    fn name_tag(self) -> &'static str {
        match self {
            InsertedKind::SendNotify => "_Send_Notify_",
            InsertedKind::RecvNotify => "_Recv_Notify_",
            InsertedKind::Recv => "_Recv_",
            InsertedKind::Send | InsertedKind::StreamActive => "_Send_",
        }
    }
}

/// A node the pipeline inserted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InsertedNode {
    /// How the node is named; [`InsertedNode::name`] writes the name out.
    pub naming: Naming,
    pub kind: InsertedKind,
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
    pub sync_id: Option<EventId>,
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
                self.kind,
                self.sync_id.unwrap_or_default(),
                *reuse,
            )),
        }
    }

    /// GE's operator type.
    pub fn op_type(&self) -> &'static str {
        self.kind.as_str()
    }
}

/// `<graph><tag><id>`, then `_Reuse_<reuse>`: written digit by digit rather than through
/// `format!`, which dominated name-heavy outputs.
pub(crate) fn sync_node_name(graph: &str, kind: InsertedKind, id: EventId, reuse: Option<u32>) -> String {
    let tag = kind.name_tag();
    let mut name = String::with_capacity(graph.len() + tag.len() + 20);
    name.push_str(graph);
    name.push_str(tag);
    push_decimal(&mut name, id.0);
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

/// Everything the pipeline decided for one model.
///
/// The fields are written only by the compile stages (logical assignment, sync insertion, the
/// split and activation): everything else reads them through the accessors, so an
/// allocation always is what some stage transition produced. Counts that follow from the
/// lists are derived from them rather than stored beside them.
#[derive(Clone, Debug, PartialEq)]
pub struct Allocation {
    /// `static-multi`, `static-single`, `dynamic-single`, `dynamic-multi` or a policy name.
    pub(in crate::compile) mode: String,
    pub(in crate::compile) stage: Stage,
    /// Logical stream per node (`None`: runs on no stream).
    pub(in crate::compile) logical_stream: IdVec<NodeId, Option<StreamId>>,
    pub(in crate::compile) logical_count: u32,
    /// Physical stream per node.
    pub(in crate::compile) stream: IdVec<NodeId, Option<StreamId>>,
    /// Attached stream ids per node.
    pub(in crate::compile) attached: IdVec<NodeId, Vec<StreamId>>,
    pub(in crate::compile) attached_count: u32,
    pub(in crate::compile) sync_kind: SyncKind,
    /// Sync pairs, ordered by id then position; in event mode the split's own come after the
    /// sync stage's, whatever their ids (they may share them, [`Self::split_ids_reused_by_lifetime`]).
    pub(in crate::compile) syncs: Vec<SyncPair>,
    /// Where the split's own pairs start in `syncs` (event mode; `None` before the split).
    pub(in crate::compile) split_syncs_from: Option<usize>,
    /// The split's event pairs in notify mode (empty in event mode, where they are the last
    /// entries of `syncs`, ids continuing after the logical ones). GE's split events are
    /// always events, with ids of their own; allocation JSON lists them in `syncs` all the
    /// same, after the notifies (see [`Allocation::document_syncs`]).
    pub(in crate::compile) split_events: Vec<SyncPair>,
    /// Nodes that activate streams, and the physical streams each activates.
    pub(in crate::compile) activations: Vec<(NodeId, Vec<StreamId>)>,
    /// Inserted StreamActive nodes and the physical streams each activates.
    pub(in crate::compile) inserted_activations: Vec<(InsertedId, Vec<StreamId>)>,
    pub(in crate::compile) huge_streams: Vec<StreamId>,
    /// Logical origin of every physical stream (index = physical id).
    pub(in crate::compile) split_to_logic: Vec<StreamId>,
    pub(in crate::compile) inserted: IdVec<InsertedId, InsertedNode>,
    /// Execution order of the model's nodes, chosen after the logical assignment (empty: GE's
    /// `GetAllNodes` order, [`Model::all_nodes`]). See [`Allocation::order`].
    pub(in crate::compile) order: Vec<NodeId>,
    /// Sync ends that are an inserted Send/Recv node rather than the node beside it, by
    /// (position in [`Allocation::document_syncs`], `to` side): where the split puts a node's
    /// own waits on an earlier piece than the node, or its own records on a later one, because
    /// the node with all its syncs does not fit in one piece (GE cuts between Send/Recv nodes
    /// too). Almost always empty, so it lives beside the pairs rather than in every end.
    pub(in crate::compile) end_via: BTreeMap<(u32, bool), InsertedId>,
    /// The sync stage numbered the ids by lifetime (`ReuseEventsByLifetime`: `event_reuse=lifetime`,
    /// or a policy's fallback when one id per sync exceeds `max_events`): an id may serve several
    /// pairs whose lifetimes do not overlap. Allocation JSON's `events.reuse`.
    pub(in crate::compile) lifetime_ids: bool,
    /// The split's events share ids by lifetime, with each other or with the sync stage's ids
    /// (where an id each would exceed the policy's event budget, docs/policies.md "The split's
    /// events"). Allocation JSON's `events.reuse` too.
    pub(in crate::compile) split_lifetime_ids: bool,
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
            attached,
            attached_count,
            sync_kind,
            syncs: Vec::new(),
            split_syncs_from: None,
            split_events: Vec::new(),
            activations: Vec::new(),
            inserted_activations: Vec::new(),
            end_via: BTreeMap::new(),
            huge_streams: Vec::new(),
            split_to_logic: (0..logical_count).map(StreamId).collect(),
            inserted: IdVec::new(),
            order: Vec::new(),
            lifetime_ids: false,
            split_lifetime_ids: false,
        }
    }

    /// The sync stage's result supplied by the caller rather than computed: GE's own flow from
    /// a graph whose events are already assigned, and tools and tests that check or split a
    /// given synchronisation. `syncs` replace any earlier ones; ids are the caller's.
    pub fn with_given_syncs(mut self, syncs: Vec<SyncPair>) -> Self {
        self.syncs = syncs;
        self.split_syncs_from = None;
        self.lifetime_ids = false;
        self.split_lifetime_ids = false;
        self.stage = self.stage.max(Stage::Sync);
        self
    }

    /// The same allocation under the name of the search that chose it (`auto`, `budget:N`).
    pub(crate) fn named(mut self, mode: String) -> Self {
        self.mode = mode;
        self
    }

    /// `static-multi`, `static-single`, `dynamic-single`, `dynamic-multi` or a policy name.
    pub fn mode(&self) -> &str {
        &self.mode
    }

    /// How far the pipeline ran.
    pub fn stage(&self) -> Stage {
        self.stage
    }

    /// Whether the sync stage numbered the ids by lifetime, an id serving several pairs whose
    /// lifetimes do not overlap (allocation JSON's `events.reuse`).
    pub fn ids_reused_by_lifetime(&self) -> bool {
        self.lifetime_ids
    }

    /// Whether the split's events share ids by lifetime (with each other, or with the sync
    /// stage's ids in event mode), which makes allocation JSON's `events.reuse` `"lifetime"`
    /// too.
    pub fn split_ids_reused_by_lifetime(&self) -> bool {
        self.split_lifetime_ids
    }

    /// Logical stream per node (`None`: runs on no stream).
    pub fn logical_stream(&self) -> &IdVec<NodeId, Option<StreamId>> {
        &self.logical_stream
    }

    /// Logical streams, attached ones not included.
    pub fn logical_count(&self) -> u32 {
        self.logical_count
    }

    /// Physical stream per node (equal to the logical one before the split).
    pub fn stream(&self) -> &IdVec<NodeId, Option<StreamId>> {
        &self.stream
    }

    /// Physical streams: one per entry of [`Self::split_to_logic`].
    pub fn physical_count(&self) -> u32 {
        self.split_to_logic.len() as u32
    }

    /// Attached stream ids per node (physical after the split).
    pub fn attached(&self) -> &IdVec<NodeId, Vec<StreamId>> {
        &self.attached
    }

    /// Attached streams, counted above the logical ones.
    pub fn attached_count(&self) -> u32 {
        self.attached_count
    }

    /// Events or notifies: the kind of every pair in [`Self::syncs`].
    pub fn sync_kind(&self) -> SyncKind {
        self.sync_kind
    }

    /// Sync pairs, ordered by id then position; in event mode the split's own come after the
    /// sync stage's, whatever their ids (they may share them, [`Self::split_ids_reused_by_lifetime`]).
    pub fn syncs(&self) -> &[SyncPair] {
        &self.syncs
    }

    /// Adds record/wait pairs between main streams, `(recording node, waiting node)`, each
    /// with an id of its own after the ones held, to a logical allocation: the sync stage keeps
    /// them ahead of the pairs it inserts and reduces them together (syncs added for memory,
    /// src/memory/syncs.rs). Each pair must go forward in the execution order.
    pub fn add_syncs(&mut self, pairs: &[(NodeId, NodeId)]) {
        let next = self.sync_count();
        self.syncs.extend(pairs.iter().enumerate().map(|(k, &(from, to))| SyncPair {
            id: EventId(next + k as u32),
            from: SyncEnd::main(from),
            to: SyncEnd::main(to),
        }));
    }

    /// Distinct sync ids: ids are dense, so one past the largest.
    pub fn sync_count(&self) -> u32 {
        self.syncs.iter().map(|p| p.id.0 + 1).max().unwrap_or(0)
    }

    /// Event pairs the physical split added: in event mode the last entries of
    /// [`Self::syncs`], in notify mode all of [`Self::split_events`].
    pub fn split_event_count(&self) -> u32 {
        match self.sync_kind {
            SyncKind::Notify => self.split_events.len() as u32,
            SyncKind::Event => self.split_syncs_from.map_or(0, |from| self.syncs.len().saturating_sub(from)) as u32,
        }
    }

    /// Distinct ids of the split's events in notify mode (numbered from 0 apart; fewer than
    /// the pairs where they share ids by lifetime); 0 in event mode, where they are among
    /// [`Self::sync_count`].
    pub fn split_event_id_count(&self) -> u32 {
        self.split_events.iter().map(|p| p.id.0 + 1).max().unwrap_or(0)
    }

    /// The split's event pairs in notify mode (empty in event mode).
    pub fn split_events(&self) -> &[SyncPair] {
        &self.split_events
    }

    /// Every record/wait pair as allocation JSON's `syncs` lists it, one entry per Send/Recv
    /// pair whatever its kind, with the document's id: [`Self::syncs`] as they are, then, in
    /// notify mode, the split's events numbered after the notifies (`sync_count + k`) with
    /// GE's event id `k` beside. A reader orders nodes by `syncs` and stream order alone.
    pub fn document_syncs(&self) -> impl Iterator<Item = (SyncPair, Option<EventId>)> + '_ {
        let base = self.sync_count();
        self.syncs
            .iter()
            .map(|p| (*p, None))
            .chain(self.split_events.iter().map(move |p| (SyncPair { id: EventId(base + p.id.0), ..*p }, Some(p.id))))
    }

    /// The inserted Send (`to == false`) or Recv node that stands for one end of the pair at
    /// `index` of [`Self::document_syncs`], where the split separated the two (see `end_via`).
    pub fn end_via(&self, index: usize, to: bool) -> Option<InsertedId> {
        if self.end_via.is_empty() {
            return None;
        }
        self.end_via.get(&(index as u32, to)).copied()
    }

    /// Whether some sync end is an inserted node ([`Self::end_via`]).
    pub fn has_end_via(&self) -> bool {
        !self.end_via.is_empty()
    }

    /// Distinct ids of [`Self::document_syncs`] (`events.count`): in notify mode the notifies
    /// and the split's events together.
    pub fn document_sync_count(&self) -> u32 {
        self.sync_count() + self.split_event_id_count()
    }

    /// Nodes that activate streams, and the physical streams each activates.
    pub fn activations(&self) -> &[(NodeId, Vec<StreamId>)] {
        &self.activations
    }

    /// Inserted StreamActive nodes and the physical streams each activates.
    pub fn inserted_activations(&self) -> &[(InsertedId, Vec<StreamId>)] {
        &self.inserted_activations
    }

    /// Physical streams with the huge task limit.
    pub fn huge_streams(&self) -> &[StreamId] {
        &self.huge_streams
    }

    /// Logical origin of every physical stream (index = physical id).
    pub fn split_to_logic(&self) -> &[StreamId] {
        &self.split_to_logic
    }

    /// The nodes the pipeline inserted, anchored to model nodes.
    pub fn inserted(&self) -> &IdVec<InsertedId, InsertedNode> {
        &self.inserted
    }

    /// Every node of the model in execution order: each stream runs its nodes in this order
    /// (allocation JSON lists `nodes` in it). A topological order with [`Model::all_nodes`]'s
    /// structure (a node's subgraphs' nodes right after it). GE's `GetAllNodes` order under
    /// `compat=ge`, in GE's step-by-step passes, on one stream and in graphs with no costs;
    /// otherwise the critical-path-first order [`crate::compile::order`] chose for the
    /// assignment (computed or given).
    pub fn order<'a>(&'a self, model: &Model) -> Cow<'a, [NodeId]> {
        if self.order.is_empty() { Cow::Owned(model.all_nodes()) } else { Cow::Borrowed(&self.order) }
    }

    /// Sets a given execution order (a peer's own), refusing one that is not every node of
    /// `model` once in a topological order of a flat graph.
    pub(crate) fn set_order(&mut self, model: &Model, order: Vec<NodeId>) -> crate::error::Result<()> {
        let mut at = vec![usize::MAX; model.nodes.len()];
        for (i, &n) in order.iter().enumerate() {
            if n.index() >= at.len() || at[n.index()] != usize::MAX {
                crate::bail!(Internal, "given order of '{}': node {} is not once in it", model.name, n.index());
            }
            at[n.index()] = i;
        }
        let backwards = model.edges.iter().find(|e| at[e.src.index()] >= at[e.dst.index()]);
        if order.len() != model.nodes.len() || model.graphs.len() > 1 || backwards.is_some() {
            crate::bail!(
                Internal,
                "given order of '{}' is not a topological order of its {} nodes",
                model.name,
                model.nodes.len()
            );
        }
        self.order = if order == model.all_nodes() { Vec::new() } else { order };
        Ok(())
    }

    /// The execution order as set: empty when it is GE's `GetAllNodes` order.
    pub fn set_order_or_empty(&self) -> &[NodeId] {
        &self.order
    }

    /// Whether the execution order is GE's `GetAllNodes` order.
    pub fn has_ge_order(&self) -> bool {
        self.order.is_empty()
    }

    /// What a host sees before Send/Recv generation: the same allocation without the inserted
    /// sync nodes (and, before the split, without any inserted node).
    pub(crate) fn without_sync_nodes(&self, keep_stream_active: bool) -> Allocation {
        let mut view = self.clone();
        let mut new_id: IdVec<InsertedId, Option<InsertedId>> = IdVec::filled(self.inserted.len(), None);
        view.inserted = IdVec::new();
        // Without the sync nodes, every end is its node again.
        view.end_via.clear();
        for (id, ins) in self.inserted.enumerate() {
            if keep_stream_active && !ins.kind.is_sync() {
                new_id[id] = Some(view.inserted.push(ins.clone()));
            }
        }
        view.inserted_activations =
            self.inserted_activations.iter().filter_map(|(id, s)| new_id[*id].map(|k| (k, s.clone()))).collect();
        view
    }

    /// Nodes per physical stream (index = stream id), for summaries.
    pub fn nodes_per_stream(&self) -> Vec<usize> {
        let mut counts = vec![0usize; self.physical_count() as usize];
        for s in self.stream.iter().flatten() {
            if let Some(c) = counts.get_mut(s.index()) {
                *c += 1;
            }
        }
        counts
    }

    /// Every node's sync ids, grouped once: the JSON writer, the session's node views and the
    /// C views all read this one index.
    pub fn node_syncs(&self) -> NodeSyncs {
        let nodes = self.logical_stream.len();
        let sends = |pairs: &[SyncPair]| Csr::group(nodes, pairs.iter().map(|p| (p.from.node, p.id)));
        let recvs = |pairs: &[SyncPair]| Csr::group(nodes, pairs.iter().map(|p| (p.to.node, p.id)));
        NodeSyncs {
            send: sends(&self.syncs),
            recv: recvs(&self.syncs),
            split_send: sends(&self.split_events),
            split_recv: recvs(&self.split_events),
        }
    }

    /// The allocation JSON document, written by [`AllocationJson`]; `with` adds sections. It
    /// has no `memory` section: the memory plan is made above this layer and handed to
    /// [`AllocationJson::with_memory`] (`memory::AllocationDocument` writes the whole document).
    pub fn json<'a>(&'a self, model: &'a Model) -> AllocationJson<'a> {
        AllocationJson { model, alloc: self, extra: Vec::new(), memory: None }
    }
}

/// Per-node sync ids (see [`Allocation::node_syncs`]), each list in pair order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeSyncs {
    send: Csr<NodeId, EventId>,
    recv: Csr<NodeId, EventId>,
    split_send: Csr<NodeId, EventId>,
    split_recv: Csr<NodeId, EventId>,
}

impl NodeSyncs {
    /// Ids the node records after it runs (events, or notifies in notify mode).
    pub fn sends(&self, n: NodeId) -> &[EventId] {
        self.send.of(n)
    }
    /// Ids the node's stream waits for before it runs.
    pub fn recvs(&self, n: NodeId) -> &[EventId] {
        self.recv.of(n)
    }
    /// In notify mode, the split's event ids the node records.
    pub fn split_sends(&self, n: NodeId) -> &[EventId] {
        self.split_send.of(n)
    }
    /// In notify mode, the split's event ids the node waits for.
    pub fn split_recvs(&self, n: NodeId) -> &[EventId] {
        self.split_recv.of(n)
    }
}

/// Allocation JSON v1, serialised straight from the allocation and the model with no value
/// tree in between (at a million nodes the tree cost more than the pipeline). Keys come in
/// sorted order, as the format has always been written.
pub struct AllocationJson<'a, M = ()> {
    model: &'a Model,
    alloc: &'a Allocation,
    extra: Vec<(&'static str, Value)>,
    /// The `memory` section, written by the layer that plans memory.
    memory: Option<M>,
}

impl<'a, M: Serialize> AllocationJson<'a, M> {
    /// Adds the `memory` section (allocation-json.md), or none.
    pub fn with_memory<N: Serialize>(self, memory: Option<N>) -> AllocationJson<'a, N> {
        AllocationJson { model: self.model, alloc: self.alloc, extra: self.extra, memory }
    }

    /// Adds a top-level section (`policy`, `verify`).
    pub fn with(mut self, key: &'static str, value: Value) -> Self {
        self.extra.retain(|(k, _)| *k != key);
        self.extra.push((key, value));
        self
    }

    /// Writes pretty JSON text, newline-terminated.
    pub fn write_pretty<W: std::io::Write>(&self, mut w: W) -> std::io::Result<()> {
        serde_json::to_writer_pretty(&mut w, self)?;
        w.write_all(b"\n")
    }

    /// Pretty JSON text, newline-terminated.
    pub fn to_string_pretty(&self) -> String {
        let mut out = Vec::new();
        self.write_pretty(&mut out).expect("writing to memory cannot fail");
        String::from_utf8(out).expect("serde_json writes UTF-8")
    }

    /// The document as a value.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).expect("allocation JSON always serialises")
    }
}

/// The top-level sections of the document.
enum Section<'a> {
    Activations,
    Attached,
    Events,
    Memory,
    Nodes,
    /// Every pair, [`Allocation::document_syncs`].
    Syncs,
    /// A view of notify mode's split events in GE's numbering, not read for ordering.
    SplitEvents,
    Streams,
    Str(&'a str),
    Version,
    Extra(&'a Value),
}

impl<M: Serialize> Serialize for AllocationJson<'_, M> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let a = self.alloc;
        let mut sections: Vec<(&str, Section<'_>)> = vec![
            ("activations", Section::Activations),
            ("attached", Section::Attached),
            ("events", Section::Events),
            ("format", Section::Str(ALLOCATION_FORMAT)),
            ("graph", Section::Str(&self.model.name)),
            ("mode", Section::Str(&a.mode)),
            ("nodes", Section::Nodes),
            ("split_events", Section::SplitEvents),
            ("stage", Section::Str(a.stage.as_str())),
            ("streams", Section::Streams),
            ("syncs", Section::Syncs),
            ("version", Section::Version),
        ];
        if self.memory.is_some() {
            sections.push(("memory", Section::Memory));
        }
        for (k, v) in &self.extra {
            sections.retain(|(key, _)| key != k);
            sections.push((k, Section::Extra(v)));
        }
        sections.sort_by(|x, y| x.0.cmp(y.0));
        let mut m = s.serialize_map(Some(sections.len()))?;
        for (key, section) in &sections {
            let w = Writer { doc: self, section };
            m.serialize_entry(key, &w)?;
        }
        m.end()
    }
}

/// One section with what it is written from.
struct Writer<'d, 'a, M> {
    doc: &'d AllocationJson<'a, M>,
    section: &'d Section<'a>,
}

impl<M: Serialize> Serialize for Writer<'_, '_, M> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (model, a) = (self.doc.model, self.doc.alloc);
        match self.section {
            Section::Str(v) => s.serialize_str(v),
            Section::Version => s.serialize_u64(ALLOCATION_VERSION),
            Section::Extra(v) => v.serialize(s),
            Section::Memory => self.doc.memory.serialize(s),
            Section::Events => {
                let reused = a.lifetime_ids || a.split_lifetime_ids;
                let mut m = s.serialize_map(Some(3 + usize::from(reused)))?;
                m.serialize_entry("count", &a.document_sync_count())?;
                m.serialize_entry("kind", a.sync_kind.as_str())?;
                if reused {
                    m.serialize_entry("reuse", "lifetime")?;
                }
                m.serialize_entry("split_count", &a.split_event_count())?;
                m.end()
            }
            Section::Streams => {
                // Keys of `split_to_logic` are physical ids as strings, in string order.
                let mut split: Vec<(String, StreamId)> =
                    a.split_to_logic.iter().enumerate().map(|(p, l)| (p.to_string(), *l)).collect();
                split.sort_unstable_by(|x, y| x.0.cmp(&y.0));
                let mut m = s.serialize_map(Some(5))?;
                m.serialize_entry("attached", &a.attached_count)?;
                m.serialize_entry("huge", &a.huge_streams)?;
                m.serialize_entry("logical", &a.logical_count)?;
                m.serialize_entry("physical", &a.physical_count())?;
                m.serialize_entry("split_to_logic", &MapOf(&split))?;
                m.end()
            }
            Section::Syncs => s.collect_seq(a.document_syncs().enumerate().map(|(i, (pair, event_id))| PairJson {
                model,
                alloc: a,
                pair,
                event_id,
                graphs: true,
                via: (a.end_via(i, false), a.end_via(i, true)),
            })),
            Section::SplitEvents => {
                let base = a.syncs.len();
                s.collect_seq(a.split_events.iter().enumerate().map(|(k, &pair)| PairJson {
                    model,
                    alloc: a,
                    pair,
                    event_id: None,
                    graphs: false,
                    via: (a.end_via(base + k, false), a.end_via(base + k, true)),
                }))
            }
            Section::Activations => {
                let named = a.activations.iter().map(|(n, l)| (Cow::Borrowed(model.nodes[*n].name.as_str()), l));
                let inserted = a
                    .inserted_activations
                    .iter()
                    .filter_map(|(i, l)| a.inserted.get(*i).map(|ins| (ins.name(model), l)));
                s.collect_seq(named.chain(inserted).map(|(node, streams)| NodeStreams { node, streams }))
            }
            Section::Attached => {
                s.collect_seq(model.all_nodes().into_iter().filter(|&n| !a.attached[n].is_empty()).map(|n| {
                    NodeStreams { node: Cow::Borrowed(model.nodes[n].name.as_str()), streams: &a.attached[n] }
                }))
            }
            Section::Nodes => {
                let nodes = model.nodes.len();
                let syncs = a.node_syncs();
                let base = a.sync_count();
                let before =
                    Csr::group(nodes, a.inserted.enumerate().filter(|(_, i)| i.before).map(|(id, i)| (i.anchor, id)));
                let after =
                    Csr::group(nodes, a.inserted.enumerate().filter(|(_, i)| !i.before).map(|(id, i)| (i.anchor, id)));
                let mut seq = s.serialize_seq(Some(nodes + a.inserted.len()))?;
                for &n in a.order(model).iter() {
                    for &i in before.of(n) {
                        seq.serialize_element(&InsertedJson { model, node: &a.inserted[i] })?;
                    }
                    seq.serialize_element(&NodeJson { model, alloc: a, syncs: &syncs, base, node: n })?;
                    for &i in after.of(n) {
                        seq.serialize_element(&InsertedJson { model, node: &a.inserted[i] })?;
                    }
                }
                seq.end()
            }
        }
    }
}

/// A map from string keys already in order.
struct MapOf<'a>(&'a [(String, StreamId)]);

impl Serialize for MapOf<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

/// `{"node": name, "streams": [ids]}` of `activations` and `attached`.
struct NodeStreams<'a> {
    node: Cow<'a, str>,
    streams: &'a [StreamId],
}

impl Serialize for NodeStreams<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("node", &self.node)?;
        m.serialize_entry("streams", self.streams)?;
        m.end()
    }
}

/// A pair of `syncs` / `split_events`: `{"from", "id", "to"}`, ends named `node`,
/// `node@attached` or `node@attached:<stream>` when the node has several. In `syncs`, an end
/// in a subgraph names its graph (`from_graph` / `to_graph`: names are unique per graph only),
/// and notify mode's split events say they are events, with GE's event id.
struct PairJson<'a> {
    model: &'a Model,
    alloc: &'a Allocation,
    pair: SyncPair,
    event_id: Option<EventId>,
    graphs: bool,
    /// The inserted nodes standing for (`from`, `to`), where the split separated an end from
    /// its node ([`Allocation::end_via`]).
    via: (Option<InsertedId>, Option<InsertedId>),
}

impl PairJson<'_> {
    fn end_name(&self, end: &SyncEnd, via: Option<InsertedId>) -> String {
        if let Some(i) = via {
            return self.alloc.inserted[i].name(self.model).into_owned();
        }
        let name = &self.model.nodes[end.node].name;
        match end.attached {
            None => name.clone(),
            Some(s) if self.alloc.attached[end.node].len() > 1 => format!("{name}@attached:{s}"),
            Some(_) => format!("{name}@attached"),
        }
    }
}

impl Serialize for PairJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let graph = |end: &SyncEnd| {
            let g = self.model.nodes[end.node].graph;
            (self.graphs && g != GraphId::ROOT).then(|| self.model.graph_label(g))
        };
        // Keys in sorted order, as the whole document.
        let mut m = s.serialize_map(None)?;
        if let Some(e) = self.event_id {
            m.serialize_entry("event_id", &e)?;
        }
        m.serialize_entry("from", &self.end_name(&self.pair.from, self.via.0))?;
        if let Some(g) = graph(&self.pair.from) {
            m.serialize_entry("from_graph", g)?;
        }
        m.serialize_entry("id", &self.pair.id)?;
        if self.event_id.is_some() {
            m.serialize_entry("kind", "event")?;
        }
        m.serialize_entry("to", &self.end_name(&self.pair.to, self.via.1))?;
        if let Some(g) = graph(&self.pair.to) {
            m.serialize_entry("to_graph", g)?;
        }
        m.end()
    }
}

/// `-1` for no stream, as GE writes it.
fn stream_number(s: Option<StreamId>) -> i64 {
    s.map_or(-1, |s| i64::from(s.0))
}

/// One model node of `nodes`.
struct NodeJson<'a> {
    model: &'a Model,
    alloc: &'a Allocation,
    syncs: &'a NodeSyncs,
    /// [`Allocation::sync_count`], computed once for the whole document: it scans every pair.
    base: u32,
    node: NodeId,
}

impl Serialize for NodeJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (n, a, node) = (self.node, self.alloc, &self.model.nodes[self.node]);
        let mut m = s.serialize_map(None)?;
        if !a.attached[n].is_empty() {
            m.serialize_entry("attached_streams", &a.attached[n])?;
        }
        m.serialize_entry("graph", &self.model.graph_label(node.graph))?;
        m.serialize_entry("logical_stream", &stream_number(a.logical_stream[n]))?;
        m.serialize_entry("name", &node.name)?;
        // The document's ids (`syncs`): notify mode's split events follow the notifies.
        let base = self.base;
        for (key, ids, split) in [
            ("recv", self.syncs.recvs(n), self.syncs.split_recvs(n)),
            ("send", self.syncs.sends(n), self.syncs.split_sends(n)),
        ] {
            if split.is_empty() {
                if !ids.is_empty() {
                    m.serialize_entry(key, ids)?;
                }
            } else {
                let all: Vec<EventId> = ids.iter().copied().chain(split.iter().map(|e| EventId(base + e.0))).collect();
                m.serialize_entry(key, &all)?;
            }
        }
        m.serialize_entry("stream", &stream_number(a.stream[n]))?;
        m.serialize_entry("type", &node.op_type)?;
        m.end()
    }
}

/// One inserted node of `nodes`.
struct InsertedJson<'a> {
    model: &'a Model,
    node: &'a InsertedNode,
}

impl Serialize for InsertedJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let ins = self.node;
        let notify = ins.kind.is_notify();
        let mut m = s.serialize_map(None)?;
        if let (Some(id), false) = (ins.sync_id, notify) {
            m.serialize_entry("event_id", &id)?;
        }
        m.serialize_entry("graph", &self.model.graph_label(ins.graph))?;
        m.serialize_entry("inserted", &true)?;
        m.serialize_entry("logical_stream", &ins.logical_stream)?;
        m.serialize_entry("name", &ins.name(self.model))?;
        if let (Some(id), true) = (ins.sync_id, notify) {
            m.serialize_entry("notify_id", &id)?;
        }
        m.serialize_entry("stream", &ins.stream)?;
        m.serialize_entry("type", ins.kind.as_str())?;
        m.end()
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
    use super::{InsertedKind, sync_node_name};
    use crate::graph::EventId;

    #[test]
    fn sync_names_follow_ge() {
        for (id, reuse) in [(0, None), (7, None), (10, Some(0)), (u32::MAX, Some(12)), (1_000_000, None)] {
            let expected = match reuse {
                None => format!("g_Send_{id}"),
                Some(k) => format!("g_Send_{id}_Reuse_{k}"),
            };
            assert_eq!(sync_node_name("g", InsertedKind::Send, EventId(id), reuse), expected);
        }
        assert_eq!(sync_node_name("m", InsertedKind::RecvNotify, EventId(3), Some(1)), "m_Recv_Notify_3_Reuse_1");
        assert_eq!(sync_node_name("m", InsertedKind::SendNotify, EventId(3), None), "m_Send_Notify_3");
        assert_eq!(sync_node_name("m", InsertedKind::Recv, EventId(42), None), "m_Recv_42");
    }
}
