//! Orderings GE leaves to stream activation (label-activated streams, Enter feeds, StreamSwitch
//! sends) and the training loop's events (SetActiveStreamsForLoop, ge-compiler.md §6.4, §7),
//! proven by the checker once the split stage has written the activation lists.

use serde_json::Value;
use stream_alloc::allocate_from_preassigned;
use stream_alloc::compile::Stage;
use stream_alloc::graph::{Model, json};
use stream_alloc::memory::AllocationDocument;
use stream_alloc::verify;

fn fixture(name: &str) -> Value {
    let p = format!("{}/tests/fixtures/sync/{name}.json", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

fn ge_model(graph: &Value) -> Model {
    let mut b = json::builder_from_value(graph).unwrap();
    b.options.compat_ge = true;
    b.build().unwrap()
}

const ACTIVATION_FIXTURES: [&str; 5] =
    ["insert_activated_by_label", "insert_enter", "opt_stream_activate", "opt_stream_switch", "loop_events"];

#[test]
fn ge_mode_activation_orderings_are_proven_after_the_split() {
    let mut flagged_at_sync = 0;
    for name in ACTIVATION_FIXTURES {
        let m = ge_model(&fixture(name));
        let all = allocate_from_preassigned(&m, Stage::All).unwrap();
        assert!(!all.activations().is_empty(), "{name}: no activation lists");
        let report = verify::check(&m, &all.to_json_new_plan(&m));
        assert!(report.ok(), "{name}: {:?}", report.violations);
        let sync = allocate_from_preassigned(&m, Stage::Sync).unwrap();
        let early = verify::check(&m, &sync.to_json_new_plan(&m));
        if early.violations.iter().any(|v| v.rule == 1) {
            flagged_at_sync += 1;
        }
    }
    // Without the lists the same syncs leave edges unordered: the activations are what proves them.
    assert!(flagged_at_sync >= 4, "{flagged_at_sync}");
}

#[test]
fn loop_events_get_ids_of_their_own_and_send_recv_nodes() {
    let m = ge_model(&fixture("loop_events"));
    let a = allocate_from_preassigned(&m, Stage::All).unwrap();
    let sw = m.nodes.ids().find(|&n| m.nodes[n].name == "sw").unwrap();
    let loop_ids: Vec<u32> = a.syncs().iter().filter(|p| p.to.node == sw).map(|p| p.id.0).collect();
    assert_eq!(loop_ids.len(), 2);
    for id in &loop_ids {
        assert_eq!(a.syncs().iter().filter(|p| p.id.0 == *id).count(), 1, "loop id {id} shared");
    }
    let recvs = a.inserted().iter().filter(|i| i.op_type() == "Recv" && i.anchor == sw && i.before).count();
    assert_eq!(recvs, 2);
}

#[test]
fn loop_active_without_a_switch_fails_naming_it() {
    let mut g = fixture("loop_events").clone();
    g["edges"].as_array_mut().unwrap().retain(|e| e["src"] != "sw");
    let m = ge_model(&g);
    let e = allocate_from_preassigned(&m, Stage::Sync).unwrap_err();
    assert!(e.message.contains("StreamSwitch before loop active node 'loop_act'"), "{}", e.message);
}

#[test]
fn switch_two_hops_up_is_found() {
    let mut g = fixture("loop_events").clone();
    g["nodes"]
        .as_array_mut()
        .unwrap()
        .insert(1, serde_json::json!({"name": "hop", "type": "NoOp", "engine": "DNN_VM_RTS", "stream": 0}));
    let edges = g["edges"].as_array_mut().unwrap();
    edges.retain(|e| e["src"] != "sw");
    edges.push(serde_json::json!({"src": "sw", "dst": "hop", "kind": "control"}));
    edges.push(serde_json::json!({"src": "hop", "dst": "loop_act", "kind": "control"}));
    let m = ge_model(&g);
    let a = allocate_from_preassigned(&m, Stage::Sync).unwrap();
    let into_sw = a.syncs().iter().filter(|p| m.nodes[p.to.node].name == "sw").count();
    assert_eq!(into_sw, 2);
}

#[test]
fn checker_refuses_backward_syncs_outside_a_loop_and_shared_loop_ids() {
    let graph = fixture("loop_events").clone();
    let m = ge_model(&graph);
    let a = allocate_from_preassigned(&m, Stage::All).unwrap();
    let doc = a.to_json_new_plan(&m);
    // The same document against a graph whose StreamActive is no loop: the backward syncs break rule 3.
    let mut plain = graph.clone();
    plain["nodes"][1].as_object_mut().unwrap().remove("ge_attrs");
    let r = verify::check(&json::builder_from_value(&plain).unwrap().build().unwrap(), &doc);
    assert!(r.violations.iter().any(|v| v.rule == 3 && v.message.contains("-> sw")), "{:?}", r.violations);
    // A loop sync sharing its id with an in-iteration pair breaks rule 4.
    let mut shared = doc.clone();
    let syncs = shared["syncs"].as_array_mut().unwrap();
    let loop_id = syncs.iter().find(|s| s["to"] == "sw").unwrap()["id"].clone();
    let other = syncs.iter_mut().find(|s| s["to"] != "sw").unwrap();
    other["id"] = loop_id;
    let r = verify::check(&m, &shared);
    assert!(r.violations.iter().any(|v| v.rule == 4 && v.message.contains("loop sync")), "{:?}", r.violations);
}
