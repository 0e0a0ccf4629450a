//! Searches over whole pipeline runs under the simulator, above both the compile stages and
//! the simulator: `policy=auto` picks a fixed policy by simulated makespan, and `budget:N`
//! reports what its bound cost against the unbounded (min-streams) run.
//!
//! [`session`], [`run`] and [`run_with_costs`] are how the command line, the C ABI and
//! [`crate::allocate`] get a session that can run every mode. What a bound cost takes more
//! whole runs and simulations, so only the commands that print it ask for it.

#![forbid(unsafe_code)]

pub mod auto;
pub mod cache;
pub mod fit;
pub mod peers;
pub mod refine;
pub mod report;

use std::ops::Deref;

use crate::compile::policy::report::{Budgets, Unbounded};
use crate::compile::policy::{PolicyReport, table};
use crate::compile::summary::ModelCounts;
use crate::compile::{Allocation, Stage, TaskLimits};
use crate::driver::{Compiled, Found, Session};
use crate::error::Result;
use crate::graph::{Model, Options};
use crate::simulate::{SimConfig, round3, simulate};

/// A session for `model` that can run every mode, `auto` decided under `sim`.
pub fn session<M: Deref<Target = Model>>(model: M, options: Options, limits: TaskLimits, sim: SimConfig) -> Session<M> {
    Session::new(model, options, limits).with_search(search, sim)
}

/// The session's search: `auto`'s, or the memory limit's fit for a fixed policy.
pub fn search(model: &Model, options: &Options, limits: &TaskLimits, cfg: &SimConfig) -> Result<Found> {
    if crate::compile::Mode::of(model, options)?.is_search() {
        auto::choose(model, options, limits, cfg)
    } else {
        fit::fit(model, options, limits)
    }
}

/// Sync ids an allocation uses: events and notifies, the split's included.
pub fn sync_ids(alloc: &Allocation) -> u32 {
    let c = ModelCounts::of(alloc);
    c.event_num + c.notify_num
}

/// Runs `model` to `stage` in the mode `options` select; returns the allocation and the
/// policy's report as the assignment made it.
pub fn run<M: Deref<Target = Model>>(
    model: M,
    options: Options,
    limits: TaskLimits,
    stage: Stage,
    sim: SimConfig,
) -> Result<(Allocation, Option<PolicyReport>)> {
    let mut s = session(model, options, limits, sim);
    s.run_to(stage)?;
    s.into_result()
}

/// [`run`], the report also saying what the policy's bounds cost: for `budget:N` the makespan
/// against a second, unbounded run; for a policy that `max_streams` or `max_events` bound,
/// its makespan against a run without them. The result keeps the run's memory plan.
pub fn run_with_costs<M: Deref<Target = Model>>(
    model: M,
    options: Options,
    limits: TaskLimits,
    stage: Stage,
    sim: SimConfig,
) -> Result<Compiled> {
    let compare_with = table::resolve(&options)?.entry.compare_with.filter(|_| stage >= Stage::Sync);
    let mut s = session(model, options, limits, sim);
    s.run_to(stage)?;
    let bounded = s.report().is_some_and(|r| r.budgets.is_some());
    if (compare_with.is_some() || bounded) && stage >= Stage::Sync {
        let unbounded = match compare_with {
            Some(reference) => {
                Some(budget_makespans(s.model(), s.options(), reference, &limits, s.allocation()?, stage)?)
            }
            None => None,
        };
        let cost = if bounded { Some(budget_cost(&s, &limits, stage, &sim)?) } else { None };
        let mut compiled = s.into_compiled()?;
        let mut merged = compiled.report.take().unwrap_or_default();
        if unbounded.is_some() {
            merged.unbounded = unbounded;
        }
        if let Some(cost) = cost {
            if cost.budget_cost.is_some() {
                merged.budget_cost = cost.budget_cost;
            }
            if let Some(b) = merged.budgets.as_mut() {
                b.budgeted_makespan_us = cost.budgeted_makespan_us;
                b.budgeted_event_ids = cost.budgeted_event_ids;
                b.ideal_us = cost.ideal_us;
                b.unbudgeted_skipped = cost.unbudgeted_skipped;
                b.unbudgeted_makespan_us = cost.unbudgeted_makespan_us;
                b.unbudgeted_event_ids = cost.unbudgeted_event_ids;
                b.budget_cost = cost.budget_cost;
            }
        }
        compiled.report = Some(merged);
        return Ok(compiled);
    }
    s.into_compiled()
}

/// What `max_streams` / `max_events` cost a policy (the report's `budgets` object, the ratio
/// also as `budget_cost`): its simulated makespan within them and,
/// from a second run without them, the unbudgeted makespan, streams and sync ids. The second
/// run is skipped when the policy made more streams than the device creates, or fails on a
/// device limit; the report says so. Only the cost fields of the result are set.
fn budget_cost<M: Deref<Target = Model>>(
    s: &Session<M>,
    limits: &TaskLimits,
    stage: Stage,
    sim: &SimConfig,
) -> Result<Budgets> {
    let model = s.model();
    let alloc = s.allocation()?;
    let budgeted = simulate(model, alloc, sim)?;
    let reference = crate::simulate::ideal(model, sim)?;
    let mut m = Budgets {
        budgeted_makespan_us: Some(round3(budgeted.makespan_us)),
        budgeted_event_ids: Some(sync_ids(alloc)),
        ideal_us: Some(round3(reference.makespan_us)),
        ..Budgets::default()
    };
    let made = s.report().and_then(PolicyReport::unbudgeted_streams).unwrap_or(0);
    let device = crate::graph::device::MAX_STREAM_NUM as u32 - 1;
    if made > device {
        m.unbudgeted_skipped = Some(format!("{made} unbudgeted streams exceed the {device} the device creates"));
        return Ok(m);
    }
    let options = Options { verify: false, ..s.options().unbudgeted() };
    let mut u = Session::new(model, options, *limits);
    match u.run_to(stage) {
        Err(e) if e.kind == crate::error::ErrorKind::Limit => {
            m.unbudgeted_skipped = Some(e.to_string());
        }
        r => {
            r?;
            let unbudgeted = simulate(model, u.allocation()?, sim)?;
            m.unbudgeted_makespan_us = Some(round3(unbudgeted.makespan_us));
            m.unbudgeted_event_ids = Some(sync_ids(u.allocation()?));
            let ratio = if unbudgeted.makespan_us > 0.0 { budgeted.makespan_us / unbudgeted.makespan_us } else { 1.0 };
            m.budget_cost = Some(round3(ratio));
        }
    }
    Ok(m)
}

/// Simulated makespan of a bounded result against the unbounded run of the `reference` policy
/// (the table's `compare_with`).
fn budget_makespans(
    model: &Model,
    options: &Options,
    reference: &str,
    limits: &TaskLimits,
    alloc: &Allocation,
    stage: Stage,
) -> Result<Unbounded> {
    let cfg = SimConfig::default();
    let bounded = simulate(model, alloc, &cfg)?;
    let unbounded_options = Options { policy: reference.into(), verify: false, ..options.unbudgeted() };
    let mut s = Session::new(model, unbounded_options, *limits);
    s.run_to(stage)?;
    let unbounded = simulate(model, s.allocation()?, &cfg)?;
    let ratio = if unbounded.makespan_us > 0.0 { bounded.makespan_us / unbounded.makespan_us } else { 1.0 };
    Ok(Unbounded {
        makespan_us: round3(bounded.makespan_us),
        unbounded_makespan_us: round3(unbounded.makespan_us),
        unbounded_streams: unbounded.streams,
        makespan_vs_unbounded: round3(ratio),
    })
}
