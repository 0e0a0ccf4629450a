//! The peers' plans in `auto` (docs/policies.md, "The peers' plans"). Each peer baseline's
//! assignment ([`crate::baseline`]) is one more candidate, run through auto's own pipeline: the
//! peer's streams for the policy's task nodes (GE's pinned streams kept, as for every policy),
//! in the peer's own order where it fixes one, then the sync stage's insertion, reduction and id
//! reuse, the split and the budgets. And the fastest peer's own plan (its streams and its waits,
//! as `simulate --policy PEER` runs it) that fits the device is the lean rule's ceiling: `auto`
//! keeps a leaner plan only when it is no slower than that.

use crate::baseline::{self, Peer, Plan};
use crate::compile::order::OrderFacts;
use crate::compile::policy::{Assignment, Ctx, Role, finish};
use crate::compile::{self, Allocation, TaskLimits};
use crate::error::Result;
use crate::graph::{Model, Options, Pos};
use crate::simulate::{SimConfig, simulate};

/// The peers `auto` evaluates: every peer at its default streams, and TensorRT-LLM's pass on 16
/// streams with either weights (docs/compare.md measures peers on 4 and 16).
pub const PEERS: [Peer; 8] = [
    Peer::Xla,
    Peer::Nimble,
    Peer::Opara,
    Peer::Ort,
    Peer::Trtllm { streams: baseline::TRTLLM_STREAMS, cost: false },
    Peer::Trtllm { streams: baseline::TRTLLM_STREAMS, cost: true },
    Peer::Trtllm { streams: 16, cost: false },
    Peer::Trtllm { streams: 16, cost: true },
];

/// Nodes above which `auto` evaluates no peer: each peer is a whole pipeline run for its own
/// plan and another for its candidate.
pub const MAX_NODES: usize = 20_000;

/// Nodes above which `auto` evaluates no peer whose algorithm reads the transitive closure
/// (XLA, Nimble): the closure holds every pair of ordered nodes, quadratic in time and memory
/// on deep graphs (XLA's pass takes 0.1 s on layered-w8 at 2,000 nodes, 0.8 s at 4,000 and
/// 45 s at 10,000, where `auto` without the peers takes 0.1 s and 0.35 s).
pub const CLOSURE_NODES: usize = 2_048;

/// The most nodes `auto` evaluates `peer` on.
pub fn max_nodes(peer: Peer) -> usize {
    match peer {
        Peer::Xla | Peer::Nimble => CLOSURE_NODES,
        _ => MAX_NODES,
    }
}

/// Whether `auto` evaluates the peers on `model` under `options`: without `memory_limit` (the
/// lean rule's choice; under a limit the fastest plan within it wins), outside `compat=ge`
/// (GE's own candidates only), on one flat graph (the peers' algorithms know no subgraphs) of
/// at most [`MAX_NODES`] nodes.
pub fn evaluated(model: &Model, options: &Options) -> bool {
    options.memory_limit.is_none() && !options.compat_ge && model.graphs.len() == 1 && model.nodes.len() <= MAX_NODES
}

/// The candidate's name in auto's report.
pub fn name(peer: Peer) -> String {
    format!("peer:{}", peer.name())
}

/// Each peer of [`PEERS`] that `auto` evaluates on `model` ([`max_nodes`]) with its plan under
/// `options`.
pub fn plans(model: &Model, options: &Options) -> Result<Vec<(Peer, Plan)>> {
    PEERS
        .into_iter()
        .filter(|&peer| model.nodes.len() <= max_nodes(peer))
        .map(|peer| Ok((peer, baseline::plan(model, peer, options)?)))
        .collect()
}

/// `peer`'s assignment `plan` as a logical allocation of `ctx`'s model: the peer's stream for
/// each task node the policies place (renumbered by first use in topological order), GE's
/// pinned streams kept, followers placed by the policies' rule, the streams run in the peer's
/// order where it fixes one. `Err(why)` when its streams exceed `cap`, the streams
/// `max_streams` leaves the policies.
pub fn logical(
    ctx: &Ctx<'_>,
    options: &Options,
    (peer, plan): &(Peer, Plan),
    cap: u32,
    facts: &OrderFacts,
) -> Result<std::result::Result<Allocation, String>> {
    let model = ctx.model;
    let mut a = Assignment::new(model);
    let mut renumbered: Vec<Option<u32>> = vec![None; plan.streams() as usize];
    for &n in ctx.order.iter() {
        if ctx.role[n] != Role::Task {
            continue;
        }
        let Some(s) = plan.stream[n] else {
            crate::bail!(Internal, "{}: task node '{}' got no stream", name(*peer), model.nodes[n].name);
        };
        let id = *renumbered[s.index()].get_or_insert_with(|| {
            a.count += 1;
            a.count - 1
        });
        a.stream[n] = Some(id);
    }
    if a.count > cap {
        return Ok(Err(format!("{} peer streams exceed the {cap} max_streams leaves the policies", a.count)));
    }
    // One stream runs in any order alike, as `fifo:N`'s does.
    if let Some(order) = plan.order.as_ref().filter(|_| a.count > 1) {
        a.order = order.iter().map(|&n| ctx.pos[n]).filter(|p: &Pos| p.is_valid()).collect();
    }
    let placed = a.root_order(ctx);
    Ok(Ok(compile::logical_allocation_with(model, options, name(*peer), finish(ctx, &a), Some(facts), placed)))
}

/// The fastest of the peers' own plans ([`baseline::allocate_plan`]) within `max_streams`
/// physical streams and `max_events` sync ids, simulated under `cfg`: the peer's name and
/// makespan. A plan with more logical streams than that is not run (the split only adds
/// streams); a peer whose run fails is no reference.
pub fn fastest_fitting(
    model: &Model,
    options: &Options,
    limits: &TaskLimits,
    cfg: &SimConfig,
    plans: &[(Peer, Plan)],
) -> Result<Option<(String, f64)>> {
    let options = Options { verify: false, ..options.clone() };
    let mut best: Option<(String, f64)> = None;
    for (peer, plan) in plans {
        if plan.streams() > options.stream_budget() {
            continue;
        }
        let Ok(c) = baseline::allocate_plan(model, *peer, plan, &options, *limits) else { continue };
        if c.alloc.physical_count() > options.stream_budget() || c.alloc.sync_count() > options.event_budget() {
            continue;
        }
        let us = simulate(model, &c.alloc, cfg)?.makespan_us;
        if best.as_ref().is_none_or(|b| us < b.1) {
            best = Some((peer.name(), us));
        }
    }
    Ok(best)
}
