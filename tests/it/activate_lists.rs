//! Stream activation (ge-compiler.md §6.1, §7): lists by label, switch StreamActive nodes,
//! loop activation, the update after the split and CheckStreamActived; each through the
//! pipeline from the fixture's own streams.

use crate::common;
use stream_alloc::ErrorKind;
use stream_alloc::compile::Allocation;
use stream_alloc::graph::{GraphId, Model, StreamId, json};
use stream_alloc::memory::AllocationDocument;

fn fixture() -> Model {
    json::load_file(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/split/activation.json")).unwrap()
}

fn list(m: &Model, a: &Allocation, name: &str) -> Vec<u32> {
    let n = m.find_node(GraphId::ROOT, name).unwrap();
    a.activations().iter().find(|(x, _)| *x == n).map(|(_, l)| l.iter().map(|s| s.0).collect()).unwrap_or_default()
}

#[test]
fn logical_lists_by_label_switch_and_loop() {
    // Without a depth limit nothing splits: the lists are the logical ones.
    let mut m = fixture();
    m.options.unlimited_depth = Some(true);
    let a = common::split_given(&m).unwrap();
    // Streams 0..5, plus one for the StreamActive the switch needs (label "two" spans 2 and 3).
    assert_eq!(a.physical_count(), 6);
    assert_eq!(list(&m, &a, "act"), vec![1]);
    assert_eq!(list(&m, &a, "sw"), vec![5]);
    assert_eq!(a.inserted().len(), 1);
    let first = stream_alloc::graph::InsertedId(0);
    assert_eq!((a.inserted()[first].name(&m).as_ref(), a.inserted()[first].stream), ("sw_StreamActive_0", StreamId(5)));
    assert_eq!(a.inserted_activations(), vec![(first, vec![StreamId(2), StreamId(3)])]);
    // The loop starts every stream nobody else activates, except its own.
    assert_eq!(list(&m, &a, "loop"), vec![4]);
}

#[test]
fn split_pieces_join_the_lists_that_held_their_origin() {
    let m = fixture();
    let a = common::split_given(&m).unwrap();
    // Room 20: stream 1 holds b0 b1 b2, 10 tasks each. b0 + b1 make 20, but the piece they
    // share would also hold the split's record (1): b1 starts new stream 6, and b2 new stream 7
    // (the split's wait 2 + 10 + 10 > 20).
    let phys = |name: &str| a.stream()[m.find_node(GraphId::ROOT, name).unwrap()];
    assert_eq!((phys("b0"), phys("b1"), phys("b2")), (Some(StreamId(1)), Some(StreamId(6)), Some(StreamId(7))));
    assert_eq!(a.physical_count(), 8);
    assert_eq!(list(&m, &a, "act"), vec![1, 6, 7]);
    assert_eq!(list(&m, &a, "loop"), vec![4]);
    let j = a.to_json_new_plan(&m);
    let acts = j["activations"].as_array().unwrap();
    assert!(acts.iter().any(|x| x["node"] == "sw_StreamActive_0" && x["streams"] == serde_json::json!([2, 3])));
}

#[test]
fn unknown_label_fails() {
    let text = r#"{"format":"stream-graph","version":1,"name":"g","nodes":[
        {"name":"act","type":"StreamActive","engine":"DNN_VM_RTS","stream":0,"attrs":{"active_label_list":["nope"]}}],
        "edges":[]}"#;
    let m = json::load_str(text).unwrap();
    let e = common::split_given(&m).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Failed);
    assert!(e.message.contains("cannot find stream label \"nope\"") && e.message.contains("act"), "{}", e.message);
}

#[test]
fn activating_its_own_stream_fails() {
    let text = r#"{"format":"stream-graph","version":1,"name":"g","nodes":[
        {"name":"act","type":"StreamActive","engine":"DNN_VM_RTS","stream":0,"attrs":{"active_label_list":["l"]}},
        {"name":"x","type":"Conv2D","engine":"AIcoreEngine","stream":0,"attrs":{"stream_label":"l"}}],
        "edges":[{"src":"act","dst":"x"}]}"#;
    let m = json::load_str(text).unwrap();
    let e = common::split_given(&m).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Failed);
    assert!(e.message.contains("\"act\" activates its own stream 0"), "{}", e.message);
}

#[test]
fn subgraph_first_active_activates_its_subgraph_streams() {
    let text = r#"{"format":"stream-graph","version":1,"name":"g","nodes":[
        {"name":"p","type":"PartitionedCall","engine":"DNN_VM_RTS","stream":0,"subgraphs":["sub"]}],
        "edges":[],
        "subgraphs":[{"name":"sub","parent":"p","nodes":[
          {"name":"first","type":"StreamActive","engine":"DNN_VM_RTS","stream":0,"ge_attrs":{"subgraph_first_active":true}},
          {"name":"a","type":"Conv2D","engine":"AIcoreEngine","stream":1},
          {"name":"b","type":"Conv2D","engine":"AIcoreEngine","stream":2,"attrs":{"stream_label":"x"}}],
          "edges":[{"src":"first","dst":"a"}]}]}"#;
    let m = json::load_str(text).unwrap();
    let a = common::split_given(&m).unwrap();
    let sub = m.find_graph("sub").unwrap();
    let first = m.find_node(sub, "first").unwrap();
    // Unlabelled nodes' streams minus its own: only stream 1.
    assert_eq!(a.activations(), vec![(first, vec![StreamId(1)])]);
}
