//! What the candidates of one search share besides the policies' input: their logical streams
//! as keys ([`StreamsKey`], [`KeyMap`]), by which `auto` recognises a candidate that ended on
//! an earlier one's streams, and the event budget's sync trials ([`Trials`]), which stage 1 of
//! every candidate's session asks through the driver's [`TrialCache`]. The cache is the
//! search's: only a search runs many sessions of one model that differ in the policy alone.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Mutex, OnceLock};

use crate::compile::Allocation;
use crate::compile::logical::LogicalResult;
use crate::compile::order::OrderFacts;
use crate::compile::policy::OverBudget;
use crate::compile::sync::ModelFacts;
use crate::driver::{RunTrial, Trial, TrialCache};
use crate::error::Result;
use crate::graph::{Model, NodeId, StreamId};

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
        node_stream: impl Iterator<Item = Option<StreamId>>,
        main_stream_count: u32,
        attached: impl Iterator<Item = &'a Vec<StreamId>>,
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

    /// The key of a policy's logical result, run in `order` when the policy fixed it.
    fn of(l: &LogicalResult, order: &[NodeId]) -> Self {
        Self::new(l.node_stream.iter().copied(), l.main_stream_count, l.attached.iter(), l.attached_count)
            .in_order(order)
    }

    /// The key of an allocation's logical streams in its execution order.
    pub fn of_allocation(a: &Allocation) -> Self {
        Self::new(a.logical_stream().iter().copied(), a.logical_count(), a.attached().iter(), a.attached_count())
            .in_order(a.set_order_or_empty())
    }

    fn in_order(mut self, order: &[NodeId]) -> Self {
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
/// what they needed, one id per sync and reused by lifetime, or with the split's events. A
/// trial is a function of the model, the options other than the policy, the task limits and
/// the logical result alone, so the sessions of one search share these:
/// `auto`'s candidates often narrow to the same assignment (every one of them to one policy
/// stream when no candidate fits). A trial that fits ends its loop, so it is kept only where
/// the driver says others will ask for it (one policy stream: every candidate the budget cuts
/// that far ends there, on the same streams), and answered by a copy.
///
/// The model's [`OrderFacts`] and [`ModelFacts`] are kept here too, computed on the first
/// trial: every trial orders and synchronises the same model's nodes.
#[derive(Debug, Default)]
pub struct Trials {
    over: Mutex<KeyMap<OverBudget>>,
    fits: Mutex<KeyMap<Trial>>,
    order: OnceLock<OrderFacts>,
    sync: OnceLock<ModelFacts>,
}

impl TrialCache for Trials {
    fn order_facts(&self, model: &Model) -> &OrderFacts {
        self.order.get_or_init(|| OrderFacts::of(model))
    }

    fn sync_facts(&self, model: &Model) -> &ModelFacts {
        self.sync.get_or_init(|| ModelFacts::build(model))
    }

    fn trial(&self, logical: LogicalResult, order: &[NodeId], shared: bool, run: RunTrial<'_>) -> Result<Trial> {
        let key = StreamsKey::of(&logical, order);
        if let Some(over) = self.over.lock().ok().and_then(|map| map.get(&key).copied()) {
            return Ok(Trial::Over(over));
        }
        if shared && let Some(fits) = self.fits.lock().ok().and_then(|map| map.get(&key).cloned()) {
            return Ok(fits);
        }
        let trial = run(logical)?;
        match &trial {
            Trial::Over(over) => {
                if let Ok(mut map) = self.over.lock() {
                    map.insert(key, *over);
                }
            }
            Trial::Fits { .. } if shared => {
                if let Ok(mut map) = self.fits.lock() {
                    map.insert(key, trial.clone());
                }
            }
            Trial::Fits { .. } => {}
        }
        Ok(trial)
    }
}
