//! `sa_summary`: GE's stream allocation summary (`GetStreamAllocationSummary`,
//! ge-runtime-api.md §3) taken from a compile session or an allocation
//! (`sa_session_get_summary`, `sa_allocation_get_summary` and their `_compiled_` forms), as
//! flat per-graph arrays.
//!
//! A snapshot: it stays valid after further stage calls on the session and after the handle it
//! was taken from is freed. Immutable, so its getters may run from several threads. Graphs are indexed
//! `0 .. graph_count - 1` (root first); entries of a graph in ascending logical stream id.
//! `include/stream_alloc/ge_compat/ge/ge_graph_compile_summary.h` builds GE's C++ classes from it.

use std::ffi::{CString, c_char};

use super::handle::SessionHandle;
use super::{
    ApiError, ApiResult, SA_INVALID_ARGUMENT, SA_INVALID_STATE, SA_NOT_FOUND, SA_NULL_POINTER, SA_STAGE, ffi_boundary,
    free_box, lossy_cstring, new_boxed, out_ptr, put, sa_status, write_opt, write_out,
};
use crate::compile::summary::StreamAllocationSummary;
use crate::driver::SessionStage;

struct EntryView {
    label: CString,
    string_info: CString,
    attached: Vec<i64>,
    /// Node indexes of the entry's nodes.
    nodes: Vec<usize>,
}

struct GraphView {
    name: CString,
    dot: CString,
    entries: Vec<EntryView>,
}

/// A summary snapshot. Opaque to C.
pub struct sa_summary {
    summary: StreamAllocationSummary,
    graphs: Vec<GraphView>,
    /// Node names and operator types by node index.
    node_names: Vec<CString>,
    node_types: Vec<CString>,
    text: CString,
    json: CString,
    dot: CString,
    memory: Memory,
}

/// # Safety
/// `s` is NULL or a live handle.
unsafe fn with_summary<T>(s: *const sa_summary, f: impl FnOnce(&sa_summary) -> ApiResult<T>) -> ApiResult<T> {
    // SAFETY: live by the caller's contract; only shared access is taken.
    match unsafe { s.as_ref() } {
        Some(s) => f(s),
        None => Err(ApiError::new(SA_NULL_POINTER, "argument 'summary' is NULL")),
    }
}

impl sa_summary {
    fn graph(&self, g: usize) -> ApiResult<(&crate::compile::summary::GraphSummary, &GraphView)> {
        match (self.summary.graphs.get(g), self.graphs.get(g)) {
            (Some(a), Some(b)) => Ok((a, b)),
            _ => Err(ApiError::new(
                SA_NOT_FOUND,
                format!("graph index {g} is out of range (the summary has {} graphs)", self.graphs.len()),
            )),
        }
    }

    fn entry(&self, g: usize, i: usize) -> ApiResult<(&crate::compile::summary::LogicalStreamInfo, &EntryView)> {
        let (gs, gv) = self.graph(g)?;
        match (gs.streams.get(i), gv.entries.get(i)) {
            (Some(a), Some(b)) => Ok((a, b)),
            _ => Err(ApiError::new(
                SA_NOT_FOUND,
                format!(
                    "stream entry {i} is out of range (graph '{}' has {} logical streams)",
                    gs.name,
                    gs.streams.len()
                ),
            )),
        }
    }
}

/// What the memory methods of `CompiledGraphSummary` answer from.
enum Memory {
    /// Taken by `sa_session_get_summary` / `sa_allocation_get_summary`: no memory plan asked for.
    NotAsked,
    /// The graph gives no `out_bytes`.
    NoSizes,
    /// The arena bytes of the memory plan.
    Planned(u64),
}

/// Takes a snapshot of the summary of `c`'s current stage into `*out`: with `compiled`, GE's
/// compiled graph summary, which needs the whole pipeline and carries the memory plan.
///
/// # Safety
/// `out` is NULL or writable.
pub(crate) unsafe fn take(c: &SessionHandle, compiled: bool, out: *mut *mut sa_summary) -> ApiResult {
    unsafe { new_boxed(out, || snapshot(c, compiled)) }
}

/// Builds a snapshot of the current stage; with `memory`, also with the memory plan, which
/// needs the whole pipeline.
fn snapshot(c: &SessionHandle, memory: bool) -> ApiResult<sa_summary> {
    let stage = c.session().stage();
    if memory && stage != SessionStage::Generated {
        return Err(ApiError::new(
            SA_STAGE,
            format!(
                "model '{}': the allocation is not finished (stage '{}'); a compiled graph summary needs the whole \
                 pipeline (sa_session_generate_send_recv, or sa_graph_allocate with SA_STAGE_ALL)",
                c.model().name,
                stage.as_str()
            ),
        ));
    }
    let s = c.session();
    let summary = s.summary()?;
    let model = c.model();
    let memory = if memory {
        match c.memory()? {
            Some(plan) => Memory::Planned(plan.peak_bytes),
            None => Memory::NoSizes,
        }
    } else {
        Memory::NotAsked
    };
    let graphs = summary
        .graphs
        .iter()
        .map(|g| GraphView {
            name: lossy_cstring(&g.name),
            dot: lossy_cstring(&g.stream_graph),
            entries: g
                .streams
                .iter()
                .map(|i| EntryView {
                    label: lossy_cstring(&i.user_stream_label),
                    string_info: lossy_cstring(&i.to_string_info()),
                    attached: i.attached_stream_ids.clone(),
                    nodes: i.nodes.iter().map(|&n| s.index_of(n)).collect(),
                })
                .collect(),
        })
        .collect();
    let order = s.order();
    // Copies: the snapshot outlives the handle it was taken from.
    let node_names = order.iter().map(|&n| c.name(n).to_owned()).collect();
    let node_types = order.iter().map(|&n| lossy_cstring(&model.nodes[n].op_type)).collect();
    let mut json = serde_json::to_string_pretty(&summary.to_json(model)).expect("JSON serialises");
    json.push('\n');
    Ok(sa_summary {
        text: lossy_cstring(&summary.to_text()),
        json: lossy_cstring(&json),
        dot: lossy_cstring(&summary.to_dot()),
        summary,
        graphs,
        node_names,
        node_types,
        memory,
    })
}

/// Frees a summary. NULL is a no-op.
///
/// Ownership: takes ownership of `summary` and frees it (NULL is a no-op); the strings and arrays
/// it lent die with it.
///
/// # Safety
/// `summary` is NULL or a live handle no other thread is using.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_summary_free(summary: *mut sa_summary) {
    ffi_boundary(|| unsafe { free_box(summary) })
}

/// Stores the model counts of `CompiledGraphSummary`: `stream_num`, `event_num`, `notify_num`.
/// Any output may be NULL.
///
/// Ownership: borrows `summary`; nothing is allocated, the outputs are written.
///
/// # Safety
/// `summary` is NULL or a live handle; the outputs are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_summary_counts(
    summary: *const sa_summary,
    stream_num: *mut u32,
    event_num: *mut u32,
    notify_num: *mut u32,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_summary(summary, |s| {
            let c = &s.summary.counts;
            for (p, v) in [(stream_num, c.stream_num), (event_num, c.event_num), (notify_num, c.notify_num)] {
                write_opt(p, v);
            }
            Ok(())
        })
    })
}

/// Stores in `*count` the number of graphs (root and subgraphs).
///
/// Ownership: borrows `summary`; nothing is allocated, `*count` is written.
///
/// # Safety
/// `summary` is NULL or a live handle; `count` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_summary_graph_count(summary: *const sa_summary, count: *mut usize) -> sa_status {
    ffi_boundary(|| unsafe { with_summary(summary, |s| put(count, "count", || Ok(s.graphs.len()))) })
}

/// Describes graph `g`: its name (the model's name for the root; owned by the summary), whether
/// it is static (1) or dynamic (0), its number of logical stream entries, and its stream graph
/// in DOT (owned by the summary). Any output may be NULL.
///
/// Ownership: borrows `summary`; the strings in `*name` and `*stream_graph_dot` are owned by the
/// summary and valid until `sa_summary_free`; the caller does not free them.
///
/// # Safety
/// `summary` is NULL or a live handle; the outputs are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_summary_graph(
    summary: *const sa_summary,
    g: usize,
    name: *mut *const c_char,
    is_static: *mut i32,
    stream_count: *mut usize,
    stream_graph_dot: *mut *const c_char,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_summary(summary, |s| {
            let (gs, gv) = s.graph(g)?;
            write_opt(name, gv.name.as_ptr());
            write_opt(is_static, i32::from(gs.is_static));
            write_opt(stream_count, gs.streams.len());
            write_opt(stream_graph_dot, gv.dot.as_ptr());
            Ok(())
        })
    })
}

/// Describes entry `i` of graph `g` (GE's `LogicalStreamAllocationInfo`): logical stream id,
/// user stream label (`""` when none), assigned by a stream pass (1/0), attached stream ids
/// (`*attached`, `*attached_count`; NULL when none), physical stream count, HCCL-followed stream
/// count. Borrowed outputs are owned by the summary. Any output may be NULL (an array and its
/// count are written together, only when both are given).
///
/// Ownership: borrows `summary`; the string in `*user_stream_label` and the array in `*attached`
/// are owned by the summary and valid until `sa_summary_free`.
///
/// # Safety
/// `summary` is NULL or a live handle; the outputs are NULL or writable.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn sa_summary_stream(
    summary: *const sa_summary,
    g: usize,
    i: usize,
    logical_stream_id: *mut i64,
    user_stream_label: *mut *const c_char,
    assigned_by_stream_pass: *mut i32,
    attached: *mut *const i64,
    attached_count: *mut usize,
    physical_stream_num: *mut usize,
    hccl_followed_stream_num: *mut usize,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_summary(summary, |s| {
            let (e, v) = s.entry(g, i)?;
            write_opt(logical_stream_id, e.logical_stream_id);
            write_opt(user_stream_label, v.label.as_ptr());
            write_opt(assigned_by_stream_pass, i32::from(e.assigned_by_stream_pass));
            if !attached.is_null() && !attached_count.is_null() {
                write_out(attached, if v.attached.is_empty() { std::ptr::null() } else { v.attached.as_ptr() });
                write_out(attached_count, v.attached.len());
            }
            write_opt(physical_stream_num, e.physical_stream_num);
            write_opt(hccl_followed_stream_num, e.hccl_followed_stream_num);
            Ok(())
        })
    })
}

/// Stores the nodes of entry `i` of graph `g` as node indexes (`*nodes`, `*count`;
/// NULL when none), owned by the summary; names via `sa_summary_node`.
///
/// Ownership: borrows `summary`; the array in `*nodes` is owned by the summary and valid until
/// `sa_summary_free`.
///
/// # Safety
/// `summary` is NULL or a live handle; the outputs are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_summary_stream_nodes(
    summary: *const sa_summary,
    g: usize,
    i: usize,
    nodes: *mut *const usize,
    count: *mut usize,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_summary(summary, |s| {
            let (a, c) = (out_ptr(nodes, "nodes")?, out_ptr(count, "count")?);
            let (_, v) = s.entry(g, i)?;
            write_out(a, if v.nodes.is_empty() { std::ptr::null() } else { v.nodes.as_ptr() });
            write_out(c, v.nodes.len());
            Ok(())
        })
    })
}

/// Stores the name and operator type of the node at node index `index` (owned by the
/// summary). Either output may be NULL. `SA_NOT_FOUND` when out of range.
///
/// Ownership: borrows `summary`; the strings in `*name` and `*op_type` are owned by the summary and
/// valid until `sa_summary_free`.
///
/// # Safety
/// `summary` is NULL or a live handle; the outputs are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_summary_node(
    summary: *const sa_summary,
    index: usize,
    name: *mut *const c_char,
    op_type: *mut *const c_char,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_summary(summary, |s| {
            let Some(n) = s.node_names.get(index) else {
                return Err(ApiError::new(
                    SA_NOT_FOUND,
                    format!("node index {index} is out of range (the model has {} nodes)", s.node_names.len()),
                ));
            };
            write_opt(name, n.as_ptr());
            write_opt(op_type, s.node_types[index].as_ptr());
            Ok(())
        })
    })
}

/// Stores in `*text` GE's `ToStringInfo()` of entry `i` of graph `g`, byte for byte
/// (`"logic_stream_id: 0, user_stream_label: , ... hccl_followed_stream_num: 0.\n"`). Owned by
/// the summary.
///
/// Ownership: borrows `summary`; the string in `*text` is owned by the summary and valid until
/// `sa_summary_free`.
///
/// # Safety
/// `summary` is NULL or a live handle; `text` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_summary_string_info(
    summary: *const sa_summary,
    g: usize,
    i: usize,
    text: *mut *const c_char,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_summary(summary, |s| {
            let out = out_ptr(text, "text")?;
            let (_, v) = s.entry(g, i)?;
            write_out(out, v.string_info.as_ptr());
            Ok(())
        })
    })
}

/// Stores in `*text` the whole summary as text (`"text"`: a header line, then per graph a
/// `[name]` line and its `ToStringInfo()` lines), JSON (`"json"`) or DOT (`"dot"`: one cluster
/// per graph). Owned by the summary. `SA_INVALID_ARGUMENT` for another format.
///
/// Ownership: borrows `summary` and reads `format` only during the call; the string in `*text` is
/// owned by the summary and valid until `sa_summary_free`.
///
/// # Safety
/// `summary` is NULL or a live handle; `format` is NULL or NUL-terminated; `text` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_summary_render(
    summary: *const sa_summary,
    format: *const c_char,
    text: *mut *const c_char,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_summary(summary, |s| {
            let out = out_ptr(text, "text")?;
            let f = super::arg_str(format, "format")?;
            let v = match f {
                "text" => &s.text,
                "json" => &s.json,
                "dot" => &s.dot,
                other => {
                    return Err(ApiError::new(
                        super::SA_INVALID_ARGUMENT,
                        format!("format '{other}' is not one of \"text\", \"json\", \"dot\""),
                    ));
                }
            };
            write_out(out, v.as_ptr());
            Ok(())
        })
    })
}

/// The methods of GE's `CompiledGraphSummary` that `sa_summary_ge_method` answers, in GE's
/// declaration order.
const GE_METHODS: [&str; 13] = [
    "IsStatic",
    "GetConstMemorySize",
    "GetFeatureMemorySize",
    "GetFixedFeatureMemorySize",
    "GetAllFeatureMemoryTypeSize",
    "GetRefreshableFeatureMemorySize",
    "GetFeatureMemoryBaseRefreshable",
    "GetStreamNum",
    "GetEventNum",
    "GetOutputShapes",
    "GetOutputDtypes",
    "GetIOIndexesWithSameAddr",
    "GetExternalWeightPaths",
];

impl sa_summary {
    /// GE's answer to `method` as one number (see `sa_summary_ge_method`).
    fn ge_method(&self, method: &str) -> ApiResult<u64> {
        let root = &self.summary.graphs[0];
        let model = &self.summary.model;
        // GE's Builder fills event and memory fields for static graphs only.
        let static_only = |what: &str| -> ApiResult<()> {
            if root.is_static {
                Ok(())
            } else {
                Err(ApiError::new(
                    SA_INVALID_STATE,
                    format!(
                        "CompiledGraphSummary::{method}: model '{model}' is dynamic-shape; GE answers {what} for \
                         static graphs only"
                    ),
                ))
            }
        };
        let feature = |what: &str| -> ApiResult<u64> {
            static_only(what)?;
            match self.memory {
                Memory::Planned(bytes) => Ok(bytes),
                Memory::NoSizes => Err(ApiError::new(
                    SA_NOT_FOUND,
                    format!(
                        "CompiledGraphSummary::{method}: model '{model}' gives no tensor sizes (out_bytes), so \
                         there is no memory plan to answer from"
                    ),
                )),
                Memory::NotAsked => Err(ApiError::new(
                    SA_STAGE,
                    format!(
                        "CompiledGraphSummary::{method}: this summary was taken with sa_session_get_summary \
                         (or sa_allocation_get_summary), which plans no memory; take it with \
                         sa_session_get_compiled_summary (or sa_allocation_get_compiled_summary)"
                    ),
                )),
            }
        };
        let unknowable = |what: &str| -> ApiResult<u64> {
            Err(ApiError::new(
                SA_NOT_FOUND,
                format!(
                    "CompiledGraphSummary::{method}: graph JSON v1 does not carry {what}, so stream-alloc cannot know it"
                ),
            ))
        };
        match method {
            "IsStatic" => Ok(u64::from(root.is_static)),
            "GetStreamNum" => Ok(u64::from(self.summary.counts.stream_num)),
            "GetEventNum" => {
                static_only("event_num")?;
                Ok(u64::from(self.summary.counts.event_num))
            }
            // The plan is one arena at one base: all of it is feature memory, none is pinned to
            // a fixed address, so all of it is refreshable and the base can move.
            "GetFeatureMemorySize" | "GetRefreshableFeatureMemorySize" | "GetAllFeatureMemoryTypeSize" => {
                feature("feature memory")
            }
            "GetFixedFeatureMemorySize" => feature("feature memory").map(|_| 0),
            "GetFeatureMemoryBaseRefreshable" => feature("feature memory").map(|_| 1),
            "GetConstMemorySize" => unknowable("weight (const) sizes"),
            "GetOutputShapes" => unknowable("tensor shapes"),
            "GetOutputDtypes" => unknowable("tensor data types"),
            "GetIOIndexesWithSameAddr" => unknowable("which inputs and outputs share an address"),
            "GetExternalWeightPaths" => unknowable("external weight files"),
            other => Err(ApiError::new(
                SA_INVALID_ARGUMENT,
                format!("'{other}' is not a method of CompiledGraphSummary (one of: {})", GE_METHODS.join(", ")),
            )),
        }
    }
}

/// Answers the method `method` of GE's `CompiledGraphSummary` (by its name, e.g.
/// `"GetFeatureMemorySize"`) as one number in `*value`; `*value` is 0 on failure, and the
/// reason is in `sa_last_error_message`.
///
/// * `IsStatic`: 1 when the root graph is static-shape, else 0.
/// * `GetStreamNum`: the model's `stream_num`. `GetEventNum`: its `event_num`, for static
///   graphs only (`SA_INVALID_STATE` otherwise, as GE fails it).
/// * Memory, from the memory plan of a summary taken with `sa_session_get_compiled_summary`
///   or `sa_allocation_get_compiled_summary`
///   of a static graph that gives `out_bytes` (`SA_NOT_FOUND` without sizes, `SA_STAGE` for a
///   summary from `sa_session_get_summary` or `sa_allocation_get_summary`, `SA_INVALID_STATE` for a dynamic graph):
///   `GetFeatureMemorySize` and `GetRefreshableFeatureMemorySize` are the plan's arena bytes,
///   `GetFixedFeatureMemorySize` is 0 (no tensor is pinned to a fixed address),
///   `GetFeatureMemoryBaseRefreshable` is 1, `GetAllFeatureMemoryTypeSize` the bytes of its one
///   (default-type, not fixed) entry.
/// * `GetConstMemorySize`, `GetOutputShapes`, `GetOutputDtypes`, `GetIOIndexesWithSameAddr`,
///   `GetExternalWeightPaths`: `SA_NOT_FOUND` (graph JSON carries none of it).
///
/// `SA_INVALID_ARGUMENT` for another name. Thread-safe.
///
/// Ownership: borrows `summary` and reads `method` only during the call; nothing is allocated,
/// `*value` is written.
///
/// # Safety
/// `summary` is NULL or a live handle; `method` is NULL or NUL-terminated; `value` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_summary_ge_method(
    summary: *const sa_summary,
    method: *const c_char,
    value: *mut u64,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_summary(summary, |s| {
            let out = out_ptr(value, "value")?;
            write_out(out, 0);
            let method = super::arg_str(method, "method")?;
            let v = s.ge_method(method)?;
            write_out(out, v);
            Ok(())
        })
    })
}
