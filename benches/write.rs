//! Writing allocation JSON: the streamed writer (`Allocation::json`, what every command uses)
//! against building a `serde_json::Value` tree of the same document and printing that, the
//! way the writer worked before. Both produce the same bytes (checked here). Each way runs in a
//! child process so its peak resident memory is its own. Run: `cargo bench --bench write`;
//! `WRITE_BENCH_SIZES=100000` and `WRITE_BENCH_FAMILIES=layered` pick sizes and families.

use std::time::Instant;
use stream_alloc::memory::AllocationDocument;

use stream_alloc::compile::Stage;
use stream_alloc::graph::synth::{Family, generate};

fn status_mb(key: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with(key)).map(str::to_string))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|k| k.parse::<f64>().ok()))
        .map_or(0.0, |kb| kb / 1024.0)
}

fn family_of(name: &str) -> Family {
    match name {
        "layered" => Family::Layered { width: 8 },
        "window" => Family::Random { window: Some(32) },
        _ => Family::Random { window: None },
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
        alloc.to_json_string(&model)
    } else {
        let mut s = serde_json::to_string_pretty(&alloc.to_json(&model)).unwrap();
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
    let sizes = std::env::var("WRITE_BENCH_SIZES").unwrap_or_else(|_| "100000,1000000".into());
    let families = std::env::var("WRITE_BENCH_FAMILIES").unwrap_or_else(|_| "layered,window".into());
    println!("{:<8} {:>8} {:>7} {:>9} {:>10} {:>9}", "family", "nodes", "way", "write_ms", "extra_MB", "text_MB");
    for size in sizes.split(',') {
        for family in families.split(',') {
            let mut sums = Vec::new();
            for way in ["stream", "value"] {
                let out = std::process::Command::new(std::env::current_exe().expect("own path"))
                    .env("WRITE_BENCH_CHILD", format!("{family}:{size}:{way}"))
                    .output()
                    .expect("the child runs");
                let line = String::from_utf8_lossy(&out.stdout);
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
}
