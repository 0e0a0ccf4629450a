//! Writing allocation JSON: the streamed writer (`Allocation::json`, what every command uses)
//! against building a `serde_json::Value` tree of the same document and printing that, the
//! way the writer worked before. Both produce the same bytes (checked here). Each way runs in a
//! child process so its peak resident memory is its own. Run: `cargo bench --bench write`;
//! `WRITE_BENCH_SIZES=100000` and `WRITE_BENCH_FAMILIES=layered` pick sizes and families
//! (`WRITE_BENCH_SIZES=` skips this table).
//!
//! A second table puts the whole command beside the pipeline that made the allocation:
//! `stream-alloc allocate GRAPH -o OUT` end to end (load, pipeline, write the file; the
//! process's wall time) against the pipeline alone on the same loaded graph, and
//! `stream-alloc check GRAPH OUT` on the file it wrote. Medians of `WRITE_BENCH_RUNS` runs
//! (default 3); `WRITE_BENCH_E2E_FAMILIES` picks its families (default every family),
//! `WRITE_BENCH_E2E_SIZES` its sizes (default 100000), `WRITE_BENCH_POLICY` the policy (default
//! the graph's, GE's). `WRITE_BENCH_BASELINE=BIN` adds `BIN allocate GRAPH -q -o OUT` on the
//! same files in the same run (`before_ms`): another build's end to end beside this one's.

use std::time::Instant;
use stream_alloc::memory::AllocationDocument;

use stream_alloc::compile::Stage;
use stream_alloc::graph::json;
use stream_alloc::graph::synth::{Family, generate};

#[path = "support/common.rs"]
mod common;
use common::{families, run_child, status_mb};
#[path = "support/graph_json.rs"]
mod graph_json;

fn family_of(name: &str) -> Family {
    match name {
        "layered" => Family::Layered { width: 8 },
        "window" => Family::Random { window: Some(32) },
        _ => Family::Random { window: None },
    }
}

/// The child of the second table: loads `path` (not timed), runs the pipeline alone and then
/// writes its allocation JSON to a string; prints `pipeline_ms write_ms`.
fn pipeline_child(path: &str) {
    let mut model = json::load_file(path).expect("the written graph loads");
    if let Ok(p) = std::env::var("WRITE_BENCH_POLICY") {
        model.options.policy = stream_alloc::compile::policy::table::parse(&p).expect("a policy name").policy();
    }
    let t = Instant::now();
    let alloc = match stream_alloc::allocate(&model, Stage::All) {
        Ok(a) => a,
        Err(e) => return println!("error {e}"),
    };
    let pipeline = t.elapsed().as_secs_f64() * 1e3;
    let t = Instant::now();
    let text = alloc.to_json_string_new_plan(&model);
    let write = t.elapsed().as_secs_f64() * 1e3;
    println!("{pipeline} {write} {}", text.len());
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Wall time of one run of the command line tool, in ms; `None` when it fails.
fn timed_cli(bin: &std::ffi::OsStr, args: &[&std::ffi::OsStr]) -> Option<f64> {
    let t = Instant::now();
    let out = std::process::Command::new(bin).args(args).output().ok()?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    if !out.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    Some(ms)
}

/// The second table: `allocate -o` end to end against the pipeline alone, and `check`.
fn end_to_end() {
    let sizes = std::env::var("WRITE_BENCH_E2E_SIZES").unwrap_or_else(|_| "100000".into());
    let families_list = std::env::var("WRITE_BENCH_E2E_FAMILIES")
        .unwrap_or_else(|_| "layered,inception,transformer,random,window".into());
    let runs: usize = std::env::var("WRITE_BENCH_RUNS").ok().and_then(|v| v.parse().ok()).unwrap_or(3).max(1);
    println!();
    let own = std::ffi::OsString::from(env!("CARGO_BIN_EXE_stream-alloc"));
    let baseline = std::env::var_os("WRITE_BENCH_BASELINE");
    let policy = std::env::var("WRITE_BENCH_POLICY").ok().map(|p| format!("policy={p}"));
    println!(
        "{:<13} {:>8} {:>6} {:>11} {:>8} {:>14} {:>9} {:>8} {:>10}",
        "family", "nodes", "syncs", "pipeline_ms", "write_ms", "allocate_o_ms", "check_ms", "out_MB", "before_ms"
    );
    for size in sizes.split(',') {
        let size: usize = size.parse().expect("sizes are integers");
        for family in families(&families_list) {
            let model = generate(family, size, 7).expect("synthetic graph is valid");
            let dir = std::env::temp_dir();
            let tag = format!("{}-{}-{size}", std::process::id(), family.name());
            let graph = dir.join(format!("stream-alloc-e2e-{tag}.json"));
            let alloc_path = dir.join(format!("stream-alloc-e2e-{tag}.alloc.json"));
            std::fs::write(&graph, graph_json::to_json(&model)).expect("the temp dir is writable");
            drop(model);
            let (mut pipe, mut write, mut e2e, mut check) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            let mut before = Vec::new();
            let mut bytes = 0.0;
            for _ in 0..runs {
                let (out, line) = run_child("WRITE_BENCH_PIPELINE", &graph);
                if let Some(e) = line.strip_prefix("error ") {
                    println!("{:<13} {size:>8}  not allocated: {}", family.name(), e.trim());
                    break;
                }
                let f: Vec<f64> = line.split_whitespace().filter_map(|x| x.parse().ok()).collect();
                assert_eq!(f.len(), 3, "child output {line:?} {}", String::from_utf8_lossy(&out.stderr));
                pipe.push(f[0]);
                write.push(f[1]);
                bytes = f[2];
                let o = std::ffi::OsStr::new;
                let mut allocate = vec![o("allocate"), graph.as_os_str(), o("-q"), o("-o"), alloc_path.as_os_str()];
                if let Some(p) = &policy {
                    allocate.extend([o("--option"), o(p.as_str())]);
                }
                if let Some(b) = &baseline {
                    before.extend(timed_cli(b, &allocate));
                }
                e2e.extend(timed_cli(&own, &allocate));
                check.extend(timed_cli(&own, &[o("check"), graph.as_os_str(), alloc_path.as_os_str()]));
            }
            if !pipe.is_empty() && !e2e.is_empty() && !check.is_empty() {
                let syncs = std::fs::read(&alloc_path)
                    .ok()
                    .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
                    .and_then(|d| d["syncs"].as_array().map(Vec::len))
                    .unwrap_or(0);
                let before = if before.is_empty() { "-".to_string() } else { format!("{:.1}", median(before)) };
                println!(
                    "{:<13} {size:>8} {syncs:>6} {:>11.1} {:>8.1} {:>14.1} {:>9.1} {:>8.1} {before:>10}",
                    family.name(),
                    median(pipe),
                    median(write),
                    median(e2e),
                    median(check),
                    bytes / 1e6
                );
            }
            let _ = std::fs::remove_file(&graph);
            let _ = std::fs::remove_file(&alloc_path);
        }
    }
}

/// The child: allocates, then writes one way; prints `ms peak_before_MB peak_after_MB bytes`.
fn child(spec: &str) {
    let mut parts = spec.split(':');
    let (family, size, way) = (parts.next().unwrap(), parts.next().unwrap(), parts.next().unwrap());
    let model = generate(family_of(family), size.parse().unwrap(), 7).expect("synthetic graph is valid");
    let alloc = match stream_alloc::allocate(&model, Stage::All) {
        Ok(a) => a,
        Err(e) => return println!("error {e}"),
    };
    let before = status_mb("VmHWM:");
    let t = Instant::now();
    let text = if way == "stream" {
        alloc.to_json_string_new_plan(&model)
    } else {
        let mut s = serde_json::to_string_pretty(&alloc.to_json_new_plan(&model)).unwrap();
        s.push('\n');
        s
    };
    let ms = t.elapsed().as_secs_f64() * 1e3;
    println!("{ms} {before} {} {} {}", status_mb("VmHWM:"), text.len(), text.bytes().map(u64::from).sum::<u64>());
}

fn main() {
    if let Ok(spec) = std::env::var("WRITE_BENCH_CHILD") {
        return child(&spec);
    }
    if let Ok(path) = std::env::var("WRITE_BENCH_PIPELINE") {
        return pipeline_child(&path);
    }
    let sizes = std::env::var("WRITE_BENCH_SIZES").unwrap_or_else(|_| "100000,1000000".into());
    let families = std::env::var("WRITE_BENCH_FAMILIES").unwrap_or_else(|_| "layered,window".into());
    println!("{:<8} {:>8} {:>7} {:>9} {:>10} {:>9}", "family", "nodes", "way", "write_ms", "extra_MB", "text_MB");
    for size in sizes.split(',').filter(|s| !s.is_empty()) {
        for family in families.split(',') {
            let mut sums = Vec::new();
            for way in ["stream", "value"] {
                let (out, line) = run_child("WRITE_BENCH_CHILD", format!("{family}:{size}:{way}"));
                if let Some(e) = line.strip_prefix("error ") {
                    println!("{family:<8} {size:>8} {way:>7}  not allocated: {}", e.trim());
                    break;
                }
                let f: Vec<f64> = line.split_whitespace().filter_map(|x| x.parse().ok()).collect();
                assert_eq!(f.len(), 5, "child output {line:?} {}", String::from_utf8_lossy(&out.stderr));
                sums.push((f[3], f[4]));
                println!("{family:<8} {size:>8} {way:>7} {:>9.1} {:>10.0} {:>9.1}", f[0], f[2] - f[1], f[3] / 1e6);
            }
            if sums.len() == 2 {
                assert_eq!(sums[0], sums[1], "the two writers differ");
            }
        }
    }
    end_to_end();
}
