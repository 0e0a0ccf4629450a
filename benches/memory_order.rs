//! The memory-aware execution order (`execution_order=memory`, src/compile/memory_order.rs):
//! what it does to the single-stream peak of every corpus graph (the Serenity baseline), and
//! what it costs at 10k, 100k and 1M nodes on the synthetic families (outputs sized at random,
//! `synth::with_tensor_sizes`), one stream, least memory (`limit 0`: the gated heuristic, then
//! the exact order on every segment within the effort bound). Peaks are the order's live bytes
//! (on one stream, the memory plan's arena); corpus rows also give the checked plans' peaks.
//! Run: `cargo bench --bench memory_order`; `MEMORY_ORDER_BENCH_SIZES=10000,100000` picks the
//! sizes, `MEMORY_ORDER_BENCH_FAMILIES=layered,random` the families (name prefixes).

use std::time::Instant;

use stream_alloc::compile::Stage;
use stream_alloc::compile::memory_order::memory_first;
use stream_alloc::graph::synth::{generate, with_tensor_sizes};
use stream_alloc::graph::{IdVec, Model, NodeId, StreamId, json};
use stream_alloc::memory::plan_allocation;

#[path = "support/common.rs"]
mod common;
use common::{families, status_mb};

fn one_stream(m: &Model) -> IdVec<NodeId, Option<StreamId>> {
    m.nodes.iter().map(|n| (n.tasks > 0).then_some(StreamId(0))).collect()
}

/// The checked plan's peak of `policy=single` in `order`.
fn single_peak(model: &Model, order: &str) -> u64 {
    let mut m = model.clone();
    m.options.set_str("policy", "single").unwrap();
    m.options.set_str("execution_order", order).unwrap();
    let a = stream_alloc::allocate(&m, Stage::All).unwrap();
    plan_allocation(&m, &a).map_or(0, |p| p.peak_bytes)
}

fn main() {
    println!(
        "| graph | nodes | today's single-stream peak | memory-aware order | lowered by | exact segments | heuristic segments | order ms |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let mut paths: Vec<_> = std::fs::read_dir("corpus").unwrap().filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.retain(|p| p.extension().is_some_and(|e| e == "json"));
    paths.sort();
    for p in paths {
        let m = json::load_file(&p).unwrap();
        let (today, lean) = (single_peak(&m, "critical-path"), single_peak(&m, "memory"));
        let t = Instant::now();
        let (_, stats) = memory_first(&m, &one_stream(&m), 0);
        let ms = t.elapsed().as_secs_f64() * 1e3;
        println!(
            "| {} | {} | {today} | {lean} | {:.1} % | {} | {} | {ms:.1} |",
            m.name,
            m.nodes.len(),
            100.0 * (today as f64 - lean as f64) / today.max(1) as f64,
            stats.exact_segments,
            stats.heuristic_segments
        );
    }
    let sizes: Vec<usize> = std::env::var("MEMORY_ORDER_BENCH_SIZES")
        .unwrap_or_else(|_| "10000,100000,1000000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let list = std::env::var("MEMORY_ORDER_BENCH_FAMILIES").unwrap_or_default();
    println!();
    println!(
        "| family | nodes | bottom-level order peak | memory-aware peak | exact segments | heuristic segments | ms | VmHWM MB |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    for n in sizes {
        for f in families(&list) {
            let mut m = generate(f, n, 1).unwrap();
            with_tensor_sizes(&mut m, 1);
            let stream = one_stream(&m);
            let (_, critical) = memory_first(&m, &stream, u64::MAX);
            let t = Instant::now();
            let (_, stats) = memory_first(&m, &stream, 0);
            let ms = t.elapsed().as_secs_f64() * 1e3;
            println!(
                "| {} | {n} | {} | {} | {} | {} | {ms:.0} | {:.0} |",
                f.name(),
                critical.peak_bytes,
                stats.peak_bytes,
                stats.exact_segments,
                stats.heuristic_segments,
                status_mb("VmHWM:")
            );
        }
    }
}
