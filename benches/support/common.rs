//! What the benchmarks share: the synthetic families picked by name prefix, the process's
//! memory as /proc reports it, and the bench run again as a child for one measurement.
#![allow(dead_code)] // each benchmark uses part of it

use stream_alloc::graph::synth::Family;

/// Every family, in the order the tables list them.
pub const FAMILIES: [Family; 5] = [
    Family::Layered { width: 8 },
    Family::Inception,
    Family::Transformer,
    Family::Random { window: None },
    Family::Random { window: Some(32) },
];

/// The families whose names start with one of the comma-separated prefixes of `list`
/// (`layered,window`), in table order.
pub fn families(list: &str) -> Vec<Family> {
    FAMILIES.into_iter().filter(|f| list.split(',').any(|p| f.name().starts_with(p))).collect()
}

/// A field of /proc/self/status (`VmHWM:` is the peak resident set) in MB; 0 where the
/// system has none.
pub fn status_mb(key: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with(key)).map(str::to_string))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|k| k.parse::<f64>().ok()))
        .map_or(0.0, |kb| kb / 1024.0)
}

/// This benchmark run again with `key=value` in its environment (the child measures one case in
/// a fresh process, so its peak memory is its own): the child's output and its stdout as text.
pub fn run_child(key: &str, value: impl AsRef<std::ffi::OsStr>) -> (std::process::Output, String) {
    let out = std::process::Command::new(std::env::current_exe().expect("own path"))
        .env(key, value)
        .output()
        .expect("the child runs");
    let line = String::from_utf8_lossy(&out.stdout).into_owned();
    (out, line)
}
