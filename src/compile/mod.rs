//! The compile-time pipeline's stages: logical allocation, synchronisation, physical split.
//!
//! Each stage is a function of explicit inputs: the immutable [`Model`], the compile
//! [`Options`] and, for the split, the [`TaskLimits`]. Nothing here asks the device runtime or
//! reads process state, so a compile's output depends on its inputs alone. The order in which
//! stages run, and the searches over whole runs (`policy=auto`), belong to the driver
//! ([`crate::driver`]).

#![forbid(unsafe_code)]

pub mod activate;
pub mod allocation;
pub mod dynamic;
pub mod libstdcxx;
pub mod logical;
pub mod memory_order;
pub mod mode;
pub mod order;
pub mod passes;
pub mod policy;
pub mod schedule;
pub mod split;
pub mod steps;
pub mod summary;
pub mod sync;

pub use allocation::{Allocation, AllocationJson, InsertedKind, InsertedNode, NodeSyncs, Stage, SyncEnd, SyncPair};
pub use mode::Mode;
pub use split::{TaskCounts, TaskLimits};

use crate::bail;
use crate::error::Result;
use crate::graph::{EventId, ExecutionOrder, IdVec, MemoryLimit, Model, NodeId, Options, StreamId, tasks};

/// Stage 1's allocation from a logical result: the streams as `logical` assigns them, named
/// after the mode, in the execution order [`choose_order`] gives. GE's result comes from
/// [`policy::ge_logical`], a policy's from [`policy::Bounded`]; the driver runs the stage
/// (the event budget's loop and `auto`'s search among it).
pub fn logical_allocation(
    model: &Model,
    options: &Options,
    mode: impl Into<String>,
    logical: logical::LogicalResult,
) -> Allocation {
    logical_allocation_with(model, options, mode, logical, None, None)
}

/// [`logical_allocation`] with the model's [`order::OrderFacts`] when the caller keeps them
/// (`None`: computed here if the order needs them), and the order the policy placed the root
/// graph's nodes in when it fixes one (`placed`, [`policy::Assignment::root_order`]).
pub fn logical_allocation_with(
    model: &Model,
    options: &Options,
    mode: impl Into<String>,
    logical: logical::LogicalResult,
    facts: Option<&order::OrderFacts>,
    placed: Option<Vec<NodeId>>,
) -> Allocation {
    let mut alloc = Allocation::from_logical(
        mode,
        options.event,
        logical.node_stream,
        logical.main_stream_count,
        logical.attached,
        logical.attached_count,
    );
    choose_order_with(model, options, &mut alloc, facts, placed);
    alloc
}

/// The execution order of an assignment, computed or given: GE's under `compat=ge`, and
/// wherever at most one stream runs (nothing overlaps, so the order changes no makespan);
/// otherwise the critical path first ([`order::critical_path_first`]), a function of the
/// model and the logical streams alone, so a run from given streams orders as the whole
/// pipeline does.
pub(crate) fn choose_order(model: &Model, options: &Options, alloc: &mut Allocation) {
    choose_order_with(model, options, alloc, None, None);
}

/// [`choose_order`] from the model's [`order::OrderFacts`] when the caller keeps them, and
/// with the order a policy placed the root graph's nodes in (`placed`: each once, a
/// topological order; nested graphs keep GE's) in place of the critical path first: a policy
/// that fixes its order (`fifo:N`) runs in it wherever the pipeline would run its own
/// schedule, and nowhere else.
pub(crate) fn choose_order_with(
    model: &Model,
    options: &Options,
    alloc: &mut Allocation,
    facts: Option<&order::OrderFacts>,
    placed: Option<Vec<NodeId>>,
) {
    if options.execution_order == ExecutionOrder::Memory && !options.compat_ge {
        let limit = match options.memory_limit {
            Some(MemoryLimit::Bytes(b)) => b,
            _ => 0,
        };
        let (order, _) = memory_order::memory_first(model, &alloc.logical_stream, limit);
        alloc.order = if order == model.all_nodes() { Vec::new() } else { order };
        return;
    }
    if options.compat_ge || alloc.logical_count + alloc.attached_count <= 1 {
        return;
    }
    if let Some(root) = placed {
        let order = order::with_root_order(model, root);
        alloc.order = if order == model.all_nodes() { Vec::new() } else { order };
        return;
    }
    alloc.order = match facts {
        Some(f) => order::critical_path_first_with(model, &alloc.logical_stream, f),
        None => order::critical_path_first(model, &alloc.logical_stream),
    }
    .unwrap_or_default();
}

/// Stage 2, GE's `InsertSyncNodesByLogicStream`: nothing to synchronise on one stream without
/// attached streams.
pub fn sync_stage(model: &Model, options: &Options, alloc: &mut Allocation) -> Result<()> {
    in_sync_stage(
        model,
        alloc,
        |a| passes::sync_stage(model, options, a, sync::SyncConfig::new(model, options)).map(drop),
        |_| (),
    )
}

/// Stage 2's frame, the same for the whole stage and the event budget's trials: task nodes no
/// policy placed get a stream and the logical streams are checked against the device; `steps`
/// run where there is something to synchronise (more than one stream, or attached streams),
/// `alone` answers where there is not; the allocation is then at the sync stage.
fn in_sync_stage<T>(
    model: &Model,
    alloc: &mut Allocation,
    steps: impl FnOnce(&mut Allocation) -> Result<T>,
    alone: impl FnOnce(&Allocation) -> T,
) -> Result<T> {
    place_unassigned_task_nodes(model, alloc)?;
    check_stream_count(model, alloc.logical_count + alloc.attached_count, "logical")?;
    let out = if alloc.logical_count > 1 || alloc.attached_count > 0 { steps(alloc)? } else { alone(alloc) };
    alloc.stage = Stage::Sync;
    Ok(out)
}

/// [`sync_stage`] as a trial of the event budget runs it: the allocation's counts after the
/// stage, the same as [`summary::ModelCounts::of`] the allocation [`sync_stage`] makes, and the
/// allocation complete only when its sync ids (events plus notifies) are at most `max_ids`.
/// Over that, the allocation lacks the stage's pairs and Send/Recv nodes: a trial over budget
/// needs only the count, and drops the allocation. `facts`: the model's
/// [`sync::ModelFacts`], when the caller runs the stage more than once on one model.
pub fn sync_stage_within(
    model: &Model,
    options: &Options,
    alloc: &mut Allocation,
    max_ids: u32,
    facts: Option<&sync::ModelFacts>,
) -> Result<summary::ModelCounts> {
    in_sync_stage(
        model,
        alloc,
        |a| passes::sync_stage_within(model, options, a, sync::SyncConfig::new(model, options), max_ids, facts),
        summary::ModelCounts::of,
    )
}

/// [`sync_stage_within`] one id per sync and then, over `max_ids`, with ids reused by lifetime
/// on the same streams, the steps the two share run once ([`passes::sync_stage_reusing`]): the
/// counts one id per sync, and the reused counts when those were over; `alloc` complete with
/// the first that fits.
pub fn sync_stage_reusing(
    model: &Model,
    options: &Options,
    alloc: &mut Allocation,
    max_ids: u32,
    facts: Option<&sync::ModelFacts>,
) -> Result<(summary::ModelCounts, Option<summary::ModelCounts>)> {
    in_sync_stage(
        model,
        alloc,
        |a| passes::sync_stage_reusing(model, options, a, (max_ids, facts)),
        |a| (summary::ModelCounts::of(a), None),
    )
}

/// Stage 3, GE's `SplitStreamAndRefreshTaskDef`, with the host's task counts where it gave them;
/// the split's events reuse ids by lifetime where an id each would exceed `reuse_ids_over` (a
/// policy's event budget, where its ids may be reused: [`split::SplitIds::reuse_over`]).
pub fn split_stage(
    model: &Model,
    options: &Options,
    alloc: &mut Allocation,
    limits: &TaskLimits,
    tasks: &TaskCounts,
    reuse_ids_over: Option<u32>,
) -> Result<()> {
    alloc.stage = Stage::Split;
    split::split_streams_with(model, options, alloc, limits, tasks, reuse_ids_over)?;
    let streams = alloc.physical_count() + alloc.attached_count;
    // Ids reused because the event budget bound keep every logical stream; past the device's
    // stream limit, cutting streams to one id per sync (the older rule) may still fit.
    if alloc.ids_reused_by_lifetime() && !options.event_reuse_lifetime {
        return check_stream_count(model, streams, "physical").map_err(|mut e| {
            e.message.push_str(
                ", or event_reuse=never (its sync ids were reused by lifetime to keep its streams \
                 within max_events; never cuts the streams to one id per sync instead)",
            );
            e
        });
    }
    check_stream_count(model, streams, "physical")
}

/// Stage 4, GE's `GenerateSyncEventNodes` handing the Send/Recv nodes to the host: the sync
/// nodes exist since the sync stage, so the allocation is complete as it stands.
pub fn generated_stage(alloc: &mut Allocation) {
    alloc.stage = Stage::All;
}

/// The device creates fewer than `MAX_STREAM_NUM` streams: an assignment needing more is an
/// error before the stages that size tables by streams run on it, not a failure at load time.
fn check_stream_count(model: &Model, streams: u32, what: &str) -> Result<()> {
    let max = crate::graph::device::MAX_STREAM_NUM;
    if streams as usize >= max {
        bail!(
            Limit,
            "'{}' needs {streams} {what} streams; the device creates at most {} (MAX_STREAM_NUM {max}): \
             choose a policy with fewer streams, e.g. policy=budget:N",
            model.name,
            max - 1
        );
    }
    Ok(())
}

/// A node with device tasks but no logical stream runs on stream 0. GE makes this move in
/// `SplitStreams`, after its events are inserted, so an edge into or out of such a node can go
/// unsynchronised; making it before sync insertion lets the syncs cover it. A task-less node
/// left on no stream downstream of a moved node then follows its first producer that has a
/// stream, as UpdateForSkippedEnginePass would have placed it, so no edge from a stream ends
/// on no stream.
fn place_unassigned_task_nodes(model: &Model, alloc: &mut Allocation) -> Result<()> {
    let mut moved = false;
    for n in model.nodes.ids() {
        if alloc.logical_stream[n].is_none() && tasks::main_task_count(model, n)? > 0 {
            alloc.logical_stream[n] = Some(StreamId(0));
            alloc.stream[n] = Some(StreamId(0));
            alloc.logical_count = alloc.logical_count.max(1);
            if alloc.split_to_logic.is_empty() {
                alloc.split_to_logic.push(StreamId(0));
            }
            moved = true;
        }
    }
    if moved {
        for n in model.all_nodes() {
            if alloc.logical_stream[n].is_none() {
                if let Some(s) = model.in_edges(n).find_map(|e| alloc.logical_stream[e.src]) {
                    alloc.logical_stream[n] = Some(s);
                    alloc.stream[n] = Some(s);
                }
            }
        }
    }
    Ok(())
}

/// The logical stage taken from the graph instead of computed: the streams given with it
/// (`stream` and `attached_stream_ids` of each node) and the events given with it, for graphs
/// whose assignment was made elsewhere and for running the later stages in isolation.
pub fn preassigned_logical(model: &Model, options: &Options) -> Result<Allocation> {
    let stream: IdVec<NodeId, Option<StreamId>> = model.nodes.iter().map(|n| n.stream).collect();
    let attached: IdVec<NodeId, Vec<StreamId>> = model.nodes.iter().map(|n| n.attached_stream_ids.clone()).collect();
    let main_count = stream.iter().flatten().map(|s| s.0 + 1).max().unwrap_or(0);
    let attached_max = attached.iter().flatten().map(|s| s.0 + 1).max().unwrap_or(0);
    // Later stages size per-stream tables (and the checker streams² clocks) by the largest id:
    // refuse an id no real assignment reaches before allocating for it.
    let limit = crate::graph::device::MAX_LOGICAL_STREAMS as u32;
    if let Some(n) = model
        .nodes
        .iter()
        .find(|n| n.stream.is_some_and(|s| s.0 >= limit) || n.attached_stream_ids.iter().any(|s| s.0 >= limit))
    {
        bail!(
            Limit,
            "node '{}': preassigned stream id {} is beyond the {limit} logical streams supported",
            n.name,
            n.stream.into_iter().chain(n.attached_stream_ids.iter().copied()).map(|s| s.0).max().unwrap_or(0)
        );
    }
    if let Some((n, s)) = model
        .nodes
        .iter()
        .flat_map(|n| n.attached_stream_ids.iter().map(move |s| (n, s)))
        .find(|(_, s)| s.0 < main_count)
    {
        bail!(
            Field,
            "node '{}': attached stream {s} collides with main stream ids 0..{main_count}; attached ids follow the main ones",
            n.name
        );
    }
    let mut alloc = Allocation::from_logical(
        Mode::of(model, options)?.name(),
        options.event,
        stream,
        main_count,
        attached,
        attached_max.saturating_sub(main_count),
    );
    alloc.syncs = given_syncs(model);
    Ok(alloc)
}

/// The events given with the graph (`events`) as sync pairs, by id (pairs sharing an id in the
/// order given): what GE's event maps hold before the steps after logical allocation.
pub fn given_syncs(model: &Model) -> Vec<SyncPair> {
    let mut v: Vec<SyncPair> = model
        .events
        .iter()
        .map(|e| SyncPair {
            id: EventId(e.id),
            from: SyncEnd { node: e.from, attached: e.from_attached },
            to: SyncEnd { node: e.to, attached: e.to_attached },
        })
        .collect();
    v.sort_by_key(|p| p.id);
    v
}

/// Stage 2 taken from the graph instead of computed (`allocate --from split`): the syncs are
/// the events given with it, each with its Send/Recv node, as GE's graph holds them when it
/// splits. A dynamic root keeps per-node ids only, as its sync stage does.
pub fn given_sync_stage(model: &Model, options: &Options, alloc: &mut Allocation) -> Result<()> {
    check_stream_count(model, alloc.logical_count + alloc.attached_count, "logical")?;
    let cfg = sync::SyncConfig::new(model, options);
    alloc.sync_kind = cfg.kind;
    if cfg.materialise {
        split::insert_sync_nodes(model, alloc);
    }
    alloc.stage = Stage::Sync;
    Ok(())
}
