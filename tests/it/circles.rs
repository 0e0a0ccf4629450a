//! No circle of files in `src/`: follow every `crate::`, `super::` and `self::` path of a file to
//! the file that defines the module it names, and no two files may reach each other that way.
//!
//! A file and the modules under it are one room: `compile/sync/mod.rs` re-exporting its
//! children and a child naming `super::` is how a module is built, not a circle. So an edge
//! between two files counts between the two sibling modules they sit in under their nearest
//! common module (`compile/sync/insert.rs` naming `crate::compile::split::X` is an edge from
//! `compile/sync` to `compile/split`), and an edge from a module into its own submodules or
//! parents is not one. Comments, strings and char literals are not read; a path inside an
//! inline `mod NAME { … }` (a test module) starts from that inline module. Any strongly connected
//! set of two or more modules fails, with the lines that make it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One file of the tree: its path under `src/`, the module path it defines, and the crate root
/// its `crate::` paths start from (`lib.rs`, or `main.rs` for the binary's `cli/`).
struct File {
    rel: String,
    module: Vec<String>,
    bin: bool,
}

fn file_of(rel: &str) -> File {
    let stem = rel.trim_end_matches(".rs");
    let mut module: Vec<String> = stem.split('/').map(str::to_string).collect();
    if module.last().is_some_and(|m| m == "mod") || stem == "lib" || stem == "main" {
        module.pop();
    }
    File { rel: rel.to_string(), bin: stem == "main" || stem.starts_with("cli/"), module }
}

/// The code of `text` with comments, strings and char literals blanked to spaces (newlines
/// kept), so that braces and paths are only the code's.
fn code_only(text: &str) -> Vec<u8> {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let blank = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to.min(b.len())] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    let mut i = 0;
    while i < b.len() {
        let ident_before = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if b[i..].starts_with(b"//") {
            let end = b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |p| i + p);
            blank(&mut out, i, end);
            i = end;
        } else if b[i..].starts_with(b"/*") {
            let (mut depth, mut j) = (0, i);
            while j < b.len() {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            blank(&mut out, i, j);
            i = j;
        } else if !ident_before
            && (b[i] == b'r' || (b[i] == b'b' && b.get(i + 1) == Some(&b'r')))
            && raw_start(b, i).is_some()
        {
            let (open, hashes) = raw_start(b, i).unwrap();
            let close: Vec<u8> = std::iter::once(b'"').chain(std::iter::repeat_n(b'#', hashes)).collect();
            let end = b[open + 1..]
                .windows(close.len())
                .position(|w| w == close)
                .map_or(b.len(), |p| open + 1 + p + close.len());
            blank(&mut out, i, end);
            i = end;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            blank(&mut out, i, j + 1);
            i = j + 1;
        } else if b[i] == b'\'' {
            // A char literal ('x', '\n', '\u{7f}', '{'), not a lifetime ('a).
            let end = if b.get(i + 1) == Some(&b'\\') {
                b[i + 2..].iter().position(|&c| c == b'\'').map(|p| i + 2 + p + 1)
            } else {
                let ch = text[i + 1..].chars().next().map_or(1, char::len_utf8);
                (b.get(i + 1 + ch) == Some(&b'\'')).then_some(i + 2 + ch)
            };
            match end {
                Some(end) => {
                    blank(&mut out, i, end);
                    i = end;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    out
}

/// Where a raw string starting at `i` (`r"`, `r#"`, `br#"`) opens its quote, and its `#` count.
fn raw_start(b: &[u8], i: usize) -> Option<(usize, usize)> {
    let mut j = i + if b[i] == b'b' { 2 } else { 1 };
    let hashes = b[j..].iter().take_while(|&&c| c == b'#').count();
    j += hashes;
    (b.get(j) == Some(&b'"')).then_some((j, hashes))
}

fn ident_at(b: &[u8], i: usize) -> Option<&str> {
    let n = b[i..].iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'_').count();
    (n > 0 && !b[i].is_ascii_digit()).then(|| std::str::from_utf8(&b[i..i + n]).unwrap())
}

fn skip_space(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// The paths of one path expression starting at `i` after `prefix` (a `::`-separated list of
/// names, possibly ending in a `{…}` group of further paths): each as its full list of names.
fn paths_at(b: &[u8], mut i: usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
    let mut segs = prefix;
    loop {
        i = skip_space(b, i);
        if b.get(i) == Some(&b'{') {
            i += 1;
            loop {
                i = skip_space(b, i);
                match b.get(i) {
                    None => return i,
                    Some(b'}') => return i + 1,
                    Some(b',') => i += 1,
                    _ if ident_at(b, i) == Some("self") => {
                        out.push(segs.clone());
                        i += 4;
                    }
                    _ => {
                        let before = i;
                        i = paths_at(b, i, segs.clone(), out);
                        if i == before {
                            i += 1;
                        }
                    }
                }
            }
        }
        let Some(name) = ident_at(b, i) else {
            out.push(segs);
            return i;
        };
        segs.push(name.to_string());
        i += name.len();
        let j = skip_space(b, i);
        if b[j..].starts_with(b"::") && !b[j + 2..].starts_with(b"<") {
            i = j + 2;
        } else {
            out.push(segs);
            return i;
        }
    }
}

/// Every module path a file names, with its line: `crate::a::b` as `[a, b]`, `super::` and
/// `self::` made absolute from the module (inline ones included) the path is written in.
fn named_paths(file: &File, text: &str) -> Vec<(usize, Vec<String>)> {
    let b = code_only(text);
    let mut out = Vec::new();
    // Inline modules open at a brace depth: (depth inside, name).
    let (mut depth, mut inline): (usize, Vec<(usize, String)>) = (0, Vec::new());
    let mut pending_mod: Option<String> = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let ident_before = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if c == b'{' {
            depth += 1;
            if let Some(name) = pending_mod.take() {
                inline.push((depth, name));
            }
            i += 1;
            continue;
        }
        if c == b'}' {
            if inline.last().is_some_and(|(d, _)| *d == depth) {
                inline.pop();
            }
            depth = depth.saturating_sub(1);
            i += 1;
            continue;
        }
        if c == b';' {
            pending_mod = None;
        }
        let Some(word) = (!ident_before).then(|| ident_at(&b, i)).flatten() else {
            i += 1;
            continue;
        };
        let after = i + word.len();
        if word == "mod" {
            let j = skip_space(&b, after);
            if let Some(name) = ident_at(&b, j) {
                pending_mod = Some(name.to_string());
            }
            i = after;
            continue;
        }
        let starts_path = matches!(word, "crate" | "super" | "self") && b[after..].starts_with(b"::");
        if !starts_path {
            i = after;
            continue;
        }
        let here: Vec<String> = file.module.iter().cloned().chain(inline.iter().map(|(_, n)| n.clone())).collect();
        let (mut base, mut j) = match word {
            "crate" => (Vec::new(), after + 2),
            "self" => (here, after + 2),
            _ => (here[..here.len().saturating_sub(1)].to_vec(), after + 2),
        };
        while b[j..].starts_with(b"super::") {
            base.pop();
            j += "super::".len();
        }
        let line = 1 + b[..i].iter().filter(|&&c| c == b'\n').count();
        let mut paths = Vec::new();
        let end = paths_at(&b, j, base, &mut paths);
        out.extend(paths.into_iter().map(|p| (line, p)));
        i = end.max(after);
    }
    out
}

/// The file (under the tree) that defines the deepest module `path` names: `a/b.rs` or
/// `a/b/mod.rs`, the crate root for the empty path.
fn defining_file(files: &BTreeMap<String, File>, bin: bool, path: &[String]) -> Option<String> {
    let root = if bin { "main.rs" } else { "lib.rs" }.to_string();
    let mut found = files.contains_key(&root).then(|| root.clone());
    for k in 1..=path.len() {
        let stem = path[..k].join("/");
        let candidates = [format!("{stem}.rs"), format!("{stem}/mod.rs")];
        match candidates.into_iter().find(|c| files.contains_key(c) && files[c].bin == bin) {
            Some(f) => found = Some(f),
            None => break,
        }
    }
    found
}

/// Module-level edges: `(from, to) -> ["file:line", ...]`, between sibling modules.
type Edges = BTreeMap<(String, String), Vec<String>>;

fn edges(src: &Path) -> Edges {
    let mut paths = Vec::new();
    super::layers::rust_files(src, &mut paths);
    let files: BTreeMap<String, File> = paths
        .iter()
        .map(|p| {
            let rel = p.strip_prefix(src).unwrap().to_string_lossy().replace('\\', "/");
            (rel.clone(), file_of(&rel))
        })
        .collect();
    let mut out = Edges::new();
    for f in files.values() {
        let text = std::fs::read_to_string(src.join(&f.rel)).unwrap();
        for (line, path) in named_paths(f, &text) {
            let Some(target) = defining_file(&files, f.bin, &path) else { continue };
            let (a, b) = (&f.module, &files[&target].module);
            let k = a.iter().zip(b).take_while(|(x, y)| x == y).count();
            // The same module, or one inside the other: one room.
            if k == a.len() || k == b.len() {
                continue;
            }
            let key = (a[..=k].join("/"), b[..=k].join("/"));
            out.entry(key).or_default().push(format!("{}:{line}", f.rel));
        }
    }
    out
}

/// The strongly connected sets of two or more modules (Tarjan's algorithm), each sorted.
fn circles(edges: &Edges) -> Vec<Vec<String>> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges.keys() {
        next.entry(a).or_default().push(b);
        next.entry(b).or_default();
    }
    struct Tarjan<'a> {
        next: &'a BTreeMap<&'a str, Vec<&'a str>>,
        index: BTreeMap<&'a str, (usize, usize)>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, v: &'a str) {
            let n = self.index.len();
            self.index.insert(v, (n, n));
            self.stack.push(v);
            self.on.insert(v);
            for &w in &self.next[v] {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.index[v].1.min(self.index[w].1);
                    self.index.get_mut(v).unwrap().1 = low;
                } else if self.on.contains(w) {
                    let low = self.index[v].1.min(self.index[w].0);
                    self.index.get_mut(v).unwrap().1 = low;
                }
            }
            if self.index[v].0 == self.index[v].1 {
                let mut set = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on.remove(w);
                    set.push(w.to_string());
                    if w == v {
                        break;
                    }
                }
                if set.len() > 1 {
                    set.sort();
                    self.out.push(set);
                }
            }
        }
    }
    let mut t = Tarjan { next: &next, index: BTreeMap::new(), stack: Vec::new(), on: BTreeSet::new(), out: Vec::new() };
    for &v in next.keys() {
        if !t.index.contains_key(v) {
            t.visit(v);
        }
    }
    t.out.sort();
    t.out
}

/// Each circle with the lines that close it, for the failure message.
fn describe(edges: &Edges, found: &[Vec<String>]) -> String {
    let mut text = String::new();
    for set in found {
        text += &format!("circle: {}\n", set.join(" <-> "));
        for ((a, b), lines) in edges {
            if set.contains(a) && set.contains(b) {
                text += &format!("  {a} -> {b}: {}\n", lines.join(", "));
            }
        }
    }
    text
}

#[test]
fn no_circle_of_files_in_src() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src");
    let e = edges(&src);
    let found = circles(&e);
    assert!(found.is_empty(), "circles: {}\n{}", found.len(), describe(&e, &found));
}

/// Writes `files` (path under src/, text) into a fresh directory and returns its circles.
fn circles_of(name: &str, files: &[(&str, &str)]) -> Vec<Vec<String>> {
    let dir = std::env::temp_dir().join(format!("sa-circles-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (path, text) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let found = circles(&edges(&dir));
    std::fs::remove_dir_all(&dir).unwrap();
    found
}

/// The scan can fail: two sibling files naming each other are a circle, in any form of path,
/// and a module directory counts as one file to its siblings.
#[test]
fn the_scan_finds_a_circle() {
    let pair = [
        ("lib.rs", "pub mod a;\npub mod b;\n"),
        ("a.rs", "use crate::b::f;\npub fn g() {}\n"),
        ("b.rs", "pub fn f() { super::a::g() }\n"),
    ];
    assert_eq!(circles_of("pair", &pair), [["a", "b"]]);
    let grouped = [
        ("lib.rs", "pub mod x;\n"),
        ("x/mod.rs", "pub mod sync;\npub mod split;\n"),
        ("x/sync/mod.rs", "mod insert;\n"),
        ("x/sync/insert.rs", "use crate::{graph, x::{split::count, self}};\n"),
        ("x/split/mod.rs", "pub fn count() { let _ = crate::x::sync::MAX; }\n"),
    ];
    assert_eq!(circles_of("grouped", &grouped), [["x/split", "x/sync"]]);
    // Three files in a ring.
    let ring = [
        ("lib.rs", ""),
        ("a.rs", "use self::super::b::X;"),
        ("b.rs", "use crate::c::Y;"),
        ("c.rs", "fn f() { crate::a::z(); }"),
    ];
    assert_eq!(circles_of("ring", &ring), [["a", "b", "c"]]);
}

/// And it does not cry wolf: a parent and its children, comments, strings, char literals and
/// a one-way edge are no circle; `super::super` in an inline test module counts from it.
#[test]
fn the_scan_ignores_what_is_not_a_circle() {
    let files = [
        ("lib.rs", "pub mod p;\npub mod q;\n"),
        ("p/mod.rs", "pub mod c;\npub use self::c::X;\nfn f() { let _ = \"crate::q::Z\"; let _ = '{'; }\n"),
        ("p/c.rs", "use super::Y; // crate::q::Z\n/* crate::q::W */\npub struct X;\n"),
        (
            "q.rs",
            "use crate::p::X;\nlet s = r#\"crate::p\"#;\n#[cfg(test)]\nmod tests {\n    use super::super::p::c;\n}\n",
        ),
    ];
    assert!(circles_of("clean", &files).is_empty());
    // In the inline module, `super::super` is `d`: were the inline module not counted, it
    // would be the root, naming the root's `p`, and the circle of `d/p` and `d/q` would not close.
    let inline = [
        ("lib.rs", "pub mod d;\npub mod p;\n"),
        ("p.rs", "pub fn f() {}\n"),
        ("d/mod.rs", "pub mod p;\npub mod q;\n"),
        ("d/p.rs", "pub fn f() { crate::d::q::g() }\n"),
        ("d/q.rs", "pub fn g() {}\nmod tests {\n    use super::super::p::f;\n}\n"),
    ];
    assert_eq!(circles_of("inline", &inline), [["d/p", "d/q"]]);
}
