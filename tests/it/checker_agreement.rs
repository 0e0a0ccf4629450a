//! The project's checker and the independent one (`check_alloc.py`, named by `SA_CHECK_ALLOC`;
//! `scripts/test.sh` sets it when the workspace's tool sits beside the clone) agree: every
//! corpus graph under every option set below is accepted by both, with the same sync count and
//! the same edge minimum, and deliberately broken documents (a sync dropped, a task node moved
//! to stream -1, notify mode's split events left out of `syncs`) are rejected by both.
//!
//! Without the tool (neither `SA_CHECK_ALLOC` nor `../shared/tools`) only the project's half
//! runs, and says so. The independent checker runs once per document inside one Python process
//! ([`common::run_python`]), to keep the module's run time to seconds.

use std::path::{Path, PathBuf};
use stream_alloc::memory::AllocationDocument;

use serde_json::{Value, json};

use crate::common;
use stream_alloc::compile::{Stage, TaskLimits};
use stream_alloc::graph::{Model, json as gjson};
use stream_alloc::search;
use stream_alloc::simulate::SimConfig;
use stream_alloc::verify;

/// The option sets of the agreement: the default, two policies, GE's own results, notify mode,
/// two task limits, and notify mode split at a task limit.
const OPTION_SETS: &[&[(&str, &str)]] = &[
    &[],
    &[("policy", "auto")],
    &[("policy", "min-streams")],
    &[("compat", "ge")],
    &[("event", "notify")],
    &[("max_task_count", "64")],
    &[("max_task_count", "128")],
    &[("event", "notify"), ("max_task_count", "64")],
];

fn load(path: &Path, options: &[(&str, &str)]) -> Model {
    let mut b = gjson::builder_from_slice(&std::fs::read(path).unwrap()).unwrap();
    for (k, v) in options {
        b.options.set_str(k, v).unwrap();
    }
    b.build().unwrap()
}

fn allocation(m: &Model) -> Value {
    let limits = TaskLimits::from_options(&m.options);
    let (alloc, _) = search::run(m, m.options.clone(), limits, Stage::All, SimConfig::default())
        .unwrap_or_else(|e| panic!("{}: {e}", m.name));
    alloc.to_json_new_plan(m)
}

/// One document for both checkers, and what both must say.
struct Job {
    what: String,
    graph: PathBuf,
    doc: Value,
    max_tasks: Option<u32>,
    /// For a document both must accept: the project's (sync pairs, edge minimum); `None` for
    /// a broken one both must reject.
    accept: Option<(u64, Option<u64>)>,
}

/// Runs `check_alloc.py --json` on every job ([`common::run_python`]); `None` where the tool is
/// absent. Each result is the script's exit code and its JSON report.
fn independent(jobs: &[Job]) -> Option<Vec<(i64, Value)>> {
    let tool = common::check_alloc_tool("check_alloc.py's half of the agreement")?;
    let files: Vec<common::TempFile> = jobs
        .iter()
        .enumerate()
        .map(|(i, j)| common::TempFile::new(&format!("agreement_{i}"), &j.doc.to_string()))
        .collect();
    let runs: Vec<Vec<String>> = jobs
        .iter()
        .zip(&files)
        .map(|(j, f)| {
            let mut args = vec![j.graph.display().to_string(), f.0.display().to_string()];
            args.extend(["--json", "--arbitration", "ready"].map(String::from));
            if let Some(n) = j.max_tasks {
                args.extend(["--max-tasks".to_string(), n.to_string()]);
            }
            args
        })
        .collect();
    Some(common::run_python(&tool, &runs))
}

/// Ids in `syncs` made continuous again after entries were removed, with `events.count`.
fn renumber(doc: &mut Value) {
    let syncs = doc["syncs"].as_array_mut().unwrap();
    let mut ids: Vec<u64> = syncs.iter().map(|s| s["id"].as_u64().unwrap()).collect();
    ids.sort_unstable();
    ids.dedup();
    for s in syncs.iter_mut() {
        let id = s["id"].as_u64().unwrap();
        s["id"] = json!(ids.binary_search(&id).unwrap());
    }
    doc["events"]["count"] = json!(ids.len());
}

/// The document with its first sync removed; `None` without syncs. The default mode keeps no
/// sync another implies, so the dependency it ordered (rule 1) and the memory it let two
/// tensors share (rule 8) lose their order.
fn drop_a_sync(doc: &Value) -> Option<Value> {
    let mut d = doc.clone();
    let syncs = d["syncs"].as_array_mut()?;
    if syncs.is_empty() {
        return None;
    }
    syncs.remove(0);
    renumber(&mut d);
    Some(d)
}

/// The document with one task node moved to stream -1: the first node with tasks that names no
/// sync and shares its stream with another node (so the stream ids stay continuous).
fn unplace_a_task_node(m: &Model, doc: &Value) -> Value {
    let mut d = doc.clone();
    let named: std::collections::BTreeSet<&str> = doc["syncs"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| [s["from"].as_str().unwrap(), s["to"].as_str().unwrap()])
        .collect();
    let nodes = doc["nodes"].as_array().unwrap();
    let mut on_stream = std::collections::BTreeMap::<i64, usize>::new();
    for n in nodes {
        *on_stream.entry(n["stream"].as_i64().unwrap()).or_default() += 1;
    }
    let tasks = |name: &str| m.nodes.iter().find(|n| n.name == name).map_or(0, |n| n.tasks);
    let i = nodes
        .iter()
        .position(|n| {
            let name = n["name"].as_str().unwrap();
            n["inserted"] != json!(true)
                && tasks(name) > 0
                && !named.contains(name)
                && on_stream[&n["stream"].as_i64().unwrap()] > 1
        })
        .expect("a task node to move");
    d["nodes"][i]["stream"] = json!(-1);
    d["nodes"][i]["logical_stream"] = json!(-1);
    d
}

/// Notify mode's split events left out of `syncs` (the format before they were listed there).
fn without_split_events(doc: &Value) -> Option<Value> {
    let mut d = doc.clone();
    let syncs = d["syncs"].as_array_mut()?;
    let before = syncs.len();
    syncs.retain(|s| s["kind"] != json!("event"));
    if syncs.len() == before {
        return None;
    }
    renumber(&mut d);
    Some(d)
}

#[test]
fn both_checkers_agree_on_the_corpus() {
    let mut jobs = Vec::new();
    for path in common::corpus_paths() {
        for options in OPTION_SETS {
            let m = load(&path, options);
            let doc = allocation(&m);
            let tag: Vec<String> = options.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let what = format!("{} [{}]", m.name, tag.join(" "));
            let ours = verify::check(&m, &doc);
            assert!(ours.ok(), "{what}: {:?}", ours.violations.first());
            let max_tasks = m.options.max_task_count;
            // A broken document the independent checker must reject too.
            let rejected = |how: &str, doc| Job {
                what: format!("{what}, {how}"),
                graph: path.clone(),
                doc,
                max_tasks,
                accept: None,
            };
            if matches!(options, [] | [("policy", "auto")]) {
                let broken = unplace_a_task_node(&m, &doc);
                let r = verify::check(&m, &broken);
                assert!(
                    r.violations.iter().any(|v| v.rule == 1 && v.message.contains("runs on no stream")),
                    "{what}, a task node on stream -1: {:?}",
                    r.violations.first()
                );
                jobs.push(rejected("a task node on stream -1", broken));
                if let Some(broken) = drop_a_sync(&doc) {
                    let r = verify::check(&m, &broken);
                    assert!(
                        r.violations.iter().any(|v| v.rule == 1)
                            && r.violations.iter().all(|v| matches!(v.rule, 1 | 8)),
                        "{what}, a sync dropped: {:?}",
                        r.violations
                    );
                    jobs.push(rejected("a sync dropped", broken));
                }
            }
            if let Some(broken) = without_split_events(&doc) {
                let r = verify::check(&m, &broken);
                assert!(r.violations.iter().any(|v| v.rule == 1), "{what}, split events left out: {:?}", r.violations);
                jobs.push(rejected("split events left out", broken));
            }
            let mine = (ours.sync_pairs as u64, ours.edge_sync_minimum.map(|x| x as u64));
            jobs.push(Job { what, graph: path.clone(), doc, max_tasks, accept: Some(mine) });
        }
    }
    let broken = jobs.iter().filter(|j| j.accept.is_none()).count();
    assert!(broken >= 30, "only {broken} broken documents: the corpus lost its syncs or splits");
    let Some(results) = independent(&jobs) else { return };
    let mut disagree = Vec::new();
    for (j, (code, report)) in jobs.iter().zip(&results) {
        if (*code == 0) != j.accept.is_some() {
            disagree.push(format!("{}: check_alloc.py exits {code}: {}", j.what, report["errors"]));
            continue;
        }
        if let Some((pairs, minimum)) = j.accept {
            let theirs = (report["syncs"].as_u64(), report["min_syncs"].as_u64());
            let mine = (Some(pairs), minimum);
            if theirs != mine {
                disagree.push(format!("{}: (syncs, edge minimum) ours {mine:?}, check_alloc.py {theirs:?}", j.what));
            }
        }
    }
    assert!(disagree.is_empty(), "{} of {} documents:\n{}", disagree.len(), jobs.len(), disagree.join("\n"));
}
