//! Usage checks the argument parser can not make: the names in `--option KEY=VALUE`.
//!
//! An `--option` that is not of the form `KEY=VALUE`, or whose KEY no command knows, is bad
//! usage (exit 2), reported before anything runs and with the closest known name as a tip, the
//! way the parser reports a misspelt subcommand. Nothing is written to `-o OUT` then. A known
//! option with a value it does not accept is GE's E10001, an allocation error (exit 1, the
//! error document), as it is when the same value comes from a graph file or the C ABI.

use stream_alloc::graph::Options;
use stream_alloc::graph::options::OPTION_KEYS;

/// GE's option names that [`Options::canonical_key`] accepts besides [`OPTION_KEYS`] (a test
/// keeps the two in step).
pub const GE_OPTION_NAMES: &[&str] = &[
    "ge.enableSingleStream",
    "ge.streamMaxParallelNum",
    "ge.hcomParallel",
    "ge.event",
    "ge.exec.memoryOptimizationPolicy",
    "ge.autoMultistreamParallelMode",
    "ENABLE_DYNAMIC_SHAPE_MULTI_STREAM",
];

/// Levenshtein distance over characters, ASCII case folded.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().map(|c| c.to_ascii_lowercase()).collect();
    let b: Vec<char> = b.chars().map(|c| c.to_ascii_lowercase()).collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The known option name closest to `key`, when it is close enough to be a typo: at most a
/// third of the longer name's characters differ (at least one may).
pub fn closest_option(key: &str) -> Option<&'static str> {
    OPTION_KEYS
        .iter()
        .chain(GE_OPTION_NAMES)
        .map(|k| (distance(key, k), *k))
        .filter(|(d, k)| *d <= (key.chars().count().max(k.len()) / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Checks every `--option` of a command; the message of the first bad one.
pub fn check_options(command: &str, options: &[String]) -> Result<(), String> {
    for o in options {
        let Some((key, _)) = o.split_once('=') else {
            return Err(format!(
                "--option '{o}' is not of the form KEY=VALUE\n\nFor the option list, try 'stream-alloc {command} --help'."
            ));
        };
        let key = key.trim();
        if Options::canonical_key(key).is_some() {
            continue;
        }
        let tip = match closest_option(key) {
            Some(k) => format!("\n\n  tip: a similar option exists: '{k}'"),
            None => String::new(),
        };
        return Err(format!(
            "unknown option name '{key}' in --option '{o}'{tip}\n\nFor the option list, try 'stream-alloc {command} --help'."
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ge_names_are_the_ones_options_accepts() {
        for k in OPTION_KEYS.iter().chain(GE_OPTION_NAMES) {
            assert!(Options::canonical_key(k).is_some(), "{k}");
        }
    }

    #[test]
    fn typos_get_the_closest_name() {
        assert_eq!(closest_option("verfy"), Some("verify"));
        assert_eq!(closest_option("max-task-count"), Some("max_task_count"));
        assert_eq!(closest_option("max_paralel_num"), Some("max_parallel_num"));
        assert_eq!(closest_option("ge.enableSingleStrem"), Some("ge.enableSingleStream"));
        assert_eq!(closest_option("polcy"), Some("policy"));
        assert_eq!(closest_option("nosuch"), None);
        assert!(check_options("allocate", &["verify=true".into(), "ge.event=notify".into()]).is_ok());
        assert!(check_options("allocate", &["verify".into()]).unwrap_err().contains("KEY=VALUE"));
    }
}
