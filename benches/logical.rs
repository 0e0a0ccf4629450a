//! Logical allocation (static multi-stream chain) on synthetic DAGs of 10k, 100k and 1M nodes
//! whose edges reach at most 16 nodes back, with mixed engines, stream labels, parallel groups,
//! HCCL nodes and control edges (`synth::Family::Random { window: Some(16) }`).
//!
//! `cargo bench --bench logical` (sizes can be chosen: `-- 10000 100000`). Prints, per size,
//! the time to partition alone and the time of the whole logical allocation (which includes
//! partitioning), and the process's peak resident memory so far.

use std::time::Instant;

use stream_alloc::compile::logical::LogicalState;
use stream_alloc::compile::passes;
use stream_alloc::compile::passes::assign_multi_stream;
use stream_alloc::graph::partition::Partition;
use stream_alloc::graph::synth::{Family, generate};

#[path = "support/common.rs"]
mod common;
use common::status_mb;

/// GE's multi-stream chain, one pass at a time (each runs over every graph).
const CHAIN: &[&str] = &[
    "mde_group",
    "by_label",
    "independent_stream",
    "by_dependency",
    "node_stream_update",
    "parallel_group",
    "all_reduce_parallel",
    "skipped_engine",
    "ineffective_multi_stream",
    "path_cover",
    "refresh_continuous",
    "attached_stream",
];

/// CPU time of this thread: the machine is shared, so wall time alone is noisy.
fn cpu_s() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    #[allow(unsafe_code)]
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn main() {
    let sizes: Vec<usize> = {
        let args: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
        if args.is_empty() { vec![10_000, 100_000, 1_000_000] } else { args }
    };
    for n in sizes {
        let t = Instant::now();
        let model =
            generate(Family::Random { window: Some(16) }, n, 0x5eed + n as u64).expect("synthetic graph is valid");
        let build_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let c = cpu_s();
        let p = Partition::of_model(&model);
        let part_s = t.elapsed().as_secs_f64();
        let part_cpu = cpu_s() - c;
        let subgraphs = p.len();
        // Per-pass times, GE's chain through the pass registry on the same partition.
        let mut ctx = passes::PassContext { logical: LogicalState::new(&model, &model.options, p) };
        let mut per_pass = Vec::new();
        for name in CHAIN {
            let entry = passes::lookup(name).expect("registered");
            let t = Instant::now();
            passes::run(&mut ctx, &[entry]).expect("pass succeeds");
            per_pass.push(format!("{name} {:.0} ms", t.elapsed().as_secs_f64() * 1e3));
        }
        drop(ctx);
        let t = Instant::now();
        let c = cpu_s();
        let r = assign_multi_stream(&model, &model.options).expect("allocation succeeds");
        let alloc_s = t.elapsed().as_secs_f64();
        let alloc_cpu = cpu_s() - c;
        println!(
            "logical/{n:>8} nodes {:>8} edges: build {:.3} s, partition {:.3} s (cpu {:.3} s, {subgraphs} subgraphs), \
             logical allocation incl. partition {:.3} s (cpu {:.3} s), {} streams, peak RSS {:.0} MiB",
            model.edges.len(),
            build_s,
            part_s,
            part_cpu,
            alloc_s,
            alloc_cpu,
            r.main_stream_count,
            status_mb("VmHWM:")
        );
        println!("  per pass: {}", per_pass.join(", "));
    }
}
