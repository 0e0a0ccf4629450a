//! The checker on hand-made allocation documents: each rule broken once, named in the report.

use serde_json::{Value, json};
use stream_alloc::graph::{Model, json as gjson};
use stream_alloc::verify::{self, Report};

/// a(s0) -> b(s1) -> c(s0), a -> d(s1): a diamond-ish graph on two streams.
fn model() -> Model {
    gjson::load_str(
        r#"{"format":"stream-graph","version":1,"name":"g","nodes":[
        {"name":"x","type":"Data","engine":"DNN_VM_GE_LOCAL","tasks":0},
        {"name":"a","type":"Conv2D","engine":"AIcoreEngine"},
        {"name":"b","type":"Conv2D","engine":"AIcoreEngine"},
        {"name":"d","type":"Conv2D","engine":"AIcoreEngine"},
        {"name":"c","type":"Conv2D","engine":"AIcoreEngine"}],
        "edges":[{"src":"x","dst":"a"},{"src":"a","dst":"b"},{"src":"b","dst":"c"},{"src":"a","dst":"d"}]}"#,
    )
    .unwrap()
}

fn doc(syncs: Value, count: u64) -> Value {
    json!({
        "format": "stream-allocation", "version": 1, "graph": "g", "mode": "static-multi",
        "streams": {"logical": 2, "physical": 2, "attached": 0},
        "events": {"kind": "event", "count": count},
        "nodes": [
            {"name": "x", "graph": "", "logical_stream": -1, "stream": -1},
            {"name": "a", "graph": "", "logical_stream": 0, "stream": 0},
            {"name": "b", "graph": "", "logical_stream": 1, "stream": 1},
            {"name": "d", "graph": "", "logical_stream": 1, "stream": 1},
            {"name": "c", "graph": "", "logical_stream": 0, "stream": 0}
        ],
        "syncs": syncs, "activations": [], "attached": []
    })
}

fn rules(r: &Report) -> Vec<u32> {
    r.violations.iter().map(|v| v.rule).collect()
}

#[test]
fn a_correct_document_passes_and_reports_metrics() {
    let m = model();
    let r = verify::check(&m, &doc(json!([{"id":0,"from":"a","to":"b"},{"id":1,"from":"b","to":"c"}]), 2));
    assert!(r.ok(), "{:?}", r.violations);
    assert_eq!(r.edges_checked, 3);
    assert_eq!(r.edge_sync_minimum, Some(2));
    assert_eq!(r.streams_used, 2);
    // b, d and c: b and d are independent; so are d and c.
    assert_eq!(r.width, Some(2));
    assert_eq!(r.antichain.len(), 2);
    assert!(r.antichain.contains(&"d".to_string()));
    assert_eq!(r.to_json()["ok"], json!(true));
}

#[test]
fn rule1_names_the_unordered_edge() {
    let r = verify::check(&model(), &doc(json!([{"id":0,"from":"a","to":"b"}]), 1));
    assert_eq!(rules(&r), vec![1]);
    assert!(r.violations[0].message.contains("edge b -> c"), "{}", r.violations[0].message);
}

#[test]
fn rule3_same_stream_and_backward_syncs() {
    let r = verify::check(
        &model(),
        &doc(json!([{"id":0,"from":"a","to":"b"},{"id":1,"from":"b","to":"c"},{"id":2,"from":"a","to":"c"}]), 3),
    );
    assert_eq!(rules(&r), vec![3]);
    assert!(r.violations[0].message.contains("sync id 2"));
    let r = verify::check(
        &model(),
        &doc(json!([{"id":0,"from":"a","to":"b"},{"id":1,"from":"b","to":"c"},{"id":2,"from":"d","to":"a"}]), 3),
    );
    assert!(rules(&r).contains(&3));
    assert!(rules(&r).contains(&2), "a backward sync closes a cycle: {:?}", r.violations);
}

#[test]
fn rule4_unsafe_and_safe_reuse() {
    // a -> b and b -> c share id 0: b's wait precedes b's record: safe.
    let r = verify::check(&model(), &doc(json!([{"id":0,"from":"a","to":"b"},{"id":0,"from":"b","to":"c"}]), 1));
    assert!(r.ok(), "{:?}", r.violations);
    // a -> d and a -> b share an id: both recorded after a, nothing orders them.
    let r = verify::check(
        &model(),
        &doc(json!([{"id":0,"from":"a","to":"b"},{"id":0,"from":"a","to":"d"},{"id":1,"from":"b","to":"c"}]), 2),
    );
    assert_eq!(rules(&r), vec![4]);
    assert!(r.violations[0].message.contains("sync id 0"));
}

#[test]
fn rule5_and_rule6() {
    let r = verify::check(&model(), &doc(json!([{"id":0,"from":"a","to":"b"},{"id":2,"from":"b","to":"c"}]), 2));
    assert_eq!(rules(&r), vec![5, 5], "id 2 is out of range and id 1 unused");
    let mut d = doc(json!([{"id":0,"from":"a","to":"b"},{"id":1,"from":"b","to":"c"}]), 2);
    d["streams"]["physical"] = json!(3);
    assert_eq!(rules(&verify::check(&model(), &d)), vec![5]);
    let mut d = doc(json!([{"id":0,"from":"a","to":"b"},{"id":1,"from":"b","to":"c"}]), 2);
    d["events"] = json!({"kind": "notify", "count": 1025});
    assert!(rules(&verify::check(&model(), &d)).contains(&6));
}

#[test]
fn unreadable_documents_are_rule0() {
    let r = verify::check(&model(), &json!({"format": "stream-allocation", "version": 1, "error": {"code": "E10055"}}));
    assert_eq!(rules(&r), vec![0]);
    let mut d = doc(json!([]), 0);
    d["nodes"].as_array_mut().unwrap().pop();
    let r = verify::check(&model(), &d);
    assert!(r.violations.iter().any(|v| v.message.contains("'c'") && v.message.contains("missing")));
    let r = verify::check(&model(), &doc(json!([{"id":0,"from":"zz","to":"b"}]), 1));
    assert!(r.violations.iter().any(|v| v.rule == 0 && v.message.contains("zz")));
}

#[test]
fn width_of_a_wide_graph() {
    let mut nodes = vec![r#"{"name":"s","type":"Conv2D","engine":"AIcoreEngine"}"#.to_string()];
    let mut edges = Vec::new();
    for i in 0..5 {
        nodes.push(format!(r#"{{"name":"m{i}","type":"Conv2D","engine":"AIcoreEngine"}}"#));
        edges.push(format!(r#"{{"src":"s","dst":"m{i}"}}"#));
        edges.push(format!(r#"{{"src":"m{i}","dst":"t"}}"#));
    }
    nodes.push(r#"{"name":"t","type":"Conv2D","engine":"AIcoreEngine"}"#.to_string());
    let text = format!(
        r#"{{"format":"stream-graph","version":1,"name":"w","nodes":[{}],"edges":[{}]}}"#,
        nodes.join(","),
        edges.join(",")
    );
    let m = gjson::load_str(&text).unwrap();
    let (w, anti) = verify::metrics::width(&m);
    assert_eq!(w, Some(5));
    assert_eq!(anti, vec!["m0", "m1", "m2", "m3", "m4"]);
}

/// Allocation JSON for a graph of `nodes` (name, tasks, stream) and `syncs`.
fn small(nodes: &[(&str, u32, i64)], edges: &[(&str, &str)], syncs: Value) -> (Model, Value) {
    let ns: Vec<String> = nodes
        .iter()
        .map(|(n, t, _)| format!(r#"{{"name":"{n}","type":"X","engine":"AIcoreEngine","tasks":{t}}}"#))
        .collect();
    let es: Vec<String> = edges.iter().map(|(a, b)| format!(r#"{{"src":"{a}","dst":"{b}"}}"#)).collect();
    let m = gjson::load_str(&format!(
        r#"{{"format":"stream-graph","version":1,"name":"g","nodes":[{}],"edges":[{}]}}"#,
        ns.join(","),
        es.join(",")
    ))
    .unwrap();
    let streams = nodes.iter().map(|n| n.2).max().unwrap_or(-1) + 1;
    let count = syncs.as_array().map_or(0, Vec::len);
    let d = json!({
        "format": "stream-allocation", "version": 1, "graph": "g", "mode": "static-multi",
        "streams": {"logical": streams, "physical": streams, "attached": 0},
        "events": {"kind": "event", "count": count},
        "nodes": nodes.iter().map(|(n, _, s)| json!({"name": n, "graph": "", "logical_stream": s, "stream": s})).collect::<Vec<_>>(),
        "syncs": syncs, "activations": [], "attached": []
    });
    (m, d)
}

#[test]
fn a_node_with_tasks_needs_a_stream() {
    let (m, d) = small(&[("a", 1, -1), ("b", 1, -1)], &[("a", "b")], json!([]));
    let r = verify::check(&m, &d);
    let msgs: Vec<&str> = r.violations.iter().filter(|v| v.rule == 1).map(|v| v.message.as_str()).collect();
    assert_eq!(msgs.len(), 2, "{:?}", r.violations);
    assert!(msgs[0].contains("'a'") && msgs[0].contains("no stream"), "{}", msgs[0]);
    assert!(msgs[1].contains("'b'"), "{}", msgs[1]);
    // Without tasks they may run on no stream.
    let (m, d) = small(&[("a", 0, -1), ("b", 0, -1)], &[("a", "b")], json!([]));
    assert!(verify::check(&m, &d).ok());
}

#[test]
fn task_less_nodes_are_contracted() {
    // a -> v -> b: v runs nothing, so a sync a -> b suffices, whether v has a stream or not.
    for v_stream in [-1, 2] {
        let nodes = [("a", 1, 0), ("v", 0, v_stream), ("b", 1, 1)];
        let edges = [("a", "v"), ("v", "b")];
        let (m, d) = small(&nodes, &edges, json!([{"id": 0, "from": "a", "to": "b"}]));
        let r = verify::check(&m, &d);
        assert!(r.ok(), "{:?}", r.violations);
        assert_eq!((r.edges_checked, r.edge_sync_minimum), (1, Some(1)));
        let (m, d) = small(&nodes, &edges, json!([]));
        let r = verify::check(&m, &d);
        assert_eq!(rules(&r), vec![1]);
        assert!(r.violations[0].message.contains("dependency a -> b (through task-less 'v')"), "{:?}", r.violations);
    }
}

#[test]
fn only_syncs_order_nodes() {
    // The same pair under another key (as notify mode's split events once were) orders nothing.
    let (m, mut d) = small(&[("a", 1, 0), ("b", 1, 1)], &[("a", "b")], json!([]));
    d["split_events"] = json!([{"id": 0, "from": "a", "to": "b"}]);
    d["events"]["split_count"] = json!(1);
    assert_eq!(rules(&verify::check(&m, &d)), vec![1]);
}

#[test]
fn the_edge_minimum_is_not_a_lower_bound() {
    // a1, a2 on stream 0 feed b1, b2 on stream 1 (a1 -> b1, a2 -> b2): from graph edges two
    // syncs are needed, but one sync from a2 to b1 orders both.
    let nodes = [("a1", 1, 0), ("a2", 1, 0), ("b1", 1, 1), ("b2", 1, 1)];
    let (m, d) = small(&nodes, &[("a1", "b1"), ("a2", "b2")], json!([{"id": 0, "from": "a2", "to": "b1"}]));
    let r = verify::check(&m, &d);
    assert!(r.ok(), "{:?}", r.violations);
    assert_eq!((r.sync_pairs, r.edge_sync_minimum), (1, Some(2)));
}
