//! GE's `ToStringInfo()` text and the summary's fields on a graph with a user stream label, an
//! attached stream, an HCCL node with follow streams and a split stream.

use crate::common;
use std::sync::Arc;

use stream_alloc::compile::summary::{LogicalStreamInfo, StreamAllocationSummary};
use stream_alloc::graph::{GraphId, NodeId, json};

#[test]
fn to_string_info_is_ges_format_byte_for_byte() {
    let info = LogicalStreamInfo {
        logical_stream_id: 2,
        user_stream_label: "lbl".into(),
        assigned_by_stream_pass: true,
        attached_stream_ids: vec![5, 6],
        physical_stream_num: 3,
        hccl_followed_stream_num: 2,
        nodes: vec![],
    };
    assert_eq!(
        info.to_string_info(),
        "logic_stream_id: 2, user_stream_label: lbl, is_assigned_by_user_stream_pass: true, attached_stream_ids: 5 6 , \
         physical_model_stream_num: 3, hccl_followed_stream_num: 2.\n"
    );
    let empty = LogicalStreamInfo { logical_stream_id: 0, physical_stream_num: 1, ..Default::default() };
    assert_eq!(
        empty.to_string_info(),
        "logic_stream_id: 0, user_stream_label: , is_assigned_by_user_stream_pass: false, attached_stream_ids: , \
         physical_model_stream_num: 1, hccl_followed_stream_num: 0.\n"
    );
}

const GRAPH: &str = r#"{"format":"stream-graph","version":1,"name":"fmt","options":{"max_task_count":47},
 "nodes":[
  {"name":"x","type":"Data","engine":"DNN_VM_GE_LOCAL","tasks":0},
  {"name":"n1","type":"MatMul","engine":"AIcoreEngine","tasks":1,
   "attrs":{"attached_streams":[{"name":"tiling","reuse_key":"k","stream_num":1,"required":true}]}},
  {"name":"n3","type":"MatMul","engine":"AIcoreEngine","tasks":1},
  {"name":"n2","type":"MatMul","engine":"AIcoreEngine","tasks":1,"attrs":{"user_stream_label":"side"}},
  {"name":"ar","type":"HcomAllReduce","engine":"DNN_HCCL","tasks":1,"ge_attrs":{"used_stream_num":2}},
  {"name":"out","type":"NetOutput","engine":"DNN_VM_GE_LOCAL","tasks":0}],
 "edges":[{"src":"x","dst":"n1"},{"src":"n1","dst":"n3"},{"src":"n1","dst":"n2"},{"src":"n1","dst":"ar"},
          {"src":"n3","dst":"out"},{"src":"n2","dst":"out"},{"src":"ar","dst":"out"}]}"#;

fn entry_of(s: &StreamAllocationSummary, n: NodeId) -> &LogicalStreamInfo {
    s.graphs[0].streams.iter().find(|i| i.nodes.contains(&n)).expect("an entry listing the node")
}

#[test]
fn summary_fields_and_text_on_a_staged_compile() {
    let model = Arc::new(json::load_str(GRAPH).unwrap());
    let id = |name: &str| model.find_node(GraphId::ROOT, name).unwrap();
    let mut s = common::session(Arc::clone(&model));
    s.assign_logical_streams().unwrap();
    // After the logical stage the summary already answers, one physical stream each.
    let early = s.summary().unwrap();
    assert!(early.graphs[0].streams.iter().all(|i| i.physical_stream_num == 1));

    // 15 + 15 tasks on the AI-core stream with 20 tasks of room: two physical streams.
    s.set_task_count(id("n1"), 15).unwrap();
    s.set_task_count(id("n3"), 15).unwrap();
    s.run_all().unwrap();
    let a = s.allocation().unwrap();
    let sum = s.summary().unwrap();
    assert_eq!(sum.graphs.len(), 1);
    assert_eq!(sum.graphs[0].name, "fmt");

    let main = entry_of(&sum, id("n1"));
    let attached = a.split_to_logic()[a.attached()[id("n1")][0].index()].0 as i64;
    assert_eq!(main.logical_stream_id, a.logical_stream()[id("n1")].unwrap().0 as i64);
    assert_eq!(main.attached_stream_ids, vec![attached]);
    assert_eq!(main.physical_stream_num, 2, "n1 and n3 land on two pieces");
    // The label is the user label of the stream's nodes (n2's, wherever logical allocation put it).
    let side = entry_of(&sum, id("n2"));
    assert_eq!(side.user_stream_label, "side");
    assert_eq!(main.user_stream_label, if side == main { "side" } else { "" });
    assert_eq!(
        main.to_string_info(),
        format!(
            "logic_stream_id: {}, user_stream_label: {}, is_assigned_by_user_stream_pass: false, attached_stream_ids: \
             {attached} , physical_model_stream_num: 2, hccl_followed_stream_num: 0.\n",
            main.logical_stream_id, main.user_stream_label
        )
    );
    let hccl = entry_of(&sum, id("ar"));
    assert_eq!(hccl.hccl_followed_stream_num, 2);
    let tiling = sum.graphs[0].streams.iter().find(|i| i.logical_stream_id == attached).unwrap();
    assert_eq!(tiling.nodes, vec![id("n1")]);

    // Text: a header line, the graph, one ToStringInfo line per entry in ascending id.
    let text = sum.to_text();
    let mut lines = text.lines();
    assert!(lines.next().unwrap().starts_with("model: fmt, stage: generated, stream_num: "));
    assert_eq!(lines.next(), Some("[fmt]"));
    let infos: Vec<&str> = lines.collect();
    assert_eq!(infos.len(), sum.graphs[0].streams.len());
    for (line, i) in infos.iter().zip(&sum.graphs[0].streams) {
        assert_eq!(format!("{line}\n"), i.to_string_info());
    }

    // DOT: one box per logical stream, the event edges between the streams n1 feeds.
    let dot = &sum.graphs[0].stream_graph;
    assert!(dot.starts_with("digraph \"fmt\" {\n"));
    for i in &sum.graphs[0].streams {
        assert!(dot.contains(&format!("\"s{}\" [label=\"logical stream {}", i.logical_stream_id, i.logical_stream_id)));
    }
    let edge = format!("\"s{}\" -> \"s{}\" [label=", main.logical_stream_id, hccl.logical_stream_id);
    assert!(dot.contains(&edge), "{dot}");
    let json = sum.to_json(&model);
    assert_eq!(json["graphs"][0]["physical_stream_nums"].as_array().unwrap().len(), sum.graphs[0].streams.len());
}

#[test]
fn streams_of_the_minidag_pass_are_marked_assigned_by_a_stream_pass() {
    let text = GRAPH.replace(
        r#""options":{"max_task_count":47}"#,
        r#""options":{"auto_multistream_parallel_mode":"LoadBalance:2"}"#,
    );
    let model = Arc::new(json::load_str(&text).unwrap());
    let id = |name: &str| model.find_node(GraphId::ROOT, name).unwrap();
    let mut s = common::session(Arc::clone(&model));
    s.run_all().unwrap();
    let sum = s.summary().unwrap();
    assert!(entry_of(&sum, id("n1")).assigned_by_stream_pass, "{}", sum.to_text());
    assert!(!entry_of(&sum, id("n2")).assigned_by_stream_pass, "labelled nodes stay out of the path cover");
    assert!(!entry_of(&sum, id("ar")).assigned_by_stream_pass, "HCCL stays out of the path cover");
}

#[test]
fn cli_summary_prints_text_json_and_dot() {
    let dir = std::env::temp_dir().join(format!("sa_summary_cli_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("fmt.json");
    std::fs::write(&path, GRAPH).unwrap();
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_stream-alloc"))
            .arg("summary")
            .arg(&path)
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let model = Arc::new(json::load_str(GRAPH).unwrap());
    let mut s = common::session(Arc::clone(&model));
    s.run_all().unwrap();
    let sum = s.summary().unwrap();
    assert_eq!(run(&[]), sum.to_text());
    let j: serde_json::Value = serde_json::from_str(&run(&["--format", "json"])).unwrap();
    assert_eq!(j, sum.to_json(&model));
    assert!(run(&["--format", "dot"]).starts_with("digraph \"fmt\" {"));
    // Four logical streams (n2 alone: its user label keeps it out of the unlabelled AI-core
    // subgraph; the all-reduce; n1 and n3; NetOutput, whose producers sit on three streams)
    // and n1's attached stream; none splits with 20 tasks of room.
    let split = run(&["--option", "max_task_count=47"]);
    assert!(split.contains("stream_num: 5,"), "{split}");
    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_stream-alloc"))
        .args(["summary", "/nonexistent/graph.json"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("/nonexistent/graph.json"));
    std::fs::remove_dir_all(&dir).ok();
}
