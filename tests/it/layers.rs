//! The library's layers, bottom up, and the rule that nothing points back up: a module of
//! `src/` may name (`crate::…`, in a `use` or inline) only its own layer's items, the error
//! type, and layers below it. Modules on the same rank do not name each other. The README's
//! Layout gives the same order.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Rank of each top-level module of `src/`; a module may name ranks below its own.
const LAYERS: &[(&str, u32)] = &[
    // error.rs: the error type every layer returns.
    ("error", 0),
    ("graph", 0),
    ("compile", 1),
    ("import", 1),
    ("simulate", 2),
    ("verify", 2),
    ("runtime", 2),
    ("memory", 3),
    ("replay", 3),
    ("driver", 4),
    ("baseline", 5),
    // `auto` evaluates the peers' plans (`baseline`) among its candidates.
    ("search", 6),
    ("capi", 7),
    // What the command line and the Python package share (loading, options, documents).
    ("frontend", 7),
    // The crate root (lib.rs: `allocate`, the re-exports) runs searches.
    ("lib", 8),
];

/// Names every layer may use: the error type and its macros.
const SHARED: &[&str] = &["error", "bail", "err", "Error", "ErrorKind", "Result"];

/// Root re-exports, by the layer that defines them.
const ROOT_ITEMS: &[(&str, &str)] = &[
    ("Allocation", "compile"),
    ("Stage", "compile"),
    ("Model", "graph"),
    ("allocate", "lib"),
    ("allocate_from_preassigned", "lib"),
];

fn rank(module: &str) -> Option<u32> {
    LAYERS.iter().find(|(m, _)| *m == module).map(|(_, r)| *r)
}

/// The layer a `crate::NAME` path names, or `None` for the shared error items.
fn layer_of(name: &str) -> Result<Option<&'static str>, String> {
    if SHARED.contains(&name) {
        return Ok(None);
    }
    if let Some((m, _)) = LAYERS.iter().find(|(m, _)| *m == name) {
        return Ok(Some(m));
    }
    if let Some((_, m)) = ROOT_ITEMS.iter().find(|(i, _)| *i == name) {
        return Ok(Some(m));
    }
    Err(format!("crate::{name} is in no layer of tests/it/layers.rs"))
}

/// The first path segments after each `crate::` on a line: `crate::a::b` gives `a`,
/// `crate::{a, b::c}` gives `a` and `b`.
fn crate_paths(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("crate::") {
        // `stream_alloc_crate::` or `mycrate::` are other names.
        let before = rest[..i].chars().next_back();
        rest = &rest[i + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut item = String::new();
            let mut items = Vec::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => items.push(std::mem::take(&mut item)),
                    _ if depth == 0 => item.push(c),
                    _ => {}
                }
            }
            items.push(item);
            for it in items {
                let head: String = it.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !head.is_empty() && head != "self" {
                    out.push(head);
                }
            }
        } else {
            let head: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !head.is_empty() {
                out.push(head);
            }
        }
    }
    out
}

pub(super) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every upward or sideways `crate::` path of the library, as `file:line: what`.
fn violations(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let rel = f.strip_prefix(src).unwrap();
        let top = rel.components().next().unwrap().as_os_str().to_string_lossy().trim_end_matches(".rs").to_string();
        // The binary (main.rs, cli/) links the library from outside and sits above it.
        if top == "main" || top == "cli" {
            continue;
        }
        let Some(own) = rank(&top) else {
            out.push(format!("{}: module '{top}' is in no layer of tests/it/layers.rs", rel.display()));
            continue;
        };
        let text = std::fs::read_to_string(&f).unwrap();
        for (i, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for name in crate_paths(line) {
                match layer_of(&name) {
                    Ok(None) => {}
                    Ok(Some(m)) if m == top => {}
                    Ok(Some(m)) => {
                        let theirs = rank(m).unwrap();
                        if theirs >= own {
                            let how = if theirs == own { "beside" } else { "above" };
                            out.push(format!(
                                "{}:{}: {top} names crate::{name}, a layer {how} it ({m})",
                                rel.display(),
                                i + 1
                            ));
                        }
                    }
                    Err(e) => out.push(format!("{}:{}: {e}", rel.display(), i + 1)),
                }
            }
        }
    }
    out
}

#[test]
fn no_layer_names_one_above_or_beside_it() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let v = violations(&src);
    assert!(v.is_empty(), "imports against the layer order:\n{}", v.join("\n"));
}

/// The scan itself: an upward path on a line is found, in either form, and comments are not.
#[test]
fn the_scan_finds_upward_paths() {
    assert_eq!(crate_paths("use crate::memory::plan_allocation;"), ["memory"]);
    assert_eq!(crate_paths("use crate::{bail, driver::{Session, Search}};"), ["bail", "driver"]);
    assert_eq!(
        crate_paths("let x = crate::simulate::ideal(m, c)?; crate::verify::check(m, d)"),
        ["simulate", "verify"]
    );
    assert!(crate_paths("use stream_alloc_crate::x;").is_empty());
    let dir = std::env::temp_dir().join(format!("sa-layers-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("compile")).unwrap();
    std::fs::write(dir.join("compile/mod.rs"), "// crate::driver in a comment\nuse crate::graph::Model;\n").unwrap();
    assert!(violations(&dir).is_empty());
    std::fs::write(dir.join("compile/x.rs"), "fn f() { crate::memory::plan_allocation(m, a); }\n").unwrap();
    std::fs::create_dir_all(dir.join("verify")).unwrap();
    std::fs::write(dir.join("verify/mod.rs"), "use crate::runtime::consts;\n").unwrap();
    let v = violations(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    let by_file: BTreeMap<&str, &str> = v.iter().map(|l| (l.split(':').next().unwrap(), l.as_str())).collect();
    assert_eq!(v.len(), 2, "{v:?}");
    assert!(by_file["compile/x.rs"].contains("above it (memory)"), "{v:?}");
    assert!(by_file["verify/mod.rs"].contains("beside it (runtime)"), "{v:?}");
}

/// The README's Layout block: each line that starts at column 0 names a path, and the names it
/// lists after it (`order.rs`, `logical/`, `stream_alloc/ge_compat/`) are under that path or
/// under the repository root.
fn readme_layout(root: &Path) -> Vec<(String, Vec<String>)> {
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let block = readme.split("## Layout").nth(1).expect("README has a Layout section");
    let block = block.split("```").nth(1).expect("the Layout section has a code block");
    let mut entries: Vec<(String, Vec<String>)> = Vec::new();
    for line in block.lines().skip(1) {
        let mut words = line.split_whitespace();
        if !line.starts_with(' ') {
            let Some(head) = words.next() else { continue };
            entries.push((head.to_string(), Vec::new()));
        }
        let Some((_, names)) = entries.last_mut() else { continue };
        for w in words {
            let w = w.trim_matches(|c: char| matches!(c, '(' | ')' | ',' | ';' | ':'));
            let named = w.ends_with(".rs") || w.ends_with(".h") || w.ends_with(".sh") || w.ends_with('/');
            if named && !w.contains('<') && !w.contains('{') && w.chars().next().is_some_and(char::is_alphanumeric) {
                names.push(w.to_string());
            }
        }
    }
    entries
}

#[test]
fn readme_layout_names_what_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let entries = readme_layout(root);
    let mut missing = Vec::new();
    for (head, names) in &entries {
        if !root.join(head).exists() {
            missing.push(head.clone());
        }
        for n in names {
            if !root.join(head).join(n).exists() && !root.join(n).exists() {
                missing.push(format!("{head} … {n}"));
            }
        }
    }
    assert!(missing.is_empty(), "README's Layout names paths that do not exist: {missing:?}");
    // Every module directory of src/ and every top-level directory of the repository is there
    // (build outputs and hidden directories but .ci/ aside).
    let heads: Vec<&str> = entries.iter().map(|(h, _)| h.trim_end_matches('/')).collect();
    let mut unlisted = Vec::new();
    for (dir, prefix) in [(root.join("src"), "src/"), (root.to_path_buf(), "")] {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let skipped = (name.starts_with('.') && name != ".ci")
                || (prefix.is_empty() && (name == "src" || name == "target" || name.starts_with("build")));
            if e.path().is_dir() && !skipped && !heads.contains(&format!("{prefix}{name}").as_str()) {
                unlisted.push(format!("{prefix}{name}/"));
            }
        }
    }
    unlisted.sort();
    assert!(unlisted.is_empty(), "README's Layout leaves out {unlisted:?}");
}

#[test]
fn the_layout_check_reads_names_under_their_entry() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let entries = readme_layout(root);
    let compile = entries.iter().find(|(h, _)| h == "src/compile/").expect("src/compile/ is listed");
    for n in ["logical/", "order.rs", "schedule.rs"] {
        assert!(compile.1.iter().any(|x| x == n), "{n} not read from src/compile/'s entry: {:?}", compile.1);
    }
}
