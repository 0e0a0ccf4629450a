//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

/// The corpus graphs: `../shared/corpus` when the repository sits beside it (CI, development),
/// else the copies bundled in `examples/`.
pub fn corpus_paths() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let shared = root.join("../shared/corpus");
    let dir = if shared.is_dir() { shared } else { root.join("examples") };
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty(), "no corpus graphs in {}", dir.display());
    paths
}
