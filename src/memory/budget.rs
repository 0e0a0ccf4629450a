//! `max_memory`: the bound on `policy=auto`. Each candidate's allocation gets its memory plan;
//! a candidate whose arena exceeds the bound is rejected (its report row says so), and auto
//! keeps the fastest of the rest. When none fits, allocation fails naming the smallest peak
//! any candidate reached, so the caller knows how far off the bound is. Adding syncs to let
//! memory be reused is left to the candidates themselves: `single` is always one, and its
//! plan is the sequential baseline (docs/memory.md).

use super::has_memory_facts;
use crate::compile::policy::report::CandidateRow;
use crate::error::{Error, ErrorKind, Result};
use crate::graph::{Model, Options};

/// `max_memory` needs sizes to bound anything: refuses a graph without `out_bytes`.
pub fn require_sizes(model: &Model, options: &Options) -> Result<()> {
    match options.max_memory {
        Some(max) if !has_memory_facts(model) => Err(Error::new(
            ErrorKind::InvalidOption,
            format!(
                "option max_memory={max} bounds the memory plan, but graph '{}' gives no out_bytes to plan with",
                model.name
            ),
        )),
        _ => Ok(()),
    }
}

/// Adds the candidate's peak (its memory plan's `peak_bytes`, when the graph has sizes) to its
/// report row and says whether it fits `max_memory`; `smallest` keeps the lowest peak seen and
/// its policy.
pub fn judge(
    options: &Options,
    peak: Option<u64>,
    row: &mut CandidateRow,
    smallest: &mut Option<(u64, String)>,
    policy: String,
) -> bool {
    let Some(peak) = peak else { return true };
    row.peak_bytes = Some(peak);
    if smallest.as_ref().is_none_or(|(p, _)| peak < *p) {
        *smallest = Some((peak, policy));
    }
    match options.max_memory {
        Some(max) if peak > max => {
            row.rejected = Some(format!("peak {peak} bytes > max_memory {max}"));
            false
        }
        _ => true,
    }
}

/// The error when every candidate is over `max_memory`.
pub fn none_fits(model: &Model, options: &Options, smallest: Option<(u64, String)>) -> Error {
    let max = options.max_memory.unwrap_or(0);
    let detail =
        smallest.map_or_else(String::new, |(p, name)| format!("; the smallest peak is {p} bytes (policy {name})"));
    Error::new(
        ErrorKind::Limit,
        format!(
            "policy auto on graph '{}': every candidate needs more than max_memory={max} bytes{detail}",
            model.name
        ),
    )
}
