//! The compile side asks the device-runtime seam for its task limits (GE's
//! `GetMaxStreamAndTask` and unlimited-depth query) when the options do not give them.
//!
//! These tests register a process-wide runtime table, so they live in their own test binary
//! and take one lock: no other test sees the registration.

use crate::common::RUNTIME_LOCK;
use crate::fake_rt::{Fake, new_fake};
use std::sync::atomic::Ordering;
use stream_alloc::driver::resolve_task_limits;

use stream_alloc::compile::split::TaskLimits;
use stream_alloc::graph::{Model, json};
use stream_alloc::runtime::Runtime;
use stream_alloc::runtime::consts::*;
use stream_alloc::{ErrorKind, Stage, allocate};

/// Registers a fake device (`fuzz/src/fake_rt.rs`) answering `normal` / `huge` tasks and the
/// unlimited-depth capability; the guard unregisters it. Its call count shows whether the seam
/// was asked at all.
struct Device<'a> {
    fake: &'static Fake,
    _lock: parking_lot::MutexGuard<'a, ()>,
}

fn device(normal: u32, huge: u32, unlimited: bool) -> Device<'static> {
    let lock = RUNTIME_LOCK.lock();
    let (_, fake) = new_fake();
    fake.tasks[0].store(normal, Ordering::SeqCst);
    fake.tasks[1].store(huge, Ordering::SeqCst);
    fake.unlimited.store(i64::from(unlimited), Ordering::SeqCst);
    Runtime::register(Some(&fake.ops())).unwrap();
    Device { fake, _lock: lock }
}

impl Device<'_> {
    fn queries(&self) -> u64 {
        self.fake.calls.load(Ordering::SeqCst)
    }
}

impl Drop for Device<'_> {
    fn drop(&mut self) {
        Runtime::register(None).unwrap();
    }
}

/// A chain of `n` nodes of `tasks` tasks each (one logical stream), with `options`.
fn chain(options: &str, n: usize, tasks: u32) -> Model {
    let nodes: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"name":"n{i}","type":"Conv2D","engine":"AIcoreEngine","tasks":{tasks}}}"#))
        .collect();
    let edges: Vec<String> = (1..n).map(|i| format!(r#"{{"src":"n{}","dst":"n{i}"}}"#, i - 1)).collect();
    let text = format!(
        r#"{{"format":"stream-graph","version":1,"name":"g","options":{{{options}}},"nodes":[{}],"edges":[{}]}}"#,
        nodes.join(","),
        edges.join(",")
    );
    json::load_str(&text).unwrap()
}

/// What the command line and the C ABI do: limits resolved against the device, then the
/// pipeline with them.
fn allocate_at_the_edge(m: &Model) -> stream_alloc::Result<stream_alloc::Allocation> {
    let limits = resolve_task_limits(&m.options)?;
    stream_alloc::search::run(m, m.options.clone(), limits, Stage::All, Default::default()).map(|(a, _)| a)
}

fn limits_of(options: &str) -> TaskLimits {
    resolve_task_limits(&chain(options, 1, 1).options).unwrap()
}

#[test]
fn the_device_answers_when_the_options_are_silent() {
    let d = device(2013, 6000, false);
    assert_eq!(limits_of(""), TaskLimits { normal: 2013, huge: Some(6000), unlimited_depth: false });
    assert!(d.queries() >= 3, "normal, huge and capability queries");
}

#[test]
fn options_win_field_by_field() {
    let d = device(2013, 6000, true);
    assert_eq!(
        limits_of(r#""max_task_count":500"#),
        TaskLimits { normal: 500, huge: Some(6000), unlimited_depth: true }
    );
    assert_eq!(
        limits_of(r#""max_huge_task_count":7000,"unlimited_depth":false"#),
        TaskLimits { normal: 2013, huge: Some(7000), unlimited_depth: false }
    );
    let asked = d.queries();
    assert_eq!(
        limits_of(r#""max_task_count":100,"max_huge_task_count":200,"unlimited_depth":false"#),
        TaskLimits { normal: 100, huge: Some(200), unlimited_depth: false }
    );
    assert_eq!(d.queries(), asked, "all three options given: the seam is not asked");
}

#[test]
fn a_failing_huge_query_means_no_huge_streams() {
    let d = device(1018, 0, false);
    assert_eq!(limits_of("").huge, None, "0 huge tasks: no huge streams");
    d.fake.limit_fails[1].store(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, Ordering::SeqCst);
    assert_eq!(limits_of(""), TaskLimits { normal: 1018, huge: None, unlimited_depth: false });
}

#[test]
fn a_failing_normal_query_fails_the_compile_unless_the_options_say_it_all() {
    let d = device(1024, 8192, false);
    d.fake.limit_fails[0].store(ACL_ERROR_RT_PARAM_INVALID, Ordering::SeqCst);
    let m = chain("", 3, 1);
    let e = resolve_task_limits(&m.options).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Failed);
    assert!(e.message.contains("rtGetMaxStreamAndTask") && e.message.contains("107000"), "{}", e.message);
    assert!(e.message.contains("max_task_count"), "the message says how to avoid the query: {}", e.message);
    let e = allocate_at_the_edge(&m).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Failed);
    let m = chain(r#""max_task_count":1024,"max_huge_task_count":8192,"unlimited_depth":false"#, 3, 1);
    assert_eq!(allocate_at_the_edge(&m).unwrap().physical_count(), 1);
}

#[test]
fn without_a_runtime_the_stub_defaults_stay() {
    let _guard = RUNTIME_LOCK.lock();
    // Nothing registered, and this test process has no Ascend runtime in scope.
    assert!(stream_alloc::runtime::device_limits().unwrap().is_none());
    assert_eq!(limits_of(""), TaskLimits { normal: 1024, huge: Some(8192), unlimited_depth: false });
    assert_eq!(limits_of(r#""max_task_count":2014"#), TaskLimits { normal: 2014, huge: None, unlimited_depth: false });
}

#[test]
fn allocate_splits_at_the_device_limit() {
    // 60 nodes of 5 tasks = 300 tasks on one stream: over a 200-task device (with GE's 27
    // reserved), not over the 1024-task stub.
    let m = chain("", 60, 5);
    {
        let d = device(200, 0, false);
        let a = allocate_at_the_edge(&m).unwrap();
        assert_eq!(a.physical_count(), 2, "split at the device's 200 tasks");
        // The compile itself never asks the device: its output depends on its inputs alone.
        assert_eq!(allocate(&m, Stage::All).unwrap().physical_count(), 1, "the library call splits at the options'");
        d.fake.unlimited.store(RT_CAPABILITY_SUPPORT, Ordering::SeqCst);
        assert_eq!(allocate_at_the_edge(&m).unwrap().physical_count(), 1, "unlimited depth: no split");
        let opts = chain(r#""max_task_count":1024"#, 60, 5);
        d.fake.unlimited.store(0, Ordering::SeqCst);
        assert_eq!(allocate_at_the_edge(&opts).unwrap().physical_count(), 1, "the option wins over the device");
    }
    let _guard = RUNTIME_LOCK.lock();
    assert_eq!(allocate_at_the_edge(&m).unwrap().physical_count(), 1, "no runtime: the 1024-task stub");
}
