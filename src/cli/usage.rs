//! Usage checks the argument parser can not make: the names in `--option KEY=VALUE`.
//!
//! An `--option` that is not of the form `KEY=VALUE`, or whose KEY no command knows, is bad
//! usage (exit 2), reported before anything runs and with the closest known name as a tip, the
//! way the parser reports a misspelt subcommand. Nothing is written to `-o OUT` then. A known
//! option with a value it does not accept is GE's E10001, an allocation error (exit 1, the
//! error document), as it is when the same value comes from a graph file or the C ABI.

use stream_alloc::frontend::closest_option;
use stream_alloc::graph::Options;

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
