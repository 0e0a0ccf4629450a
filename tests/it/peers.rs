//! Issue 41's target for default `auto`: no peer baseline whose plan fits the device (64
//! streams, 1,024 event ids) is faster on any corpus graph, with and without dynamic
//! multi-stream. Every plan is checker-clean and simulated under the same device model.

use crate::common;
use stream_alloc::baseline::{self, Peer};
use stream_alloc::compile::{Stage, TaskLimits};
use stream_alloc::graph::json;
use stream_alloc::memory::AllocationDocument;
use stream_alloc::search;
use stream_alloc::simulate::{SimConfig, simulate};
use stream_alloc::verify;

/// The device the target names: its streams and its event ids.
const STREAMS: u32 = 64;
const EVENT_IDS: u32 = 1024;

#[test]
fn no_baseline_that_fits_the_device_is_faster_than_auto() {
    let cfg = SimConfig::default();
    let peers: Vec<Peer> = Peer::ALL.into_iter().chain([Peer::Trtllm { streams: 16, cost: true }]).collect();
    let mut compared = 0;
    for path in common::corpus_paths() {
        for dynamic in [false, true] {
            let mut b = json::builder_from_slice(&std::fs::read(&path).unwrap()).unwrap();
            b.options.dynamic_multi_stream = dynamic;
            let m = b.build().unwrap();
            let limits = TaskLimits::from_options(&m.options);
            let mut options = m.options.clone();
            options.policy = stream_alloc::graph::Policy::new("auto".to_string());
            let (auto, _) = search::run(&m, options, limits, Stage::All, cfg).unwrap();
            let auto_us = simulate(&m, &auto, &cfg).unwrap().makespan_us;
            for &peer in &peers {
                let alloc = baseline::allocate(&m, peer, &m.options, limits).unwrap().alloc;
                let r = verify::check(&m, &alloc.to_json_new_plan(&m));
                assert!(r.ok(), "{} {}: {:?}", m.name, peer.name(), r.violations.first());
                if alloc.physical_count() > STREAMS || alloc.sync_count() > EVENT_IDS {
                    continue;
                }
                let us = simulate(&m, &alloc, &cfg).unwrap().makespan_us;
                assert!(
                    us + 1e-9 >= auto_us,
                    "{} (dynamic_multi_stream={dynamic}): {} {us} us beats auto's {auto_us} us",
                    m.name,
                    peer.name()
                );
                compared += 1;
            }
        }
    }
    assert!(compared >= 12 * 2 * 5, "only {compared} plans compared");
}
