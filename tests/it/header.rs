//! The checked-in C header must equal a fresh cbindgen generation from src/capi, every exported
//! function must run inside the one panic boundary, and GE's C++ symbols (exported under GE's
//! mangled names, declared by the C++ shims rather than by the C header) must stay in step with
//! the shims' declarations.
//!
//! The header is one file per area (include/stream_alloc/<area>.h) under include/stream_alloc.h,
//! which includes them all. Refresh them after changing the C ABI:
//! `SA_BLESS=1 cargo test --test it header`.

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

/// Generates the whole C ABI in one cbindgen run: from src/capi/mod.rs, whose `mod` items
/// cbindgen follows (passing every file too would declare each function twice).
/// [`split_by_area`] turns it into the checked-in headers.
fn generate(root: &Path) -> String {
    let config = cbindgen::Config::from_file(root.join("cbindgen.toml")).expect("cbindgen.toml parses");
    let builder = cbindgen::Builder::new().with_config(config).with_src(root.join("src/capi/mod.rs"));
    let mut out = Vec::new();
    builder.generate().expect("cbindgen parses src/capi").write(&mut out);
    String::from_utf8(out).expect("the header is UTF-8")
}

/// The header's areas, in the order `stream_alloc.h` includes them: the file under
/// include/stream_alloc/, what it declares, and the src/capi modules whose items it holds.
const AREAS: &[(&str, &str, &[&str])] = &[
    ("graph", "graph: describe a model, or load graph JSON or ONNX, and build it", &["graph"]),
    ("allocation", "allocation: streams, syncs, JSON, memory plan and order of a finished run", &["allocation"]),
    ("session", "session: the pipeline stage by stage, on given streams and events too", &["session"]),
    ("summary", "summary: GE's stream allocation summary and compiled graph summary", &["summary", "handle"]),
    (
        "runtime_pools",
        "runtime pools: RT2 allocators, the reusable stream pool, the device-runtime seam",
        &[
            "stream_allocator",
            "event_allocator",
            "notify_allocator",
            "reusable_pool",
            "rt2",
            "stream_ops",
            "runtime",
            "runtime_ge",
        ],
    ),
    ("mem_pool", "memory pool: a stream-ordered device memory pool", &["mem_pool"]),
    (
        "pluggable",
        "pluggable allocator: PyTorch's, torch_npu's and MindSpore's device allocator entry points",
        &["pluggable"],
    ),
    ("errors", "errors: status codes, the last error, the version, returned strings", &["status", "mod"]),
];

/// One declaration of the generated header with its doc comment.
struct Item {
    name: String,
    text: String,
    function: bool,
    /// `typedef struct X X;`: a handle C only points to.
    opaque: bool,
}

/// The declarations of cbindgen's output, in its order (the C++ guards and includes left out).
fn items(header: &str) -> Vec<Item> {
    let start = header.find("#include <stdint.h>").expect("cbindgen's includes") + "#include <stdint.h>".len();
    let end = header.rfind("#endif  /* STREAM_ALLOC_H */").expect("cbindgen's include guard");
    let guard = |t: &str| {
        t == "#ifdef __cplusplus"
            || t == "extern \"C\" {"
            || (t.starts_with('}') && t.contains("extern \"C\""))
            || (t.starts_with("#endif") && t.contains("__cplusplus"))
    };
    let (mut out, mut lines, mut depth) = (Vec::new(), Vec::<&str>::new(), 0i32);
    for line in header[start..end].lines() {
        let t = line.trim();
        if guard(t) || (lines.is_empty() && t.is_empty()) {
            continue;
        }
        lines.push(line);
        let comment = t.starts_with("/*") || t.starts_with('*');
        if comment {
            continue;
        }
        depth += t.matches(['(', '{']).count() as i32 - t.matches([')', '}']).count() as i32;
        if !(t.starts_with("#define ") || (depth == 0 && t.ends_with(';'))) {
            continue;
        }
        let decl: Vec<&str> =
            lines.iter().map(|l| l.trim()).filter(|l| !l.starts_with("/*") && !l.starts_with('*')).collect();
        let decl = decl.join(" ");
        let ident = |s: &str| {
            s.rsplit(|c: char| !(c.is_alphanumeric() || c == '_')).find(|w| !w.is_empty()).map(str::to_string)
        };
        let function = !decl.starts_with('#') && !decl.starts_with("typedef") && decl.contains('(');
        let name = if let Some(rest) = decl.strip_prefix("#define ") {
            rest.split_whitespace().next().map(str::to_string)
        } else if function {
            ident(&decl[..decl.find('(').expect("a parameter list")])
        } else {
            ident(decl.trim_end_matches(';'))
        };
        let name = name.unwrap_or_else(|| panic!("no name in the declaration {decl}"));
        let opaque = decl == format!("typedef struct {name} {name};");
        out.push(Item { name, text: lines.join("\n"), function, opaque });
        lines.clear();
    }
    assert!(lines.iter().all(|l| l.trim().is_empty()), "an unfinished declaration: {lines:?}");
    out
}

/// The src/capi module (file stem) that defines each C item.
fn owners(root: &Path) -> std::collections::HashMap<String, String> {
    let mut owners = std::collections::HashMap::new();
    for file in capi_sources(root) {
        let stem = file.file_stem().and_then(|s| s.to_str()).expect("a file name").to_string();
        let text = std::fs::read_to_string(&file).expect("readable source");
        for line in text.lines() {
            let line = line.trim_start();
            let rest =
                ["pub type ", "pub const ", "pub struct ", "pub unsafe extern \"C\" fn ", "pub extern \"C\" fn "]
                    .iter()
                    .find_map(|p| line.strip_prefix(p));
            if let Some(rest) = rest {
                let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                owners.entry(name).or_insert_with(|| stem.clone());
            }
        }
    }
    owners
}

/// The checked-in headers, path and text: one per area of [`AREAS`], each complete on its own
/// (it includes the areas whose types it uses and declares the handles it only points to),
/// and `stream_alloc.h`, which includes them all in order. Types come before functions within
/// an area, as cbindgen orders them.
fn split_by_area(root: &Path, header: &str) -> Vec<(PathBuf, String)> {
    let owners = owners(root);
    let area_of_module = |m: &str| {
        AREAS
            .iter()
            .position(|(_, _, mods)| mods.contains(&m))
            .unwrap_or_else(|| panic!("src/capi/{m}.rs belongs to no area; add it to AREAS in tests/it/header.rs"))
    };
    let items = items(header);
    let area_of = |name: &str| {
        let module = owners.get(name).unwrap_or_else(|| panic!("{name}: not defined in src/capi"));
        area_of_module(module)
    };
    let notice = header.lines().find(|l| l.starts_with("/* Generated by cbindgen")).expect("the autogen notice");
    let mut files = Vec::new();
    let mut includes: Vec<Vec<usize>> = vec![Vec::new(); AREAS.len()];
    for (a, (stem, title, _)) in AREAS.iter().enumerate() {
        let mine: Vec<&Item> = items.iter().filter(|i| area_of(&i.name) == a).collect();
        let (mut uses, mut forward) = (Vec::new(), Vec::new());
        for item in &mine {
            let code: Vec<&str> =
                item.text.lines().map(str::trim).filter(|l| !l.starts_with("/*") && !l.starts_with('*')).collect();
            for word in code.join(" ").split(|c: char| !(c.is_alphanumeric() || c == '_')) {
                let Some(other) = items.iter().find(|i| i.name == word) else { continue };
                let b = area_of(word);
                if b == a {
                    continue;
                }
                if other.opaque {
                    if !forward.contains(&other.name) {
                        forward.push(other.name.clone());
                    }
                } else if !uses.contains(&b) {
                    uses.push(b);
                }
            }
        }
        uses.sort();
        // A handle of an included area is declared there.
        forward.retain(|f| !uses.contains(&area_of(f)));
        forward.sort();
        includes[a] = uses.clone();
        let guard = format!("STREAM_ALLOC_{}_H", stem.to_uppercase());
        let mut text = format!(
            "/*\n * stream_alloc/{stem}.h - {title}.\n *\n * One area of the C ABI; stream_alloc.h includes every area, in order, with the\n * conventions they share (status, ownership, thread safety).\n */\n\n#ifndef {guard}\n#define {guard}\n\n{notice}\n\n#include <stdbool.h>\n#include <stddef.h>\n#include <stdint.h>\n"
        );
        // `ssize_t` (the frameworks' size type) is POSIX's, from <sys/types.h>.
        if mine.iter().any(|i| i.text.split(|c: char| !(c.is_alphanumeric() || c == '_')).any(|w| w == "ssize_t")) {
            text += "#include <sys/types.h>\n";
        }
        for b in &uses {
            text += &format!("#include \"{}.h\"\n", AREAS[*b].0);
        }
        if !forward.is_empty() {
            text += "\n";
            for f in &forward {
                text += &format!("struct {f};\n");
            }
        }
        for item in mine.iter().filter(|i| !i.function) {
            text += &format!("\n{}\n", item.text);
        }
        let functions: Vec<&&Item> = mine.iter().filter(|i| i.function).collect();
        if !functions.is_empty() {
            text += "\n#ifdef __cplusplus\nextern \"C\" {\n#endif  // __cplusplus\n";
            for item in functions {
                text += &format!("\n{}\n", item.text);
            }
            text += "\n#ifdef __cplusplus\n}  // extern \"C\"\n#endif  // __cplusplus\n";
        }
        text += &format!("\n#endif  /* {guard} */\n");
        files.push((root.join(format!("include/stream_alloc/{stem}.h")), text));
    }
    // An area may include only areas that do not include it back, however indirectly.
    for a in 0..AREAS.len() {
        let mut seen = vec![false; AREAS.len()];
        let mut stack = includes[a].clone();
        while let Some(b) = stack.pop() {
            assert_ne!(b, a, "area '{}' includes itself through its includes: {includes:?}", AREAS[a].0);
            if !std::mem::replace(&mut seen[b], true) {
                stack.extend(&includes[b]);
            }
        }
    }
    let head =
        &header[..header.find("#define STREAM_ALLOC_H").expect("the include guard") + "#define STREAM_ALLOC_H".len()];
    let mut top = format!("{head}\n\n{notice}\n\n");
    for (stem, _, _) in AREAS {
        top += &format!("#include \"stream_alloc/{stem}.h\"\n");
    }
    top += "\n#endif  /* STREAM_ALLOC_H */\n";
    files.insert(0, (root.join("include/stream_alloc.h"), top));
    files
}

#[test]
fn checked_in_headers_are_fresh() {
    let root = root();
    let files = split_by_area(&root, &generate(&root));
    let bless = std::env::var_os("SA_BLESS").is_some();
    for (path, fresh) in &files {
        let shown = path.strip_prefix(&root).unwrap_or(path).display().to_string();
        if bless {
            std::fs::write(path, fresh).unwrap_or_else(|e| panic!("{shown} is not writable: {e}"));
            continue;
        }
        let current = std::fs::read_to_string(path).unwrap_or_default();
        if current != *fresh {
            let line = current
                .lines()
                .zip(fresh.lines())
                .position(|(a, b)| a != b)
                .map_or_else(|| current.lines().count().min(fresh.lines().count()) + 1, |i| i + 1);
            panic!(
                "{shown} is stale (first difference at line {line}); \
                 refresh it with `SA_BLESS=1 cargo test --test it header` and commit it"
            );
        }
    }
    // No header of an area that no longer exists.
    for entry in std::fs::read_dir(root.join("include/stream_alloc")).expect("include/stream_alloc exists") {
        let path = entry.expect("readable entry").path();
        if path.extension().is_some_and(|x| x == "h") {
            assert!(files.iter().any(|(p, _)| *p == path), "{} is no area of AREAS; remove it", path.display());
        }
    }
}

/// Every declaration lands in exactly one area header, in the area of the module that defines
/// it, and the sections come in the order the C ABI is read: graph first, errors last.
#[test]
fn every_declaration_is_in_the_header_of_its_area() {
    let root = root();
    let header = generate(&root);
    let files = split_by_area(&root, &header);
    let all = items(&header);
    assert!(all.len() > 150, "only {} declarations found; the scan is broken", all.len());
    for item in &all {
        let holders: Vec<&PathBuf> = files.iter().filter(|(_, t)| t.contains(&item.text)).map(|(p, _)| p).collect();
        assert_eq!(holders.len(), 1, "{} is in {} headers: {holders:?}", item.name, holders.len());
    }
    let names: Vec<&str> = AREAS.iter().map(|(stem, _, _)| *stem).collect();
    assert_eq!(
        names,
        ["graph", "allocation", "session", "summary", "runtime_pools", "mem_pool", "pluggable", "errors"]
    );
    let top = &files[0].1;
    let at = |stem: &str| top.find(&format!("#include \"stream_alloc/{stem}.h\"")).expect("included");
    assert!(names.windows(2).all(|w| at(w[0]) < at(w[1])), "stream_alloc.h includes the areas out of order");
}

/// What the attributes above an `extern "C" fn` export it as.
#[derive(Debug, PartialEq)]
enum Export {
    /// `#[unsafe(no_mangle)]`: a C function of stream_alloc.h.
    C,
    /// `#[unsafe(export_name = "_Z...")]`: one of GE's C++ symbols.
    Ge(String),
    /// Neither: a callback handed to C++ by pointer, never exported.
    Callback,
}

struct ExternFn {
    file: PathBuf,
    name: String,
    export: Export,
    documented: bool,
    /// A line of the doc comment begins with `Ownership:`.
    ownership: bool,
    first_statement: String,
}

/// Every `extern "C" fn` defined in src/capi (declarations in `extern` blocks have no body and
/// are skipped).
fn extern_fns() -> Vec<ExternFn> {
    let mut fns = Vec::new();
    for file in capi_sources(&root()) {
        let text = std::fs::read_to_string(&file).expect("readable source");
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            if !line.contains("extern \"C\" fn ") || line.trim_start().starts_with("//") {
                continue;
            }
            // A declaration in an `extern "C" { ... }` block ends with `;` before any `{`.
            let rest = lines[i..].iter().map(|l| l.trim_end()).find(|l| l.ends_with('{') || l.ends_with(';'));
            if rest.is_some_and(|l| l.ends_with(';')) {
                continue;
            }
            let name = line.split("fn ").nth(1).and_then(|s| s.split('(').next()).unwrap_or("?").to_string();
            let attrs: Vec<&str> =
                lines[..i].iter().rev().take_while(|l| l.trim_start().starts_with("#[")).copied().collect();
            let export = if attrs.iter().any(|l| l.contains("no_mangle")) {
                Export::C
            } else if let Some(sym) = attrs.iter().find_map(|l| l.split("export_name = \"").nth(1)) {
                Export::Ge(sym.split('"').next().unwrap_or_default().to_string())
            } else {
                Export::Callback
            };
            let doc_line = lines[..i].iter().rev().find(|l| !l.trim_start().starts_with("#["));
            let documented = doc_line.is_some_and(|l| l.trim_start().starts_with("///"));
            let doc = lines[..i].iter().rev().skip(attrs.len()).take_while(|l| l.trim_start().starts_with("///"));
            let ownership =
                doc.map(|l| l.trim_start().trim_start_matches('/').trim_start()).any(|l| l.starts_with("Ownership:"));
            // The first statement after the signature's opening brace.
            let body_start = lines[i..].iter().position(|l| l.trim_end().ends_with('{')).expect("a body") + i;
            let first = lines[body_start + 1..].iter().find(|l| !l.trim().is_empty()).expect("a statement");
            fns.push(ExternFn {
                file: file.clone(),
                name,
                export,
                documented,
                ownership,
                first_statement: first.trim_start().to_string(),
            });
        }
    }
    fns
}

/// Every `extern "C" fn` must be documented and its body must be a call to `ffi_boundary`,
/// so no panic unwinds into C (or C++) and every failure is recorded. C functions carry the
/// `sa_` prefix; GE's symbols are the `GE_SYMBOLS` list.
#[test]
fn every_exported_function_runs_inside_the_panic_boundary() {
    let fns = extern_fns();
    for f in &fns {
        let file = f.file.display();
        let name = &f.name;
        match &f.export {
            Export::C => assert!(name.starts_with("sa_"), "{file}: exported function {name} lacks the sa_ prefix"),
            Export::Ge(sym) => assert!(
                stream_alloc::capi::runtime_ge::GE_SYMBOLS.contains(&sym.as_str()),
                "{file}: {name} exports {sym}, which is not in GE_SYMBOLS"
            ),
            Export::Callback => assert!(
                !name.starts_with("sa_"),
                "{file}: {name} is named as a C function but is not #[unsafe(no_mangle)]"
            ),
        }
        assert!(f.documented, "{file}: {name} has no doc comment");
        let first = &f.first_statement;
        assert!(
            first.starts_with("ffi_boundary(") || first.starts_with("super::ffi_boundary("),
            "{file}: the body of {name} does not start with ffi_boundary(..): {first}"
        );
    }
    let count = fns.iter().filter(|f| f.export == Export::C).count();
    assert!(count >= 40, "only {count} exported functions found; the scan is broken");
}

/// Every C function of the header says who owns what goes in and what comes out: its doc
/// comment (which cbindgen copies into stream_alloc.h) has a line beginning `Ownership:`.
#[test]
fn every_exported_function_states_ownership() {
    let fns: Vec<ExternFn> = extern_fns().into_iter().filter(|f| f.export == Export::C).collect();
    assert!(fns.len() >= 40, "only {} exported functions found; the scan is broken", fns.len());
    let missing: Vec<String> =
        fns.iter().filter(|f| !f.ownership).map(|f| format!("{} ({})", f.name, f.file.display())).collect();
    assert!(
        missing.is_empty(),
        "{} of {} exported functions have no `Ownership:` line in their doc comment: {}",
        missing.len(),
        fns.len(),
        missing.join(", ")
    );
}

/// A GE symbol's parts: (namespace, class, member, const), from the Itanium nested name
/// `_ZN[K]<len><ns><len><class><len><member>E...`; constructors and destructors are `C1`, `C2`,
/// `D1`, `D2`.
fn demangle_member(sym: &str) -> (String, String, String, bool) {
    let rest = sym.strip_prefix("_ZN").unwrap_or_else(|| panic!("{sym}: not a nested name"));
    let (is_const, mut rest) = match rest.strip_prefix('K') {
        Some(r) => (true, r),
        None => (false, rest),
    };
    let mut parts = Vec::new();
    while !rest.starts_with('E') {
        if let Some(special) = ["C1", "C2", "D1", "D2"].iter().find(|p| rest.starts_with(**p)) {
            parts.push(special.to_string());
            rest = &rest[2..];
            continue;
        }
        let digits = rest.chars().take_while(char::is_ascii_digit).count();
        assert!(digits > 0, "{sym}: unexpected mangling at {rest}");
        let len: usize = rest[..digits].parse().expect("a length");
        parts.push(rest[digits..digits + len].to_string());
        rest = &rest[digits + len..];
    }
    assert_eq!(parts.len(), 3, "{sym}: expected namespace::class::member");
    (parts[0].clone(), parts[1].clone(), parts[2].clone(), is_const)
}

/// The out-of-line members a shim header declares for `class`: (member, const), with `C1`/`D1`
/// standing for a declared constructor/destructor. Inline definitions, deleted and defaulted
/// members are not symbols of the library.
fn shim_members(header: &str, class: &str) -> Vec<(String, bool)> {
    // Comments out, then the class body.
    let mut text = String::new();
    let mut rest = header;
    while let Some(at) = rest.find("/*") {
        text.push_str(&rest[..at]);
        rest = rest[at..].split_once("*/").map_or("", |(_, after)| after);
    }
    text.push_str(rest);
    let text: String = text.lines().map(|l| l.split("//").next().unwrap_or_default()).collect::<Vec<_>>().join("\n");
    let start = text.find(&format!(" {class} {{")).unwrap_or_else(|| panic!("class {class} not found"));
    let body = &text[start..text[start..].find("\n};").expect("the end of the class") + start];
    let body = &body[body.find('{').expect("a class body") + 1..];
    let mut members = Vec::new();
    for decl in body.split(';') {
        let decl = decl.split(':').filter(|p| !p.trim().is_empty()).collect::<Vec<_>>().join(":");
        let decl = decl.trim();
        let skip = ["{", "= delete", "= default", "friend ", "static constexpr", "operator="];
        if !decl.contains('(') || skip.iter().any(|s| decl.contains(s)) {
            continue;
        }
        let head = decl[..decl.find('(').expect("a parameter list")].trim_end();
        let name = head.rsplit([' ', '*', '&']).next().unwrap_or_default();
        let is_const = decl[decl.rfind(')').expect("a closing parenthesis")..].contains("const");
        let member = if name == class {
            "C1".to_string()
        } else if name == format!("~{class}") {
            "D1".to_string()
        } else {
            name.to_string()
        };
        members.push((member, is_const));
    }
    members
}

/// The shims (include/stream_alloc/ge_compat) declare exactly the members the library exports
/// under GE's names: every out-of-line member has its symbols (constructors and destructors in
/// both variants), every exported symbol is a declared member with the same constness, and the
/// `export_name`s in src/capi are the `GE_SYMBOLS` list. (tests_c checks the mangled names
/// themselves against `nm -D`, from code compiled against the shims and against GE's own
/// declarations.)
#[test]
fn shims_and_exported_ge_symbols_are_in_step() {
    let list = stream_alloc::capi::runtime_ge::GE_SYMBOLS;
    let mut exported: Vec<String> = extern_fns()
        .into_iter()
        .filter_map(|f| match f.export {
            Export::Ge(sym) => Some(sym),
            _ => None,
        })
        .collect();
    exported.sort();
    let mut listed: Vec<String> = list.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(exported, listed, "the export_name attributes in src/capi differ from GE_SYMBOLS");

    let shims = root().join("include/stream_alloc/ge_compat");
    let classes = [
        ("gert", "StreamAllocator", "framework/runtime/stream_allocator.h"),
        ("gert", "EventAllocator", "framework/runtime/event_allocator.h"),
        ("gert", "NotifyAllocator", "framework/runtime/notify_allocator.h"),
        ("ge", "ReusableStreamAllocator", "graph/load/model_manager/reusable_stream_allocator.h"),
    ];
    let mut covered = 0;
    for (ns, class, path) in classes {
        let header = std::fs::read_to_string(shims.join(path)).expect("the shim header is readable");
        let declared = shim_members(&header, class);
        assert!(!declared.is_empty(), "{path}: no out-of-line member of {class} found; the scan is broken");
        let symbols: Vec<(String, String, String, bool)> =
            list.iter().map(|s| demangle_member(s)).filter(|(n, c, _, _)| n == ns && c == class).collect();
        for (member, is_const) in &declared {
            let variants: Vec<String> = match member.as_str() {
                "C1" => vec!["C1".into(), "C2".into()],
                "D1" => vec!["D1".into(), "D2".into()],
                m => vec![m.to_string()],
            };
            for v in variants {
                assert!(
                    symbols.iter().any(|(_, _, m, k)| *m == v && k == is_const),
                    "{path}: {ns}::{class}::{v} (const: {is_const}) is declared out of line but not exported"
                );
            }
        }
        for (_, _, member, is_const) in &symbols {
            let as_declared = match member.as_str() {
                "C2" => "C1",
                "D2" => "D1",
                m => m,
            };
            assert!(
                declared.iter().any(|(m, k)| m == as_declared && k == is_const),
                "{path}: the library exports {ns}::{class}::{member} (const: {is_const}), which the shim does not declare"
            );
            covered += 1;
        }
    }
    assert_eq!(covered, list.len(), "a GE symbol names a class none of the shims declares");
}

/// Each exported function is declared once, and every one of them is in the header: a source
/// file cbindgen does not reach, or reaches twice, shows up here.
#[test]
fn header_declares_every_exported_function_once() {
    let header = generate(&root());
    let exported: Vec<String> = extern_fns().into_iter().filter(|f| f.export == Export::C).map(|f| f.name).collect();
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
    // GE's C++ symbols and the C++ unit's helpers are not C functions of the header.
    for foreign in ["_ZN", "stream_alloc_cxx_", "GeStreamAllocator"] {
        assert!(!header.contains(foreign), "include/stream_alloc.h declares {foreign}...");
    }
}
