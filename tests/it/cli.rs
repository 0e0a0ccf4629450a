//! The command-line tool: outputs, error documents and exit codes.

use crate::common;
use std::path::PathBuf;
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_stream-alloc"))
}

fn example(name: &str) -> PathBuf {
    common::corpus_graph(name)
}

fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("stream-alloc-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// `allocate` of a corpus graph with one option, the JSON written to a file: it succeeds; the
/// summary it prints and the document.
fn allocate_to_file(graph: &str, option: &str) -> (String, serde_json::Value) {
    let out = tmp(&format!("{}-{graph}", option.replace('=', "-")));
    let r = bin()
        .args(["allocate", example(graph).to_str().unwrap(), "-o", out.to_str().unwrap(), "--option", option])
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(0), "{}", String::from_utf8_lossy(&r.stderr));
    (String::from_utf8(r.stdout).unwrap(), serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap())
}

#[test]
fn allocate_writes_json_and_summary() {
    let (summary, doc) = allocate_to_file("resnet50.json", "enable_single_stream=true");
    assert!(
        summary.contains("streams: 1 logical") && summary.contains("nodes per stream") && summary.contains("time:")
    );
    assert_eq!(doc["format"], "stream-allocation");
    assert_eq!(doc["mode"], "static-single");
    assert_eq!(doc["nodes"].as_array().unwrap().len(), 444);
}

#[test]
fn format_json_goes_to_stdout() {
    let r = bin()
        .args(["allocate", example("googlenet.json").to_str().unwrap(), "--format", "json"])
        .args(["--option", "ge.enableSingleStream=true", "--stage", "logical"])
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(doc["stage"], "logical");
    assert!(String::from_utf8_lossy(&r.stderr).contains("googlenet"));
}

#[test]
fn allocation_error_writes_error_document_and_exits_1() {
    let out = tmp("err.json");
    let r = bin()
        .args(["allocate", example("resnet50.json").to_str().unwrap(), "-o", out.to_str().unwrap()])
        .args(["--option", "enable_single_stream=true", "--option", "auto_multistream_parallel_mode=MainStream:2"])
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(doc["error"]["code"], "E10056");
    assert!(String::from_utf8_lossy(&r.stderr).contains("E10056"));

    let r = bin()
        .args(["allocate", example("resnet50.json").to_str().unwrap(), "--format", "json"])
        .args(["--option", "ac_parallel_enable=yes"])
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(doc["error"]["code"], "E10001");
    assert!(doc["error"]["message"].as_str().unwrap().contains("ac_parallel_enable"));

    let r = bin().args(["allocate", "/no/such/graph.json", "--format", "json"]).output().unwrap();
    assert_eq!(r.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(doc["error"]["code"], "SA1000");
}

#[test]
fn bad_usage_exits_2() {
    assert_eq!(bin().output().unwrap().status.code(), Some(2));
    assert_eq!(bin().args(["allocate"]).output().unwrap().status.code(), Some(2));
    assert_eq!(bin().args(["allocate", "x.json", "--stage", "sideways"]).output().unwrap().status.code(), Some(2));
    assert_eq!(bin().args(["frobnicate"]).output().unwrap().status.code(), Some(2));
}

#[test]
fn help_explains_every_option() {
    let r = bin().args(["allocate", "--help"]).output().unwrap();
    assert_eq!(r.status.code(), Some(0));
    let help = String::from_utf8(r.stdout).unwrap();
    for key in stream_alloc::graph::options::OPTION_KEYS {
        assert!(help.contains(key), "--help does not mention {key}");
    }
    let r = bin().arg("--help").output().unwrap();
    assert!(String::from_utf8(r.stdout).unwrap().contains("allocate"));
}

#[test]
fn a_policy_explains_its_choice_in_the_output() {
    let (summary, doc) = allocate_to_file("googlenet.json", "policy=auto");
    assert!(summary.contains("policy: "));
    assert_eq!(doc["mode"], "auto");
    let chosen = doc["policy"]["chosen"].as_str().expect("auto names its choice");
    let candidates = doc["policy"]["candidates"].as_array().unwrap();
    assert!(candidates.iter().any(|c| c["policy"] == chosen));
    assert!(doc["policy"]["why"].is_string());
}

/// Every command runs every mode through the one driver: the same graph and policy give the
/// same streams whichever command asks, and none refuses a policy another accepts.
#[test]
fn every_command_works_with_every_policy() {
    let graph = example("squeezenet1_1.json");
    let g = graph.to_str().unwrap();
    for policy in ["ge", "single", "per-backend", "per-operator", "min-streams", "budget:2", "auto"] {
        let opt = format!("policy={policy}");
        let run = |args: &[&str]| {
            let r = bin().args(args).args(["--option", &opt]).output().unwrap();
            assert_eq!(r.status.code(), Some(0), "{args:?} under {policy}: {}", String::from_utf8_lossy(&r.stderr));
            String::from_utf8(r.stdout).unwrap()
        };
        let alloc: serde_json::Value = serde_json::from_str(&run(&["allocate", g, "--format", "json"])).unwrap();
        let physical = alloc["streams"]["physical"].as_u64().unwrap();
        let summary: serde_json::Value = serde_json::from_str(&run(&["summary", g, "--format", "json"])).unwrap();
        assert_eq!(summary["stream_num"].as_u64(), Some(physical), "summary under {policy}: {summary}");
        let sim: serde_json::Value = serde_json::from_str(&run(&["simulate", g, "--json"])).unwrap();
        assert_eq!(sim["streams"].as_u64(), Some(physical), "simulate under {policy}: {sim}");
        assert!(run(&["dot", g]).starts_with("digraph"), "dot under {policy}");
        assert!(run(&["summary", g]).contains("stream"), "summary text under {policy}");
    }
    let r = bin()
        .args(["compare", g, "--policies", "ge,single,per-backend,per-operator,min-streams,budget:2,auto"])
        .output();
    let r = r.unwrap();
    assert_eq!(r.status.code(), Some(0), "{}", String::from_utf8_lossy(&r.stderr));
}

/// The peers' baselines by name in `compare` and `simulate`, TensorRT-LLM's with its stream
/// count; a name that is neither a policy nor a peer is refused with every spelling of both.
#[test]
fn peer_baselines_by_name_and_bad_names_list_them() {
    let g = "corpus/squeezenet1_1.json";
    let r = bin().args(["compare", g, "--policies", "auto,trtllm,trtllm-cost:2", "--format", "csv"]).output().unwrap();
    assert_eq!(r.status.code(), Some(0), "{}", String::from_utf8_lossy(&r.stderr));
    let out = String::from_utf8(r.stdout).unwrap();
    assert!(out.contains(",trtllm,") && out.contains(",trtllm-cost:2,"), "{out}");
    let r = bin().args(["simulate", g, "--policies", "trtllm:8", "--json"]).output().unwrap();
    assert_eq!(r.status.code(), Some(0), "{}", String::from_utf8_lossy(&r.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(doc[0]["policy"]["name"], "trtllm:8", "{doc}");
    for (cmd, bad) in [("compare", "trtllm:0"), ("simulate", "trtllm:x"), ("simulate", "trtlm")] {
        let r = bin().args([cmd, g, "--policies", bad]).output().unwrap();
        let err = String::from_utf8_lossy(&r.stderr);
        assert_ne!(r.status.code(), Some(0), "{cmd} {bad}");
        assert!(
            err.contains(bad) && err.contains("trtllm-cost[:N]") && err.contains("earliest:N"),
            "{cmd} {bad}: {err}"
        );
    }
}
