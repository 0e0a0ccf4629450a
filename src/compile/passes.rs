//! A registry of named compile passes, so a tool (`stream-alloc pass`) or a test can run
//! exactly the passes it names, in the order it names them.
//!
//! Every pass is found by its GE name (`AssignByDependencyPass`) or by its module name
//! (`by_dependency`). A [`PassKind::Graph`] pass runs once per graph; consecutive graph
//! passes are run together per graph, root first, then nested graphs in `all_graphs()` order,
//! which is GE's `DoAssign` order (a nested graph sees its parent node's final stream). A
//! [`PassKind::Model`] pass runs once over the whole model.
//!
//! GE's two chains are slices of the registry ([`MULTI_STREAM_CHAIN`], [`SINGLE_STREAM_CHAIN`]):
//! the pipeline runs them through [`run`], the same runner `stream-alloc pass` uses, and
//! `pass --help` and `docs/passes.md` are written from the registry ([`help_text`],
//! [`markdown`]).
//!
//! Adding a pass: write `fn(&mut PassContext<'_>, GraphId) -> Result<()>` (per graph) or
//! `fn(&mut PassContext<'_>) -> Result<()>` (whole model), and add one [`PassEntry`] to
//! [`PASSES`]. State a later stage needs goes into a new field of [`PassContext`].

use crate::compile::logical::{self, LogicalResult, LogicalState, cv_parallel};
use crate::error::Result;
use crate::graph::partition::Partition;
use crate::graph::{AutoMultistreamMode, GraphId, Model, Options};
use crate::{bail, err};

/// What the passes read and write.
pub struct PassContext<'m> {
    pub logical: LogicalState<'m>,
}

#[derive(Clone, Copy)]
pub enum PassKind {
    Graph(fn(&mut PassContext<'_>, GraphId) -> Result<()>),
    Model(fn(&mut PassContext<'_>) -> Result<()>),
}

/// One registered pass.
#[derive(Clone, Copy)]
pub struct PassEntry {
    /// GE's class name.
    pub ge_name: &'static str,
    /// The module that implements it.
    pub name: &'static str,
    pub kind: PassKind,
    pub summary: &'static str,
}

macro_rules! graph_pass {
    ($module:ident) => {
        PassKind::Graph(|ctx, g| logical::$module::run(&mut ctx.logical, g))
    };
}

fn by_dependency(ctx: &mut PassContext<'_>, g: GraphId) -> Result<()> {
    let d = ctx.logical.default_stream(g);
    logical::by_dependency::run(&mut ctx.logical, g, d)
}

fn node_stream_update(ctx: &mut PassContext<'_>, g: GraphId) -> Result<()> {
    let d = ctx.logical.default_stream(g);
    logical::node_stream_update::run(&mut ctx.logical, g, d)
}

fn single_stream(ctx: &mut PassContext<'_>, g: GraphId) -> Result<()> {
    let d = ctx.logical.default_stream(g);
    let mode = ctx.logical.model.auto_multistream_mode(ctx.logical.options)?;
    logical::single_stream::run(&mut ctx.logical, g, d, mode)
}

fn path_cover(ctx: &mut PassContext<'_>) -> Result<()> {
    let mode = ctx.logical.model.auto_multistream_mode(ctx.logical.options)?;
    logical::path_cover::run(&mut ctx.logical, mode)
}

/// Every pass, in GE's chain order.
pub static PASSES: &[PassEntry] = &[
    PassEntry {
        ge_name: "SingleStreamPass",
        name: "single_stream",
        kind: PassKind::Graph(single_stream),
        summary: "one stream for every unassigned subgraph (single-stream chain)",
    },
    PassEntry {
        ge_name: "UpdateForMdeGroupPass",
        name: "mde_group",
        kind: graph_pass!(mde_group),
        summary: "fresh streams per NewStreamId (burned: NodeStreamUpdatePass overwrites them)",
    },
    PassEntry {
        ge_name: "AssignByLabelPass",
        name: "by_label",
        kind: graph_pass!(by_label),
        summary: "one stream per stream label",
    },
    PassEntry {
        ge_name: "IndependentStreamPass",
        name: "independent_stream",
        kind: graph_pass!(independent_stream),
        summary: "one stream per (independent engine, label)",
    },
    PassEntry {
        ge_name: "AssignByDependencyPass",
        name: "by_dependency",
        kind: PassKind::Graph(by_dependency),
        summary: "reuse a predecessor's stream or take a new engine stream",
    },
    PassEntry {
        ge_name: "NodeStreamUpdatePass",
        name: "node_stream_update",
        kind: PassKind::Graph(node_stream_update),
        summary: "copy subgraph streams onto nodes",
    },
    PassEntry {
        ge_name: "UpdateForParallelGroupPass",
        name: "parallel_group",
        kind: graph_pass!(parallel_group),
        summary: "one stream per parallel group within each stream",
    },
    PassEntry {
        ge_name: "AllReduceParallelPass",
        name: "all_reduce_parallel",
        kind: graph_pass!(all_reduce_parallel),
        summary: "move all-reduce successors to fresh streams (hcom_parallel)",
    },
    PassEntry {
        ge_name: "UpdateForSkippedEnginePass",
        name: "skipped_engine",
        kind: graph_pass!(skipped_engine),
        summary: "place nodes of skip-assign engines on a neighbour's stream or none",
    },
    PassEntry {
        ge_name: "OptimizeIneffectiveMultiStreamPass",
        name: "ineffective_multi_stream",
        kind: graph_pass!(ineffective_multi_stream),
        summary: "fold a lone node back between adjacent nodes of a neighbour's stream",
    },
    PassEntry {
        ge_name: "MiniDAGStreamPass",
        name: "path_cover",
        kind: PassKind::Model(path_cover),
        summary: "auto multi-stream DAG modes: minimum path cover merged to N streams",
    },
    PassEntry {
        ge_name: "RefreshContinuousStreams",
        name: "refresh_continuous",
        kind: PassKind::Model(|ctx| {
            logical::refresh_continuous::run(&mut ctx.logical);
            Ok(())
        }),
        summary: "renumber used stream ids densely from 0",
    },
    PassEntry {
        ge_name: "AssignAttachedStreamPass",
        name: "attached_stream",
        kind: PassKind::Model(|ctx| logical::attached_stream::run_all(&mut ctx.logical)),
        summary: "attached streams, numbered after the main streams",
    },
];

/// GE's multi-stream chain (`LogicalStreamAllocator::Assign`, ge-compiler.md §4.1): the
/// `DoAssign` passes on the root, then on every nested graph in `all_graphs()` order with one
/// shared `next_stream`; the auto multi-stream custom pass (MiniDAG path cover) when a DAG
/// mode is set; `RefreshContinuousStreams`; then attached streams numbered after the main ones.
pub const MULTI_STREAM_CHAIN: &[&str] = &[
    "UpdateForMdeGroupPass",
    "AssignByLabelPass",
    "IndependentStreamPass",
    "AssignByDependencyPass",
    "NodeStreamUpdatePass",
    "UpdateForParallelGroupPass",
    "AllReduceParallelPass",
    "UpdateForSkippedEnginePass",
    "OptimizeIneffectiveMultiStreamPass",
    "MiniDAGStreamPass",
    "RefreshContinuousStreams",
    "AssignAttachedStreamPass",
];

/// GE's single-stream chain (`enable_single_stream`): `SingleStreamPass` →
/// `NodeStreamUpdatePass` → `UpdateForSkippedEnginePass` on every graph, then
/// `RefreshContinuousStreams` and `AssignAttachedStreamPass`, as GE's `Assign` does for both.
pub const SINGLE_STREAM_CHAIN: &[&str] = &[
    "SingleStreamPass",
    "NodeStreamUpdatePass",
    "UpdateForSkippedEnginePass",
    "RefreshContinuousStreams",
    "AssignAttachedStreamPass",
];

/// The registry entries of a chain.
pub fn chain(names: &[&str]) -> Vec<&'static PassEntry> {
    names.iter().map(|n| lookup(n).unwrap_or_else(|| panic!("chain names unregistered pass {n}"))).collect()
}

/// Runs GE's single-stream chain on a fresh state.
pub fn assign_single_stream(model: &Model, options: &Options) -> Result<LogicalResult> {
    let partition = Partition::for_compile(model, options.compat_ge, None);
    let mut ctx = PassContext { logical: LogicalState::new(model, options, partition) };
    run(&mut ctx, &chain(SINGLE_STREAM_CHAIN))?;
    Ok(ctx.logical.finish())
}

/// Runs GE's multi-stream chain on a fresh state. The `cv` mode (and any node already
/// carrying `_enable_cv_parallel`) re-partitions with the marked vector nodes on
/// `VectorEngine` first, as GE's second partitioning does.
pub fn assign_multi_stream(model: &Model, options: &Options) -> Result<LogicalResult> {
    let mode = model.auto_multistream_mode(options)?;
    let marked = cv_parallel::marked_nodes(model, mode == AutoMultistreamMode::Cv);
    let engines = if marked.is_empty() { None } else { Some(cv_parallel::with_vector_engine(model, &marked)?) };
    let partition = Partition::for_compile(model, options.compat_ge, engines.as_ref());
    let mut ctx = PassContext { logical: LogicalState::new(model, options, partition) };
    ctx.logical.engines = engines;
    run(&mut ctx, &chain(MULTI_STREAM_CHAIN))?;
    Ok(ctx.logical.finish())
}

/// The `pass --help` list: every pass by GE name and module name, and the two chains.
pub fn help_text() -> String {
    let mut s = String::from("Passes (GE name / module name: what it does):\n");
    for p in PASSES {
        s.push_str(&format!("  {} / {}: {}\n", p.ge_name, p.name, p.summary));
    }
    s.push_str(&format!("GE's multi-stream chain: {}\n", MULTI_STREAM_CHAIN.join(", ")));
    s.push_str(&format!("GE's single-stream chain: {}", SINGLE_STREAM_CHAIN.join(", ")));
    s
}

/// `docs/passes.md`, written from the registry (a test keeps the checked-in page current).
pub fn markdown() -> String {
    let mut s = String::from(
        "# Logical passes\n\nGenerated from the pass registry (`src/compile/passes.rs`); `stream-alloc pass NAMES \
         GRAPH` runs any of them, in the order named, on the streams the graph gives.\n\n\
         | GE name | module | kind | what it does |\n|---|---|---|---|\n",
    );
    for p in PASSES {
        let kind = match p.kind {
            PassKind::Graph(_) => "per graph",
            PassKind::Model(_) => "whole model",
        };
        s.push_str(&format!("| `{}` | `{}` | {kind} | {} |\n", p.ge_name, p.name, p.summary));
    }
    s.push_str(&format!("\nGE's multi-stream chain: {}.\n", MULTI_STREAM_CHAIN.join(" → ")));
    s.push_str(&format!("\nGE's single-stream chain: {}.\n", SINGLE_STREAM_CHAIN.join(" → ")));
    s
}

/// Finds a pass by GE name or module name.
pub fn lookup(name: &str) -> Option<&'static PassEntry> {
    PASSES.iter().find(|p| p.ge_name == name || p.name == name)
}

/// Resolves a comma-separated list of pass names.
pub fn parse_list(list: &str) -> Result<Vec<&'static PassEntry>> {
    let names: Vec<&str> = list.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    if names.is_empty() {
        bail!(InvalidOption, "no pass named in \"{list}\"");
    }
    names
        .into_iter()
        .map(|n| {
            lookup(n).ok_or_else(|| {
                let known: Vec<&str> = PASSES.iter().map(|p| p.ge_name).collect();
                err!(InvalidOption, "unknown pass \"{n}\"; known passes: {}", known.join(", "))
            })
        })
        .collect()
}

/// Runs `passes` in order; consecutive graph passes run together per graph (GE's order).
pub fn run(ctx: &mut PassContext<'_>, passes: &[&PassEntry]) -> Result<()> {
    let graphs = ctx.logical.graphs.clone();
    let mut i = 0;
    while i < passes.len() {
        match passes[i].kind {
            PassKind::Model(f) => {
                f(ctx)?;
                i += 1;
            }
            PassKind::Graph(_) => {
                let end = passes[i..]
                    .iter()
                    .position(|p| matches!(p.kind, PassKind::Model(_)))
                    .map_or(passes.len(), |k| i + k);
                for &g in &graphs {
                    for p in &passes[i..end] {
                        if let PassKind::Graph(f) = p.kind {
                            f(ctx, g)?;
                        }
                    }
                }
                i = end;
            }
        }
    }
    Ok(())
}

/// Runs the named passes on a model as given: pre-assigned node streams are the starting
/// streams, the file's `partition` (or GE's partitioner) gives the engine subgraphs.
pub fn run_named<'m>(model: &'m Model, options: &'m Options, passes: &[&PassEntry]) -> Result<LogicalState<'m>> {
    let partition = Partition::for_compile(model, options.compat_ge, None);
    let mut ctx = PassContext { logical: LogicalState::from_preassigned(model, options, partition) };
    run(&mut ctx, passes)?;
    Ok(ctx.logical)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_resolve_both_ways_and_are_unique() {
        for p in PASSES {
            assert!(std::ptr::eq(lookup(p.ge_name).unwrap(), p));
            assert!(std::ptr::eq(lookup(p.name).unwrap(), p));
        }
        let mut names: Vec<&str> = PASSES.iter().flat_map(|p| [p.ge_name, p.name]).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n);
    }

    #[test]
    fn lists_parse_in_order_and_reject_unknown_names() {
        let l = parse_list("AssignByLabelPass, by_dependency").unwrap();
        assert_eq!(l.iter().map(|p| p.name).collect::<Vec<_>>(), ["by_label", "by_dependency"]);
        let e = parse_list("by_label,Nope").err().unwrap();
        assert_eq!(e.code(), "E10001");
        assert!(e.message.contains("Nope"));
        assert!(parse_list(" , ").is_err());
    }
}
