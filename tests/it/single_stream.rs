//! Single-stream mode (`enable_single_stream`): SingleStreamPass, NodeStreamUpdatePass and
//! UpdateForSkippedEnginePass (ge-compiler.md §4.14, §4.6, §4.9).

use crate::common;
use stream_alloc::graph::{Model, json};
use stream_alloc::memory::AllocationDocument;
use stream_alloc::{Stage, allocate};

fn single(doc_body: &str) -> String {
    format!(
        r#"{{"format":"stream-graph","version":1,"name":"g","options":{{"enable_single_stream":true}},{doc_body}}}"#
    )
}

fn streams(m: &Model, stage: Stage) -> Vec<(String, i64)> {
    let a = allocate(m, stage).unwrap();
    m.all_nodes()
        .into_iter()
        .map(|n| (m.node(n).name.clone(), a.logical_stream()[n].map_or(-1, |s| i64::from(s.0))))
        .collect()
}

fn pairs(v: &[(&str, i64)]) -> Vec<(String, i64)> {
    v.iter().map(|(n, s)| (n.to_string(), *s)).collect()
}

#[test]
fn one_stream_and_skipped_engine_nodes() {
    // x (input Data) is in no subgraph; id (GE_LOCAL Identity fed only by x) ends on no stream;
    // r (GE_LOCAL Reshape between two AI-core nodes) stays on the stream.
    let m = json::load_str(&single(
        r#""nodes":[
        {"name":"x","type":"Data","engine":"DNN_VM_GE_LOCAL","tasks":0},
        {"name":"id","type":"Identity","engine":"DNN_VM_GE_LOCAL","tasks":0},
        {"name":"a","type":"Conv2D","engine":"AIcoreEngine"},
        {"name":"r","type":"Reshape","engine":"DNN_VM_GE_LOCAL","tasks":0},
        {"name":"b","type":"Relu","engine":"AIcoreEngine"},
        {"name":"h","type":"HcomAllReduce","engine":"DNN_HCCL"},
        {"name":"o","type":"NetOutput","engine":"DNN_VM_GE_LOCAL","tasks":0}],
      "edges":[{"src":"x","dst":"id"},{"src":"id","dst":"a"},{"src":"a","dst":"r"},{"src":"r","dst":"b"},
               {"src":"b","dst":"h"},{"src":"h","dst":"o"}]"#,
    ))
    .unwrap();
    assert_eq!(
        streams(&m, Stage::All),
        pairs(&[("x", -1), ("id", -1), ("a", 0), ("r", 0), ("b", 0), ("h", 0), ("o", 0)])
    );
    let a = allocate(&m, Stage::All).unwrap();
    assert_eq!((a.logical_count(), a.physical_count(), a.sync_count()), (1, 1, 0));
    assert_eq!(a.mode(), "static-single");
}

#[test]
fn nested_subgraph_takes_the_parent_stream() {
    let m = json::load_str(&single(
        r#""nodes":[
        {"name":"a","type":"Conv2D","engine":"AIcoreEngine"},
        {"name":"if","type":"If","engine":"DNN_VM_RTS","subgraphs":["then"]},
        {"name":"o","type":"NetOutput","engine":"DNN_VM_GE_LOCAL","tasks":0}],
      "edges":[{"src":"a","dst":"if"},{"src":"if","dst":"o"}],
      "subgraphs":[{"name":"then","parent":"if","nodes":[
        {"name":"t","type":"Relu","engine":"AIcoreEngine"},
        {"name":"lbl","type":"LabelSet","engine":"DNN_VM_RTS","attrs":{"rts_label_node":true}}],
        "edges":[{"src":"t","dst":"lbl"}]}]"#,
    ))
    .unwrap();
    assert_eq!(streams(&m, Stage::Logical), pairs(&[("a", 0), ("if", 0), ("t", 0), ("lbl", 0), ("o", 0)]));
}

#[test]
fn stream_label_is_e10055() {
    for attr in ["stream_label", "user_stream_label"] {
        let m = json::load_str(&single(&format!(
            r#""nodes":[{{"name":"a","type":"Conv2D","engine":"AIcoreEngine","attrs":{{"{attr}":"s1"}}}}],"edges":[]"#
        )))
        .unwrap();
        let e = allocate(&m, Stage::Logical).unwrap_err();
        assert_eq!(e.code(), "E10055");
        assert!(e.message.contains("conflicts with stream label \"s1\"") && e.message.contains("'a'"), "{e}");
    }
}

#[test]
fn auto_multistream_mode_is_e10056_and_checked_before_labels() {
    let body =
        r#""nodes":[{"name":"a","type":"Conv2D","engine":"AIcoreEngine","attrs":{"stream_label":"s1"}}],"edges":[]"#;
    let mut b = json::builder_from_slice(single(body).as_bytes()).unwrap();
    b.options.set_str("auto_multistream_parallel_mode", "LoadBalance:4").unwrap();
    let e = allocate(&b.build().unwrap(), Stage::Logical).unwrap_err();
    assert_eq!(e.code(), "E10056");
    // The root-graph attribute counts too, and may say "default".
    let doc = single(body).replacen('{', r#"{"graph_attrs":{"auto_multistream_parallel_mode":"default"},"#, 1);
    let e = allocate(&json::load_str(&doc).unwrap(), Stage::Logical).unwrap_err();
    assert_eq!(e.code(), "E10056");
    assert!(e.message.contains("ge.enableSingleStream"), "{e}");
}

#[test]
fn every_corpus_graph_single_stream() {
    for path in common::corpus_paths() {
        let mut b = json::builder_from_slice(&std::fs::read(&path).unwrap()).unwrap();
        if b.graphs[0].shape == stream_alloc::graph::Shape::Dynamic {
            continue;
        }
        b.options.set_str("enable_single_stream", "true").unwrap();
        let m = b.build().unwrap();
        let a = allocate(&m, Stage::All).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(a.logical_count(), 1, "{}", path.display());
        // Every node with a device task is on the stream; input data nodes are on none.
        for (id, node) in m.nodes.enumerate() {
            if node.tasks > 0 {
                assert_eq!(a.stream()[id].map(|s| s.0), Some(0), "{}: {}", path.display(), node.name);
            }
            if node.is_data_like() && m.in_edges(id).next().is_none() {
                assert_eq!(a.stream()[id], None, "{}: {}", path.display(), node.name);
            }
        }
        let first = a.to_json_string_new_plan(&m);
        let again = allocate(&m, Stage::All).unwrap().to_json_string_new_plan(&m);
        assert_eq!(first, again, "{}: output must be deterministic", path.display());
        let doc: serde_json::Value = serde_json::from_str(&first).unwrap();
        assert_eq!(doc["nodes"].as_array().unwrap().len(), m.nodes.len());
        assert_eq!(doc["streams"]["logical"], 1);
    }
}
