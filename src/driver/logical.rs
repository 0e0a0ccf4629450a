//! Stage 1 as the driver runs it: GE's chain, or a policy narrowed until the sync ids its
//! sync stage inserts fit `max_events`. Only the driver knows that the sync stage follows, so
//! the loop that tries it lives here; the trial that fits is the sync stage's own result, which
//! the session adopts instead of running the stage again. What the sessions of one search
//! share of these trials is the search's cache, which stage 1 asks through [`TrialCache`].

use std::sync::Arc;

use crate::compile::logical::LogicalResult;
use crate::compile::order::OrderFacts;
use crate::compile::policy::{self, Bounded, PolicyInput, PolicyReport};
use crate::compile::summary::ModelCounts;
use crate::compile::sync::ModelFacts;
use crate::compile::{self, Allocation, Mode};
use crate::error::Result;
use crate::graph::{Model, NodeId, Options};

/// What stage 1 computed: the logical allocation, the policy's report and, when the event
/// budget needed a trial, the sync stage's result for that allocation.
pub(super) struct Assigned {
    pub alloc: Allocation,
    pub report: Option<PolicyReport>,
    pub synced: Option<Allocation>,
}

/// A sync-stage trial of one logical result under the event budget: it fits, and its
/// allocation with the sync stage's result is the answer; or it needs `ids` sync ids, more
/// than the budget, with the counts [`Bounded::fewer`] narrows by.
pub enum Trial {
    Fits { alloc: Box<Allocation>, synced: Box<Allocation> },
    Over { ids: u32, counts: ModelCounts },
}

/// What stage 1 shares with the other sessions of one search, whose candidates differ in the
/// policy alone: the model's order and sync facts, built once, and the event budget's trials.
/// A trial is a function of the model, the options other than the policy and the logical
/// result alone, so a cache may answer one it ran before instead of running it; a miss only
/// runs the trial again, and the answer never depends on what the cache holds. The search
/// owns the cache (`search::cache::Trials`); the session is handed one
/// ([`super::Session::with_trials`]), as it is handed its search.
pub trait TrialCache: std::fmt::Debug + Send + Sync {
    /// The model's facts for its execution order.
    fn order_facts(&self, model: &Model) -> &OrderFacts;
    /// The model's facts for its sync stage.
    fn sync_facts(&self, model: &Model) -> &ModelFacts;
    /// `run(logical)`, or what it answered before for an equal logical result run in an equal
    /// `order` (the policy's own, [`Bounded::order`]; empty where the pipeline chooses it, a
    /// function of the logical result).
    fn trial(
        &self,
        logical: LogicalResult,
        order: &[NodeId],
        run: &mut dyn FnMut(LogicalResult) -> Result<Trial>,
    ) -> Result<Trial>;
}

/// Stage 1 in the (non-search) mode `options` select, from the model's policy input (GE's
/// logical result among it) when a caller built it already (a search shares one among its
/// candidates), with the event budget's trials shared through `trials` when given.
pub(super) fn assign(
    model: &Model,
    options: &Options,
    input: Option<&Arc<PolicyInput>>,
    trials: Option<&dyn TrialCache>,
) -> Result<Assigned> {
    let mode = Mode::of(model, options)?;
    let Mode::Policy(p) = mode else {
        let logical = match input {
            Some(i) => i.base.clone(),
            None => policy::ge_logical(model, options)?,
        };
        let alloc = compile::logical_allocation(model, options, mode.name(), logical);
        return Ok(Assigned { alloc, report: None, synced: None });
    };
    let mut bounded = Bounded::new(model, options, p, input.cloned())?;
    let max_events = options.event_budget();
    let place = |logical, placed| {
        let facts = trials.map(|t| t.order_facts(model));
        compile::logical_allocation_with(model, options, mode.name(), logical, facts, placed)
    };
    loop {
        let logical = bounded.logical();
        let placed = bounded.order();
        // Every finite budget needs the trial: the sync stage contracts task-less nodes, so a
        // dependency through one can need a sync per producer and consumer pair, more than the
        // edges that cross streams. The trial that fits is the sync stage itself, not extra work.
        if max_events == u32::MAX {
            let alloc = place(logical, placed);
            return Ok(Assigned { alloc, report: Some(bounded.into_report()?), synced: None });
        }
        let order = placed.clone().unwrap_or_default();
        let mut run = |logical| -> Result<Trial> {
            let alloc = place(logical, placed.clone());
            // Over budget the copy is dropped unfinished: the trial needs only its count.
            let mut synced = alloc.clone();
            let sync_facts = trials.map(|t| t.sync_facts(model));
            let counts = compile::sync_stage_within(model, options, &mut synced, max_events, sync_facts)?;
            let ids = counts.event_num + counts.notify_num;
            Ok(if ids <= max_events {
                Trial::Fits { alloc: Box::new(alloc), synced: Box::new(synced) }
            } else {
                Trial::Over { ids, counts }
            })
        };
        let trial = match trials {
            Some(t) => t.trial(logical, &order, &mut run)?,
            None => run(logical)?,
        };
        match trial {
            Trial::Fits { alloc, synced } => {
                let report = Some(bounded.into_report()?);
                return Ok(Assigned { alloc: *alloc, report, synced: Some(*synced) });
            }
            Trial::Over { ids, counts } => bounded.fewer(ids, &counts, max_events)?,
        }
    }
}
