//! Stage 1 as the driver runs it: GE's chain, or a policy narrowed until the sync ids its
//! sync stage inserts fit `max_events`. Only the driver knows that the sync stage follows, so
//! the loop that tries it lives here; the trial that fits is the sync stage's own result, which
//! the session adopts instead of running the stage again. What the sessions of one search
//! share of these trials is the search's cache, which stage 1 asks through [`TrialCache`].

use std::sync::Arc;

use crate::compile::logical::LogicalResult;
use crate::compile::order::OrderFacts;
use crate::compile::policy::{self, Bounded, Ctx, OverBudget, PolicyInput, PolicyReport, SplitOver};
use crate::compile::summary::ModelCounts;
use crate::compile::sync::ModelFacts;
use crate::compile::{self, Allocation, Mode, TaskCounts, TaskLimits};
use crate::error::{ErrorKind, Result};
use crate::graph::{Model, NodeId, Options};

/// What stage 1 computed: the logical allocation, the policy's report and, when the event
/// budget needed a trial, the sync stage's result for that allocation.
pub(super) struct Assigned {
    pub alloc: Allocation,
    pub report: Option<PolicyReport>,
    pub synced: Option<Allocation>,
    /// `synced` split with the graph's task counts, when the budget split it already.
    pub split: Option<Allocation>,
}

/// What stage 1 shares with the other sessions of one search, whose candidates differ in the
/// policy alone: the model's order and sync facts, built once, and the event budget's trials.
/// A trial is a function of the model, the options other than the policy, the task limits
/// and the logical result alone, so a cache may answer one it ran before instead of running it; a miss only
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
    /// function of the logical result). `shared`: other sessions are likely to ask for the same
    /// trial (one policy stream, which is every policy's assignment there), so a trial that fits
    /// is worth keeping too.
    fn trial(&self, logical: LogicalResult, order: &[NodeId], shared: bool, run: RunTrial<'_>) -> Result<Trial>;
}

/// How a [`TrialCache`] runs a trial it does not hold.
pub type RunTrial<'a> = &'a mut dyn FnMut(LogicalResult) -> Result<Trial>;

/// A sync-stage trial of one logical result under the event budget: it fits, and its
/// allocation with the sync stage's result is the answer (`exact`: the ids one per sync needed
/// when only ids reused by lifetime fit; `split`: the sync stage's result split with the
/// graph's task counts, or why it does not split); or even its retry with reused ids is over
/// the budget, or the split's events take it over, with what [`Bounded::fewer`] narrows by.
#[derive(Clone, Debug)]
pub enum Trial {
    Fits { alloc: Box<Allocation>, synced: Box<Allocation>, exact: Option<u32>, split: Box<Result<Allocation>> },
    Over(OverBudget),
}

/// Stage 1 in the (non-search) mode `options` select, from the model's policy input (GE's
/// logical result among it) when a caller built it already (a search shares one among its
/// candidates), with the event budget's trials shared through `trials` when given.
pub(super) fn assign(
    model: &Model,
    options: &Options,
    limits: &TaskLimits,
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
        return Ok(Assigned { alloc, report: None, synced: None, split: None });
    };
    let input = match input {
        Some(i) => Arc::clone(i),
        None => Arc::clone(Ctx::new(model, options)?.input()),
    };
    let max_events = options.event_budget();
    // With one id per sync whatever the trials do, the syncs the pinned streams force decide
    // before the policy runs whether any trial can fit.
    if max_events != u32::MAX && !options.event_reuse_lifetime && !reuses_over_budget(options) {
        let own;
        let facts = match trials {
            Some(t) => t.sync_facts(model),
            None => {
                own = ModelFacts::build(model);
                &own
            }
        };
        let ctx = Ctx::shared(model, Arc::clone(&input));
        if let Some(e) = ctx.forced_over(&p.name(), options, facts, max_events) {
            return Err(e);
        }
    }
    let mut bounded = Bounded::new(model, options, p, Some(input))?;
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
            return Ok(Assigned { alloc, report: Some(bounded.into_report()?), synced: None, split: None });
        }
        let order = placed.clone().unwrap_or_default();
        let mut run = |logical| -> Result<Trial> {
            let alloc = place(logical, placed.clone());
            let sync_facts = trials.map(|t| t.sync_facts(model));
            let (synced, exact) = match sync_within_budget(model, options, &alloc, sync_facts)? {
                Synced::Fits { synced, exact } => (synced, exact),
                Synced::Over(over) => return Ok(Trial::Over(over)),
            };
            let split = split_with_graph_tasks(model, options, limits, &synced);
            // The split's own events count against the budget as the sync stage's do.
            if let AfterSplit::Over(over) = within_split(&split, exact, &synced, max_events) {
                return Ok(Trial::Over(over));
            }
            Ok(Trial::Fits { alloc: Box::new(alloc), synced, exact, split: Box::new(split) })
        };
        let trial = match trials {
            Some(t) => t.trial(logical, &order, bounded.streams() <= 1, &mut run)?,
            None => run(logical)?,
        };
        match trial {
            Trial::Fits { alloc, synced, exact, split } => {
                // Reused ids keep every stream; where those split past the device's stream
                // limit, the streams are cut as one id per sync would cut them.
                if let AfterSplit::PastDevice(exact) = within_split(&split, exact, &synced, max_events)
                    && bounded.streams() > 1
                {
                    bounded.fewer_for_device(exact, max_events)?;
                    continue;
                }
                if let Some(exact) = exact {
                    bounded.reused(exact, max_events);
                }
                let report = Some(bounded.into_report()?);
                return Ok(Assigned { alloc: *alloc, report, synced: Some(*synced), split: (*split).ok() });
            }
            // One policy stream over in the pipeline's order: the same streams in phases first.
            Trial::Over(over) => {
                if !bounded.phase_order(&over, options, max_events) {
                    bounded.fewer(&over, max_events)?;
                }
            }
        }
    }
}

/// What the split of a trial that fit the sync stage leaves of the budget.
enum AfterSplit {
    /// Within `max_events` with the split's events, or a split that failed other than on the
    /// device's stream limit (stage 3 runs again and reports it), or past that limit with one
    /// id per sync (as before ids were reused: stage 3 reports it).
    Fits,
    /// Past the device's stream limit with ids reused by lifetime; the ids one per sync needed.
    PastDevice(u32),
    /// The sync stage's ids and the split's events exceed `max_events`.
    Over(OverBudget),
}

/// Whether `split`, the split of `synced` (whose ids one per sync were `exact` when they were
/// reused), keeps the trial within `max_events`: the split adds an event per cut of a stream
/// over the task limit, which the sync stage could not count.
fn within_split(split: &Result<Allocation>, exact: Option<u32>, synced: &Allocation, max_events: u32) -> AfterSplit {
    match (split, exact) {
        (Err(e), Some(exact)) if e.kind == ErrorKind::Limit => AfterSplit::PastDevice(exact),
        (Err(_), _) => AfterSplit::Fits,
        (Ok(split), _) => {
            let counts = ModelCounts::of(split);
            let ids = counts.event_num + counts.notify_num;
            if ids <= max_events {
                return AfterSplit::Fits;
            }
            let before = ModelCounts::of(synced);
            let events = ids - (before.event_num + before.notify_num);
            AfterSplit::Over(OverBudget { ids, counts, reused: None, split: Some(SplitOver { events, exact }) })
        }
    }
}

/// Stage 3 on a copy of `synced` with the graph's task counts: whether the streams the reused
/// ids kept fit the device, and the session's split when they do.
fn split_with_graph_tasks(
    model: &Model,
    options: &Options,
    limits: &TaskLimits,
    synced: &Allocation,
) -> Result<Allocation> {
    let mut split = synced.clone();
    compile::split_stage(model, options, &mut split, limits, &TaskCounts::default(), split_reuse_budget(options))?;
    Ok(split)
}

/// The budget over which a policy's split numbers its own events by lifetime
/// ([`compile::split_stage`]): `max_events` wherever a policy's ids may be reused, that is
/// everywhere but under `compat=ge` (GE's ids) and `event_reuse=never`; `None` without a
/// finite budget. The caller has checked that a policy assigned the streams.
pub(super) fn split_reuse_budget(options: &Options) -> Option<u32> {
    let max_events = options.event_budget();
    (!options.compat_ge && !options.event_reuse_never && max_events != u32::MAX).then_some(max_events)
}

/// The sync stage on a logical allocation under the event budget.
pub(super) enum Synced {
    /// The synced allocation, within `max_events`; `exact`: the ids one id per sync needed
    /// when only ids reused by lifetime fit.
    Fits { synced: Box<Allocation>, exact: Option<u32> },
    /// Over `max_events` even after the retry, when there was one (the allocation is dropped
    /// unfinished: the budget's loop needs only the counts).
    Over(OverBudget),
}

/// Whether a run under `options` retries with ids reused by lifetime when one id per sync
/// exceeds `max_events`: every policy but under `compat=ge` (GE's own sync rules and ids), with
/// `event_reuse=lifetime` already set, or with `event_reuse=never`; a budget that is not
/// finite never binds.
pub(super) fn reuses_over_budget(options: &Options) -> bool {
    !options.compat_ge
        && !options.event_reuse_lifetime
        && !options.event_reuse_never
        && options.event_budget() != u32::MAX
}

/// The sync stage on a copy of `alloc` as the event budget runs it: one id per sync first;
/// over `max_events`, and where [`reuses_over_budget`], the same streams again with ids reused
/// by lifetime, what GE itself does when its events run out (the steps the two share run
/// once). Where the first run fits, its result is the plain sync stage's, byte for byte.
/// `facts`: the model's, kept by the caller.
pub(super) fn sync_within_budget(
    model: &Model,
    options: &Options,
    alloc: &Allocation,
    facts: Option<&ModelFacts>,
) -> Result<Synced> {
    let max_events = options.event_budget();
    // Over budget the copy is dropped unfinished: the trial needs only its count.
    let mut synced = alloc.clone();
    let (counts, reused) = if reuses_over_budget(options) {
        compile::sync_stage_reusing(model, options, &mut synced, max_events, facts)?
    } else {
        (compile::sync_stage_within(model, options, &mut synced, max_events, facts)?, None)
    };
    let ids = counts.event_num + counts.notify_num;
    if ids <= max_events {
        return Ok(Synced::Fits { synced: Box::new(synced), exact: None });
    }
    let reused = reused.map(|r| r.event_num + r.notify_num);
    if let Some(r) = reused
        && r <= max_events
    {
        return Ok(Synced::Fits { synced: Box::new(synced), exact: Some(ids) });
    }
    Ok(Synced::Over(OverBudget { ids, counts, reused, split: None }))
}

/// Stage 2 on `alloc` for a policy's streams that no budget trial ran ahead of (a search's
/// changed streams): one id per sync and, over `max_events` where [`reuses_over_budget`], the
/// same streams again with ids reused by lifetime, kept whatever they need (the caller's
/// budget check refuses a result still over). Within the budget the plain sync stage's result.
/// The two runs share their first steps, as a budget trial's do ([`sync_within_budget`]).
pub(super) fn sync_stage_or_reused(model: &Model, options: &Options, alloc: &mut Allocation) -> Result<()> {
    match sync_within_budget(model, options, alloc, None)? {
        Synced::Fits { synced, .. } => *alloc = *synced,
        // Still over with reused ids: the reused result whole, for the caller to refuse.
        Synced::Over(_) => {
            compile::sync_stage(model, &Options { event_reuse_lifetime: true, ..options.clone() }, alloc)?
        }
    }
    Ok(())
}
