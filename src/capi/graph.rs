//! `sa_graph`: a model described piece by piece (or loaded from graph JSON), then built.
//!
//! The handle holds a [`ModelBuilder`] until the first `sa_graph_build` / `sa_graph_allocate`,
//! and the immutable [`Model`] afterwards. Nodes are named per graph (`graph` = NULL, `""` or
//! the root's name means the root graph), exactly as graph JSON names them.

use std::collections::HashMap;
use std::ffi::c_char;
use std::sync::Arc;

use serde_json::Value;

use super::allocation::{sa_allocation, sa_stage, stage_of};
use super::handle::SessionHandle;
use super::{
    ApiError, ApiResult, LastError, SA_DUPLICATE_NAME, SA_INVALID_ARGUMENT, SA_INVALID_STATE, SA_NOT_FOUND,
    SA_NULL_POINTER, SA_UNKNOWN_NODE, arg_str, ffi_boundary, free_box, new_boxed, opt_str, out_ptr, sa_status,
    write_out,
};
use crate::compile::TaskLimits;
use crate::graph::builder::{EdgeSpec, EventEnd, EventSpec, GraphSpec, NodeSpec, PartitionSpec};
use crate::graph::json::{builder_from_slice, set_node_attr, set_node_field};
use crate::graph::{EdgeKind, Model, ModelBuilder, Shape};

/// Which allocation pipeline applies to a graph (an `int32_t`; one of `SA_SHAPE_*`).
pub type sa_shape = i32;
/// Static-shape graph (the default).
pub const SA_SHAPE_STATIC: sa_shape = 0;
/// Dynamic-shape graph.
pub const SA_SHAPE_DYNAMIC: sa_shape = 1;

/// Kind of an edge (an `int32_t`; one of `SA_EDGE_*`).
pub type sa_edge_kind = i32;
/// A data edge (output port to input port).
pub const SA_EDGE_DATA: sa_edge_kind = 0;
/// A control edge (ordering only).
pub const SA_EDGE_CONTROL: sa_edge_kind = 1;

fn shape_of(shape: sa_shape) -> ApiResult<Shape> {
    match shape {
        SA_SHAPE_STATIC => Ok(Shape::Static),
        SA_SHAPE_DYNAMIC => Ok(Shape::Dynamic),
        other => Err(ApiError::new(SA_INVALID_ARGUMENT, format!("shape {other} is not one of SA_SHAPE_*"))),
    }
}

/// A graph being described (or a built model) plus the message of its last failed call.
/// Opaque to C.
pub struct sa_graph {
    state: State,
    last_error: LastError,
}

enum State {
    Building(Box<Building>),
    Built(Arc<Model>),
}

/// The builder plus name indexes, so that adding and addressing nodes stays linear overall.
struct Building {
    builder: ModelBuilder,
    graph_index: HashMap<String, usize>,
    node_index: Vec<HashMap<String, usize>>,
}

impl Building {
    fn new(builder: ModelBuilder) -> Self {
        let mut graph_index = HashMap::new();
        let mut node_index = Vec::with_capacity(builder.graphs.len());
        for (gi, g) in builder.graphs.iter().enumerate() {
            graph_index.entry(g.name.clone()).or_insert(gi);
            let mut m = HashMap::with_capacity(g.nodes.len());
            for (ni, n) in g.nodes.iter().enumerate() {
                m.entry(n.name.clone()).or_insert(ni);
            }
            node_index.push(m);
        }
        Building { builder, graph_index, node_index }
    }

    fn graph(&self, name: Option<&str>) -> ApiResult<usize> {
        match name {
            None | Some("") => Ok(0),
            Some(n) if n == self.builder.graphs[0].name => Ok(0),
            Some(n) => self.graph_index.get(n).copied().ok_or_else(|| {
                ApiError::new(SA_NOT_FOUND, format!("graph '{n}' does not exist (add it with sa_graph_add_subgraph)"))
            }),
        }
    }

    fn graph_label(&self, gi: usize) -> String {
        let g = &self.builder.graphs[gi];
        if gi == 0 { format!("root graph '{}'", g.name) } else { format!("subgraph '{}'", g.name) }
    }

    fn node(&self, graph: Option<&str>, node: &str) -> ApiResult<(usize, usize)> {
        let gi = self.graph(graph)?;
        let ni = self.node_index[gi].get(node).copied().ok_or_else(|| {
            ApiError::new(SA_NOT_FOUND, format!("node '{node}' is not a node of {}", self.graph_label(gi)))
        })?;
        Ok((gi, ni))
    }

    fn node_mut(&mut self, graph: Option<&str>, node: &str) -> ApiResult<&mut NodeSpec> {
        let (gi, ni) = self.node(graph, node)?;
        Ok(&mut self.builder.graphs[gi].nodes[ni])
    }
}

impl sa_graph {
    fn new(builder: ModelBuilder) -> Self {
        sa_graph { state: State::Building(Box::new(Building::new(builder))), last_error: LastError::default() }
    }

    fn name(&self) -> &str {
        match &self.state {
            State::Building(b) => &b.builder.graphs[0].name,
            State::Built(m) => &m.name,
        }
    }

    fn building(&mut self) -> ApiResult<&mut Building> {
        let name = self.name().to_string();
        match &mut self.state {
            State::Building(b) => Ok(b),
            State::Built(_) => Err(ApiError::new(
                SA_INVALID_STATE,
                format!("graph '{name}' is already built and can no longer be changed; load or build a new graph"),
            )),
        }
    }

    /// Builds the model on first use; a failed build leaves the description as it was.
    pub(crate) fn model(&mut self) -> ApiResult<Arc<Model>> {
        match &self.state {
            State::Built(m) => Ok(Arc::clone(m)),
            State::Building(b) => {
                let model = Arc::new(b.builder.clone().build()?);
                self.state = State::Built(Arc::clone(&model));
                Ok(model)
            }
        }
    }
}

/// Runs `f` on a non-NULL graph and records its failure on the handle.
///
/// # Safety
/// `g` is NULL or a live handle from this library, not used by another thread during the call.
pub(crate) unsafe fn with_graph<T>(g: *mut sa_graph, f: impl FnOnce(&mut sa_graph) -> ApiResult<T>) -> ApiResult<T> {
    if g.is_null() {
        return Err(ApiError::new(SA_NULL_POINTER, "argument 'graph' is NULL"));
    }
    // SAFETY: live and exclusively ours for the call, by the caller's contract.
    let g = unsafe { &mut *g };
    let r = f(g);
    if let Err(e) = &r {
        g.last_error.set(e);
    }
    r
}

fn parse_json_arg(text: &str, what: &str) -> ApiResult<Value> {
    serde_json::from_str(text).map_err(|e| {
        ApiError::from(crate::err!(Json, "{what}: {text:?} is not a JSON value ({e}); a string needs quotes"))
    })
}

/// A graph handle from a graph JSON document, its options checked against the policy table
/// here, where they are given.
fn loaded(json: &[u8]) -> ApiResult<sa_graph> {
    let builder = builder_from_slice(json)?;
    crate::compile::policy::table::resolve(&builder.options)?;
    Ok(sa_graph::new(builder))
}

/// A file path argument: NUL-terminated bytes, as the OS takes them.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string.
unsafe fn path_arg(path: *const c_char) -> ApiResult<std::path::PathBuf> {
    if path.is_null() {
        return Err(ApiError::new(SA_NULL_POINTER, "argument 'path' is NULL"));
    }
    // SAFETY: non-NULL and NUL-terminated by the caller's contract.
    Ok(path_of(unsafe { std::ffi::CStr::from_ptr(path) }.to_bytes()))
}

/// Creates an empty graph named `name` (a static root graph with no nodes and default options)
/// and stores the new handle in `*out`.
///
/// Ownership: the caller owns `*out` and frees it with `sa_graph_free`. `name` is copied.
/// Errors (`SA_NULL_POINTER`, `SA_INVALID_ARGUMENT` for an empty or non-UTF-8 name) are left in
/// `sa_last_error_message`. Thread-safe.
///
/// # Safety
/// `name` is NULL or a NUL-terminated string; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_graph_new(name: *const c_char, out: *mut *mut sa_graph) -> sa_status {
    ffi_boundary(|| unsafe {
        new_boxed(out, || {
            let name = arg_str(name, "name")?;
            if name.is_empty() {
                return Err(ApiError::new(SA_INVALID_ARGUMENT, "argument 'name' is empty; a graph needs a name"));
            }
            Ok(sa_graph::new(ModelBuilder::new(name)))
        })
    })
}

/// Parses a graph JSON v1 document (NUL-terminated UTF-8) into a new graph handle in `*out`.
/// The graph is not built yet: nodes, edges and options can still be added before
/// `sa_graph_build` / `sa_graph_allocate` validate everything.
///
/// Ownership: the caller owns `*out` (free with `sa_graph_free`); `json` is only read during
/// the call. Errors (`SA_JSON`, `SA_FORMAT`, `SA_FIELD`, `SA_INVALID_OPTION`, ...) are left in
/// `sa_last_error_message` / `sa_last_error_code`. Thread-safe.
///
/// # Safety
/// `json` is NULL or a NUL-terminated string; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_graph_from_json(json: *const c_char, out: *mut *mut sa_graph) -> sa_status {
    ffi_boundary(|| unsafe { new_boxed(out, || loaded(arg_str(json, "json")?.as_bytes())) })
}

/// Reads a graph JSON v1 file into a new graph handle in `*out`, as `sa_graph_from_json`.
/// `path` is a NUL-terminated file path (bytes, as the OS takes them). An unreadable file is
/// `SA_IO`, naming the path.
///
/// Ownership: the caller owns `*out` (free with `sa_graph_free`). Thread-safe.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_graph_from_json_file(path: *const c_char, out: *mut *mut sa_graph) -> sa_status {
    ffi_boundary(|| unsafe {
        new_boxed(out, || {
            let path = path_arg(path)?;
            let text = std::fs::read(&path)
                .map_err(|e| crate::err!(Io, "cannot read graph file '{}': {e}", path.display()))?;
            loaded(&text)
        })
    })
}

/// Imports a binary ONNX model (opsets 7 to 21) into a new graph handle in `*out`: shapes
/// inferred, engines, tasks and costs from the default device profile (docs/cost-model.md).
/// Weights are not needed (external data files may be absent). The errors are the JSON
/// loader's: `SA_IO` for an unreadable file, `SA_FORMAT` for a truncated or non-ONNX file or
/// an unsupported opset, `SA_CYCLE`, `SA_UNKNOWN_NODE` for a dangling tensor name,
/// `SA_ATTRIBUTE` for a shape conflict (naming the node and both shapes), `SA_FIELD` for a graph
/// input with symbolic dims (set them in the model first), `SA_NOT_IMPLEMENTED` for an operator
/// without a shape rule; the message names the node.
///
/// Ownership: the caller owns `*out` (free with `sa_graph_free`). Thread-safe.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_graph_from_onnx_file(path: *const c_char, out: *mut *mut sa_graph) -> sa_status {
    ffi_boundary(|| unsafe {
        new_boxed(out, || {
            let path = path_arg(path)?;
            let imported = crate::import::onnx::import_file(&path, &crate::import::onnx::ImportOptions::default())?;
            let builder = imported.into_builder()?;
            crate::compile::policy::table::resolve(&builder.options)?;
            Ok(sa_graph::new(builder))
        })
    })
}

#[cfg(unix)]
fn path_of(bytes: &[u8]) -> std::path::PathBuf {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::OsStr::from_bytes(bytes).into()
}

#[cfg(not(unix))]
fn path_of(bytes: &[u8]) -> std::path::PathBuf {
    String::from_utf8_lossy(bytes).into_owned().into()
}

/// Frees a graph handle. NULL is a no-op. Allocations made from the graph stay valid: they
/// share the built model. Freeing twice, or using the handle afterwards, is undefined
/// behaviour (handles are not generation-checked yet).
///
/// Ownership: takes ownership of `graph` and frees it (NULL is a no-op); allocations and sessions
/// made from it keep the built model.
///
/// # Safety
/// `graph` is NULL or a live handle from this library that no other thread is using.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_graph_free(graph: *mut sa_graph) {
    ffi_boundary(|| unsafe { free_box(graph) })
}

/// Sets an allocation option in GE's string form: `key` is one of ours (`enable_single_stream`,
/// `max_parallel_num`, ...) or GE's name (`ge.enableSingleStream`, ...), `value` its string
/// (`"true"`, `"AIcoreEngine:4,VectorEngine:2"`, ...). An invalid value is `SA_INVALID_OPTION`
/// (E10001; `SA_INVALID_HCOM_PARALLEL`, E10006, for `ge.hcomParallel`), naming key and value.
/// Overrides an option of the same name from the graph file.
///
/// `memory_limit` (GE's `ge.graphMemoryMaxSize`) bounds the memory plan's arena for every policy:
/// bytes (`"67108864"`, `"64MiB"`) or a multiple of the single-stream plan's peak (`"1.1x"`).
/// A run that cannot fit fails with `SA_LIMIT` (SA2003) naming the limit and the smallest peak
/// reached; `sa_allocation_memory_peak` reads the peak of a plan that fits.
///
/// `SA_INVALID_STATE` once the graph is built. Not thread-safe for one handle.
///
/// Ownership: borrows `graph`; `key` and `value` are only read during the call (the graph keeps
/// copies).
///
/// # Safety
/// `graph` is NULL or a live handle; `key`/`value` are NULL or NUL-terminated strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_graph_set_option(
    graph: *mut sa_graph,
    key: *const c_char,
    value: *const c_char,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_graph(graph, |g| {
            let key = arg_str(key, "key")?;
            let value = arg_str(value, "value")?;
            let options = &mut g.building()?.builder.options;
            let mut set = options.clone();
            set.set_str(key, value)?;
            // The graph layer keeps a policy's text; the table checks it here, where it is given.
            crate::compile::policy::table::resolve(&set)?;
            *options = set;
            Ok(())
        })
    })
}

/// Sets a root-graph attribute (graph JSON `graph_attrs`) to a JSON value given as text, e.g.
/// key `auto_multistream_parallel_mode`, value `"\"cv\""`. `SA_JSON` if `json_value` is not a
/// JSON value. `SA_INVALID_STATE` once built. Not thread-safe for one handle.
///
/// Ownership: borrows `graph`; `key` and `json_value` are only read during the call (the graph
/// keeps copies).
///
/// # Safety
/// `graph` is NULL or a live handle; `key`/`json_value` are NULL or NUL-terminated strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_graph_set_graph_attr(
    graph: *mut sa_graph,
    key: *const c_char,
    json_value: *const c_char,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_graph(graph, |g| {
            let key = arg_str(key, "key")?;
            let text = arg_str(json_value, "json_value")?;
            if key.is_empty() {
                return Err(ApiError::new(SA_INVALID_ARGUMENT, "argument 'key' is empty"));
            }
            let v = parse_json_arg(text, &format!("graph attribute '{key}'"))?;
            g.building()?.builder.graph_attrs.insert(key.to_string(), v);
            Ok(())
        })
    })
}

/// Sets the shape (`SA_SHAPE_STATIC` / `SA_SHAPE_DYNAMIC`) of the graph named `graph_name`
/// (NULL or `""`: the root). `SA_NOT_FOUND` for an unknown graph, `SA_INVALID_ARGUMENT` for
/// an unknown shape, `SA_INVALID_STATE` once built. Not thread-safe for one handle.
///
/// Ownership: borrows `graph`; `graph_name` is only read during the call.
///
/// # Safety
/// `graph` is NULL or a live handle; `graph_name` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_graph_set_shape(
    graph: *mut sa_graph,
    graph_name: *const c_char,
    shape: sa_shape,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_graph(graph, |g| {
            let name = opt_str(graph_name, "graph_name")?;
            let shape = shape_of(shape)?;
            let b = g.building()?;
            let gi = b.graph(name)?;
            b.builder.graphs[gi].shape = shape;
            Ok(())
        })
    })
}

/// Adds an empty nested subgraph `name` owned by node `parent_node` of graph `parent_graph`
/// (NULL or `""`: the root), e.g. an If's branch. Nodes and edges are then added with
/// `graph_name = name`. `SA_NOT_FOUND` if the parent does not exist, `SA_DUPLICATE_NAME` if a
/// graph of that name exists, `SA_INVALID_STATE` once built. Not thread-safe for one handle.
///
/// Ownership: borrows `graph`; the strings are only read during the call (the graph keeps copies).
///
/// # Safety
/// `graph` is NULL or a live handle; the strings are NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_graph_add_subgraph(
    graph: *mut sa_graph,
    parent_graph: *const c_char,
    parent_node: *const c_char,
    name: *const c_char,
    shape: sa_shape,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_graph(graph, |g| {
            let parent_graph = opt_str(parent_graph, "parent_graph")?;
            let parent_node = arg_str(parent_node, "parent_node")?;
            let name = arg_str(name, "name")?;
            let shape = shape_of(shape)?;
            if name.is_empty() {
                return Err(ApiError::new(SA_INVALID_ARGUMENT, "argument 'name' is empty; a subgraph needs a name"));
            }
            let b = g.building()?;
            if name == b.builder.graphs[0].name || b.graph_index.contains_key(name) {
                return Err(ApiError::new(SA_DUPLICATE_NAME, format!("a graph named '{name}' already exists")));
            }
            let (gi, ni) = b.node(parent_graph, parent_node)?;
            b.builder.graphs[gi].nodes[ni].subgraphs.push(name.to_string());
            b.builder.graphs.push(GraphSpec {
                name: name.to_string(),
                parent: Some(parent_node.to_string()),
                shape,
                ..Default::default()
            });
            b.graph_index.insert(name.to_string(), b.builder.graphs.len() - 1);
            b.node_index.push(HashMap::new());
            Ok(())
        })
    })
}

/// Adds node `name` of operator type `op_type` run by `engine` (GE spelling: `AIcoreEngine`,
/// `DNN_VM_GE_LOCAL`, ...) to graph `graph_name` (NULL or `""`: the root). `tasks` is the
/// number of device tasks (GE's default is 1; 0 for nodes without a device task), `cost_us`
/// the estimated time (finite, >= 0), `cores` the compute units it occupies (0: unknown).
/// Names are unique per graph (`SA_DUPLICATE_NAME`); the engine is checked when the graph is
/// built (`SA_UNKNOWN_ENGINE`). `SA_INVALID_STATE` once built. Not thread-safe for one handle.
///
/// Ownership: borrows `graph`; the strings are only read during the call (the graph keeps copies).
///
/// # Safety
/// `graph` is NULL or a live handle; the strings are NULL or NUL-terminated.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn sa_graph_add_node(
    graph: *mut sa_graph,
    graph_name: *const c_char,
    name: *const c_char,
    op_type: *const c_char,
    engine: *const c_char,
    tasks: u32,
    cost_us: f64,
    cores: u32,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_graph(graph, |g| {
            let graph_name = opt_str(graph_name, "graph_name")?;
            let name = arg_str(name, "name")?;
            let op_type = arg_str(op_type, "op_type")?;
            let engine = arg_str(engine, "engine")?;
            for (arg, v) in [("name", name), ("op_type", op_type), ("engine", engine)] {
                if v.is_empty() {
                    return Err(ApiError::new(SA_INVALID_ARGUMENT, format!("argument '{arg}' is empty")));
                }
            }
            if !cost_us.is_finite() || cost_us < 0.0 {
                return Err(ApiError::new(
                    SA_INVALID_ARGUMENT,
                    format!("node '{name}': cost_us {cost_us} must be a finite number >= 0"),
                ));
            }
            let b = g.building()?;
            let gi = b.graph(graph_name)?;
            if b.node_index[gi].contains_key(name) {
                return Err(ApiError::new(
                    SA_DUPLICATE_NAME,
                    format!("duplicate node name '{name}' in {}", b.graph_label(gi)),
                ));
            }
            let mut spec = NodeSpec::new(name, op_type, engine);
            spec.tasks = tasks;
            spec.cost_us = cost_us;
            spec.cores = cores;
            let nodes = &mut b.builder.graphs[gi].nodes;
            nodes.push(spec);
            b.node_index[gi].insert(name.to_string(), nodes.len() - 1);
            Ok(())
        })
    })
}

/// Adds an edge `src` -> `dst` between two existing nodes of graph `graph_name` (NULL or `""`:
/// the root). `kind` is `SA_EDGE_DATA` (from output `src_port` to input `dst_port`) or
/// `SA_EDGE_CONTROL` (ports ignored by the allocator). `SA_UNKNOWN_NODE` if an end does not
/// exist yet; cycles are reported when the graph is built (`SA_CYCLE`). `SA_INVALID_STATE`
/// once built. Not thread-safe for one handle.
///
/// Ownership: borrows `graph`; the strings are only read during the call (the graph keeps copies).
///
/// # Safety
/// `graph` is NULL or a live handle; the strings are NULL or NUL-terminated.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn sa_graph_add_edge(
    graph: *mut sa_graph,
    graph_name: *const c_char,
    src: *const c_char,
    dst: *const c_char,
    kind: sa_edge_kind,
    src_port: u32,
    dst_port: u32,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_graph(graph, |g| {
            let graph_name = opt_str(graph_name, "graph_name")?;
            let src = arg_str(src, "src")?;
            let dst = arg_str(dst, "dst")?;
            let kind = match kind {
                SA_EDGE_DATA => EdgeKind::Data,
                SA_EDGE_CONTROL => EdgeKind::Control,
                other => {
                    return Err(ApiError::new(
                        SA_INVALID_ARGUMENT,
                        format!("edge kind {other} is not one of SA_EDGE_*"),
                    ));
                }
            };
            let b = g.building()?;
            let gi = b.graph(graph_name)?;
            for (role, end) in [("source", src), ("destination", dst)] {
                if !b.node_index[gi].contains_key(end) {
                    return Err(ApiError::new(
                        SA_UNKNOWN_NODE,
                        format!("edge '{src}' -> '{dst}': {role} '{end}' is not a node of {}", b.graph_label(gi)),
                    ));
                }
            }
            b.builder.graphs[gi].edges.push(EdgeSpec { src: src.into(), dst: dst.into(), kind, src_port, dst_port });
            Ok(())
        })
    })
}

/// Sets one allocation attribute of a node (graph JSON `attrs`: `stream_label`,
/// `user_stream_label`, `parallel_group`, `new_stream_id`, `attached_streams`,
/// `continuous_stream_label`, `event_multiplexing`, `active_label_list`, `rts_label_node`,
/// `dims`) to a JSON value given as text, e.g. key `dims`, value `"2"`; or key
/// `stream_label`, value `"\"s1\""`. The value is checked as the graph loader checks it
/// (`SA_FIELD` / `SA_ATTRIBUTE`, naming node and key); an unknown key is `SA_FIELD`.
/// `SA_NOT_FOUND` for an unknown node, `SA_INVALID_STATE` once built. Not thread-safe for one
/// handle.
///
/// Ownership: borrows `graph`; the strings are only read during the call (the graph keeps copies).
///
/// # Safety
/// `graph` is NULL or a live handle; the strings are NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_graph_set_node_attr(
    graph: *mut sa_graph,
    graph_name: *const c_char,
    node: *const c_char,
    key: *const c_char,
    json_value: *const c_char,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_graph(graph, |g| set_on_node(g, graph_name, node, key, json_value, NodeValue::Json("attribute"), set_attr))
    })
}

/// `sa_graph_set_node_attr` for string attributes (`stream_label`, `user_stream_label`,
/// `parallel_group`, `continuous_stream_label`), with `value` as a plain string: no JSON
/// quoting. An empty value clears the attribute. Not thread-safe for one handle.
///
/// Ownership: borrows `graph`; the strings are only read during the call (the graph keeps copies).
///
/// # Safety
/// `graph` is NULL or a live handle; the strings are NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_graph_set_node_attr_str(
    graph: *mut sa_graph,
    graph_name: *const c_char,
    node: *const c_char,
    key: *const c_char,
    value: *const c_char,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_graph(graph, |g| set_on_node(g, graph_name, node, key, value, NodeValue::Plain, set_attr))
    })
}

/// How a node setter takes its value: JSON text (`json_value`; the word names the key's kind in
/// a parse error) or a plain string (`value`).
enum NodeValue {
    Json(&'static str),
    Plain,
}

/// What the node setters share: the node and key arguments, the value read as `how` says, then
/// `set` on the graph still being built.
unsafe fn set_on_node(
    g: &mut sa_graph,
    graph_name: *const c_char,
    node: *const c_char,
    key: *const c_char,
    value: *const c_char,
    how: NodeValue,
    set: fn(&mut Building, Option<&str>, &str, &str, Value) -> ApiResult,
) -> ApiResult {
    let graph_name = unsafe { opt_str(graph_name, "graph_name")? };
    let node = unsafe { arg_str(node, "node")? };
    let key = unsafe { arg_str(key, "key")? };
    let v = match how {
        NodeValue::Json(kind) => {
            let text = unsafe { arg_str(value, "json_value")? };
            parse_json_arg(text, &format!("node '{node}': {kind} '{key}'"))?
        }
        NodeValue::Plain => Value::String(unsafe { arg_str(value, "value")? }.to_string()),
    };
    set(g.building()?, graph_name, node, key, v)
}

fn set_attr(b: &mut Building, graph_name: Option<&str>, node: &str, key: &str, v: Value) -> ApiResult {
    let (gi, ni) = b.node(graph_name, node)?;
    let what = format!("node '{node}' of {}", b.graph_label(gi));
    set_node_attr(&mut b.builder.graphs[gi].nodes[ni].attrs, key, v, &what)?;
    Ok(())
}

/// Sets one field of a node (a graph JSON node key other than `name`: `type`, `engine`,
/// `tasks`, `cost_us`, `cores`, `attrs` (the whole object), `subgraphs`, `stream`,
/// `attached_stream_ids`, `attached_tasks`, `ge_attrs` (the whole object), `out_bytes`,
/// `alias_input`, ...) to a JSON value given as text, e.g. key `out_bytes`, value
/// `"[1024]"`. The value is checked as the graph loader checks it (`SA_FIELD` / `SA_ATTRIBUTE`,
/// naming node and key); an unknown key is `SA_FIELD` with the known keys; `null` resets an
/// optional field to its default. `name` is `SA_INVALID_ARGUMENT` (a node keeps its name).
/// `SA_JSON` if the text is not JSON, `SA_NOT_FOUND` for an unknown node, `SA_INVALID_STATE`
/// once built. Not thread-safe for one handle.
///
/// Ownership: borrows `graph`; the strings are only read during the call (the graph keeps copies).
///
/// # Safety
/// `graph` is NULL or a live handle; the strings are NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_graph_set_node_field(
    graph: *mut sa_graph,
    graph_name: *const c_char,
    node: *const c_char,
    key: *const c_char,
    json_value: *const c_char,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_graph(graph, |g| set_on_node(g, graph_name, node, key, json_value, NodeValue::Json("field"), set_field))
    })
}

fn set_field(b: &mut Building, graph_name: Option<&str>, node: &str, key: &str, v: Value) -> ApiResult {
    let (gi, ni) = b.node(graph_name, node)?;
    let graph = b.graph_label(gi);
    if key == "name" {
        return Err(ApiError::new(
            SA_INVALID_ARGUMENT,
            format!("node '{node}' of {graph}: a node keeps its name; add a node under the new name"),
        ));
    }
    set_node_field(&mut b.builder.graphs[gi].nodes[ni], key, v, &graph)?;
    Ok(())
}

/// Sets a raw GE attribute of a node (graph JSON `ge_attrs`, by GE name: `_hccl_task_num`,
/// `_disable_attached_resource`, ...) to a JSON value given as text (`"3"`, `"true"`,
/// `"[1,2]"`). Known attributes are type-checked when the graph is built (`SA_ATTRIBUTE`).
/// `SA_JSON` if the text is not JSON, `SA_NOT_FOUND` for an unknown node, `SA_INVALID_STATE`
/// once built. Not thread-safe for one handle.
///
/// Ownership: borrows `graph`; the strings are only read during the call (the graph keeps copies).
///
/// # Safety
/// `graph` is NULL or a live handle; the strings are NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_graph_set_node_ge_attr(
    graph: *mut sa_graph,
    graph_name: *const c_char,
    node: *const c_char,
    key: *const c_char,
    json_value: *const c_char,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_graph(graph, |g| {
            let graph_name = opt_str(graph_name, "graph_name")?;
            let node = arg_str(node, "node")?;
            let key = arg_str(key, "key")?;
            let text = arg_str(json_value, "json_value")?;
            if key.is_empty() {
                return Err(ApiError::new(SA_INVALID_ARGUMENT, "argument 'key' is empty"));
            }
            let v = parse_json_arg(text, &format!("node '{node}': ge_attrs.{key}"))?;
            g.building()?.node_mut(graph_name, node)?.ge_attrs.0.insert(key.to_string(), v);
            Ok(())
        })
    })
}

/// Pre-assigns a logical stream to a node (graph JSON `stream`; -1 for none), the input of
/// stages that start after logical allocation. Range-checked when built (`SA_FIELD`).
/// `SA_NOT_FOUND` for an unknown node, `SA_INVALID_STATE` once built. Not thread-safe for one
/// handle.
///
/// Ownership: borrows `graph`; the strings are only read during the call (the graph keeps copies).
///
/// # Safety
/// `graph` is NULL or a live handle; the strings are NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_graph_set_node_stream(
    graph: *mut sa_graph,
    graph_name: *const c_char,
    node: *const c_char,
    stream: i64,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_graph(graph, |g| {
            let graph_name = opt_str(graph_name, "graph_name")?;
            let node = arg_str(node, "node")?;
            g.building()?.node_mut(graph_name, node)?.stream = Some(stream);
            Ok(())
        })
    })
}

/// Pre-assigns the attached streams of a node (graph JSON `attached_stream_ids`): `count` ids
/// from `ids` (NULL with `count` 0 clears them), the input of stages that start after logical
/// allocation (`sa_session_assign_given_streams`). `SA_NULL_POINTER` for a NULL `ids` with a
/// non-zero count, `SA_NOT_FOUND` for an unknown node, `SA_INVALID_STATE` once built. The ids
/// are copied. Not thread-safe for one handle.
///
/// Ownership: borrows `graph`; the strings and `ids` are only read during the call (the graph keeps
/// copies).
///
/// # Safety
/// `graph` is NULL or a live handle; the strings are NULL or NUL-terminated; `ids` is NULL or
/// points to `count` ids.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_graph_set_node_attached_streams(
    graph: *mut sa_graph,
    graph_name: *const c_char,
    node: *const c_char,
    ids: *const u32,
    count: usize,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_graph(graph, |g| {
            let graph_name = opt_str(graph_name, "graph_name")?;
            let node = arg_str(node, "node")?;
            if ids.is_null() && count != 0 {
                return Err(ApiError::new(SA_NULL_POINTER, format!("argument 'ids' is NULL with count {count}")));
            }
            // SAFETY: `ids` points to `count` ids by the caller's contract.
            let list = if count == 0 { Vec::new() } else { std::slice::from_raw_parts(ids, count).to_vec() };
            g.building()?.node_mut(graph_name, node)?.attached_stream_ids = list;
            Ok(())
        })
    })
}

/// Adds an event already present before the steps after logical allocation (graph JSON
/// `events`): id `id` recorded after node `from_node` of graph `from_graph` and waited for
/// before node `to_node` of graph `to_graph` (NULL or `""`: the root). `from_attached` /
/// `to_attached` name the attached stream of that node the end sits on (-1: its main
/// stream). The ends are resolved when the graph is built (`SA_UNKNOWN_NODE`, `SA_FIELD` for an
/// end without a stream, two ends on one stream, an id past 1048575 or a `to` that runs first).
/// The strings are copied. `SA_INVALID_STATE` once built. Not thread-safe for one handle.
///
/// Ownership: borrows `graph`; the strings are only read during the call (the graph keeps copies).
///
/// # Safety
/// `graph` is NULL or a live handle; the strings are NULL or NUL-terminated.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn sa_graph_add_event(
    graph: *mut sa_graph,
    id: u32,
    from_graph: *const c_char,
    from_node: *const c_char,
    from_attached: i64,
    to_graph: *const c_char,
    to_node: *const c_char,
    to_attached: i64,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_graph(graph, |g| {
            let from_graph = opt_str(from_graph, "from_graph")?.filter(|s| !s.is_empty());
            let to_graph = opt_str(to_graph, "to_graph")?.filter(|s| !s.is_empty());
            let from = arg_str(from_node, "from_node")?;
            let to = arg_str(to_node, "to_node")?;
            let attached = |v: i64, what: &str| match v {
                -1 => Ok(None),
                v if (0..=i64::from(u32::MAX)).contains(&v) => Ok(Some(v as u32)),
                v => Err(ApiError::new(
                    SA_INVALID_ARGUMENT,
                    format!("argument '{what}' is {v}; an attached stream id, or -1 for the main stream"),
                )),
            };
            let end = |node: &str, graph: Option<&str>, at: i64, what: &str| -> Result<EventEnd, ApiError> {
                Ok(EventEnd { node: node.to_string(), graph: graph.map(str::to_string), attached: attached(at, what)? })
            };
            let spec = EventSpec {
                id,
                from: end(from, from_graph, from_attached, "from_attached")?,
                to: end(to, to_graph, to_attached, "to_attached")?,
            };
            g.building()?.builder.events.push(spec);
            Ok(())
        })
    })
}

/// Adds one engine subgraph as GE's engine partition gives it (graph JSON `partition`): its
/// `name`, `engine`, the graph it belongs to (`graph_name`, NULL or `""`: the root), its
/// `_stream_label` / `_user_stream_label` (NULL or `""`: none) and its `node_count` node names.
/// Once one entry is added the graph's partition is the list given (every node with a device
/// task must be in exactly one entry); the entries are checked when the graph is built
/// (`SA_PARTITION`, naming the entry and node). `SA_NULL_POINTER` for a NULL `nodes` with a
/// non-zero count or a NULL name in it; `SA_INVALID_STATE` once built. Not thread-safe for one
/// handle.
///
/// Ownership: borrows `graph`; the strings and the `nodes` array are only read during the call (the
/// graph keeps copies).
///
/// # Safety
/// `graph` is NULL or a live handle; the strings are NULL or NUL-terminated; `nodes` is NULL or
/// points to `node_count` string pointers.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn sa_graph_add_partition_entry(
    graph: *mut sa_graph,
    name: *const c_char,
    engine: *const c_char,
    graph_name: *const c_char,
    stream_label: *const c_char,
    user_stream_label: *const c_char,
    nodes: *const *const c_char,
    node_count: usize,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_graph(graph, |g| {
            let name = arg_str(name, "name")?;
            let engine = arg_str(engine, "engine")?;
            let graph_name = opt_str(graph_name, "graph_name")?.filter(|s| !s.is_empty());
            let label = opt_str(stream_label, "stream_label")?.filter(|s| !s.is_empty());
            let user = opt_str(user_stream_label, "user_stream_label")?.filter(|s| !s.is_empty());
            if nodes.is_null() && node_count != 0 {
                return Err(ApiError::new(
                    SA_NULL_POINTER,
                    format!("argument 'nodes' is NULL with node_count {node_count}"),
                ));
            }
            let mut names = Vec::with_capacity(node_count);
            for i in 0..node_count {
                // SAFETY: `nodes` points to `node_count` pointers by the caller's contract.
                names.push(arg_str(*nodes.add(i), &format!("nodes[{i}]"))?.to_string());
            }
            let b = g.building()?;
            if let Some(gn) = graph_name {
                b.graph(Some(gn))?;
            }
            b.builder.partition.get_or_insert_with(Vec::new).push(PartitionSpec {
                name: name.to_string(),
                engine: engine.to_string(),
                graph: graph_name.map(str::to_string),
                stream_label: label.map(str::to_string),
                user_stream_label: user.map(str::to_string),
                nodes: names,
            });
            Ok(())
        })
    })
}

/// Validates the description and builds the immutable model: every name, reference, engine,
/// attribute and cycle is checked here, with errors naming what is at fault. After success
/// the graph can no longer be changed (`SA_INVALID_STATE`); after a failure it can be fixed
/// and built again. Building a built graph is a no-op. Not thread-safe for one handle.
///
/// Ownership: borrows `graph`; nothing is returned to own.
///
/// # Safety
/// `graph` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_graph_build(graph: *mut sa_graph) -> sa_status {
    ffi_boundary(|| unsafe { with_graph(graph, |g| g.model().map(drop)) })
}

/// Stores in `*out` the number of nodes of all graphs (root and subgraphs) of the
/// description, or of the built model. Not thread-safe for one handle.
///
/// Ownership: borrows `graph`; nothing is allocated, `*out` is written.
///
/// # Safety
/// `graph` is NULL or a live handle; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_graph_node_count(graph: *mut sa_graph, out: *mut usize) -> sa_status {
    ffi_boundary(|| unsafe {
        with_graph(graph, |g| {
            let out = out_ptr(out, "out")?;
            let n = match &g.state {
                State::Building(b) => b.builder.graphs.iter().map(|s| s.nodes.len()).sum(),
                State::Built(m) => m.nodes.len(),
            };
            write_out(out, n);
            Ok(())
        })
    })
}

/// Builds the graph if needed, runs the allocation pipeline up to `stage` (`SA_STAGE_*`) and
/// stores the result in `*out`. Allocation errors come back as their status (e.g.
/// `SA_SINGLE_STREAM_LABEL`, E10055; `SA_NOT_IMPLEMENTED`, SA2000, for modes this build does
/// not have) with the message and code on the graph handle. The graph can be allocated again.
///
/// Ownership: the caller owns `*out` (free with `sa_allocation_free`); it shares the built
/// model with the graph and stays valid after `sa_graph_free`. Not thread-safe for one graph.
///
/// # Safety
/// `graph` is NULL or a live handle; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_graph_allocate(
    graph: *mut sa_graph,
    stage: sa_stage,
    out: *mut *mut sa_allocation,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_graph(graph, |g| {
            new_boxed(out, || {
                let stage = stage_of(stage)?;
                let model = g.model()?;
                let (options, limits) = compile_inputs(&model)?;
                let mut session = crate::search::session(model, options, limits, Default::default());
                session.run_to(stage)?;
                sa_allocation::new(SessionHandle::new(session))
            })
        })
    })
}

/// The message of the most recent call on `graph` that failed, `""` if none has; NULL if
/// `graph` is NULL. Valid until the next call with `graph` (or its free); copy it to keep it.
/// Not thread-safe for one handle.
///
/// Ownership: borrows `graph`; the returned string is owned by `graph` and valid until its next
/// call or its free; the caller does not free it.
///
/// # Safety
/// `graph` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_graph_last_error(graph: *const sa_graph) -> *const c_char {
    ffi_boundary(|| {
        // SAFETY: live handle by the caller's contract.
        unsafe { graph.as_ref() }.map_or(std::ptr::null(), |g| g.last_error.message_ptr())
    })
}

/// The code string (`"SA1005"`, `"E10055"`, ...) of the most recent failed call on `graph`,
/// `""` if none has; NULL if `graph` is NULL. Static storage: never freed.
///
/// Ownership: borrows `graph`; the returned string is static: never freed.
///
/// # Safety
/// `graph` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_graph_last_error_code(graph: *const sa_graph) -> *const c_char {
    ffi_boundary(|| {
        // SAFETY: live handle by the caller's contract.
        unsafe { graph.as_ref() }.map_or(std::ptr::null(), |g| g.last_error.code_ptr())
    })
}

/// The inputs a compile from C runs with, resolved here at the edge: the options the graph
/// was given (`sa_graph_set_option` over the document's), and the task limits those options
/// leave to the device runtime, asked once per compile.
pub(crate) fn compile_inputs(model: &Model) -> ApiResult<(crate::graph::Options, TaskLimits)> {
    let options = model.options.clone();
    let limits = crate::driver::resolve_task_limits(&options)?;
    Ok((options, limits))
}

#[cfg(test)]
mod tests {
    //! Each row of the node and `attrs` field tables reaches the scanner, the schema, the
    //! loader and the C setters with one value, and an unknown key gets one message from each.

    use std::ffi::{CStr, CString};

    use super::*;
    use crate::capi::SA_OK;
    use crate::graph::fields::{ATTR_FIELDS, FieldInfo, NODE_FIELDS};
    use crate::graph::json::{builder_from_slice, load_str, node_by_scanner, node_by_schema};

    /// One node with members `members` (`name`, `type` and `engine` added where absent).
    fn node(members: &[(&str, &str)]) -> String {
        let mut all: Vec<(&str, &str)> = members.to_vec();
        for base in [("name", "\"n\""), ("type", "\"Add\""), ("engine", "\"AIcoreEngine\"")] {
            if !all.iter().any(|(k, _)| *k == base.0) {
                all.insert(0, base);
            }
        }
        let members: Vec<String> = all.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect();
        format!("{{{}}}", members.join(", "))
    }

    /// Graph JSON with that one node.
    fn doc(members: &[(&str, &str)]) -> String {
        format!(
            "{{\"format\": \"stream-graph\", \"version\": 1, \"name\": \"g\", \"nodes\": [{}], \"edges\": []}}",
            node(members)
        )
    }

    fn schema_node(members: &[(&str, &str)]) -> NodeSpec {
        node_by_schema(&node(members)).expect("the schema reads it")
    }

    /// A C-built graph with node `n` at its defaults.
    fn c_graph() -> *mut sa_graph {
        let mut g = std::ptr::null_mut();
        let s = |t: &str| CString::new(t).unwrap();
        unsafe {
            assert_eq!(sa_graph_new(s("g").as_ptr(), &mut g), SA_OK);
            let (n, t, e) = (s("n"), s("Add"), s("AIcoreEngine"));
            assert_eq!(sa_graph_add_node(g, std::ptr::null(), n.as_ptr(), t.as_ptr(), e.as_ptr(), 1, 0.0, 0), SA_OK);
        }
        g
    }

    type Setter =
        unsafe extern "C" fn(*mut sa_graph, *const c_char, *const c_char, *const c_char, *const c_char) -> sa_status;

    /// Sets `key` of node `n` through `set`: the node after, or the status and message.
    fn c_set(set: Setter, key: &str, value: &str) -> Result<NodeSpec, (sa_status, String)> {
        let g = c_graph();
        let (n, k, v) = (CString::new("n").unwrap(), CString::new(key).unwrap(), CString::new(value).unwrap());
        let out = unsafe {
            match set(g, std::ptr::null(), n.as_ptr(), k.as_ptr(), v.as_ptr()) {
                SA_OK => match &(*g).state {
                    State::Building(b) => Ok(b.builder.graphs[0].nodes[0].clone()),
                    State::Built(_) => unreachable!("never built here"),
                },
                status => Err((status, CStr::from_ptr(sa_graph_last_error(g)).to_string_lossy().into_owned())),
            }
        };
        unsafe { sa_graph_free(g) };
        out
    }

    /// One row: the scanner, the schema, the loader and the C setter agree, the example
    /// changes the node, and the scanner reads the node exactly when the row has a reader.
    fn check_row(f: &FieldInfo, members: &[(&str, &str)], set: Setter, c_value: &str) {
        let key = f.key;
        let schema = schema_node(members);
        assert_ne!(schema, schema_node(&[]), "the example of '{key}' must differ from the default");
        let fast = node_by_scanner(&node(members));
        assert_eq!(fast.is_some(), f.fast, "'{key}': the scanner reads it exactly when the table says");
        if let Some(fast) = fast {
            assert_eq!(fast, schema, "'{key}': scanner and schema disagree");
        }
        let loaded = builder_from_slice(doc(members).as_bytes()).expect("the loader reads it");
        assert_eq!(loaded.graphs[0].nodes[0], schema, "'{key}': the loader and the schema disagree");
        match c_set(set, key, c_value) {
            Ok(node) => assert_eq!(node, schema, "'{key}': the C setter and the loader disagree"),
            Err((status, message)) => {
                assert!(key == "name" && status == SA_INVALID_ARGUMENT, "'{key}': the C setter refused: {message}")
            }
        }
    }

    #[test]
    fn every_node_field_reads_alike_through_both_loaders_and_the_c_setter() {
        for f in NODE_FIELDS {
            check_row(f, &[(f.key, f.example)], sa_graph_set_node_field, f.example);
        }
    }

    #[test]
    fn every_attrs_field_reads_alike_through_both_loaders_and_the_c_setter() {
        for f in ATTR_FIELDS {
            let attrs = format!("{{\"{}\": {}}}", f.key, f.example);
            check_row(f, &[("attrs", &attrs)], sa_graph_set_node_attr, f.example);
        }
    }

    #[test]
    fn an_unknown_key_gets_one_message_from_each_reader() {
        let loader = |members: &[(&str, &str)]| load_str(&doc(members)).expect_err("refused").message;
        let node = loader(&[("bogus", "1")]);
        assert!(
            node.starts_with("node 'n' of root graph 'g': unknown field 'bogus' (known fields: name, type,"),
            "{node}"
        );
        assert_eq!(c_set(sa_graph_set_node_field, "bogus", "1"), Err((crate::capi::SA_FIELD, node)));
        let attrs = loader(&[("attrs", "{\"bogus\": 1}")]);
        assert!(
            attrs.starts_with("node 'n' of root graph 'g': attrs: unknown field 'bogus' (known fields: stream_label,")
        );
        assert_eq!(c_set(sa_graph_set_node_attr, "bogus", "1"), Err((crate::capi::SA_FIELD, attrs)));
        // A bad value: the same words too.
        let bad = loader(&[("tasks", "-1")]);
        assert_eq!(bad, "node 'n' of root graph 'g': field 'tasks' must be an integer in [0, 4294967295], got -1");
        assert_eq!(c_set(sa_graph_set_node_field, "tasks", "-1"), Err((crate::capi::SA_FIELD, bad)));
    }

    #[test]
    fn null_resets_an_optional_field_and_is_refused_for_a_required_one() {
        assert_eq!(c_set(sa_graph_set_node_field, "tasks", "null"), Ok(schema_node(&[])));
        assert_eq!(c_set(sa_graph_set_node_attr, "dims", "null"), Ok(schema_node(&[])));
        let (status, message) = c_set(sa_graph_set_node_field, "type", "null").unwrap_err();
        assert_eq!(
            (status, message.as_str()),
            (crate::capi::SA_FIELD, "node 'n' of root graph 'g': missing required field 'type'")
        );
    }
}
