//! The command line as a newcomer meets it: pictures that render, pipes that close, usage
//! errors that say what was meant, a `verify` option that reports, summaries that stay short,
//! a checker that names a foreign allocation, and `compare` going on past a bad file.

use crate::common;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_stream-alloc"))
}

fn graph(name: &str) -> String {
    common::corpus_graph(name).to_str().unwrap().to_string()
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("stream-alloc-cli-usage-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The label strings of a DOT document, decoded as Graphviz reads them (`\"` a quote, `\\` a
/// backslash, `\n` a line break); panics on an unterminated string or unbalanced braces.
fn dot_labels(dot: &str) -> Vec<String> {
    let mut labels = Vec::new();
    let mut depth = 0i32;
    let mut plain = String::new();
    let mut chars = dot.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                let mut s = String::new();
                loop {
                    match chars.next().expect("unterminated DOT string") {
                        '"' => break,
                        '\\' => match chars.next().expect("unterminated DOT string") {
                            'n' => s.push('\n'),
                            '"' => s.push('"'),
                            '\\' => s.push('\\'),
                            other => {
                                s.push('\\');
                                s.push(other)
                            }
                        },
                        other => s.push(other),
                    }
                }
                if plain.trim_end().ends_with("label=") {
                    labels.push(s);
                }
                plain.clear();
            }
            '{' => depth += 1,
            '}' => depth -= 1,
            c => plain.push(c),
        }
        assert!(depth >= 0, "unbalanced braces in {dot}");
    }
    assert_eq!(depth, 0, "unbalanced braces in {dot}");
    labels
}

/// Graphviz's `dot -Tsvg` on `text`, its wall time; `None` when Graphviz is not installed.
/// Fails when it errs or runs past `limit`.
fn render(text: &str, limit: Duration) -> Option<Duration> {
    if Command::new("dot").arg("-V").output().is_err() {
        eprintln!("Graphviz is not installed: the DOT is checked but not rendered");
        return None;
    }
    let input = tmp(&format!("render-{}.dot", text.len()));
    std::fs::write(&input, text).unwrap();
    let start = Instant::now();
    let mut child =
        Command::new("dot").arg("-Tsvg").arg(&input).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "Graphviz failed on {}", input.display());
            return Some(start.elapsed());
        }
        if start.elapsed() > limit {
            child.kill().ok();
            child.wait().ok();
            panic!("Graphviz did not finish {} in {limit:?}", input.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

const AWKWARD: &str = r#"{"format":"stream-graph","version":1,"name":"quote \"q\" back\\slash",
 "nodes":[{"name":"in","type":"Data","engine":"DNN_VM_GE_LOCAL","tasks":0},
          {"name":"a \"s1\" \\n","type":"Conv2D","engine":"AIcoreEngine","attrs":{"user_stream_label":"lab \"s0\" \\ end"}},
          {"name":"b","type":"Relu","engine":"AIcoreEngine"}],
 "edges":[{"src":"in","dst":"a \"s1\" \\n"},{"src":"a \"s1\" \\n","dst":"b"}]}"#;

#[test]
fn dot_labels_break_lines_and_keep_names_intact() {
    let g = tmp("awkward.json");
    std::fs::write(&g, AWKWARD).unwrap();
    let g = g.to_str().unwrap();
    let r = run(&["dot", g]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
    let dot = text(&r.stdout);
    let labels = dot_labels(&dot);
    assert!(labels.contains(&"a \"s1\" \\n\nConv2D · s0".to_string()), "{labels:?}");
    assert!(labels.contains(&"in\nData".to_string()), "{labels:?}");
    render(&dot, Duration::from_secs(60));

    let r = run(&["summary", g, "--format", "dot"]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
    let dot = text(&r.stdout);
    let labels = dot_labels(&dot);
    assert!(labels.iter().any(|l| l.starts_with("logical stream 0\nphysical 0\n")), "{labels:?}");
    assert!(labels.iter().any(|l| l.ends_with("\nlabel lab \"s0\" \\ end")), "{labels:?}");
    render(&dot, Duration::from_secs(60));

    // The README's picture: two lines per node, no literal backslash.
    let dot =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/squeezenet1_1-auto.dot")).unwrap();
    let labels = dot_labels(&dot);
    assert!(labels.len() > 100);
    assert!(labels.iter().all(|l| !l.contains('\\')), "a label shows a backslash");
    assert_eq!(labels.iter().filter(|l| l.lines().count() == 2).count(), 119);
    let r = run(&["dot", &graph("squeezenet1_1.json"), "--option", "policy=auto"]);
    assert_eq!(text(&r.stdout), dot, "docs/squeezenet1_1-auto.dot is stale: bash scripts/compare.sh");
}

#[test]
fn dot_of_a_training_graph_draws_streams_and_renders_in_seconds() {
    let g = graph("resnet50_train.json");
    let alloc: serde_json::Value =
        serde_json::from_slice(&run(&["allocate", &g, "--format", "json", "-q"]).stdout).unwrap();
    let syncs = alloc["syncs"].as_array().unwrap().len();
    let r = run(&["dot", &g]);
    assert_eq!(r.status.code(), Some(0), "{}", text(&r.stderr));
    assert!(text(&r.stderr).contains("--view nodes"), "auto says what it chose: {}", text(&r.stderr));
    let dot = text(&r.stdout);
    let boxes: Vec<&str> =
        dot.lines().filter(|l| l.trim_start().starts_with('s') && l.contains("[label=") && !l.contains("->")).collect();
    let used: std::collections::BTreeSet<i64> = alloc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["inserted"] != true)
        .map(|n| n["stream"].as_i64().unwrap())
        .filter(|&s| s >= 0)
        .collect();
    assert_eq!(boxes.len(), used.len(), "one box per stream that runs a node of the graph: {dot}");
    let counted: usize = dot
        .lines()
        .filter(|l| l.contains(" -> "))
        .map(|l| l.split("label=\"").nth(1).unwrap().split('"').next().unwrap().parse::<usize>().unwrap())
        .sum();
    assert!(counted > 0 && counted <= syncs, "{counted} syncs drawn of {syncs}");
    assert!(dot_labels(&dot).iter().any(|l| l.starts_with("no stream · 325 node(s)")));
    if let Some(t) = render(&dot, Duration::from_secs(60)) {
        eprintln!("Graphviz on resnet50_train, one box per stream: {t:?}");
    }
    // Every node on request; a small graph draws every node by default.
    let nodes = text(&run(&["dot", &g, "--view", "nodes"]).stdout);
    assert!(nodes.lines().filter(|l| l.trim_start().starts_with('n') && l.contains("[label=")).count() == 1055);
    let small = run(&["dot", &graph("squeezenet1_1.json")]);
    assert!(small.stderr.is_empty() && text(&small.stdout).contains("n3 [label="));
    let streams = text(&run(&["dot", &graph("squeezenet1_1.json"), "--view", "streams"]).stdout);
    assert!(streams.contains("s0 [label=\"stream 0 ·"), "{streams}");
}

/// Starts a command with standard output and error pipes whose reading ends are closed at
/// once, as `| head -1` closes them; the exit code.
fn with_closed_pipes(args: &[&str]) -> Option<i32> {
    let mut child = bin().args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    drop(child.stdout.take());
    drop(child.stderr.take());
    child.wait().unwrap().code()
}

#[test]
fn no_command_panics_on_a_closed_stdout() {
    let g = graph("resnet50_train.json");
    let alloc = tmp("train.alloc.json");
    assert_eq!(run(&["allocate", &g, "-o", alloc.to_str().unwrap()]).status.code(), Some(0));
    let alloc = alloc.to_str().unwrap();
    let other = tmp("squeeze.alloc.json");
    assert_eq!(run(&["allocate", &graph("squeezenet1_1.json"), "-o", other.to_str().unwrap()]).status.code(), Some(0));
    let cases: &[(&[&str], i32)] = &[
        (&["allocate", &g, "--format", "json"], 0),
        (&["allocate", &g, "--option", "policy=min-streams", "--option", "verify=true"], 0),
        (
            &[
                "allocate",
                &g,
                "--option",
                "enable_single_stream=true",
                "--option",
                "auto_multistream_parallel_mode=MainStream:2",
                "--format",
                "json",
            ],
            1,
        ),
        (&["pass", "AssignByDependencyPass", &g], 0),
        (&["check", &g, alloc], 0),
        (&["check", &g, other.to_str().unwrap()], 1),
        (&["summary", &g], 0),
        (&["summary", &g, "--format", "json"], 0),
        (&["summary", &g, "--format", "dot"], 0),
        (&["simulate", &g], 0),
        (&["simulate", &g, "--json"], 0),
        (&["dot", &g], 0),
        (&["dot", &g, "--view", "nodes"], 0),
        (&["dot", &g, alloc], 0),
        (&["compare", &g, "--policies", "ge,single", "--format", "json"], 0),
        (&["allocate", &g, "--option", "nosuch=1"], 2),
        (&["--help"], 0),
        (&["dot", "--help"], 0),
    ];
    for (args, code) in cases {
        assert_eq!(with_closed_pipes(args), Some(*code), "{args:?}");
    }
    // Through a shell, the way it was reported.
    if Command::new("sh").arg("-c").arg("true").status().is_ok() {
        let exe = env!("CARGO_BIN_EXE_stream-alloc");
        for cmd in ["pass AssignByDependencyPass", "dot --view nodes"] {
            let line = format!("'{exe}' {cmd} '{g}' | head -1 >/dev/null; echo ${{PIPESTATUS[0]}}");
            let r = Command::new("bash").arg("-c").arg(&line).output().unwrap();
            assert_eq!(text(&r.stdout).trim(), "0", "{cmd} | head -1: {}", text(&r.stderr));
            assert!(!text(&r.stderr).contains("panicked"), "{}", text(&r.stderr));
        }
    }
}

#[test]
fn usage_errors_exit_2_with_a_tip_and_write_nothing() {
    let g = graph("squeezenet1_1.json");
    let out = tmp("usage.json");
    let o = out.to_str().unwrap();
    let commands: &[&[&str]] = &[
        &["allocate", &g, "-o", o],
        &["pass", "AssignByDependencyPass", &g, "-o", o],
        &["summary", &g],
        &["simulate", &g],
        &["dot", &g, "-o", o],
        &["compare", &g],
    ];
    for cmd in commands {
        std::fs::remove_file(&out).ok();
        let r = bin().args(*cmd).args(["--option", "verfy=true"]).output().unwrap();
        let err = text(&r.stderr);
        assert_eq!(r.status.code(), Some(2), "{cmd:?}: {err}");
        assert!(
            err.contains("unknown option name 'verfy'") && err.contains("a similar option exists: 'verify'"),
            "{err}"
        );
        assert!(err.contains(&format!("stream-alloc {} --help", cmd[0])), "{err}");
        assert!(r.stdout.is_empty() && !out.exists(), "{cmd:?}: a usage error writes nothing");

        let r = bin().args(*cmd).args(["--option", "nosuch=1"]).output().unwrap();
        assert_eq!(r.status.code(), Some(2));
        assert!(!text(&r.stderr).contains("tip"), "no tip for a name far from every option");
        let r = bin().args(*cmd).args(["--option", "verify"]).output().unwrap();
        assert_eq!(r.status.code(), Some(2));
        assert!(text(&r.stderr).contains("KEY=VALUE"));
    }
    // GE's names, misspelt, get GE's name.
    let r = run(&["allocate", &g, "--option", "ge.enableSingleStrem=true"]);
    assert_eq!(r.status.code(), Some(2));
    assert!(text(&r.stderr).contains("'ge.enableSingleStream'"), "{}", text(&r.stderr));
    // A bad --policies value is usage too; a bad value of a known option is GE's E10001.
    assert_eq!(run(&["compare", &g, "--policies", "ge,nonsense"]).status.code(), Some(2));
    let r = run(&["allocate", &g, "--option", "verify=maybe", "-o", o]);
    assert_eq!(r.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(doc["error"]["code"], "E10001");
}

#[test]
fn verify_reports_the_edge_minimum_and_the_width() {
    let g = graph("resnet50_train.json");
    let plain = run(&["allocate", &g, "--format", "json", "-q", "--option", "max_parallel_num=AIcoreEngine:4"]);
    let off = run(&[
        "allocate",
        &g,
        "--format",
        "json",
        "-q",
        "--option",
        "max_parallel_num=AIcoreEngine:4",
        "--option",
        "verify=false",
    ]);
    assert_eq!(plain.stdout, off.stdout, "verify=false changes nothing");
    let on = run(&[
        "allocate",
        &g,
        "--format",
        "json",
        "--option",
        "max_parallel_num=AIcoreEngine:4",
        "--option",
        "verify=true",
    ]);
    assert_eq!(on.status.code(), Some(0), "{}", text(&on.stderr));
    let plain: serde_json::Value = serde_json::from_slice(&plain.stdout).unwrap();
    let mut doc: serde_json::Value = serde_json::from_slice(&on.stdout).unwrap();
    let v = doc.as_object_mut().unwrap().remove("verify").expect("a verify object");
    assert_eq!(doc, plain, "verify=true only adds the verify object");
    assert_eq!(v["ok"], true);
    // 2153 edges, of which 919 join two task-bearing nodes directly or through task-less ones.
    assert!(v["edges_checked"].as_u64().unwrap() > 900, "{v}");
    let syncs = plain["events"]["count"].as_u64().unwrap();
    let minimum = v["syncs"]["edge_minimum"].as_u64().unwrap();
    assert!(minimum <= v["syncs"]["pairs"].as_u64().unwrap() && syncs > 0, "{v}");
    let width = v["width"]["value"].as_u64().unwrap();
    assert_eq!(v["width"]["antichain"].as_array().unwrap().len() as u64, width);
    let summary = text(&on.stderr);
    let line = summary.lines().find(|l| l.trim_start().starts_with("verify: ok;")).expect(&summary);
    assert!(line.contains(&format!("edge minimum {minimum}")) && line.contains(&format!("width {width}")), "{line}");

    // The document with its verify object still passes the checker.
    let file = tmp("verified.json");
    std::fs::write(&file, &on.stdout).unwrap();
    assert_eq!(run(&["check", &g, file.to_str().unwrap()]).status.code(), Some(0));
    // Nothing to prove before the syncs exist.
    let r = run(&["allocate", &g, "--stage", "logical", "--option", "verify=true"]);
    assert!(text(&r.stdout).contains("verify: nothing to check at stage logical"), "{}", text(&r.stdout));
}

#[test]
fn the_summary_stays_short_with_hundreds_of_streams() {
    let g = graph("resnet50_train.json");
    for policy in ["min-streams", "per-operator", "auto"] {
        let r = run(&["allocate", &g, "--option", &format!("policy={policy}"), "--option", "verify=true"]);
        assert_eq!(r.status.code(), Some(0));
        let s = text(&r.stdout);
        assert!(s.lines().count() <= 10 && s.lines().all(|l| l.chars().count() <= 200), "{policy}:\n{s}");
        assert!(s.contains("nodes per stream: ") && s.contains("largest: ") && s.contains("streams by size: "), "{s}");
        assert!(s.contains("policy: ") && s.contains("verify: ok"), "{s}");
    }
    let r = run(&["allocate", &g, "--option", "max_parallel_num=AIcoreEngine:4"]);
    assert!(text(&r.stdout).contains("nodes per stream: 0:2 1:451 2:55 3:67 4:54 5:101 (no stream: 325)"));
}

#[test]
fn check_names_an_allocation_of_another_graph() {
    let squeeze = tmp("squeeze-for-check.json");
    assert_eq!(
        run(&["allocate", &graph("squeezenet1_1.json"), "-o", squeeze.to_str().unwrap()]).status.code(),
        Some(0)
    );
    let g = graph("resnet50.json");
    let one_error = |alloc: &Path, says: &str| {
        let r = run(&["check", &g, alloc.to_str().unwrap()]);
        let err = text(&r.stderr);
        assert_eq!(r.status.code(), Some(1));
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("error: ") && err.contains(says), "{err}");
        let report: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
        assert_eq!(report["ok"], false);
        assert_eq!(report["violations"].as_array().unwrap().len(), 1);
    };
    one_error(&squeeze, "made for graph 'squeezenet1_1', not for 'resnet50'");
    // Renamed, the nodes still give it away.
    let mut doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&squeeze).unwrap()).unwrap();
    doc["graph"] = "resnet50".into();
    let renamed = tmp("renamed.json");
    std::fs::write(&renamed, doc.to_string()).unwrap();
    one_error(&renamed, "node names are not in graph 'resnet50'");
    // An error document is not an allocation.
    let failed = tmp("failed.json");
    let r = run(&["allocate", &g, "-o", failed.to_str().unwrap(), "--option", "policy=budget:0"]);
    assert_eq!(r.status.code(), Some(1));
    one_error(&failed, "error document (E10001");
}

#[test]
fn compare_reports_a_bad_file_and_goes_on() {
    let dir = tmp("compare-dir");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(graph("squeezenet1_1.json"), dir.join("a_squeezenet.json")).unwrap();
    std::fs::write(dir.join("b_broken.json"), "{").unwrap();
    let mut doc: serde_json::Value =
        serde_json::from_slice(&std::fs::read(graph("squeezenet1_1.json")).unwrap()).unwrap();
    doc["options"] =
        serde_json::json!({"enable_single_stream": true, "auto_multistream_parallel_mode": "MainStream:2"});
    std::fs::write(dir.join("c_failing.json"), doc.to_string()).unwrap();
    let r = run(&["compare", dir.to_str().unwrap(), "--policies", "ge,per-backend", "--format", "csv"]);
    let err = text(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{err}");
    let table = text(&r.stdout);
    assert!(table.lines().filter(|l| l.starts_with("squeezenet1_1,")).count() >= 2, "{table}");
    assert!(err.contains("b_broken.json") && err.contains("skipped"), "{err}");
    assert!(err.contains("c_failing.json: policy ge: E10056"), "{err}");
    assert!(err.contains("of 6 runs (3 graph(s) × 2 policies) failed"), "{err}");
}
