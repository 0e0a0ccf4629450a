//! `auto`: every other policy (GE's default among them) run through the whole pipeline and
//! the simulator; the shortest makespan wins, ties going to fewer streams, then fewer syncs,
//! then the earlier candidate. GE, per-operator and list are always candidates, so auto is
//! never slower than any of them under the simulator. A candidate past `max_streams` logical
//! streams or `max_events` sync ids (GE's own assignment may be) is rejected, as is one past a
//! device limit; with `max_memory`, a candidate whose memory plan needs more (docs/memory.md).
//! Every row carries the graph's ideal makespan and lower bound beside the candidate's.

use std::sync::Arc;

use crate::bail;
use crate::compile::policy::report::{AutoReport, CandidatePlan, CandidateRow};
use crate::compile::policy::{Chosen, Ctx, PolicyReport, ge_logical, min_streams, table};
use crate::compile::summary::ModelCounts;
use crate::compile::{Stage, TaskLimits};
use crate::driver::{Found, KeyMap, Session, Stages, StreamsKey, Trials};
use crate::error::{ErrorKind, Result};
use crate::graph::{Model, Options};
use crate::simulate::{SimConfig, ideal, round3, simulate};

/// Sync ids an allocation uses: events and notifies, the split's included.
pub fn sync_ids(alloc: &crate::compile::Allocation) -> u32 {
    let c = ModelCounts::of(alloc);
    c.event_num + c.notify_num
}

/// Runs every candidate through the pipeline to the split and keeps the best under `cfg`: the
/// session's [`crate::driver::Search`] for `policy=auto`. GE's pass chain runs once, shared by
/// every candidate; the chosen candidate's stages are handed back for the session to adopt.
pub fn choose(model: &Model, options: &Options, limits: &TaskLimits, cfg: &SimConfig) -> Result<Found> {
    let ge = Arc::new(ge_logical(model, options)?);
    let ctx = Ctx::with_base(model, options, (*ge).clone());
    let width = min_streams::chain_cover(&ctx).chains.len();
    let mut best: Option<(f64, u32, usize, usize, Chosen)> = None;
    let mut chosen_stages = None;
    let mut rows = Vec::new();
    crate::memory::budget::require_sizes(model, options)?;
    let mut smallest = None;
    let reference = ideal(model, cfg)?;
    let (ideal_us, bound_us) = (round3(reference.makespan_us), round3(reference.lower_bound_us));
    let (max_streams, max_events) = (options.stream_budget(), options.event_budget());
    // The event budget's trials and every candidate's outcome, by logical streams: candidates
    // often end on the same streams (all of them on one policy stream when the budget is
    // tight), and the later one can only tie with the earlier, which wins ties.
    let trials = Arc::new(Trials::default());
    let mut outcomes: KeyMap<Outcome> = KeyMap::default();
    for (i, p) in table::candidates(width).into_iter().enumerate() {
        let mut s = Session::new(model, p.options(options), *limits)
            .with_ge(Arc::clone(&ge))
            .with_trials(Arc::clone(&trials))
            .recording();
        // A candidate past a device limit (streams, events, notifies) is not an answer, but
        // another candidate may be: it is reported and dropped, never fatal to the search.
        let ran = s.run_to(Stage::Logical).and_then(|()| {
            let key = StreamsKey::of_allocation(s.allocation()?);
            if let Some(seen) = outcomes.get(&key) {
                return Ok(Err(*seen));
            }
            s.run_to(Stage::Split)?;
            Ok(Ok(key))
        });
        let ran = match ran {
            Err(e) if e.kind == ErrorKind::Limit => {
                rows.push(CandidateRow {
                    policy: p.name(),
                    ideal_us,
                    lower_bound_us: bound_us,
                    rejected: Some(e.to_string()),
                    ..CandidateRow::default()
                });
                continue;
            }
            r => r?,
        };
        let outcome = match &ran {
            Err(seen) => *seen,
            Ok(_) => {
                let alloc = s.allocation()?;
                let sim = simulate(model, alloc, cfg)?;
                Outcome {
                    makespan_us: sim.makespan_us,
                    streams: sim.streams,
                    syncs: sim.syncs,
                    ids: sync_ids(alloc),
                    logical_count: alloc.logical_count(),
                    peak: None,
                }
            }
        };
        let mut row = CandidateRow {
            policy: p.name(),
            ideal_us,
            lower_bound_us: bound_us,
            plan: Some(CandidatePlan {
                makespan_us: round3(outcome.makespan_us),
                streams: outcome.streams,
                syncs: outcome.syncs,
                event_ids: outcome.ids,
            }),
            unbudgeted_streams: s.report().and_then(PolicyReport::unbudgeted_streams),
            ..CandidateRow::default()
        };
        let ids = outcome.ids;
        let over = if outcome.logical_count > max_streams {
            Some(format!("{} logical streams exceed max_streams={max_streams}", outcome.logical_count))
        } else if ids > max_events {
            Some(format!("{ids} sync ids exceed max_events={max_events}"))
        } else {
            None
        };
        let peak = match &ran {
            Err(seen) => seen.peak,
            Ok(_) if over.is_none() => s.memory_plan()?.map(|m| m.peak_bytes),
            Ok(_) => None,
        };
        let repeat = ran.is_err();
        if let Ok(key) = ran {
            outcomes.insert(key, Outcome { peak, ..outcome });
        }
        if let Some(why) = over {
            row.rejected = Some(why);
            rows.push(row);
            continue;
        }
        let fits = crate::memory::budget::judge(options, peak, &mut row, &mut smallest, p.name());
        rows.push(row);
        // A candidate on the streams of an earlier one ties with it at best.
        if !fits || repeat {
            continue;
        }
        let key = (outcome.makespan_us, outcome.streams, outcome.syncs, i);
        let better = match &best {
            None => true,
            Some((ms, st, sy, j, _)) => {
                key.0.total_cmp(ms).then(key.1.cmp(st)).then(key.2.cmp(sy)).then(key.3.cmp(j)).is_lt()
            }
        };
        if better {
            best = Some((key.0, key.1, key.2, key.3, p));
            chosen_stages = Some(s.into_stages()?.0);
        }
    }
    let (Some((makespan, _, _, _, chosen)), Some(mut stages)) = (best, chosen_stages) else {
        if options.max_memory.is_some() && rows.iter().all(|r| r.peak_bytes.is_some()) {
            return Err(crate::memory::budget::none_fits(model, options, smallest));
        }
        // Each reason as JSON text (quoted; `null` for none), as the error has always written it.
        let reasons: Vec<String> =
            rows.iter().map(|r| format!("{}: {}", r.policy, serde_json::Value::from(r.rejected.clone()))).collect();
        bail!(Limit, "policy auto on graph '{}': no candidate is feasible ({})", model.name, reasons.join("; "));
    };
    let Some(base) = stages.logical.as_ref() else {
        bail!(Internal, "policy auto on graph '{}': the chosen run kept no logical stage", model.name);
    };
    let refined = super::refine::refine(model, options, limits, cfg, &ctx, base, chosen, reference.makespan_us)?;
    let makespan = match refined.logical {
        // The session runs the stages after assignment again on the refined streams.
        Some(logical) => {
            stages = Stages { logical: Some(logical), ..Stages::default() };
            refined.makespan_us
        }
        None => makespan,
    };
    let why = format!(
        "least makespan ({} units, {} us/wait) within {} streams, {} ids",
        cfg.units,
        cfg.wait_latency_us,
        budget_text(max_streams),
        budget_text(max_events)
    );
    let auto = AutoReport {
        chosen: chosen.name(),
        makespan_us: round3(makespan),
        ideal_us,
        why,
        candidates: rows,
        refine: refined.report,
    };
    let report = PolicyReport { auto: Some(auto), ..PolicyReport::named("auto") };
    Ok(Found { stages, report })
}

/// What the pipeline and the simulator made of a candidate's logical streams: its report
/// row's figures, and its memory plan's peak (`None` without sizes, or when a budget rejected
/// the candidate before its memory counted).
#[derive(Clone, Copy)]
struct Outcome {
    makespan_us: f64,
    streams: u32,
    syncs: usize,
    ids: u32,
    logical_count: u32,
    peak: Option<u64>,
}

/// A budget as the option writes it.
pub fn budget_text(b: u32) -> String {
    if b == u32::MAX { "unlimited".into() } else { b.to_string() }
}
