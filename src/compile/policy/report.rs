//! What a policy reports besides its assignment: allocation JSON's `policy` object, as typed
//! sections. A policy fills the sections that say something about it; the JSON has a key only
//! for what is set, in key order (serde_json's map is sorted), so a section's field order does
//! not show.

use std::any::Any;
use std::sync::Arc;

use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

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
    /// The sections the layers above fill: auto's choice and candidates
    /// (`search::report::AutoReport`), a peer allocator's plan (`baseline::PeerReport`), the
    /// memory fit (`search::report::MemoryFit`). Each is defined beside what fills it.
    #[serde(flatten)]
    pub sections: Sections,
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

    /// The section of type `T`, when a layer above filled one.
    pub fn section<T: Section>(&self) -> Option<&T> {
        self.sections.0.iter().find_map(|s| (s.as_ref() as &dyn Any).downcast_ref::<T>())
    }

    /// Sets the section of type `T`, replacing one set before.
    pub fn set_section<T: Section>(&mut self, section: T) {
        self.sections.0.retain(|s| !(s.as_ref() as &dyn Any).is::<T>());
        self.sections.0.push(Arc::new(section));
    }

    /// [`Self::set_section`] on a new report named `name`.
    pub fn with_section<T: Section>(name: impl Into<String>, section: T) -> Self {
        let mut r = PolicyReport::named(name);
        r.set_section(section);
        r
    }
}

/// A section of the `policy` object filled by a layer above compile (auto's search, a peer's
/// plan, the memory fit). The report keeps it typed ([`PolicyReport::section`]) without
/// compile naming its type, so each section is defined beside what fills it.
pub trait Section: Any + std::fmt::Debug + Send + Sync {
    /// The section's keys in the `policy` object, with their values.
    fn entries(&self) -> Map<String, Value>;
}

/// The entries of a section serialised at the top of the `policy` object (`#[serde(flatten)]`).
pub fn flattened(section: &impl Serialize) -> Map<String, Value> {
    match serde_json::to_value(section).expect("report sections serialise") {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// The sections of a report, at most one of each type; compared and written by their entries.
#[derive(Clone, Debug, Default)]
pub struct Sections(Vec<Arc<dyn Section>>);

impl Sections {
    fn entries(&self) -> Map<String, Value> {
        let mut m = Map::new();
        for s in &self.0 {
            m.extend(s.entries());
        }
        m
    }
}

impl PartialEq for Sections {
    fn eq(&self, other: &Self) -> bool {
        self.entries() == other.entries()
    }
}

impl Serialize for Sections {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.entries().serialize(s)
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
    /// `"lifetime"`: the streams fit `max_events` only with their sync ids reused by lifetime.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_reuse: Option<&'static str>,
    /// The sync ids the same streams need with one id per sync (over `max_events`), when
    /// `event_reuse` is set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exact_event_ids: Option<u32>,
    /// `"phases"`: one policy stream fit `max_events` only in an execution order by phases
    /// (`policy::phases`), not in the pipeline's own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_budget_order: Option<&'static str>,
    /// The sync ids the same streams needed in the pipeline's own order (over `max_events`),
    /// when `event_budget_order` is set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pipeline_order_event_ids: Option<u32>,
    /// Policy streams left once the streams that reused ids kept split within the device's
    /// streams (`MAX_STREAM_NUM`): cut as one id per sync would cut them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_limit_streams: Option<u32>,
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
