//! Every policy on every corpus graph: checker-clean, syncs at the checker's minimum,
//! min-streams at the width with an independent antichain, auto never slower than GE's default
//! or per-operator, and auto's geometric-mean makespan / lower bound at most 1.10.

use crate::common;
use stream_alloc::compile::{Stage, TaskLimits};
use stream_alloc::graph::{Model, Policy, json};
use stream_alloc::search;
use stream_alloc::simulate::{SimConfig, simulate};
use stream_alloc::verify;

fn load(path: &std::path::Path, p: Policy) -> Model {
    let mut b = json::builder_from_slice(&std::fs::read(path).unwrap()).unwrap();
    b.options.policy = p;
    b.build().unwrap()
}

#[test]
fn corpus_policies() {
    let cfg = SimConfig::default();
    let mut log_sum = 0.0;
    let mut count = 0;
    for path in common::corpus_paths() {
        let mut makespan = std::collections::BTreeMap::new();
        for p in [Policy::Ge, Policy::PerOperator, Policy::MinStreams, Policy::Budget(8), Policy::Auto] {
            let m = load(&path, p);
            let limits = TaskLimits::from_options(&m.options);
            let (alloc, report) = search::run(&m, m.options.clone(), limits, Stage::All, cfg).unwrap();
            let r = verify::check(&m, &alloc.to_json(&m));
            assert!(r.ok(), "{} {p:?}: {:?}", m.name, r.violations.first());
            if p != Policy::Ge {
                assert_eq!(
                    Some(alloc.syncs.len() + alloc.split_events.len()),
                    r.min_sync_count,
                    "{} {p:?}: syncs at the checker's minimum",
                    m.name
                );
            }
            let sim = simulate(&m, &alloc, &cfg).unwrap();
            assert!(sim.makespan_us + 1e-9 >= sim.lower_bound_us, "{} {p:?}: below the lower bound", m.name);
            makespan.insert(p.name(), sim.makespan_us);
            if p == Policy::MinStreams {
                let report = report.as_ref().unwrap();
                let width = report.details["width"].as_u64().unwrap() as usize;
                let antichain: Vec<&str> =
                    report.details["antichain"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
                assert_eq!(antichain.len(), width, "{}: certificate size", m.name);
                // The checker's width counts every task node, pinned HCCL ones included.
                if let Some(w) = r.width {
                    assert!(width <= w, "{}: policy width {width} above the checker's {w}", m.name);
                }
            }
            if p == Policy::Auto {
                log_sum += sim.ratio().ln();
                count += 1;
                assert!(report.as_ref().unwrap().details["candidates"].as_array().unwrap().len() >= 5);
            }
        }
        let auto = makespan["auto"];
        assert!(auto <= makespan["ge"], "{}: auto slower than GE", path.display());
        assert!(auto <= makespan["per-operator"], "{}: auto slower than per-operator", path.display());
    }
    let geomean = (log_sum / count as f64).exp();
    println!("auto geometric mean of makespan / lower bound: {geomean:.4}");
    assert!(geomean <= 1.10, "geometric mean {geomean}");
}
