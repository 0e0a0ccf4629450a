//! The fixture syntax of every fixture runner (`logical_fixtures` for the logical and dynamic
//! areas, `step_fixtures`, `sync_fixtures`), after cranelift's filetests: a `NAME.expected` file
//! names what to run in `;` directives and lists the expected result lines.
//!
//! ```text
//! ; graph: other.json            (default: NAME.json; a part after the first '.' is a variant)
//! ; run: WHAT                    (the runner's own directive)
//! ; option: KEY=VALUE            (repeatable)
//! RESULT LINES
//! ```
//!
//! Comment lines (`;` without a directive, or `#`) are kept. `SA_BLESS=1` rewrites the result
//! lines in place. A failed run renders as [`error_line`], the checker's verdict as
//! [`checker_lines`].

use std::path::{Path, PathBuf};

use stream_alloc::compile::Allocation;
use stream_alloc::graph::Model;
use stream_alloc::memory::AllocationDocument;

/// One `.expected` file.
pub struct Case {
    /// The directive and comment lines, kept when blessing.
    pub header: Vec<String>,
    pub graph: PathBuf,
    pub run: Option<String>,
    pub options: Vec<String>,
    pub expected: String,
}

fn parse(dir: &Path, path: &Path) -> Case {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let stem = path.file_name().unwrap().to_str().unwrap().trim_end_matches(".expected");
    let base = stem.split('.').next().unwrap();
    let mut case = Case {
        header: Vec::new(),
        graph: dir.join(format!("{base}.json")),
        run: None,
        options: Vec::new(),
        expected: String::new(),
    };
    for line in text.lines() {
        if line.starts_with(';') || line.starts_with('#') {
            case.header.push(line.to_string());
            let body = line.trim_start_matches(';').trim();
            if let Some(g) = body.strip_prefix("graph:") {
                case.graph = dir.join(g.trim());
            } else if let Some(r) = body.strip_prefix("run:") {
                case.run = Some(r.trim().to_string());
            } else if let Some(o) = body.strip_prefix("option:") {
                case.options.push(o.trim().to_string());
            }
        } else if !line.trim().is_empty() {
            case.expected.push_str(line.trim_end());
            case.expected.push('\n');
        }
    }
    case
}

/// Runs every `.expected` file of `tests/fixtures/<area>` (at least `min` of them) through
/// `actual`, which renders the result lines; fails listing every case that differs, or, with
/// `SA_BLESS=1`, rewrites them.
pub fn run_all(area: &str, min: usize, actual: impl Fn(&Case) -> String) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(area);
    let bless = std::env::var("SA_BLESS").is_ok_and(|v| v == "1");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_str().unwrap().ends_with(".expected"))
        .collect();
    files.sort();
    assert!(files.len() >= min, "{area} fixtures missing: {}", files.len());
    let mut failures = Vec::new();
    for path in &files {
        let case = parse(&dir, path);
        let got = actual(&case);
        if got == case.expected {
            continue;
        }
        if bless {
            let mut text = case.header.join("\n");
            text.push('\n');
            text.push_str(&got);
            std::fs::write(path, text).unwrap();
        } else {
            failures.push(format!("== {}\n-- expected\n{}-- actual\n{}", path.display(), case.expected, got));
        }
    }
    assert!(failures.is_empty(), "{} fixture(s) differ:\n{}", failures.len(), failures.join("\n"));
}

/// The case's graph, with its `; option:` lines applied over the file's own options.
pub fn model(case: &Case) -> stream_alloc::Result<Model> {
    let bytes = std::fs::read(&case.graph).unwrap_or_else(|e| panic!("{}: {e}", case.graph.display()));
    let mut b = stream_alloc::graph::json::builder_from_slice(&bytes)?;
    for o in &case.options {
        b.options.set_assignment(o)?;
    }
    b.build()
}

/// `error CODE MESSAGE`: a failed run, as every runner renders it.
pub fn error_line(e: &stream_alloc::Error) -> String {
    format!("error {} {}\n", e.code(), e.message)
}

/// The independent checker's verdict on an allocation: `checker ok`, or one
/// `checker rule R: MESSAGE` line per violation.
pub fn checker_lines(model: &Model, alloc: &Allocation) -> String {
    let report = stream_alloc::verify::check(model, &alloc.to_json_new_plan(model));
    if report.ok() {
        return "checker ok\n".to_string();
    }
    report.violations.iter().map(|v| format!("checker rule {}: {}\n", v.rule, v.message)).collect()
}
