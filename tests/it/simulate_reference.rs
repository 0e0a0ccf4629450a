//! The simulator and the ideal schedule against small reference implementations of the same
//! device model written here from docs/simulate.md (they read allocation JSON and graph JSON,
//! not the project's structures), on every corpus graph under several policies and on
//! synthetic graphs whose integer costs make ties common; and against the workspace's
//! independent checker's simulated makespan and `ideal_schedule.py` (`SA_CHECK_ALLOC`, or
//! `../shared/tools` beside the clone). Where those tools are present they must run on every
//! document; only a clone with nothing beside it skips them, saying so. Agreement is required
//! within 0.1 %.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use stream_alloc::memory::AllocationDocument;

use serde_json::Value;

use crate::common;
use stream_alloc::compile::Stage;
use stream_alloc::graph::synth::{Family, generate};
use stream_alloc::graph::{GraphId, Model, NodeId, json};
use stream_alloc::simulate::{Arbitration, Ideal, SimConfig, ideal, simulate};
use stream_alloc::{Allocation, allocate, allocate_from_preassigned};

/// The option sets every corpus graph runs under ("" is the graph's own options).
const POLICIES: &[&str] =
    &["", "policy=per-operator", "policy=min-streams", "compat=ge", "event=notify", "max_task_count=64"];

const UNITS: u32 = 24;
const LATENCY: f64 = 1.0;

/// Relative agreement required of two makespans.
fn agrees(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-3 * a.abs().max(b.abs()).max(1e-9)
}

/// What the device model needs of a node: (tasks, cost_us, cores), by (graph, name).
pub(crate) type Facts = HashMap<(String, String), (u64, f64, u64)>;

/// Node facts from graph JSON text, with the loader's defaults (tasks 1, cost 0, cores 0).
pub(crate) fn facts_of_json(graph: &Value) -> Facts {
    let mut out = Facts::new();
    let mut add = |gname: &str, nodes: &Value| {
        for n in nodes.as_array().into_iter().flatten() {
            let tasks = n.get("tasks").and_then(Value::as_u64).unwrap_or(1);
            let cost = n.get("cost_us").and_then(Value::as_f64).unwrap_or(0.0);
            let cores = n.get("cores").and_then(Value::as_u64).unwrap_or(0);
            out.insert((gname.to_string(), n["name"].as_str().unwrap().to_string()), (tasks, cost, cores));
        }
    };
    add("", &graph["nodes"]);
    for sg in graph.get("subgraphs").and_then(Value::as_array).into_iter().flatten() {
        add(sg["name"].as_str().unwrap(), &sg["nodes"]);
    }
    out
}

/// Node facts of a model built in memory (synthetic graphs have no JSON text).
fn facts_of_model(m: &Model) -> Facts {
    m.nodes
        .iter()
        .map(|n| {
            ((m.graph_label(n.graph).to_string(), n.name.clone()), (u64::from(n.tasks), n.cost_us, u64::from(n.cores)))
        })
        .collect()
}

/// Duration and units of a node: nothing for a node with no task.
fn cost(facts: &Facts, graph: &str, name: &str) -> (f64, u64) {
    let &(tasks, cost, cores) = facts.get(&(graph.to_string(), name.to_string())).expect("a graph node");
    if tasks == 0 { (0.0, 0) } else { (cost, cores.min(u64::from(UNITS))) }
}

/// The device model of docs/simulate.md, from the allocation document: one queue per stream
/// in `nodes` order, inserted nodes free; at each instant rounds over the streams, a head
/// starting when the entry before it has finished (in an earlier round), every sync to it was
/// recorded at least `LATENCY` ago and its units are free. A round takes the streams by id
/// (`Arbitration::StreamId`) or, under `Arbitration::Ready`, by when their heads became
/// startable, id breaking ties. Returns the makespan.
pub(crate) fn reference_makespan(facts: &Facts, doc: &Value, arbitration: Arbitration) -> f64 {
    let nodes = doc["nodes"].as_array().unwrap();
    let mut queues: BTreeMap<i64, Vec<usize>> = BTreeMap::new();
    let mut spec: Vec<(f64, u64)> = Vec::with_capacity(nodes.len());
    let mut by_name: HashMap<&str, usize> = HashMap::new();
    for (i, n) in nodes.iter().enumerate() {
        let name = n["name"].as_str().unwrap();
        let inserted = n.get("inserted").and_then(Value::as_bool).unwrap_or(false);
        spec.push(if inserted { (0.0, 0) } else { cost(facts, n["graph"].as_str().unwrap_or(""), name) });
        if !inserted {
            by_name.entry(name).or_insert(i);
        }
        let s = n["stream"].as_i64().unwrap();
        if s >= 0 {
            queues.entry(s).or_default().push(i);
        }
    }
    let end = |v: &Value| by_name[v.as_str().unwrap().split('@').next().unwrap()];
    let mut waits: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for key in ["syncs", "split_events"] {
        for p in doc.get(key).and_then(Value::as_array).into_iter().flatten() {
            let (f, t) = (end(&p["from"]), end(&p["to"]));
            if f != t {
                waits[t].push(f);
            }
        }
    }
    let queues: Vec<Vec<usize>> = queues.into_values().collect();
    let mut head = vec![0usize; queues.len()];
    let mut finish: Vec<Option<f64>> = vec![None; nodes.len()];
    let mut running: Vec<(f64, usize)> = Vec::new();
    let mut free = u64::from(UNITS);
    let mut t = 0.0f64;
    let mut makespan = 0.0f64;
    loop {
        // When each head became startable, ignoring units (never, while a wait is unrecorded).
        let since = |s: usize| -> f64 {
            let q = &queues[s];
            let Some(&e) = q.get(head[s]) else { return f64::INFINITY };
            let mut r = if head[s] > 0 { finish[q[head[s] - 1]].unwrap_or(f64::INFINITY) } else { 0.0 };
            for &f in &waits[e] {
                r = r.max(finish[f].map_or(f64::INFINITY, |x| x + LATENCY));
            }
            r
        };
        let mut round: Vec<usize> = (0..queues.len()).collect();
        if arbitration == Arbitration::Ready {
            let keys: Vec<f64> = round.iter().map(|&s| since(s)).collect();
            round.sort_by(|&a, &b| keys[a].total_cmp(&keys[b]).then(a.cmp(&b)));
        }
        for s in round {
            let q = &queues[s];
            let Some(&e) = q.get(head[s]) else { continue };
            if head[s] > 0 && finish[q[head[s] - 1]].is_none() {
                continue;
            }
            if waits[e].iter().any(|&f| finish[f].is_none_or(|x| x + LATENCY > t)) {
                continue;
            }
            if spec[e].1 > free {
                continue;
            }
            free -= spec[e].1;
            running.push((t + spec[e].0, e));
            head[s] += 1;
        }
        let mut next = running.iter().map(|r| r.0).fold(f64::INFINITY, f64::min);
        for (s, q) in queues.iter().enumerate() {
            if let Some(&e) = q.get(head[s]) {
                for &f in &waits[e] {
                    if let Some(x) = finish[f].filter(|x| x + LATENCY > t) {
                        next = next.min(x + LATENCY);
                    }
                }
            }
        }
        if next == f64::INFINITY {
            break;
        }
        t = next;
        running.retain(|&(at, e)| {
            if at <= t {
                finish[e] = Some(at);
                free += spec[e].1;
                makespan = makespan.max(at);
                false
            } else {
                true
            }
        });
    }
    assert!(queues.iter().enumerate().all(|(s, q)| head[s] == q.len()), "the reference simulation deadlocked");
    makespan
}

/// The ideal schedule by its definition (issue 15, docs/simulate.md), by brute force: at each
/// instant rounds in which the ready nodes, sorted by bottom level then declaration order,
/// start when their units are free; a node finishing makes its successors ready for the next
/// round. Returns (makespan, lower bound).
fn reference_ideal(m: &Model) -> (f64, f64) {
    let n = m.nodes.len();
    let facts = facts_of_model(m);
    let spec: Vec<(f64, u64)> = m.nodes.iter().map(|x| cost(&facts, m.graph_label(x.graph), &x.name)).collect();
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut preds = vec![0usize; n];
    for e in m.edges.iter() {
        succ[e.src.index()].push(e.dst.index());
        preds[e.dst.index()] += 1;
    }
    // Bottom levels over a Kahn order of our own.
    let mut left = preds.clone();
    let mut topo: Vec<usize> = (0..n).filter(|&v| left[v] == 0).collect();
    let mut i = 0;
    while i < topo.len() {
        for &w in &succ[topo[i]] {
            left[w] -= 1;
            if left[w] == 0 {
                topo.push(w);
            }
        }
        i += 1;
    }
    assert_eq!(topo.len(), n, "a cycle");
    let mut level = vec![0.0f64; n];
    for &v in topo.iter().rev() {
        level[v] = spec[v].0 + succ[v].iter().map(|&w| level[w]).fold(0.0, f64::max);
    }
    let cp = level.iter().copied().fold(0.0, f64::max);
    let work: f64 = spec.iter().map(|&(d, u)| d * u as f64).sum();
    let lower_bound = cp.max(work / f64::from(UNITS));
    let mut left = preds;
    let mut ready: Vec<usize> = (0..n).filter(|&v| left[v] == 0).collect();
    let mut running: Vec<(f64, usize)> = Vec::new();
    let mut free = u64::from(UNITS);
    let mut t = 0.0f64;
    loop {
        ready.sort_by(|&a, &b| level[b].total_cmp(&level[a]).then(a.cmp(&b)));
        ready.retain(|&v| {
            if spec[v].1 <= free {
                free -= spec[v].1;
                running.push((t + spec[v].0, v));
                false
            } else {
                true
            }
        });
        let Some(next) = running.iter().map(|r| r.0).min_by(f64::total_cmp) else { break };
        t = next;
        let (done, still): (Vec<_>, Vec<_>) = running.into_iter().partition(|r| r.0 <= t);
        running = still;
        for (_, v) in done {
            free += spec[v].1;
            for &w in &succ[v] {
                left[w] -= 1;
                if left[w] == 0 {
                    ready.push(w);
                }
            }
        }
    }
    assert!(ready.is_empty(), "ready nodes left unscheduled");
    (t, lower_bound)
}

/// A model with the given extra options.
fn with_options(path: &Path, policy: &str) -> Model {
    let mut m = json::load_file(path).unwrap();
    if !policy.is_empty() {
        m.options.set_assignment(policy).unwrap();
    }
    m
}

/// The project's simulator and [`reference_makespan`] agree on `alloc` under both arbitration
/// rules.
fn assert_simulator_agrees(m: &Model, alloc: &Allocation, facts: &Facts, doc: &Value, policy: &str) {
    for arbitration in [Arbitration::StreamId, Arbitration::Ready] {
        let cfg = SimConfig { arbitration, ..SimConfig::default() };
        let ours = simulate(m, alloc, &cfg).unwrap().makespan_us;
        let reference = reference_makespan(facts, doc, arbitration);
        assert!(
            agrees(ours, reference),
            "{} [{policy}] {arbitration:?}: project {ours} us, reference {reference} us",
            m.name
        );
    }
}

/// The project's ideal schedule of `m` agrees with [`reference_ideal`] on the makespan and the
/// lower bound; returns it.
fn assert_ideal_agrees(m: &Model) -> Ideal {
    let got = ideal(m, &SimConfig::default()).unwrap();
    let (makespan, bound) = reference_ideal(m);
    assert!(agrees(got.makespan_us, makespan), "{}: ideal {} us, reference {makespan} us", m.name, got.makespan_us);
    assert!(agrees(got.lower_bound_us, bound), "{}: bound {} us, reference {bound} us", m.name, got.lower_bound_us);
    got
}

/// Every corpus graph under every option set: the project's makespan agrees with the reference
/// here and, where it is available, with check_alloc.py's.
#[test]
fn simulator_agrees_with_the_reference_and_check_alloc_on_the_corpus() {
    let dir = std::env::temp_dir().join(format!("sa_sim_ref_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut checks: Vec<(String, PathBuf, PathBuf, f64)> = Vec::new();
    let mut seen: HashSet<String> = HashSet::new();
    for path in common::corpus_paths() {
        let raw: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let facts = facts_of_json(&raw);
        for &policy in POLICIES {
            let m = with_options(&path, policy);
            let alloc = allocate(&m, Stage::All).unwrap();
            let doc = alloc.to_json_new_plan(&m);
            assert_simulator_agrees(&m, &alloc, &facts, &doc, policy);
            let ours = simulate(&m, &alloc, &SimConfig::default()).unwrap().makespan_us;
            // The independent checker reads `syncs` alone; identical documents run once, and
            // without the memory plan (its rule 8 is the slow part, and not what is compared).
            let mut doc = doc;
            doc.as_object_mut().unwrap().remove("memory");
            let text = doc.to_string();
            if doc["split_events"].as_array().is_none_or(|v| v.is_empty()) && seen.insert(text.clone()) {
                let file = dir.join(format!("{}_{}.json", m.name, checks.len()));
                std::fs::write(&file, text).unwrap();
                checks.push((format!("{} [{policy}]", m.name), path.clone(), file, ours));
            }
        }
    }
    assert!(!checks.is_empty(), "no allocation for check_alloc.py");
    if let Some(check) = common::check_alloc_tool("check_alloc.py's makespans on the corpus") {
        // The rule is named, not left to the tool's default.
        let runs: Vec<Vec<String>> = checks
            .iter()
            .map(|(_, g, a, _)| {
                let mut args = vec![g.display().to_string(), a.display().to_string()];
                args.extend(["--json", "--arbitration", "ready"].map(String::from));
                args
            })
            .collect();
        for ((what, _, _, ours), (code, report)) in checks.iter().zip(common::run_python(&check, &runs)) {
            assert!(
                code == 0 && report["ok"] == true,
                "{what}: check_alloc.py rejects the allocation: {}",
                report["errors"]
            );
            let theirs = report["makespan_us"].as_f64().unwrap();
            // check_alloc.py rounds to 0.001 us.
            assert!(
                agrees(*ours, theirs) || (ours - theirs).abs() <= 5e-4,
                "{what}: project {ours} us, check_alloc.py {theirs} us"
            );
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Synthetic graphs with integer costs (ties at every turn) and task-less constants, under the
/// policies that cross streams most.
#[test]
fn simulator_agrees_with_the_reference_on_synthetic_graphs() {
    let families =
        [Family::Inception, Family::Layered { width: 8 }, Family::Transformer, Family::Random { window: Some(32) }];
    for (i, family) in families.into_iter().enumerate() {
        for seed in [1u64, 2] {
            let base = generate(family, 600, seed + 10 * i as u64).unwrap();
            let facts = facts_of_model(&base);
            for policy in ["", "policy=per-operator", "policy=min-streams", "policy=budget:4", "max_task_count=64"] {
                let mut m = base.clone();
                if !policy.is_empty() {
                    m.options.set_assignment(policy).unwrap();
                }
                let alloc = allocate(&m, Stage::All).unwrap();
                let doc = alloc.to_json_new_plan(&m);
                assert_simulator_agrees(&m, &alloc, &facts, &doc, policy);
            }
            assert_ideal_agrees(&base);
        }
    }
}

/// The ideal schedule on every corpus graph against the reference here and, where available,
/// ideal_schedule.py, which breaks ties by node name where we use declaration order: on the
/// corpus the two orders never decide, so the makespans agree.
#[test]
fn ideal_agrees_with_the_reference_and_ideal_schedule_on_the_corpus() {
    let paths = common::corpus_paths();
    let ours: Vec<(String, f64, f64)> = paths
        .iter()
        .map(|path| {
            let m = json::load_file(path).unwrap();
            let got = assert_ideal_agrees(&m);
            assert!(got.makespan_us + 1e-9 >= got.lower_bound_us, "{}: ideal below the lower bound", m.name);
            (m.name.clone(), got.makespan_us, got.lower_bound_us)
        })
        .collect();
    let Some(script) = common::ideal_schedule_tool("ideal_schedule.py's makespans on the corpus") else { return };
    let runs: Vec<Vec<String>> = paths.iter().map(|p| vec![p.display().to_string()]).collect();
    for ((name, makespan, bound), (code, report)) in ours.iter().zip(common::run_python(&script, &runs)) {
        assert_eq!(code, 0, "{name}: ideal_schedule.py fails: {report}");
        let theirs = report["ideal_us"].as_f64().unwrap();
        assert!(agrees(*makespan, theirs), "{name}: ideal {makespan} us, ideal_schedule.py {theirs} us");
        let lb = report["lower_bound_us"].as_f64().unwrap();
        assert!(agrees(*bound, lb), "{name}: lower bound {bound} us, ideal_schedule.py {lb} us");
    }
}

/// The ideal schedule is a schedule: every node once, after its predecessors finish, never
/// more units busy than the device has, and its makespan is the last finish.
#[test]
fn ideal_schedule_is_feasible() {
    for m in
        [json::load_file(common::corpus_graph("googlenet.json")).unwrap(), generate(Family::Inception, 800, 3).unwrap()]
    {
        let cfg = SimConfig::default();
        let got = ideal(&m, &cfg).unwrap();
        let facts = facts_of_model(&m);
        let spec = |v: NodeId| cost(&facts, m.graph_label(m.nodes[v].graph), &m.nodes[v].name);
        let mut sorted = got.order.clone();
        sorted.sort();
        assert_eq!(sorted, m.nodes.ids().collect::<Vec<_>>(), "{}: order is not every node once", m.name);
        let mut last = 0.0f64;
        let mut changes: Vec<(f64, i64)> = Vec::new();
        for v in m.nodes.ids() {
            let (d, u) = spec(v);
            for e in m.in_edges(v) {
                let (du, _) = spec(e.src);
                assert!(
                    got.start[v] >= got.start[e.src] + du,
                    "{}: {} starts before its input finishes",
                    m.name,
                    m.nodes[v].name
                );
            }
            last = last.max(got.start[v] + d);
            if d > 0.0 {
                changes.push((got.start[v], u as i64));
                changes.push((got.start[v] + d, -(u as i64)));
            }
        }
        changes.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut busy = 0i64;
        for (_, delta) in changes {
            busy += delta;
            assert!(busy <= i64::from(cfg.units), "{}: {busy} units busy", m.name);
        }
        assert_eq!(got.makespan_us, last, "{}", m.name);
        let starts: Vec<f64> = got.order.iter().map(|&v| got.start[v]).collect();
        assert!(starts.windows(2).all(|w| w[0] <= w[1]), "{}: order is not by start time", m.name);
    }
}

/// A Send is a queue entry: under the stream-id rule, the one after `p` costs stream 0 a round
/// at t = 1, so stream 1's `s` takes every unit first and `q` waits for it; with the Send left
/// out, `q` would win on the lower stream id. (Under the default rule `s` goes first anyway:
/// it has waited since 0.) `t` waits for `p` through its Recv. GE's order (`compat=ge`) keeps `s`
/// ahead of `t` on stream 1, as declared; the default order would run `t`, the longer path, first.
#[test]
fn an_inserted_send_takes_a_round_and_gives_way() {
    let text = r#"{"format": "stream-graph", "version": 1, "name": "send_round", "options": {"compat": "ge"},
      "nodes": [
        {"name": "p", "type": "Add", "engine": "AIcoreEngine", "cost_us": 1, "cores": 1, "stream": 0},
        {"name": "q", "type": "Add", "engine": "AIcoreEngine", "cost_us": 10, "cores": 24, "stream": 0},
        {"name": "s", "type": "Add", "engine": "AIcoreEngine", "cost_us": 10, "cores": 24, "stream": 1},
        {"name": "t", "type": "Add", "engine": "AIcoreEngine", "cost_us": 20, "cores": 1, "stream": 1}],
      "edges": [{"src": "p", "dst": "q"}, {"src": "p", "dst": "t"}]}"#;
    let m = json::load_str(text).unwrap();
    let alloc = allocate_from_preassigned(&m, Stage::All).unwrap();
    let doc = alloc.to_json_new_plan(&m);
    let order: Vec<&str> = doc["nodes"].as_array().unwrap().iter().map(|n| n["type"].as_str().unwrap()).collect();
    assert_eq!(order, ["Add", "Send", "Add", "Add", "Recv", "Add"]);
    let r = simulate(&m, &alloc, &SimConfig { arbitration: Arbitration::StreamId, ..SimConfig::default() }).unwrap();
    let at = |name: &str| r.span[m.find_node(GraphId::ROOT, name).unwrap()].unwrap();
    assert_eq!(at("p"), (0.0, 1.0));
    assert_eq!(at("s"), (1.0, 11.0));
    assert_eq!(at("q"), (11.0, 21.0));
    // `t` follows `s` on stream 1 and waited for `p` (1 + 1 us), then for a unit.
    assert_eq!(at("t"), (21.0, 41.0));
    assert_eq!(r.makespan_us, 41.0);
    let facts = facts_of_json(&serde_json::from_str(text).unwrap());
    assert_eq!(reference_makespan(&facts, &doc, Arbitration::StreamId), 41.0);
    assert_eq!(simulate(&m, &alloc, &SimConfig::default()).unwrap().makespan_us, 41.0);
    assert_eq!(reference_makespan(&facts, &doc, Arbitration::Ready), 41.0);
}
