//! The independent checker: proves the rules of allocation JSON (docs/allocation-json.md)
//! for a graph and an allocation document. It reads the document itself and shares no code
//! with the passes beyond the graph model, so a bug in a pass is not mirrored here.
//!
//! It reads what allocation-json.md says a reader reads: stream order, `syncs` (every
//! Send/Recv pair, whatever its kind) and `activations`; nothing else orders two nodes. Nodes
//! without device tasks are transparent: an edge through them is checked between the
//! task-bearing nodes on either side ([`doc::Doc::dependencies`]).
//!
//! Besides the verdict it reports the edge minimum, the fewest syncs that order every
//! dependency when each sync joins the two ends of one ([`metrics::edge_sync_minimum`], by
//! per-node bitset reachability, a different algorithm from the pass's vector-clock sweep). It
//! is not a lower bound: a sync between other points, such as the split's between two pieces
//! of a stream, can order several dependencies at once. And it reports the graph's width with
//! an antichain witness ([`metrics::width`], Dilworth by bipartite matching).

#![forbid(unsafe_code)]

pub mod doc;
pub mod memory;
pub mod metrics;
pub mod rules;
pub mod tasks;

use serde_json::{Value, json};

use crate::graph::Model;

/// One broken rule, naming the edge, sync or field at fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    /// Rule number of allocation-json.md (1..8); 0 for a document that can not be read.
    pub rule: u32,
    pub message: String,
}

/// The checker's findings.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    pub graph: String,
    pub violations: Vec<Violation>,
    /// Dependencies whose order was proven (rule 1): edges between task-bearing nodes, through
    /// task-less ones.
    pub edges_checked: usize,
    /// Sync pairs in the document, and distinct ids.
    pub sync_pairs: usize,
    pub sync_ids: usize,
    /// The edge minimum: fewest syncs that order every dependency for this stream assignment
    /// when each sync joins the two ends of one (task-less nodes contracted). Not a lower bound
    /// for syncs between other points. `None` when the document is unreadable or the graph is
    /// too large ([`metrics::MAX_STREAM_REACH`]).
    pub edge_sync_minimum: Option<usize>,
    /// Largest set of mutually independent task nodes, and one such set.
    pub width: Option<usize>,
    pub antichain: Vec<String>,
    /// Distinct streams that carry at least one node (main and attached).
    pub streams_used: usize,
    /// Overlapping tensor pairs tested under rule 8; `None` without a `memory` section.
    pub memory_overlaps_checked: Option<usize>,
    /// Most tasks on one physical stream (rule 7's count), and that stream.
    pub max_stream_tasks: Option<(u32, u64)>,
}

impl Report {
    pub fn ok(&self) -> bool {
        self.violations.is_empty()
    }

    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "format": "stream-allocation-check",
            "version": 1,
            "graph": self.graph,
            "ok": self.ok(),
            "violations": self.violations.iter().map(|v| json!({"rule": v.rule, "message": v.message})).collect::<Vec<_>>(),
            "edges_checked": self.edges_checked,
            "syncs": {"pairs": self.sync_pairs, "ids": self.sync_ids, "edge_minimum": self.edge_sync_minimum},
            "width": {"value": self.width, "antichain": self.antichain},
            "streams_used": self.streams_used,
            "max_stream_tasks": self.max_stream_tasks.map(|(s, t)| json!({"stream": s, "tasks": t})),
        });
        if let Some(n) = self.memory_overlaps_checked {
            v["memory"] = json!({"overlaps_checked": n});
        }
        v
    }
}

/// Checks an allocation document against the graph it was made for, rule 7 with the task
/// limits the graph's options give.
pub fn check(model: &Model, allocation: &Value) -> Report {
    check_with_limits(model, allocation, tasks::Limits::of(&model.options))
}

/// [`check`] with rule 7's task limits given (the `verify` option: the limits the split used).
pub fn check_with_limits(model: &Model, allocation: &Value, limits: tasks::Limits) -> Report {
    let mut report = Report { graph: model.name.clone(), ..Default::default() };
    let (w, antichain) = metrics::width(model);
    report.width = w;
    report.antichain = antichain;
    let doc = match doc::Doc::parse(model, allocation) {
        Ok(d) => d,
        Err(vs) => {
            report.violations = vs;
            return report;
        }
    };
    report.sync_pairs = doc.syncs.len();
    report.sync_ids = doc.syncs.iter().map(|s| s.id).collect::<std::collections::BTreeSet<_>>().len();
    report.streams_used = doc.streams_used();
    let deps = doc.dependencies(model);
    report.edge_sync_minimum = metrics::edge_sync_minimum(&doc, &deps);
    let mut vs = doc.problems.clone();
    report.edges_checked = rules::check_rules(model, &doc, &deps, &mut vs);
    report.max_stream_tasks = tasks::check_task_limits(model, &doc, limits, &mut vs);
    report.memory_overlaps_checked = memory::check_memory(model, &doc, allocation, &mut vs);
    report.violations = vs;
    report
}
