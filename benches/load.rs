//! Loading graph JSON: the synthetic families written as graph JSON v1, then read back with
//! `json::load_slice` (parse, validate, build the model). Writing the text is not timed.
//! Each load runs in a child process that reads the file and builds the model, so its peak
//! resident memory (file bytes included) is the load's own. Prints the median time of
//! `LOAD_BENCH_RUNS` loads (default 3) and the largest peak. Run: `cargo bench --bench load`;
//! `LOAD_BENCH_SIZES=1000000` and `LOAD_BENCH_FAMILIES=window` pick the sizes and families.

use std::time::Instant;

use stream_alloc::graph::json;
use stream_alloc::graph::synth::generate;

#[path = "support/common.rs"]
mod common;
use common::{families, run_child, status_mb};
#[path = "support/graph_json.rs"]
mod graph_json;
use graph_json::to_json;

/// The child: loads `path`, prints `ms peak_MB nodes`.
fn child(path: &str) {
    let t = Instant::now();
    let bytes = std::fs::read(path).expect("the graph file is readable");
    let m = json::load_slice(&bytes).expect("the written graph loads");
    let ms = t.elapsed().as_secs_f64() * 1e3;
    println!("{ms} {} {}", status_mb("VmHWM:"), m.nodes.len());
}

fn main() {
    if let Ok(path) = std::env::var("LOAD_BENCH_CHILD") {
        return child(&path);
    }
    let sizes: Vec<usize> = std::env::var("LOAD_BENCH_SIZES")
        .ok()
        .map(|v| v.split(',').map(|s| s.parse().expect("sizes are integers")).collect())
        .unwrap_or_else(|| vec![100_000, 1_000_000]);
    let families_list = std::env::var("LOAD_BENCH_FAMILIES").unwrap_or_else(|_| "layered,window,random".into());
    let runs: usize = std::env::var("LOAD_BENCH_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(3).max(1);
    println!("{:<13} {:>8} {:>8} {:>8} {:>9} {:>10}", "family", "nodes", "edges", "text_MB", "load_ms", "load_MB");
    for size in sizes {
        for family in families(&families_list) {
            let model = generate(family, size, 7).expect("synthetic graph is valid");
            let text = to_json(&model);
            let (nodes, edges) = (model.nodes.len(), model.edges.len());
            drop(model);
            let path = std::env::temp_dir().join(format!("stream-alloc-load-{}-{size}.json", std::process::id()));
            std::fs::write(&path, &text).expect("the temp dir is writable");
            let mut times = Vec::with_capacity(runs);
            let mut extra = 0.0f64;
            for _ in 0..runs {
                let (out, line) = run_child("LOAD_BENCH_CHILD", &path);
                let f: Vec<f64> = line.split_whitespace().filter_map(|x| x.parse().ok()).collect();
                assert_eq!(f.len(), 3, "child output {line:?} {}", String::from_utf8_lossy(&out.stderr));
                assert_eq!(f[2] as usize, nodes);
                times.push(f[0]);
                extra = extra.max(f[1]);
            }
            let _ = std::fs::remove_file(&path);
            times.sort_by(f64::total_cmp);
            println!(
                "{:<13} {:>8} {:>8} {:>8.0} {:>9.1} {:>10.0}",
                family.name(),
                nodes,
                edges,
                text.len() as f64 / 1e6,
                times[times.len() / 2],
                extra
            );
        }
    }
}
