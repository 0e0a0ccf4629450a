//! Random DAGs with random stream assignments: in every mode the checker accepts the result,
//! and the default mode keeps exactly the checker's edge minimum number of syncs.

use proptest::prelude::*;
use stream_alloc::allocate_from_preassigned;
use stream_alloc::compile::Stage;
use stream_alloc::graph::builder::{EdgeSpec, NodeSpec};
use stream_alloc::graph::synth::{Rng, dag_edges};
use stream_alloc::graph::{Model, ModelBuilder, SyncKind};
use stream_alloc::memory::AllocationDocument;
use stream_alloc::verify;

fn build(n: usize, edges: &[(usize, usize)], streams: &[u32], mode: &str) -> Model {
    let mut b = ModelBuilder::new("prop");
    // Dense stream ids, numbered by first use.
    let mut remap = std::collections::BTreeMap::new();
    for &s in streams.iter().take(n) {
        let k = remap.len() as i64;
        remap.entry(s).or_insert(k);
    }
    for i in 0..n {
        let mut spec = NodeSpec::new(format!("n{i}"), "Conv2D", "AIcoreEngine");
        spec.stream = Some(remap[&streams[i]]);
        b.add_node(spec);
    }
    for &(s, d) in edges {
        b.add_edge(if (s + d) % 5 == 0 {
            EdgeSpec::control(format!("n{s}"), format!("n{d}"))
        } else {
            EdgeSpec::data(format!("n{s}"), format!("n{d}"))
        });
    }
    match mode {
        "ge" => b.options.compat_ge = true,
        "lifetime" => b.options.event_reuse_lifetime = true,
        "notify" => b.options.event = SyncKind::Notify,
        _ => {}
    }
    b.build().unwrap()
}

/// A random DAG's size and edges (parallel edges kept) from the shared generator, and each
/// node's stream.
fn dag() -> impl Strategy<Value = (usize, Vec<(usize, usize)>, Vec<u32>)> {
    (2usize..40, 1u32..6).prop_flat_map(|(n, k)| {
        let edges = (0..n * 3, any::<u64>())
            .prop_map(move |(draws, seed)| dag_edges(&mut Rng::new(seed), n, draws, usize::MAX, false));
        (Just(n), edges, proptest::collection::vec(0..k, n))
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn every_mode_passes_the_checker((n, edges, streams) in dag()) {
        let mut counts = Vec::new();
        for mode in ["default", "ge", "lifetime", "notify"] {
            let m = build(n, &edges, &streams, mode);
            let alloc = allocate_from_preassigned(&m, Stage::Sync).unwrap();
            let report = verify::check(&m, &alloc.to_json_new_plan(&m));
            prop_assert!(report.ok(), "{mode}: {:?}", report.violations);
            if mode == "default" && !alloc.syncs().is_empty() {
                // Each kept pair is needed: without it some edge is unordered.
                let mut doc = alloc.to_json_new_plan(&m);
                let drop = (n * 7 + edges.len()) % alloc.syncs().len();
                doc["syncs"].as_array_mut().unwrap().remove(drop);
                let broken = verify::check(&m, &doc);
                prop_assert!(broken.violations.iter().any(|v| v.rule == 1), "dropping a kept pair went unnoticed");
            }
            if mode == "default" {
                prop_assert_eq!(Some(alloc.syncs().len()), report.edge_sync_minimum, "default mode is not minimal");
                prop_assert_eq!(alloc.sync_count() as usize, alloc.syncs().len());
            }
            if mode == "lifetime" {
                prop_assert!(alloc.sync_count() as usize <= alloc.syncs().len());
            }
            counts.push(alloc.syncs().len());
        }
        prop_assert!(counts[1] >= counts[0], "GE mode kept fewer pairs than the exact reduction");
        prop_assert_eq!(counts[2], counts[0]);
    }
}
