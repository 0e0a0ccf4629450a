//! `auto`'s improvement pass: the winning candidate's assignment searched further with the
//! simulator in the loop.
//!
//! A fixed policy decides streams before the order and the syncs exist, so what it leaves are
//! waits where the simulated critical path changes stream and merges made blind to the
//! schedule. The pass walks the critical path of the simulated plan, and for each wait on it
//! (a record on one logical stream gating a node on another) tries, in this order: the waiting
//! node onto the recording stream; the waiting node with the chain that follows it on its stream;
//! the recording node onto the waiting stream; the two nodes' places swapped with the node that
//! runs after the record; the waiting stream merged whole into the recording one. Each trial
//! chooses the execution order of the changed assignment, runs the later stages through a
//! [`Session`] adopting it (sync insertion and reduction, split), and the simulator; a move is kept only when the makespan drops and the budgets
//! (`max_streams`, `max_events`, `memory_limit`, the device's limits) still hold, and then the
//! walk starts again from the new plan. Only the policy's own task nodes move, onto the
//! policy's own streams: pinned nodes (user labels, control flow, nested graphs, attached
//! streams) keep GE's streams, and followers (nodes without tasks) are re-placed by the rule
//! every policy uses.
//!
//! Effort is bounded: at most [`MAX_TRIALS`] trial runs, and at most [`TRIAL_WORK`] nodes +
//! edges summed over the trials, so a graph of N nodes + edges gets
//! `min(MAX_TRIALS, TRIAL_WORK / N)` trials and none when that is under [`MIN_TRIALS`]
//! (graphs above 125,000 nodes + edges are left as the candidate made them). A plan already at
//! the ideal makespan is not searched. Everything is deterministic: moves are tried in a fixed
//! order, ties never accept, and a plan tried once is not tried again.

use std::collections::BTreeSet;

use super::report::{MovePoint, RefineMove, RefineReport, RefineRun};
use crate::compile::order::OrderFacts;
use crate::compile::policy::{Ctx, Role, place_followers};
use crate::compile::{self, Allocation, Stage, TaskLimits};
use crate::driver::Session;
use crate::error::Result;
use crate::graph::{GraphId, IdVec, Model, NodeId, Options, Policy, StreamId};
use crate::simulate::{SimConfig, SimResult, round3, simulate};

/// Most trial runs (sync, split and simulation of one changed assignment) per graph.
pub const MAX_TRIALS: usize = 256;
/// Nodes + edges summed over all trials of one graph.
pub const TRIAL_WORK: usize = 2_000_000;
/// Fewer trials than this are not worth a search: the pass is skipped.
pub const MIN_TRIALS: usize = 16;
/// Nodes a chain move carries at most.
const CHAIN: usize = 32;
/// Nodes that took the units from a critical node tried per point, earliest first.
const TOOK: usize = 3;
/// Makespans closer than this are equal (simulated times are sums of input costs).
const EPS: f64 = 1e-9;

/// The trials a graph of `size` nodes + edges gets (0: the pass is skipped).
pub fn trial_budget(size: usize) -> usize {
    let t = (TRIAL_WORK / size.max(1)).min(MAX_TRIALS);
    if t < MIN_TRIALS { 0 } else { t }
}

/// What the pass did: the refined logical allocation when a move was kept, and the report.
pub struct Refined {
    pub logical: Option<Allocation>,
    pub makespan_us: f64,
    pub report: RefineReport,
}

/// One evaluated assignment.
struct Eval {
    logical: Allocation,
    sim: SimResult,
    /// The allocation after the split (its order, streams and syncs).
    done: Allocation,
}

/// The fixed inputs of every trial.
struct Trials<'a> {
    model: &'a Model,
    options: &'a Options,
    limits: &'a TaskLimits,
    cfg: &'a SimConfig,
    name: String,
    attached: IdVec<NodeId, Vec<StreamId>>,
    main_count: u32,
    attached_count: u32,
    run: usize,
    rejected: usize,
    first_error: Option<String>,
    /// What every trial's execution order reads of the model, computed once.
    order: OrderFacts,
    /// The root graph's order of the plan the trials start from, when the policy fixed its own
    /// (`fifo:N`'s placement order): a trial moves nodes between streams and keeps that order,
    /// still a topological one, instead of choosing another, which would undo what the
    /// policy's order gained. `None`: every trial chooses its order.
    kept_order: Option<Vec<NodeId>>,
}

impl Trials<'_> {
    /// The pipeline after assignment on `stream`, within the budgets; `None` when it does not
    /// fit or a stage refuses it.
    fn eval(&mut self, stream: &Streams) -> Option<Eval> {
        self.run += 1;
        let tried = self.try_eval(stream);
        self.count(tried)
    }

    /// The candidate's own logical allocation as it stands, its execution order included (a
    /// policy may fix its own, which the trials' computed order would not repeat).
    fn eval_as_is(&mut self, logical: Allocation) -> Option<Eval> {
        self.run += 1;
        let tried = self.try_run(logical);
        self.count(tried)
    }

    /// A trial's result, a refused one counted.
    fn count(&mut self, tried: Result<Option<Eval>>) -> Option<Eval> {
        match tried {
            Ok(Some(e)) => Some(e),
            Ok(None) => {
                self.rejected += 1;
                None
            }
            Err(e) => {
                self.rejected += 1;
                self.first_error.get_or_insert(e.to_string());
                None
            }
        }
    }

    fn try_eval(&self, stream: &Streams) -> Result<Option<Eval>> {
        let (stream, main, attached) = compact(stream, self.main_count, &self.attached);
        if main > self.options.stream_budget() {
            return Ok(None);
        }
        let mut logical = Allocation::from_logical(
            self.name.clone(),
            self.options.event,
            stream,
            main,
            attached,
            self.attached_count,
        );
        compile::choose_order_with(self.model, self.options, &mut logical, Some(&self.order), self.kept_order.clone());
        self.try_run(logical)
    }

    /// The later stages and the simulator on `logical`, its order chosen.
    fn try_run(&self, logical: Allocation) -> Result<Option<Eval>> {
        // The session runs the later stages; the checker is the caller's, once, on the result.
        let options = Options { verify: false, ..self.options.clone() };
        let mut session = Session::new(self.model, options, *self.limits).with_logical(logical.clone());
        session.run_to(Stage::All)?;
        if super::sync_ids(session.allocation()?) > self.options.event_budget() {
            return Ok(None);
        }
        if let Some(max) = self.options.memory_limit.map(|m| m.bytes(0))
            && session.memory_plan()?.is_some_and(|p| p.peak_bytes > max)
        {
            return Ok(None);
        }
        let (done, _) = session.into_result()?;
        let sim = simulate(self.model, &done, self.cfg)?;
        Ok(Some(Eval { logical, sim, done }))
    }
}

/// Whether `base`'s execution order is one its policy fixed (`fixes` the order, as `fifo:N`
/// does): the order the pipeline would choose for its streams is another.
fn fixes_its_order(model: &Model, options: &Options, base: &Allocation, facts: &OrderFacts) -> bool {
    let mut chosen = base.clone();
    compile::choose_order_with(model, options, &mut chosen, Some(facts), None);
    chosen.set_order_or_empty() != base.set_order_or_empty()
}

/// Stream ids made dense again after moves emptied some: main streams keep their relative
/// order, attached streams follow the main ones as before.
fn compact(
    stream: &Streams,
    main_count: u32,
    attached: &IdVec<NodeId, Vec<StreamId>>,
) -> (Streams, u32, IdVec<NodeId, Vec<StreamId>>) {
    let mut used = vec![false; main_count as usize];
    for s in stream.iter().flatten() {
        if let Some(u) = used.get_mut(s.index()) {
            *u = true;
        }
    }
    let mut map = vec![0u32; main_count as usize];
    let mut next = 0u32;
    for (i, u) in used.iter().enumerate() {
        map[i] = next;
        if *u {
            next += 1;
        }
    }
    if next == main_count {
        return (stream.clone(), main_count, attached.clone());
    }
    let gone = main_count - next;
    let stream = stream.iter().map(|s| s.map(|s| StreamId(map.get(s.index()).copied().unwrap_or(s.0)))).collect();
    let attached = attached.iter().map(|v| v.iter().map(|s| StreamId(s.0 - gone)).collect()).collect();
    (stream, next, attached)
}

/// Every node's logical stream.
type Streams = IdVec<NodeId, Option<StreamId>>;
/// A move: its kind, and the nodes it puts on which streams.
type Move = (&'static str, Vec<(NodeId, StreamId)>);

/// Where the simulated critical path loses time.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Point {
    /// It goes from one stream to another through a sync's latency: (recording node, waiting
    /// node).
    Wait(NodeId, NodeId),
    /// The node could start at `ready` but waited for compute units that nodes of other
    /// streams, started since, were holding.
    Units(NodeId, f64),
}

/// The simulated critical path's losses, first to last.
fn critical_points(model: &Model, e: &Eval, cfg: &SimConfig) -> Vec<Point> {
    let sim = &e.sim;
    let order = e.done.order(model);
    let nn = model.nodes.len();
    // The node before each node on its physical stream.
    let mut prev: IdVec<NodeId, Option<NodeId>> = IdVec::filled(nn, None);
    let mut last: Vec<Option<NodeId>> = vec![None; e.done.physical_count() as usize + 1];
    for &n in order.iter() {
        if let Some(s) = sim.stream[n] {
            if s.index() >= last.len() {
                last.resize(s.index() + 1, None);
            }
            prev[n] = last[s.index()];
            last[s.index()] = Some(n);
        }
    }
    let mut records: IdVec<NodeId, Vec<NodeId>> = IdVec::filled(nn, Vec::new());
    for &(r, w) in &sim.waits {
        records[w].push(r);
    }
    let finish = |n: NodeId| sim.span[n].map_or(f64::NEG_INFINITY, |s| s.1);
    let Some(mut n) = model
        .nodes
        .ids()
        .filter(|&n| sim.span[n].is_some())
        .max_by(|&a, &b| finish(a).total_cmp(&finish(b)).then(b.cmp(&a)))
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for _ in 0..nn {
        let Some((start, _)) = sim.span[n] else { break };
        if start <= EPS {
            break;
        }
        let near = |t: f64| (t - start).abs() <= 1e-6;
        if let Some(&r) = records[n].iter().find(|&&r| near(finish(r) + cfg.wait_latency_us)) {
            out.push(Point::Wait(r, n));
            n = r;
            continue;
        }
        // Otherwise the stream order, a dependency, or units another node released: the
        // latest of them to finish.
        let before = prev[n]
            .into_iter()
            .chain(model.in_edges(n).map(|e| e.src))
            .filter(|&m| finish(m) <= start + 1e-6)
            .max_by(|&a, &b| finish(a).total_cmp(&finish(b)).then(b.cmp(&a)));
        let ready = records[n]
            .iter()
            .map(|&r| finish(r) + cfg.wait_latency_us)
            .chain(before.map(finish))
            .fold(0.0f64, f64::max);
        if ready < start - 1e-6 {
            out.push(Point::Units(n, ready));
        }
        match before {
            Some(m) if m != n => n = m,
            _ => break,
        }
    }
    out.reverse();
    out
}

/// The moves tried at one point of the critical path, in order, and where the point is (for the
/// report). Only task nodes move, and only onto streams `movable` allows.
fn point_trials(
    model: &Model,
    role: &IdVec<NodeId, Role>,
    cur: &Eval,
    logical: &Streams,
    next_on: &IdVec<NodeId, Option<NodeId>>,
    movable: &dyn Fn(StreamId) -> bool,
    point: Point,
) -> (MovePoint, Vec<Move>) {
    let task = |n: NodeId| role[n] == Role::Task;
    let name = |n: NodeId| model.nodes[n].name.clone();
    let mut trials: Vec<Move> = Vec::new();
    // The chain that follows `from` on its stream, moved to `to`, as long as each node depends
    // on the one before.
    let chain = |from: NodeId, to: StreamId| {
        let mut chain = vec![(from, to)];
        let mut at = from;
        while chain.len() < CHAIN {
            let Some(m) = next_on[at] else { break };
            if !task(m) || !model.in_edges(m).any(|e| e.src == at) {
                break;
            }
            chain.push((m, to));
            at = m;
        }
        chain
    };
    let (r, w) = match point {
        Point::Wait(r, w) => (r, w),
        Point::Units(n, ready) => {
            let at = MovePoint::Units(name(n));
            // The nodes of other streams that took the units since `n` was ready, each tried
            // on `n`'s stream (the order runs the critical path first there).
            let Some(sn) = logical[n].filter(|&s| movable(s)) else { return (at, trials) };
            let start = cur.sim.span[n].map_or(0.0, |s| s.0);
            let mut took: Vec<(f64, NodeId)> = model
                .nodes
                .ids()
                .filter(|&m| task(m) && logical[m].is_some_and(|s| s != sn))
                .filter_map(|m| cur.sim.span[m].map(|(a, b)| (a, b, m)))
                .filter(|&(a, b, _)| a >= ready - 1e-6 && a < start - 1e-6 && b > start - 1e-6)
                .map(|(a, _, m)| (a, m))
                .collect();
            took.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
            for (_, m) in took.into_iter().take(TOOK) {
                trials.push(("units: onto the critical stream", vec![(m, sn)]));
            }
            return (at, trials);
        }
    };
    let at = MovePoint::Wait([name(r), name(w)]);
    let (Some(sr), Some(sw)) = (logical[r], logical[w]) else { return (at, trials) };
    if sr == sw {
        return (at, trials);
    }
    if task(w) && movable(sr) {
        trials.push(("wait onto record", vec![(w, sr)]));
        let c = chain(w, sr);
        if c.len() > 1 {
            trials.push(("chain onto record", c));
        }
    }
    if task(r) && movable(sw) {
        trials.push(("record onto wait", vec![(r, sw)]));
    }
    if task(w)
        && movable(sr)
        && movable(sw)
        && let Some(m) = next_on[r]
        && task(m)
    {
        trials.push(("swap", vec![(w, sr), (m, sw)]));
        // The two chains swapped: the waiting node's onto the record's stream and the chain
        // that ran after the record onto the waiting stream.
        let mut both = chain(w, sr);
        both.extend(chain(m, sw));
        if both.len() > 2 {
            trials.push(("swap chains", both));
        }
    }
    if movable(sr) && movable(sw) {
        let all: Vec<(NodeId, StreamId)> =
            model.nodes.ids().filter(|&n| task(n) && logical[n] == Some(sw)).map(|n| (n, sr)).collect();
        if !all.is_empty() {
            trials.push(("merge streams", all));
        }
    }
    (at, trials)
}

/// A stable hash of an assignment, to try each one once.
fn digest(stream: &Streams) -> u64 {
    stream.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, s| {
        let v = s.map_or(u64::MAX, |s| u64::from(s.0));
        (h ^ v).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Searches around `base`, the logical stage of the run the candidate `from` made (its name,
/// and the policy its trials run under; `None` for GE's own assignment, which keeps GE's
/// rules), under `cfg`, in the policy context `ctx` (built for `model` and `options`);
/// `ideal_us` is the graph's ideal makespan (a plan there is left alone).
#[allow(clippy::too_many_arguments)]
pub fn refine(
    model: &Model,
    options: &Options,
    limits: &TaskLimits,
    cfg: &SimConfig,
    ctx: &Ctx<'_>,
    base: &Allocation,
    from: (String, Option<Policy>),
    ideal_us: f64,
) -> Result<Refined> {
    let (name, policy) = from;
    let size = model.nodes.len() + model.edges.len();
    let budget = trial_budget(size);
    let skip = |why: &str, makespan: f64| Refined {
        logical: None,
        makespan_us: makespan,
        report: RefineReport {
            from: name.clone(),
            trial_budget: budget,
            skipped: Some(why.to_string()),
            ..RefineReport::default()
        },
    };
    let Some(policy) = policy else {
        return Ok(skip("GE's own assignment keeps GE's rules", f64::NAN));
    };
    if budget == 0 {
        return Ok(skip(&format!("{size} nodes + edges: above the {TRIAL_WORK} / {MIN_TRIALS} bound"), f64::NAN));
    }
    let fixed = Options { policy, verify: false, ..options.clone() };
    let mut t = Trials {
        model,
        options: &fixed,
        limits,
        cfg,
        name: base.mode().to_string(),
        attached: base.attached().clone(),
        main_count: base.logical_count(),
        attached_count: base.attached_count(),
        run: 0,
        rejected: 0,
        first_error: None,
        order: OrderFacts::of(model),
        kept_order: None,
    };
    let Some(mut cur) = t.eval_as_is(base.clone()) else {
        return Ok(skip("the candidate's own plan does not fit the budgets as a trial", f64::NAN));
    };
    let keeps_order = fixes_its_order(model, &fixed, base, &t.order);
    let start_us = cur.sim.makespan_us;
    let mut tried = BTreeSet::new();
    tried.insert(digest(base.logical_stream()));
    let mut moves: Vec<RefineMove> = Vec::new();
    'search: while t.run < budget && cur.sim.makespan_us > ideal_us + 1e-6 {
        let points = critical_points(model, &cur, cfg);
        let logical = cur.logical.logical_stream().clone();
        // Trials start from this plan's (dense) ids, and its order where the policy fixed it.
        t.main_count = cur.logical.logical_count();
        t.attached = cur.logical.attached().clone();
        if keeps_order {
            let order = cur.logical.order(model);
            t.kept_order = Some(order.iter().copied().filter(|&n| model.nodes[n].graph == GraphId::ROOT).collect());
        }
        // Streams a task node may move to: main streams holding no pinned node.
        let pinned: BTreeSet<StreamId> =
            model.nodes.ids().filter(|&n| ctx.role[n] == Role::Pinned).filter_map(|n| logical[n]).collect();
        let main_count = t.main_count;
        let movable = |s: StreamId| s.0 < main_count && !pinned.contains(&s);
        // The node after each node on its logical stream, in execution order.
        let order = cur.logical.order(model).into_owned();
        let mut next_on: IdVec<NodeId, Option<NodeId>> = IdVec::filled(model.nodes.len(), None);
        let mut last: std::collections::BTreeMap<StreamId, NodeId> = Default::default();
        for &n in &order {
            if let Some(s) = logical[n] {
                if let Some(p) = last.insert(s, n) {
                    next_on[p] = Some(n);
                }
            }
        }
        for &point in &points {
            let (at, trials) = point_trials(model, &ctx.role, &cur, &logical, &next_on, &movable, point);
            for (kind, change) in trials {
                if t.run >= budget {
                    break 'search;
                }
                let mut next = logical.clone();
                for &(n, s) in &change {
                    next[n] = Some(s);
                }
                place_followers(ctx, &mut next, 0);
                if !tried.insert(digest(&next)) {
                    continue;
                }
                let Some(e) = t.eval(&next) else { continue };
                if e.sim.makespan_us < cur.sim.makespan_us - EPS {
                    moves.push(RefineMove {
                        kind: kind.to_string(),
                        at: at.clone(),
                        nodes: change.len(),
                        makespan_us: round3(e.sim.makespan_us),
                    });
                    cur = e;
                    continue 'search;
                }
            }
        }
        break;
    }
    let report = RefineReport {
        from: name,
        trial_budget: budget,
        skipped: None,
        ran: Some(RefineRun {
            trials: t.run,
            rejected_trials: t.rejected,
            makespan_before_us: round3(start_us),
            makespan_us: round3(cur.sim.makespan_us),
            moves,
            first_refused_trial: t.first_error.clone(),
        }),
    };
    let improved = cur.sim.makespan_us < start_us - EPS;
    Ok(Refined { logical: improved.then_some(cur.logical), makespan_us: cur.sim.makespan_us, report })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trial_budget_shrinks_with_the_graph_and_stops() {
        assert_eq!(trial_budget(1_000), MAX_TRIALS);
        assert_eq!(trial_budget(50_000), 40);
        assert_eq!(trial_budget(125_000), MIN_TRIALS);
        assert_eq!(trial_budget(125_001), 0);
        assert_eq!(trial_budget(300_000), 0);
    }
}
