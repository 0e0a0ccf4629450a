//! Searches over whole pipeline runs under the simulator, above both the compile stages and
//! the simulator: `policy=auto` picks a fixed policy by simulated makespan, and `budget:N`
//! reports what its bound cost against the unbounded (min-streams) run.
//!
//! [`session`], [`run`] and [`run_with_costs`] are how the command line, the C ABI and
//! [`crate::allocate`] get a session that can run every mode. What a bound cost takes more
//! whole runs and simulations, so only the commands that print it ask for it.

#![forbid(unsafe_code)]

pub mod auto;
pub mod refine;

use std::ops::Deref;

use serde_json::json;

use crate::compile::policy::PolicyReport;
use crate::compile::{Allocation, Stage, TaskLimits};
use crate::driver::{Compiled, Session};
use crate::error::Result;
use crate::graph::{Model, Options, Policy};
use crate::simulate::{SimConfig, round3, simulate};

/// A session for `model` that can run every mode, `auto` decided under `sim`.
pub fn session<M: Deref<Target = Model>>(model: M, options: Options, limits: TaskLimits, sim: SimConfig) -> Session<M> {
    Session::new(model, options, limits).with_search(auto::choose, sim)
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
    let budget = matches!(options.policy, Policy::Budget(_)) && stage >= Stage::Sync;
    let mut s = session(model, options, limits, sim);
    s.run_to(stage)?;
    let bounded = s.report().is_some_and(|r| r.details.contains_key("budgets"));
    if (budget || bounded) && stage >= Stage::Sync {
        let mut extra = serde_json::Map::new();
        if budget {
            extra.extend(budget_makespans(s.model(), s.options(), &limits, s.allocation()?, stage)?);
        }
        let cost = if bounded { Some(budget_cost(&s, &limits, stage, &sim)?) } else { None };
        let mut compiled = s.into_compiled()?;
        let mut merged = compiled.report.take().unwrap_or_default();
        merged.details.extend(extra);
        if let Some(cost) = cost {
            if let Some(r) = cost.get("budget_cost") {
                merged.details.insert("budget_cost".into(), r.clone());
            }
            if let Some(serde_json::Value::Object(b)) = merged.details.get_mut("budgets") {
                b.extend(cost);
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
/// device limit; the report says so.
fn budget_cost<M: Deref<Target = Model>>(
    s: &Session<M>,
    limits: &TaskLimits,
    stage: Stage,
    sim: &SimConfig,
) -> Result<serde_json::Map<String, serde_json::Value>> {
    let model = s.model();
    let alloc = s.allocation()?;
    let budgeted = simulate(model, alloc, sim)?;
    let reference = crate::simulate::ideal(model, sim)?;
    let mut m = serde_json::Map::new();
    m.insert("budgeted_makespan_us".into(), json!(round3(budgeted.makespan_us)));
    m.insert("budgeted_event_ids".into(), json!(auto::sync_ids(alloc)));
    m.insert("ideal_us".into(), json!(round3(reference.makespan_us)));
    let made = s
        .report()
        .and_then(|r| r.details.get("budgets"))
        .and_then(|b| b.get("unbudgeted_streams"))
        .and_then(|v| v.as_u64())
        .unwrap_or(0);
    let device = crate::graph::device::MAX_STREAM_NUM as u64 - 1;
    if made > device {
        m.insert(
            "unbudgeted_skipped".into(),
            json!(format!("{made} unbudgeted streams exceed the {device} the device creates")),
        );
        return Ok(m);
    }
    let options = Options { verify: false, ..s.options().unbudgeted() };
    let mut u = Session::new(model, options, *limits);
    match u.run_to(stage) {
        Err(e) if e.kind == crate::error::ErrorKind::Limit => {
            m.insert("unbudgeted_skipped".into(), json!(e.to_string()));
        }
        r => {
            r?;
            let unbudgeted = simulate(model, u.allocation()?, sim)?;
            m.insert("unbudgeted_makespan_us".into(), json!(round3(unbudgeted.makespan_us)));
            m.insert("unbudgeted_event_ids".into(), json!(auto::sync_ids(u.allocation()?)));
            let ratio = if unbudgeted.makespan_us > 0.0 { budgeted.makespan_us / unbudgeted.makespan_us } else { 1.0 };
            m.insert("budget_cost".into(), json!(round3(ratio)));
        }
    }
    Ok(m)
}

/// Simulated makespan of a budget result against the unbounded (min-streams) one.
fn budget_makespans(
    model: &Model,
    options: &Options,
    limits: &TaskLimits,
    alloc: &Allocation,
    stage: Stage,
) -> Result<serde_json::Map<String, serde_json::Value>> {
    let cfg = SimConfig::default();
    let bounded = simulate(model, alloc, &cfg)?;
    let unbounded_options = Options { policy: Policy::MinStreams, verify: false, ..options.unbudgeted() };
    let mut s = Session::new(model, unbounded_options, *limits);
    s.run_to(stage)?;
    let unbounded = simulate(model, s.allocation()?, &cfg)?;
    let mut m = serde_json::Map::new();
    m.insert("makespan_us".into(), json!(round3(bounded.makespan_us)));
    m.insert("unbounded_makespan_us".into(), json!(round3(unbounded.makespan_us)));
    m.insert("unbounded_streams".into(), json!(unbounded.streams));
    let ratio = if unbounded.makespan_us > 0.0 { bounded.makespan_us / unbounded.makespan_us } else { 1.0 };
    m.insert("makespan_vs_unbounded".into(), json!(round3(ratio)));
    Ok(m)
}
