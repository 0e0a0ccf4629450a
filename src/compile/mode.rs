//! The one mode type: GE's four allocator modes and every assignment policy beyond them.

use crate::compile::policy::{Chosen, table};
use crate::error::Result;
use crate::graph::{Model, Options, Shape};

/// How logical streams are assigned. GE's modes follow from the graph's shape and the
/// single/dynamic options; the rest are `--option policy=NAME`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// GE's `SingleStreamPass` chain (`enable_single_stream=true`).
    StaticSingle,
    /// GE's `LogicalStreamAllocator` multi-stream chain (the default).
    StaticMulti,
    /// GE's `DynamicStreamAllocator`, one stream.
    DynamicSingle,
    /// GE's `DynamicStreamAllocator` with `dynamic_multi_stream=true`.
    DynamicMulti,
    /// A policy beyond GE's chain (never GE's entry of the policy table).
    Policy(Chosen),
}

impl Mode {
    /// The mode a model is allocated in under `options`; E10001 when they name no policy.
    pub fn of(model: &Model, options: &Options) -> Result<Mode> {
        let policy = table::resolve(options)?;
        if !policy.is_ge() {
            return Ok(Mode::Policy(policy));
        }
        Ok(match (model.root().shape, options.enable_single_stream, options.dynamic_multi_stream) {
            (Shape::Static, true, _) => Mode::StaticSingle,
            (Shape::Static, false, _) => Mode::StaticMulti,
            (Shape::Dynamic, _, false) => Mode::DynamicSingle,
            (Shape::Dynamic, _, true) => Mode::DynamicMulti,
        })
    }

    /// The name allocation JSON gives the mode.
    pub fn name(self) -> String {
        match self {
            Mode::StaticSingle => "static-single".into(),
            Mode::StaticMulti => "static-multi".into(),
            Mode::DynamicSingle => "dynamic-single".into(),
            Mode::DynamicMulti => "dynamic-multi".into(),
            Mode::Policy(p) => p.name(),
        }
    }

    /// `auto` chooses by running whole pipelines under the simulator: a search, run by the
    /// driver above this module and the simulator.
    pub fn is_search(self) -> bool {
        matches!(self, Mode::Policy(p) if p.is_search())
    }
}
