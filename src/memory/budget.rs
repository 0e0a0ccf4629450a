//! `memory_limit` on `policy=auto` (src/search/fit.rs resolves it to bytes). Each candidate's
//! allocation gets its memory plan; a candidate whose arena exceeds the limit is rejected (its
//! report row says so), and auto keeps the fastest of the rest. When none fits, allocation fails
//! naming the smallest peak any candidate reached, so the caller knows how far off the limit
//! is. `single` is always a candidate, and its plan is the sequential baseline (docs/memory.md).

use super::has_memory_facts;
use crate::error::{Error, ErrorKind, Result};
use crate::graph::{Model, Options};

/// `memory_limit` needs sizes to bound anything: refuses a graph without `out_bytes`.
pub fn require_sizes(model: &Model, options: &Options) -> Result<()> {
    match options.memory_limit {
        Some(max) if !has_memory_facts(model) => Err(Error::new(
            ErrorKind::InvalidOption,
            format!(
                "option memory_limit={max} bounds the memory plan, but graph '{}' gives no out_bytes to plan with",
                model.name
            ),
        )),
        _ => Ok(()),
    }
}

/// Whether a candidate's peak (its memory plan's `peak_bytes`, when the graph has sizes) fits
/// `limit` (bytes, `memory_limit` resolved): `None` when it does, else why not, as its report
/// row says it; `smallest` keeps the lowest peak seen and its policy.
pub fn judge(
    limit: Option<u64>,
    peak: Option<u64>,
    smallest: &mut Option<(u64, String)>,
    policy: String,
) -> Option<String> {
    let peak = peak?;
    if smallest.as_ref().is_none_or(|(p, _)| peak < *p) {
        *smallest = Some((peak, policy));
    }
    match limit {
        Some(max) if peak > max => Some(format!("peak {peak} bytes > memory_limit {max} bytes")),
        _ => None,
    }
}

/// The error when every candidate is over `memory_limit` (`limit`: as the error writes it).
pub fn none_fits(model: &Model, limit: &str, smallest: Option<(u64, String)>) -> Error {
    let detail =
        smallest.map_or_else(String::new, |(p, name)| format!("; the smallest peak is {p} bytes (policy {name})"));
    Error::new(
        ErrorKind::Limit,
        format!("policy auto on graph '{}': every candidate needs more than memory_limit={limit}{detail}", model.name),
    )
}
