//! `allocate` as the front ends run it (`stream_alloc::frontend`: the command line and the
//! Python package): a loaded graph, options applied, the pipeline compiled, the allocation
//! document written. The Python package's `python/benches/allocate.py` times the same steps through the
//! binding, so the two medians give the binding's overhead.
//! Run: `cargo bench --bench frontend`; `FRONTEND_BENCH_GRAPH` picks the graph (default the
//! largest corpus graph, corpus/resnet50_train.json), `FRONTEND_BENCH_POLICIES` the policies
//! (default ge,auto), `FRONTEND_BENCH_RUNS` the runs per row (default 20; the median is shown).

use std::path::PathBuf;
use std::time::Instant;

use stream_alloc::compile::Stage;
use stream_alloc::frontend::{self, Inputs, OnnxOptions};
use stream_alloc::simulate::SimConfig;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let graph =
        PathBuf::from(std::env::var("FRONTEND_BENCH_GRAPH").unwrap_or_else(|_| "corpus/resnet50_train.json".into()));
    let runs: usize = std::env::var("FRONTEND_BENCH_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(20).max(1);
    let policies = std::env::var("FRONTEND_BENCH_POLICIES").unwrap_or_else(|_| "ge,auto".into());
    let model = frontend::load_builder(&graph, &OnnxOptions::default()).and_then(|b| b.build()).expect("graph loads");
    println!("{:<8} {:>12} {:>12} {:>10}", "policy", "load_ms", "allocate_ms", "bytes");
    for policy in policies.split(',') {
        let assignment = [format!("policy={policy}")];
        let mut load = Vec::new();
        let mut alloc = Vec::new();
        let mut bytes = 0;
        for _ in 0..runs {
            let t = Instant::now();
            let m = frontend::load_builder(&graph, &OnnxOptions::default()).and_then(|b| b.build()).expect("loads");
            load.push(t.elapsed().as_secs_f64() * 1e3);
            drop(m);
            let t = Instant::now();
            let mut m = model.clone();
            frontend::apply_options(&mut m.options, &assignment).expect("valid policy");
            let inputs = Inputs::of(m).expect("limits");
            let compiled = inputs.compile(Stage::All, SimConfig::default(), true).expect("allocates");
            let (text, _) = frontend::allocation_document(&inputs, &compiled, None);
            alloc.push(t.elapsed().as_secs_f64() * 1e3);
            bytes = text.len();
        }
        println!("{policy:<8} {:>12.3} {:>12.3} {bytes:>10}", median(load), median(alloc));
    }
}
