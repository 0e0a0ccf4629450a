//! Physical stream split: GE's `SplitStreamAndRefreshTaskDef` (ge-compiler.md §8) with
//! `AssignSingleStream`, `SplitStreams`, `UpdateActiveStreams`, the second
//! `GenerateSyncEventNodes(false)` and `PostProcessOfSplitStreams`.
//!
//! Input: an [`Allocation`] whose `logical_stream`, `attached`, `syncs` and `sync_count` are
//! filled (and Send/Recv nodes of the logical syncs in `inserted`). Output: physical `stream`,
//! attached ids and sync ends rewritten to physical streams, `physical_count`,
//! `split_to_logic`, `huge_streams`, `activations`, and the split's syncs with their Send/Recv
//! nodes.
//!
//! Task accounting: every task the split leaves on a physical stream is counted, as the device
//! runs it: a node's own tasks (`_node_sqe_num`, `_hccl_task_num`, `tasks`, or the host's
//! counts), each inserted Send/SendNotify 1 and Recv/RecvNotify 2 (wait plus reset) on the
//! stream it sits on, whether or not its node has tasks of its own, each StreamActive's charge,
//! attached streams likewise, and the split's own event at each cut (a wait, 2, opening the new
//! piece; a record, 1, closing the old one). No piece ends above `max_task_count` − 27 unless
//! one node alone (with its own Send/Recv nodes) is bigger.
//!
//! `compat=ge`: GE counts the Send/Recv nodes that exist when it splits but not the events it
//! adds at its own cuts, so a GE piece can end up to 3 tasks over the limit (GE's unit test of
//! 403 five-task nodes: 199 + 199 + 5 nodes, the middle stream 2 + 995 + 1 = 998 > 997). The
//! choice here is to stay within the limit: `compat=ge` keeps GE's cut points wherever GE's
//! pieces stay within it and cuts one node earlier where they would not (199 + 198 + 6).
//!
//! A node and its own Send/Recv nodes stay on one piece while they fit in one together. A node
//! waiting for (or recording to) more streams than that (resnet50_train's all-reduce buckets
//! under min-streams wait on 46 streams and record to 130, against a room of 37 at limit 64)
//! is split into one entry per wait, the node, and one per record ([`Part`]), and the plan cuts
//! between them as GE does; a sync whose Send or Recv lands on another piece than its node
//! names that Send/Recv node ([`Allocation::end_via`], allocation-json.md).

mod ids;
pub mod plan;

use std::collections::{BTreeMap, BTreeSet};

use super::activate::{self, SUBGRAPH_FIRST_ACTIVE, SplitPieces};
use super::allocation::{Allocation, InsertedKind, InsertedNode, Naming, SyncEnd, SyncPair, sync_node_name};
use crate::bail;
use crate::error::Result;
use crate::graph::csr::Csr;
use crate::graph::device::MAX_NOTIFY_NUM;
use crate::graph::tasks::{attached_task_count, main_task_count};
use crate::graph::{EventId, GraphId, IdVec, InsertedId, Model, NodeId, Options, StreamId, SyncKind};
use plan::Cut;

/// `kReservedTaskNum`: 7 DFX (profiling) tasks plus 20 spare per stream.
pub const RESERVED_TASKS: u32 = 7 + 20;
/// GE's runtime test stub: tasks per normal stream.
pub const GE_STUB_NORMAL_TASKS: u32 = 1024;
/// GE's runtime test stub: tasks per huge stream.
pub const GE_STUB_HUGE_TASKS: u32 = 8192;

/// Per-stream task limits (`rtGetMaxStreamAndTask` for normal and huge streams) and whether
/// the device splits on its own (`FEATURE_TYPE_PERSISTENT_STREAM_UNLIMITED_DEPTH`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskLimits {
    pub normal: u32,
    /// `None`: the device has no huge streams (the huge query fails; GE only warns).
    pub huge: Option<u32>,
    /// Streams of unlimited depth: GE skips the split and only post-processes.
    pub unlimited_depth: bool,
}

impl TaskLimits {
    /// Limits from `max_task_count` / `max_huge_task_count` / `unlimited_depth` alone. With
    /// neither task count set, GE's test-stub answers (1024 normal, 8192 huge) stand in for the
    /// device; with only the normal limit set, the device has no huge streams unless
    /// `max_huge_task_count` says so.
    pub fn from_options(o: &Options) -> Self {
        let unlimited_depth = o.unlimited_depth.unwrap_or(false);
        match (o.max_task_count, o.max_huge_task_count) {
            (None, None) => {
                TaskLimits { normal: GE_STUB_NORMAL_TASKS, huge: Some(GE_STUB_HUGE_TASKS), unlimited_depth }
            }
            (normal, huge) => TaskLimits { normal: normal.unwrap_or(GE_STUB_NORMAL_TASKS), huge, unlimited_depth },
        }
    }
}

/// Operator types that may never start a split stream (label-based control flow).
const NO_SPLIT_TYPES: &[&str] = &["LabelSet", "LabelGotoEx", "LabelSwitchByIndex"];

/// Task counts the host reports after its task generation (GE: the `TaskDef`s counted by
/// `CollectTaskSize`), overriding a node's `tasks` / `attached_tasks` and its count attributes
/// for the split. Kept outside the [`Model`] so the graph stays as the host built it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskCounts {
    /// Main-stream tasks per node.
    pub main: BTreeMap<NodeId, u64>,
    /// Tasks per (node, position in the node's attached list).
    pub attached: BTreeMap<(NodeId, usize), u64>,
}

impl TaskCounts {
    fn main_of(&self, model: &Model, n: NodeId) -> Result<u64> {
        match self.main.get(&n) {
            Some(&t) => Ok(t),
            None => main_task_count(model, n),
        }
    }
    fn attached_of(&self, model: &Model, n: NodeId, i: usize) -> Result<u64> {
        match self.attached.get(&(n, i)) {
            Some(&t) => Ok(t),
            None => attached_task_count(model, n, i),
        }
    }
}

/// The Send/Recv nodes of `alloc.syncs` (SendNotify/RecvNotify under `alloc.sync_kind`), as
/// GE's `GenerateSyncEventNodes` makes them before the split, which counts their tasks on
/// their streams: in node order, a node's Sends before its Recvs, GE's names. For an
/// allocation whose syncs were given rather than inserted by the sync stage (tests, tools).
pub fn insert_sync_nodes(model: &Model, alloc: &mut Allocation) {
    let (send, recv) = InsertedKind::sync_pair(alloc.sync_kind);
    let mut pos: IdVec<NodeId, usize> = IdVec::filled(model.nodes.len(), 0);
    for (i, &n) in alloc.order(model).iter().enumerate() {
        pos[n] = i;
    }
    // (anchor position, 0 send / 1 recv, sync) in GE's order.
    let mut ends: Vec<(usize, usize, usize)> =
        alloc.syncs.iter().enumerate().flat_map(|(i, p)| [(pos[p.from.node], 0, i), (pos[p.to.node], 1, i)]).collect();
    ends.sort_unstable();
    let mut uses: BTreeMap<(usize, EventId), u32> = BTreeMap::new();
    for (_, side, i) in ends {
        let p = alloc.syncs[i];
        let end = if side == 0 { p.from } else { p.to };
        let Some(stream) = end.attached.or(alloc.logical_stream[end.node]) else { continue };
        let k = uses.entry((side, p.id)).or_default();
        *k += 1;
        alloc.inserted.push(InsertedNode {
            naming: Naming::Sync { graph: GraphId::ROOT, reuse: (*k > 1).then(|| *k - 1) },
            kind: if side == 0 { send } else { recv },
            graph: model.nodes[end.node].graph,
            stream,
            logical_stream: stream,
            anchor: end.node,
            before: side == 1,
            sync_id: Some(p.id),
        });
    }
}

/// One node's share of one stream.
#[derive(Clone, Copy, Debug)]
struct Entry {
    node: NodeId,
    /// `Some(a)`: the node's attached logical stream `a`.
    attached: Option<StreamId>,
    /// Position of that attached stream in the node's list.
    attached_index: usize,
    tasks: u64,
    /// Of `tasks`, those of the node's own Send/Recv nodes on this stream.
    sync_tasks: u64,
    part: Part,
}

/// What of a node an entry holds. A node and its own Send/Recv nodes are one entry, so a cut
/// never falls between them, unless they do not fit in one piece together: then the entry is
/// split into one entry per wait, the node, and one per record, as GE (whose Send/Recv are
/// graph nodes by the time it splits) would cut between them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    /// The node with its own Send/Recv nodes.
    Whole,
    /// One of the node's own Recv nodes.
    Wait(InsertedId),
    /// The node alone, its Send/Recv nodes in entries of their own.
    Own,
    /// One of the node's own Send nodes.
    Record(InsertedId),
}

impl Entry {
    fn end(&self) -> SyncEnd {
        SyncEnd { node: self.node, attached: self.attached }
    }

    /// The inserted node the entry is, if it is one.
    fn inserted(&self) -> Option<InsertedId> {
        match self.part {
            Part::Wait(i) | Part::Record(i) => Some(i),
            Part::Whole | Part::Own => None,
        }
    }
}

/// Runs the split stage: activation lists, `AssignSingleStream`, the split of every stream
/// over its task limit, the activation update, Send/Recv nodes of the split syncs, and
/// `PostProcessOfSplitStreams`. With `unlimited_depth` only the activation lists and the
/// post-processing run (the runtime splits internally).
pub fn split_streams(model: &Model, options: &Options, alloc: &mut Allocation, limits: &TaskLimits) -> Result<()> {
    split_streams_with(model, options, alloc, limits, &TaskCounts::default(), None)
}

/// [`split_streams`] with the host's task counts (the staged session's split), the split's
/// events reusing ids by lifetime where an id each would exceed `reuse_ids_over`
/// ([`SplitIds::reuse_over`]).
pub fn split_streams_with(
    model: &Model,
    options: &Options,
    alloc: &mut Allocation,
    limits: &TaskLimits,
    counts: &TaskCounts,
    reuse_ids_over: Option<u32>,
) -> Result<()> {
    split_steps(
        model,
        options,
        alloc,
        limits,
        counts,
        SplitSteps { ids: SplitIds { reuse_over: reuse_ids_over, ..SplitIds::default() }, ..SplitSteps::ALL },
    )
    .map(|_| ())
}

/// Which of GE's split-stage steps a call runs: the pipeline runs them all at once,
/// `stream-alloc pass` one at a time (ge-compiler.md §8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitSteps {
    /// The activation lists on logical streams first ([`activate::assign_logical`]); without
    /// it the split reads the lists the allocation holds.
    pub activate: bool,
    /// `AssignSingleStream`: with `enable_single_stream`, stream 0 becomes a huge stream when
    /// its tasks exceed the normal limit. Alone it leaves the huge logical streams in
    /// `huge_streams` for the split.
    pub assign_single: bool,
    /// `SplitStreams`, the Send/Recv nodes of its events (`GenerateSyncEventNodes(false)`) and
    /// `PostProcessOfSplitStreams`.
    pub split: bool,
    /// `UpdateActiveStreams`.
    pub update_active: bool,
    /// Where the split's new streams and events take their ids.
    pub ids: SplitIds,
}

/// The ids the split hands out: GE's counters where `stream-alloc pass` carries them, and
/// whether the split's events may share ids.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SplitIds {
    /// The first id a new stream may take (GE's `stream_num_`); never below one past the ids
    /// in use.
    pub next_stream: Option<u32>,
    /// The first id of the split's events in event mode (GE's `event_num_`, which removals do
    /// not lower); never below one past the ids in use.
    pub event_base: Option<u32>,
    /// The split's events reuse ids by lifetime where an id each would take the ids (events
    /// plus notifies) over this many: a policy's event budget where its ids may be reused
    /// ([`ids`]; docs/policies.md, "The split's events"). `None`: an id each, as GE.
    pub reuse_over: Option<u32>,
}

impl SplitSteps {
    /// `SplitStreamAndRefreshTaskDef` whole.
    pub const ALL: SplitSteps = SplitSteps {
        activate: true,
        assign_single: true,
        split: true,
        update_active: true,
        ids: SplitIds { next_stream: None, event_base: None, reuse_over: None },
    };
}

/// The split-stage `steps` on `alloc`; returns the pieces the split added to each logical
/// stream (what `UpdateActiveStreams` reads), empty when `steps.split` is off. GE's
/// `SplitStreamAndRefreshTaskDef`, one function per step it names.
pub fn split_steps(
    model: &Model,
    options: &Options,
    alloc: &mut Allocation,
    limits: &TaskLimits,
    counts: &TaskCounts,
    steps: SplitSteps,
) -> Result<SplitPieces> {
    let nodes = model.nodes.len();
    if alloc.logical_stream.len() != nodes || alloc.attached.len() != nodes || alloc.stream.len() != nodes {
        bail!(Internal, "allocation tables do not match the model's {nodes} nodes");
    }
    let sizes = collect_task_size(model, alloc, counts)?;
    let space =
        if steps.activate { activate::assign_logical(model, alloc)? } else { activate::stream_space(model, alloc) };
    let space = space.max(steps.ids.next_stream.unwrap_or(0));

    if limits.unlimited_depth {
        if steps.split {
            alloc.stream = alloc.logical_stream.clone();
            alloc.split_to_logic = (0..space).map(StreamId).collect();
            post_process(alloc)?;
        }
        return Ok(Vec::new());
    }
    let huge = assign_single_stream(model, options, alloc, limits, &sizes, steps.assign_single)?;
    if !steps.split {
        alloc.huge_streams = huge.into_iter().map(StreamId).collect();
        return Ok(Vec::new());
    }
    let limit = |s: u32| -> u64 {
        match limits.huge.filter(|_| huge.contains(&s)) {
            Some(h) => u64::from(h),
            None => u64::from(limits.normal),
        }
    };

    // SplitStreams: the stream contents, their cuts, the new streams and what moves onto them.
    let order = alloc.order(model).into_owned();
    let StreamContents { mut streams, main_entry } = stream_entries(model, alloc, counts, &sizes, &order, space)?;
    refresh_stream_active_task_size(model, alloc, &mut streams, &main_entry, &sizes.main_syncs, &limit);
    let separated = separate_oversized(alloc, &mut streams, &limit);
    let cuts = plan_all(model, options.compat_ge, alloc, &streams, &limit)?;
    let new_streams = number_new_streams(nodes, &order, &streams, &cuts, space);
    let event_ids = number_split_events(model, alloc, &streams, &cuts, &new_streams.numbered, steps);
    let logical_attached = alloc.attached.clone();
    let (pieces, part_stream) = set_stream_ids(alloc, &streams, &cuts, &new_streams.piece_id, space);
    alloc.huge_streams = new_streams
        .split_to_logic
        .iter()
        .enumerate()
        .filter(|(_, l)| huge.contains(&l.0))
        .map(|(p, _)| StreamId(p as u32))
        .collect();
    alloc.split_to_logic = new_streams.split_to_logic;
    refresh_sync_ends(alloc, &logical_attached, &part_stream, separated);
    add_split_events(model, alloc, &logical_attached, &streams, &cuts, &new_streams.numbered, &event_ids);
    check_notify_count(model, alloc)?;

    if steps.update_active {
        activate::update_after_split(model, alloc, &pieces)?;
    }
    post_process(alloc)?;
    Ok(pieces)
}

/// Tasks each node puts on its streams before the split adds its own events.
struct TaskSizes {
    /// The node's own tasks on its main stream.
    main: IdVec<NodeId, u64>,
    /// Tasks of the node's Send/Recv nodes on its main stream.
    main_syncs: IdVec<NodeId, u64>,
    /// Tasks of the node's Send/Recv nodes on each of its attached streams.
    attached_syncs: BTreeMap<(NodeId, StreamId), u64>,
}

/// GE's `CollectTaskSize`: each node's own main-stream tasks (a node with tasks but no stream
/// moves to stream 0) and those of the sync nodes already inserted, which run on their anchor's
/// streams: every Send is an event-record task, every Recv an event-wait plus its reset (the
/// Send/Recv nodes that exist when GE splits), whatever tasks the anchor has of its own.
fn collect_task_size(model: &Model, alloc: &mut Allocation, counts: &TaskCounts) -> Result<TaskSizes> {
    let nodes = model.nodes.len();
    let mut main: IdVec<NodeId, u64> = IdVec::filled(nodes, 0);
    for n in model.nodes.ids() {
        main[n] = counts.main_of(model, n)?;
        if main[n] > 0 && alloc.logical_stream[n].is_none() {
            alloc.logical_stream[n] = Some(StreamId(0));
            alloc.logical_count = alloc.logical_count.max(1);
        }
    }
    let mut main_syncs: IdVec<NodeId, u64> = IdVec::filled(nodes, 0);
    let mut attached_syncs: BTreeMap<(NodeId, StreamId), u64> = BTreeMap::new();
    for ins in &alloc.inserted {
        let Some(cost) = ins.kind.sync_tasks() else { continue };
        let n = ins.anchor;
        if alloc.logical_stream[n] == Some(ins.logical_stream) {
            main_syncs[n] += cost;
        } else if alloc.attached[n].contains(&ins.logical_stream) {
            *attached_syncs.entry((n, ins.logical_stream)).or_default() += cost;
        }
    }
    Ok(TaskSizes { main, main_syncs, attached_syncs })
}

/// GE's `AssignSingleStream` (when `run` and `enable_single_stream`): stream 0 becomes a huge
/// stream when its tasks and the reserve exceed the normal limit and the device has huge
/// streams. Returns the huge logical streams, those the allocation already holds included.
fn assign_single_stream(
    model: &Model,
    options: &Options,
    alloc: &Allocation,
    limits: &TaskLimits,
    sizes: &TaskSizes,
    run: bool,
) -> Result<BTreeSet<u32>> {
    let mut huge: BTreeSet<u32> = alloc.huge_streams.iter().map(|s| s.0).collect();
    if run && options.enable_single_stream {
        if alloc.logical_count > 1 {
            bail!(Failed, "The number of ts streams is {}, only one is supported", alloc.logical_count);
        }
        let total: u64 = model
            .nodes
            .ids()
            .filter(|&n| alloc.logical_stream[n].is_some())
            .map(|n| sizes.main[n] + sizes.main_syncs[n])
            .sum();
        if total + u64::from(RESERVED_TASKS) > u64::from(limits.normal) && limits.huge.is_some() {
            huge.insert(0);
        }
    }
    Ok(huge)
}

/// Every logical stream's entries in execution order, and each node's position on its main
/// stream.
struct StreamContents {
    streams: Vec<Vec<Entry>>,
    main_entry: IdVec<NodeId, usize>,
}

/// The contents of every logical stream in execution order (GE's `stream_2_nodes` as
/// `SplitStreamForOneNode` meets the nodes): one entry per node on its main stream and one per
/// attached stream.
fn stream_entries(
    model: &Model,
    alloc: &Allocation,
    counts: &TaskCounts,
    sizes: &TaskSizes,
    order: &[NodeId],
    space: u32,
) -> Result<StreamContents> {
    let mut streams: Vec<Vec<Entry>> = vec![Vec::new(); space as usize];
    let mut main_entry: IdVec<NodeId, usize> = IdVec::filled(model.nodes.len(), 0);
    for &n in order {
        if let Some(s) = alloc.logical_stream[n] {
            main_entry[n] = streams[s.index()].len();
            let tasks = sizes.main[n] + sizes.main_syncs[n];
            streams[s.index()].push(Entry {
                node: n,
                attached: None,
                attached_index: 0,
                tasks,
                sync_tasks: sizes.main_syncs[n],
                part: Part::Whole,
            });
        }
        for (i, &a) in alloc.attached[n].iter().enumerate() {
            let sync_tasks = sizes.attached_syncs.get(&(n, a)).copied().unwrap_or(0);
            let tasks = counts.attached_of(model, n, i)? + sync_tasks;
            streams[a.index()].push(Entry {
                node: n,
                attached: Some(a),
                attached_index: i,
                tasks,
                sync_tasks,
                part: Part::Whole,
            });
        }
    }
    Ok(StreamContents { streams, main_entry })
}

/// GE's `RefreshStreamActiveNodeTaskSize`: each StreamActive is charged ceil(tasks of each
/// stream it activates / limit), room for the activations the split adds.
fn refresh_stream_active_task_size(
    model: &Model,
    alloc: &Allocation,
    streams: &mut [Vec<Entry>],
    main_entry: &IdVec<NodeId, usize>,
    main_syncs: &IdVec<NodeId, u64>,
    limit: &dyn Fn(u32) -> u64,
) {
    let totals: Vec<u64> = streams.iter().map(|e| e.iter().map(|e| e.tasks).sum()).collect();
    for (n, list) in &alloc.activations {
        if model.nodes[*n].op_type != "StreamActive" || list.is_empty() {
            continue;
        }
        let charge: u64 =
            list.iter().map(|s| totals.get(s.index()).copied().unwrap_or(0).div_ceil(limit(s.0).max(1))).sum();
        if let Some(s) = alloc.logical_stream[*n] {
            streams[s.index()][main_entry[*n]].tasks = charge + main_syncs[*n];
        }
    }
}

/// The split's new streams: ids in trigger order, as GE's `SplitNodesToNewStream` takes
/// `++last_stream_id` when the node loop meets each cut.
struct NewStreams {
    /// (rank of the triggering node, 0 main / 1 + attached position, stream, cut index), sorted.
    numbered: Vec<(u32, usize, usize, usize)>,
    /// The physical id of each cut's new piece, by stream and cut index.
    piece_id: Vec<Vec<StreamId>>,
    /// The logical stream of every physical one (identity for the first `space`).
    split_to_logic: Vec<StreamId>,
}

/// Numbers the new streams of `cuts` (see [`NewStreams`]).
fn number_new_streams(
    nodes: usize,
    order: &[NodeId],
    streams: &[Vec<Entry>],
    cuts: &[Vec<Cut>],
    space: u32,
) -> NewStreams {
    let mut rank: IdVec<NodeId, u32> = IdVec::filled(nodes, 0);
    for (i, &n) in order.iter().enumerate() {
        rank[n] = i as u32;
    }
    let mut numbered: Vec<(u32, usize, usize, usize)> = Vec::new();
    for (s, stream_cuts) in cuts.iter().enumerate() {
        for (k, c) in stream_cuts.iter().enumerate() {
            let e = &streams[s][c.trigger];
            let sub = e.attached.map_or(0, |_| e.attached_index + 1);
            numbered.push((rank[e.node], sub, s, k));
        }
    }
    numbered.sort_unstable();
    let mut piece_id: Vec<Vec<StreamId>> = cuts.iter().map(|c| vec![StreamId(0); c.len()]).collect();
    let mut split_to_logic: Vec<StreamId> = (0..space).map(StreamId).collect();
    for &(_, _, s, k) in &numbered {
        piece_id[s][k] = StreamId(split_to_logic.len() as u32);
        split_to_logic.push(StreamId(s as u32));
    }
    NewStreams { numbered, piece_id, split_to_logic }
}

/// GE's `StreamUtils::SetStreamId` for every entry: the physical stream of each node and
/// attached stream. Returns the pieces each logical stream gained (with their first node, for
/// the activation update) and the physical streams of the Send/Recv nodes in entries of their
/// own.
fn set_stream_ids(
    alloc: &mut Allocation,
    streams: &[Vec<Entry>],
    cuts: &[Vec<Cut>],
    piece_id: &[Vec<StreamId>],
    space: u32,
) -> (SplitPieces, BTreeMap<InsertedId, StreamId>) {
    let mut stream = alloc.logical_stream.clone();
    let mut pieces: SplitPieces = vec![Vec::new(); space as usize];
    let mut part_stream: BTreeMap<InsertedId, StreamId> = BTreeMap::new();
    for (s, entries) in streams.iter().enumerate() {
        let mut current = StreamId(s as u32);
        let mut next_cut = 0;
        for (p, e) in entries.iter().enumerate() {
            if next_cut < cuts[s].len() && cuts[s][next_cut].pos == p {
                current = piece_id[s][next_cut];
                pieces[s].push((current, e.node));
                next_cut += 1;
            }
            match (e.inserted(), e.attached) {
                (Some(i), _) => {
                    part_stream.insert(i, current);
                }
                (None, None) => stream[e.node] = Some(current),
                (None, Some(_)) => alloc.attached[e.node][e.attached_index] = current,
            }
        }
    }
    alloc.stream = stream;
    (pieces, part_stream)
}

/// A sync end on its node's physical stream: an attached end follows its attached stream's
/// position in the node's list (`logical_attached`, the list before the split).
fn physical_end(alloc: &Allocation, logical_attached: &IdVec<NodeId, Vec<StreamId>>, end: SyncEnd) -> SyncEnd {
    let attached = end
        .attached
        .map(|a| logical_attached[end.node].iter().position(|&x| x == a).map_or(a, |i| alloc.attached[end.node][i]));
    SyncEnd { node: end.node, attached }
}

/// Sync ends and inserted sync nodes follow their node onto its physical stream (in GE they
/// are graph nodes the split moves). With `separated` entries, an end whose Send/Recv node
/// landed on another piece than its node is that Send/Recv node ([`Allocation::end_via`]).
fn refresh_sync_ends(
    alloc: &mut Allocation,
    logical_attached: &IdVec<NodeId, Vec<StreamId>>,
    part_stream: &BTreeMap<InsertedId, StreamId>,
    separated: bool,
) {
    // A Send/Recv node of its own by (anchor, logical stream, sync id, before the anchor).
    let part_of: BTreeMap<(NodeId, StreamId, Option<EventId>, bool), InsertedId> = part_stream
        .keys()
        .map(|&i| {
            let ins = &alloc.inserted[i];
            ((ins.anchor, ins.logical_stream, ins.sync_id, ins.before), i)
        })
        .collect();
    for i in 0..alloc.syncs.len() {
        let p = alloc.syncs[i];
        let (from, to) = (physical_end(alloc, logical_attached, p.from), physical_end(alloc, logical_attached, p.to));
        if separated {
            for (logical, physical, to_side) in [(p.from, from, false), (p.to, to, true)] {
                let Some(ls) = logical.attached.or(alloc.logical_stream[logical.node]) else { continue };
                let Some(&ins) = part_of.get(&(logical.node, ls, Some(p.id), to_side)) else { continue };
                let node_stream = physical.attached.or(alloc.stream[logical.node]);
                if node_stream != Some(part_stream[&ins]) {
                    alloc.end_via.insert((i as u32, to_side), ins);
                }
            }
        }
        alloc.syncs[i] = SyncPair { id: p.id, from, to };
    }
    for i in alloc.inserted.ids() {
        let ins = &alloc.inserted[i];
        if !ins.kind.is_sync() {
            continue;
        }
        if let Some(&p) = part_stream.get(&i) {
            alloc.inserted[i].stream = p;
            continue;
        }
        let n = ins.anchor;
        let physical = if alloc.logical_stream[n] == Some(ins.logical_stream) {
            alloc.stream[n]
        } else {
            logical_attached[n].iter().position(|&a| a == ins.logical_stream).map(|i| alloc.attached[n][i])
        };
        if let Some(p) = physical {
            alloc.inserted[i].stream = p;
        }
    }
}

/// The ids of the split's events, one per cut that needs a sync in new-stream order (the
/// order [`add_split_events`] adds them in): in event mode after the logical ids from
/// `event_base`, in notify mode from 0 apart; by lifetime where an id each would exceed
/// `steps.ids.reuse_over` ([`ids`]), which marks the allocation's ids reused when some are.
fn number_split_events(
    model: &Model,
    alloc: &mut Allocation,
    streams: &[Vec<Entry>],
    cuts: &[Vec<Cut>],
    numbered: &[(u32, usize, usize, usize)],
    steps: SplitSteps,
) -> Vec<EventId> {
    let planned: Vec<ids::PlannedEvent> = numbered
        .iter()
        .filter_map(|&(_, _, s, k)| {
            let c = cuts[s][k];
            c.sync.then_some(ids::PlannedEvent { stream: s, from: c.pos - 1, to: c.pos })
        })
        .collect();
    let notify = alloc.sync_kind == SyncKind::Notify;
    let first = if notify { 0 } else { alloc.sync_count().max(steps.ids.event_base.unwrap_or(0)) };
    let each = planned.len() as u32 + if notify { alloc.sync_count() } else { first };
    // Streams that activations start may run again (loops) or not at all: no reuse there.
    let reuse = steps.ids.reuse_over.is_some_and(|max| each > max)
        && alloc.activations.is_empty()
        && alloc.inserted_activations.is_empty();
    let (ids, shared) = ids::split_event_ids(model, alloc, streams, &planned, first, reuse);
    alloc.split_lifetime_ids = shared;
    ids
}

/// GE's `AddEventIdWhenStreamSplit` at every cut that needs a sync, then
/// `GenerateSyncEventNodes(false)` for those syncs: in new-stream order, a record after the
/// piece's last entry and a wait before the new piece's first, each with its Send/Recv node,
/// with the ids of [`number_split_events`].
fn add_split_events(
    model: &Model,
    alloc: &mut Allocation,
    logical_attached: &IdVec<NodeId, Vec<StreamId>>,
    streams: &[Vec<Entry>],
    cuts: &[Vec<Cut>],
    numbered: &[(u32, usize, usize, usize)],
    event_ids: &[EventId],
) {
    let notify = alloc.sync_kind == SyncKind::Notify;
    let mut planned = Vec::new();
    // The Send/Recv node each end of a planned sync is, when it is one.
    let mut planned_via: Vec<(Option<InsertedId>, Option<InsertedId>)> = Vec::new();
    for &(_, _, s, k) in numbered {
        let c = cuts[s][k];
        if c.sync {
            let (before, after) = (&streams[s][c.pos - 1], &streams[s][c.pos]);
            let from = physical_end(alloc, logical_attached, before.end());
            planned.push((s, from, physical_end(alloc, logical_attached, after.end())));
            planned_via.push((before.inserted(), after.inserted()));
        }
    }
    // Where the split's own Send/Recv go among the inserted nodes: next to the Send/Recv node
    // an end is (records after it, waits before it), else last (see `place_inserted`).
    let mut placed: Vec<(InsertedId, InsertedId, bool)> = Vec::new();
    let mut names = SplitNames::new(model, alloc, &planned, event_ids);
    if !notify {
        alloc.split_syncs_from = Some(alloc.syncs.len());
    }
    for (k, &(s, from, to)) in planned.iter().enumerate() {
        let id = event_ids[k];
        let pair = SyncPair { id, from, to };
        let index = (alloc.syncs.len() + alloc.split_events.len()) as u32;
        if notify {
            alloc.split_events.push(pair)
        } else {
            alloc.syncs.push(pair)
        }
        let (from_via, to_via) = planned_via[k];
        for (end, via, to_side, kind) in
            [(from, from_via, false, InsertedKind::Send), (to, to_via, true, InsertedKind::Recv)]
        {
            let node = &model.nodes[end.node];
            let reuse = names.take(&model.graphs[node.graph].name, kind, id);
            let mut physical = match end.attached {
                None => alloc.stream[end.node].unwrap_or(StreamId(s as u32)),
                Some(a) => a,
            };
            let mut before = to_side;
            if let Some(v) = via {
                alloc.end_via.insert((index, to_side), v);
                physical = alloc.inserted[v].stream;
                before = alloc.inserted[v].before;
                placed.push((InsertedId::new(alloc.inserted.len()), v, to_side));
            }
            alloc.inserted.push(InsertedNode {
                naming: Naming::Sync { graph: node.graph, reuse },
                kind,
                graph: node.graph,
                stream: physical,
                logical_stream: StreamId(s as u32),
                anchor: end.node,
                before,
                sync_id: Some(id),
            });
        }
    }
    if !placed.is_empty() {
        place_inserted(alloc, &placed);
    }
}

/// Allocation JSON numbers the split's events after the notifies in one id space (rule 6: at
/// most kMaxNotifyNum ids in notify mode), so in notify mode the two together must fit.
fn check_notify_count(model: &Model, alloc: &Allocation) -> Result<()> {
    if alloc.sync_kind == SyncKind::Notify && alloc.document_sync_count() as usize > MAX_NOTIFY_NUM {
        bail!(
            Limit,
            "graph '{}' needs {} notifies and {} split events; allocation JSON numbers them together \
             ({} sync ids) and allows at most {} in notify mode (kMaxNotifyNum, allocation-json.md rule 6)",
            model.name,
            alloc.sync_count(),
            alloc.split_events.len(),
            alloc.document_sync_count(),
            MAX_NOTIFY_NUM
        );
    }
    Ok(())
}

/// Moves each of the split's Send/Recv nodes `(new, next_to, wait)` next to the Send/Recv node
/// its end is: a wait right before it, a record right after it. Inserted nodes are listed, and
/// queued on their stream, beside their anchor in id order, so the order is the ids' order:
/// they are renumbered, and every id held elsewhere with them.
fn place_inserted(alloc: &mut Allocation, placed: &[(InsertedId, InsertedId, bool)]) {
    let mut key: Vec<(u32, i8)> = (0..alloc.inserted.len() as u32).map(|i| (i, 0)).collect();
    for &(new, next_to, wait) in placed {
        key[new.index()] = (next_to.0, if wait { -1 } else { 1 });
    }
    let mut order: Vec<u32> = (0..key.len() as u32).collect();
    order.sort_by_key(|&i| (key[i as usize], i));
    let mut renumber = vec![InsertedId(0); key.len()];
    let old = std::mem::take(&mut alloc.inserted);
    let mut slots: Vec<Option<InsertedNode>> = old.into_vec().into_iter().map(Some).collect();
    for (to, &from) in order.iter().enumerate() {
        renumber[from as usize] = InsertedId(to as u32);
        alloc.inserted.push(slots[from as usize].take().expect("each inserted node moves once"));
    }
    for v in alloc.end_via.values_mut() {
        *v = renumber[v.index()];
    }
    for (i, _) in &mut alloc.inserted_activations {
        *i = renumber[i.index()];
    }
}

/// Splits every entry that cannot fit in a middle piece with its own Send/Recv nodes (on a
/// stream that needs cutting) into one entry per wait, the node, and one per record
/// ([`Part`]). Returns whether any entry was split.
fn separate_oversized(alloc: &Allocation, streams: &mut [Vec<Entry>], limit: &dyn Fn(u32) -> u64) -> bool {
    let reserve = u64::from(RESERVED_TASKS);
    let middle = plan::SPLIT_RECV_TASKS + plan::SPLIT_SEND_TASKS;
    // Separating helps only where a piece can hold one wait between the split's own events.
    let oversized = |e: &Entry, cap: u64| e.sync_tasks > 0 && e.tasks + middle > cap && 2 + middle <= cap;
    let mut wanted: BTreeSet<(NodeId, StreamId)> = BTreeSet::new();
    for (s, entries) in streams.iter().enumerate() {
        let cap = limit(s as u32).saturating_sub(reserve);
        if entries.iter().map(|e| e.tasks).sum::<u64>() <= cap {
            continue;
        }
        wanted.extend(entries.iter().filter(|e| oversized(e, cap)).map(|e| (e.node, StreamId(s as u32))));
    }
    if wanted.is_empty() {
        return false;
    }
    // The Send/Recv nodes of each such entry, in their order beside the node.
    let mut own: BTreeMap<(NodeId, StreamId), Vec<InsertedId>> = BTreeMap::new();
    for (i, ins) in alloc.inserted.enumerate() {
        if ins.kind.sync_tasks().is_some() && wanted.contains(&(ins.anchor, ins.logical_stream)) {
            own.entry((ins.anchor, ins.logical_stream)).or_default().push(i);
        }
    }
    for (s, entries) in streams.iter_mut().enumerate() {
        if !entries.iter().any(|e| wanted.contains(&(e.node, StreamId(s as u32))) && e.part == Part::Whole) {
            continue;
        }
        let mut out = Vec::with_capacity(entries.len());
        for e in entries.drain(..) {
            let Some(list) = own.get(&(e.node, StreamId(s as u32))).filter(|_| e.part == Part::Whole) else {
                out.push(e);
                continue;
            };
            let part = |i: InsertedId, part: Part| Entry {
                tasks: alloc.inserted[i].kind.sync_tasks().unwrap_or(0),
                sync_tasks: 0,
                part,
                ..e
            };
            out.extend(list.iter().filter(|&&i| alloc.inserted[i].before).map(|&i| part(i, Part::Wait(i))));
            out.push(Entry { tasks: e.tasks - e.sync_tasks, sync_tasks: 0, part: Part::Own, ..e });
            out.extend(list.iter().filter(|&&i| !alloc.inserted[i].before).map(|&i| part(i, Part::Record(i))));
        }
        *entries = out;
    }
    true
}

/// Names of the split's Send/Recv nodes: `<graph>_<Send|Recv>_<id>`, with `_Reuse_<k>` (k from
/// 0) while the name is taken. Only names that can collide with such a base are collected from
/// the nodes inserted before, so the cost follows the split's syncs, not the graph's.
struct SplitNames {
    taken: BTreeSet<String>,
}

/// `s` as (text, trailing decimal number), when it ends in digits that fit a `u64`.
fn split_number(s: &str) -> Option<(&str, u64)> {
    let bytes = s.as_bytes();
    let mut at = bytes.len();
    let mut value = 0u64;
    let mut scale = 1u64;
    while at > 0 && bytes[at - 1].is_ascii_digit() {
        at -= 1;
        let digit = u64::from(bytes[at] - b'0');
        value = value.checked_add(digit.checked_mul(scale)?)?;
        scale = scale.saturating_mul(10);
    }
    (at < bytes.len()).then(|| (&s[..at], value))
}

impl SplitNames {
    /// `ids`: the ids of the split's events, in their order.
    fn new(model: &Model, alloc: &Allocation, planned: &[(usize, SyncEnd, SyncEnd)], ids: &[EventId]) -> Self {
        let mut bases: BTreeSet<String> = BTreeSet::new();
        for (&(_, from, to), &id) in planned.iter().zip(ids) {
            for (end, kind) in [(from, InsertedKind::Send), (to, InsertedKind::Recv)] {
                let graph = &model.graphs[model.nodes[end.node].graph].name;
                bases.insert(sync_node_name(graph, kind, id, None));
            }
        }
        let mut taken = BTreeSet::new();
        // The split's ids, sorted: a range test first, as they are one range unless reused.
        let mut sorted: Vec<u64> = ids.iter().map(|id| u64::from(id.0)).collect();
        sorted.sort_unstable();
        sorted.dedup();
        let (lo, hi) = (sorted.first().copied().unwrap_or(1), sorted.last().copied().unwrap_or(0));
        let is_split_id = |id: u64| (lo..=hi).contains(&id) && sorted.binary_search(&id).is_ok();
        if !bases.is_empty() {
            for i in &alloc.inserted {
                // A sync node this pipeline named ends its base name in its own sync id: one
                // outside the split's ids cannot collide, and its name need not be read.
                if i.kind.is_sync() && i.sync_id.is_some_and(|id| !is_split_id(u64::from(id.0))) {
                    continue;
                }
                let name = i.name(model);
                let mut base = name.as_ref();
                if let Some((head, _)) = split_number(base).filter(|(h, _)| h.ends_with("_Reuse_")) {
                    base = &head[..head.len() - "_Reuse_".len()];
                }
                // Cheap test first: a base ends in one of the split's ids.
                if split_number(base).is_some_and(|(_, id)| is_split_id(id)) && bases.contains(base) {
                    taken.insert(name.to_string());
                }
            }
        }
        SplitNames { taken }
    }

    /// Takes the first free name of a `kind` node of sync `id` in `graph`; returns its
    /// `_Reuse_` number, if any.
    fn take(&mut self, graph: &str, kind: InsertedKind, id: EventId) -> Option<u32> {
        let mut reuse = None;
        let mut name = sync_node_name(graph, kind, id, reuse);
        while self.taken.contains(&name) {
            reuse = Some(reuse.map_or(0, |k| k + 1));
            name = sync_node_name(graph, kind, id, reuse);
        }
        self.taken.insert(name);
        reuse
    }
}

/// Cut points of every stream: GE's loop under `compat=ge`, else [`plan::min_sync`] (falling
/// back to GE's loop where no plan keeps every piece within the limit).
fn plan_all(
    model: &Model,
    compat: bool,
    alloc: &Allocation,
    streams: &[Vec<Entry>],
    limit: &dyn Fn(u32) -> u64,
) -> Result<Vec<Vec<Cut>>> {
    let reserve = u64::from(RESERVED_TASKS);
    // Built on the first stream that needs cutting (most streams of most graphs fit).
    let mut orders: Option<SyncOrders> = None;

    let mut all = Vec::with_capacity(streams.len());
    for (s, entries) in streams.iter().enumerate() {
        let cap = limit(s as u32).saturating_sub(reserve);
        let c: Vec<u64> = entries.iter().map(|e| e.tasks).collect();
        let total: u64 = c.iter().sum();
        if total <= cap {
            all.push(Vec::new());
            continue;
        }
        let mut forbidden: Vec<bool> = entries
            .iter()
            .map(|e| {
                let node = &model.nodes[e.node];
                e.inserted().is_none()
                    && (!node.subgraphs.is_empty()
                        || node.ge_attrs.flag(SUBGRAPH_FIRST_ACTIVE)
                        || NO_SPLIT_TYPES.contains(&node.op_type.as_str()))
            })
            .collect();
        let labels: Vec<Option<&str>> =
            entries.iter().map(|e| model.nodes[e.node].attrs.continuous_stream_label.as_deref()).collect();
        if compat {
            all.push(plan::ge_greedy(&c, &forbidden, &labels, cap));
            continue;
        }
        // Keep each continuous label's run on one piece where it fits in one.
        let mut runs: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
        for (p, l) in labels.iter().enumerate() {
            if let Some(l) = l {
                runs.entry(l).and_modify(|r| r.1 = p).or_insert((p, p));
            }
        }
        let mut inside = vec![0i64; c.len() + 1];
        for &(first, last) in runs.values() {
            if last > first && c[first..=last].iter().sum::<u64>() <= cap {
                inside[first + 1] += 1;
                inside[last + 1] -= 1;
            }
        }
        let mut depth = 0;
        for (p, f) in forbidden.iter_mut().enumerate() {
            depth += inside[p];
            *f |= depth > 0;
        }
        let orders = orders.get_or_insert_with(|| SyncOrders::new(model, alloc, streams));
        // Existing syncs order two whole nodes; a Send/Recv entry of its own is not an end.
        let mut free = |p: usize| {
            p > 0
                && entries[p - 1].inserted().is_none()
                && entries[p].inserted().is_none()
                && orders.orders(entries[p - 1].end(), entries[p].end())
        };
        match plan::min_sync(&c, &forbidden, &mut free, cap) {
            Some(cuts) => all.push(cuts),
            None => all.push(plan::ge_greedy(&c, &forbidden, &labels, cap)),
        }
    }
    Ok(all)
}

/// The logical syncs by end and the place of every end in its stream: enough to ask whether
/// existing syncs already order two neighbours of a stream.
struct SyncOrders {
    /// Place (stream, position) of each node's main-stream entry.
    pos_main: IdVec<NodeId, Option<(u32, u32)>>,
    pos_attached: BTreeMap<(NodeId, StreamId), (u32, u32)>,
    /// Receivers of the syncs each main-stream end sends, and senders of those it receives
    /// (CSR by node); ends on attached streams are rare and kept in maps.
    main_outs: Csr<NodeId, SyncEnd>,
    main_ins: Csr<NodeId, SyncEnd>,
    attached_outs: BTreeMap<SyncEnd, Vec<SyncEnd>>,
    attached_ins: BTreeMap<SyncEnd, Vec<SyncEnd>>,
}

impl SyncOrders {
    fn new(model: &Model, alloc: &Allocation, streams: &[Vec<Entry>]) -> Self {
        let mut pos_main: IdVec<NodeId, Option<(u32, u32)>> = IdVec::filled(model.nodes.len(), None);
        let mut pos_attached = BTreeMap::new();
        for (s, entries) in streams.iter().enumerate() {
            for (p, e) in entries.iter().enumerate().filter(|(_, e)| e.inserted().is_none()) {
                let at = (s as u32, p as u32);
                match e.attached {
                    None => pos_main[e.node] = Some(at),
                    Some(a) => {
                        pos_attached.insert((e.node, a), at);
                    }
                }
            }
        }
        let nodes = model.nodes.len();
        let syncs = &alloc.syncs;
        let main_outs =
            Csr::group(nodes, syncs.iter().filter(|p| p.from.attached.is_none()).map(|p| (p.from.node, p.to)));
        let main_ins = Csr::group(nodes, syncs.iter().filter(|p| p.to.attached.is_none()).map(|p| (p.to.node, p.from)));
        let mut attached_outs: BTreeMap<SyncEnd, Vec<SyncEnd>> = BTreeMap::new();
        let mut attached_ins: BTreeMap<SyncEnd, Vec<SyncEnd>> = BTreeMap::new();
        for p in syncs {
            if p.from.attached.is_some() {
                attached_outs.entry(p.from).or_default().push(p.to);
            }
            if p.to.attached.is_some() {
                attached_ins.entry(p.to).or_default().push(p.from);
            }
        }
        SyncOrders { pos_main, pos_attached, main_outs, main_ins, attached_outs, attached_ins }
    }

    fn pos(&self, end: SyncEnd) -> Option<(u32, u32)> {
        match end.attached {
            None => self.pos_main[end.node],
            Some(a) => self.pos_attached.get(&(end.node, a)).copied(),
        }
    }

    fn outs(&self, end: SyncEnd) -> &[SyncEnd] {
        match end.attached {
            None => self.main_outs.of(end.node),
            Some(_) => self.attached_outs.get(&end).map_or(&[][..], Vec::as_slice),
        }
    }

    fn ins(&self, end: SyncEnd) -> &[SyncEnd] {
        match end.attached {
            None => self.main_ins.of(end.node),
            Some(_) => self.attached_ins.get(&end).map_or(&[][..], Vec::as_slice),
        }
    }

    /// Do existing syncs order `a` before `b`? True when `a` signals some node v at or before a
    /// node w on v's stream that signals `b`: a cut between them then needs no sync of its own.
    fn orders(&self, a: SyncEnd, b: SyncEnd) -> bool {
        let waits = self.outs(a);
        if waits.is_empty() {
            return false;
        }
        self.ins(b)
            .iter()
            .filter_map(|&w| self.pos(w))
            .any(|(t, i)| waits.iter().filter_map(|&v| self.pos(v)).any(|(tv, iv)| tv == t && iv <= i))
    }
}

/// `PostProcessOfSplitStreams`: at least one stream. Nodes with tasks already moved to stream 0
/// before the split; nodes without a device task keep -1 in allocation JSON (GE moves every node,
/// but a stream id on a node with no task carries no meaning for the runtime or the checker).
fn post_process(alloc: &mut Allocation) -> Result<()> {
    if alloc.split_to_logic.is_empty() {
        alloc.split_to_logic.push(StreamId(0));
    }
    Ok(())
}
