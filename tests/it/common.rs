//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// The repository's own copy of the corpus. Every test reads corpus graphs through this module,
/// so a clone with nothing beside it tests exactly what a development checkout tests.
pub fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("corpus")
}

/// The graph files `corpus/INDEX.md` lists, sorted. A listed file that is missing, or a graph
/// file the index does not list, fails the test rather than quietly shrinking the corpus.
pub fn corpus_paths() -> Vec<PathBuf> {
    let dir = corpus_dir();
    let index = std::fs::read_to_string(dir.join("INDEX.md"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.join("INDEX.md").display()));
    let mut listed: Vec<String> = index
        .lines()
        .filter_map(|l| l.strip_prefix("| "))
        .filter_map(|l| l.split(' ').next())
        .filter(|f| f.ends_with(".json"))
        .map(str::to_string)
        .collect();
    listed.sort();
    let mut present: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.ends_with(".json"))
        .collect();
    present.sort();
    assert!(!listed.is_empty(), "corpus/INDEX.md lists no graph");
    assert_eq!(listed, present, "corpus/ and corpus/INDEX.md disagree on the graph files");
    listed.into_iter().map(|f| dir.join(f)).collect()
}

/// One corpus graph by file name; a missing one fails the test.
pub fn corpus_graph(file: &str) -> PathBuf {
    let p = corpus_dir().join(file);
    assert!(p.is_file(), "corpus graph {} is missing", p.display());
    p
}

/// A session over `model` with the options it declares and the task limits those give, able
/// to run every mode (searches included): what the command line builds, minus the device.
pub fn session(
    model: std::sync::Arc<stream_alloc::Model>,
) -> stream_alloc::driver::Session<std::sync::Arc<stream_alloc::Model>> {
    let options = model.options.clone();
    let limits = stream_alloc::compile::TaskLimits::from_options(&options);
    stream_alloc::search::session(model, options, limits, Default::default())
}

/// Held by every test that registers a process-wide device runtime: such tests share one
/// process with the rest of the suite, and must not overlap each other.
pub static RUNTIME_LOCK: parking_lot::Mutex<()> = parking_lot::Mutex::new(());
