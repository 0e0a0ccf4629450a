//! `auto`: every other policy (GE's default among them) run through the whole pipeline and
//! the simulator. Without `memory_limit` the leanest plan for its speed wins: among the plans
//! within [`LEAN_TOLERANCE`] of the fastest, the lowest memory-plan peak, then fewer streams,
//! fewer syncs, the shorter makespan, the earlier candidate. With `memory_limit` the fastest plan
//! within it wins (ties: fewer streams, fewer syncs, the earlier candidate), a candidate over it
//! being tried again in the memory-aware order (src/search/fit.rs). A candidate past
//! `max_streams` logical streams or `max_events` sync ids (GE's own assignment may be) is
//! rejected, as is one past a device limit. Every row carries the graph's ideal makespan and
//! lower bound beside the candidate's.

use std::sync::Arc;

use super::cache::{KeyMap, StreamsKey, Trials};
use super::peers;
use super::report::{AutoReport, CandidatePlan, CandidateRow};
use crate::bail;
use crate::baseline::Peer;
use crate::compile::order::OrderFacts;
use crate::compile::policy::{Chosen, Ctx, PolicyReport, ge_logical, table};
use crate::compile::{Allocation, Stage, TaskLimits};
use crate::driver::{Found, Session, Stages};
use crate::error::{ErrorKind, Result};
use crate::graph::{ExecutionOrder, Model, Options};
use crate::simulate::{SimConfig, ideal, round3, simulate};

/// Runs every candidate through the pipeline to the split and keeps the best under `cfg`: the
/// session's [`crate::driver::Search`] for `policy=auto`. GE's pass chain runs once, shared by
/// every candidate; the chosen candidate's stages are handed back for the session to adopt.
pub fn choose(model: &Model, options: &Options, limits: &TaskLimits, cfg: &SimConfig) -> Result<Found> {
    let batch = std::thread::available_parallelism().map_or(1, usize::from);
    choose_in_batches(model, options, limits, cfg, batch)
}

/// [`choose`] with `batch` candidates run side by side at a time (1: one after the other).
/// Candidates run side by side, a batch of one per core; their results are then taken in
/// candidate order, exactly as one after the other would take them, so the threads change the
/// time and never the answer. A batch at a time bounds the sessions alive at once.
fn choose_in_batches(
    model: &Model,
    options: &Options,
    limits: &TaskLimits,
    cfg: &SimConfig,
    batch: usize,
) -> Result<Found> {
    let batch = batch.max(1);
    let search = AutoSearch::new(model, options, limits, cfg)?;
    let mut tally = Tally {
        // Without a limit the leanest plan within LEAN_TOLERANCE of the fastest; with one, the fastest.
        pool: Pool {
            lean: options.memory_limit.is_none(),
            ceiling: search.peer_reference.as_ref().map(|(_, us)| *us),
            kept: Vec::new(),
            uncapped: Vec::new(),
        },
        rows: Vec::new(),
        smallest: None,
        outcomes: KeyMap::default(),
    };
    let mut start = 0;
    while start < search.candidates.len() {
        let end = (start + batch).min(search.candidates.len());
        let results = search.run_batch(start, end, &tally.outcomes);
        for (i, result) in (start..end).zip(results) {
            search.take(i, result?, &mut tally)?;
        }
        start = end;
    }
    search.finish(tally)
}

/// What every candidate of one search shares: the options they start from (the limit in
/// bytes, what the memory-aware order is gated at), GE's pass chain, the event budget's
/// trials, and the figures every report row repeats.
struct AutoSearch<'m> {
    model: &'m Model,
    options: Options,
    limits: &'m TaskLimits,
    cfg: &'m SimConfig,
    ctx: Ctx<'m>,
    limit: Option<super::fit::Resolved>,
    /// The graph's ideal makespan (as simulated, and rounded for the rows) and lower bound.
    ideal_makespan_us: f64,
    ideal_us: f64,
    bound_us: f64,
    max_streams: u32,
    max_events: u32,
    trials: Arc<Trials>,
    candidates: Vec<Candidate>,
    /// The fastest peer's own plan that fits the device, when the peers are evaluated
    /// ([`peers::evaluated`]): its name and makespan, the lean rule's ceiling.
    peer_reference: Option<(String, f64)>,
    /// The model's order facts, for the peers' candidates' execution orders.
    order_facts: Option<OrderFacts>,
    /// Each peer's plan, when the peers are evaluated.
    peer_plans: Vec<(Peer, crate::baseline::Plan)>,
}

/// One of auto's candidates: a policy of the table, or a peer's assignment through auto's own
/// pipeline.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Candidate {
    Policy(Chosen),
    Peer(Peer),
}

impl Candidate {
    fn name(&self) -> String {
        match self {
            Candidate::Policy(p) => p.name(),
            Candidate::Peer(p) => peers::name(*p),
        }
    }

    /// The options a run of it starts from: the policy's, or auto's own for a peer's
    /// assignment (adopted as a logical stage, any policy but GE's runs the later stages alike).
    fn options(&self, options: &Options) -> Options {
        match self {
            Candidate::Policy(p) => p.options(options),
            Candidate::Peer(_) => options.clone(),
        }
    }
}

/// What the search has taken so far, in candidate order.
struct Tally {
    pool: Pool,
    rows: Vec<CandidateRow>,
    /// The smallest peak of a candidate over `memory_limit`, for the error when none fits.
    smallest: Option<(u64, String)>,
    /// Every candidate's outcome, by logical streams: candidates often end on the same streams
    /// (all of them on one policy stream when the budget is tight), and the later one can only
    /// tie with the earlier, which wins ties.
    outcomes: KeyMap<Outcome>,
}

impl<'m> AutoSearch<'m> {
    fn new(model: &'m Model, options: &Options, limits: &'m TaskLimits, cfg: &'m SimConfig) -> Result<Self> {
        let ctx = Ctx::with_base(model, options, ge_logical(model, options)?);
        let width = ctx.chain_cover().chains.len();
        let mut candidates: Vec<Candidate> = table::candidates(width, ctx.policy_cap(options.stream_budget()))
            .into_iter()
            .map(Candidate::Policy)
            .collect();
        let with_peers = peers::evaluated(model, options);
        let limit = super::fit::resolve(model, options, limits)?;
        let options = match limit.as_ref() {
            Some(r) => super::fit::within(options, r, options.execution_order),
            None => options.clone(),
        };
        let reference = ideal(model, cfg)?;
        let peer_plans = if with_peers { peers::plans(model, &options)? } else { Vec::new() };
        candidates.extend(peer_plans.iter().map(|(peer, _)| Candidate::Peer(*peer)));
        let peer_reference = match with_peers {
            true => peers::fastest_fitting(model, &options, limits, cfg, &peer_plans)?,
            false => None,
        };
        Ok(AutoSearch {
            model,
            limits,
            cfg,
            ctx,
            limit,
            ideal_makespan_us: reference.makespan_us,
            ideal_us: round3(reference.makespan_us),
            bound_us: round3(reference.lower_bound_us),
            max_streams: options.stream_budget(),
            max_events: options.event_budget(),
            trials: Arc::new(Trials::default()),
            candidates,
            peer_reference,
            peer_plans,
            order_facts: with_peers.then(|| OrderFacts::of(model)),
            options,
        })
    }

    /// Candidate `i` through the pipeline and the simulator. `known`: the outcomes of the
    /// earlier batches, by logical streams, which a candidate ending on the same streams shares.
    fn run_candidate(&self, i: usize, known: &KeyMap<Outcome>) -> Result<Run<'m>> {
        let (model, options, limits, cfg) = (self.model, &self.options, self.limits, self.cfg);
        let p = self.candidates[i];
        let mut s = Session::new(model, p.options(options), *limits)
            .with_policy_input(Arc::clone(self.ctx.input()))
            .with_trials(self.trials.clone())
            .recording();
        if let (Candidate::Peer(peer), Some(facts)) = (p, self.order_facts.as_ref())
            && let Some(plan) = self.peer_plans.iter().find(|(q, _)| *q == peer)
        {
            let cap = self.ctx.policy_cap(self.max_streams);
            match peers::logical(&self.ctx, options, plan, cap, facts)? {
                Ok(logical) => s = s.with_logical(logical),
                Err(why) => return Ok(Run::Rejected(why)),
            }
        }
        // A candidate past a device limit (streams, events, notifies) is not an answer, but
        // another candidate may be: it is reported and dropped, never fatal.
        let ran = s.run_to(Stage::Logical).and_then(|()| {
            let key = StreamsKey::of_allocation(s.allocation()?);
            if let Some(seen) = known.get(&key) {
                return Ok(Err(*seen));
            }
            s.run_to(Stage::Split)?;
            Ok(Ok(key))
        });
        let ran = match ran {
            Err(e) if e.kind == ErrorKind::Limit => return Ok(Run::Rejected(e.to_string())),
            r => r?,
        };
        let key = match ran {
            Err(seen) => return Ok(Run::Seen(s, seen)),
            Ok(key) => key,
        };
        let outcome = Outcome::of(model, s.allocation()?, cfg)?;
        let peak = match over_budget(&outcome, self.max_streams, self.max_events) {
            None => s.memory_plan()?.map(|m| m.peak_bytes),
            Some(_) => None,
        };
        let outcome = Outcome { peak, ..outcome };
        if let (Some(r), Some(p)) = (self.limit.as_ref(), peak)
            && p > r.bytes
            && !options.compat_ge
        {
            return self.over_limit(i, s, key, outcome, r, p);
        }
        Ok(Run::Own(s, key, outcome))
    }

    /// Candidate `i`, whose run `s` is over the limit `r` with peak `p`: its assignment in the
    /// memory-aware order when that fits; otherwise the run with syncs added for memory, in its
    /// own order and then in the memory-aware one, the first that fits; otherwise the
    /// memory-aware order if it lowered the peak, else its own run (to be rejected).
    fn over_limit(
        &self,
        i: usize,
        s: Session<&'m Model>,
        key: StreamsKey,
        outcome: Outcome,
        r: &super::fit::Resolved,
        p: u64,
    ) -> Result<Run<'m>> {
        let (model, options, limits, cfg) = (self.model, &self.options, self.limits, self.cfg);
        let re = match options.execution_order {
            ExecutionOrder::Memory => None,
            _ => reordered(model, &self.candidates[i].options(options), limits, cfg, &self.ctx, r)?
                .filter(|(_, o2)| o2.peak.is_some_and(|q| q < p)),
        };
        if let Some((_, o2)) = &re
            && o2.peak.is_some_and(|q| q <= r.bytes)
        {
            return Ok(re.map_or(Run::Own(s, key, outcome), |(s2, o2)| Run::Reordered(s2, o2)));
        }
        for run in std::iter::once(&s).chain(re.as_ref().map(|x| &x.0)) {
            if let Some(synced) = super::fit::memory_synced(model, run, r.bytes, cfg)? {
                let o3 = Outcome::of(model, synced.session.allocation()?, cfg)?;
                if over_budget(&o3, self.max_streams, self.max_events).is_none() {
                    return Ok(Run::Synced(synced.session, Outcome { peak: Some(synced.peak), ..o3 }, synced.added));
                }
            }
        }
        Ok(match re {
            Some((s2, o2)) => Run::Reordered(s2, o2),
            None => Run::Own(s, key, outcome),
        })
    }

    /// Candidates `start..end`, side by side when there are several.
    fn run_batch(&self, start: usize, end: usize, known: &KeyMap<Outcome>) -> Vec<Result<Run<'m>>> {
        let run = |i: usize| self.run_candidate(i, known);
        if end - start == 1 {
            return vec![run(start)];
        }
        std::thread::scope(|scope| {
            // The main thread's stack size (8 MiB) and more, not a spawned thread's 2 MiB: the
            // stages were sized for the caller's stack.
            let spawn = |i: usize| std::thread::Builder::new().stack_size(STACK).spawn_scoped(scope, move || run(i));
            let handles: Vec<_> = (start..end).map(|i| (i, spawn(i))).collect();
            handles
                .into_iter()
                .map(|(i, h)| match h {
                    Ok(h) => h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
                    // No thread to be had: the candidate runs here instead.
                    Err(_) => run(i),
                })
                .collect()
        })
    }

    /// Takes candidate `i`'s run: its report row, and a place in the pool if it may be chosen.
    fn take(&self, i: usize, run: Run<'m>, tally: &mut Tally) -> Result<()> {
        let p = self.candidates[i];
        let mut memory_syncs = None;
        let (s, outcome, repeat) = match run {
            Run::Rejected(why) => {
                tally.rows.push(CandidateRow {
                    policy: p.name(),
                    ideal_us: self.ideal_us,
                    lower_bound_us: self.bound_us,
                    rejected: Some(why),
                    ..CandidateRow::default()
                });
                return Ok(());
            }
            Run::Seen(s, seen) => (s, seen, true),
            // Its own streams in another order: not an outcome another candidate can repeat.
            Run::Reordered(s, outcome) => (s, outcome, false),
            Run::Synced(s, outcome, added) => {
                memory_syncs = Some(added);
                (s, outcome, false)
            }
            // An earlier candidate of the same batch may have ended on the same streams: then
            // this one is its repeat, as it would have been one after the other.
            Run::Own(s, key, outcome) => match tally.outcomes.get(&key) {
                Some(seen) => (s, *seen, true),
                None => {
                    tally.outcomes.insert(key, outcome);
                    (s, outcome, false)
                }
            },
        };
        let mut row = CandidateRow {
            policy: p.name(),
            ideal_us: self.ideal_us,
            lower_bound_us: self.bound_us,
            plan: Some(CandidatePlan {
                makespan_us: round3(outcome.makespan_us),
                streams: outcome.streams,
                syncs: outcome.syncs,
                event_ids: outcome.ids,
            }),
            unbudgeted_streams: s.report().and_then(PolicyReport::unbudgeted_streams),
            execution_order: (s.options().execution_order == ExecutionOrder::Memory
                && self.options.execution_order != ExecutionOrder::Memory)
                .then(|| "memory".to_string()),
            memory_syncs,
            ..CandidateRow::default()
        };
        if let Some(why) = over_budget(&outcome, self.max_streams, self.max_events) {
            row.rejected = Some(why);
            tally.rows.push(row);
            return Ok(());
        }
        let limit_bytes = self.limit.as_ref().map(|r| r.bytes);
        row.peak_bytes = outcome.peak;
        row.rejected = crate::memory::budget::judge(limit_bytes, outcome.peak, &mut tally.smallest, p.name());
        let fits = row.rejected.is_none();
        tally.rows.push(row);
        // A candidate on the streams of an earlier one ties with it at best.
        if !fits || repeat {
            return Ok(());
        }
        let offer = Offer {
            makespan: outcome.makespan_us,
            peak: outcome.peak.unwrap_or(0),
            streams: outcome.streams,
            syncs: outcome.syncs,
            index: i,
        };
        tally.pool.note(offer);
        if tally.pool.admits(&offer) {
            let options = s.options().clone();
            tally.pool.add(Kept { offer, candidate: p, options, stages: s.into_stages()?.0 });
        }
        Ok(())
    }

    /// The pool's choice, refined, with the report of every candidate; an error naming each
    /// candidate's reason when none is feasible.
    fn finish(self, tally: Tally) -> Result<Found> {
        let (model, options) = (self.model, &self.options);
        let Tally { pool, rows, smallest, .. } = tally;
        let Some((Kept { offer, candidate: chosen, options: chosen_options, mut stages }, capped)) = pool.choose()
        else {
            if let Some(r) = self.limit.as_ref()
                && rows.iter().all(|r| r.peak_bytes.is_some())
            {
                return Err(crate::memory::budget::none_fits(model, &r.text(), smallest));
            }
            // Each reason as JSON text (quoted; `null` for none), as the error has always written it.
            let reasons: Vec<String> =
                rows.iter().map(|r| format!("{}: {}", r.policy, serde_json::Value::from(r.rejected.clone()))).collect();
            bail!(Limit, "policy auto on graph '{}': no candidate is feasible ({})", model.name, reasons.join("; "));
        };
        let Some(base) = stages.logical.as_ref() else {
            bail!(Internal, "policy auto on graph '{}': the chosen run kept no logical stage", model.name);
        };
        // The improvement pass keeps the chosen run's order, the limit in bytes, and ids reused
        // by lifetime when the chosen streams fit `max_events` only so: its trials then reuse
        // them at once instead of first running out of ids.
        let mut refine_options = match self.limit.as_ref() {
            Some(r) => super::fit::within(options, r, chosen_options.execution_order),
            None => options.clone(),
        };
        refine_options.event_reuse_lifetime |= stages.split.as_ref().is_some_and(Allocation::ids_reused_by_lifetime);
        // A policy's trials run under its own name; a peer's under auto's, as the session
        // runs the chosen streams' later stages. GE's own assignment keeps GE's rules.
        let trial_policy = match chosen {
            Candidate::Policy(p) if p.is_ge() => None,
            Candidate::Policy(p) => Some(p.policy()),
            Candidate::Peer(_) => Some(options.policy.clone()),
        };
        let refined = super::refine::refine(
            model,
            &refine_options,
            self.limits,
            self.cfg,
            &self.ctx,
            base,
            (chosen.name(), trial_policy),
            self.ideal_makespan_us,
        )?;
        let makespan = match refined.logical {
            // The session runs the stages after assignment again on the refined streams.
            Some(logical) => {
                stages = Stages { logical: Some(logical), ..Stages::default() };
                refined.makespan_us
            }
            None => offer.makespan,
        };
        let auto = AutoReport {
            chosen: chosen.name(),
            makespan_us: round3(makespan),
            ideal_us: self.ideal_us,
            why: self.why(capped),
            candidates: rows,
            refine: refined.report,
        };
        let report = PolicyReport::with_section("auto", auto);
        Ok(Found { stages, report })
    }

    /// The rule the choice followed and the figures it used, for the report.
    fn why(&self, capped: bool) -> String {
        let rule = match self.limit.as_ref() {
            Some(r) => format!("fastest within memory_limit={}", r.limit),
            // Short: the summary's policy line holds it under 200 characters.
            None => format!("leanest within {}% of fastest", LEAN_TOLERANCE * 100.0),
        };
        // The ceiling, where the fastest fitting peer's plan changed the choice.
        let rule = match self.peer_reference.as_ref() {
            Some((peer, _)) if capped => format!("{rule}, no slower than peer {peer}"),
            _ => rule,
        };
        format!(
            "{rule} ({} units, {} us/wait; {} streams, {} ids)",
            self.cfg.units,
            self.cfg.wait_latency_us,
            budget_text(self.max_streams),
            budget_text(self.max_events)
        )
    }
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

impl Outcome {
    /// The simulated plan of `alloc`; its peak is the memory plan's, asked only when the plan
    /// fits the device.
    fn of(model: &Model, alloc: &Allocation, cfg: &SimConfig) -> Result<Outcome> {
        let sim = simulate(model, alloc, cfg)?;
        Ok(Outcome {
            makespan_us: sim.makespan_us,
            streams: sim.streams,
            syncs: sim.syncs,
            ids: super::sync_ids(alloc),
            logical_count: alloc.logical_count(),
            peak: None,
        })
    }
}

/// How far above the fastest plan `auto` looks for a leaner one without `memory_limit`
/// (docs/policies.md, "The leanest plan for its speed").
pub const LEAN_TOLERANCE: f64 = 0.005;

/// A feasible candidate's figures, as the choice compares them.
#[derive(Clone, Copy, Debug)]
struct Offer {
    makespan: f64,
    /// The memory plan's peak (0 without sizes).
    peak: u64,
    streams: u32,
    syncs: usize,
    /// Candidate order, the last tie-break.
    index: usize,
}

/// A candidate still in the running, with the stages the session adopts if it wins.
struct Kept {
    offer: Offer,
    candidate: Candidate,
    options: Options,
    stages: Stages,
}

/// The candidates in the running. `lean`: every plan within [`LEAN_TOLERANCE`] of the fastest
/// so far and no slower than `ceiling` (unless the fastest itself is), the choice the lowest
/// peak, then the fewest streams, the fewest syncs, the shortest makespan and the earlier
/// candidate. Otherwise (under `memory_limit`) the one fastest plan, ties to fewer streams,
/// fewer syncs, the earlier candidate.
struct Pool {
    lean: bool,
    /// The makespan of the fastest peer's own plan that fits the device: a leaner plan slower
    /// than it would leave `auto` slower than that peer.
    ceiling: Option<f64>,
    kept: Vec<Kept>,
    /// Under a ceiling, every plan the window would hold without it (figures only): what the
    /// lean rule alone would choose, for the report to say whether the ceiling changed that.
    uncapped: Vec<Offer>,
}

impl Pool {
    fn fastest(&self) -> Option<f64> {
        self.kept.iter().map(|k| k.offer.makespan).min_by(f64::total_cmp)
    }

    /// The slowest makespan the lean rule keeps when the fastest plan runs `fastest`.
    fn window(&self, fastest: f64) -> f64 {
        let lean = fastest * (1.0 + LEAN_TOLERANCE);
        self.ceiling.map_or(lean, |c| lean.min(c.max(fastest)))
    }

    fn fast_key(o: &Offer) -> (f64, u32, usize, usize) {
        (o.makespan, o.streams, o.syncs, o.index)
    }

    /// Whether `o` may be chosen given what is kept (before its stages are taken).
    fn admits(&self, o: &Offer) -> bool {
        match (self.lean, self.fastest()) {
            (_, None) => true,
            (true, Some(f)) => o.makespan <= self.window(f),
            (false, Some(_)) => {
                let (a, b) = (Self::fast_key(o), Self::fast_key(&self.kept[0].offer));
                a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)).then(a.3.cmp(&b.3)).is_lt()
            }
        }
    }

    fn add(&mut self, k: Kept) {
        if !self.lean {
            self.kept.clear();
        }
        self.kept.push(k);
        if let Some(f) = self.fastest() {
            let window = self.window(f);
            self.kept.retain(|k| k.offer.makespan <= window);
        }
    }

    /// Takes note of a feasible plan for the choice without the ceiling.
    fn note(&mut self, o: Offer) {
        if self.ceiling.is_none() {
            return;
        }
        self.uncapped.push(o);
        let f = self.uncapped.iter().map(|o| o.makespan).fold(f64::INFINITY, f64::min);
        self.uncapped.retain(|o| o.makespan <= f * (1.0 + LEAN_TOLERANCE));
    }

    /// The lean rule's order: the lowest peak, the fewest streams, the fewest syncs, the
    /// shortest makespan, the earlier candidate.
    fn leaner(x: &Offer, y: &Offer) -> std::cmp::Ordering {
        x.peak
            .cmp(&y.peak)
            .then(x.streams.cmp(&y.streams))
            .then(x.syncs.cmp(&y.syncs))
            .then(x.makespan.total_cmp(&y.makespan))
            .then(x.index.cmp(&y.index))
    }

    /// The choice, and whether the ceiling changed it (the lean rule alone would choose another).
    fn choose(self) -> Option<(Kept, bool)> {
        let uncapped = self.uncapped.iter().min_by(|a, b| Self::leaner(a, b)).map(|o| o.index);
        let kept = self.kept.into_iter().min_by(|a, b| Self::leaner(&a.offer, &b.offer))?;
        let capped = uncapped.is_some_and(|i| i != kept.offer.index);
        Some((kept, capped))
    }
}

/// Stack of a thread that runs a candidate.
const STACK: usize = 64 << 20;

/// What one candidate's run came to, before the search takes it in candidate order.
enum Run<'m> {
    /// A device limit stopped it; the error's text.
    Rejected(String),
    /// It ended on the logical streams of a candidate of an earlier batch, whose outcome it shares.
    Seen(Session<&'m Model>, Outcome),
    /// Its own outcome, under its logical streams.
    Own(Session<&'m Model>, StreamsKey, Outcome),
    /// Its assignment in the memory-aware order, its own order being over `memory_limit`.
    Reordered(Session<&'m Model>, Outcome),
    /// Its run (in its own order or the memory-aware one) with syncs added for memory (how
    /// many), being over `memory_limit` without them.
    Synced(Session<&'m Model>, Outcome, usize),
}

/// A candidate's assignment in the memory-aware order gated at the limit `r`, through the
/// pipeline and the simulator; `None` when a device limit stops it.
fn reordered<'m>(
    model: &'m Model,
    options: &Options,
    limits: &TaskLimits,
    cfg: &SimConfig,
    ctx: &Ctx<'_>,
    r: &super::fit::Resolved,
) -> Result<Option<(Session<&'m Model>, Outcome)>> {
    let mut s = Session::new(model, super::fit::within(options, r, ExecutionOrder::Memory), *limits)
        .with_policy_input(Arc::clone(ctx.input()))
        .recording();
    match s.run_to(Stage::Split) {
        Err(e) if e.kind == ErrorKind::Limit => return Ok(None),
        r => r?,
    }
    let outcome = Outcome::of(model, s.allocation()?, cfg)?;
    if over_budget(&outcome, options.stream_budget(), options.event_budget()).is_some() {
        return Ok(None);
    }
    let peak = s.memory_plan()?.map(|m| m.peak_bytes);
    Ok(Some((s, Outcome { peak, ..outcome })))
}

/// Why a candidate's plan is over `max_streams` or `max_events`, if it is.
fn over_budget(outcome: &Outcome, max_streams: u32, max_events: u32) -> Option<String> {
    if outcome.logical_count > max_streams {
        Some(format!("{} logical streams exceed max_streams={max_streams}", outcome.logical_count))
    } else if outcome.ids > max_events {
        Some(format!("{} sync ids exceed max_events={max_events}", outcome.ids))
    } else {
        None
    }
}

/// A budget as the option writes it.
pub fn budget_text(b: u32) -> String {
    if b == u32::MAX { "unlimited".into() } else { b.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::synth::{Family, generate};

    /// Threads change when a candidate runs, never what the search answers: the same report and
    /// the same chosen streams one after the other and in batches of 2 and 3 (odd batches put
    /// equal-stream candidates in one batch and across two), with budgets that fit and that do not.
    #[test]
    fn batches_give_the_answer_of_one_after_the_other() {
        let families = [Family::Layered { width: 8 }, Family::Inception, Family::Random { window: Some(8) }];
        for (f, family) in families.into_iter().enumerate() {
            let model = generate(family, 400, 3 + f as u64).unwrap();
            for max_events in [u32::MAX, 24, 2] {
                let options = Options { policy: "auto".into(), max_events: Some(max_events), ..model.options.clone() };
                let limits = TaskLimits::from_options(&options);
                let cfg = SimConfig::default();
                let one = choose_in_batches(&model, &options, &limits, &cfg, 1);
                for batch in [2, 3] {
                    let many = choose_in_batches(&model, &options, &limits, &cfg, batch);
                    let what = format!("{} with max_events={max_events}, batch {batch}", model.name);
                    match (&one, &many) {
                        (Ok(a), Ok(b)) => {
                            assert_eq!(a.report, b.report, "{what}");
                            let streams = |x: &Found| x.stages.logical.as_ref().map(|l| l.logical_stream().clone());
                            assert_eq!(streams(a), streams(b), "{what}");
                        }
                        (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{what}"),
                        _ => panic!("{what}: one answered and the other did not"),
                    }
                }
            }
        }
    }
}
