//! The graph JSON loader: every validation error names what is at fault.

use crate::common;
use stream_alloc::ErrorKind;
use stream_alloc::graph::{EdgeKind, GraphId, Shape, json};

fn load_err(doc: &str) -> stream_alloc::Error {
    json::load_str(doc).expect_err("the document must be rejected")
}

fn graph(nodes: &str, edges: &str) -> String {
    format!(r#"{{"format":"stream-graph","version":1,"name":"g","nodes":[{nodes}],"edges":[{edges}]}}"#)
}

const A: &str = r#"{"name":"a","type":"Conv2D","engine":"AIcoreEngine"}"#;
const B: &str = r#"{"name":"b","type":"Relu","engine":"AIcoreEngine"}"#;
const C: &str = r#"{"name":"c","type":"Add","engine":"AIcoreEngine"}"#;

#[test]
fn loads_every_field() {
    let doc = r#"{
      "format": "stream-graph", "version": 1, "name": "full", "shape": "static", "source": "hand",
      "nodes": [
        {"name": "x", "type": "Data", "engine": "DNN_VM_GE_LOCAL", "tasks": 0},
        {"name": "if", "type": "If", "engine": "DNN_VM_GE_LOCAL", "subgraphs": ["then"]},
        {"name": "conv", "type": "Conv2D", "engine": "AIcoreEngine", "tasks": 2, "cost_us": 12.5, "cores": 20,
         "stream": 3, "attached_stream_ids": [7], "attached_tasks": [4],
         "attrs": {"stream_label": "s1", "user_stream_label": "u", "parallel_group": "pg", "new_stream_id": 2,
                   "attached_streams": [{"name": "r", "reuse_key": "k", "stream_num": 1, "ge_format": "v1", "required": true,
                                         "force_reuse": true, "depend_value_inputs": [0, 1], "policy": "group", "group": "g0"}],
                   "continuous_stream_label": "c", "event_multiplexing": ["SendTo;peer;3"], "active_label_list": ["l1"],
                   "rts_label_node": true, "dims": 1},
         "ge_attrs": {"_hccl_task_num": 5, "custom": {"any": "thing"}}}
      ],
      "edges": [{"src": "x", "dst": "conv", "src_port": 0, "dst_port": 1}, {"src": "if", "dst": "conv", "kind": "control"}],
      "subgraphs": [{"name": "then", "parent": "if", "shape": "dynamic",
                     "nodes": [{"name": "t", "type": "Relu", "engine": "aicpu_tf_kernel"}], "edges": []}],
      "options": {"max_parallel_num": {"AIcoreEngine": 4}, "event": "notify", "hcom_parallel": true},
      "graph_attrs": {"auto_multistream_parallel_mode": "LoadBalance:4"},
      "engines": {"MyEngine": {"independent": true, "priority": null, "scheduler": "TS_2"}},
      "partition": [{"name": "p0", "engine": "AIcoreEngine", "stream_label": "s1", "nodes": ["conv"]},
                    {"name": "p1", "engine": "DNN_VM_AICPU", "graph": "then", "nodes": ["t"]}]
    }"#;
    let m = json::load_str(doc).unwrap();
    assert_eq!(m.name, "full");
    assert_eq!(m.graphs.len(), 2);
    let then = m.find_graph("then").unwrap();
    assert_eq!(m.graphs[then].shape, Shape::Dynamic);
    let conv = m.find_node(GraphId::ROOT, "conv").unwrap();
    let n = m.node(conv);
    assert_eq!((n.tasks, n.cost_us, n.cores), (2, 12.5, 20));
    assert_eq!(n.stream.unwrap().0, 3);
    assert_eq!(n.attrs.stream_label.as_deref(), Some("s1"));
    assert_eq!(n.attrs.attached_streams[0].depend_value_inputs, vec![0, 1]);
    assert_eq!(n.ge_attrs.int("_hccl_task_num"), Some(5));
    let if_node = m.find_node(GraphId::ROOT, "if").unwrap();
    assert_eq!(m.node(if_node).subgraphs, vec![then]);
    assert_eq!(m.graphs[then].parent, Some(if_node));
    assert_eq!(m.options.max_parallel("AIcoreEngine"), 4);
    assert!(m.options.hcom_parallel);
    assert_eq!(m.edges.iter().filter(|e| e.kind == EdgeKind::Control).count(), 1);
    assert_eq!(m.edges[stream_alloc::graph::EdgeId(0)].dst_port, 1);
    let my = m.engines.lookup("MyEngine").unwrap();
    assert!(m.engines[my].independent && m.engines[my].priority.is_none());
    let t = m.find_node(then, "t").unwrap();
    assert_eq!(m.engine(t).name, "DNN_VM_AICPU");
    assert_eq!(m.partition.as_ref().unwrap().len(), 2);
    assert_eq!(
        m.auto_multistream_mode(&m.options).unwrap(),
        stream_alloc::graph::AutoMultistreamMode::LoadBalance(Some(4))
    );
}

#[test]
fn non_topological_order_is_sorted_stably() {
    let m = json::load_str(&graph(&[C, A, B].join(","), r#"{"src":"a","dst":"b"},{"src":"b","dst":"c"}"#)).unwrap();
    let names: Vec<&str> = m.root().order.iter().map(|&n| m.node(n).name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    assert_eq!(m.topo_index[m.find_node(GraphId::ROOT, "c").unwrap()], 2);
}

#[test]
fn malformed_json_names_position() {
    let e = load_err(r#"{"format": "stream-graph", "version": 1, "name": "#);
    assert_eq!(e.kind, ErrorKind::Json);
    assert!(e.message.contains("line"), "{e}");
}

#[test]
fn wrong_format_or_version() {
    let e = load_err(r#"{"format":"onnx","version":1,"name":"g","nodes":[],"edges":[]}"#);
    assert_eq!(e.kind, ErrorKind::Format);
    assert!(e.message.contains("onnx"));
    let e = load_err(r#"{"format":"stream-graph","version":2,"name":"g","nodes":[],"edges":[]}"#);
    assert_eq!(e.kind, ErrorKind::Format);
    assert!(e.message.contains("version 2"));
    assert_eq!(load_err(r#"{"version":1,"name":"g","nodes":[],"edges":[]}"#).kind, ErrorKind::Format);
}

#[test]
fn duplicate_node_name() {
    let e = load_err(&graph(&[A, A].join(","), ""));
    assert_eq!(e.kind, ErrorKind::DuplicateName);
    assert!(e.message.contains("'a'"), "{e}");
}

#[test]
fn edge_to_missing_node() {
    let e = load_err(&graph(A, r#"{"src":"a","dst":"ghost"}"#));
    assert_eq!(e.kind, ErrorKind::UnknownNode);
    assert!(e.message.contains("'ghost'") && e.message.contains("destination"), "{e}");
}

#[test]
fn cycle_names_its_nodes() {
    let e = load_err(&graph(
        &[A, B, C].join(","),
        r#"{"src":"a","dst":"b"},{"src":"b","dst":"c"},{"src":"c","dst":"b","kind":"control"}"#,
    ));
    assert_eq!(e.kind, ErrorKind::Cycle);
    assert!(e.message.contains("b -> c -> b") || e.message.contains("c -> b -> c"), "{e}");
    assert!(!e.message.contains("a ->"), "{e}");
    let e = load_err(&graph(A, r#"{"src":"a","dst":"a"}"#));
    assert_eq!(e.kind, ErrorKind::Cycle);
    assert!(e.message.contains("self-loop"), "{e}");
}

#[test]
fn unknown_engine() {
    let e = load_err(&graph(r#"{"name":"a","type":"Conv2D","engine":"TPU"}"#, ""));
    assert_eq!(e.kind, ErrorKind::UnknownEngine);
    assert!(e.message.contains("'TPU'") && e.message.contains("node 'a'"), "{e}");
}

#[test]
fn wrong_attribute_types() {
    let cases = [
        (r#"{"name":"a","type":"X","engine":"AIcoreEngine","attrs":{"stream_label":3}}"#, "stream_label"),
        (r#"{"name":"a","type":"X","engine":"AIcoreEngine","attrs":{"rts_label_node":"yes"}}"#, "rts_label_node"),
        (r#"{"name":"a","type":"X","engine":"AIcoreEngine","attrs":{"active_label_list":[1]}}"#, "active_label_list"),
        (r#"{"name":"a","type":"X","engine":"AIcoreEngine","attrs":{"bogus":1}}"#, "bogus"),
        (r#"{"name":"a","type":"X","engine":"AIcoreEngine","ge_attrs":{"_hccl_task_num":"5"}}"#, "_hccl_task_num"),
        (
            r#"{"name":"a","type":"X","engine":"AIcoreEngine","ge_attrs":{"_force_attach_stream":1}}"#,
            "_force_attach_stream",
        ),
        (
            r#"{"name":"a","type":"X","engine":"AIcoreEngine","attrs":{"attached_streams":[{"reuse_key":"k"}]}}"#,
            "has no name",
        ),
        (r#"{"name":"a","type":"X","engine":"AIcoreEngine","attrs":{"event_multiplexing":["SendTo;p"]}}"#, "SendTo;p"),
    ];
    for (node, needle) in cases {
        let e = load_err(&graph(node, ""));
        assert!(matches!(e.kind, ErrorKind::Attribute | ErrorKind::Field), "{needle}: {e}");
        assert!(e.message.contains(needle) && e.message.contains("'a'"), "{needle}: {e}");
    }
}

#[test]
fn wrong_node_field_types_and_ranges() {
    let cases = [
        (r#"{"name":"a","type":"X","engine":"AIcoreEngine","tasks":-1}"#, "tasks"),
        (r#"{"name":"a","type":"X","engine":"AIcoreEngine","tasks":1.5}"#, "tasks"),
        (r#"{"name":"a","type":"X","engine":"AIcoreEngine","tasks":99999999999}"#, "tasks"),
        (r#"{"name":"a","type":"X","engine":"AIcoreEngine","cost_us":-2}"#, "cost_us"),
        (r#"{"name":"a","type":"X","engine":"AIcoreEngine","stream":-5}"#, "stream"),
        (r#"{"name":"a","type":7,"engine":"AIcoreEngine"}"#, "type"),
        (r#"{"name":"a","engine":"AIcoreEngine"}"#, "type"),
        (r#"{"name":"a","type":"X","engine":"AIcoreEngine","color":"red"}"#, "color"),
    ];
    for (node, needle) in cases {
        let e = load_err(&graph(node, ""));
        assert_eq!(e.kind, ErrorKind::Field, "{needle}: {e}");
        assert!(e.message.contains(needle) && e.message.contains("'a'"), "{needle}: {e}");
    }
}

#[test]
fn subgraph_whose_parent_is_missing() {
    let doc = r#"{"format":"stream-graph","version":1,"name":"g","nodes":[],"edges":[],
        "subgraphs":[{"name":"body","parent":"while0","nodes":[],"edges":[]}]}"#;
    let e = load_err(doc);
    assert_eq!(e.kind, ErrorKind::Subgraph);
    assert!(e.message.contains("'body'") && e.message.contains("'while0'"), "{e}");
}

#[test]
fn duplicate_subgraph_names_and_missing_owned_subgraph() {
    let doc = r#"{"format":"stream-graph","version":1,"name":"g",
        "nodes":[{"name":"w","type":"While","engine":"DNN_VM_GE_LOCAL"}],"edges":[],
        "subgraphs":[{"name":"body","parent":"w","nodes":[],"edges":[]},{"name":"body","parent":"w","nodes":[],"edges":[]}]}"#;
    assert_eq!(load_err(doc).kind, ErrorKind::DuplicateName);
    let doc = r#"{"format":"stream-graph","version":1,"name":"g",
        "nodes":[{"name":"w","type":"While","engine":"DNN_VM_GE_LOCAL","subgraphs":["cond"]}],"edges":[]}"#;
    let e = load_err(doc);
    assert_eq!(e.kind, ErrorKind::Subgraph);
    assert!(e.message.contains("'cond'"), "{e}");
}

#[test]
fn partition_errors() {
    let base = |partition: &str| {
        format!(
            r#"{{"format":"stream-graph","version":1,"name":"g","nodes":[{A},{B}],"edges":[],"partition":{partition}}}"#
        )
    };
    let e = load_err(&base(r#"[{"name":"p","engine":"AIcoreEngine","nodes":["a","zz"]}]"#));
    assert_eq!(e.kind, ErrorKind::Partition);
    assert!(e.message.contains("'zz'"), "{e}");
    let e = load_err(&base(
        r#"[{"name":"p","engine":"AIcoreEngine","nodes":["a"]},{"name":"q","engine":"AIcoreEngine","nodes":["a"]}]"#,
    ));
    assert_eq!(e.kind, ErrorKind::Partition);
    assert!(e.message.contains("'a'") && e.message.contains("'q'"), "{e}");
    let e = load_err(&base(r#"[{"name":"p","engine":"Nope","nodes":["a"]}]"#));
    assert_eq!(e.kind, ErrorKind::UnknownEngine);
}

#[test]
fn invalid_option_values_are_e10001() {
    let doc = |opts: &str| {
        format!(r#"{{"format":"stream-graph","version":1,"name":"g","nodes":[{A}],"edges":[],"options":{opts}}}"#)
    };
    for (opts, needle) in [
        (r#"{"ac_parallel_enable":"2"}"#, "ac_parallel_enable"),
        (r#"{"event":"semaphore"}"#, "semaphore"),
        (r#"{"max_parallel_num":{"AIcoreEngine":0}}"#, "AIcoreEngine"),
        (r#"{"auto_multistream_parallel_mode":"LoadBalance:99"}"#, "LoadBalance:99"),
        (r#"{"no_such_option":true}"#, "no_such_option"),
    ] {
        let e = load_err(&doc(opts));
        assert_eq!(e.code(), "E10001", "{opts}: {e}");
        assert!(e.message.contains(needle), "{opts}: {e}");
    }
    assert_eq!(load_err(&doc(r#"{"hcom_parallel":"2"}"#)).code(), "E10006");
    // The policy's name is the policy table's, a layer above the loader: the library rejects an
    // unknown one when the graph is allocated (the command line and the C ABI at loading).
    let m = json::load_str(&doc(r#"{"policy":"fastest"}"#)).unwrap();
    let e = stream_alloc::allocate(&m, stream_alloc::Stage::Logical).unwrap_err();
    assert_eq!(e.code(), "E10001", "{e}");
    assert!(e.message.contains("\"fastest\"") && e.message.contains("option policy"), "{e}");
}

#[test]
fn every_corpus_graph_loads() {
    for path in common::corpus_paths() {
        let m = json::load_file(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(m.nodes.len() > 100, "{}", path.display());
        assert_eq!(m.root().order.len(), m.nodes.len());
    }
}

#[test]
fn memory_fields_load_and_are_checked_against_the_edges() {
    let g = |nodes: &str| {
        format!(
            r#"{{"format":"stream-graph","version":1,"name":"m","nodes":[{nodes}],
            "edges":[{{"src":"a","dst":"v"}},{{"src":"v","dst":"b"}}]}}"#
        )
    };
    let ok = g(r#"{"name":"a","type":"Relu","engine":"AIcoreEngine","out_bytes":[64,0]},
        {"name":"v","type":"Reshape","engine":"AIcoreEngine","tasks":0,"out_bytes":[64],"alias_input":0},
        {"name":"b","type":"Relu","engine":"AIcoreEngine"}"#);
    let m = json::load_str(&ok).unwrap();
    let node = |name: &str| m.nodes.iter().find(|n| n.name == name).unwrap();
    assert_eq!(node("a").out_bytes.as_deref(), Some(&[64u64, 0][..]));
    assert_eq!(node("v").alias_input, Some(0));
    assert_eq!(node("b").out_bytes, None);
    assert_eq!(node("b").alias_input, None);

    for (nodes, needle) in [
        (
            r#"{"name":"a","type":"Relu","engine":"AIcoreEngine"},
            {"name":"v","type":"Reshape","engine":"AIcoreEngine","alias_input":1},
            {"name":"b","type":"Relu","engine":"AIcoreEngine"}"#,
            "node 'v' of root graph 'm': alias_input 1 names an input port that no data edge feeds",
        ),
        (
            r#"{"name":"a","type":"Relu","engine":"AIcoreEngine","out_bytes":[]},
            {"name":"v","type":"Reshape","engine":"AIcoreEngine"},
            {"name":"b","type":"Relu","engine":"AIcoreEngine"}"#,
            "node 'a' of root graph 'm': a data edge to 'v' leaves output port 0 but out_bytes sizes 0 output(s)",
        ),
        (
            r#"{"name":"a","type":"Relu","engine":"AIcoreEngine","out_bytes":[-4]},
            {"name":"v","type":"Reshape","engine":"AIcoreEngine"},
            {"name":"b","type":"Relu","engine":"AIcoreEngine"}"#,
            "node 'a' of root graph 'm': field 'out_bytes' must be an array of integers >= 0, got -4",
        ),
        (
            r#"{"name":"a","type":"Relu","engine":"AIcoreEngine","out_bytes":64},
            {"name":"v","type":"Reshape","engine":"AIcoreEngine"},
            {"name":"b","type":"Relu","engine":"AIcoreEngine"}"#,
            "node 'a' of root graph 'm': field 'out_bytes' must be an array, got 64",
        ),
        (
            r#"{"name":"a","type":"Relu","engine":"AIcoreEngine"},
            {"name":"v","type":"Reshape","engine":"AIcoreEngine","alias_input":"x"},
            {"name":"b","type":"Relu","engine":"AIcoreEngine"}"#,
            "node 'v' of root graph 'm': field 'alias_input' must be an integer in [0, 4294967295], got \"x\"",
        ),
    ] {
        let e = json::load_str(&g(nodes)).unwrap_err();
        assert!(e.message.contains(needle), "{e}");
    }
}
