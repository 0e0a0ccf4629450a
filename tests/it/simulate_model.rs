//! The device model on hand-checked graphs, the trace and DOT writers, and the CLI commands.

use crate::common;
use stream_alloc::allocate;
use stream_alloc::compile::{Allocation, Stage, SyncEnd, SyncPair};
use stream_alloc::graph::builder::{EdgeSpec, NodeSpec};
use stream_alloc::graph::{IdVec, Model, ModelBuilder, NodeId, StreamId};
use stream_alloc::simulate::{SimConfig, dot::dot, simulate};

fn model(nodes: &[(&str, f64, u32)], edges: &[(&str, &str)]) -> Model {
    let mut b = ModelBuilder::new("sim");
    for &(name, cost, cores) in nodes {
        let mut n = NodeSpec::new(name, "Add", "AIcoreEngine");
        n.cost_us = cost;
        n.cores = cores;
        b.add_node(n);
    }
    for (s, d) in edges {
        b.add_edge(EdgeSpec::data(*s, *d));
    }
    b.build().unwrap()
}

fn assigned(m: &Model, streams: &[u32], syncs: &[(u32, u32)]) -> Allocation {
    let s: IdVec<NodeId, Option<StreamId>> = streams.iter().map(|&s| Some(StreamId(s))).collect();
    let count = streams.iter().max().unwrap() + 1;
    let a = Allocation::from_logical("test", m.options.event, s, count, IdVec::filled(m.nodes.len(), Vec::new()), 0);
    a.with_given_syncs(
        syncs
            .iter()
            .enumerate()
            .map(|(i, &(f, t))| SyncPair {
                id: stream_alloc::graph::EventId(i as u32),
                from: SyncEnd::main(NodeId(f)),
                to: SyncEnd::main(NodeId(t)),
            })
            .collect(),
    )
}

#[test]
fn units_fifo_and_wait_latency() {
    let m = model(&[("a", 10.0, 24), ("b", 10.0, 24)], &[]);
    let cfg = SimConfig::default();
    // Two streams, but each node takes every unit: they serialise.
    assert_eq!(simulate(&m, &assigned(&m, &[0, 1], &[]), &cfg).unwrap().makespan_us, 20.0);
    let m = model(&[("a", 10.0, 12), ("b", 10.0, 12)], &[]);
    let r = simulate(&m, &assigned(&m, &[0, 1], &[]), &cfg).unwrap();
    assert_eq!(r.makespan_us, 10.0);
    assert_eq!(r.utilisation, 1.0);
    assert_eq!(r.lower_bound_us, 10.0);
    assert_eq!(r.single_stream_us, 20.0);
    // One stream: FIFO.
    assert_eq!(simulate(&m, &assigned(&m, &[0, 0], &[]), &cfg).unwrap().makespan_us, 20.0);
    // A wait costs its latency.
    let m = model(&[("a", 5.0, 1), ("b", 5.0, 1)], &[("a", "b")]);
    let cfg = SimConfig { units: 24, wait_latency_us: 2.5, ..SimConfig::default() };
    let r = simulate(&m, &assigned(&m, &[0, 1], &[(0, 1)]), &cfg).unwrap();
    assert_eq!(r.makespan_us, 12.5);
    assert_eq!(r.critical_path_us, 10.0);
    assert_eq!(r.span[NodeId(1)], Some((7.5, 12.5)));
}

#[test]
fn a_wait_cycle_is_reported_as_a_deadlock() {
    let m = model(&[("a", 1.0, 1), ("b", 1.0, 1), ("c", 1.0, 1), ("d", 1.0, 1)], &[]);
    let a = assigned(&m, &[0, 0, 1, 1], &[(1, 2), (3, 0)]);
    let e = simulate(&m, &a, &SimConfig::default()).unwrap_err();
    assert!(e.message.contains("deadlock"), "{}", e.message);
    let e = simulate(&m, &a, &SimConfig { units: 0, ..SimConfig::default() }).unwrap_err();
    assert!(e.message.contains("units"), "{}", e.message);
}

#[test]
fn trace_and_dot_are_deterministic_and_complete() {
    let path = common::corpus_graph("googlenet.json");
    let mut b = stream_alloc::graph::json::builder_from_slice(&std::fs::read(&path).unwrap()).unwrap();
    b.options.policy = "min-streams".into();
    let m = b.build().unwrap();
    let a = allocate(&m, Stage::All).unwrap();
    let cfg = SimConfig::default();
    let r1 = simulate(&m, &a, &cfg).unwrap();
    let r2 = simulate(&m, &a, &cfg).unwrap();
    let t1 = serde_json::to_string(&stream_alloc::memory::trace_json(&m, &r1)).unwrap();
    assert_eq!(t1, serde_json::to_string(&stream_alloc::memory::trace_json(&m, &r2)).unwrap());
    let doc: serde_json::Value = serde_json::from_str(&t1).unwrap();
    let events = doc["traceEvents"].as_array().unwrap();
    let complete = events.iter().filter(|e| e["ph"] == "X").count();
    assert_eq!(complete, a.stream().iter().filter(|s| s.is_some()).count());
    assert_eq!(events.iter().filter(|e| e["ph"] == "s").count(), a.syncs().len());
    assert_eq!(events.iter().filter(|e| e["ph"] == "f").count(), a.syncs().len());
    let waits: Vec<_> = a.syncs().iter().map(|p| (p.from.node, p.to.node)).collect();
    let d = dot(&m, a.stream(), &waits);
    assert_eq!(d, dot(&m, a.stream(), &waits));
    assert_eq!(d.matches("style=dashed, color=").count(), a.syncs().len());
    assert!(d.contains("subgraph cluster_0"));
}

fn cli(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_stream-alloc")).args(args).output().unwrap();
    (out.status.code().unwrap(), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

#[test]
fn simulate_dot_and_compare_commands() {
    let path = common::corpus_graph("squeezenet1_1.json");
    let g = path.to_str().unwrap();
    let dir = std::env::temp_dir().join(format!("sa-sim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("t.json");
    let (code, out, err) =
        cli(&["simulate", g, "--option", "policy=auto", "--trace", trace.to_str().unwrap(), "--json", "--units", "24"]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["policy"]["name"], "auto");
    assert!(doc["policy"]["chosen"].is_string());
    assert!(doc["makespan_us"].as_f64().unwrap() >= doc["lower_bound_us"].as_f64().unwrap());
    assert!(std::fs::read_to_string(&trace).unwrap().contains("traceEvents"));
    let (code, _, err) = cli(&["simulate", g, "--units", "0"]);
    assert_eq!(code, 1);
    assert!(err.contains("units"), "{err}");
    // dot with a written allocation equals dot allocating itself.
    let alloc = dir.join("a.json");
    let (code, _, err) = cli(&["allocate", g, "--option", "policy=min-streams", "-o", alloc.to_str().unwrap(), "-q"]);
    assert_eq!(code, 0, "{err}");
    let (c1, d1, _) = cli(&["dot", g, alloc.to_str().unwrap()]);
    let (c2, d2, _) = cli(&["dot", g, "--option", "policy=min-streams"]);
    assert_eq!((c1, c2), (0, 0));
    assert_eq!(d1, d2);
    let (code, out, err) = cli(&["compare", g, "--policies", "ge,min-streams", "--format", "csv"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 3);
    assert!(out.starts_with("graph,policy,"));
    let (code, _, err) = cli(&["compare", g, "--policies", "ge,fastest"]);
    assert_eq!(code, 2);
    assert!(err.contains("fastest"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
