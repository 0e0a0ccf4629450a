//! Every corpus graph under a test assignment: stream = engine subgraph index % 4 (a fixed
//! multi-stream assignment for testing the sync stage until the static pass chain lands).
//! The default mode must reach the checker's edge minimum, GE mode must keep at least as many, and
//! every result must pass the checker.

use crate::common;
use stream_alloc::allocate_from_preassigned;
use stream_alloc::compile::Stage;
use stream_alloc::graph::partition::Partition;
use stream_alloc::graph::{Model, json};
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
            let report = verify::check(&m, &alloc.to_json(&m));
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
