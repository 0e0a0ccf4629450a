//! `memory_limit` (docs/memory.md): the arena every policy's plan must fit.
//!
//! The limit is bytes, or a multiple of the single-stream plan's peak: `policy=single` run
//! through the pipeline in today's order (GE's declaration order on one stream), its memory
//! plan's `peak_bytes`, the figure the checker verifies. A fixed policy runs in its own order
//! first; over the limit, its assignment runs again in the memory-aware order
//! ([`crate::compile::memory_order`]) gated at the limit; still over, it fails with SA2003
//! naming the limit and the smallest peak it reached. `auto` keeps the fastest candidate within
//! the limit (src/search/auto.rs), trying each over-limit candidate in the memory-aware order too.

use super::report::MemoryFit;
use crate::compile::steps::StepTrace;
use crate::compile::{Stage, TaskLimits};
use crate::driver::{self, Compiled, Found, Session};
use crate::error::{Error, ErrorKind, Result};
use crate::graph::{ExecutionOrder, MemoryLimit, Model, Options};
use crate::simulate::{SimConfig, simulate};

/// A resolved limit: its bytes, and the single-stream peak when the limit is a multiple of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resolved {
    pub limit: MemoryLimit,
    pub bytes: u64,
    pub single_peak: Option<u64>,
}

impl Resolved {
    /// The limit as the errors and reports write it: `1.1x (1234 bytes, 1.1 × the
    /// single-stream peak 1122)` or `65536 bytes`.
    pub fn text(&self) -> String {
        match (self.limit, self.single_peak) {
            (MemoryLimit::Times(_), Some(p)) => {
                format!("{} ({} bytes; the single-stream peak is {p})", self.limit, self.bytes)
            }
            _ => format!("{} bytes", self.bytes),
        }
    }
}

/// The peak of the single-stream plan in today's order: what `memory_limit=Nx` multiplies.
pub fn single_stream_peak(model: &Model, options: &Options, limits: &TaskLimits) -> Result<Option<u64>> {
    let single = Options {
        policy: "single".into(),
        memory_limit: None,
        execution_order: ExecutionOrder::CriticalPath,
        verify: false,
        ..options.clone()
    };
    let mut s = Session::new(model, single, *limits);
    s.run_to(Stage::Split)?;
    Ok(s.memory_plan()?.map(|p| p.peak_bytes))
}

/// The options' limit in bytes; `None` without one. A graph without `out_bytes` has no plan
/// to bound: E10001.
pub fn resolve(model: &Model, options: &Options, limits: &TaskLimits) -> Result<Option<Resolved>> {
    let Some(limit) = options.memory_limit else { return Ok(None) };
    crate::memory::budget::require_sizes(model, options)?;
    let single_peak = match limit {
        MemoryLimit::Bytes(_) => None,
        MemoryLimit::Times(_) => single_stream_peak(model, options, limits)?,
    };
    Ok(Some(Resolved { limit, bytes: limit.bytes(single_peak.unwrap_or(0)), single_peak }))
}

/// The options a run under a resolved limit uses: the limit in bytes (what the gated order
/// reads), in `order`.
pub fn within(options: &Options, r: &Resolved, order: ExecutionOrder) -> Options {
    Options { memory_limit: Some(MemoryLimit::Bytes(r.bytes)), execution_order: order, ..options.clone() }
}

/// A fixed policy under `memory_limit`: its own order, then the memory-aware order; over the
/// limit in each, the same run again with syncs added for memory ([`memory_synced`]).
pub(super) fn fit(model: &Model, options: &Options, limits: &TaskLimits) -> Result<Found> {
    let Some(r) = resolve(model, options, limits)? else {
        crate::bail!(Internal, "model '{}': the memory fit ran without memory_limit", model.name);
    };
    let name = crate::compile::policy::table::resolve(options)?.name();
    let fits = |s: Session<&Model>, order: ExecutionOrder, peak: u64, added: Option<usize>| -> Result<Found> {
        let (stages, report) = s.into_stages()?;
        let mut report = report.unwrap_or_else(|| crate::compile::policy::PolicyReport::named(name.clone()));
        report.set_section(MemoryFit {
            memory_limit: r.limit.to_string(),
            limit_bytes: r.bytes,
            single_stream_peak_bytes: r.single_peak,
            peak_bytes: peak,
            execution_order: order_name(order).into(),
            memory_syncs: added,
        });
        Ok(Found { stages, report })
    };
    let mut tried: Vec<(ExecutionOrder, u64)> = Vec::new();
    let mut over: Vec<(ExecutionOrder, Session<&Model>)> = Vec::new();
    for order in orders_to_try(options, false) {
        let mut s = Session::new(model, within(options, &r, order), *limits).recording();
        s.run_to(Stage::Split)?;
        let peak = s.memory_plan()?.map_or(0, |p| p.peak_bytes);
        tried.push((order, peak));
        if peak <= r.bytes {
            return fits(s, order, peak, None);
        }
        over.push((order, s));
    }
    if !options.compat_ge {
        let cfg = SimConfig::default();
        for (order, s) in &over {
            if let Some(synced) = memory_synced(model, s, r.bytes, &cfg)? {
                return fits(synced.session, *order, synced.peak, Some(synced.added));
            }
        }
    }
    Err(over_limit(model, &policy_text(options), &r, &tried))
}

/// A run brought under `memory_limit` by syncs added for memory.
pub struct Synced<'m> {
    /// The run with the syncs, to the split; its recorded logical stage is the run's own,
    /// without them (the sync stage adds them).
    pub session: Session<&'m Model>,
    pub peak: u64,
    /// Pairs added (the sync stage may drop those that others imply).
    pub added: usize,
}

/// Runs of one plan with syncs added for memory, at most ([`memory_synced`]).
pub const MEMORY_SYNC_ROUNDS: usize = 8;
/// Nodes + edges summed over the runs of one plan with syncs added for memory: a graph of N
/// nodes + edges gets `min(MEMORY_SYNC_ROUNDS, MEMORY_SYNC_WORK / N)` runs, none above
/// 1,000,000 (bounded effort, as `auto`'s improvement pass).
pub const MEMORY_SYNC_WORK: usize = 1_000_000;

/// `run` (a recording session at the split, over `limit` bytes) again with syncs added for
/// memory ([`crate::memory::syncs`]), chosen on its allocation and simulated schedule (under
/// `cfg`). The sweep frees bytes down to a target; the placement may need more or less than
/// its estimate, so the target is searched: it starts at the limit, goes down by what a run
/// missed and up by what a run had to spare (fewer pairs: fewer waits and ids), then bisects
/// between the highest target that fit and the lowest that did not, for at most
/// [`MEMORY_SYNC_ROUNDS`] runs and [`MEMORY_SYNC_WORK`] nodes + edges. The answer is the fitting run with the highest target within
/// `max_events`. `None` when none fits, or at once when the bytes no sync can free exceed the
/// limit; a device limit ends the search.
pub fn memory_synced<'m>(
    model: &'m Model,
    run: &Session<&'m Model>,
    limit: u64,
    cfg: &SimConfig,
) -> Result<Option<Synced<'m>>> {
    let Some(logical) = run.recorded_logical() else { return Ok(None) };
    if logical.logical_count() + logical.attached_count() <= 1 {
        return Ok(None);
    }
    let base = run.allocation()?;
    let sim = simulate(model, base, cfg)?;
    let budget = run.options().event_budget();
    // Highest target whose run fit (with the run when it also fit the ids), lowest that did not.
    let (mut fit_at, mut best, mut miss_at): (Option<u64>, Option<(u64, Synced<'m>)>, Option<u64>) = (None, None, None);
    let mut target = limit;
    let runs = MEMORY_SYNC_ROUNDS.min(MEMORY_SYNC_WORK / (model.nodes.len() + model.edges.len()).max(1));
    for _ in 0..runs {
        let chosen = crate::memory::syncs::choose(model, base, &sim, cfg.wait_latency_us, target);
        if chosen.floor > limit {
            return Ok(None);
        }
        let peak = if chosen.pairs.is_empty() {
            run.memory_plan()?.map_or(0, |p| p.peak_bytes)
        } else {
            let mut seeded = logical.clone();
            seeded.add_syncs(&chosen.pairs);
            let mut s = Session::new(model, run.options().clone(), *run.limits())
                .with_logical(seeded)
                .with_report(run.report().cloned())
                .recording();
            match s.run_to(Stage::Split) {
                Err(e) if e.kind == ErrorKind::Limit => break,
                r => r?,
            }
            let peak = s.memory_plan()?.map_or(0, |p| p.peak_bytes);
            if peak <= limit
                && super::sync_ids(s.allocation()?) <= budget
                && best.as_ref().is_none_or(|(t, _)| target > *t)
            {
                s.set_recorded_logical(logical.clone());
                best = Some((target, Synced { session: s, peak, added: chosen.pairs.len() }));
            }
            peak
        };
        if peak <= limit {
            fit_at = Some(fit_at.map_or(target, |f| f.max(target)));
        } else {
            miss_at = Some(miss_at.map_or(target, |m| m.min(target)));
        }
        let next = match (fit_at, miss_at) {
            (Some(lo), Some(hi)) if hi > lo => lo + (hi - lo) / 2,
            // A lower target missed where a higher one fit: nothing left to bisect.
            (Some(_), Some(_)) => break,
            (Some(lo), None) => lo + (limit - peak).max(crate::memory::ALIGN),
            (None, _) => target.saturating_sub(peak - limit),
        };
        if next.abs_diff(target) < crate::memory::ALIGN || next == 0 {
            break;
        }
        target = next;
    }
    Ok(best.map(|(_, synced)| synced))
}

/// `allocate --from sync|split` under `memory_limit`: the given streams (and, from split,
/// the given syncs) in their own order, then, from sync, in the memory-aware order gated at the
/// limit; still over, SA2003 naming the limit and the smallest peak, as a policy's fit does.
/// Without a limit: [`driver::run_from`] as it is.
pub fn run_from(
    model: &Model,
    options: Options,
    limits: TaskLimits,
    from: Stage,
    stage: Stage,
) -> Result<(Compiled, StepTrace)> {
    let Some(r) = resolve(model, &options, &limits)? else {
        return driver::run_from(model, options, limits, from, stage);
    };
    let mut tried = Vec::new();
    for order in orders_to_try(&options, from == Stage::Split) {
        let (c, trace) = driver::run_from(model, within(&options, &r, order), limits, from, stage)?;
        let peak = c.memory(model).map_or(0, |p| p.peak_bytes);
        if peak <= r.bytes {
            return Ok((c, trace));
        }
        tried.push((order, peak));
    }
    Err(over_limit(model, &format!("the given streams (from stage {})", from.as_str()), &r, &tried))
}

/// The orders a plan over `memory_limit` is tried in: its own, then the memory-aware one;
/// only the options' order under `compat=ge`, when that order is already the memory-aware
/// one, or when the order is `fixed` (the syncs are given).
fn orders_to_try(options: &Options, fixed: bool) -> Vec<ExecutionOrder> {
    if fixed || options.compat_ge || options.execution_order == ExecutionOrder::Memory {
        vec![options.execution_order]
    } else {
        vec![ExecutionOrder::CriticalPath, ExecutionOrder::Memory]
    }
}

/// The option's spelling of an order.
pub fn order_name(order: ExecutionOrder) -> &'static str {
    match order {
        ExecutionOrder::CriticalPath => "critical-path",
        ExecutionOrder::Memory => "memory",
    }
}

/// How the errors name the policy of `options`.
fn policy_text(options: &Options) -> String {
    let policy = if options.compat_ge { "ge (compat=ge)".to_string() } else { options.policy.as_str().to_string() };
    let policy = if policy.is_empty() { "ge".to_string() } else { policy };
    format!("policy {policy}")
}

/// SA2003 for a plan (`who`: the policy, or the given streams) whose every order is over the limit.
fn over_limit(model: &Model, who: &str, r: &Resolved, tried: &[(ExecutionOrder, u64)]) -> Error {
    let smallest = tried.iter().map(|t| t.1).min().unwrap_or(0);
    let each: Vec<String> = tried.iter().map(|(o, p)| format!("execution_order={}: {p}", order_name(*o))).collect();
    Error::new(
        ErrorKind::Limit,
        format!(
            "{who} on graph '{}': the memory plan needs at least {smallest} bytes, over memory_limit={} \
             (peaks reached: {})",
            model.name,
            r.text(),
            each.join(", ")
        ),
    )
}
