//! Stage 1 as the driver runs it: GE's chain, or a policy narrowed until the sync ids its
//! sync stage inserts fit `max_events`. Only the driver knows that the sync stage follows, so
//! the loop that tries it lives here; the trial that fits is the sync stage's own result, which
//! the session adopts instead of running the stage again.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock};

use crate::compile::logical::LogicalResult;
use crate::compile::order::OrderFacts;
use crate::compile::policy::{self, Bounded, PolicyInput, PolicyReport};
use crate::compile::summary::ModelCounts;
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
/// has some), to recognise an assignment seen before by full comparison; with the execution
/// order where a policy fixed it (`fifo:N`), since the same streams in another order are
/// another plan. An order the pipeline chose is a function of the streams and needs no place.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StreamsKey {
    node_stream: Vec<u32>,
    main_stream_count: u32,
    attached: Vec<(u32, Vec<u32>)>,
    attached_count: u32,
    order: Vec<u32>,
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
            order: Vec::new(),
        }
    }

    /// The key of a policy's logical result, run in `placed` when the policy fixed its order.
    fn of(l: &LogicalResult, placed: Option<&[crate::graph::NodeId]>) -> Self {
        let key = Self::new(l.node_stream.iter().copied(), l.main_stream_count, l.attached.iter(), l.attached_count);
        key.in_order(placed.unwrap_or_default())
    }

    /// The key of an allocation's logical streams in its execution order.
    pub fn of_allocation(a: &Allocation) -> Self {
        let key =
            Self::new(a.logical_stream().iter().copied(), a.logical_count(), a.attached().iter(), a.attached_count());
        key.in_order(a.set_order_or_empty())
    }

    fn in_order(mut self, order: &[crate::graph::NodeId]) -> Self {
        self.order = order.iter().map(|n| n.0).collect();
        self
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
    over: Mutex<KeyMap<(u32, ModelCounts)>>,
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

    fn over(&self, key: &StreamsKey) -> Option<(u32, ModelCounts)> {
        self.over.lock().ok()?.get(key).copied()
    }

    fn record(&self, key: StreamsKey, ids: u32, counts: ModelCounts) {
        if let Ok(mut over) = self.over.lock() {
            over.insert(key, (ids, counts));
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
        let placed = bounded.order();
        // Every finite budget needs the trial: the sync stage contracts task-less nodes, so a
        // dependency through one can need a sync per producer and consumer pair, more than the
        // edges that cross streams. The trial that fits is the sync stage itself, not extra work.
        let trial = max_events != u32::MAX;
        let key = trials.filter(|_| trial).map(|_| StreamsKey::of(&logical, placed.as_deref()));
        if let (Some(t), Some(k)) = (trials, &key)
            && let Some((ids, counts)) = t.over(k)
        {
            bounded.fewer(ids, &counts, max_events)?;
            continue;
        }
        let facts = trials.map(|t| t.order_facts(model));
        let alloc = compile::logical_allocation_with(model, options, mode.name(), logical, facts, placed);
        if !trial {
            return Ok(Assigned { alloc, report: Some(bounded.into_report()?), synced: None });
        }
        // Over budget the copy is dropped unfinished: the trial needs only its count.
        let mut synced = alloc.clone();
        let sync_facts = trials.map(|t| t.sync_facts(model));
        let counts = compile::sync_stage_within(model, options, &mut synced, max_events, sync_facts)?;
        let ids = counts.event_num + counts.notify_num;
        if ids <= max_events {
            return Ok(Assigned { alloc, report: Some(bounded.into_report()?), synced: Some(synced) });
        }
        if let (Some(t), Some(k)) = (trials, key) {
            t.record(k, ids, counts);
        }
        bounded.fewer(ids, &counts, max_events)?;
    }
}
