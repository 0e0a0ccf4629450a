//! `stream-alloc pass` with GE's steps after logical allocation, and `allocate --from`: names,
//! order rules, the `steps` counts, and the round trip through given streams and events on the
//! corpus (the pipeline from a later stage reproduces the whole pipeline's result).

use std::process::Command;

use serde_json::{Value, json};

use crate::common;

fn steps_fixture(name: &str) -> String {
    format!("{}/tests/fixtures/steps/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_stream-alloc")).args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

fn doc(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn step_names_ge_and_module_agree_and_report_counts() {
    let g = steps_fixture("test_optimize_sync_events.json");
    let (rc, ge, _) = run(&["pass", "InsertSyncEvents,OptimizeByRecvEvents,RefreshContinuousEvents", &g]);
    assert_eq!(rc, 0, "{ge}");
    let (rc, ours, _) = run(&["pass", "insert_sync_events,optimize_by_recv,refresh_continuous_events", &g]);
    assert_eq!(rc, 0);
    assert_eq!(ge, ours);
    let d = doc(&ge);
    assert_eq!(d["stage"], "sync");
    let steps: Vec<(&str, u64, u64)> = d["steps"]["after"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["step"].as_str().unwrap(), r["events"].as_u64().unwrap(), r["pairs"].as_u64().unwrap()))
        .collect();
    // Three inserted, the earlier of a1 -> b and a2 -> b dropped (GE's counter stays), renumbered.
    assert_eq!(steps, [("InsertSyncEvents", 3, 3), ("OptimizeByRecvEvents", 3, 2), ("RefreshContinuousEvents", 2, 2)]);
    assert_eq!(d["steps"]["input"], json!({"streams": 2, "events": 0, "notifies": 0, "pairs": 0}));
    assert_eq!(d["events"]["count"], 2);
}

#[test]
fn logical_passes_come_before_steps() {
    let g = steps_fixture("test_optimize_sync_events.json");
    let (rc, out, err) = run(&["pass", "InsertSyncEvents,AssignByDependencyPass", &g]);
    assert_eq!(rc, 1);
    assert!(out.contains("E10001"), "{out}");
    assert!(err.contains("AssignByDependencyPass") && err.contains("InsertSyncEvents"), "{err}");
    // Logical passes then steps: the steps run on what the passes assigned.
    let chain = "AssignByDependencyPass,NodeStreamUpdatePass,RefreshContinuousStreams,InsertSyncEvents";
    let (rc, out, _) = run(&["pass", chain, &g]);
    assert_eq!(rc, 0, "{out}");
    let d = doc(&out);
    assert_eq!(d["streams"]["logical"], 1, "one engine, one stream: nothing to synchronise");
    assert_eq!(d["steps"]["after"][0]["pairs"], 0);
    // A list of logical passes alone writes no `steps`.
    let (rc, out, _) = run(&["pass", "AssignByDependencyPass", &g]);
    assert_eq!(rc, 0);
    assert!(doc(&out).get("steps").is_none());
}

#[test]
fn step_errors_are_documents() {
    let (rc, out, err) = run(&["pass", "UpdateActiveStreams", &steps_fixture("test_split_streams_1013.json")]);
    assert_eq!(rc, 1);
    assert!(out.contains("SA2002") && err.contains("name SplitStreams before it"), "{out} {err}");
    let (rc, out, _) = run(&["pass", "SplitStreams,InsertSyncEvents", &steps_fixture("test_split_streams_1013.json")]);
    assert_eq!(rc, 1);
    assert!(out.contains("runs before SplitStreams"), "{out}");
    let (rc, out, _) = run(&["pass", "SplitStreams,SplitStreams", &steps_fixture("test_split_streams_1013.json")]);
    assert_eq!(rc, 1);
    assert!(out.contains("SplitStreams runs once"), "{out}");
}

/// GE's sync and split stages named step by step give what `allocate --from sync` gives under
/// `compat=ge`: the same syncs, streams, activations and inserted nodes.
#[test]
fn ge_stage_steps_reproduce_the_pipeline_under_compat_ge() {
    let list = [stream_alloc::compile::passes::SYNC_STAGE_STEPS, stream_alloc::compile::passes::SPLIT_STAGE_STEPS]
        .concat()
        .join(",");
    for (fixture, opts) in [
        ("test_set_active_streams_for_loop.json", vec!["--option", "max_task_count=1024"]),
        ("test_update_stream_switch_by_logic_stream.json", vec![]),
        ("test_from_stage.json", vec![]),
        ("test_insert_sync_events.json", vec![]),
        ("test_update_active_streams_for_subgraph.json", vec![]),
    ] {
        let g = steps_fixture(fixture);
        let mut args = vec!["pass", &list, &g, "--option", "compat=ge"];
        args.extend(&opts);
        let (rc, steps, err) = run(&args);
        assert_eq!(rc, 0, "{fixture}: {err}");
        let mut args = vec!["allocate", &g, "--from", "sync", "--format", "json", "-q", "--option", "compat=ge"];
        args.extend(&opts);
        let (rc, whole, err) = run(&args);
        assert_eq!(rc, 0, "{fixture}: {err}");
        let (mut a, mut b) = (doc(&steps), doc(&whole));
        for d in [&mut a, &mut b] {
            let m = d.as_object_mut().unwrap();
            m.remove("steps");
            m.remove("stage");
        }
        let differ: Vec<&String> =
            a.as_object().unwrap().iter().filter(|(k, v)| b[k.as_str()] != **v).map(|(k, _)| k).collect();
        assert!(differ.is_empty() && a == b, "{fixture}: the steps and the pipeline differ in {differ:?}");
    }
}

#[test]
fn from_must_not_end_before_it_starts() {
    let g = steps_fixture("test_from_stage.json");
    let (rc, out, err) = run(&["allocate", &g, "--from", "split", "--stage", "sync", "-o", "/nonexistent/x.json"]);
    assert_eq!(rc, 2, "{err}");
    assert!(out.is_empty() && err.contains("--from split") && err.contains("--stage"), "{err}");
    let (rc, out, _) = run(&["allocate", &g, "--from", "sync", "--stage", "sync", "--format", "json", "-q"]);
    assert_eq!(rc, 0);
    let d = doc(&out);
    assert_eq!(d["stage"], "sync");
    assert_eq!(d["steps"]["after"].as_array().unwrap().len(), 1);
}

/// The graph with the logical streams an allocation gave each node, and, when `syncs` is set,
/// the allocation's syncs as given events.
fn given(graph: &Value, alloc: &Value, syncs: bool) -> Value {
    let mut g = graph.clone();
    let mut stream = std::collections::HashMap::new();
    for n in alloc["nodes"].as_array().unwrap().iter().filter(|n| n.get("inserted").is_none()) {
        stream.insert((n["graph"].as_str().unwrap().to_string(), n["name"].as_str().unwrap().to_string()), n.clone());
    }
    let set = |nodes: &mut Value, graph: &str| {
        for n in nodes.as_array_mut().unwrap() {
            let a = &stream[&(graph.to_string(), n["name"].as_str().unwrap().to_string())];
            n["stream"] = a["logical_stream"].clone();
        }
    };
    set(&mut g["nodes"], "");
    if let Some(subs) = g.get_mut("subgraphs").and_then(Value::as_array_mut) {
        for s in subs {
            let name = s["name"].as_str().unwrap().to_string();
            set(&mut s["nodes"], &name);
        }
    }
    if syncs {
        let events: Vec<Value> = alloc["syncs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| json!({"id": s["id"], "from": s["from"], "to": s["to"]}))
            .collect();
        g["events"] = json!(events);
    }
    g
}

/// On the corpus, in the default mode and under `compat=ge`, with and without a split:
/// `allocate --from sync` on the logical streams `allocate` chose, and `allocate --from split`
/// on those streams and the syncs of `--stage sync`, write what `allocate` writes.
#[test]
fn from_a_later_stage_reproduces_the_whole_pipeline_on_the_corpus() {
    let dir = std::env::temp_dir().join(format!("sa_from_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut checked = 0;
    for file in ["bert_base.json", "resnet50_train.json", "googlenet.json"] {
        let path = common::corpus_graph(file);
        let graph: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let p = path.to_str().unwrap();
        for opts in
            [&[][..], &["--option", "compat=ge"], &["--option", "max_task_count=64"], &["--option", "event=notify"]]
        {
            let alloc = |g: &str, extra: &[&str]| {
                let mut args = vec!["allocate", g, "--format", "json", "-q"];
                args.extend(extra);
                args.extend(opts);
                let (rc, out, err) = run(&args);
                assert_eq!(rc, 0, "{file} {opts:?} {extra:?}: {err}");
                doc(&out)
            };
            let whole = alloc(p, &[]);
            let sync = alloc(p, &["--stage", "sync"]);
            for (from, with_syncs) in [("sync", false), ("split", true)] {
                let g = dir.join(format!("{from}_{file}"));
                std::fs::write(&g, given(&graph, &sync, with_syncs).to_string()).unwrap();
                let mut d = alloc(g.to_str().unwrap(), &["--from", from]);
                let steps = d.as_object_mut().unwrap().remove("steps").expect("a run from a stage reports steps");
                assert!(d == whole, "{file} {opts:?}: --from {from} differs from the whole pipeline");
                let last = steps["after"].as_array().unwrap().last().unwrap().clone();
                assert_eq!(last["streams"], whole["streams"]["physical"], "{file} {opts:?} --from {from}");
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 24);
    std::fs::remove_dir_all(&dir).ok();
}

/// A graph file.
fn graph_model(path: &std::path::Path) -> stream_alloc::Result<stream_alloc::Model> {
    stream_alloc::graph::json::builder_from_slice(&std::fs::read(path).unwrap())?.build()
}

/// The options that choose each sync sequence, by the sequence's name.
fn sequence_options(model: &stream_alloc::Model, name: &str) -> stream_alloc::graph::Options {
    let mut o = model.options.clone();
    match name {
        "ge" => o.compat_ge = true,
        "exact-lifetime" => o.event_reuse_lifetime = true,
        "exact" => {}
        other => panic!("no options choose sync sequence {other}: add them here"),
    }
    o
}

/// The pipeline's sync stage runs the sequence the table gives for its options, step by step
/// and nothing else; `pass --help` lists the same sequences and `pass sync:NAME` runs the same
/// steps.
#[test]
fn sync_sequences_come_from_the_table() {
    use stream_alloc::compile::passes::{SYNC_SEQUENCES, sync_sequence, sync_stage};
    use stream_alloc::compile::sync::SyncConfig;
    let (rc, help, _) = run(&["pass", "--help"]);
    assert_eq!(rc, 0);
    let g = steps_fixture("test_set_active_streams_for_loop.json");
    let model = graph_model(std::path::Path::new(&g)).unwrap();
    for seq in SYNC_SEQUENCES {
        let line = format!("sync:{} ({}): {}", seq.name, seq.summary, seq.steps.join(", "));
        assert!(help.contains(&line), "pass --help misses {line}");
        let options = sequence_options(&model, seq.name);
        let cfg = SyncConfig::new(&model, &options);
        assert_eq!(sync_sequence(&cfg).name, seq.name);
        let mut alloc = stream_alloc::compile::preassigned_logical(&model, &options).unwrap();
        let report = sync_stage(&model, &options, &mut alloc, cfg).unwrap();
        assert_eq!(report.steps, seq.steps, "sync:{}", seq.name);
        let name = format!("sync:{}", seq.name);
        let (rc, out, err) = run(&["pass", &name, &g]);
        assert_eq!(rc, 0, "{name}: {err}");
        let ran: Vec<String> = doc(&out)["steps"]["after"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["step"].as_str().unwrap().into())
            .collect();
        assert_eq!(ran, seq.steps, "{name}");
    }
    let (rc, out, _) = run(&["pass", "sync:nope", &g]);
    assert_eq!(rc, 1);
    assert!(out.contains("unknown sync sequence \\\"sync:nope\\\"") && out.contains("sync:exact"), "{out}");
}

/// GE's counter (`pass`) and the pipeline's table positions number the pairs steps add
/// differently, but every sequence ends with the same allocation under both: on the sync
/// fixtures (given streams, GE's order: attached streams, loops, multi-dims Cases) and on corpus
/// graphs after the logical stage (the pipeline's own order), in event and notify mode.
#[test]
fn both_id_rules_give_the_same_sync_stage() {
    use stream_alloc::compile::passes::{SYNC_SEQUENCES, chain, run_steps};
    use stream_alloc::compile::steps::{IdRule, StepContext};
    use stream_alloc::compile::sync::SyncConfig;
    let root = env!("CARGO_MANIFEST_DIR");
    let mut graphs: Vec<std::path::PathBuf> = std::fs::read_dir(format!("{root}/tests/fixtures/sync"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    graphs.sort();
    graphs.extend(["googlenet", "bert_base"].map(|n| std::path::PathBuf::from(format!("{root}/corpus/{n}.json"))));
    let mut compared = 0;
    for g in &graphs {
        let Ok(model) = graph_model(g) else { continue };
        let from_corpus = g.starts_with(format!("{root}/corpus"));
        for seq in SYNC_SEQUENCES {
            for event in [stream_alloc::graph::SyncKind::Event, stream_alloc::graph::SyncKind::Notify] {
                let mut options = sequence_options(&model, seq.name);
                options.event = event;
                let logical = if from_corpus {
                    let limits = stream_alloc::compile::TaskLimits::from_options(&options);
                    let mut s = stream_alloc::driver::Session::new(&model, options.clone(), limits);
                    s.run_to(stream_alloc::Stage::Logical).unwrap();
                    s.into_result().unwrap().0
                } else {
                    stream_alloc::compile::preassigned_logical(&model, &options).unwrap()
                };
                let cfg = SyncConfig::new(&model, &options);
                let mut out = Vec::new();
                for rule in [IdRule::Counter, IdRule::Position] {
                    let mut alloc = logical.clone();
                    let mut ctx = StepContext::for_stage(&model, &options, cfg, &mut alloc, rule);
                    let ran = run_steps(&mut ctx, &chain(seq.steps)).map(|()| ctx.finish().1);
                    out.push(ran.map(|r| (alloc, r.kept, r.ids)).map_err(|e| e.to_string()));
                }
                let what = format!("{} under sync:{} ({event:?})", g.display(), seq.name);
                assert_eq!(out[0], out[1], "{what}: the id rules disagree");
                compared += usize::from(out[0].as_ref().is_ok_and(|(a, _, _)| !a.syncs().is_empty()));
            }
        }
    }
    assert!(compared >= 60, "only {compared} runs had syncs to compare");
}
