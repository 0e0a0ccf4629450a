//! The checker's two edge-minimum algorithms agree, and the sparse one serves graphs too large
//! for a bitset per node.

use crate::common;
use stream_alloc::compile::Stage;
use stream_alloc::graph::builder::{EdgeSpec, NodeSpec};
use stream_alloc::graph::{ModelBuilder, json};
use stream_alloc::memory::AllocationDocument;
use stream_alloc::verify::{self, metrics};
use stream_alloc::{allocate, allocate_from_preassigned};

#[test]
fn both_minimum_algorithms_agree_on_the_corpus() {
    for path in common::corpus_paths() {
        let mut b = json::builder_from_slice(&std::fs::read(&path).unwrap()).unwrap();
        b.options.set_str("max_parallel_num", "AIcoreEngine:4").unwrap();
        let model = b.build().unwrap();
        let alloc = allocate(&model, Stage::Sync).unwrap();
        let value = alloc.to_json_new_plan(&model);
        let doc = verify::doc::Doc::parse(&model, &value).unwrap();
        let dense = metrics::edge_sync_minimum(&doc, &doc.dependencies(&model));
        let sparse = metrics::edge_sync_minimum_by_stream_reach(&doc, &doc.dependencies(&model));
        assert_eq!(dense, sparse, "{}", path.display());
        assert_eq!(dense, Some(alloc.syncs().len()), "{}: the default mode reaches the edge minimum", path.display());
    }
}

#[test]
fn large_graphs_get_a_minimum() {
    // 60 000 nodes on 8 streams: over the bitset limit.
    let n = 60_000usize;
    let mut b = ModelBuilder::new("big");
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut rnd = |m: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % m as u64) as usize
    };
    for i in 0..n {
        let mut s = NodeSpec::new(format!("n{i}"), "Add", "AIcoreEngine");
        s.stream = Some((i % 8) as i64);
        b.add_node(s);
        if i > 0 {
            b.add_edge(EdgeSpec::data(format!("n{}", i - 1 - rnd(i.min(32))), format!("n{i}")));
        }
    }
    let model = b.build().unwrap();
    let alloc = allocate_from_preassigned(&model, Stage::Sync).unwrap();
    let report = verify::check(&model, &alloc.to_json_new_plan(&model));
    assert!(report.violations.is_empty(), "{:?}", report.violations.first());
    assert_eq!(report.edge_sync_minimum, Some(alloc.syncs().len()));
}

#[test]
fn more_streams_than_the_device_creates_is_a_violation() {
    let path = &common::corpus_paths()[0];
    let model = json::load_slice(&std::fs::read(path).unwrap()).unwrap();
    let alloc = allocate(&model, Stage::All).unwrap();
    let mut value = alloc.to_json_new_plan(&model);
    assert!(verify::check(&model, &value).ok());
    value["streams"]["physical"] = serde_json::json!(2024);
    let report = verify::check(&model, &value);
    let said = report.violations.iter().any(|v| v.message.contains("more than the device creates (2023"));
    assert!(said, "{:?}", report.violations);
}
