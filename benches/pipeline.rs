//! The full pipeline (policy + sync + split) on synthetic graphs at 10k, 100k and 1M nodes:
//! layered DAGs (width 8), Inception-like cells, transformer stacks, random DAGs with the
//! corpus's engine mix whose edges reach any earlier node (`random`) or only the previous 32
//! (`window-32`). Model building is not timed. Peak resident memory (VmHWM, the process's
//! high-water mark so far: run one family and policy per process for a figure of its own) is
//! printed after each row, sizes ascending.
//! Run: `cargo bench --bench pipeline`; `PIPELINE_BENCH_MAX=100000` stops at 100k,
//! `PIPELINE_BENCH_SIZES=100000,1000000` picks the sizes, `PIPELINE_BENCH_POLICIES=ge,min-streams`
//! the policies, `PIPELINE_BENCH_FAMILIES=layered,random` the families (name prefixes).
//! `PIPELINE_BENCH_DIGEST=1` adds a hash of the allocation JSON, to check that a change keeps
//! outputs byte-identical. Columns: the engine partitioner alone, GE's logical pass (policies
//! start from it; includes the partitioner), the policy's own step, and the whole pipeline
//! (`total_ms`: the median of `PIPELINE_BENCH_RUNS` runs, default 5, and of
//! `PIPELINE_BENCH_RUNS_1M` at 1M, default 3). A pipeline error is printed in place of the row.

use std::time::Instant;
use stream_alloc::memory::AllocationDocument;

use stream_alloc::allocate;
use stream_alloc::compile::Stage;
use stream_alloc::compile::policy::{Chosen, Ctx, Kind, PolicyReport, table};
use stream_alloc::graph::partition::Partition;
use stream_alloc::graph::synth::generate;

#[path = "support/common.rs"]
mod common;
use common::{families, status_mb};

/// FNV-1a: a stable hash of an output, to compare runs across builds.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

fn main() {
    let max: usize = std::env::var("PIPELINE_BENCH_MAX").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000_000);
    let runs_small: usize = std::env::var("PIPELINE_BENCH_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(5).max(1);
    let runs_1m: usize = std::env::var("PIPELINE_BENCH_RUNS_1M").ok().and_then(|v| v.parse().ok()).unwrap_or(3).max(1);
    let policies: Vec<Chosen> = std::env::var("PIPELINE_BENCH_POLICIES")
        .unwrap_or_else(|_| "ge,per-operator,min-streams,budget:8,auto".into())
        .split(',')
        .map(|p| table::parse(p).expect("valid policy"))
        .collect();
    println!(
        "{:<13} {:>8} {:>8} {:<13} {:>7} {:>6} {:>10} {:>9} {:>10} {:>10} {:>9}",
        "family",
        "nodes",
        "edges",
        "policy",
        "streams",
        "syncs",
        "partit_ms",
        "ge_ms",
        "policy_ms",
        "total_ms",
        "peak_MB"
    );
    let sizes: Vec<usize> = std::env::var("PIPELINE_BENCH_SIZES")
        .ok()
        .map(|v| v.split(',').map(|s| s.parse().expect("sizes are integers")).collect())
        .unwrap_or_else(|| vec![10_000, 100_000, 1_000_000]);
    let digest = std::env::var("PIPELINE_BENCH_DIGEST").is_ok_and(|v| v == "1");
    for size in sizes.into_iter().filter(|&s| s <= max) {
        let families_list = std::env::var("PIPELINE_BENCH_FAMILIES")
            .unwrap_or_else(|_| "layered,inception,transformer,random,window".into());
        for family in families(&families_list) {
            let mut model = generate(family, size, 7).expect("synthetic graph is valid");
            for &p in &policies {
                model.options.policy = p.policy();
                let t = Instant::now();
                let part = Partition::of_model(&model);
                let partition_ms = t.elapsed().as_secs_f64() * 1e3;
                drop(part);
                let t = Instant::now();
                let ctx = match Ctx::new(&model, &model.options) {
                    Ok(ctx) => ctx,
                    Err(e) => {
                        println!(
                            "{:<13} {:>8} {:>8} {:<13} error: {e}",
                            family.name(),
                            size,
                            model.edges.len(),
                            p.name()
                        );
                        continue;
                    }
                };
                let ge_ms = t.elapsed().as_secs_f64() * 1e3;
                let t = Instant::now();
                // The policy's own assignment, unbounded, as the table runs it (GE and auto have none).
                if let Kind::Assign(assign) = p.entry.kind {
                    let a = assign(&ctx, p.arg, u32::MAX, &mut PolicyReport::default()).expect("policies assign");
                    drop(std::hint::black_box(a));
                }
                let policy_ms = t.elapsed().as_secs_f64() * 1e3;
                drop(ctx);
                // The whole pipeline is the figure the targets name: the median of a few runs,
                // since one run on a shared machine can land on a busy moment.
                let runs = if size >= 1_000_000 { runs_1m } else { runs_small };
                let mut times = Vec::with_capacity(runs);
                let mut a = None;
                for _ in 0..runs {
                    drop(a.take());
                    let t = Instant::now();
                    a = Some(allocate(&model, Stage::All));
                    times.push(t.elapsed().as_secs_f64() * 1e3);
                }
                times.sort_by(f64::total_cmp);
                let total_ms = times[times.len() / 2];
                // The row's first columns: family, nodes, edges, policy.
                let head =
                    format!("{:<13} {:>8} {:>8} {:<13}", family.name(), model.nodes.len(), model.edges.len(), p.name());
                let a = match a.expect("at least one run") {
                    Ok(a) => a,
                    Err(e) => {
                        println!("{head} error after {total_ms:.1} ms, peak {:.0} MB: {e}", status_mb("VmHWM:"));
                        continue;
                    }
                };
                let hash = if digest {
                    format!(" {:016x}", fnv1a(a.to_json_string_new_plan(&model).as_bytes()))
                } else {
                    String::new()
                };
                println!(
                    "{head} {:>7} {:>6} {:>10.1} {:>9.1} {:>10.1} {:>10.1} {:>9.0}{hash}",
                    a.physical_count(),
                    a.sync_count(),
                    partition_ms,
                    ge_ms,
                    policy_ms,
                    total_ms,
                    status_mb("VmHWM:")
                );
            }
        }
    }
}
