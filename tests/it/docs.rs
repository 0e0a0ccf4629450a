//! The commands README.md and docs/*.md show with their output are run, and what they print is
//! compared with what the page shows, so that the pages cannot drift from the tool.
//!
//! What a page writes for a command's output to be checked (every such block is picked up; a
//! command shown without output is not run):
//!
//! - A ` ```console ` block: each line starting with `$ ` is a command (a line ending in `\`
//!   continues on the next); the lines after it, up to the next `$ ` line or the end of the
//!   block, are what it prints: standard output, then standard error.
//! - A ` ```sh ` (or `bash`, `shell`) block holding one command, followed directly (only blank
//!   lines between) by a ` ```text ` block: the text block is that command's output. Two commands
//!   in such a block are an error (which one printed it?).
//! - A ` ```python ` block followed directly by a ` ```text ` block: the script runs with
//!   `python3` (the repository's `.venv` first on `PATH`) and the text block is what it prints.
//! - Shown output the runner cannot run is an error unless the block is skipped (below): `$ `
//!   prompts in a `sh` block (use `console`), a Python session with `>>> ` prompts (use a
//!   `python` block and a `text` block).
//! - Commands run with `bash -c`, in page order, in one scratch directory per page where every
//!   top-level entry of the repository (`corpus/`, `tests/`, `examples/`, ...) is linked, so a
//!   file one command writes the next one reads. `stream-alloc` on `PATH` is the tool this
//!   `cargo test` built, and `cargo run --release --` (or `cargo run --`) reads as `stream-alloc`;
//!   the repository's `.venv/bin`, when present, comes first on `PATH`.
//! - Output is compared line by line, exactly, after trailing blanks are dropped and two kinds of
//!   text are read as patterns on both sides: a wall-clock time (a number and `ms`, `s` or `µs`
//!   after `time: `, ` in ` or `took `) and an absolute path (a word that starts with `/`). An
//!   expected line `...` stands for any number of lines.
//! - Directives, one HTML comment each (invisible on the rendered page), on the lines directly
//!   before the block:
//!   - `<!-- docs-test: stand-in NAME PATH -->` links the repository's file PATH as NAME in the
//!     scratch directory: the fixture that stands in for a file the reader makes (an ONNX export);
//!   - `<!-- docs-test: exit N -->` every command of the block exits with N (default 0);
//!   - `<!-- docs-test: needs PROGRAM -->` the block runs where PROGRAM is on `PATH`, and is listed
//!     as skipped elsewhere (`SA_DOCS_STRICT=1` makes that a failure);
//!   - `<!-- docs-test: skip REASON -->` the block is not run (a GPU, the network); it is listed.
//! - `SA_BLESS=1 cargo test --release --test it docs::` rewrites every shown output that differs
//!   with what the command printed (the page then shows this run's times); an output the page
//!   shortens with `...` is left for a hand edit.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A command with the output a page shows for it.
#[derive(Debug, PartialEq)]
struct Shown {
    /// 1-based line of the command in the page.
    line: usize,
    command: String,
    /// Lines (0-based, end exclusive) of the page holding the shown output.
    output: std::ops::Range<usize>,
    expected: Vec<String>,
    exit: i32,
    stand_ins: Vec<(String, String)>,
    needs: Vec<String>,
    skip: Option<String>,
}

/// Directives from the HTML comments directly before a block.
#[derive(Default, Clone)]
struct Directives {
    exit: i32,
    stand_ins: Vec<(String, String)>,
    needs: Vec<String>,
    skip: Option<String>,
}

fn directives(lines: &[&str], fence: usize) -> Result<Directives, String> {
    let mut d = Directives::default();
    let mut i = fence;
    while i > 0 && lines[i - 1].trim_start().starts_with("<!-- docs-test:") {
        i -= 1;
        let body = lines[i].trim().trim_start_matches("<!-- docs-test:").trim_end_matches("-->").trim();
        let (key, rest) = body.split_once(' ').unwrap_or((body, ""));
        let rest = rest.trim();
        match key {
            "exit" => d.exit = rest.parse().map_err(|_| format!("line {}: bad exit code '{rest}'", i + 1))?,
            "stand-in" => match rest.split_whitespace().collect::<Vec<_>>()[..] {
                [name, path] => d.stand_ins.push((name.to_string(), path.to_string())),
                _ => return Err(format!("line {}: stand-in needs NAME PATH", i + 1)),
            },
            "needs" if !rest.is_empty() => d.needs.push(rest.to_string()),
            "skip" if !rest.is_empty() => d.skip = Some(rest.to_string()),
            _ => return Err(format!("line {}: unknown docs-test directive '{body}'", i + 1)),
        }
    }
    Ok(d)
}

/// The fenced blocks of a page: (info string, line of the opening fence, body lines range).
fn blocks(lines: &[&str]) -> Vec<(String, usize, std::ops::Range<usize>)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let t = lines[i].trim_start();
        if let Some(info) = t.strip_prefix("```") {
            let start = i + 1;
            let mut end = start;
            while end < lines.len() && lines[end].trim_start() != "```" {
                end += 1;
            }
            out.push((info.trim().to_string(), i, start..end));
            i = end + 1;
        } else {
            i += 1;
        }
    }
    out
}

fn shown_commands(page: &str) -> Result<Vec<Shown>, String> {
    let lines: Vec<&str> = page.lines().collect();
    let all = blocks(&lines);
    let mut out = Vec::new();
    for (k, (info, fence, body)) in all.iter().enumerate() {
        let d = directives(&lines, *fence)?;
        let make = |line: usize, command: String, output: std::ops::Range<usize>| Shown {
            line,
            command,
            expected: lines[output.clone()].iter().map(|l| l.trim_end().to_string()).collect(),
            output,
            exit: d.exit,
            stand_ins: d.stand_ins.clone(),
            needs: d.needs.clone(),
            skip: d.skip.clone(),
        };
        if info == "console" {
            let mut i = body.start;
            while i < body.end {
                let Some(first) = lines[i].strip_prefix("$ ") else {
                    return Err(format!("line {}: a console block line before any `$ ` command", i + 1));
                };
                let line = i + 1;
                let mut command = first.to_string();
                while command.ends_with('\\') && i + 1 < body.end {
                    i += 1;
                    command.pop();
                    command.push_str(lines[i].trim_start_matches('>').trim_start());
                }
                i += 1;
                let start = i;
                while i < body.end && !lines[i].starts_with("$ ") {
                    i += 1;
                }
                out.push(make(line, command, start..i));
            }
        } else if let Some(problem) = unrunnable(info, &lines[body.clone()]).filter(|_| d.skip.is_none()) {
            return Err(format!("line {}: {problem}", fence + 1));
        } else if ["sh", "bash", "shell", "python"].contains(&info.as_str()) {
            let Some((next_info, next_fence, next_body)) = all.get(k + 1) else { continue };
            let between = body.end + 1..*next_fence;
            if next_info != "text" || lines[between].iter().any(|l| !l.trim().is_empty()) {
                continue;
            }
            if info == "python" {
                let script = lines[body.clone()].join("\n");
                let command = format!("python3 - <<'SA_DOCS_PYTHON'\n{script}\nSA_DOCS_PYTHON");
                out.push(make(fence + 1, command, next_body.clone()));
                continue;
            }
            let commands: Vec<usize> =
                body.clone().filter(|&i| !lines[i].trim().is_empty() && !lines[i].trim().starts_with('#')).collect();
            let [line] = commands[..] else {
                return Err(format!(
                    "line {}: a {info} block followed by its output holds {} commands",
                    fence + 1,
                    commands.len()
                ));
            };
            out.push(make(line + 1, lines[line].to_string(), next_body.clone()));
        }
    }
    Ok(out)
}

/// A block that shows output in a form the runner cannot run: the page must use one it can
/// (or say why not with `skip`).
fn unrunnable(info: &str, body: &[&str]) -> Option<&'static str> {
    let has = |prefix: &str| body.iter().any(|l| l.starts_with(prefix));
    match info {
        "sh" | "bash" | "shell" | "shell-session" if has("$ ") => {
            Some("a shell block with `$ ` prompts: write it as a ```console block")
        }
        "pycon" | "python" | "py" if has(">>> ") => Some(
            "an interactive Python session is not run: show the script as a ```python block and \
             what it prints as a ```text block right after it",
        ),
        _ => None,
    }
}

/// Wall-clock times and absolute paths read as one pattern each.
fn normalise(line: &str) -> String {
    let mut s = line.trim_end().to_string();
    for prefix in ["time: ", " in ", "took "] {
        let mut from = 0;
        while let Some(p) = s[from..].find(prefix) {
            let num_start = from + p + prefix.len();
            let rest = &s[num_start..];
            let num_len = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
            let after = &rest[num_len..];
            let unit = ["ms", "µs", "us", "s"].into_iter().find(|u| {
                after
                    .strip_prefix(' ')
                    .and_then(|a| a.strip_prefix(u))
                    .is_some_and(|t| !t.starts_with(char::is_alphanumeric))
            });
            if num_len > 0 && rest.starts_with(|c: char| c.is_ascii_digit()) && unit.is_some() {
                s.replace_range(num_start..num_start + num_len, "<time>");
                from = num_start + "<time>".len();
            } else {
                from = num_start;
            }
        }
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.char_indices().peekable();
    let mut prev = ' ';
    while let Some((_, c)) = chars.next() {
        let word_start = prev.is_whitespace() || "('\"`=".contains(prev);
        if c == '/' && word_start && chars.peek().is_some_and(|&(_, n)| n.is_alphanumeric() || n == '.' || n == '_') {
            while chars.peek().is_some_and(|&(_, n)| !n.is_whitespace() && !"'\"`),:".contains(n)) {
                chars.next();
            }
            out.push_str("<path>");
            prev = 'x';
            continue;
        }
        out.push(c);
        prev = c;
    }
    out
}

/// Whether `actual` matches `expected` (both normalised), where an expected `...` line matches
/// any run of lines.
fn matches(expected: &[String], actual: &[String]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((e, rest)) if e == "..." => (0..=actual.len()).any(|k| matches(rest, &actual[k..])),
        Some((e, rest)) => actual.split_first().is_some_and(|(a, more)| a == e && matches(rest, more)),
    }
}

/// The lines one side has and the other lacks (normalised; `...` lines aside), for the failure
/// message: a whole corpus table is too long to read twice.
fn difference(expected: &[String], actual: &[String]) -> String {
    let (e, a) = (trimmed(expected), trimmed(actual));
    let elided = e.iter().any(|l| l == "...");
    let mut out = String::from("-- shown on the page, not printed:\n");
    for l in e.iter().filter(|l| *l != "..." && !a.contains(l)) {
        out.push_str(&format!("   {l}\n"));
    }
    if !elided {
        out.push_str("-- printed, not shown on the page:\n");
        for l in a.iter().filter(|l| !e.contains(l)) {
            out.push_str(&format!("   {l}\n"));
        }
    }
    out.push_str("(SA_BLESS=1 cargo test --release --test it docs:: writes what the commands print into the pages)");
    out
}

fn trimmed(lines: &[String]) -> Vec<String> {
    let mut v: Vec<String> = lines.iter().map(|l| normalise(l)).collect();
    while v.last().is_some_and(|l| l.is_empty()) {
        v.pop();
    }
    v
}

/// A scratch directory for one page: the repository's top-level entries linked, the tool on
/// `PATH` through `.bin/`.
struct Scratch(PathBuf);

impl Scratch {
    fn new(root: &Path, page: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("sa-docs-{}-{}", std::process::id(), page.replace('/', "_")));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join(".bin")).unwrap();
        for e in std::fs::read_dir(root).unwrap() {
            let e = e.unwrap();
            let name = e.file_name();
            if name == ".git" || name == "target" || name == ".bin" {
                continue;
            }
            std::os::unix::fs::symlink(e.path(), dir.join(&name)).unwrap();
        }
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_stream-alloc"), dir.join(".bin/stream-alloc")).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs one command in `dir`: exit code and output lines (standard output, then standard error).
fn run(root: &Path, dir: &Path, command: &str) -> Result<(i32, Vec<String>), String> {
    let command =
        command.replacen("cargo run --release -- ", "stream-alloc ", 1).replacen("cargo run -- ", "stream-alloc ", 1);
    let mut path = format!("{}:{}", dir.join(".bin").display(), std::env::var("PATH").unwrap_or_default());
    if root.join(".venv/bin").is_dir() {
        path = format!("{}:{path}", root.join(".venv/bin").display());
    }
    let out_file = dir.join(".bin/stdout");
    let err_file = dir.join(".bin/stderr");
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(&command)
        .current_dir(dir)
        .env("PATH", path)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_file).unwrap())
        .stderr(std::fs::File::create(&err_file).unwrap())
        .spawn()
        .map_err(|e| format!("bash: {e}"))?;
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break s;
        }
        if start.elapsed() > Duration::from_secs(300) {
            let _ = child.kill();
            let _ = child.wait();
            return Err("still running after 300 s".into());
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut text = std::fs::read_to_string(&out_file).unwrap_or_default();
    text.push_str(&std::fs::read_to_string(&err_file).unwrap_or_default());
    Ok((status.code().unwrap_or(-1), text.lines().map(str::to_string).collect()))
}

fn on_path(program: &str, root: &Path) -> bool {
    let venv = root.join(".venv/bin").join(program);
    venv.exists()
        || std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

/// Runs every shown command of one page; returns failures, skips and the number checked.
fn check_page(root: &Path, rel: &str, bless: bool) -> (Vec<String>, Vec<String>, usize) {
    let path = root.join(rel);
    let page = std::fs::read_to_string(&path).unwrap();
    let shown = match shown_commands(&page) {
        Ok(s) => s,
        Err(e) => return (vec![format!("{rel}: {e}")], Vec::new(), 0),
    };
    if shown.is_empty() {
        return (Vec::new(), Vec::new(), 0);
    }
    let strict = std::env::var("SA_DOCS_STRICT").is_ok_and(|v| v == "1");
    let scratch = Scratch::new(root, rel);
    let (mut failures, mut skips, mut checked) = (Vec::new(), Vec::new(), 0);
    let mut rewrites: BTreeMap<usize, (std::ops::Range<usize>, Vec<String>)> = BTreeMap::new();
    for s in &shown {
        let at = format!("{rel}:{}: `{}`", s.line, s.command);
        if let Some(reason) = &s.skip {
            skips.push(format!("{at}: {reason}"));
            continue;
        }
        if let Some(missing) = s.needs.iter().find(|p| !on_path(p, root)) {
            let msg = format!("{at}: needs {missing}, not on PATH");
            if strict {
                failures.push(msg)
            } else {
                skips.push(msg)
            }
            continue;
        }
        for (name, target) in &s.stand_ins {
            let link = scratch.0.join(name);
            let _ = std::fs::remove_file(&link);
            if let Err(e) = std::os::unix::fs::symlink(root.join(target), &link) {
                failures.push(format!("{at}: stand-in {name}: {e}"));
            }
            if !root.join(target).exists() {
                failures.push(format!("{at}: stand-in {name}: {target} does not exist"));
            }
        }
        checked += 1;
        let (code, actual) = match run(root, &scratch.0, &s.command) {
            Ok(r) => r,
            Err(e) => {
                failures.push(format!("{at}: {e}"));
                continue;
            }
        };
        let ok_output = matches(&trimmed(&s.expected), &trimmed(&actual));
        let elided = s.expected.iter().any(|l| l.trim_end() == "...");
        if bless && !ok_output && elided {
            failures.push(format!(
                "{at}: the output differs, and the page leaves part of it out (`...`): update it by hand\n{}",
                difference(&s.expected, &actual)
            ));
        } else if bless && !ok_output {
            rewrites.insert(s.output.start, (s.output.clone(), actual.clone()));
        }
        if code != s.exit {
            failures.push(format!(
                "{at}: exit {code}, the page expects {}; it printed:\n{}",
                s.exit,
                actual.join("\n")
            ));
        } else if !ok_output && !bless {
            failures.push(format!("{at}: the output differs from the page\n{}", difference(&s.expected, &actual)));
        }
    }
    if !rewrites.is_empty() {
        let mut lines: Vec<String> = page.lines().map(str::to_string).collect();
        for (_, (range, actual)) in rewrites.into_iter().rev() {
            lines.splice(range, actual);
        }
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    }
    (failures, skips, checked)
}

/// README.md and every page under docs/.
fn pages(root: &Path) -> Vec<String> {
    let mut v = vec!["README.md".to_string()];
    let mut docs: Vec<String> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    docs.sort();
    v.extend(docs);
    v
}

#[test]
fn shown_commands_print_what_the_pages_show() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bless = std::env::var("SA_BLESS").is_ok_and(|v| v == "1");
    let (mut failures, mut skips, mut checked) = (Vec::new(), Vec::new(), BTreeMap::new());
    for rel in pages(root) {
        let (f, s, n) = check_page(root, &rel, bless);
        failures.extend(f);
        skips.extend(s);
        checked.insert(rel, n);
    }
    for s in &skips {
        eprintln!("docs: skipped {s}");
    }
    for (page, n) in checked.iter().filter(|(_, n)| **n > 0) {
        eprintln!("docs: {n} shown command(s) of {page} run and compared");
    }
    assert!(
        failures.is_empty(),
        "{} shown command(s) differ from the page:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    // The README's own commands are found: a parser that finds none would pass everything.
    assert!(checked["README.md"] >= 5, "only {} shown commands found in README.md", checked["README.md"]);
}

#[test]
fn blocks_commands_and_outputs_are_read_as_the_convention_says() {
    let page = "text\n<!-- docs-test: stand-in m.onnx tests/fixtures/onnx/cnn.onnx -->\n<!-- docs-test: exit 1 -->\n```console\n$ stream-alloc a \\\n  --b\nout 1\n\n$ stream-alloc c\n```\n\n```sh\ncargo run --release -- allocate x.json\n```\n\n```text\nx: 1 nodes\n```\n```sh\nnot shown\n```\n";
    let s = shown_commands(page).unwrap();
    assert_eq!(s.len(), 3);
    assert_eq!(
        (s[0].line, s[0].command.as_str(), s[0].expected.clone()),
        (5, "stream-alloc a --b", vec!["out 1".to_string(), String::new()])
    );
    assert_eq!((s[0].exit, s[0].stand_ins.len()), (1, 1));
    assert_eq!((s[1].command.as_str(), s[1].expected.len()), ("stream-alloc c", 0));
    assert_eq!(
        (s[2].line, s[2].command.as_str(), s[2].expected.clone(), s[2].exit),
        (13, "cargo run --release -- allocate x.json", vec!["x: 1 nodes".to_string()], 0)
    );
    let two = "```sh\na\nb\n```\n```text\nout\n```\n";
    assert!(shown_commands(two).unwrap_err().contains("holds 2 commands"));
    assert!(shown_commands("```console\nout\n```\n").is_err());
    assert!(shown_commands("<!-- docs-test: skipp x -->\n```console\n$ a\n```\n").unwrap_err().contains("unknown"));
    let py = "```python\nprint(1 + 1)\n```\n\n```text\n2\n```\n";
    let s = shown_commands(py).unwrap();
    assert_eq!((s.len(), s[0].line, s[0].expected.clone()), (1, 1, vec!["2".to_string()]));
    assert!(s[0].command.starts_with("python3 - <<'SA_DOCS_PYTHON'\nprint(1 + 1)\n"));
    assert!(shown_commands("```sh\n$ stream-alloc x\n```\n").unwrap_err().contains("console"));
    assert!(shown_commands("```pycon\n>>> 1 + 1\n2\n```\n").unwrap_err().contains("interactive"));
    assert!(shown_commands("<!-- docs-test: skip a GPU -->\n```pycon\n>>> 1 + 1\n2\n```\n").is_ok());
    assert!(shown_commands("```python\nprint(1)\n```\nno output shown\n").unwrap().is_empty());
}

#[test]
fn times_and_paths_are_patterns_and_the_rest_is_exact() {
    let lines = |t: &str| trimmed(&t.lines().map(str::to_string).collect::<Vec<_>>());
    let shown = lines("  time: 15.794 ms\nimported in 13.1 ms from /home/me/m.onnx\nmakespan 120.5 µs");
    assert!(matches(&shown, &lines("  time: 0.9 ms\nimported in 2 ms from /tmp/sa-docs-1/m.onnx\nmakespan 120.5 µs")));
    // A simulated makespan is no wall-clock time: it must match exactly.
    assert!(!matches(&shown, &lines("  time: 0.9 ms\nimported in 2 ms from /tmp/m.onnx\nmakespan 120.6 µs")));
    assert!(!matches(&shown, &lines("  time: 0.9 ms\nimported in 2 ms from /tmp/m.onnx")));
    assert_eq!(normalise("min / median / max, a/b (x)"), "min / median / max, a/b (x)");
    assert!(matches(&lines("a\n...\nz"), &lines("a\nb\nc\nz")));
    assert!(matches(&lines("a\n...\nz"), &lines("a\nz")));
    assert!(!matches(&lines("a\n...\nz"), &lines("a\nb")));
}
