//! Issue 41's target for default `auto`: no peer baseline whose plan fits the device (64
//! streams, 1,024 event ids) is faster on any corpus graph, with and without dynamic
//! multi-stream, nor on the synthetic graphs where one was before `auto` evaluated the peers'
//! plans. Every plan is checker-clean and simulated under the same device model.

use crate::common;
use stream_alloc::baseline::{self, Peer};
use stream_alloc::compile::{Stage, TaskLimits};
use stream_alloc::graph::synth::{Family, generate, with_tensor_sizes};
use stream_alloc::graph::{Model, json};
use stream_alloc::memory::AllocationDocument;
use stream_alloc::search;
use stream_alloc::simulate::{SimConfig, simulate};
use stream_alloc::verify;

/// The device the target names: its streams and its event ids.
const STREAMS: u32 = 64;
const EVENT_IDS: u32 = 1024;

/// The peers the targets measure: each at its defaults, and TensorRT-LLM's pass on 16 streams
/// by cost, as benches/memory_fit.rs measures them.
fn peers() -> Vec<Peer> {
    Peer::ALL.into_iter().chain([Peer::Trtllm { streams: 16, cost: true }]).collect()
}

/// Default `auto`'s plan on `m` against every peer's whose plan fits the device: none is faster.
/// Every peer plan passes the checker. Returns how many fitting plans were compared.
fn auto_is_not_slower_than_a_fitting_peer(m: &Model, what: &str) -> usize {
    let cfg = SimConfig::default();
    let limits = TaskLimits::from_options(&m.options);
    let mut options = m.options.clone();
    options.policy = stream_alloc::graph::Policy::new("auto".to_string());
    let (auto, _) = search::run(m, options, limits, Stage::All, cfg).unwrap();
    let auto_us = simulate(m, &auto, &cfg).unwrap().makespan_us;
    let mut compared = 0;
    for peer in peers() {
        let alloc = baseline::allocate(m, peer, &m.options, limits).unwrap().alloc;
        let r = verify::check(m, &alloc.to_json_new_plan(m));
        assert!(r.ok(), "{what} {}: {:?}", peer.name(), r.violations.first());
        if alloc.physical_count() > STREAMS || alloc.sync_count() > EVENT_IDS {
            continue;
        }
        let us = simulate(m, &alloc, &cfg).unwrap().makespan_us;
        assert!(us + 1e-9 >= auto_us, "{what}: {} {us} us beats auto's {auto_us} us", peer.name());
        compared += 1;
    }
    compared
}

#[test]
fn no_baseline_that_fits_the_device_is_faster_than_auto() {
    let mut compared = 0;
    for path in common::corpus_paths() {
        for dynamic in [false, true] {
            let mut b = json::builder_from_slice(&std::fs::read(&path).unwrap()).unwrap();
            b.options.dynamic_multi_stream = dynamic;
            let m = b.build().unwrap();
            compared +=
                auto_is_not_slower_than_a_fitting_peer(&m, &format!("{} (dynamic_multi_stream={dynamic})", m.name));
        }
    }
    assert!(compared >= 12 * 2 * 5, "only {compared} plans compared");
}

/// The synthetic graphs where a peer beat `auto` before it evaluated the peers' plans
/// (docs/compare.md, "The synthetic families"): on inception-1000 seed 8, TensorRT-LLM's pass
/// with its own operator-type weights reached a plan no policy did; on transformer-1000 seed 7,
/// the lean rule kept a plan 0.17 % slower than TensorRT-LLM's by cost, for two fewer syncs. And
/// one of each other family.
#[test]
fn no_baseline_that_fits_the_device_is_faster_than_auto_on_synthetic_graphs() {
    let graphs = [
        (Family::Inception, 8),
        (Family::Transformer, 7),
        (Family::Layered { width: 8 }, 7),
        (Family::Random { window: Some(32) }, 7),
    ];
    let mut compared = 0;
    for (family, seed) in graphs {
        let mut m = generate(family, 1_000, seed).unwrap();
        with_tensor_sizes(&mut m, seed);
        compared += auto_is_not_slower_than_a_fitting_peer(&m, &format!("{} seed {seed}", m.name));
    }
    assert!(compared >= 4 * 3, "only {compared} plans compared");
}
