//! The compile-time pipeline: logical allocation, synchronisation, physical split.
//!
//! [`allocate`] picks the mode from the graph's shape and options and runs the stages up to
//! the one asked for. Modes that are not implemented yet fail with `NotImplemented`, never
//! with a silent fallback to another mode.

pub mod activate;
pub mod allocation;
pub mod dynamic;
pub mod logical;
pub mod passes;
pub mod policy;
pub mod split;
pub mod sync;

pub use allocation::{Allocation, InsertedNode, Stage, SyncEnd, SyncPair};

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
    let alloc = Allocation::from_logical(
        model,
        mode,
        logical.node_stream,
        logical.main_stream_count,
        logical.attached,
        logical.attached_count,
    );
    finish_from_logical(model, alloc, stage)
}

/// Runs the stages after logical allocation on a logical-only result.
pub(crate) fn finish_from_logical(model: &Model, mut alloc: Allocation, stage: Stage) -> Result<Allocation> {
    if stage == Stage::Logical {
        return Ok(alloc);
    }
    if alloc.logical_count > 1 || alloc.attached_count > 0 {
        sync::run(model, &mut alloc, sync::SyncConfig::from_model(model))?;
    }
    alloc.stage = stage;
    if stage >= Stage::Split {
        split::split_streams(model, &mut alloc, &split::TaskLimits::from_options(&model.options))?;
    }
    if model.options.verify {
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
