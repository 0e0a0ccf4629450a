//! Fixture tests for GE's steps after logical allocation in the filetest syntax
//! (`filetest.rs`): each reproduces one of GE's unit tests of the sync, activation and split
//! steps (ge-compiler.md §6–§8) on a graph whose streams (and events) are given.
//!
//! Each `tests/fixtures/steps/NAME.expected` runs
//!
//! ```text
//! ; run: pass A,B,C              (the passes and steps, as `stream-alloc pass` runs them)
//! ; run: from sync|split         (`allocate --from`, the whole pipeline from that stage)
//! counts input S/E/N/P           (streams, events, notifies, pairs before the first step)
//! counts STEP S/E/N/P            (after each step)
//! sync ID FROM -> TO             (allocation JSON's syncs, then split_events as `split_event`)
//! node NODE LOGICAL PHYSICAL [attached=A,B]   (nodes on a stream, all_nodes() order; nested: GRAPH/NODE)
//! active NODE: S S ...           (activation lists)
//! inserted NAME TYPE STREAM before|after ANCHOR
//! error CODE MESSAGE-PART        (instead of all the above: the run fails)
//! ```
//!
//! Every expectation was checked by hand against ge-compiler.md, and each fixture's comments
//! say what GE's test asserts.

use std::fmt::Write;

use crate::filetest::{self, Case};
use stream_alloc::memory::AllocationDocument;

use serde_json::Value;
use stream_alloc::compile::steps::StepTrace;
use stream_alloc::compile::{Stage, TaskLimits, passes};
use stream_alloc::driver;

fn counts(out: &mut String, name: &str, c: &Value) {
    writeln!(out, "counts {name} {}/{}/{}/{}", c["streams"], c["events"], c["notifies"], c["pairs"]).unwrap();
}

/// The result lines of an allocation JSON document and its step trace.
fn render(doc: &Value, trace: &StepTrace) -> String {
    let mut out = String::new();
    let t = trace.to_json();
    counts(&mut out, "input", &t["input"]);
    for row in t["after"].as_array().unwrap() {
        counts(&mut out, row["step"].as_str().unwrap(), row);
    }
    for (key, label) in [("syncs", "sync"), ("split_events", "split_event")] {
        for s in doc[key].as_array().unwrap() {
            writeln!(out, "{label} {} {} -> {}", s["id"], s["from"].as_str().unwrap(), s["to"].as_str().unwrap())
                .unwrap();
        }
    }
    let huge: Vec<String> = doc["streams"]["huge"].as_array().unwrap().iter().map(Value::to_string).collect();
    if !huge.is_empty() {
        writeln!(out, "huge {}", huge.join(" ")).unwrap();
    }
    // Consecutive nodes on the same streams make one line: `node FIRST..LAST L P (N nodes)`.
    let mut lines: Vec<(String, String, String, usize)> = Vec::new();
    for n in doc["nodes"].as_array().unwrap() {
        let name = n["name"].as_str().unwrap();
        let g = n["graph"].as_str().unwrap();
        let full = if g.is_empty() { name.to_string() } else { format!("{g}/{name}") };
        if n.get("inserted").is_some() || (n["stream"] == -1 && n["logical_stream"] == -1) {
            continue;
        }
        let mut streams = format!("{} {}", n["logical_stream"], n["stream"]);
        if let Some(a) = n.get("attached_streams").and_then(Value::as_array) {
            let ids: Vec<String> = a.iter().map(Value::to_string).collect();
            write!(streams, " attached={}", ids.join(",")).unwrap();
        }
        match lines.last_mut() {
            Some((_, last, s, k)) if *s == streams && !streams.contains("attached") => {
                *last = full;
                *k += 1;
            }
            _ => lines.push((full.clone(), full, streams, 1)),
        }
    }
    for (first, last, streams, k) in lines {
        if k == 1 {
            writeln!(out, "node {first} {streams}").unwrap();
        } else {
            writeln!(out, "node {first}..{last} {streams} ({k} nodes)").unwrap();
        }
    }
    for a in doc["activations"].as_array().unwrap() {
        let ids: Vec<String> = a["streams"].as_array().unwrap().iter().map(Value::to_string).collect();
        writeln!(out, "active {}: {}", a["node"].as_str().unwrap(), ids.join(" ")).unwrap();
    }
    // Inserted nodes with their anchor: the graph node they sit before (Recv) or after (Send).
    let nodes = doc["nodes"].as_array().unwrap();
    for (i, n) in nodes.iter().enumerate() {
        if n.get("inserted").is_none() {
            continue;
        }
        let real = |m: &&Value| m.get("inserted").is_none();
        let (side, anchor) = if n["type"].as_str().unwrap().starts_with("Recv") {
            ("before", nodes[i + 1..].iter().find(real))
        } else {
            ("after", nodes[..i].iter().rev().find(real))
        };
        let anchor = anchor.map(|m| m["name"].as_str().unwrap().to_string());
        writeln!(
            out,
            "inserted {} {} {} {side} {}",
            n["name"].as_str().unwrap(),
            n["type"].as_str().unwrap(),
            n["stream"],
            anchor.unwrap_or_default()
        )
        .unwrap();
    }
    out
}

fn actual(case: &Case) -> String {
    let run = case.run.as_deref().unwrap_or_else(|| panic!("{}: no '; run:' directive", case.graph.display()));
    let result = (|| {
        let model = filetest::model(case)?;
        let options = model.options.clone();
        let limits = TaskLimits::from_options(&options);
        let (alloc, trace) = if let Some(list) = run.strip_prefix("pass ") {
            let list = passes::parse_list(list)?;
            let (a, t) = passes::run_list(&model, &options, limits, &list)?;
            (a, t.expect("a step fixture names steps"))
        } else if let Some(from) = run.strip_prefix("from ") {
            let from = Stage::parse(from.trim()).expect("from sync or split");
            driver::run_from(&model, options, limits, from, Stage::All).map(|(c, t)| (c.alloc, t))?
        } else {
            panic!("unknown run directive '{run}'")
        };
        Ok(render(&alloc.to_json_new_plan(&model), &trace))
    })();
    result.unwrap_or_else(|e: stream_alloc::Error| filetest::error_line(&e))
}

#[test]
fn step_fixtures() {
    filetest::run_all("steps", 20, actual);
}
