//! Stage 1 as the driver runs it: GE's chain, or a policy narrowed until the sync ids its
//! sync stage inserts fit `max_events`. Only the driver knows that the sync stage follows, so
//! the loop that tries it lives here; the trial that fits is the sync stage's own result, which
//! the session adopts instead of running the stage again.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock};

use crate::compile::logical::LogicalResult;
use crate::compile::order::OrderFacts;
use crate::compile::policy::{self, Bounded, OverBudget, PolicyInput, PolicyReport};
use crate::compile::sync::ModelFacts;
use crate::compile::{self, Allocation, Mode};
use crate::error::Result;
use crate::graph::{Model, Options};

/// What stage 1 computed: the logical allocation, the policy's report and, when the event
/// budget needed a trial, the sync stage's result for that allocation.
pub(super) struct Assigned {
    pub alloc: Allocation,
    pub report: Option<PolicyReport>,
    pub synced: Option<Allocation>,
}

/// A logical result in compact form (a stream id per node, attached streams only where a node
/// has some), to recognise an assignment seen before by full comparison.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StreamsKey {
    node_stream: Vec<u32>,
    main_stream_count: u32,
    attached: Vec<(u32, Vec<u32>)>,
    attached_count: u32,
}

impl StreamsKey {
    /// The key of GE-style logical streams: per node, its stream (`None`: none) and attached
    /// streams, and the two stream counts.
    pub fn new<'a>(
        node_stream: impl Iterator<Item = Option<crate::graph::StreamId>>,
        main_stream_count: u32,
        attached: impl Iterator<Item = &'a Vec<crate::graph::StreamId>>,
        attached_count: u32,
    ) -> Self {
        StreamsKey {
            node_stream: node_stream.map(|s| s.map_or(u32::MAX, |s| s.0)).collect(),
            main_stream_count,
            attached: attached
                .enumerate()
                .filter(|(_, v)| !v.is_empty())
                .map(|(n, v)| (n as u32, v.iter().map(|s| s.0).collect()))
                .collect(),
            attached_count,
        }
    }

    fn of(l: &LogicalResult) -> Self {
        Self::new(l.node_stream.iter().copied(), l.main_stream_count, l.attached.iter(), l.attached_count)
    }

    /// The key of an allocation's logical streams.
    pub fn of_allocation(a: &Allocation) -> Self {
        Self::new(a.logical_stream().iter().copied(), a.logical_count(), a.attached().iter(), a.attached_count())
    }

    /// A hash to bucket keys by; equal keys have equal hashes on every run.
    pub fn digest(&self) -> u64 {
        let mut h = std::hash::DefaultHasher::new();
        self.hash(&mut h);
        h.finish()
    }
}

/// Keys bucketed by their digest, each with a value: a map from [`StreamsKey`] that hashes
/// each key once and keeps equal-digest keys apart by full comparison.
#[derive(Debug)]
pub struct KeyMap<V> {
    buckets: HashMap<u64, Vec<(StreamsKey, V)>>,
}

impl<V> Default for KeyMap<V> {
    fn default() -> Self {
        KeyMap { buckets: HashMap::new() }
    }
}

impl<V> KeyMap<V> {
    pub fn get(&self, key: &StreamsKey) -> Option<&V> {
        self.buckets.get(&key.digest())?.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn insert(&mut self, key: StreamsKey, value: V) {
        let bucket = self.buckets.entry(key.digest()).or_default();
        match bucket.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => bucket.push((key, value)),
        }
    }
}

/// Sync-stage trials that exceeded the event budget, by the logical result they were given:
/// the sync ids and counts they needed. A trial is a function of the model, the options other
/// than the policy, and the logical result alone, so the sessions of one search share these:
/// `auto`'s candidates often narrow to the same assignment (every one of them to one policy
/// stream when no candidate fits). A trial that fits is not kept: it ends its loop.
///
/// The model's [`OrderFacts`] and [`ModelFacts`] are kept here too, computed on the first
/// trial: every trial orders and synchronises the same model's nodes.
#[derive(Debug, Default)]
pub struct Trials {
    over: Mutex<KeyMap<OverBudget>>,
    order: OnceLock<OrderFacts>,
    sync: OnceLock<ModelFacts>,
}

impl Trials {
    fn order_facts(&self, model: &Model) -> &OrderFacts {
        self.order.get_or_init(|| OrderFacts::of(model))
    }

    fn sync_facts(&self, model: &Model) -> &ModelFacts {
        self.sync.get_or_init(|| ModelFacts::build(model))
    }

    fn over(&self, key: &StreamsKey) -> Option<OverBudget> {
        self.over.lock().ok()?.get(key).copied()
    }

    fn record(&self, key: StreamsKey, over: OverBudget) {
        if let Ok(mut map) = self.over.lock() {
            map.insert(key, over);
        }
    }
}

/// Stage 1 in the (non-search) mode `options` select, from the model's policy input (GE's
/// logical result among it) when a caller built it already (a search shares one among its
/// candidates), with the event budget's trials shared through `trials` when given.
pub(super) fn assign(
    model: &Model,
    options: &Options,
    input: Option<&Arc<PolicyInput>>,
    trials: Option<&Trials>,
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
    loop {
        let logical = bounded.logical();
        // Every finite budget needs the trial: the sync stage contracts task-less nodes, so a
        // dependency through one can need a sync per producer and consumer pair, more than the
        // edges that cross streams. The trial that fits is the sync stage itself, not extra work.
        let trial = max_events != u32::MAX;
        let key = trials.filter(|_| trial).map(|_| StreamsKey::of(&logical));
        if let (Some(t), Some(k)) = (trials, &key)
            && let Some(over) = t.over(k)
        {
            bounded.fewer(&over, max_events)?;
            continue;
        }
        let facts = trials.map(|t| t.order_facts(model));
        let alloc = compile::logical_allocation_with(model, options, mode.name(), logical, facts);
        if !trial {
            return Ok(Assigned { alloc, report: Some(bounded.into_report()?), synced: None });
        }
        let sync_facts = trials.map(|t| t.sync_facts(model));
        match sync_within_budget(model, options, &alloc, sync_facts)? {
            Synced::Fits { synced, exact } => {
                if let Some(exact) = exact {
                    bounded.reused(exact, max_events);
                }
                return Ok(Assigned { alloc, report: Some(bounded.into_report()?), synced: Some(*synced) });
            }
            Synced::Over(over) => {
                if let (Some(t), Some(k)) = (trials, key) {
                    t.record(k, over);
                }
                bounded.fewer(&over, max_events)?;
            }
        }
    }
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
/// exceeds `max_events`: every policy but under `compat=ge` (GE's own sync rules and ids) or
/// with `event_reuse=lifetime` already set; a budget that is not finite never binds.
pub(super) fn reuses_over_budget(options: &Options) -> bool {
    !options.compat_ge && !options.event_reuse_lifetime && options.event_budget() != u32::MAX
}

/// The sync stage on a copy of `alloc` as the event budget runs it: one id per sync first;
/// over `max_events`, and where [`reuses_over_budget`], the same streams again with ids reused
/// by lifetime, what GE itself does when its events run out. Where the first run fits, its
/// result is the plain sync stage's, byte for byte. `facts`: the model's, kept by the caller.
pub(super) fn sync_within_budget(
    model: &Model,
    options: &Options,
    alloc: &Allocation,
    facts: Option<&ModelFacts>,
) -> Result<Synced> {
    let max_events = options.event_budget();
    // Over budget the copy is dropped unfinished: the trial needs only its count.
    let mut synced = alloc.clone();
    let counts = compile::sync_stage_within(model, options, &mut synced, max_events, facts)?;
    let ids = counts.event_num + counts.notify_num;
    if ids <= max_events {
        return Ok(Synced::Fits { synced: Box::new(synced), exact: None });
    }
    let mut over = OverBudget { ids, counts, reused: None };
    if reuses_over_budget(options) {
        let reuse = Options { event_reuse_lifetime: true, ..options.clone() };
        let mut synced = alloc.clone();
        let again = compile::sync_stage_within(model, &reuse, &mut synced, max_events, facts)?;
        let reused = again.event_num + again.notify_num;
        if reused <= max_events {
            return Ok(Synced::Fits { synced: Box::new(synced), exact: Some(ids) });
        }
        over.reused = Some(reused);
    }
    Ok(Synced::Over(over))
}

/// Stage 2 on `alloc` for a policy's streams that no budget trial ran ahead of (a search's
/// changed streams): one id per sync and, over `max_events` where [`reuses_over_budget`], the
/// same streams again with ids reused by lifetime, kept whatever they need (the caller's
/// budget check refuses a result still over). Within the budget the plain sync stage's result.
pub(super) fn sync_stage_or_reused(model: &Model, options: &Options, alloc: &mut Allocation) -> Result<()> {
    let max_events = options.event_budget();
    let mut exact = alloc.clone();
    let counts = compile::sync_stage_within(model, options, &mut exact, max_events, None)?;
    if counts.event_num + counts.notify_num <= max_events {
        *alloc = exact;
        return Ok(());
    }
    compile::sync_stage(model, &Options { event_reuse_lifetime: true, ..options.clone() }, alloc)
}
