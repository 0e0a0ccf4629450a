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
