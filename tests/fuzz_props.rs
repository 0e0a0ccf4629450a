//! The fuzz targets' checks (fuzz/src/checks.rs) under proptest with a short budget, plus every
//! input kept in fuzz/regressions/<target>/ (crashes found by fuzzing, replayed forever).

#[path = "../fuzz/src/fake_rt.rs"]
mod fake_rt;

#[path = "../fuzz/src/checks.rs"]
mod checks;

use std::path::PathBuf;

use proptest::prelude::*;

fn regressions(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions").join(target);
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .map(|p| {
            let d = std::fs::read(&p).unwrap();
            (p, d)
        })
        .collect();
    v.sort();
    v
}

#[test]
fn fuzz_regressions_replay() {
    for (target, check) in [
        ("json_loader", checks::json_loader as fn(&[u8])),
        ("pipeline", checks::pipeline),
        ("runtime_pool", checks::runtime_pool),
    ] {
        for (path, data) in regressions(target) {
            let r = std::panic::catch_unwind(|| check(&data));
            assert!(r.is_ok(), "{} fails again", path.display());
        }
    }
}

/// A JSON-shaped corpus for the loader: valid graph documents with one field mangled.
fn mangled_doc() -> impl Strategy<Value = Vec<u8>> {
    (prop::collection::vec(any::<u8>(), 0..200), any::<usize>(), any::<u8>(), 0usize..4).prop_map(
        |(bytes, at, byte, how)| {
            let doc = checks::graph_doc(&mut checks::Bytes::new(&bytes));
            let mut text = serde_json::to_vec(&doc).unwrap();
            let at = at % (text.len() + 1);
            match how {
                0 => text.truncate(at),
                1 if at < text.len() => text[at] = byte,
                2 => text.splice(at..at, [byte]).for_each(drop),
                _ => {}
            }
            text
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn loader_on_random_bytes(data in prop::collection::vec(any::<u8>(), 0..512)) {
        checks::json_loader(&data);
    }

    #[test]
    fn loader_on_mangled_documents(data in mangled_doc()) {
        checks::json_loader(&data);
    }

    #[test]
    #[ignore = "open finding fuzz/findings/unordered_edge_into_dsa.json: see docs/reliability.md"]
    fn pipeline_on_generated_graphs(data in prop::collection::vec(any::<u8>(), 0..400)) {
        checks::pipeline(&data);
    }

    #[test]
    fn runtime_pool_against_model(data in prop::collection::vec(any::<u8>(), 0..600)) {
        checks::runtime_pool(&data);
    }
}

/// The first finding of the pipeline check (6 nodes, default options): the control edge
/// n0 -> n2 (DNN_VM_GE_LOCAL -> DSAEngine) gets no sync although the nodes land on different
/// streams. Open: fix in the sync stage, then drop the `ignore` here and on the proptest above.
#[test]
#[ignore = "open finding: unsynchronised cross-stream edge, see docs/reliability.md"]
fn finding_unordered_edge_into_dsa() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/findings/unordered_edge_into_dsa.json");
    let model = stream_alloc::graph::json::load_file(&path).unwrap();
    let alloc = stream_alloc::compile::allocate(&model, stream_alloc::compile::Stage::All).unwrap();
    let report = stream_alloc::verify::check(&model, &alloc.to_json(&model));
    assert!(report.violations.is_empty(), "{:?}", report.violations);
}
