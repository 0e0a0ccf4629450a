//! Searches over whole pipeline runs under the simulator, above both the compile stages and
//! the simulator: `policy=auto` picks a fixed policy by simulated makespan, and `budget:N`
//! reports what its bound cost against the unbounded (min-streams) run.
//!
//! [`session`] and [`run`] are how the command line, the C ABI and [`crate::allocate`] get a
//! session that can run every mode.

#![forbid(unsafe_code)]

pub mod auto;

use std::ops::Deref;

use serde_json::json;

use crate::compile::policy::PolicyReport;
use crate::compile::{Allocation, Stage, TaskLimits};
use crate::driver::Session;
use crate::error::Result;
use crate::graph::{Model, Options, Policy};
use crate::simulate::{SimConfig, round3, simulate};

/// A session for `model` that can run every mode, `auto` decided under `sim`.
pub fn session<M: Deref<Target = Model>>(model: M, options: Options, limits: TaskLimits, sim: SimConfig) -> Session<M> {
    Session::new(model, options, limits).with_search(auto::choose, sim)
}

/// Runs `model` to `stage` in the mode `options` select; returns the allocation and the
/// policy's report (for `budget:N` with the makespan it cost, from a second, unbounded run).
pub fn run<M: Deref<Target = Model>>(
    model: M,
    options: Options,
    limits: TaskLimits,
    stage: Stage,
    sim: SimConfig,
) -> Result<(Allocation, Option<PolicyReport>)> {
    let budget = matches!(options.policy, Policy::Budget(_)) && stage >= Stage::Sync;
    let mut s = session(model, options, limits, sim);
    s.run_to(stage)?;
    if budget {
        let report = budget_makespans(s.model(), s.options(), &limits, s.allocation()?, stage)?;
        let (alloc, base) = s.into_result()?;
        let mut merged = base.unwrap_or_default();
        merged.details.extend(report);
        return Ok((alloc, Some(merged)));
    }
    s.into_result()
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
    let unbounded_options = Options { policy: Policy::MinStreams, verify: false, ..options.clone() };
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
