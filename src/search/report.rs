//! What `policy=auto` and `memory_limit` report (allocation JSON's `policy` object): auto's
//! choice and every candidate it ran ([`super::auto`]), its improvement pass
//! ([`super::refine`]) and the memory fit ([`super::fit`]), as sections of
//! [`PolicyReport`](crate::compile::policy::PolicyReport), defined here beside what fills them.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::compile::policy::report::{Section, flattened};

/// auto's choice, every candidate it ran and what its improvement pass did.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct AutoReport {
    /// The name of the policy that won.
    pub chosen: String,
    pub makespan_us: f64,
    pub ideal_us: f64,
    pub why: String,
    pub candidates: Vec<CandidateRow>,
    pub refine: RefineReport,
}

/// One candidate of `auto`: its simulated plan, or why it was rejected. A candidate stopped by
/// a device limit before it had a plan has only its name, the reference times and the reason.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CandidateRow {
    pub policy: String,
    pub ideal_us: f64,
    pub lower_bound_us: f64,
    /// The simulated plan, when the candidate made one.
    #[serde(flatten)]
    pub plan: Option<CandidatePlan>,
    /// Streams the policy made before a budget merged them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unbudgeted_streams: Option<u32>,
    /// The memory plan's peak, when the graph has sizes and no device limit rejected the plan.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_bytes: Option<u64>,
    /// `memory`: the plan is the candidate's assignment in the memory-aware order, run because
    /// its own order was over `memory_limit`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub execution_order: Option<String>,
    /// Syncs added for memory (src/memory/syncs.rs): the plan is the candidate's with these
    /// pairs added, run because it was over `memory_limit` without them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_syncs: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rejected: Option<String>,
}

/// A candidate's plan as the simulator ran it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct CandidatePlan {
    pub makespan_us: f64,
    pub streams: u32,
    pub syncs: usize,
    pub event_ids: u32,
}

/// The improvement pass on auto's winner: skipped (and why), or the trials it ran and the
/// moves it kept.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RefineReport {
    /// The candidate the pass started from.
    pub from: String,
    pub trial_budget: usize,
    /// Why the pass did not run; `ran` is then `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
    #[serde(flatten)]
    pub ran: Option<RefineRun>,
}

/// The trials the improvement pass ran and the moves it kept.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct RefineRun {
    pub trials: usize,
    /// Trials whose plan did not fit the budgets.
    pub rejected_trials: usize,
    pub makespan_before_us: f64,
    pub makespan_us: f64,
    pub moves: Vec<RefineMove>,
    /// The first refused trial's error: what the budgets stopped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_refused_trial: Option<String>,
}

/// A move the improvement pass kept: what it did, where on the critical path, how many nodes it
/// moved and the makespan after it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RefineMove {
    #[serde(rename = "move")]
    pub kind: String,
    pub at: MovePoint,
    pub nodes: usize,
    pub makespan_us: f64,
}

/// A point of the critical path, by node names: a node that waited for compute units, or a
/// record and the node that waits on it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MovePoint {
    Units(String),
    Wait([String; 2]),
}

/// How a policy's plan fits `memory_limit`.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MemoryFit {
    /// The option as given (`1.1x`, or bytes).
    pub memory_limit: String,
    pub limit_bytes: u64,
    /// The single-stream plan's peak the limit multiplies, when it is a multiple.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub single_stream_peak_bytes: Option<u64>,
    pub peak_bytes: u64,
    /// The execution order of the plan that fit (`critical-path` or `memory`).
    pub execution_order: String,
    /// Syncs added for memory to make it fit (src/memory/syncs.rs), when any were.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_syncs: Option<usize>,
}

impl Section for AutoReport {
    fn entries(&self) -> Map<String, Value> {
        flattened(self)
    }
}

impl Section for MemoryFit {
    /// Under the `memory` key: the limit, the plan's peak and the order that fit it.
    fn entries(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("memory".into(), serde_json::to_value(self).expect("report sections serialise"));
        m
    }
}
