//! Every static corpus graph allocates in static-multi mode (logical stage) in each auto
//! multi-stream mode: stream ids are continuous from 0, and two runs are byte-identical.

use crate::common;
use std::path::PathBuf;
use stream_alloc::memory::AllocationDocument;

use stream_alloc::allocate;
use stream_alloc::compile::Stage;
use stream_alloc::graph::{Shape, json};

fn corpus() -> Vec<PathBuf> {
    common::corpus_paths()
}

#[test]
fn corpus_static_multi_logical() {
    let files = corpus();
    assert!(files.len() >= 10, "corpus missing");
    let mut checked = 0;
    for path in &files {
        for mode in ["", "cv", "LoadBalance", "MainStream:2", "WeightedLoadBalance:4"] {
            let bytes = std::fs::read(path).unwrap();
            let mut b = json::builder_from_slice(&bytes).unwrap();
            if !mode.is_empty() {
                b.options.set_str("auto_multistream_parallel_mode", mode).unwrap();
            }
            let model = b.build().unwrap();
            if model.root().shape != Shape::Static {
                continue;
            }
            let what = format!("{} mode '{mode}'", path.display());
            let a = allocate(&model, Stage::Logical).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(a.mode(), "static-multi", "{what}");
            let mut used = vec![false; a.logical_count() as usize];
            for s in a.logical_stream().iter().flatten() {
                assert!(s.0 < a.logical_count(), "{what}: stream {s} >= count {}", a.logical_count());
                used[s.index()] = true;
            }
            assert!(used.iter().all(|u| *u), "{what}: stream ids are not continuous: {used:?}");
            assert!(a.logical_count() >= 1, "{what}");
            let again = allocate(&model, Stage::Logical).unwrap();
            assert_eq!(a.to_json_string(&model), again.to_json_string(&model), "{what}: runs differ");
            if mode.starts_with("MainStream:2") {
                // HCCL keeps its own stream; the path cover adds at most 2 compute streams.
                assert!(a.logical_count() <= 4, "{what}: {} streams", a.logical_count());
            }
            checked += 1;
        }
    }
    assert!(checked >= 50, "only {checked} runs checked");
}
