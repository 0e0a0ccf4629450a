//! The compile-time pipeline: logical allocation, synchronisation, physical split.
//!
//! [`allocate`] picks the mode from the graph's shape and options and runs the stages up to
//! the one asked for. Modes that are not implemented yet fail with `NotImplemented`, never
//! with a silent fallback to another mode.

#![forbid(unsafe_code)]

pub mod activate;
pub mod allocation;
pub mod dynamic;
pub mod logical;
pub mod passes;
pub mod policy;
pub mod session;
pub mod split;
pub mod summary;
pub mod sync;

pub use allocation::{Allocation, InsertedNode, Stage, SyncEnd, SyncPair};
pub use session::CompileSession;

use crate::bail;
use crate::error::Result;
use crate::graph::{IdVec, Model, NodeId, Policy, Shape, StreamId};

/// The mode a model is allocated in, as allocation JSON names it.
pub fn mode_name(model: &Model) -> String {
    let o = &model.options;
    if o.policy != Policy::Ge {
        return o.policy.name();
    }
    match (model.root().shape, o.enable_single_stream, o.dynamic_multi_stream) {
        (Shape::Static, true, _) => "static-single".into(),
        (Shape::Static, false, _) => "static-multi".into(),
        (Shape::Dynamic, _, false) => "dynamic-single".into(),
        (Shape::Dynamic, _, true) => "dynamic-multi".into(),
    }
}

/// Runs the pipeline up to `stage`.
pub fn allocate(model: &Model, stage: Stage) -> Result<Allocation> {
    if model.options.policy != Policy::Ge {
        return policy::allocate(model, stage).map(|(alloc, _)| alloc);
    }
    finish_from_logical(model, logical_stage(model)?, stage)
}

/// Stage 1, logical allocation in GE's mode for the model: the staged session's first call and
/// the start of [`allocate`]. (Other policies run whole, through [`allocate`].)
pub fn logical_stage(model: &Model) -> Result<Allocation> {
    let mode = mode_name(model);
    let logical = match mode.as_str() {
        "static-single" => logical::assign_single_stream(model)?,
        "static-multi" => logical::assign_multi_stream(model)?,
        "dynamic-single" | "dynamic-multi" => dynamic::assign(model)?,
        other => bail!(
            NotImplemented,
            "mode '{other}' is not implemented yet; this build allocates with GE's policy (policy=ge)"
        ),
    };
    Ok(Allocation::from_logical(
        model,
        mode,
        logical.node_stream,
        logical.main_stream_count,
        logical.attached,
        logical.attached_count,
    ))
}

/// Stage 2, GE's `InsertSyncNodesByLogicStream`: nothing to synchronise on one stream without
/// attached streams.
pub fn sync_stage(model: &Model, alloc: &mut Allocation) -> Result<()> {
    place_unassigned_task_nodes(model, alloc)?;
    check_stream_count(model, alloc.logical_count + alloc.attached_count, "logical")?;
    if alloc.logical_count > 1 || alloc.attached_count > 0 {
        sync::run(model, alloc, sync::SyncConfig::from_model(model))?;
    }
    alloc.stage = Stage::Sync;
    Ok(())
}

/// Stage 3, GE's `SplitStreamAndRefreshTaskDef`, with the host's task counts where it gave them.
pub fn split_stage(model: &Model, alloc: &mut Allocation, tasks: &split::TaskCounts) -> Result<()> {
    alloc.stage = Stage::Split;
    split::split_streams_with(model, alloc, &split::TaskLimits::resolve(&model.options)?, tasks)?;
    check_stream_count(model, alloc.physical_count + alloc.attached_count, "physical")
}

/// The device creates fewer than `MAX_STREAM_NUM` streams: an assignment needing more is an
/// error before the stages that size tables by streams run on it, not a failure at load time.
fn check_stream_count(model: &Model, streams: u32, what: &str) -> Result<()> {
    let max = crate::runtime::consts::MAX_STREAM_NUM;
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

/// The `verify` option: the independent checker on the allocation JSON; the first violation
/// becomes the error.
pub fn verify_stage(model: &Model, alloc: &Allocation) -> Result<()> {
    let report = crate::verify::check(model, &alloc.to_json(model));
    if let Some(v) = report.violations.first() {
        bail!(
            Failed,
            "verify: the allocation of '{}' breaks rule {} ({} violation(s)); first: {}",
            model.name,
            v.rule,
            report.violations.len(),
            v.message
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
        if alloc.logical_stream[n].is_none() && split::main_task_count(model, n)? > 0 {
            alloc.logical_stream[n] = Some(StreamId(0));
            alloc.stream[n] = Some(StreamId(0));
            alloc.logical_count = alloc.logical_count.max(1);
            alloc.physical_count = alloc.physical_count.max(1);
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

/// Runs the stages after logical allocation on a logical-only result.
pub(crate) fn finish_from_logical(model: &Model, mut alloc: Allocation, stage: Stage) -> Result<Allocation> {
    if stage == Stage::Logical {
        return Ok(alloc);
    }
    sync_stage(model, &mut alloc)?;
    if stage >= Stage::Split {
        split_stage(model, &mut alloc, &split::TaskCounts::default())?;
    }
    alloc.stage = stage;
    if model.options.verify {
        verify_stage(model, &alloc)?;
    }
    Ok(alloc)
}

/// Runs the stages after logical allocation on the logical streams given with the graph
/// (`stream` and `attached_stream_ids` of each node): the entry point for graphs whose
/// assignment was made elsewhere, and for testing the later stages in isolation.
pub fn allocate_from_preassigned(model: &Model, stage: Stage) -> Result<Allocation> {
    let stream: IdVec<NodeId, Option<StreamId>> = model.nodes.iter().map(|n| n.stream).collect();
    let attached: IdVec<NodeId, Vec<StreamId>> = model.nodes.iter().map(|n| n.attached_stream_ids.clone()).collect();
    let main_count = stream.iter().flatten().map(|s| s.0 + 1).max().unwrap_or(0);
    let attached_max = attached.iter().flatten().map(|s| s.0 + 1).max().unwrap_or(0);
    // Later stages size per-stream tables (and the checker streams² clocks) by the largest id:
    // refuse an id no real assignment reaches before allocating for it.
    let limit = crate::verify::rules::MAX_STREAMS as u32;
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
    let alloc = Allocation::from_logical(
        model,
        mode_name(model),
        stream,
        main_count,
        attached,
        attached_max.saturating_sub(main_count),
    );
    finish_from_logical(model, alloc, stage)
}
