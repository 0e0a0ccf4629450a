//! Issue 41's targets on the synthetic families (outputs sized at random,
//! `synth::with_tensor_sizes`), as docs/compare.md reports them for the corpus: `auto` under
//! `memory_limit=1.1x` (makespan over the ideal schedule, peak over the single-stream peak),
//! default `auto`, and every peer baseline whose plan fits the device (64 streams, 1,024 event
//! ids) against default `auto`. Every plan passes the independent checker; peaks are the
//! checked memory plans'. Run: `cargo bench --bench memory_fit`; `MEMORY_FIT_SIZES=1000,4000`
//! picks the sizes, `MEMORY_FIT_FAMILIES=layered,random` the families (name prefixes),
//! `MEMORY_FIT_SEEDS=3` the graphs per family and size; `MEMORY_FIT_WHY=1` prints auto's
//! reason and every candidate row to stderr.

use stream_alloc::baseline::{self, Peer};
use stream_alloc::compile::{Allocation, Stage, TaskLimits};
use stream_alloc::graph::synth::{generate, with_tensor_sizes};
use stream_alloc::graph::{MemoryLimit, Model, Policy};
use stream_alloc::memory::{AllocationDocument, plan_allocation};
use stream_alloc::search;
use stream_alloc::search::report::AutoReport;
use stream_alloc::simulate::{SimConfig, ideal, simulate};

#[path = "support/common.rs"]
mod common;
use common::families;

/// A checked plan's makespan and peak.
fn measure(m: &Model, a: &Allocation, cfg: &SimConfig) -> (f64, u64) {
    let plan = plan_allocation(m, a);
    let r = stream_alloc::verify::check(m, &a.document(m, plan.as_ref()).to_value());
    assert!(r.ok(), "{}: {:?}", m.name, r.violations.first());
    (simulate(m, a, cfg).unwrap().makespan_us, plan.map_or(0, |p| p.peak_bytes))
}

/// auto's plan, its choice, and the makespan of its fastest candidate that fits the device and
/// the limit (the lean rule may keep a plan up to 0.5 % slower for a lower peak).
fn auto(m: &Model, limit: Option<MemoryLimit>, cfg: &SimConfig) -> (Allocation, String, f64) {
    let mut options = m.options.clone();
    options.policy = Policy::new("auto");
    options.memory_limit = limit;
    let (a, report) = search::run(m, options, TaskLimits::from_options(&m.options), Stage::All, *cfg).unwrap();
    let auto = report.and_then(|r| r.section::<AutoReport>().cloned()).unwrap_or_default();
    if std::env::var("MEMORY_FIT_WHY").is_ok() {
        eprintln!("{} {limit:?}: {}", m.name, auto.why);
        for c in &auto.candidates {
            eprintln!("  {} {:?} {:?} {:?}", c.policy, c.plan, c.peak_bytes, c.rejected);
        }
    }
    let fastest = auto
        .candidates
        .iter()
        .filter(|c| c.rejected.is_none())
        .filter_map(|c| c.plan.map(|p| p.makespan_us))
        .fold(f64::INFINITY, f64::min);
    (a, auto.chosen, fastest)
}

fn geomean(v: &[f64]) -> f64 {
    (v.iter().map(|x| x.ln()).sum::<f64>() / v.len().max(1) as f64).exp()
}

fn main() {
    let sizes: Vec<usize> = std::env::var("MEMORY_FIT_SIZES")
        .ok()
        .map(|v| v.split(',').map(|s| s.parse().expect("sizes are integers")).collect())
        .unwrap_or_else(|| vec![1_000, 4_000]);
    let seeds: u64 = std::env::var("MEMORY_FIT_SEEDS").ok().and_then(|v| v.parse().ok()).unwrap_or(2);
    let list =
        std::env::var("MEMORY_FIT_FAMILIES").unwrap_or_else(|_| "layered,inception,transformer,random,window".into());
    let cfg = SimConfig::default();
    let peers: Vec<Peer> = Peer::ALL.into_iter().chain([Peer::Trtllm { streams: 16, cost: true }]).collect();
    println!(
        "| graph | 1.1x: auto / ideal | 1.1x: peak / single | 1.1x: chosen | default auto / ideal | default peak / single | default: chosen | its fastest candidate / auto | fastest fitting peer / auto |"
    );
    println!("|---|---:|---:|---|---:|---:|---|---:|---|");
    let (mut fit_ratios, mut default_ratios, mut beaten) = (Vec::new(), Vec::new(), 0);
    for &size in &sizes {
        for family in families(&list) {
            for seed in 0..seeds {
                let mut m = generate(family, size, 7 + seed).expect("synthetic graph is valid");
                with_tensor_sizes(&mut m, 7 + seed);
                let limits = TaskLimits::from_options(&m.options);
                let single = search::fit::single_stream_peak(&m, &m.options, &limits).unwrap().unwrap_or(1).max(1);
                let ideal_us = ideal(&m, &cfg).unwrap().makespan_us;
                let (a, chosen, _) = auto(&m, Some(MemoryLimit::Times(1100)), &cfg);
                let (fit_us, fit_peak) = measure(&m, &a, &cfg);
                let (d, default_chosen, fastest) = auto(&m, None, &cfg);
                let (auto_us, auto_peak) = measure(&m, &d, &cfg);
                let mut best: Option<(String, f64)> = None;
                for &peer in &peers {
                    let Ok(c) = baseline::allocate(&m, peer, &m.options, limits) else { continue };
                    let p = c.alloc;
                    if p.physical_count() > 64 || p.sync_count() > 1024 {
                        continue;
                    }
                    let (us, _) = measure(&m, &p, &cfg);
                    if best.as_ref().is_none_or(|b| us < b.1) {
                        best = Some((peer.name(), us));
                    }
                }
                let peer_cell = best.map_or("none fits".to_string(), |(name, us)| {
                    if us + 1e-9 < auto_us {
                        beaten += 1;
                    }
                    format!("{:.4} ({name})", us / auto_us)
                });
                fit_ratios.push(fit_us / ideal_us);
                default_ratios.push(auto_us / ideal_us);
                println!(
                    "| {} (seed {}) | {:.3} | {:.3} | {chosen} | {:.3} | {:.3} | {default_chosen} | {:.4} | {peer_cell} |",
                    m.name,
                    7 + seed,
                    fit_us / ideal_us,
                    fit_peak as f64 / single as f64,
                    auto_us / ideal_us,
                    auto_peak as f64 / single as f64,
                    fastest / auto_us,
                );
            }
        }
    }
    let worst = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    println!();
    println!(
        "memory_limit=1.1x: auto / ideal geomean {:.3}, worst {:.3}; default auto: geomean {:.3}, worst {:.3}; \
         graphs where a fitting peer is faster than default auto: {beaten}",
        geomean(&fit_ratios),
        worst(&fit_ratios),
        geomean(&default_ratios),
        worst(&default_ratios)
    );
}
