//! Logical allocation (static multi-stream chain) on synthetic layered DAGs of 10k, 100k and
//! 1M nodes with mixed engines, stream labels and HCCL nodes.
//!
//! `cargo bench --bench logical` (sizes can be chosen: `-- 10000 100000`). Prints, per size,
//! the time to partition alone and the time of the whole logical allocation (which includes
//! partitioning), and the process's peak resident memory so far.

use std::time::Instant;

use stream_alloc::compile::logical::LogicalState;
use stream_alloc::compile::passes;
use stream_alloc::compile::passes::assign_multi_stream;
use stream_alloc::graph::partition::Partition;
use stream_alloc::graph::{ModelBuilder, builder::EdgeSpec, builder::NodeSpec};

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

/// xorshift64*: reproducible without a dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn build(nodes: usize, seed: u64) -> stream_alloc::Model {
    let mut rng = Rng(seed | 1);
    let width = 16usize;
    let mut b = ModelBuilder::new(format!("layered_{nodes}"));
    let mut edges = Vec::with_capacity(nodes * 2);
    for i in 0..nodes {
        let layer = i / width;
        let name = format!("n{i}");
        let mut spec = if layer == 0 {
            NodeSpec::new(&name, "Data", "DNN_VM_GE_LOCAL")
        } else {
            match rng.below(100) {
                0..80 => NodeSpec::new(&name, if rng.below(3) == 0 { "MatMul" } else { "Add" }, "AIcoreEngine"),
                80..88 => NodeSpec::new(&name, "Unique", "DNN_VM_AICPU"),
                88..94 => NodeSpec::new(&name, "Reshape", "DNN_VM_GE_LOCAL"),
                94..97 => NodeSpec::new(&name, "Mul", "VectorEngine"),
                _ => {
                    let mut s = NodeSpec::new(&name, "HcomAllReduce", "DNN_HCCL");
                    s.ge_attrs.0.insert("fusion".into(), serde_json::json!(1));
                    s
                }
            }
        };
        if spec.engine == "DNN_VM_GE_LOCAL" {
            spec.tasks = 0;
        }
        if layer > 0 && rng.below(100) == 0 {
            spec.attrs.stream_label = Some(format!("label{}", rng.below(4)));
        }
        spec.cost_us = (rng.below(50) + 1) as f64;
        b.add_node(spec);
        if layer > 0 {
            let prev = (layer - 1) * width;
            for _ in 0..1 + rng.below(2) {
                edges.push(EdgeSpec::data(format!("n{}", prev + rng.below(width as u64) as usize), name.clone()));
            }
            if layer > 1 && rng.below(8) == 0 {
                let prev2 = (layer - 2) * width;
                edges.push(EdgeSpec::control(format!("n{}", prev2 + rng.below(width as u64) as usize), name.clone()));
            }
        }
    }
    // Duplicate (src, dst) pairs are legal multi-edges; keep them, GE graphs have them too.
    for e in edges {
        b.add_edge(e);
    }
    b.build().expect("synthetic graph is valid")
}

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
        let model = build(n, 0x5eed + n as u64);
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
