//! stream-alloc: the stream allocator of the Ascend Graph Engine (GE), in Rust, with a C ABI.
//!
//! The compile-time half ([`compile`]) assigns a graph's operators to logical streams the way
//! GE's pass chain does, synchronises the streams with events or notifies, and splits streams
//! that exceed the device's task limit. The input is a [`graph::Model`] (graph JSON, or built
//! through [`graph::ModelBuilder`] / the C ABI); the output is an [`compile::Allocation`],
//! written as allocation JSON.
//!
//! `unsafe` is confined to `capi` (the C boundary) and `runtime` (device-runtime calls): the crate
//! denies it, those two modules allow it, and every other module forbids it.

#![deny(unsafe_code)]

pub mod baseline;
pub mod capi;
pub mod compile;
pub mod driver;
pub mod error;
pub mod frontend;
pub mod graph;
pub mod import;
pub mod memory;
pub mod replay;
pub mod runtime;
pub mod search;
pub mod simulate;
pub mod verify;

pub use compile::{Allocation, Stage};
pub use error::{Error, ErrorKind, Result};
pub use graph::Model;

/// Runs the pipeline up to `stage` with the options the graph declares (`Model::options`) and
/// the task limits those options give ([`compile::TaskLimits::from_options`]): a compile that
/// depends on its inputs alone. The command line and the C ABI resolve limits against the
/// device instead ([`driver::resolve_task_limits`]) and pass their own options.
pub fn allocate(model: &Model, stage: Stage) -> Result<Allocation> {
    let options = model.options.clone();
    let limits = compile::TaskLimits::from_options(&options);
    search::run(model, options, limits, stage, simulate::SimConfig::default()).map(|(a, _)| a)
}

/// [`allocate`] from the logical streams given with the graph (node `stream` and
/// `attached_stream_ids`) instead of computing them; under `memory_limit`, in the memory-aware
/// order when their own order is over it, else SA2003 ([`search::fit::run_from`]).
pub fn allocate_from_preassigned(model: &Model, stage: Stage) -> Result<Allocation> {
    let options = model.options.clone();
    let limits = compile::TaskLimits::from_options(&options);
    if options.memory_limit.is_some() && stage >= Stage::Sync {
        return search::fit::run_from(model, options, limits, Stage::Sync, stage).map(|(c, _)| c.alloc);
    }
    let mut s = driver::Session::new(model, options, limits).from_preassigned();
    s.run_to(stage)?;
    s.into_result().map(|(a, _)| a)
}
