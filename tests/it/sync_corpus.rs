//! Every corpus graph under a test assignment: stream = engine subgraph index % 4 (a fixed
//! multi-stream assignment for testing the sync stage until the static pass chain lands).
//! The default mode must reach the checker's edge minimum, GE mode must keep at least as many, and
//! every result must pass the checker.

use crate::common;
use stream_alloc::allocate_from_preassigned;
use stream_alloc::compile::{Allocation, Stage};
use stream_alloc::graph::partition::Partition;
use stream_alloc::graph::{Model, Options, json};
use stream_alloc::memory::AllocationDocument;
use stream_alloc::verify;

const STREAMS: usize = 4;

fn with_test_assignment(path: &std::path::Path, ge: bool, lifetime: bool) -> Model {
    let bytes = std::fs::read(path).unwrap();
    let plain = json::load_slice(&bytes).unwrap();
    let part = Partition::of_model(&plain);
    let mut b = json::builder_from_slice(&bytes).unwrap();
    // Dense ids by first use, so every id in 0..n carries a node.
    let mut remap = std::collections::BTreeMap::new();
    for g in &mut b.graphs {
        let gid =
            if g.parent.is_none() { stream_alloc::graph::GraphId::ROOT } else { plain.find_graph(&g.name).unwrap() };
        for spec in &mut g.nodes {
            let id = plain.find_node(gid, &spec.name).unwrap();
            spec.stream = part.of_node[id].map(|s| {
                let k = remap.len() as i64;
                *remap.entry(s.index() % STREAMS).or_insert(k)
            });
        }
    }
    b.options.compat_ge = ge;
    b.options.event_reuse_lifetime = lifetime;
    b.build().unwrap()
}

#[test]
fn corpus_default_mode_is_minimal_and_ge_mode_is_not_below() {
    let files = common::corpus_paths();
    println!(
        "{:<22} {:>6} {:>8} {:>8} {:>9} {:>8} {:>6}",
        "graph", "nodes", "default", "minimum", "ge", "lifetime", "width"
    );
    for path in files {
        let mut counts = Vec::new();
        let mut minimum = None;
        let mut width = None;
        for (ge, lifetime) in [(false, false), (true, false), (false, true)] {
            let m = with_test_assignment(&path, ge, lifetime);
            let alloc = allocate_from_preassigned(&m, Stage::Sync).unwrap();
            let report = verify::check(&m, &alloc.to_json_new_plan(&m));
            assert!(report.ok(), "{} ge={ge} lifetime={lifetime}: {:?}", m.name, report.violations);
            if !ge && !lifetime {
                assert_eq!(Some(alloc.syncs().len()), report.edge_sync_minimum, "{}: default mode not minimal", m.name);
                minimum = report.edge_sync_minimum;
                width = report.width;
            }
            counts.push((alloc.syncs().len(), alloc.sync_count()));
        }
        assert!(counts[1].0 >= counts[0].0);
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        println!(
            "{name:<22} {:>6} {:>8} {:>8} {:>9} {:>8} {:>6}",
            json::load_file(&path).unwrap().nodes.len(),
            counts[0].0,
            minimum.unwrap(),
            counts[1].0,
            format!("{} ids", counts[2].1),
            width.unwrap()
        );
    }
}

/// The corpus and three synthetic families at 3,000 nodes: the sync trials' graphs.
fn corpus_and_synthetic() -> Vec<Model> {
    use stream_alloc::graph::synth::{Family, generate};
    let mut models: Vec<Model> =
        common::corpus_paths().iter().map(|p| json::load_slice(&std::fs::read(p).unwrap()).unwrap()).collect();
    for family in [Family::Layered { width: 8 }, Family::Random { window: None }, Family::Inception] {
        models.push(generate(family, 3000, 7).unwrap());
    }
    models
}

/// `policy`'s logical streams with option `key=value` and no event budget, and the options.
fn logical_streams(model: &Model, policy: &str, key: &str, value: &str) -> (Options, Allocation) {
    let mut options = model.options.clone();
    options.set("policy", &serde_json::json!(policy)).unwrap();
    options.set(key, &serde_json::json!(value)).unwrap();
    options.max_events = Some(u32::MAX);
    let limits = stream_alloc::compile::TaskLimits::from_options(&options);
    let mut session = stream_alloc::driver::Session::new(model, options.clone(), limits);
    session.run_to(Stage::Logical).unwrap();
    (options, session.into_result().unwrap().0)
}

/// The event budget's trial (`compile::sync_stage_within`) counts what the whole sync stage
/// makes, whether it stops at the count (over its limit) or finishes: then the allocation is
/// the stage's own, byte for byte. Every corpus graph and three synthetic families, under
/// per-operator and list streams, with events, notifies and lifetime reuse, with the model's
/// facts shared or not; errors (too many notifies) are the stage's.
#[test]
fn a_trial_counts_what_the_sync_stage_makes() {
    use stream_alloc::compile::{self, summary::ModelCounts, sync::ModelFacts};
    let models = corpus_and_synthetic();
    let (mut stopped, mut finished, mut refused) = (0, 0, 0);
    for model in &models {
        let facts = ModelFacts::build(model);
        for policy in ["per-operator", "list"] {
            for (key, value) in [("event", "event"), ("event", "notify"), ("event_reuse", "lifetime")] {
                let (options, logical) = logical_streams(model, policy, key, value);
                let what = format!("{} {policy} {key}={value}", model.name);
                let mut full = logical.clone();
                let whole = compile::sync_stage(model, &options, &mut full);
                for (max_ids, shared) in [(u32::MAX, Some(&facts)), (u32::MAX, None), (0, Some(&facts)), (0, None)] {
                    let mut trial = logical.clone();
                    let counted = compile::sync_stage_within(model, &options, &mut trial, max_ids, shared);
                    match (&whole, counted) {
                        (Ok(()), Ok(counts)) => {
                            assert_eq!(counts, ModelCounts::of(&full), "{what}: max_ids={max_ids}");
                            let ids = counts.event_num + counts.notify_num;
                            if ids <= max_ids {
                                assert_eq!(trial, full, "{what}: a trial that fits is the stage's allocation");
                                finished += 1;
                            } else {
                                stopped += 1;
                            }
                        }
                        (Err(a), Err(b)) => {
                            assert_eq!(a.to_string(), b.to_string(), "{what}");
                            refused += 1;
                        }
                        // GE's notify limit is the caller's to apply once it has reused ids or
                        // cut streams: a trial over `max_ids` only counts.
                        (Err(a), Ok(counts))
                            if a.message.contains("kMaxNotifyNum")
                                && counts.event_num + counts.notify_num > max_ids =>
                        {
                            stopped += 1;
                        }
                        (a, b) => panic!("{what}: the stage gives {a:?}, the trial {b:?}"),
                    }
                }
            }
        }
    }
    println!("trials stopped at the count: {stopped}, finished: {finished}, refused: {refused}");
    assert!(stopped > 0 && finished > 0, "both ends of the trial are exercised");
}

/// The event budget's two runs with their shared steps run once (`compile::sync_stage_reusing`)
/// give what the two whole runs give: the counts one id per sync and, over the limit, the
/// counts with ids reused by lifetime, and the allocation of the first that fits byte for
/// byte. Every corpus graph and three synthetic families, per-operator and list streams, in
/// event and notify mode, under limits where the first run fits, where only the reused one
/// does and where neither does.
#[test]
fn the_shared_sync_steps_give_both_runs() {
    use stream_alloc::compile::{self, summary::ModelCounts, sync::ModelFacts};
    let ids = |c: &ModelCounts| c.event_num + c.notify_num;
    let models = corpus_and_synthetic();
    let mut seen = [0usize; 3];
    for model in &models {
        let facts = ModelFacts::build(model);
        for policy in ["per-operator", "list"] {
            for event in ["event", "notify"] {
                let (options, logical) = logical_streams(model, policy, "event", event);
                let reuse = Options { event_reuse_lifetime: true, ..options.clone() };
                let what = format!("{} {policy} {event}", model.name);
                let mut whole = logical.clone();
                let Ok(exact) = compile::sync_stage_within(model, &options, &mut whole, u32::MAX, Some(&facts)) else {
                    continue;
                };
                let mut reused_whole = logical.clone();
                let Ok(reused) = compile::sync_stage_within(model, &reuse, &mut reused_whole, u32::MAX, Some(&facts))
                else {
                    continue;
                };
                for max_ids in [ids(&exact), ids(&reused), ids(&reused).saturating_sub(1)] {
                    let mut shared = logical.clone();
                    let (a, b) = compile::sync_stage_reusing(model, &options, &mut shared, max_ids, Some(&facts))
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    assert_eq!(a, exact, "{what}: max_ids={max_ids}");
                    if ids(&exact) <= max_ids {
                        assert_eq!(b, None, "{what}");
                        assert_eq!(shared, whole, "{what}: the first run's allocation");
                        seen[0] += 1;
                    } else {
                        assert_eq!(b, Some(reused), "{what}: max_ids={max_ids}");
                        if ids(&reused) <= max_ids {
                            assert_eq!(shared, reused_whole, "{what}: the reused run's allocation");
                            seen[1] += 1;
                        } else {
                            seen[2] += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(seen.iter().all(|&n| n > 0), "every outcome exercised: {seen:?}");
}
