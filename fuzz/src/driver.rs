//! A libFuzzer-free driver for the stable toolchain: replays files or directories given on the
//! command line, or, with `--secs N`, runs inputs made by a seeded generator (random bytes, and
//! mutations of the seed files given with `--seeds DIR`) until the budget is spent. A panic saves
//! the input under `fuzz/artifacts/<target>/` and exits 1. Prints executions and findings.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Tokens spliced into mutated JSON: the structures and values the loader treats specially.
const TOKENS: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"",
    "null",
    "true",
    "-1",
    "0",
    "4294967296",
    "1e999",
    "-0.0",
    "\"name\"",
    "\"nodes\"",
    "\"edges\"",
    "\"subgraphs\"",
    "\"partition\"",
    "\"attrs\"",
    "\"stream\"",
    "\"engine\"",
    "\"tasks\"",
    "\"parent\"",
    "\"src\"",
    "\"dst\"",
    "\"kind\"",
    "\"control\"",
    "\"stream_label\"",
    "\"attached_streams\"",
    "\"continuous_stream_label\"",
    "\"options\"",
    "\"enable_single_stream\"",
    "\"event\"",
    "\"notify\"",
    "\"max_task_count\"",
    "\"AIcoreEngine\"",
    "\"DNN_HCCL\"",
    "\"While\"",
    "\"StreamActive\"",
    "\"shape\"",
    "\"dynamic\"",
    "\"\\u0000\"",
];

fn mutate(rng: &mut Rng, seed: &[u8]) -> Vec<u8> {
    let mut v = seed.to_vec();
    for _ in 0..1 + rng.below(8) {
        let at = rng.below(v.len() + 1);
        match rng.below(6) {
            0 if !v.is_empty() => {
                let i = at.min(v.len() - 1);
                v[i] ^= 1 << rng.below(8);
            }
            1 if !v.is_empty() => {
                let end = (at + rng.below(64)).min(v.len());
                v.drain(at.min(end)..end);
            }
            2 => {
                let t = TOKENS[rng.below(TOKENS.len())];
                v.splice(at..at, t.bytes());
            }
            3 if !v.is_empty() => {
                // Duplicate a chunk (duplicate names, repeated entries).
                let start = rng.below(v.len());
                let end = (start + rng.below(256)).min(v.len());
                let chunk = v[start..end].to_vec();
                v.splice(at..at, chunk);
            }
            4 => v.truncate(at),
            _ => {
                let t = rng.next().to_le_bytes();
                v.splice(at..at, t[..rng.below(8)].iter().copied());
            }
        }
    }
    v
}

fn files_in(p: &Path, out: &mut Vec<PathBuf>) {
    if p.is_dir() {
        let mut entries: Vec<PathBuf> =
            std::fs::read_dir(p).into_iter().flatten().flatten().map(|e| e.path()).collect();
        entries.sort();
        for e in entries {
            files_in(&e, out);
        }
    } else if p.is_file() {
        out.push(p.to_path_buf());
    }
}

fn save(target: &str, input: &[u8]) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("artifacts").join(target);
    let _ = std::fs::create_dir_all(&dir);
    let h = input.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    let p = dir.join(format!("crash-{h:016x}"));
    let _ = std::fs::write(&p, input);
    p
}

/// Runs `check` as the command line asks; returns the process exit code.
pub fn main(target: &str, check: fn(&[u8])) -> i32 {
    let mut secs = None;
    let mut seed = 1u64;
    let mut max_len = 4096usize;
    let mut seeds = Vec::new();
    let mut replay = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--secs" => secs = args.next().and_then(|s| s.parse().ok()),
            "--seed" => seed = args.next().and_then(|s| s.parse().ok()).unwrap_or(1),
            "--max-len" => max_len = args.next().and_then(|s| s.parse().ok()).unwrap_or(4096),
            "--seeds" => files_in(Path::new(&args.next().unwrap_or_default()), &mut seeds),
            _ => files_in(Path::new(&a), &mut replay),
        }
    }
    std::panic::set_hook(Box::new(|_| {}));
    let run = |input: &[u8]| catch_unwind(AssertUnwindSafe(|| check(input)));
    let report = |input: &[u8], e: Box<dyn std::any::Any + Send>| {
        let msg = e
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        let p = save(target, input);
        eprintln!("{target}: FAILURE ({msg}); input saved to {}", p.display());
    };
    let mut execs = 0u64;
    for f in &replay {
        let input = std::fs::read(f).unwrap_or_default();
        execs += 1;
        if let Err(e) = run(&input) {
            report(&input, e);
            return 1;
        }
    }
    let Some(secs) = secs else {
        println!("{target}: replayed {execs} inputs, no failure");
        return 0;
    };
    let seed_data: Vec<Vec<u8>> = seeds.iter().filter_map(|f| std::fs::read(f).ok()).collect();
    let mut rng = Rng(seed.max(1));
    let start = Instant::now();
    let budget = Duration::from_secs(secs);
    let mut next_report = 60;
    while start.elapsed() < budget {
        let input = if !seed_data.is_empty() && rng.below(4) != 0 {
            {
                let pick = rng.below(seed_data.len());
                mutate(&mut rng, &seed_data[pick])
            }
        } else {
            (0..rng.below(max_len)).map(|_| rng.next() as u8).collect()
        };
        execs += 1;
        if let Err(e) = run(&input) {
            report(&input, e);
            println!("{target}: {execs} executions in {:.0?}, 1 failure", start.elapsed());
            return 1;
        }
        if start.elapsed().as_secs() >= next_report {
            println!("{target}: {execs} executions after {}s", next_report);
            next_report += 60;
        }
    }
    println!(
        "{target}: {execs} executions in {:.0?} (seed {seed}, {} seed files), no failure",
        start.elapsed(),
        seed_data.len()
    );
    0
}
