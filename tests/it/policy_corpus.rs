//! Every policy on every corpus graph: checker-clean, syncs at the checker's edge minimum,
//! min-streams at the width with an independent antichain, auto never slower than GE's default
//! or per-operator, and auto's geometric-mean makespan / lower bound at most 1.10.

use crate::common;
use crate::common::policy;
use stream_alloc::compile::policy::Chosen;
use stream_alloc::compile::{Stage, TaskLimits};
use stream_alloc::graph::{Model, json};
use stream_alloc::memory::AllocationDocument;
use stream_alloc::search;
use stream_alloc::search::report::AutoReport;
use stream_alloc::simulate::{SimConfig, simulate};
use stream_alloc::verify;

fn load(path: &std::path::Path, p: Chosen) -> Model {
    let mut b = json::builder_from_slice(&std::fs::read(path).unwrap()).unwrap();
    b.options.policy = p.policy();
    b.build().unwrap()
}

#[test]
fn corpus_policies() {
    let cfg = SimConfig::default();
    let mut log_sum = 0.0;
    let mut count = 0;
    for path in common::corpus_paths() {
        let mut makespan = std::collections::BTreeMap::new();
        for p in [policy("ge"), policy("per-operator"), policy("min-streams"), policy("budget:8"), policy("auto")] {
            let m = load(&path, p);
            let limits = TaskLimits::from_options(&m.options);
            let (alloc, report) = search::run(&m, m.options.clone(), limits, Stage::All, cfg).unwrap();
            let r = verify::check(&m, &alloc.to_json_new_plan(&m));
            assert!(r.ok(), "{} {p:?}: {:?}", m.name, r.violations.first());
            if p != policy("ge") {
                assert_eq!(
                    Some(alloc.syncs().len() + alloc.split_events().len()),
                    r.edge_sync_minimum,
                    "{} {p:?}: syncs at the checker's edge minimum",
                    m.name
                );
            }
            let sim = simulate(&m, &alloc, &cfg).unwrap();
            assert!(sim.makespan_us + 1e-9 >= sim.lower_bound_us, "{} {p:?}: below the lower bound", m.name);
            makespan.insert(p.name(), sim.makespan_us);
            if p == policy("min-streams") {
                let report = report.as_ref().unwrap();
                let cover = report.cover.as_ref().unwrap();
                let width = cover.width;
                let antichain: Vec<&str> = cover.antichain.as_ref().unwrap().iter().map(String::as_str).collect();
                assert_eq!(antichain.len(), width, "{}: certificate size", m.name);
                // The checker's width counts every task node, pinned HCCL ones included.
                if let Some(w) = r.width {
                    assert!(width <= w, "{}: policy width {width} above the checker's {w}", m.name);
                }
            }
            if p == policy("auto") {
                log_sum += sim.ratio().ln();
                count += 1;
                assert!(report.as_ref().unwrap().section::<AutoReport>().unwrap().candidates.len() >= 5);
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

/// A fan of 600 independent operators in notify mode: per-operator and min-streams need more
/// notifies than the device has, GE's default does not. `auto` drops and reports the
/// infeasible candidates and still answers; with every candidate infeasible it names each
/// candidate's reason.
#[test]
fn auto_survives_infeasible_candidates() {
    let fan = |n: usize, extra: &str| {
        let mut nodes = vec![r#"{"name":"src","type":"Relu","engine":"AIcoreEngine"}"#.to_string()];
        let mut edges = Vec::new();
        for i in 0..n {
            nodes.push(format!(r#"{{"name":"n{i}","type":"Relu","engine":"AIcoreEngine","cost_us":5,"cores":1}}"#));
            edges.push(format!(r#"{{"src":"src","dst":"n{i}"}}"#));
            edges.push(format!(r#"{{"src":"n{i}","dst":"out"}}"#));
        }
        nodes.push(r#"{"name":"out","type":"Relu","engine":"AIcoreEngine"}"#.to_string());
        let doc = format!(
            r#"{{"format":"stream-graph","version":1,"name":"fan","options":{{"event":"notify","policy":"auto"{extra}}},
            "nodes":[{}],"edges":[{}]}}"#,
            nodes.join(","),
            edges.join(",")
        );
        json::load_str(&doc).unwrap()
    };
    // Without budgets: within them every policy merges down to what the device has.
    let m = fan(600, r#","max_streams":"unlimited","max_events":"unlimited""#);
    let limits = TaskLimits::from_options(&m.options);
    let (alloc, report) = search::run(&m, m.options.clone(), limits, Stage::All, SimConfig::default()).unwrap();
    let report = report.unwrap();
    let rows = &report.section::<AutoReport>().unwrap().candidates;
    let rejected: Vec<&str> = rows.iter().filter(|r| r.rejected.is_some()).map(|r| r.policy.as_str()).collect();
    assert!(rejected.contains(&"per-operator"), "{rows:?}");
    assert!(rows.iter().all(|r| r.rejected.as_ref().is_none_or(|why| why.contains("SA2003"))));
    assert!(!rejected.contains(&report.section::<AutoReport>().unwrap().chosen.as_str()));
    assert!(verify::check(&m, &alloc.to_json_new_plan(&m)).ok());

    // A chain alternating between an AI core operator and an all-reduce (HCCL keeps a stream
    // of its own under every policy but GE's, which keeps the chain together): every other
    // candidate needs 1,119 notifies > 1,024 with one id per sync, which the streams GE pins
    // force whatever the policy; with ids not reused (`event_reuse=never`), GE's answer is the
    // one left. By default the candidates' notifies are reused by lifetime before GE's
    // kMaxNotifyNum applies, as GE checks it after its own reuse, and they fit.
    let mut nodes = Vec::new();
    let mut edges = Vec::new();
    for i in 0..560 {
        nodes.push(format!(r#"{{"name":"a{i}","type":"Relu","engine":"AIcoreEngine"}}"#));
        nodes.push(format!(r#"{{"name":"h{i}","type":"HcomAllReduce","engine":"DNN_HCCL"}}"#));
        edges.push(format!(r#"{{"src":"a{i}","dst":"h{i}"}}"#));
        if i > 0 {
            edges.push(format!(r#"{{"src":"h{}","dst":"a{i}"}}"#, i - 1));
        }
    }
    for reuse in ["never", "lifetime-over-budget"] {
        let never = if reuse == "never" { r#","event_reuse":"never""# } else { "" };
        let doc = format!(
            r#"{{"format":"stream-graph","version":1,"name":"hops","options":{{"event":"notify","policy":"auto"{never}}},
            "nodes":[{}],"edges":[{}]}}"#,
            nodes.join(","),
            edges.join(",")
        );
        let m = json::load_str(&doc).unwrap();
        let limits = TaskLimits::from_options(&m.options);
        let Ok((alloc, Some(report))) = search::run(&m, m.options.clone(), limits, Stage::All, SimConfig::default())
        else {
            panic!("{reuse}: auto must answer with a feasible candidate");
        };
        let auto = report.section::<AutoReport>().unwrap();
        let rows = &auto.candidates;
        if reuse == "never" {
            assert_eq!(auto.chosen, "ge");
            for r in rows.iter().filter(|r| r.policy != "ge") {
                let why = r.rejected.as_deref().unwrap_or_else(|| panic!("{} was not rejected", r.policy));
                // A peer's assignment meets the limit in the sync stage itself.
                if r.policy.starts_with("peer:") {
                    assert!(why.starts_with("SA2003") && why.contains("1119 notifies"), "{why}");
                    continue;
                }
                assert!(why.starts_with("SA2003") && why.contains("force at least 1119 sync ids"), "{why}");
                assert!(why.contains("559 waiting in GE's stream") && why.contains("(engine DNN_HCCL"), "{why}");
            }
        } else {
            assert!(rows.iter().filter(|r| r.policy != "ge").all(|r| r.rejected.is_none()), "{rows:?}");
            assert!(search::sync_ids(&alloc) <= 1024, "{} notifies", search::sync_ids(&alloc));
        }
        assert!(verify::check(&m, &alloc.to_json_new_plan(&m)).ok());
    }
}
