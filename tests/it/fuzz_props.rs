//! The fuzz targets' checks (fuzz/src/checks.rs) under proptest with a short budget, plus every
//! input kept in fuzz/regressions/<target>/ (crashes found by fuzzing, replayed forever).

use crate::checks;
use std::path::PathBuf;
use stream_alloc::memory::AllocationDocument;
use stream_alloc::verify::Report;
use stream_alloc::{Allocation, Model};

use proptest::prelude::*;

/// A fuzz target's check: panics on a failing input.
type Check = fn(&[u8]);

const TARGETS: [(&str, Check); 4] = [
    ("json_loader", checks::json_loader),
    ("pipeline", checks::pipeline),
    ("onnx_import", checks::onnx_import),
    ("runtime_pool", checks::runtime_pool),
];

fn regressions_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions")
}

fn regressions(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = regressions_dir().join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut v: Vec<_> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let d = std::fs::read(&p).unwrap();
            (p, d)
        })
        .collect();
    v.sort();
    v
}

/// A kept `json_loader` finding allocated with its own options, and the checker's report on it.
fn allocate_finding(name: &str) -> (Model, Allocation, Report) {
    let model = stream_alloc::graph::json::load_file(regressions_dir().join("json_loader").join(name)).unwrap();
    let alloc = stream_alloc::allocate(&model, stream_alloc::compile::Stage::All).unwrap();
    let report = stream_alloc::verify::check(&model, &alloc.to_json_new_plan(&model));
    (model, alloc, report)
}

/// Every input the fuzzers found is replayed. The folder must hold them: a missing or empty
/// folder, or one named after no target, fails rather than replaying nothing.
#[test]
fn fuzz_regressions_replay() {
    let dir = regressions_dir();
    let folders: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for f in &folders {
        assert!(TARGETS.iter().any(|(t, _)| t == f), "fuzz/regressions/{f} names no fuzz target");
        assert!(!regressions(f).is_empty(), "fuzz/regressions/{f} is empty");
    }
    let mut replayed = 0;
    for (target, check) in TARGETS {
        for (path, data) in regressions(target) {
            replayed += 1;
            let r = std::panic::catch_unwind(|| check(&data));
            assert!(r.is_ok(), "{} fails again", path.display());
        }
    }
    assert!(replayed > 0, "fuzz/regressions holds no input");
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

/// The ONNX test models with one byte changed, inserted, or the file cut short.
fn mangled_onnx() -> impl Strategy<Value = Vec<u8>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/onnx");
    let mut models: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "onnx") && p.metadata().unwrap().len() < 8192)
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    models.sort();
    (0..models.len(), any::<usize>(), any::<u8>(), 0usize..3).prop_map(move |(m, at, byte, how)| {
        let mut data = models[m].clone();
        let at = at % (data.len() + 1);
        match how {
            0 => data.truncate(at),
            1 if at < data.len() => data[at] = byte,
            _ => data.splice(at..at, [byte]).for_each(drop),
        }
        data
    })
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
    fn pipeline_on_generated_graphs(data in prop::collection::vec(any::<u8>(), 0..400)) {
        checks::pipeline(&data);
    }

    #[test]
    fn onnx_import_on_mangled_models(data in mangled_onnx()) {
        checks::onnx_import(&data);
    }

    #[test]
    fn runtime_pool_against_model(data in prop::collection::vec(any::<u8>(), 0..600)) {
        checks::runtime_pool(&data);
    }
}

/// The first finding of the pipeline check (6 nodes, default options): n0, a GE_LOCAL node with
/// a task, has no logical stream and used to be moved to stream 0 only at the split, after sync
/// insertion, so its control edge to n2 (DSAEngine, stream 3) went unsynchronised.
#[test]
fn finding_unordered_edge_into_dsa() {
    let (_, _, report) = allocate_finding("unordered_edge_into_dsa.json");
    assert!(report.violations.is_empty(), "{:?}", report.violations);
}

/// The second finding: in notify mode the split's events lived only in `split_events` with ids
/// of their own, so the halves of a split stream looked unordered to a reader of `syncs`
/// (rule 1). They are in `syncs` now, numbered after the notifies.
#[test]
fn finding_notify_split_events_unchecked() {
    let (model, alloc, report) = allocate_finding("notify_split_events_unchecked.json");
    assert!(alloc.split_event_count() > 0, "the finding needs a split in notify mode");
    // Rules 1 and 4 hold. The graph's max_task_count of 30 leaves a room of 3 tasks per stream,
    // less than a node of 3 to 5 tasks with its own SendNotify (1) / RecvNotify (2) nodes and
    // the split's wait (2) and record (1): these streams cannot be kept within it (rule 7
    // counts every task since the split does), and nothing else is on them.
    checks::only_unavoidable_task_overflows(&model, &alloc, &report).unwrap();
    let over: Vec<&str> = report.violations.iter().map(|v| v.message.as_str()).collect();
    assert_eq!(
        over,
        [
            "physical stream 0 holds 7 tasks, more than 30 - 27 = 3 (max_task_count)",
            "physical stream 5 holds 5 tasks, more than 30 - 27 = 3 (max_task_count)",
            "physical stream 6 holds 5 tasks, more than 30 - 27 = 3 (max_task_count)",
            "physical stream 9 holds 6 tasks, more than 30 - 27 = 3 (max_task_count)",
            "physical stream 10 holds 7 tasks, more than 30 - 27 = 3 (max_task_count)",
        ]
    );
}

/// The third finding (from the fix of the first): a task-less node behind a node that was
/// moved to stream 0 stayed on no stream, and sync insertion refused the edge into it.
#[test]
fn finding_taskless_node_behind_a_moved_node() {
    let (model, alloc, report) = allocate_finding("taskless_node_behind_a_moved_node.json");
    assert!(report.violations.is_empty(), "{:?}", report.violations);
    let b = model.find_node(stream_alloc::graph::GraphId::ROOT, "b").unwrap();
    assert!(alloc.stream()[b].is_some());
}

/// The fourth finding: a graph whose nodes all run on no stream still reports GE's minimum of
/// one stream; the checker took the empty stream 0 for a hole in the stream ids.
#[test]
fn finding_no_node_on_a_stream() {
    let (_, alloc, report) = allocate_finding("no_node_on_a_stream.json");
    assert_eq!(alloc.physical_count(), 1);
    assert!(alloc.stream().iter().all(Option::is_none));
    assert!(report.violations.is_empty(), "{:?}", report.violations);
}
