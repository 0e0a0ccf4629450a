//! Static synchronisation: GE's `InsertSyncNodesByLogicStream` sync half (ge-compiler.md §6).
//!
//! The steps share one [`SyncState`]: a table of raw syncs (one per inserted record/wait pair,
//! indexed by insertion order, so the sync → node lookup GE does by scanning is a field read)
//! plus per-node send/recv lists in GE's insertion order. Each step is its own module:
//!
//! * [`insert`] — `InsertSyncEvents`, `InsertEventsForSubgraph`, attached-stream value-dependency
//!   events, `CoverAllStreamByNetoutput`. Outside `compat=ge` task-less nodes are contracted
//!   first: syncs join task-bearing nodes only ([`insert::Contraction`]).
//! * [`ge_opt`] — `OptimizeBySendEvents`, `OptimizeByRecvEvents`, `OptimizeByStreamActivate`,
//!   StreamSwitch send removal (`compat=ge`).
//! * [`reduce`] — the default mode's exact reduction (transitive reduction with vector clocks),
//!   on the contracted graph.
//! * [`reuse`] — `ReuseEventForMultiDims`, `_event_multiplexing`, lifetime reuse.
//! * [`continuous`] — `RefreshContinuousEvents` / `RefreshContinuousNotifies`.
//! * [`bound`] — no step: the syncs every plan that keeps some streams needs, which the event
//!   budget checks before it runs the steps.
//! * [`materialise`] — `GenerateSyncEventNodes`.
//!
//! The order they run in is not written here: [`crate::compile::steps`] wraps each as a
//! registered step, and the pipeline's sequences, one per sync mode, are slices of the step
//! registry ([`crate::compile::passes::SYNC_SEQUENCES`]) run by the runner `stream-alloc pass`
//! uses.

pub mod bound;
pub mod continuous;
pub mod ge_opt;
pub mod insert;
pub mod materialise;
pub mod reduce;
pub mod reuse;

use std::borrow::Cow;

use super::allocation::{SyncEnd, SyncPair};
use crate::graph::csr::Csr;
use crate::graph::{EventId, IdVec, Model, NodeId, Options, StreamId, SyncKind};

/// How the sync stage runs (which sequence, see [`crate::compile::passes::sync_sequence`]);
/// [`SyncConfig::new`] reads it from the options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyncConfig {
    pub kind: SyncKind,
    /// `compat=ge`: GE's pairwise optimisations instead of the exact reduction.
    pub compat_ge: bool,
    /// `event_reuse=lifetime` (default mode only).
    pub event_reuse_lifetime: bool,
    /// Insert Send/Recv nodes (static graphs). Dynamic graphs carry only per-node send/recv
    /// ids (`_send_event_ids` / `_recv_event_ids`), so their allocator turns this off.
    pub materialise: bool,
}

impl SyncConfig {
    /// A dynamic root synchronises with events whatever `ge.event` says: GE's dynamic
    /// allocator only has `InsertEvents` (ge-compiler.md §5, no notify in that path).
    pub fn new(model: &Model, o: &Options) -> Self {
        let dynamic = model.is_dynamic(crate::graph::GraphId::ROOT);
        SyncConfig {
            kind: if dynamic { SyncKind::Event } else { o.event },
            compat_ge: o.compat_ge,
            event_reuse_lifetime: o.event_reuse_lifetime,
            materialise: !dynamic,
        }
    }
}

/// One inserted record/wait pair. `id` is meaningful after the continuity refresh.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawSync {
    pub from: SyncEnd,
    pub to: SyncEnd,
    pub id: u32,
    pub alive: bool,
    /// Inserted by the attached-stream steps (GE's separate attached maps, numbered after the
    /// main ones).
    pub attached_phase: bool,
}

/// Per-node facts the sync steps test on hot paths, read once from the model so that the
/// steps touch a byte per node instead of the node itself.
#[derive(Clone, Debug, Default)]
pub struct NodeFacts {
    flags: Vec<u16>,
    /// Union of every node's flags: a step whose flag no node has is skipped outright.
    any: u16,
}

impl NodeFacts {
    /// `_stream_label` set.
    pub const LABEL: u16 = 1;
    /// `_active_label_list` non-empty.
    pub const ACTIVE_LABELS: u16 = 1 << 1;
    /// `Enter` / `RefEnter`.
    pub const ENTER: u16 = 1 << 2;
    pub const STREAM_ACTIVE: u16 = 1 << 3;
    pub const NET_OUTPUT: u16 = 1 << 4;
    pub const STREAM_SWITCH: u16 = 1 << 5;
    /// Any GE attribute at all (FFTS, `_thread_scope_id`, `_subgraph_end_node`…).
    pub const GE_ATTRS: u16 = 1 << 6;
    /// An attached-stream request with value-dependent inputs.
    pub const ATTACHED_DEPS: u16 = 1 << 7;
    /// `is_loop_active`.
    pub const LOOP_ACTIVE: u16 = 1 << 8;
    /// `_event_multiplexing` non-empty.
    pub const MULTIPLEXING: u16 = 1 << 9;
    /// Task-less and none of the facts or attributes that keep a node out of the task-less
    /// contraction: transparent there unless the assignment gives it an attached stream
    /// ([`insert::Contraction`]).
    pub const CONTRACTIBLE: u16 = 1 << 10;

    pub fn build(model: &Model) -> Self {
        let mut any = 0u16;
        let flags = model
            .nodes
            .enumerate()
            .map(|(n, node)| {
                let mut f = match node.op_type.as_str() {
                    "Enter" | "RefEnter" => Self::ENTER,
                    "StreamActive" => Self::STREAM_ACTIVE,
                    "NetOutput" => Self::NET_OUTPUT,
                    "StreamSwitch" => Self::STREAM_SWITCH,
                    _ => 0,
                };
                if node.attrs.stream_label.is_some() {
                    f |= Self::LABEL;
                }
                if !node.attrs.active_label_list.is_empty() {
                    f |= Self::ACTIVE_LABELS;
                }
                if !node.ge_attrs.is_empty() {
                    f |= Self::GE_ATTRS;
                    if node.ge_attrs.flag(crate::compile::activate::IS_LOOP_ACTIVE) {
                        f |= Self::LOOP_ACTIVE;
                    }
                }
                if node.attrs.attached_streams.iter().any(|a| !a.depend_value_inputs.is_empty()) {
                    f |= Self::ATTACHED_DEPS;
                }
                if !node.attrs.event_multiplexing.is_empty() {
                    f |= Self::MULTIPLEXING;
                }
                if insert::Contraction::contractible(model, n, f) {
                    f |= Self::CONTRACTIBLE;
                }
                any |= f;
                f
            })
            .collect();
        NodeFacts { flags, any }
    }

    /// Whether node `n` has every flag in `f`.
    #[inline]
    pub fn has(&self, n: NodeId, f: u16) -> bool {
        self.flags[n.index()] & f == f
    }

    /// Whether some node has flag `f`.
    #[inline]
    pub fn any(&self, f: u16) -> bool {
        self.any & f != 0
    }
}

/// What the sync steps read from the model alone: the per-node facts, and each node's
/// consumers in the order insertion walks them (the destinations of its data edges, then of its
/// control edges, each in edge order), so that walk reads node ids instead of every edge. The
/// event budget's trials run the sync stage many times on one model and build this once.
#[derive(Clone, Debug)]
pub struct ModelFacts {
    pub nodes: NodeFacts,
    pub succ: Csr<NodeId, NodeId>,
}

impl ModelFacts {
    pub fn build(model: &Model) -> Self {
        use crate::graph::EdgeKind;
        let by_kind = |kind: EdgeKind| model.edges.iter().filter(move |e| e.kind == kind).map(|e| (e.src, e.dst));
        let succ = Csr::group(model.nodes.len(), by_kind(EdgeKind::Data).chain(by_kind(EdgeKind::Control)));
        ModelFacts { nodes: NodeFacts::build(model), succ }
    }
}

/// The working state of the sync steps.
#[derive(Clone, Debug)]
pub struct SyncState<'m> {
    pub model: &'m Model,
    /// Logical stream per node.
    pub stream: IdVec<NodeId, Option<StreamId>>,
    /// Attached stream ids per node.
    pub attached: IdVec<NodeId, Vec<StreamId>>,
    /// Main plus attached streams.
    pub stream_count: u32,
    /// Whether any node has an attached stream.
    pub has_attached: bool,
    /// Raw syncs in insertion order; a node's send (recv) list is its syncs in this order.
    pub syncs: Vec<RawSync>,
    /// Nodes in execution order (GE's `GetAllNodes`) and each node's position in it (GE's topo id).
    pub order: Vec<NodeId>,
    pub pos: IdVec<NodeId, u32>,
    pub kind: SyncKind,
    pub facts: Cow<'m, NodeFacts>,
    /// Each node's consumers, data edges first ([`ModelFacts::succ`]).
    pub succ: Cow<'m, Csr<NodeId, NodeId>>,
    /// Contract task-less nodes before inserting syncs (the default mode; GE syncs every
    /// cross-stream edge, `compat=ge`): see [`insert::Contraction`].
    pub contract: bool,
}

impl<'m> SyncState<'m> {
    pub fn new(
        model: &'m Model,
        stream: IdVec<NodeId, Option<StreamId>>,
        attached: IdVec<NodeId, Vec<StreamId>>,
        kind: SyncKind,
    ) -> Self {
        Self::in_order_with(model, stream, attached, kind, None, None)
    }

    /// [`SyncState::new`] in an allocation's execution order (`None`: GE's `GetAllNodes`), from
    /// the model's [`ModelFacts`] when the caller keeps them.
    pub fn in_order_with(
        model: &'m Model,
        stream: IdVec<NodeId, Option<StreamId>>,
        attached: IdVec<NodeId, Vec<StreamId>>,
        kind: SyncKind,
        order: Option<Vec<NodeId>>,
        facts: Option<&'m ModelFacts>,
    ) -> Self {
        let (facts, succ) = match facts {
            Some(f) => (Cow::Borrowed(&f.nodes), Cow::Borrowed(&f.succ)),
            None => {
                let f = ModelFacts::build(model);
                (Cow::Owned(f.nodes), Cow::Owned(f.succ))
            }
        };
        // One graph: GE's `GetAllNodes` is the root's order.
        let root = &model.graphs[crate::graph::GraphId::ROOT].order;
        let order = order.unwrap_or_else(|| {
            if model.graphs.len() == 1 && root.len() == model.nodes.len() { root.clone() } else { model.all_nodes() }
        });
        let mut pos = IdVec::filled(model.nodes.len(), 0u32);
        for (i, &n) in order.iter().enumerate() {
            pos[n] = i as u32;
        }
        let main = stream.iter().flatten().map(|s| s.0 + 1).max().unwrap_or(0);
        let mut has_attached = false;
        let mut stream_count = main;
        for a in attached.iter().filter(|a| !a.is_empty()) {
            has_attached = true;
            stream_count = a.iter().map(|s| s.0 + 1).fold(stream_count, u32::max);
        }
        SyncState {
            model,
            stream,
            attached,
            stream_count,
            has_attached,
            syncs: Vec::with_capacity(model.edges.len()),
            order,
            pos,
            kind,
            facts,
            succ,
            contract: false,
        }
    }

    /// Puts syncs given before the steps at the head of the raw table, in the order given.
    /// `keep_ids`: each keeps its own id (GE's maps as the graph gives them). Otherwise pairs
    /// that share an id share the raw id of the first of them, so every raw id stays below the
    /// number given and the pairs the steps add (raw id = table position) never collide with
    /// them; the refresh renumbers all.
    pub fn seed(&mut self, given: &[SyncPair], keep_ids: bool) {
        let mut first: std::collections::BTreeMap<u32, u32> = std::collections::BTreeMap::new();
        for p in given {
            let r = self.syncs.len() as u32;
            let id = if keep_ids { p.id.0 } else { *first.entry(p.id.0).or_insert(r) };
            let attached_phase = p.from.attached.is_some() || p.to.attached.is_some();
            self.syncs.push(RawSync { from: p.from, to: p.to, id, alive: true, attached_phase });
        }
    }

    /// The stream an end runs on.
    pub fn end_stream(&self, end: SyncEnd) -> Option<StreamId> {
        match end.attached {
            Some(s) => Some(s),
            None => self.stream[end.node],
        }
    }

    /// Adds one pair (GE's `AddSendEventId` + `AddRecvEventId` with `event_num_++`).
    pub fn add(&mut self, from: SyncEnd, to: SyncEnd, attached_phase: bool) -> u32 {
        let r = self.syncs.len() as u32;
        self.syncs.push(RawSync { from, to, id: r, alive: true, attached_phase });
        r
    }

    /// Removes one pair (GE's `RmvSendEventId` + `RmvRecvEventId`).
    pub fn remove(&mut self, r: u32) {
        self.syncs[r as usize].alive = false;
    }

    /// Each node's send list (GE's `node_to_send_events_`): its kept syncs in insertion order.
    pub fn send_lists(&self) -> NodeLists {
        self.node_lists(|s| s.from.node)
    }

    /// Each node's recv list (GE's `node_to_recv_events_`).
    pub fn recv_lists(&self) -> NodeLists {
        self.node_lists(|s| s.to.node)
    }

    fn node_lists(&self, key: impl Fn(&RawSync) -> NodeId + Copy) -> NodeLists {
        let kept = self.syncs.iter().enumerate().filter(|(_, s)| s.alive);
        Csr::group(self.model.nodes.len(), kept.map(move |(r, s)| (key(s), r as u32)))
    }

    pub fn alive(&self) -> impl Iterator<Item = (u32, &RawSync)> {
        self.syncs.iter().enumerate().filter(|(_, s)| s.alive).map(|(i, s)| (i as u32, s))
    }

    pub fn alive_count(&self) -> usize {
        self.syncs.iter().filter(|s| s.alive).count()
    }

    /// Nodes of each main stream in execution order (GE's `stream_nodes`).
    pub fn stream_nodes(&self) -> Vec<Vec<NodeId>> {
        let mut out = vec![Vec::new(); self.stream_count as usize];
        for &n in &self.order {
            if let Some(s) = self.stream[n] {
                out[s.index()].push(n);
            }
        }
        out
    }

    /// Kept pairs with their final ids, ordered by id then record position.
    pub fn pairs(&self) -> Vec<SyncPair> {
        // Without id reuse the refresh numbered the pairs in this very order: one pass confirms
        // it and builds the result; only reused ids need the sort.
        let mut out = Vec::with_capacity(self.syncs.len());
        let mut last = (0u32, 0u32);
        for s in self.syncs.iter().filter(|s| s.alive) {
            let key = (s.id, self.pos[s.from.node]);
            if key < last {
                return self.pairs_sorted();
            }
            last = key;
            out.push(SyncPair { id: EventId(s.id), from: s.from, to: s.to });
        }
        out
    }

    /// Reused ids: the send-list walk (position, then insertion order) bucketed stably by id.
    fn pairs_sorted(&self) -> Vec<SyncPair> {
        let walk: Vec<u32> = match continuous::send_order(self) {
            Some(order) => order,
            None => self.alive().map(|(r, _)| r).collect(),
        };
        let max = walk.iter().map(|&r| self.syncs[r as usize].id as usize).max().unwrap_or(0);
        let pair = |r: u32| {
            let s = &self.syncs[r as usize];
            SyncPair { id: EventId(s.id), from: s.from, to: s.to }
        };
        if max > 4 * walk.len() + 1024 {
            let mut keys: Vec<(u32, u32)> =
                walk.iter().enumerate().map(|(i, &r)| (self.syncs[r as usize].id, i as u32)).collect();
            keys.sort_unstable();
            return keys.into_iter().map(|(_, i)| pair(walk[i as usize])).collect();
        }
        let mut end = vec![0u32; max + 1];
        for &r in &walk {
            end[self.syncs[r as usize].id as usize] += 1;
        }
        let mut sum = 0u32;
        for e in end.iter_mut() {
            sum += *e;
            *e = sum;
        }
        let mut slots = vec![0u32; walk.len()];
        for &r in walk.iter().rev() {
            let e = &mut end[self.syncs[r as usize].id as usize];
            *e -= 1;
            slots[*e as usize] = r;
        }
        slots.into_iter().map(pair).collect()
    }
}

/// Raw sync ids per node, a snapshot of the kept syncs when built.
pub type NodeLists = Csr<NodeId, u32>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::EdgeKind;
    use crate::graph::synth::{Family, generate};

    /// A node's consumers in [`ModelFacts::succ`] are GE's insertion walk: its out data edges,
    /// then its out control edges, each in edge order (the random family has control edges).
    #[test]
    fn consumers_come_data_edges_first_in_edge_order() {
        for family in [Family::Random { window: None }, Family::Inception] {
            let model = generate(family, 2000, 7).expect("valid");
            let facts = ModelFacts::build(&model);
            let mut control = 0;
            for n in model.nodes.ids() {
                let mut walk = Vec::new();
                for kind in [EdgeKind::Data, EdgeKind::Control] {
                    for &e in model.adjacency.out_edges(n) {
                        if model.edges[e].kind == kind {
                            walk.push(model.edges[e].dst);
                            control += usize::from(kind == EdgeKind::Control);
                        }
                    }
                }
                assert_eq!(facts.succ.of(n), walk.as_slice(), "{}: node {}", family.name(), model.nodes[n].name);
            }
            assert_eq!(facts.succ.entries(), model.edges.len());
            assert!(family != (Family::Random { window: None }) || control > 0, "the random family has control edges");
        }
    }
}
