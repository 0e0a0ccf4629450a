//! Physical split (ge-compiler.md §8): GE's unit-test examples, task-count rules, continuous
//! labels, attached streams, huge streams, and the default plan's cut choice.

use crate::common;
use stream_alloc::compile::split::TaskLimits;
use stream_alloc::compile::{Allocation, Stage, SyncEnd, SyncPair};
use stream_alloc::graph::{GraphId, Model, NodeId, StreamId, json};
use stream_alloc::memory::AllocationDocument;
use stream_alloc::{ErrorKind, allocate};

/// A node on a pre-assigned stream; `extra` is spliced into the JSON object.
fn node(name: &str, tasks: u32, stream: i64, extra: &str) -> String {
    let sep = if extra.is_empty() { "" } else { "," };
    format!(
        r#"{{"name":"{name}","type":"Conv2D","engine":"AIcoreEngine","tasks":{tasks},"stream":{stream}{sep}{extra}}}"#
    )
}

fn model(options: &str, nodes: &[String], edges: &[(String, String)]) -> Model {
    model_with_events(options, nodes, edges, &[])
}

/// A graph whose `events` are given: event `i` from `events[i].0` to `events[i].1`, what GE's
/// event maps hold when the split starts.
fn model_with_events(options: &str, nodes: &[String], edges: &[(String, String)], events: &[(&str, &str)]) -> Model {
    let edges: Vec<String> = edges.iter().map(|(a, b)| format!(r#"{{"src":"{a}","dst":"{b}"}}"#)).collect();
    let events: Vec<String> =
        events.iter().enumerate().map(|(i, (a, b))| format!(r#"{{"id":{i},"from":"{a}","to":"{b}"}}"#)).collect();
    let text = format!(
        r#"{{"format":"stream-graph","version":1,"name":"g","options":{{{options}}},"nodes":[{}],"edges":[{}],"events":[{}]}}"#,
        nodes.join(","),
        edges.join(","),
        events.join(",")
    );
    json::load_str(&text).unwrap()
}

/// `n` nodes `{prefix}{i}` of `tasks` tasks on `stream`, chained.
fn chain(prefix: &str, n: usize, tasks: u32, stream: i64) -> (Vec<String>, Vec<(String, String)>) {
    let nodes = (0..n).map(|i| node(&format!("{prefix}{i}"), tasks, stream, "")).collect();
    let edges = (1..n).map(|i| (format!("{prefix}{}", i - 1), format!("{prefix}{i}"))).collect();
    (nodes, edges)
}

fn id(m: &Model, name: &str) -> NodeId {
    m.find_node(GraphId::ROOT, name).unwrap_or_else(|| panic!("no node {name}"))
}

/// The graph's streams and events through the pipeline's split ([`common::split_given`]).
fn run(m: &Model) -> Allocation {
    common::split_given(m).unwrap_or_else(|e| panic!("{}: {e}", m.name))
}

fn phys(m: &Model, a: &Allocation, name: &str) -> u32 {
    a.stream()[id(m, name)].unwrap().0
}

/// Tasks per physical stream, summed from the nodes' own `tasks`.
fn per_stream(m: &Model, a: &Allocation) -> Vec<u64> {
    let mut v = vec![0u64; a.physical_count() as usize];
    for n in m.nodes.ids() {
        if let Some(s) = a.stream()[n] {
            v[s.index()] += u64::from(m.nodes[n].tasks);
        }
    }
    v
}

const COMPAT: &str = r#""compat":"ge""#;

#[test]
fn chain_of_three_task_nodes_splits_at_the_333rd_node() {
    for opts in [COMPAT, ""] {
        let (nodes, edges) = chain("a", 400, 3, 0);
        let m = model(opts, &nodes, &edges);
        let a = run(&m);
        assert_eq!(a.physical_count(), 2, "{opts}");
        assert_eq!(phys(&m, &a, "a331"), 0);
        assert_eq!(phys(&m, &a, "a332"), 1);
        assert_eq!(phys(&m, &a, "a399"), 1);
        assert_eq!(a.split_to_logic(), vec![StreamId(0), StreamId(0)]);
        assert_eq!(
            a.syncs(),
            vec![SyncPair {
                id: stream_alloc::graph::EventId(0),
                from: SyncEnd::main(id(&m, "a331")),
                to: SyncEnd::main(id(&m, "a332"))
            }]
        );
        assert_eq!((a.sync_count(), a.split_event_count()), (1, 1));
        let names: Vec<(String, u32, bool)> =
            a.inserted().iter().map(|i| (i.name(&m).into_owned(), i.stream.0, i.before)).collect();
        assert_eq!(names, vec![("g_Send_0".into(), 0, false), ("g_Recv_0".into(), 1, true)]);
        assert!(a.huge_streams().is_empty());
    }
}

#[test]
fn four_hundred_three_five_task_nodes_make_three_streams() {
    let (nodes, edges) = chain("a", 403, 5, 0);
    let m = model(COMPAT, &nodes, &edges);
    let a = run(&m);
    assert_eq!(a.physical_count(), 3);
    let per_node: Vec<usize> =
        (0..3).map(|s| m.nodes.ids().filter(|&n| a.stream()[n] == Some(StreamId(s))).count()).collect();
    // GE's unit test gets 199 + 199 + 5 nodes, but counts neither the wait (2) nor the record
    // (1) it adds at its own cuts: its middle stream holds 2 + 995 + 1 = 998 > 1024 - 27. With
    // them counted the middle piece keeps 198 nodes (2 + 990 + 1 = 993), the last 6 (2 + 30).
    assert_eq!(per_node, vec![199, 198, 6]);
    assert_eq!(a.syncs().len(), 2);
    // The default plan needs no more streams.
    let m = model("", &nodes, &edges);
    assert_eq!(run(&m).physical_count(), 3);
}

#[test]
fn three_plus_one_thousand_ten_tasks_split() {
    for opts in [COMPAT, ""] {
        let m = model(opts, &[node("a", 3, 0, ""), node("b", 1010, 0, "")], &[("a".into(), "b".into())]);
        let a = run(&m);
        assert_eq!((phys(&m, &a, "a"), phys(&m, &a, "b"), a.physical_count()), (0, 1, 2), "{opts}");
    }
    // 3 + 994 fits: 997 + 27 = 1024.
    let m = model(COMPAT, &[node("a", 3, 0, ""), node("b", 994, 0, "")], &[("a".into(), "b".into())]);
    assert_eq!(run(&m).physical_count(), 1);
}

#[test]
fn single_stream_uses_the_huge_stream_and_still_splits_once() {
    let single = r#""enable_single_stream":true"#;
    let nodes = [node("a", 1218, 0, ""), node("b", 8080, 0, "")];
    let edges = [("a".to_string(), "b".to_string())];
    let m = model(single, &nodes, &edges);
    let a = allocate(&m, Stage::All).unwrap();
    assert_eq!(a.physical_count(), 2);
    assert_eq!((phys(&m, &a, "a"), phys(&m, &a, "b")), (0, 1));
    assert_eq!(a.huge_streams(), vec![StreamId(0), StreamId(1)]);
    let j = a.to_json_new_plan(&m);
    assert_eq!(j["streams"]["huge"], serde_json::json!([0, 1]));
    // Below the normal limit: no huge stream.
    let m = model(single, &[node("a", 500, 0, "")], &[]);
    assert!(allocate(&m, Stage::All).unwrap().huge_streams().is_empty());
    // No huge limit from the device: plain normal streams.
    let m = model(&format!("{single},\"max_task_count\":1024"), &nodes, &edges);
    let a = allocate(&m, Stage::All).unwrap();
    assert!(a.huge_streams().is_empty());
    assert_eq!(a.physical_count(), 2);
}

#[test]
fn single_stream_with_two_streams_fails() {
    let m = model(r#""enable_single_stream":true"#, &[node("a", 1, 0, ""), node("b", 1, 1, "")], &[]);
    let e = common::split_given(&m).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Failed);
    assert!(e.message.contains("The number of ts streams is 2, only one is supported"), "{}", e.message);
}

#[test]
fn task_count_attributes_and_recvs() {
    // Limit 127: room 100 per stream.
    let opts = format!("{COMPAT},\"max_task_count\":127");
    let hccl = r#"{"name":"h","type":"HcomAllReduce","engine":"DNN_HCCL","tasks":1,"stream":0,
                   "ge_attrs":{"_hccl_task_num":50}}"#;
    let nodes = [node("x", 1, 0, r#""ge_attrs":{"_node_sqe_num":60}"#), hccl.to_string(), node("y", 0, 0, "")];
    let m = model(&opts, &nodes, &[("x".into(), "h".into()), ("h".into(), "y".into())]);
    let a = run(&m);
    assert_eq!((phys(&m, &a, "x"), phys(&m, &a, "h"), phys(&m, &a, "y")), (0, 1, 1));
    // Without the attributes nothing splits.
    let m = model(&opts, &[node("x", 1, 0, ""), node("h", 1, 0, "")], &[("x".into(), "h".into())]);
    assert_eq!(run(&m).physical_count(), 1);

    // 50 + 50 = 100 fits; one wait before b makes it 101.
    let nodes = [node("a", 50, 0, ""), node("o", 1, 1, ""), node("b", 50, 0, "")];
    let edges = [("a".to_string(), "b".to_string()), ("o".to_string(), "b".to_string())];
    let m = model(&opts, &nodes, &edges);
    assert_eq!(run(&m).physical_count(), 2);
    let m = model_with_events(&opts, &nodes, &edges, &[("o", "b")]);
    let a = run(&m);
    assert_eq!(a.physical_count(), 3);
    assert_eq!(phys(&m, &a, "b"), 2);
    assert_eq!(a.split_to_logic(), vec![StreamId(0), StreamId(1), StreamId(0)]);
    // The split's sync continues the ids.
    assert_eq!(
        a.syncs()[1],
        SyncPair {
            id: stream_alloc::graph::EventId(1),
            from: SyncEnd::main(id(&m, "a")),
            to: SyncEnd::main(id(&m, "b"))
        }
    );
}

#[test]
fn nodes_with_tasks_and_no_stream_move_to_stream_zero() {
    let m = model("", &[node("a", 2, -1, ""), node("c", 0, -1, r#""type":"Const""#)], &[]);
    let a = run(&m);
    assert_eq!(a.stream()[id(&m, "a")], Some(StreamId(0)));
    assert_eq!(a.stream()[id(&m, "c")], None, "no device task: stays -1");
    assert_eq!(a.physical_count(), 1);
}

#[test]
fn no_split_points_at_control_flow_nodes() {
    let opts = format!("{COMPAT},\"max_task_count\":47");
    // Room 20: b (10 + 10 + 10 > 20) would split but may not start a stream; c does.
    let nodes =
        [node("a", 10, 0, ""), node("b", 10, 0, r#""ge_attrs":{"subgraph_first_active":true}"#), node("c", 10, 0, "")];
    let m = model(&opts, &nodes, &[("a".into(), "b".into()), ("b".into(), "c".into())]);
    let a = run(&m);
    assert_eq!((phys(&m, &a, "a"), phys(&m, &a, "b"), phys(&m, &a, "c")), (0, 0, 1));
    let nodes = [node("a", 15, 0, ""), node("l", 10, 0, r#""type":"LabelSet""#), node("c", 1, 0, "")];
    let m = model(&opts, &nodes, &[("a".into(), "l".into()), ("l".into(), "c".into())]);
    let a = run(&m);
    assert_eq!((phys(&m, &a, "l"), phys(&m, &a, "c")), (0, 1));
}

#[test]
fn continuous_label_moves_with_its_first_node() {
    let lab = r#""attrs":{"continuous_stream_label":"L"}"#;
    let nodes = [node("a", 8, 0, ""), node("l1", 5, 0, lab), node("l2", 5, 0, lab), node("z", 1, 0, "")];
    let edges = [("a".into(), "l1".into()), ("l1".into(), "l2".into()), ("l2".into(), "z".into())];
    // Room 15: l2 triggers (18 > 15); the cut moves back to l1.
    let m = model(&format!("{COMPAT},\"max_task_count\":42"), &nodes, &edges);
    let a = run(&m);
    let got: Vec<u32> = ["a", "l1", "l2", "z"].iter().map(|n| phys(&m, &a, n)).collect();
    assert_eq!(got, vec![0, 1, 1, 1]);
    assert_eq!(a.syncs()[0].from, SyncEnd::main(id(&m, "a")));
    assert_eq!(a.syncs()[0].to, SyncEnd::main(id(&m, "l1")));
    // The default plan never cuts inside the run either.
    let m = model("\"max_task_count\":42", &nodes, &edges);
    let a = run(&m);
    assert_eq!(phys(&m, &a, "l1"), phys(&m, &a, "l2"));
    // Without the label GE cuts at l2.
    let plain = [node("a", 8, 0, ""), node("l1", 5, 0, ""), node("l2", 5, 0, ""), node("z", 1, 0, "")];
    let m = model(&format!("{COMPAT},\"max_task_count\":42"), &plain, &edges);
    let a = run(&m);
    assert_eq!((phys(&m, &a, "l1"), phys(&m, &a, "l2")), (0, 1));
}

#[test]
fn attached_streams_split_too() {
    // Main stream 0, attached stream 1; room 20 on each.
    let att = |t: u32| format!(r#""attached_stream_ids":[1],"attached_tasks":[{t}]"#);
    let nodes = [node("a", 1, 0, &att(12)), node("b", 1, 0, &att(12)), node("c", 1, 0, "")];
    let m = model(&format!("{COMPAT},\"max_task_count\":47"), &nodes, &[("a".into(), "b".into())]);
    let a = run(&m);
    assert_eq!((a.logical_count(), a.attached_count(), a.physical_count()), (1, 1, 3));
    assert_eq!(a.attached()[id(&m, "a")], vec![StreamId(1)]);
    assert_eq!(a.attached()[id(&m, "b")], vec![StreamId(2)]);
    assert_eq!(a.split_to_logic(), vec![StreamId(0), StreamId(1), StreamId(1)]);
    let sync = a.syncs()[0];
    assert_eq!(sync.from, SyncEnd { node: id(&m, "a"), attached: Some(StreamId(1)) });
    assert_eq!(sync.to, SyncEnd { node: id(&m, "b"), attached: Some(StreamId(2)) });
    assert_eq!(a.inserted()[stream_alloc::graph::InsertedId(1)].stream, StreamId(2));
    let j = a.to_json_new_plan(&m);
    assert_eq!(j["syncs"][0]["from"], "a@attached");
    // HCCL attached count.
    let h = r#"{"name":"h","type":"HcomAllReduce","engine":"DNN_HCCL","tasks":1,"stream":0,
                "attached_stream_ids":[1],"ge_attrs":{"_hccl_attached_task_num":30}}"#;
    let m = model(&format!("{COMPAT},\"max_task_count\":47"), &[node("a", 1, 0, &att(5)), h.into()], &[]);
    let a = run(&m);
    assert_eq!(a.attached()[id(&m, "h")], vec![StreamId(2)]);
}

#[test]
fn unlimited_depth_does_not_split() {
    let (nodes, edges) = chain("a", 400, 3, 0);
    let m = model(r#""unlimited_depth":true"#, &nodes, &edges);
    let a = run(&m);
    assert_eq!((a.physical_count(), a.syncs().len()), (1, 0));
}

#[test]
fn default_plan_cuts_where_an_existing_sync_orders_the_pieces() {
    // Stream 0: a0..a8 (1 task each), room 6. Stream 1: o. a3 -> o -> a4. Every task counted:
    // a3 3 with its Send, a4 3 with its Recv (wait and reset), 12 in all; a piece also holds
    // the split's record at its end (1) and wait at its head (2). So a0..a3 (5 + 1) fill the
    // first piece, a4 needs one of its own (2 + 3 + 1) and a5..a8 the third (2 + 4).
    let (mut nodes, mut edges) = chain("a", 9, 1, 0);
    nodes.insert(4, node("o", 1, 1, ""));
    edges.push(("a3".into(), "o".into()));
    edges.push(("o".into(), "a4".into()));
    let events = [("a3", "o"), ("o", "a4")];
    let m = model_with_events("\"max_task_count\":33", &nodes, &edges, &events);
    let a = run(&m);
    // The cut before a4 needs no event (a3 -> o -> a4 orders the pieces); the one before a5
    // does.
    assert_eq!((phys(&m, &a, "a3"), phys(&m, &a, "a4"), phys(&m, &a, "a5")), (0, 2, 3));
    assert_eq!((a.split_event_count(), a.sync_count(), a.syncs().len()), (1, 3, 3));
    // GE's loop makes the same cuts and adds an event at each.
    let m = model_with_events(&format!("{COMPAT},\"max_task_count\":33"), &nodes, &edges, &events);
    let a = run(&m);
    assert_eq!((phys(&m, &a, "a3"), phys(&m, &a, "a4"), phys(&m, &a, "a5")), (0, 2, 3));
    assert_eq!((a.split_event_count(), a.sync_count()), (2, 4));
}

/// In notify mode the split's syncs are events (GE: split events are always events) with ids
/// of their own, and allocation JSON lists them in `syncs` like every other pair, numbered
/// after the notifies: a reader orders by `syncs` alone.
#[test]
fn notify_mode_lists_split_events_in_syncs() {
    let (nodes, edges) = chain("a", 20, 1, 0);
    let m = model(r#""event":"notify","max_task_count":37"#, &nodes, &edges);
    let a = run(&m);
    assert_eq!(a.sync_kind(), stream_alloc::graph::SyncKind::Notify);
    // Room 10 and the split's own events counted: the first piece holds 9 nodes and its record
    // (10), the second its wait, 7 nodes and its record (10), the last its wait and 4 nodes.
    // Two split events (ids 0 and 1), none of them a sync.
    assert_eq!((a.sync_count(), a.split_event_count(), a.split_events().len(), a.syncs().len()), (0, 2, 2, 0));
    assert_eq!((a.split_events()[0].id.0, a.split_events()[1].id.0), (0, 1));
    let j = a.to_json_new_plan(&m);
    assert_eq!(j["events"]["split_count"], 2);
    assert_eq!(j["split_events"][0]["to"], "a9");
    assert_eq!(j["split_events"][1]["to"], "a16");
    assert_eq!(per_stream(&m, &a), vec![9, 7, 4]);
    assert_eq!(j["events"]["count"], 2);
    let syncs = j["syncs"].as_array().unwrap();
    assert_eq!(syncs.len(), 2);
    for (k, to) in [(0, "a9"), (1, "a16")] {
        assert_eq!(syncs[k]["id"], k);
        assert_eq!(
            (syncs[k]["to"].as_str(), syncs[k]["kind"].as_str(), syncs[k]["event_id"].as_u64()),
            (Some(to), Some("event"), Some(k as u64))
        );
    }
    assert!(stream_alloc::verify::check(&m, &j).ok());

    // With notifies of its own, the split's events follow them in the document's numbering.
    let (mut nodes, mut edges) = (nodes, edges);
    nodes.push(node("b", 1, 1, ""));
    edges.push(("a19".into(), "b".into()));
    let m = model_with_events(r#""event":"notify","max_task_count":37"#, &nodes, &edges, &[("a19", "b")]);
    let a = run(&m);
    assert_eq!((a.sync_count(), a.split_event_count()), (1, 2));
    let j = a.to_json_new_plan(&m);
    assert!(stream_alloc::verify::check(&m, &j).ok());
    let ids: Vec<(u64, Option<&str>)> =
        j["syncs"].as_array().unwrap().iter().map(|s| (s["id"].as_u64().unwrap(), s["kind"].as_str())).collect();
    assert_eq!(ids[0], (0, None));
    assert!(ids[1..].iter().enumerate().all(|(k, &(id, kind))| id == k as u64 + 1 && kind == Some("event")), "{ids:?}");
    assert_eq!(j["events"]["count"], ids.len());
}

#[test]
fn task_limits_from_options() {
    let m = model("", &[], &[]);
    assert_eq!(
        TaskLimits::from_options(&m.options),
        TaskLimits { normal: 1024, huge: Some(8192), unlimited_depth: false }
    );
    let m = model("\"max_task_count\":2014", &[], &[]);
    assert_eq!(TaskLimits::from_options(&m.options), TaskLimits { normal: 2014, huge: None, unlimited_depth: false });
    let m = model("\"max_huge_task_count\":4000", &[], &[]);
    assert_eq!(
        TaskLimits::from_options(&m.options),
        TaskLimits { normal: 1024, huge: Some(4000), unlimited_depth: false }
    );
}

#[test]
fn negative_task_attribute_is_an_error() {
    let m = model("", &[node("a", 1, 0, r#""ge_attrs":{"_node_sqe_num":-3}"#)], &[]);
    let e = common::split_given(&m).unwrap_err();
    assert!(e.message.contains("\"a\"") && e.message.contains("_node_sqe_num"), "{}", e.message);
}
