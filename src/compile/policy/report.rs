//! What a policy reports besides its assignment: allocation JSON's `policy` object, as typed
//! sections. A policy fills the sections that say something about it; the JSON has a key only
//! for what is set, in key order (serde_json's map is sorted), so a section's field order does
//! not show.

use serde::Serialize;
use serde_json::Value;

/// The `policy` object: the policy's name and its sections.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PolicyReport {
    pub name: String,
    /// min-streams and budget:N: the chain cover that certifies the width.
    #[serde(flatten)]
    pub cover: Option<Cover>,
    /// budget:N: the N asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<u32>,
    /// When `max_streams` or `max_events` bound the policy: by how much, and at what cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budgets: Option<Budgets>,
    /// `budgets.budget_cost` repeated at the top, where a reader looks first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_cost: Option<f64>,
    /// budget:N with costs asked for: the makespan against the unbounded run.
    #[serde(flatten)]
    pub unbounded: Option<Unbounded>,
    /// auto: the search's choice and every candidate it ran.
    #[serde(flatten)]
    pub auto: Option<AutoReport>,
    /// A peer allocator's plan (`simulate --policy PEER`).
    #[serde(flatten)]
    pub peer: Option<PeerReport>,
    /// Under `memory_limit`: the limit, the plan's peak and the order that fit it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryFit>,
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
}

impl PolicyReport {
    /// A report with no section yet.
    pub fn named(name: impl Into<String>) -> Self {
        PolicyReport { name: name.into(), ..Default::default() }
    }

    /// Allocation JSON's `policy` object.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).expect("policy reports serialise")
    }

    /// Whether any section is set (the text summary prints a policy line only then).
    pub fn has_details(&self) -> bool {
        *self != PolicyReport::named(self.name.clone())
    }

    /// The streams the policy made before a budget merged them, when one did.
    pub fn unbudgeted_streams(&self) -> Option<u32> {
        self.budgets.as_ref().and_then(|b| b.unbudgeted_streams)
    }
}

/// A minimum chain cover's certificate: its chain count and an antichain as large.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Cover {
    pub width: usize,
    /// Names of the antichain's nodes (min-streams reports them; budget:N only the width).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub antichain: Option<Vec<String>>,
}

/// How far `max_streams` / `max_events` cut a policy, and what that cost when asked.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Budgets {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_streams: Option<u32>,
    /// Streams the policy made before `max_streams` merged them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unbudgeted_streams: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_events: Option<u32>,
    /// Policy streams left once the sync ids fit `max_events`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_budget_streams: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budgeted_makespan_us: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budgeted_event_ids: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ideal_us: Option<f64>,
    /// Why the unbudgeted run was not made (too many streams for the device, a device limit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unbudgeted_skipped: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unbudgeted_makespan_us: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unbudgeted_event_ids: Option<u32>,
    /// Budgeted over unbudgeted makespan.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_cost: Option<f64>,
}

impl Budgets {
    pub fn is_empty(&self) -> bool {
        *self == Budgets::default()
    }
}

/// budget:N's makespan against the unbounded (min-streams) run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Unbounded {
    pub makespan_us: f64,
    pub unbounded_makespan_us: f64,
    pub unbounded_streams: u32,
    pub makespan_vs_unbounded: f64,
}

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

/// A peer allocator's plan: its streams and waits.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PeerReport {
    pub streams: u32,
    pub waits: usize,
}
