//! The checked-in C header must equal a fresh cbindgen generation from src/capi, and every
//! exported function must run inside the one panic boundary.
//!
//! Refresh the header after changing the C ABI: `SA_BLESS=1 cargo test --test header`.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn capi_sources(root: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("src/capi"))
        .expect("src/capi exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    files.sort();
    files
}

/// Generates the header exactly as build.rs does: from src/capi/mod.rs, whose `mod` items
/// cbindgen follows (passing every file too would declare each function twice).
fn generate(root: &Path) -> String {
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml parses");
    let builder = cbindgen::Builder::new().with_config(config).with_src(root.join("src/capi/mod.rs"));
    let mut out = Vec::new();
    builder.generate().expect("cbindgen parses src/capi").write(&mut out);
    String::from_utf8(out).expect("the header is UTF-8")
}

#[test]
fn checked_in_header_is_fresh() {
    let root = root();
    let fresh = generate(&root);
    let path = root.join("include/stream_alloc.h");
    if std::env::var_os("SA_BLESS").is_some() {
        std::fs::write(&path, &fresh).expect("include/stream_alloc.h is writable");
        return;
    }
    let current = std::fs::read_to_string(&path).unwrap_or_default();
    if current != fresh {
        let line = current
            .lines()
            .zip(fresh.lines())
            .position(|(a, b)| a != b)
            .map_or_else(|| current.lines().count().min(fresh.lines().count()) + 1, |i| i + 1);
        panic!(
            "include/stream_alloc.h is stale (first difference at line {line}); \
             refresh it with `SA_BLESS=1 cargo test --test header` and commit it"
        );
    }
}

/// Every `extern "C" fn` must be documented and its body must be a call to `ffi_boundary`,
/// so no panic unwinds into C and every failure is recorded.
#[test]
fn every_exported_function_runs_inside_the_panic_boundary() {
    let mut count = 0;
    for file in capi_sources(&root()) {
        let text = std::fs::read_to_string(&file).expect("readable source");
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if !line.contains("extern \"C\" fn ") || line.trim_start().starts_with("//") {
                continue;
            }
            count += 1;
            let name = line.split("fn ").nth(1).and_then(|s| s.split('(').next()).unwrap_or("?");
            assert!(name.starts_with("sa_"), "{}: exported function {name} lacks the sa_ prefix", file.display());
            let attrs = lines[..i].iter().rev().take_while(|l| l.trim_start().starts_with("#["));
            assert!(
                attrs.clone().any(|l| l.contains("no_mangle")),
                "{}: {name} is not #[unsafe(no_mangle)]",
                file.display()
            );
            let doc_line = lines[..i].iter().rev().find(|l| !l.trim_start().starts_with("#["));
            assert!(
                doc_line.is_some_and(|l| l.trim_start().starts_with("///")),
                "{}: {name} has no doc comment",
                file.display()
            );
            // The first statement after the signature's opening brace.
            let body_start = lines[i..].iter().position(|l| l.trim_end().ends_with('{')).expect("a body") + i;
            let first = lines[body_start + 1..].iter().find(|l| !l.trim().is_empty()).expect("a statement");
            let first = first.trim_start();
            assert!(
                first.starts_with("ffi_boundary(") || first.starts_with("super::ffi_boundary("),
                "{}: the body of {name} does not start with ffi_boundary(..): {first}",
                file.display()
            );
        }
    }
    assert!(count >= 40, "only {count} exported functions found; the scan is broken");
}

/// Each exported function is declared once, and every one of them is in the header: a source
/// file cbindgen does not reach, or reaches twice, shows up here.
#[test]
fn header_declares_every_exported_function_once() {
    let header = generate(&root());
    let mut exported = Vec::new();
    for file in capi_sources(&root()) {
        let text = std::fs::read_to_string(&file).expect("readable source");
        for line in text.lines().filter(|l| l.contains("extern \"C\" fn ") && !l.trim_start().starts_with("//")) {
            if let Some(name) = line.split("fn ").nth(1).and_then(|s| s.split('(').next()) {
                exported.push(name.to_string());
            }
        }
    }
    for name in &exported {
        let call = format!("{name}(");
        let declared = header
            .lines()
            .map(str::trim_start)
            .filter(|l| !l.starts_with('*') && !l.starts_with("/*"))
            .filter(|l| l.match_indices(&call).any(|(at, _)| l[..at].ends_with([' ', '*'])))
            .count();
        assert_eq!(declared, 1, "{name} is declared {declared} times in include/stream_alloc.h");
    }
}
