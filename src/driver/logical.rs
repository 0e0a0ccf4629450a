//! Stage 1 as the driver runs it: GE's chain, or a policy narrowed until the sync ids its
//! sync stage inserts fit `max_events`. Only the driver knows that the sync stage follows, so
//! the loop that tries it lives here; the trial that fits is the sync stage's own result, which
//! the session adopts instead of running the stage again.

use crate::compile::logical::LogicalResult;
use crate::compile::policy::{self, Bounded, PolicyReport};
use crate::compile::summary::ModelCounts;
use crate::compile::{self, Allocation, Mode};
use crate::error::Result;
use crate::graph::{Model, Options};

/// What stage 1 computed: the logical allocation, the policy's report and, when the event
/// budget needed a trial, the sync stage's result for that allocation.
pub(super) struct Assigned {
    pub alloc: Allocation,
    pub report: Option<PolicyReport>,
    pub synced: Option<Allocation>,
}

/// Stage 1 in the (non-search) mode `options` select, from GE's logical result `ge` when a
/// caller computed it already (a search shares one among its candidates).
pub(super) fn assign(model: &Model, options: &Options, ge: Option<&LogicalResult>) -> Result<Assigned> {
    let mode = Mode::of(model, options)?;
    let Mode::Policy(p) = mode else {
        let logical = match ge {
            Some(g) => g.clone(),
            None => policy::ge_logical(model, options)?,
        };
        let alloc = compile::logical_allocation(model, options, mode.name(), logical);
        return Ok(Assigned { alloc, report: None, synced: None });
    };
    let mut bounded = Bounded::new(model, options, p, ge.cloned())?;
    let max_events = options.event_budget();
    loop {
        let logical = bounded.logical();
        // Every finite budget needs the trial: the sync stage contracts task-less nodes, so a
        // dependency through one can need a sync per producer and consumer pair, more than the
        // edges that cross streams. The trial that fits is the sync stage itself, not extra work.
        let trial = max_events != u32::MAX;
        let alloc = compile::logical_allocation(model, options, mode.name(), logical);
        if !trial {
            return Ok(Assigned { alloc, report: Some(bounded.into_report()), synced: None });
        }
        let mut synced = alloc.clone();
        compile::sync_stage(model, options, &mut synced)?;
        let counts = ModelCounts::of(&synced);
        let ids = counts.event_num + counts.notify_num;
        if ids <= max_events {
            return Ok(Assigned { alloc, report: Some(bounded.into_report()), synced: Some(synced) });
        }
        bounded.fewer(ids, &counts, max_events)?;
    }
}
