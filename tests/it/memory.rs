//! Memory plans across streams (allocation-json.md rule 8): lifetimes under stream order and
//! syncs, views that keep their base alive, the checker's verdicts, corpus plans against the
//! simulated lower bound, and random graphs under every policy.

use crate::common::policy;
use proptest::prelude::*;
use serde_json::{Value, json};
use stream_alloc::compile::allocation::{SyncEnd, SyncPair};
use stream_alloc::compile::policy::PolicyReport;
use stream_alloc::compile::{Allocation, Stage, TaskLimits};
use stream_alloc::memory::AllocationDocument;
use stream_alloc::search::report::{AutoReport, MemoryFit};
use stream_alloc::{allocate, allocate_from_preassigned};

/// The pipeline under the model's own options, with the policy's report.
fn run_policy(m: &Model, stage: Stage) -> stream_alloc::Result<(Allocation, PolicyReport)> {
    let limits = TaskLimits::from_options(&m.options);
    stream_alloc::search::run(m, m.options.clone(), limits, stage, Default::default())
        .map(|(a, r)| (a, r.unwrap_or_default()))
}
use stream_alloc::graph::builder::{EdgeSpec, NodeSpec};
use stream_alloc::graph::synth::{Rng, dag_edges};
use stream_alloc::graph::{EventId, IdVec, MemoryLimit, Model, ModelBuilder, NodeId, StreamId, json as graph_json};
use stream_alloc::memory::{self, plan_allocation};
use stream_alloc::simulate::{SimConfig, simulate};
use stream_alloc::verify;

use crate::common;

fn node(name: &str, op: &str, tasks: u32, out: Option<Vec<u64>>) -> NodeSpec {
    let mut n = NodeSpec::new(name, op, if tasks == 0 { "DNN_VM_GE_LOCAL" } else { "AIcoreEngine" });
    n.tasks = tasks;
    n.cost_us = if tasks == 0 { 0.0 } else { 1.0 };
    n.out_bytes = out;
    n
}

/// Rule-8 violations of a document.
fn rule8(model: &Model, doc: &Value) -> Vec<String> {
    verify::check(model, doc).violations.into_iter().filter(|v| v.rule == 8).map(|v| v.message).collect()
}

fn tensor<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["memory"]["tensors"].as_array().unwrap().iter().find(|t| t["node"] == name).unwrap()
}

/// `a` (stream 0) makes 4096 bytes that `b` reads on stream 1; `c` (stream 0, after `a`) makes
/// 4096 more. With `sync_back`, `b` signals `c`'s stream before `c`.
fn two_streams(sync_back: bool) -> (Model, Allocation) {
    let mut b = ModelBuilder::new("cross");
    b.add_node(node("x", "Data", 0, None));
    b.add_node(node("a", "Relu", 1, Some(vec![4096])));
    b.add_node(node("b", "Relu", 1, Some(vec![512])));
    b.add_node(node("c", "Relu", 1, Some(vec![4096])));
    b.add_node(node("out", "NetOutput", 0, None));
    for (s, d) in [("x", "a"), ("a", "b"), ("x", "c"), ("b", "out"), ("c", "out")] {
        b.add_edge(EdgeSpec::data(s, d));
    }
    let model = b.build().unwrap();
    let id = |n: &str| model.find_node(stream_alloc::graph::GraphId::ROOT, n).unwrap();
    let mut streams: IdVec<NodeId, Option<StreamId>> = IdVec::filled(model.nodes.len(), None);
    streams[id("a")] = Some(StreamId(0));
    streams[id("b")] = Some(StreamId(1));
    streams[id("c")] = Some(StreamId(0));
    let attached = IdVec::filled(model.nodes.len(), Vec::new());
    let mut syncs = vec![SyncPair { id: EventId(0), from: SyncEnd::main(id("a")), to: SyncEnd::main(id("b")) }];
    if sync_back {
        syncs.push(SyncPair { id: EventId(1), from: SyncEnd::main(id("b")), to: SyncEnd::main(id("c")) });
    }
    let alloc = Allocation::from_logical("test", model.options.event, streams, 2, attached, 0).with_given_syncs(syncs);
    assert_eq!(alloc.stage(), Stage::Sync);
    (model, alloc)
}

#[test]
fn a_tensor_read_on_another_stream_is_reused_only_after_a_sync_orders_the_read() {
    let (model, alloc) = two_streams(false);
    let doc = alloc.to_json_new_plan(&model);
    assert!(verify::check(&model, &doc).ok(), "{:?}", verify::check(&model, &doc).violations);
    let (a, c) = (tensor(&doc, "a"), tensor(&doc, "c"));
    let (ao, co) = (a["offset"].as_u64().unwrap(), c["offset"].as_u64().unwrap());
    assert!(ao + 4096 <= co || co + 4096 <= ao, "no sync orders b before c: a and c must not share bytes");
    assert_eq!(a["last_users"], json!(["b"]));

    // c on a's bytes: the checker names the pair.
    let mut bad = doc.clone();
    for t in bad["memory"]["tensors"].as_array_mut().unwrap() {
        if t["node"] == "c" {
            t["offset"] = json!(ao);
        }
    }
    let v = rule8(&model, &bad);
    assert!(v.iter().any(|m| m.contains("'a'") && m.contains("'c'") && m.contains("not ordered")), "{v:?}");

    // With the sync back, c takes a's bytes and the arena shrinks.
    let (model2, alloc2) = two_streams(true);
    let doc2 = alloc2.to_json_new_plan(&model2);
    assert!(verify::check(&model2, &doc2).ok(), "{:?}", verify::check(&model2, &doc2).violations);
    assert_eq!(tensor(&doc2, "a")["offset"], tensor(&doc2, "c")["offset"]);
    assert!(doc2["memory"]["peak_bytes"].as_u64() < doc["memory"]["peak_bytes"].as_u64());
    // The same placement without the sync is what the checker refuses above.
    assert!(
        rule8(&model, &{
            let mut d = doc.clone();
            d["memory"] = doc2["memory"].clone();
            d
        })
        .iter()
        .any(|m| m.contains("not ordered"))
    );
}

fn chain() -> Model {
    let mut b = ModelBuilder::new("chain");
    b.add_node(node("x", "Data", 0, Some(vec![1000])));
    b.add_node(node("a", "Relu", 1, Some(vec![4096])));
    let mut v = node("v", "Reshape", 0, Some(vec![4096]));
    v.alias_input = Some(0);
    b.add_node(v);
    b.add_node(node("c", "Relu", 1, Some(vec![4096])));
    b.add_node(node("d", "Relu", 1, Some(vec![4096])));
    b.add_node(node("out", "NetOutput", 0, None));
    for (s, d) in [("x", "a"), ("a", "v"), ("v", "c"), ("c", "d"), ("d", "out")] {
        b.add_edge(EdgeSpec::data(s, d));
    }
    b.build().unwrap()
}

#[test]
fn a_view_keeps_its_base_alive() {
    let model = chain();
    let alloc = allocate(&model, Stage::All).unwrap();
    let doc = alloc.to_json_new_plan(&model);
    assert!(verify::check(&model, &doc).ok());
    let mem = &doc["memory"];
    // The view owns nothing; its reader c is a's last user, so c can not take a's bytes but d can.
    let names: Vec<&str> = mem["tensors"].as_array().unwrap().iter().map(|t| t["node"].as_str().unwrap()).collect();
    assert_eq!(names, ["x", "a", "c", "d"]);
    assert_eq!(tensor(&doc, "a")["last_users"], json!(["c"]));
    assert_ne!(tensor(&doc, "a")["offset"], tensor(&doc, "c")["offset"]);
    assert_eq!(tensor(&doc, "a")["offset"], tensor(&doc, "d")["offset"]);
    assert_eq!(tensor(&doc, "d")["until_end"], json!(true));
    assert_eq!(mem["peak_bytes"], json!(8192));

    // A plan that ends a's life at the view is caught: the view's reader outlives it.
    let mut short = doc.clone();
    for t in short["memory"]["tensors"].as_array_mut().unwrap() {
        if t["node"] == "a" {
            t["last_users"] = json!([]);
        }
    }
    let v = rule8(&model, &short);
    assert!(v.iter().any(|m| m.contains("read by 'c'") && m.contains("outlives")), "{v:?}");
    // c on a's bytes: a is still live through the view.
    let mut overlap = doc.clone();
    let a_off = tensor(&doc, "a")["offset"].clone();
    for t in overlap["memory"]["tensors"].as_array_mut().unwrap() {
        if t["node"] == "c" {
            t["offset"] = a_off.clone();
        }
    }
    assert!(rule8(&model, &overlap).iter().any(|m| m.contains("not ordered")));
    // The view listed as owning memory, a tensor missing, a wrong size, outside the arena.
    let mut view = doc.clone();
    view["memory"]["tensors"]
        .as_array_mut()
        .unwrap()
        .push(json!({"node": "v", "graph": "", "port": 0, "offset": 0, "bytes": 4096}));
    assert!(rule8(&model, &view).iter().any(|m| m.contains("is a view")));
    let mut missing = doc.clone();
    missing["memory"]["tensors"].as_array_mut().unwrap().retain(|t| t["node"] != "d");
    assert!(rule8(&model, &missing).iter().any(|m| m.contains("'d':0") && m.contains("missing")));
    let mut size = doc.clone();
    size["memory"]["tensors"][1]["bytes"] = json!(4095);
    assert!(rule8(&model, &size).iter().any(|m| m.contains("out_bytes says 4096")));
    let mut small = doc.clone();
    small["memory"]["peak_bytes"] = json!(4096);
    assert!(rule8(&model, &small).iter().any(|m| m.contains("outside the arena")));
}

#[test]
fn graphs_without_sizes_have_no_memory_section() {
    let mut b = ModelBuilder::new("plain");
    b.add_node(node("a", "Relu", 1, None));
    b.add_node(node("b", "Relu", 1, None));
    b.add_edge(EdgeSpec::data("a", "b"));
    let model = b.build().unwrap();
    let alloc = allocate(&model, Stage::All).unwrap();
    assert!(alloc.to_json_new_plan(&model).get("memory").is_none());
    assert!(plan_allocation(&model, &alloc).is_none());
    let mut m = model.clone();
    m.options.set_str("memory_limit", "1M").unwrap();
    for p in ["auto", "single", "per-operator"] {
        m.options.policy = p.into();
        let e = run_policy(&m, Stage::All).unwrap_err();
        assert!(e.message.contains("memory_limit") && e.message.contains("out_bytes"), "{p}: {e}");
    }
}

#[test]
fn memory_limit_rejects_auto_candidates_over_it() {
    let path = common::corpus_graph("resnet50.json");
    let mut model = graph_json::load_file(&path).unwrap();
    model.options.policy = "auto".into();
    let (_, free) = run_policy(&model, Stage::All).unwrap();
    let rows = free.section::<AutoReport>().unwrap().candidates.clone();
    let peaks: Vec<u64> = rows.iter().map(|r| r.peak_bytes.unwrap()).collect();
    let min = *peaks.iter().min().unwrap();
    let max = *peaks.iter().max().unwrap();
    assert!(min < max, "parallel candidates need more memory on resnet50: {peaks:?}");
    // Bounded at the smallest peak: only candidates that fit remain, and the choice is one of them.
    model.options.memory_limit = Some(MemoryLimit::Bytes(min));
    let (alloc, report) = run_policy(&model, Stage::All).unwrap();
    assert!(plan_allocation(&model, &alloc).unwrap().peak_bytes <= min);
    let auto = report.section::<AutoReport>().unwrap();
    let chosen = auto.chosen.as_str();
    for r in &auto.candidates {
        let over = r.peak_bytes.unwrap() > min;
        assert_eq!(r.rejected.is_some(), over, "{r:?}");
        if over {
            assert_ne!(r.policy, chosen);
        }
    }
    model.options.memory_limit = Some(MemoryLimit::Bytes(min - 1));
    let e = run_policy(&model, Stage::All).unwrap_err();
    assert!(e.message.contains("every candidate") && e.message.contains(&min.to_string()), "{e}");
}

/// Every policy honours `memory_limit`: within it the plan's checked peak is at most the limit
/// and the report says which order fit; over it the error is SA2003 naming the limit and the
/// smallest peak reached. `1x` always fits `single`, whose plan it is measured on.
#[test]
fn memory_limit_binds_every_policy() {
    let mut model = graph_json::load_file(common::corpus_graph("resnet50.json")).unwrap();
    model.options.policy = "single".into();
    let (alloc, _) = run_policy(&model, Stage::All).unwrap();
    let single = plan_allocation(&model, &alloc).unwrap().peak_bytes;
    for p in ["ge", "single", "per-operator", "min-streams", "list", "budget:2", "auto"] {
        model.options.policy = p.into();
        model.options.memory_limit = Some(MemoryLimit::Times(1000));
        match run_policy(&model, Stage::All) {
            Ok((alloc, report)) => {
                let (peak, _) = check_plan(&model, &alloc);
                assert!(peak <= single, "{p}: {peak} > {single}");
                if p != "auto" {
                    let fit = report.section::<MemoryFit>().expect("the report says how the plan fit");
                    assert_eq!((fit.limit_bytes, fit.peak_bytes), (single, peak), "{p}");
                    assert_eq!(fit.single_stream_peak_bytes, Some(single));
                }
            }
            Err(e) => {
                assert_eq!(e.code(), "SA2003", "{p}: {e}");
                assert!(e.message.contains("memory_limit=1x") && e.message.contains(&single.to_string()), "{p}: {e}");
                assert!(e.message.contains("needs at least"), "{p}: {e}");
            }
        }
        // A limit under the single-stream peak that no order reaches fails every policy.
        model.options.memory_limit = Some(MemoryLimit::Bytes(single / 2));
        let e = run_policy(&model, Stage::All).unwrap_err();
        assert_eq!(e.code(), "SA2003", "{p}: {e}");
        assert!(e.message.contains(&format!("{} bytes", single / 2)), "{p}: {e}");
    }
}

/// Syncs added for memory: resnet50's per-operator plan runs on two streams and, in either
/// order, needs more than the single-stream peak, since a tensor read on the side stream stays
/// reserved until a sync proves the read done. Under `memory_limit=1x` the fit adds such syncs
/// and the two-stream plan fits; both checkers accept its memory plan, and without the added
/// pairs the project's checker refuses the same placement (rule 8).
#[test]
fn memory_syncs_fit_a_two_stream_plan_in_the_single_stream_peak() {
    let mut model = graph_json::load_file(common::corpus_graph("resnet50.json")).unwrap();
    model.options.policy = "single".into();
    let single = plan_allocation(&model, &run_policy(&model, Stage::All).unwrap().0).unwrap().peak_bytes;
    model.options.policy = "per-operator".into();
    let (free, _) = run_policy(&model, Stage::All).unwrap();
    assert!(plan_allocation(&model, &free).unwrap().peak_bytes > single, "per-operator needs more without a limit");
    model.options.memory_limit = Some(MemoryLimit::Times(1000));
    let (alloc, report) = run_policy(&model, Stage::All).unwrap();
    let fit = report.section::<MemoryFit>().expect("the report says how the plan fit");
    let added = fit.memory_syncs.expect("the plan fits with syncs added for memory");
    assert!(added > 0);
    assert_eq!(alloc.logical_count(), free.logical_count(), "the same streams");
    let (peak, _) = check_plan(&model, &alloc);
    assert!(peak <= single && fit.peak_bytes == peak, "{peak} > {single}");
    let doc = alloc.to_json_new_plan(&model);
    assert!(verify::check(&model, &doc).ok(), "{:?}", verify::check(&model, &doc).violations);
    // The same placement under the unlimited plan's syncs only: reuse across streams unproved.
    let ends = |d: &Value| -> Vec<(Value, Value)> {
        d["syncs"].as_array().unwrap().iter().map(|s| (s["from"].clone(), s["to"].clone())).collect()
    };
    let kept = ends(&free.to_json_new_plan(&model));
    let mut bare = doc.clone();
    bare["syncs"].as_array_mut().unwrap().retain(|s| kept.contains(&(s["from"].clone(), s["to"].clone())));
    assert!(ends(&bare).len() < ends(&doc).len(), "some syncs are new (others they imply may be gone)");
    assert!(rule8(&model, &bare).iter().any(|m| m.contains("not ordered")), "the added syncs carry the reuse");
    if let Some(tool) = common::check_alloc_tool("check_alloc.py on syncs added for memory") {
        let file = common::TempFile::new("memory_syncs", &doc.to_string());
        let args = [common::corpus_graph("resnet50.json"), file.0.clone()].map(|p| p.display().to_string());
        let args = [&args[..], &["--json".into(), "--arbitration".into(), "ready".into()]].concat();
        let (code, report) = common::run_python(&tool, &[args]).remove(0);
        assert_eq!(code, 0, "check_alloc.py rejects the plan: {}", report["errors"]);
        assert_eq!(report["memory_peak_bytes"].as_u64(), Some(peak));
    }
}

/// Given streams (`allocate --from sync`, `allocate_from_preassigned`) honour `memory_limit`
/// too: within it the plan is the one without the limit; under every order's peak it is SA2003
/// naming the given streams, the limit and the smallest peak reached.
#[test]
fn memory_limit_binds_given_streams() {
    let mut model = graph_json::load_file(common::corpus_graph("resnet50.json")).unwrap();
    model.options.policy = "per-operator".into();
    let (logical, _) = run_policy(&model, Stage::Logical).unwrap();
    for (n, node) in model.nodes.iter_mut().enumerate() {
        node.stream = logical.logical_stream()[NodeId::new(n)];
    }
    model.options.policy = "ge".into();
    let free = allocate_from_preassigned(&model, Stage::All).unwrap();
    let peak = plan_allocation(&model, &free).unwrap().peak_bytes;
    model.options.memory_limit = Some(MemoryLimit::Bytes(peak));
    let within = allocate_from_preassigned(&model, Stage::All).unwrap();
    assert_eq!(within.to_json_string_new_plan(&model), free.to_json_string_new_plan(&model));
    model.options.memory_limit = Some(MemoryLimit::Bytes(peak / 4));
    let e = allocate_from_preassigned(&model, Stage::All).unwrap_err();
    assert_eq!(e.code(), "SA2003", "{e}");
    for part in
        ["the given streams (from stage sync)", &format!("memory_limit={} bytes", peak / 4), "execution_order=memory"]
    {
        assert!(e.message.contains(part), "{part}: {e}");
    }
}

/// The memory-aware order on one stream (the Serenity baseline) never needs more than today's
/// order, the checker accepts its plan, and on resnet50_train (whose training graph keeps
/// activations for the backward pass) it needs less.
#[test]
fn the_memory_aware_order_lowers_the_single_stream_peak() {
    for path in common::corpus_paths() {
        let mut model = graph_json::load_file(&path).unwrap();
        model.options.policy = "single".into();
        let (today, _) = run_policy(&model, Stage::All).unwrap();
        model.options.set_str("execution_order", "memory").unwrap();
        let (lean, _) = run_policy(&model, Stage::All).unwrap();
        let (a, b) = (check_plan(&model, &today).0, check_plan(&model, &lean).0);
        assert!(b <= a, "{}: {b} > {a}", model.name);
        if model.name == "resnet50_train" {
            assert!(b < a, "{}: {b} = {a}", model.name);
        }
    }
}

/// The checker accepts the plan and the arena holds what the simulated schedule keeps live.
fn check_plan(model: &Model, alloc: &Allocation) -> (u64, u64) {
    let doc = alloc.to_json_new_plan(model);
    let v = rule8(model, &doc);
    assert!(v.is_empty(), "{}: {v:?}", model.name);
    let peak = doc["memory"]["peak_bytes"].as_u64().unwrap();
    let sim = simulate(model, alloc, &SimConfig::default()).unwrap();
    let live = memory::max_live_bytes(model, &sim);
    assert!(peak >= live, "{}: peak {peak} < {live} bytes live at once", model.name);
    (peak, live)
}

#[test]
fn corpus_plans_pass_the_checker_and_cover_the_simulated_live_bytes() {
    for path in common::corpus_paths() {
        let model = graph_json::load_file(&path).unwrap();
        let single = {
            let mut m = model.clone();
            m.options.policy = "single".into();
            check_plan(&m, &run_policy(&m, Stage::All).unwrap().0).0
        };
        let ge = check_plan(&model, &allocate(&model, Stage::All).unwrap()).0;
        let mut m = model.clone();
        m.options.policy = "per-operator".into();
        let per_op = check_plan(&m, &run_policy(&m, Stage::All).unwrap().0).0;
        // The logical stage alone has no syncs: plans still pass, with less reuse across streams.
        let logical = allocate(&model, Stage::Logical).unwrap();
        assert!(rule8(&model, &logical.to_json_new_plan(&model)).is_empty());
        assert!(single > 0 && ge > 0 && per_op > 0);
    }
}

#[test]
fn trace_has_a_memory_counter_only_with_sizes() {
    let model = chain();
    let alloc = allocate(&model, Stage::All).unwrap();
    let sim = simulate(&model, &alloc, &SimConfig::default()).unwrap();
    let t = memory::trace_json(&model, &sim);
    let counters: Vec<&Value> = t["traceEvents"].as_array().unwrap().iter().filter(|e| e["ph"] == "C").collect();
    assert!(!counters.is_empty());
    let top = counters.iter().map(|e| e["args"]["live_bytes"].as_u64().unwrap()).max().unwrap();
    assert_eq!(top, memory::max_live_bytes(&model, &sim));
    let (plain, palloc) = two_streams(false);
    let mut plain = plain;
    for n in plain.nodes.iter_mut() {
        n.out_bytes = None;
    }
    let sim = simulate(&plain, &palloc, &SimConfig::default()).unwrap();
    let t = memory::trace_json(&plain, &sim);
    assert!(!t["traceEvents"].as_array().unwrap().iter().any(|e| e["ph"] == "C"));
}

/// A random DAG with sizes: data sources, compute nodes with one to three outputs, views of
/// their first input, a NetOutput; every node on a random stream.
fn random_model(n: usize, edges: &[(usize, usize, u8)], kinds: &[u8], sizes: &[u64], streams: &[u32]) -> Model {
    let mut b = ModelBuilder::new("prop");
    let ports = |i: usize| if kinds[i] % 4 == 1 { 1 + (sizes[i] % 3) as usize } else { 1 };
    let mut ins = vec![0u32; n + 1];
    let mut specs = Vec::new();
    let mut first_in = vec![false; n];
    let mut es = Vec::new();
    for &(s, d, p) in edges {
        let mut e = EdgeSpec::data(format!("n{s}"), format!("n{d}"));
        e.src_port = u32::from(p) % ports(s) as u32;
        e.dst_port = ins[d];
        ins[d] += 1;
        first_in[d] |= e.dst_port == 0;
        es.push(e);
    }
    for i in 0..n {
        let kind = kinds[i] % 4;
        let (op, tasks) = match kind {
            0 if ins[i] == 0 => ("Data", 0),
            3 if first_in[i] => ("Reshape", 0),
            _ => ("Relu", 1),
        };
        let bytes: Vec<u64> = (0..ports(i) as u64).map(|p| (sizes[i] >> (8 * p)) % 5000).collect();
        let mut spec = node(&format!("n{i}"), op, tasks, Some(bytes));
        if op == "Reshape" {
            spec.alias_input = Some(0);
        }
        spec.stream = if tasks == 0 && op == "Data" { None } else { Some(i64::from(streams[i])) };
        specs.push(spec);
    }
    for s in specs {
        b.add_node(s);
    }
    let mut out = node("out", "NetOutput", 0, None);
    out.stream = Some(0);
    b.add_node(out);
    for e in es {
        b.add_edge(e);
    }
    for i in (0..n).filter(|i| sizes[*i] % 7 == 0) {
        let mut e = EdgeSpec::data(format!("n{i}"), "out");
        e.dst_port = ins[n];
        ins[n] += 1;
        b.add_edge(e);
    }
    b.build().unwrap()
}

fn random_graph() -> impl Strategy<Value = Model> {
    (2usize..30, 1u32..5).prop_flat_map(|(n, k)| {
        (
            Just(n),
            0..n * 2,
            any::<u64>(),
            proptest::collection::vec(0u8..8, n),
            proptest::collection::vec(1u64..u64::MAX, n),
            proptest::collection::vec(0..k, n),
        )
            .prop_map(|(n, draws, seed, kinds, sizes, streams)| {
                let mut rng = Rng::new(seed);
                let edges: Vec<(usize, usize, u8)> = dag_edges(&mut rng, n, draws, usize::MAX, true)
                    .into_iter()
                    .map(|(s, d)| (s, d, rng.below(3) as u8))
                    .collect();
                random_model(n, &edges, &kinds, &sizes, &streams)
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 120, ..ProptestConfig::default() })]

    /// Every plan of every policy and stage passes the checker, and no instant of the simulated
    /// schedule has more bytes live than the arena.
    #[test]
    fn every_plan_is_safe_and_covers_the_live_bytes(model in random_graph()) {
        let mut allocs = Vec::new();
        for stage in [Stage::Logical, Stage::Sync, Stage::All] {
            allocs.push(allocate_from_preassigned(&model, stage).unwrap());
        }
        for p in [policy("ge"), policy("single"), policy("per-operator"), policy("min-streams"), policy("budget:2")] {
            let mut m = model.clone();
            for n in m.nodes.iter_mut() {
                n.stream = None;
            }
            m.options.policy = p.policy();
            let a = if p == policy("ge") { allocate(&m, Stage::All).unwrap() } else { run_policy(&m, Stage::All).unwrap().0 };
            check_plan(&m, &a);
        }
        for a in &allocs {
            check_plan(&model, a);
        }
    }
}
