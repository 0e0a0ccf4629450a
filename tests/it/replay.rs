//! `replay` on host threads: every policy's plan of every corpus graph runs without a missing
//! sync, a plan with one sync removed is caught and the edge named, and the command's errors
//! (no CUDA driver, a plan of another graph, bad arguments) are clear.

use std::path::PathBuf;
use std::process::Command;

use crate::common;
use stream_alloc::compile::{Stage, TaskLimits};
use stream_alloc::graph::json;
use stream_alloc::memory::AllocationDocument;
use stream_alloc::replay::{Program, cpu::CpuExecutor, replay};
use stream_alloc::simulate::SimConfig;
use stream_alloc::verify::{self, doc::Doc};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_stream-alloc"))
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("stream-alloc-replay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

const POLICIES: [&str; 4] = ["ge", "per-operator", "min-streams", "auto"];

fn plan(model: &stream_alloc::Model, policy: &str) -> serde_json::Value {
    let mut options = model.options.clone();
    options.set_assignment(&format!("policy={policy}")).unwrap();
    let limits = TaskLimits::from_options(&options);
    let (alloc, _) = stream_alloc::search::run(model, options, limits, Stage::All, SimConfig::default()).unwrap();
    alloc.to_json_new_plan(model)
}

#[test]
fn every_policy_plan_of_the_corpus_replays_without_a_missing_sync() {
    let mut multi_stream_plans = 0;
    for path in common::corpus_paths() {
        let model = json::load_file(&path).unwrap();
        for policy in POLICIES {
            let doc_json = plan(&model, policy);
            let doc = Doc::parse(&model, &doc_json).unwrap();
            let program = Program::build(&model, &doc, 24).unwrap();
            let bearing = (0..doc.nodes.len()).filter(|&i| doc.bearing(i)).count();
            assert_eq!(program.kernels.len(), bearing, "{} {policy}: one kernel per task-bearing node", model.name);
            let mut exec = CpuExecutor { time_scale: 0.001, units: 24 };
            let report = replay(&program, &mut exec, 2, 0.001, "cpu").unwrap();
            assert!(
                report.violations.is_empty(),
                "{} {policy}: a valid plan reported missing syncs: {:?}",
                model.name,
                report.violations
            );
            assert_eq!(report.runs_us.len(), 2);
            if report.streams > 1 {
                multi_stream_plans += 1;
                assert!(program.checked_deps() > 0, "{} {policy}: cross-stream dependencies are checked", model.name);
                assert!(!program.arcs.is_empty(), "{} {policy}: a multi-stream plan has events", model.name);
            }
        }
    }
    assert!(multi_stream_plans >= 20, "only {multi_stream_plans} multi-stream plans were replayed");
}

/// A sync of a valid plan whose removal leaves a dependency unordered (per the checker), with
/// its producer and consumer names.
fn removable_sync(model: &stream_alloc::Model, doc: &serde_json::Value) -> (usize, String, String) {
    let syncs = doc["syncs"].as_array().unwrap();
    for (i, s) in syncs.iter().enumerate() {
        let mut broken = doc.clone();
        broken["syncs"].as_array_mut().unwrap().remove(i);
        let report = verify::check(model, &broken);
        if report.violations.iter().any(|v| v.rule == 1) {
            return (i, s["from"].as_str().unwrap().to_string(), s["to"].as_str().unwrap().to_string());
        }
    }
    panic!("no sync of {} is needed", model.name);
}

#[test]
fn a_plan_with_one_sync_removed_is_caught_and_the_edge_named() {
    let graph = common::corpus_graph("bert_base.json");
    let model = json::load_file(&graph).unwrap();
    let doc = plan(&model, "min-streams");
    let (i, from, to) = removable_sync(&model, &doc);
    let mut broken = doc.clone();
    broken["syncs"].as_array_mut().unwrap().remove(i);
    let alloc = tmp("broken.json");
    std::fs::write(&alloc, serde_json::to_string(&broken).unwrap()).unwrap();
    // The producer made slow (200 ms at the plan's clock, 2 ms replayed), so the consumer,
    // which no longer waits for it, starts while it runs.
    let mut g: serde_json::Value = serde_json::from_slice(&std::fs::read(&graph).unwrap()).unwrap();
    let node = g["nodes"].as_array_mut().unwrap().iter_mut().find(|n| n["name"] == from.as_str()).unwrap();
    node["cost_us"] = serde_json::json!(200000.0);
    let slow = tmp("slow.json");
    std::fs::write(&slow, serde_json::to_string(&g).unwrap()).unwrap();
    // --units 1000: no kernel waits for units, so unit contention orders nothing by chance.
    let r = bin()
        .args(["replay", slow.to_str().unwrap(), alloc.to_str().unwrap(), "--backend", "cpu"])
        .args(["--repeat", "3", "--time-scale", "0.01", "--units", "1000", "--json"])
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(3), "{}", String::from_utf8_lossy(&r.stderr));
    let report: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    let violations = report["violations"].as_array().unwrap();
    assert!(
        violations.iter().any(|v| v["from"] == from.as_str() && v["runs"].as_u64().unwrap() >= 1),
        "the removed sync {from} -> {to} is not reported: {violations:?}"
    );
    // The same plan with the sync in place: no violation, exit 0.
    std::fs::write(&alloc, serde_json::to_string(&doc).unwrap()).unwrap();
    let r = bin()
        .args(["replay", slow.to_str().unwrap(), alloc.to_str().unwrap(), "--backend", "cpu"])
        .args(["--repeat", "2", "--time-scale", "0.01", "--units", "1000"])
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(0), "{}", String::from_utf8_lossy(&r.stdout));
    let text = String::from_utf8(r.stdout).unwrap();
    assert!(text.contains("no missing sync"), "{text}");
}

#[test]
fn replay_reports_and_traces_a_compiled_plan() {
    let trace = tmp("trace.json");
    let r = bin()
        .args(["replay", common::corpus_graph("squeezenet1_1.json").to_str().unwrap(), "--backend", "cpu"])
        .args(["--option", "policy=per-operator", "--repeat", "3", "--time-scale", "0.01", "--json"])
        .args(["--trace", trace.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(0), "{}", String::from_utf8_lossy(&r.stderr));
    let report: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(report["policy"], "per-operator");
    assert_eq!(report["backend"], "cpu");
    assert_eq!(report["simulated_by"], "simulate");
    assert_eq!(report["runs_us"].as_array().unwrap().len(), 3);
    assert!(report["simulated_us"].as_f64().unwrap() > 0.0);
    assert!(report["measured_us"].as_f64().unwrap() > 0.0);
    let kernels = report["kernels"].as_u64().unwrap();
    let t: serde_json::Value = serde_json::from_slice(&std::fs::read(&trace).unwrap()).unwrap();
    let events = t["traceEvents"].as_array().unwrap();
    assert_eq!(events.iter().filter(|e| e["ph"] == "X").count() as u64, kernels);
    assert!(events.iter().any(|e| e["ph"] == "s") && events.iter().any(|e| e["ph"] == "f"));
}

#[test]
fn replay_of_an_allocation_file_uses_the_program_model() {
    let graph = common::corpus_graph("resnet50.json");
    let model = json::load_file(&graph).unwrap();
    let alloc = tmp("resnet50-per-op.json");
    std::fs::write(&alloc, serde_json::to_string(&plan(&model, "per-operator")).unwrap()).unwrap();
    let r = bin()
        .args(["replay", graph.to_str().unwrap(), alloc.to_str().unwrap(), "--backend", "cpu"])
        .args(["--repeat", "1", "--time-scale", "0.01", "--json"])
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(0), "{}", String::from_utf8_lossy(&r.stderr));
    let report: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(report["simulated_by"], "program");
    // The program model and the simulator agree closely on the same plan.
    let s = bin()
        .args(["simulate", graph.to_str().unwrap(), "--option", "policy=per-operator", "--json"])
        .output()
        .unwrap();
    let simulated: serde_json::Value = serde_json::from_slice(&s.stdout).unwrap();
    let (a, b) = (report["simulated_us"].as_f64().unwrap(), simulated["makespan_us"].as_f64().unwrap());
    assert!((a - b).abs() <= 0.05 * b, "program model {a} us, simulator {b} us");
}

#[test]
fn a_missing_cuda_driver_is_named() {
    let r = bin()
        .args(["replay", common::corpus_graph("squeezenet1_1.json").to_str().unwrap(), "--backend", "cuda"])
        .env("SA_CUDA_LIB", "/nonexistent/libcuda.so.1")
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(1));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("no CUDA driver") && err.contains("SA_CUDA_LIB=/nonexistent/libcuda.so.1"), "{err}");
}

#[test]
fn replay_rejects_bad_arguments_and_unreadable_plans() {
    let g = common::corpus_graph("squeezenet1_1.json");
    let g = g.to_str().unwrap();
    // No backend: bad usage.
    assert_eq!(bin().args(["replay", g]).output().unwrap().status.code(), Some(2));
    for (args, says) in [
        (vec!["--repeat", "0"], "--repeat must be at least 1"),
        (vec!["--time-scale", "0"], "time scale must be a finite number > 0"),
        (vec!["--units", "0"], "units must be at least 1"),
    ] {
        let r = bin().args(["replay", g, "--backend", "cpu"]).args(&args).output().unwrap();
        assert_eq!(r.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let other = tmp("other.json");
    let model = json::load_file(common::corpus_graph("resnet50.json")).unwrap();
    std::fs::write(&other, serde_json::to_string(&plan(&model, "ge")).unwrap()).unwrap();
    let r = bin().args(["replay", g, other.to_str().unwrap(), "--backend", "cpu"]).output().unwrap();
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr).contains("can not be replayed"));
}
