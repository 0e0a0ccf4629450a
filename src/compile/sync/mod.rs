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
//! * [`materialise`] — `GenerateSyncEventNodes`.
//!

pub mod continuous;
pub mod ge_opt;
pub mod insert;
pub mod materialise;
pub mod reduce;
pub mod reuse;

use std::borrow::Cow;

use super::allocation::{Allocation, SyncEnd, SyncPair};
use crate::bail;
use crate::error::Result;
use crate::graph::csr::Csr;
use crate::graph::{EventId, IdVec, Model, NodeId, Options, StreamId, SyncKind};

/// GE's `kMaxNotifyNum`.
pub const MAX_NOTIFY_NUM: u32 = 1024;

/// How the sync stage runs; [`SyncConfig::new`] reads it from the options.
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

/// What the sync stage did, for reports and tests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// Pairs inserted before any optimisation.
    pub inserted: usize,
    /// Pairs kept.
    pub kept: usize,
    /// Distinct ids after reuse and refresh.
    pub ids: u32,
    /// Ids saved by lifetime or multi-dims reuse (`kept - ids` where pairs share ids).
    pub reused: usize,
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

    pub fn build(model: &Model) -> Self {
        let mut any = 0u16;
        let flags = model
            .nodes
            .iter()
            .map(|node| {
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

/// The working state of the sync steps.
#[derive(Clone, Debug)]
pub struct SyncState<'m> {
    pub model: &'m Model,
    /// Logical stream per node (borrowed from the allocation by [`run`]).
    pub stream: Cow<'m, IdVec<NodeId, Option<StreamId>>>,
    /// Attached stream ids per node.
    pub attached: Cow<'m, IdVec<NodeId, Vec<StreamId>>>,
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
    pub facts: NodeFacts,
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
        Self::with(model, Cow::Owned(stream), Cow::Owned(attached), kind, None)
    }

    /// [`SyncState::new`] over an allocation's streams without copying them, in the
    /// allocation's execution order (`None`: GE's `GetAllNodes`).
    pub fn borrowed(
        model: &'m Model,
        stream: &'m IdVec<NodeId, Option<StreamId>>,
        attached: &'m IdVec<NodeId, Vec<StreamId>>,
        kind: SyncKind,
        order: Option<Vec<NodeId>>,
    ) -> Self {
        Self::with(model, Cow::Borrowed(stream), Cow::Borrowed(attached), kind, order)
    }

    fn with(
        model: &'m Model,
        stream: Cow<'m, IdVec<NodeId, Option<StreamId>>>,
        attached: Cow<'m, IdVec<NodeId, Vec<StreamId>>>,
        kind: SyncKind,
        order: Option<Vec<NodeId>>,
    ) -> Self {
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
            facts: NodeFacts::build(model),
            contract: false,
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

/// Puts syncs given before the stage at the head of the raw table, in the order given. Pairs
/// that share an id keep sharing one; raw ids stay below the number given, so the pairs the
/// stage adds (raw id = table position) never collide with them. The refresh renumbers all.
fn seed(st: &mut SyncState<'_>, given: &[SyncPair]) {
    let mut first: std::collections::BTreeMap<u32, u32> = std::collections::BTreeMap::new();
    for p in given {
        let r = st.syncs.len() as u32;
        let id = *first.entry(p.id.0).or_insert(r);
        let attached_phase = p.from.attached.is_some() || p.to.attached.is_some();
        st.syncs.push(RawSync { from: p.from, to: p.to, id, alive: true, attached_phase });
    }
}

/// Raw sync ids per node, a snapshot of the kept syncs when built.
pub type NodeLists = Csr<NodeId, u32>;

/// The `is_loop_active` nodes with the logical streams `SetActiveStreamsForLoop` gives them, in
/// execution order. The lists come from the activation stage itself, run on a copy, so the
/// loop's events and its activation list always name the same streams.
fn loop_activations(model: &Model, alloc: &Allocation, facts: &NodeFacts) -> Result<Vec<(NodeId, Vec<StreamId>)>> {
    if !facts.any(NodeFacts::LOOP_ACTIVE) {
        return Ok(Vec::new());
    }
    let is_loop = |n: NodeId| facts.has(n, NodeFacts::LOOP_ACTIVE);
    let mut copy = alloc.clone();
    crate::compile::activate::assign_logical(model, &mut copy)?;
    Ok(copy.activations.into_iter().filter(|(n, _)| is_loop(*n)).collect())
}

/// `event_reuse=lifetime` together with `ReuseEventForMultiDims`: lifetime reuse first (it
/// sees happens-before, which branches of a multi-batch Case lack), then the branches share
/// the ids whose pairs all lie in one branch. Lifetime reuse restricted to each branch never
/// does worse than multi-dims alone; free lifetime reuse (which may join pairs of different
/// branches and so lose the sharing) sometimes does better. All three are computed, each
/// near-linear, and the fewest ids win. Returns (ids, ids saved).
fn lifetime_with_multi_dims(st: &mut SyncState<'_>) -> (u32, usize) {
    let kept = continuous::refresh_continuous_events(st) as usize;
    if reuse::dims_branches(st.model).is_none() {
        // No branch to share: the three candidates coincide with free lifetime reuse.
        reuse::reuse_lifetime(st);
        let count = continuous::refresh_continuous_events(st);
        return (count, kept - count as usize);
    }
    let fresh: Vec<u32> = st.syncs.iter().map(|s| s.id).collect();
    let dims_only = reuse::reuse_event_for_multi_dims_counted(st, kept as u32).count;
    let dims_ids: Vec<u32> = st.syncs.iter().map(|s| s.id).collect();
    for (s, id) in st.syncs.iter_mut().zip(&fresh) {
        s.id = *id;
    }
    // Lifetime reuse inside each branch (and among the pairs outside), then the branches share.
    let classes = reuse::dims_classes(st);
    reuse::reuse_lifetime_within(st, &classes);
    let n = continuous::refresh_continuous_events(st);
    let within = reuse::reuse_event_for_multi_dims_counted(st, n).count;
    let within_ids: Vec<u32> = st.syncs.iter().map(|s| s.id).collect();
    // Free lifetime reuse, where joining pairs across branches pays more than the sharing.
    for (s, id) in st.syncs.iter_mut().zip(&fresh) {
        s.id = *id;
    }
    reuse::reuse_lifetime(st);
    let n = continuous::refresh_continuous_events(st);
    let free = reuse::reuse_event_for_multi_dims_counted(st, n).count;
    if free >= within.min(dims_only) {
        let (count, ids) = if within <= dims_only { (within, within_ids) } else { (dims_only, dims_ids) };
        for (s, id) in st.syncs.iter_mut().zip(&ids) {
            s.id = *id;
        }
        return (count, kept - count as usize);
    }
    (free, kept - free as usize)
}

/// Runs the whole sync stage on a logical allocation and writes syncs (and, for static graphs,
/// Send/Recv nodes) into it.
///
/// Syncs the allocation already holds (given with the graph, `allocate --from sync`) are kept
/// ahead of the inserted ones, as GE's event maps would hold them, and optimised with them.
pub fn run(model: &Model, alloc: &mut Allocation, cfg: SyncConfig) -> Result<SyncReport> {
    let given = std::mem::take(&mut alloc.syncs);
    let order = (!alloc.has_ge_order()).then(|| alloc.order.clone());
    let mut st = SyncState::borrowed(model, &alloc.logical_stream, &alloc.attached, cfg.kind, order);
    st.contract = !cfg.compat_ge;
    seed(&mut st, &given);
    insert::insert_sync_events(&mut st)?;
    let mut count;
    let mut reused = 0usize;
    if cfg.compat_ge {
        ge_opt::optimize_by_send_events(&mut st);
        ge_opt::optimize_by_recv_events(&mut st);
        ge_opt::optimize_by_stream_activate(&mut st);
        ge_opt::remove_stream_switch_sends(&mut st);
        let n = continuous::refresh_continuous_events(&mut st);
        let dims = reuse::reuse_event_for_multi_dims_counted(&mut st, n);
        insert::insert_attached_value_events(&mut st)?;
        insert::cover_all_stream_by_netoutput(&mut st);
        continuous::refresh_continuous_events_keep_main(&mut st, dims.count);
        if cfg.kind == SyncKind::Event {
            reuse::event_multiplexing(&mut st)?;
        }
        count = continuous::distinct_ids(&st);
        reused += dims.saved;
    } else {
        insert::insert_attached_value_events(&mut st)?;
        insert::cover_all_stream_by_netoutput(&mut st);
        reduce::reduce_exact(&mut st);
        if cfg.event_reuse_lifetime {
            let (n, saved) = lifetime_with_multi_dims(&mut st);
            count = n;
            reused += saved;
        } else {
            let n = continuous::refresh_continuous_events(&mut st);
            let dims = reuse::reuse_event_for_multi_dims_counted(&mut st, n);
            reused += dims.saved;
            count = dims.count;
        }
    }
    // The loop's events come last, each with an id of its own, out of every optimisation and
    // reuse above: they run backwards in execution order (see insert::insert_loop_events).
    let loops = loop_activations(model, alloc, &st.facts)?;
    for r in insert::insert_loop_events(&mut st, &loops)? {
        st.syncs[r as usize].id = count;
        count += 1;
    }
    if cfg.kind == SyncKind::Notify && count > MAX_NOTIFY_NUM {
        bail!(
            Limit,
            "graph '{}' needs {count} notifies after optimisation; at most {MAX_NOTIFY_NUM} are supported (kMaxNotifyNum)",
            model.name
        );
    }
    let report = SyncReport { inserted: st.syncs.len(), kept: st.alive_count(), ids: count, reused };
    alloc.syncs = st.pairs();
    alloc.sync_kind = cfg.kind;
    if cfg.materialise {
        let nodes = materialise::generate_sync_event_nodes(&st);
        // Usually nothing was inserted before: take the list whole instead of copying it.
        if alloc.inserted.is_empty() {
            alloc.inserted = IdVec::from_vec(nodes);
        } else {
            alloc.inserted.extend(nodes);
        }
    }
    Ok(report)
}
