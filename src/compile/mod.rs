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
pub mod split;

pub use allocation::{Allocation, InsertedNode, Stage, SyncEnd, SyncPair};

use crate::bail;
use crate::error::Result;
use crate::graph::{Model, Policy, Shape};

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
    let mut alloc = Allocation::from_logical(
        model,
        mode,
        logical.node_stream,
        logical.main_stream_count,
        logical.attached,
        logical.attached_count,
    );
    if stage == Stage::Logical {
        return Ok(alloc);
    }
    // One main stream and no attached streams: there is nothing to synchronise, and the stream
    // stays one physical stream until the split stage lands.
    if alloc.logical_count > 1 || alloc.attached_count > 0 {
        bail!(NotImplemented, "stage '{}' with more than one stream is not implemented yet", stage.as_str());
    }
    alloc.stage = stage;
    if stage >= Stage::Split {
        split::split_streams(model, &mut alloc, &split::TaskLimits::from_options(&model.options))?;
    }
    Ok(alloc)
}
