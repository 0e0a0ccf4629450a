//! The driver: the one place that runs the compile stages in order ([`Session`]), and the
//! edge where the inputs a compile needs from the process are resolved ([`resolve_task_limits`]).
//!
//! The layers are in the README's Layout (and checked by `tests/it/layers.rs`): the driver sits
//! above compile, simulate, verify, runtime and memory, below the searches. Nothing below the
//! driver asks the device runtime for limits.

#![forbid(unsafe_code)]

mod logical;
pub mod session;

pub use logical::{RunTrial, Trial, TrialCache};
pub use session::{Compiled, Found, NodeInfo, Search, Session, SessionStage, Stages};

use crate::bail;
use crate::compile::steps::{StepCounts, StepTrace};
use crate::compile::{Allocation, Stage, TaskLimits};
use crate::error::Result;
use crate::graph::{Model, Options};
use crate::memory::{AllocationDocument, MemoryPlan};

/// The pipeline from stage `from` on, the stages before it taken from the graph (`allocate
/// --from`): `Stage::Sync` starts from the logical streams the graph gives (and keeps its
/// events), `Stage::Split` also takes its events as the syncs. Runs up to `stage`, in the
/// default mode or under `compat=ge` as `options` say. The trace has GE's counts of the given
/// input and after each stage run (`InsertSyncNodesByLogicStream`,
/// `SplitStreamAndRefreshTaskDef`): events and notifies before and after the split.
pub fn run_from(
    model: &Model,
    options: Options,
    limits: TaskLimits,
    from: Stage,
    stage: Stage,
) -> Result<(Compiled, StepTrace)> {
    if !matches!(from, Stage::Sync | Stage::Split) {
        crate::bail!(InvalidOption, "a run starts from stage sync or split, not {}", from.as_str());
    }
    if stage < from {
        crate::bail!(
            InvalidOption,
            "a run from stage {} cannot stop before it, at stage {}",
            from.as_str(),
            stage.as_str()
        );
    }
    let session = Session::new(model, options, limits);
    let mut s = if from == Stage::Split { session.from_given_syncs() } else { session.from_preassigned() };
    s.run_to(Stage::Logical)?;
    let mut trace = StepTrace { input: StepCounts::of(model, s.allocation()?), after: Vec::new() };
    if from == Stage::Sync {
        s.insert_syncs()?;
        trace.after.push(("InsertSyncNodesByLogicStream", StepCounts::of(model, s.allocation()?)));
    } else {
        s.insert_given_syncs()?;
    }
    if stage == Stage::Sync {
        if s.options().verify {
            verify_stage(model, s.allocation()?, s.limits(), s.memory_plan()?)?;
        }
    } else {
        s.run_to(stage)?;
        trace.after.push(("SplitStreamAndRefreshTaskDef", StepCounts::of(model, s.allocation()?)));
    }
    Ok((s.into_compiled()?, trace))
}

/// The `verify` option: the independent checker on the allocation JSON with the memory plan
/// `plan` (the run's own); the first violation becomes the error. After the split, rule 7 is
/// checked with the `limits` the split used (before it, streams are logical and hold no task
/// limit).
pub fn verify_stage(model: &Model, alloc: &Allocation, limits: &TaskLimits, plan: Option<&MemoryPlan>) -> Result<()> {
    let checked = if alloc.stage() >= Stage::Split {
        crate::verify::tasks::Limits {
            normal: Some(limits.normal),
            huge: limits.huge,
            unlimited_depth: limits.unlimited_depth,
        }
    } else {
        crate::verify::tasks::Limits::default()
    };
    let report = crate::verify::check_with_limits(model, &alloc.document(model, plan).to_value(), checked);
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

/// The task limits a compile splits with, resolved at the edge (command line, C ABI): each of
/// `max_task_count`, `max_huge_task_count` and `unlimited_depth` that is given wins; the rest
/// is asked of the device-runtime seam (GE's `GetMaxStreamAndTask` and capability query) when
/// the process has a runtime, and follows [`TaskLimits::from_options`] when it has none. With
/// all three given the seam is not asked, so such a compile never depends on the machine. A
/// runtime whose normal-stream query fails fails the compile, as in GE.
pub fn resolve_task_limits(o: &Options) -> Result<TaskLimits> {
    if o.max_task_count.is_some() && o.max_huge_task_count.is_some() && o.unlimited_depth.is_some() {
        return Ok(TaskLimits::from_options(o));
    }
    match crate::runtime::device_limits() {
        Ok(None) => Ok(TaskLimits::from_options(o)),
        Ok(Some(device)) => Ok(TaskLimits {
            normal: o.max_task_count.unwrap_or(device.max_tasks),
            huge: o.max_huge_task_count.or(device.max_huge_tasks),
            unlimited_depth: o.unlimited_depth.unwrap_or(device.unlimited_depth),
        }),
        Err(e) => crate::bail!(
            Failed,
            "asking the device runtime for the task limits failed: {}; give the options max_task_count, \
             max_huge_task_count and unlimited_depth to compile without asking it",
            e.message
        ),
    }
}
