//! One of `auto`'s candidates through the pipeline, the stages a session runs, in a policy
//! context every candidate shares (GE's logical pass, the chain cover and the sync-id trials are
//! computed once), and stopped as soon as a budget shows the candidate cannot fit:
//! more logical streams than `max_streams` right after the logical stage (later stages never
//! change them), more sync ids than `max_events` right after the sync stage (the split only
//! adds its own events). Such a candidate would have been rejected after the whole pipeline and
//! the simulator; stopping early changes no choice, only the work.

use crate::compile::policy::{Ctx, PolicyReport};
use crate::compile::{self, Allocation, TaskCounts, TaskLimits};
use crate::error::Result;
use crate::graph::{Model, Options};

/// What a candidate's run came to.
pub enum Outcome {
    /// The whole pipeline ran: the allocation and the policy's report.
    Ran(Box<Allocation>, Option<PolicyReport>),
    /// A budget ruled it out before the pipeline ended; why.
    Over(String),
}

/// Runs `options.policy` on `model` to the last stage, as a session would, in `ctx` (built
/// for `model` with the same options but the policy).
pub fn run(model: &Model, options: &Options, limits: &TaskLimits, ctx: &Ctx<'_>) -> Result<Outcome> {
    let (max_streams, max_events) = (options.stream_budget(), options.event_budget());
    let (mut alloc, report) = compile::logical_stage_in(ctx, options)?;
    if alloc.logical_count() > max_streams {
        return Ok(Outcome::Over(format!(
            "{} logical streams exceed max_streams={max_streams}",
            alloc.logical_count()
        )));
    }
    compile::sync_stage(model, options, &mut alloc)?;
    let ids = super::auto::sync_ids(&alloc);
    if ids > max_events {
        return Ok(Outcome::Over(format!("{ids} sync ids (before the split) exceed max_events={max_events}")));
    }
    compile::split_stage(model, options, &mut alloc, limits, &TaskCounts::default())?;
    if options.verify {
        crate::driver::verify_stage(model, &alloc, limits)?;
    }
    compile::generated_stage(&mut alloc);
    Ok(Outcome::Ran(Box::new(alloc), report))
}
