//! The bad-input table (tests/fixtures/bad_input/table.tsv, documented in docs/reliability.md):
//! one test per row through the CLI and the library, each expecting its code and a message that
//! names what is at fault; then huge numbers, CLI misuse and runtime faults through a fake
//! device runtime. The C ABI half of the table is tests_c/test_bad_input.c.

use crate::fake_rt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use stream_alloc::compile::Stage;
use stream_alloc::graph::json;
use stream_alloc::runtime::consts::*;
use stream_alloc::runtime::*;
use stream_alloc::{allocate, allocate_from_preassigned};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bad_input")
}

struct Row {
    id: String,
    fixture: String,
    options: Vec<String>,
    code: String,
    needles: Vec<String>,
}

fn table() -> Vec<Row> {
    let text = std::fs::read_to_string(dir().join("table.tsv")).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            assert_eq!(f.len(), 5, "table row {l:?}");
            Row {
                id: f[0].into(),
                fixture: f[1].into(),
                options: if f[2] == "-" { vec![] } else { f[2].split(' ').map(str::to_string).collect() },
                code: f[3].into(),
                needles: f[4].split('|').map(str::to_string).collect(),
            }
        })
        .collect()
}

fn row(id: &str) -> Row {
    table().into_iter().find(|r| r.id == id).unwrap_or_else(|| panic!("no row '{id}' in table.tsv"))
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_stream-alloc"))
}

fn assert_names(r: &Row, message: &str, via: &str) {
    for n in &r.needles {
        assert!(message.contains(n.as_str()), "{} via {via}: message {message:?} does not contain {n:?}", r.id);
    }
}

/// The row through the library (load, options, allocate) and through the CLI: same code, same
/// message, exit status 1, an error document, no panic.
fn check_row(id: &str) {
    let r = row(id);
    let path = dir().join(&r.fixture);

    let lib = json::builder_from_slice(&std::fs::read(&path).unwrap()).and_then(|mut b| {
        for o in &r.options {
            let (k, v) = o.split_once('=').unwrap();
            b.options.set_str(k, v)?;
        }
        let model = b.build()?;
        allocate(&model, Stage::All)
    });
    let e = lib.err().unwrap_or_else(|| panic!("{id}: the library accepted the input"));
    assert_eq!(e.code(), r.code, "{id}: library error {e}");
    assert_names(&r, &e.message, "library");

    let mut cmd = bin();
    cmd.arg("allocate").arg(&path).args(["--format", "json", "-q"]);
    for o in &r.options {
        cmd.args(["--option", o]);
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // An option name no one knows is the command line's usage error, refused before anything
    // runs: exit 2, no document.
    if r.options.iter().any(|o| stream_alloc::graph::Options::canonical_key(o.split_once('=').unwrap().0).is_none()) {
        assert_eq!(out.status.code(), Some(2), "{id}: CLI exit status; stderr: {stderr}");
        assert!(out.stdout.is_empty() && stderr.contains("unknown option name"), "{id}: {stderr}");
        return;
    }
    assert_eq!(out.status.code(), Some(1), "{id}: CLI exit status; stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "{id}: {stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["error"]["code"], r.code.as_str(), "{id}");
    let message = doc["error"]["message"].as_str().unwrap();
    assert_eq!(message, e.message, "{id}: CLI and library disagree");
    assert_names(&r, message, "CLI");
    assert!(stderr.contains(&format!("error: {}: ", r.code)), "{id}: {stderr}");
}

macro_rules! rows {
    ($($id:ident),* $(,)?) => {
        $( #[test] fn $id() { check_row(stringify!($id)); } )*
        const ROW_TESTS: &[&str] = &[$(stringify!($id)),*];
    };
}

rows!(
    truncated_json,
    empty_file,
    not_utf8,
    deep_nesting,
    trailing_garbage,
    not_an_object,
    wrong_format,
    wrong_version,
    missing_nodes,
    nodes_not_array,
    unknown_top_field,
    node_name_wrong_type,
    node_missing_engine,
    tasks_wrong_type,
    tasks_negative,
    tasks_huge,
    cost_negative,
    number_overflow,
    stream_negative,
    unknown_node_field,
    duplicate_node_name,
    dangling_edge_destination,
    dangling_edge_source,
    self_loop,
    cycle,
    edge_kind_unknown,
    subgraph_parent_missing,
    subgraph_name_twice,
    unknown_engine,
    partition_missing_node,
    partition_node_twice,
    partition_unknown_engine,
    attached_stream_without_name,
    continuous_label_across_subgraphs,
    attr_wrong_type,
    attr_unknown,
    engine_table_wrong_type,
    shape_unknown,
    options_not_object,
    option_in_file_invalid,
    opt_single_stream_not_bool,
    opt_event_unknown,
    opt_hcom_parallel_2,
    opt_ac_parallel_enable,
    opt_max_parallel_not_number,
    opt_max_parallel_zero,
    opt_max_parallel_not_pairs,
    opt_max_task_count_zero,
    opt_max_huge_task_count_zero,
    opt_max_task_count_huge,
    opt_policy_unknown,
    opt_policy_budget_zero,
    opt_compat_unknown,
    opt_event_reuse_unknown,
    opt_auto_mode_unknown,
    opt_auto_mode_out_of_range,
    opt_unknown_key,
    opt_verify_not_bool,
    opt_unlimited_depth_not_bool,
    opt_memory_priority_not_bool,
    opt_dynamic_multi_stream_not_bool,
    single_stream_with_label,
    single_stream_with_auto_mode,
    notify_beyond_1024,
    event_unknown_node,
    event_unknown_graph,
    event_id_negative,
    event_id_huge,
    event_missing_to,
    event_unknown_field,
    event_same_stream,
    event_end_without_stream,
    event_backwards,
    event_attached_unknown,
    opt_next_stream_negative,
    opt_max_streams_zero,
    opt_max_events_word,
);

#[test]
fn every_row_has_a_test_and_a_doc_line() {
    let rows = table();
    assert!(rows.len() >= 40, "{} rows", rows.len());
    let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ROW_TESTS, "table.tsv and the rows! list differ");
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/reliability.md")).unwrap();
    for r in &rows {
        let line = format!("| `{}` | {} |", r.id, r.code);
        assert!(doc.contains(&line), "docs/reliability.md lacks the row {line}");
    }
    for f in std::fs::read_dir(dir()).unwrap() {
        let name = f.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".json") && name != "valid.json" {
            let used = rows.iter().any(|r| r.fixture == name) || HUGE_BUT_VALID.contains(&name.as_str());
            assert!(used, "fixture {name} is in no row");
        }
    }
}

/// Documents that carry huge ids, counts or ports but are valid: they must allocate quickly
/// and in little memory (checked by running the CLI under a 1 GiB address-space limit).
const HUGE_BUT_VALID: &[&str] = &[
    "attached_stream_num_huge.json",
    "new_stream_id_huge.json",
    "max_parallel_huge.json",
    "port_huge.json",
    "stream_huge.json",
];

#[test]
fn huge_numbers_allocate_fast_in_bounded_memory() {
    for f in HUGE_BUT_VALID {
        let path = dir().join(f);
        let start = Instant::now();
        let out = Command::new("sh")
            .arg("-c")
            .arg("ulimit -v 1048576; exec \"$0\" allocate \"$1\" --format json -q")
            .arg(env!("CARGO_BIN_EXE_stream-alloc"))
            .arg(&path)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{f}: {stderr}");
        assert!(start.elapsed() < Duration::from_secs(10), "{f}: {:?}", start.elapsed());
    }
}

/// A preassigned stream id of ten million (no such streams present) fails fast with a limit
/// error instead of sizing per-stream tables by the id.
#[test]
fn preassigned_huge_stream_id_is_refused() {
    let model = json::load_file(dir().join("stream_huge.json")).unwrap();
    let start = Instant::now();
    let e = allocate_from_preassigned(&model, Stage::All).unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(2));
    assert_eq!(e.code(), "SA2003", "{e}");
    assert!(e.message.contains("node 'a'") && e.message.contains("10000000"), "{e}");
}

#[test]
fn cli_misuse() {
    let valid = dir().join("valid.json");
    // An option that is not KEY=VALUE is bad usage.
    let out = bin().arg("allocate").arg(&valid).args(["--option", "novalue", "-q"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--option 'novalue' is not of the form KEY=VALUE"));
    // A missing file names the path.
    let out = bin().args(["allocate", "/nonexistent/g.json", "-q"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("SA1000") && err.contains("/nonexistent/g.json"), "{err}");
    // An unwritable output path names the path.
    let out = bin().arg("allocate").arg(&valid).args(["-o", "/nonexistent/dir/out.json", "-q"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/dir/out.json"));
    // Unknown stage and unknown subcommand are usage errors.
    let out = bin().arg("allocate").arg(&valid).args(["--stage", "bogus"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = bin().arg("frobnicate").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    // A directory instead of a file.
    let out = bin().arg("allocate").arg(dir()).arg("-q").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("SA1000"));
}

// ---- Runtime: the fake device runtime fails each call in turn. ----

/// One pass over every runtime entry point: allocators (stream, event, notify), the reusable
/// pool with reuse on (which asks for the task limit), grants and destroys. Each failure must be
/// a Device error naming the failed call; the run carries on; the drop at the end gives back
/// everything that was created.
fn runtime_scenario(rt: &std::sync::Arc<Runtime>) -> Vec<RtError> {
    let mut errors = Vec::new();
    let mut note = |r: RtResult<()>| {
        if let Err(e) = r {
            errors.push(e);
        }
    };
    {
        let sa = StreamAllocator::with_runtime(0, RT_STREAM_PERSISTENT, rt.clone()).unwrap();
        let ea = EventAllocator::with_runtime(ACL_EVENT_SYNC, rt.clone()).unwrap();
        let na = NotifyAllocator::with_runtime(rt.clone()).unwrap();
        note(sa.acquire(4).map(drop));
        note(sa.acquire(4).map(drop)); // retries what a failure left out
        note(ea.acquire(3).map(drop));
        note(ea.acquire(3).map(drop));
        note(na.acquire(0, 2).map(drop));
        note(na.acquire(0, 2).map(drop));
        let pool = ReusableStreamPool::with_runtime(PoolOptions { reuse: true, task_limit: None }, rt.clone());
        let mut granted = Vec::new();
        for model in 0..3u32 {
            match pool.get_or_create(model, 0, RT_STREAM_PERSISTENT, 10) {
                Ok((s, _)) => granted.push(s),
                Err(e) => errors.push(e),
            }
        }
        let unique: std::collections::BTreeSet<usize> = granted.iter().map(|&s| s as usize).collect();
        for s in &granted {
            // A refused destroy keeps the grant; the retry gives it back.
            if let Err(e) = pool.destroy(*s, false) {
                errors.push(e);
                pool.destroy(*s, false).expect("the retry of a refused destroy");
            }
        }
        let st = pool.stats();
        assert_eq!(st.live, 0, "pool after all destroys: {st:?} ({} streams granted)", unique.len());
        assert_eq!(st.grants, 0, "{st:?}");
    }
    errors
}

#[test]
fn every_device_call_failing_in_turn() {
    let (rt, f) = fake_rt::new_fake();
    assert!(runtime_scenario(&rt).is_empty());
    f.check_balanced().unwrap();
    let total = f.calls.load(Ordering::SeqCst);
    assert!(total >= 15, "the scenario makes {total} device calls");
    let mut failed_calls = std::collections::BTreeSet::new();
    for k in 1..=total {
        let (rt, f) = fake_rt::new_fake();
        f.fail_at.store(k, Ordering::SeqCst);
        let errors = runtime_scenario(&rt);
        drop(rt);
        let call = f.failed_call.lock().expect("the k-th call happened");
        failed_calls.insert(call);
        f.check_balanced().unwrap_or_else(|e| panic!("call {k} ({call}) failing: {e}"));
        for e in &errors {
            assert_eq!(e.kind, RtErrorKind::Device, "call {k} ({call}): {e}");
            assert_eq!(e.runtime_code, fake_rt::INJECTED, "call {k} ({call}): {e}");
            assert!(e.message.contains("failed with runtime error 507899"), "call {k} ({call}): {e}");
        }
    }
    for call in ["stream_create", "stream_destroy", "stream_get_id", "event_create", "event_destroy", "notify_create"] {
        assert!(failed_calls.contains(call), "{call} was never failed: {failed_calls:?}");
    }
}

#[test]
fn out_of_streams_events_and_notifies() {
    let (rt, f) = fake_rt::new_fake();
    {
        // The device has 3 streams left: the pool's fourth grant fails, then one comes back.
        f.stream_budget.store(3, Ordering::SeqCst);
        let pool = ReusableStreamPool::with_runtime(PoolOptions::default(), rt.clone());
        let got: Vec<_> = (0..3).map(|m| pool.get_or_create(m, 0, RT_STREAM_PERSISTENT, 1).unwrap().0).collect();
        let e = pool.get_or_create(3, 0, RT_STREAM_PERSISTENT, 1).unwrap_err();
        assert_eq!((e.kind, e.runtime_code), (RtErrorKind::Device, ACL_ERROR_RT_NO_STREAM_RESOURCE), "{e}");
        assert_eq!(pool.stats().live, 3);
        pool.destroy(got[0], false).unwrap();
        let again = pool.get_or_create(3, 0, RT_STREAM_PERSISTENT, 1).unwrap().0;
        for s in [got[1], got[2], again] {
            pool.destroy(s, false).unwrap();
        }
        assert_eq!(pool.stats().live, 0);
        f.stream_budget.store(u64::MAX, Ordering::SeqCst);

        // The allocators' own limits: AcquireStreams(2024), 4097 events, 1025 notifies, refused
        // before any device call.
        let sa = StreamAllocator::with_runtime(0, 0, rt.clone()).unwrap();
        let before = f.calls.load(Ordering::SeqCst);
        let e = sa.acquire(2024).unwrap_err();
        assert_eq!(e.kind, RtErrorKind::Limit, "{e}");
        assert!(e.message.contains("2024"), "{e}");
        let ea = EventAllocator::with_runtime(ACL_EVENT_SYNC, rt.clone()).unwrap();
        let e = ea.acquire(MAX_EVENT_NUM + 1).unwrap_err();
        assert_eq!(e.kind, RtErrorKind::Limit, "{e}");
        assert!(e.message.contains("4097"), "{e}");
        let na = NotifyAllocator::with_runtime(rt.clone()).unwrap();
        let e = na.acquire(0, MAX_NOTIFY_NUM + 1).unwrap_err();
        assert_eq!(e.kind, RtErrorKind::Limit, "{e}");
        assert!(e.message.contains("1025"), "{e}");
        assert_eq!(f.calls.load(Ordering::SeqCst), before, "limits are checked before any device call");
        // The allocators still work after the refusals.
        sa.acquire(3).unwrap();
        ea.acquire(2).unwrap();
        na.acquire(0, 2).unwrap();
    }
    drop(rt);
    f.check_balanced().unwrap();
}

#[test]
fn destroy_of_unknown_or_null_stream() {
    let (rt, f) = fake_rt::new_fake();
    let pool = ReusableStreamPool::with_runtime(PoolOptions::default(), rt.clone());
    let e = pool.destroy(0xbad0 as *mut std::ffi::c_void, false).unwrap_err();
    assert_eq!(e.kind, RtErrorKind::UnknownHandle);
    assert!(e.message.contains("0xbad0") && e.message.contains("not created by this pool"), "{e}");
    let e = pool.destroy(std::ptr::null_mut(), false).unwrap_err();
    assert_eq!(e.kind, RtErrorKind::Null, "{e}");
    // The pool is unharmed: a grant and its destroy still balance; a second destroy is a no-op.
    let (s, _) = pool.get_or_create(1, 0, RT_STREAM_PERSISTENT, 1).unwrap();
    pool.destroy(s, false).unwrap();
    pool.destroy(s, false).unwrap();
    assert_eq!(pool.stats().live, 0);
    drop(pool);
    drop(rt);
    f.check_balanced().unwrap();
}

#[test]
fn invalid_pool_options_name_the_item() {
    for (text, needle) in
        [("reuse=maybe", "reuse=maybe"), ("task_limit=-1", "task_limit=`-1`"), ("nokey", "`nokey`"), ("x=1", "x=1")]
    {
        let e = PoolOptions::parse(text).unwrap_err();
        assert_eq!(e.kind, RtErrorKind::Invalid, "{text}");
        assert!(e.message.contains(needle), "{text}: {e}");
    }
}
