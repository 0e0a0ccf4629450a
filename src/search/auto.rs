//! `auto`: every other policy (GE's default among them) run through the whole pipeline and
//! the simulator; the shortest makespan wins, ties going to fewer streams, then fewer syncs,
//! then the earlier candidate. GE, per-operator and list are always candidates, so auto is
//! never slower than any of them under the simulator. A candidate past `max_streams` logical
//! streams or `max_events` sync ids (GE's own assignment may be) is rejected, as is one past a
//! device limit; with `max_memory`, a candidate whose memory plan needs more (docs/memory.md).
//! Every row carries the graph's ideal makespan and lower bound beside the candidate's.

use serde_json::json;

use super::candidate::Outcome;
use crate::bail;
use crate::compile::policy::{Ctx, PolicyReport};
use crate::compile::summary::ModelCounts;
use crate::compile::{Allocation, TaskLimits};
use crate::error::{ErrorKind, Result};
use crate::graph::{Model, Options, Policy};
use crate::simulate::{SimConfig, ideal, round3, simulate};

/// Sync ids an allocation uses: events and notifies, the split's included.
pub fn sync_ids(alloc: &crate::compile::Allocation) -> u32 {
    let c = ModelCounts::of(alloc);
    c.event_num + c.notify_num
}

/// The candidates for a graph: the fixed policies, then budgets below the width.
pub fn candidates(width: usize) -> Vec<Policy> {
    let mut v =
        vec![Policy::Ge, Policy::Single, Policy::PerBackend, Policy::PerOperator, Policy::MinStreams, Policy::List];
    for b in [2u32, 4, 8, 16] {
        if (b as usize) < width {
            v.push(Policy::Budget(b));
        }
    }
    v
}

/// Runs every candidate through the whole pipeline and keeps the best under `cfg`: the
/// session's [`crate::driver::Search`] for `policy=auto`.
pub fn choose(
    model: &Model,
    options: &Options,
    limits: &TaskLimits,
    cfg: &SimConfig,
) -> Result<(Policy, PolicyReport, Option<Allocation>)> {
    // One policy context for every candidate: GE's logical pass, the chain cover and the
    // sync-id trials of the budget cuts are computed once.
    let ctx = Ctx::new(model, options)?;
    let width = ctx.cover().chains.len();
    let mut best: Option<(f64, u32, usize, usize, Policy)> = None;
    let mut rows = Vec::new();
    crate::memory::budget::require_sizes(model, options)?;
    let mut smallest = None;
    let reference = ideal(model, cfg)?;
    let (ideal_us, bound_us) = (round3(reference.makespan_us), round3(reference.lower_bound_us));
    let (max_streams, max_events) = (options.stream_budget(), options.event_budget());
    let mut ran = None;
    for (i, p) in candidates(width).into_iter().enumerate() {
        // A candidate past a device limit (streams, events, notifies) is not an answer, but
        // another candidate may be: it is reported and dropped, never fatal to the search.
        let why = match super::candidate::run(model, &Options { policy: p, ..options.clone() }, limits, &ctx) {
            Err(e) if e.kind == ErrorKind::Limit => e.to_string(),
            Ok(Outcome::Over(why)) => why,
            Ok(Outcome::Ran(alloc, report)) => {
                ran = Some((alloc, report));
                String::new()
            }
            Err(e) => return Err(e),
        };
        let Some((alloc, report)) = ran.take() else {
            rows.push(json!({
                "policy": p.name(), "rejected": why, "ideal_us": ideal_us, "lower_bound_us": bound_us,
            }));
            continue;
        };
        let alloc = &*alloc;
        let sim = simulate(model, alloc, cfg)?;
        let ids = sync_ids(alloc);
        let mut row = json!({
            "policy": p.name(),
            "ideal_us": ideal_us,
            "lower_bound_us": bound_us,
            "makespan_us": round3(sim.makespan_us),
            "streams": sim.streams,
            "syncs": sim.syncs,
            "event_ids": ids,
        });
        if let Some(made) =
            report.as_ref().and_then(|r| r.details.get("budgets")).and_then(|b| b.get("unbudgeted_streams"))
        {
            row["unbudgeted_streams"] = made.clone();
        }
        let over = if alloc.logical_count() > max_streams {
            Some(format!("{} logical streams exceed max_streams={max_streams}", alloc.logical_count()))
        } else if ids > max_events {
            Some(format!("{ids} sync ids exceed max_events={max_events}"))
        } else {
            None
        };
        if let Some(why) = over {
            row["rejected"] = json!(why);
            rows.push(row);
            continue;
        }
        let fits = crate::memory::budget::judge(model, options, alloc, &mut row, &mut smallest, p.name());
        rows.push(row);
        if !fits {
            continue;
        }
        let key = (sim.makespan_us, sim.streams, sim.syncs, i);
        let better = match &best {
            None => true,
            Some((ms, st, sy, j, _)) => {
                key.0.total_cmp(ms).then(key.1.cmp(st)).then(key.2.cmp(sy)).then(key.3.cmp(j)).is_lt()
            }
        };
        if better {
            best = Some((key.0, key.1, key.2, key.3, p));
        }
    }
    let Some((makespan, _, _, _, chosen)) = best else {
        if options.max_memory.is_some() && rows.iter().all(|r| r.get("peak_bytes").is_some()) {
            return Err(crate::memory::budget::none_fits(model, options, smallest));
        }
        let reasons: Vec<String> =
            rows.iter().map(|r| format!("{}: {}", r["policy"].as_str().unwrap_or(""), r["rejected"])).collect();
        bail!(Limit, "policy auto on graph '{}': no candidate is feasible ({})", model.name, reasons.join("; "));
    };
    let refined = super::refine::refine(model, options, limits, cfg, &ctx, chosen, reference.makespan_us)?;
    let mut report = PolicyReport { name: "auto".into(), details: Default::default() };
    report.details.insert("chosen".into(), json!(chosen.name()));
    let makespan = if refined.logical.is_some() { refined.makespan_us } else { makespan };
    report.details.insert("makespan_us".into(), json!(round3(makespan)));
    report.details.insert("ideal_us".into(), json!(ideal_us));
    report.details.insert(
        "why".into(),
        json!(format!(
            "least makespan ({} units, {} us/wait) within {} streams, {} ids",
            cfg.units,
            cfg.wait_latency_us,
            budget_text(max_streams),
            budget_text(max_events)
        )),
    );
    report.details.insert("candidates".into(), json!(rows));
    report.details.insert("refine".into(), refined.report);
    Ok((chosen, report, refined.logical))
}

/// A budget as the option writes it.
pub fn budget_text(b: u32) -> String {
    if b == u32::MAX { "unlimited".into() } else { b.to_string() }
}
