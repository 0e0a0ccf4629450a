//! What the two compile-side result handles read from: a compile session and the tables C
//! borrows from it. [`super::session::sa_session`] drives one session stage by stage;
//! [`super::allocation::sa_allocation`] is a read-only view of one that ran as far as it was
//! asked (`sa_graph_allocate`, or `sa_session_get_allocation` on a finished session). Both
//! read node names, node lookups, the memory plan, the execution order and the summary
//! through [`SessionHandle`], so each is made in one place and answers the same on either handle.
//!
//! Node indexes are positions in GE's `GetAllNodes` order (each graph in topological order, a
//! node's subgraphs right after it; the nodes the pipeline inserted are not counted). The
//! order in which the streams run their nodes, the allocation's execution order (critical path
//! first, except under `compat=ge` and the other cases where it is GE's order), is a separate
//! list of those indexes: `sa_allocation_execution_order`, `sa_session_execution_order`.

use std::ffi::{CStr, CString};
use std::sync::{Arc, OnceLock};

use super::{ApiError, ApiResult, SA_NOT_FOUND, lossy_cstring, out_ptr, sa_status, write_out};
use crate::compile::Allocation;
use crate::driver::Session;
use crate::graph::{GraphId, Model, NodeId};
use crate::memory::MemoryPlan;

/// The session a C handle holds: it owns (shares) the built model.
pub(crate) type CompileSession = Session<Arc<Model>>;

/// The NUL-terminated names C borrows, made once per session and shared with every
/// allocation taken from it.
struct Names {
    /// By node id.
    nodes: Vec<CString>,
    /// Graph labels by graph id: `""` for the root, else the subgraph's name.
    graphs: Vec<CString>,
}

/// A compile session plus what C reads of it. The memory plan is the session's own
/// ([`crate::driver::Session::memory_plan`]); the order cache holds the current stage's and is
/// dropped by every call that changes the allocation ([`SessionHandle::stage_call`]).
pub(crate) struct SessionHandle {
    session: CompileSession,
    names: Arc<Names>,
    /// The allocation's execution order as node indexes, made on first use.
    order: OnceLock<Vec<usize>>,
}

impl Clone for SessionHandle {
    /// A copy of the session at its current stage, sharing the model and the name table.
    fn clone(&self) -> Self {
        SessionHandle { session: self.session.clone(), names: Arc::clone(&self.names), order: OnceLock::new() }
    }
}

impl SessionHandle {
    pub(crate) fn new(session: CompileSession) -> Self {
        let model = session.model();
        let names = Names {
            nodes: model.nodes.iter().map(|n| lossy_cstring(&n.name)).collect(),
            graphs: model.graphs.ids().map(|g| lossy_cstring(model.graph_label(g))).collect(),
        };
        SessionHandle { session, names: Arc::new(names), order: OnceLock::new() }
    }

    pub(crate) fn session(&self) -> &CompileSession {
        &self.session
    }

    pub(crate) fn model(&self) -> &Model {
        self.session.model()
    }

    /// The allocation so far; `SA_STAGE` before logical assignment.
    pub(crate) fn allocation(&self) -> ApiResult<&Allocation> {
        Ok(self.session.allocation()?)
    }

    /// Runs a call that changes the session, dropping what was cached of the previous stage.
    pub(crate) fn stage_call<T>(&mut self, f: impl FnOnce(&mut CompileSession) -> crate::Result<T>) -> ApiResult<T> {
        self.order = OnceLock::new();
        Ok(f(&mut self.session)?)
    }

    /// The node at node index `index`; `SA_NOT_FOUND` when out of range.
    pub(crate) fn node_at(&self, index: usize) -> ApiResult<NodeId> {
        self.session.node_at(index).map_err(|_| {
            ApiError::new(
                SA_NOT_FOUND,
                format!(
                    "node index {index} is out of range (model '{}' has {} nodes)",
                    self.model().name,
                    self.session.order().len()
                ),
            )
        })
    }

    /// Node `node` of graph `graph` (NULL, `""` or the root's name: the root); a failure has
    /// status `missing` (each handle keeps the status it has always answered) and names the
    /// missing graph or node.
    pub(crate) fn find(&self, graph: Option<&str>, node: &str, missing: sa_status) -> ApiResult<NodeId> {
        let model = self.model();
        let g = match graph {
            None | Some("") => GraphId::ROOT,
            Some(name) if name == model.name => GraphId::ROOT,
            Some(name) => model.find_graph(name).ok_or_else(|| {
                ApiError::new(missing, format!("graph '{name}' does not exist in model '{}'", model.name))
            })?,
        };
        model.find_node(g, node).ok_or_else(|| {
            let where_ = if g == GraphId::ROOT {
                format!("root graph '{}'", model.name)
            } else {
                format!("subgraph '{}'", model.graphs[g].name)
            };
            ApiError::new(missing, format!("node '{node}' is not a node of {where_}"))
        })
    }

    /// The node's name, owned by the handle.
    pub(crate) fn name(&self, n: NodeId) -> &CStr {
        &self.names.nodes[n.index()]
    }

    /// The node's graph label (`""` for the root), owned by the handle.
    pub(crate) fn graph_label(&self, n: NodeId) -> &CStr {
        &self.names.graphs[self.model().nodes[n].graph.index()]
    }

    /// The session's memory plan of the current allocation; `None` when the graph gives no
    /// `out_bytes`.
    pub(crate) fn memory(&self) -> ApiResult<Option<&MemoryPlan>> {
        Ok(self.session.memory_plan()?)
    }

    /// The allocation's execution order, as node indexes.
    pub(crate) fn execution_order(&self) -> ApiResult<&[usize]> {
        let alloc = self.allocation()?;
        Ok(self.order.get_or_init(|| alloc.order(self.model()).iter().map(|&n| self.session.index_of(n)).collect()))
    }
}

/// `sa_allocation_memory_peak`, `sa_session_memory_peak`.
///
/// # Safety
/// `out` is NULL or writable.
pub(crate) unsafe fn memory_peak(c: &SessionHandle, out: *mut u64) -> ApiResult {
    let out = out_ptr(out, "out")?;
    let plan = c.memory()?.ok_or_else(|| {
        ApiError::new(
            SA_NOT_FOUND,
            format!("graph '{}' gives no out_bytes: the allocation has no memory plan", c.model().name),
        )
    })?;
    unsafe { write_out(out, plan.peak_bytes) };
    Ok(())
}

/// `sa_allocation_tensor_count`, `sa_session_tensor_count`.
///
/// # Safety
/// `out` is NULL or writable.
pub(crate) unsafe fn tensor_count(c: &SessionHandle, out: *mut usize) -> ApiResult {
    let out = out_ptr(out, "out")?;
    let n = c.memory()?.map_or(0, |p| p.tensors.len());
    unsafe { write_out(out, n) };
    Ok(())
}

/// `sa_allocation_execution_order`, `sa_session_execution_order`: the array is the handle's.
///
/// # Safety
/// The outputs are NULL or writable.
pub(crate) unsafe fn execution_order(c: &SessionHandle, indexes: *mut *const usize, count: *mut usize) -> ApiResult {
    let (a, n) = (out_ptr(indexes, "indexes")?, out_ptr(count, "count")?);
    let order = c.execution_order()?;
    unsafe { write_array(a, n, order) };
    Ok(())
}

/// Writes a borrowed array (NULL when empty) and its length.
///
/// # Safety
/// Both pointers came from [`out_ptr`].
pub(crate) unsafe fn write_array<T>(ptr: *mut *const T, count: *mut usize, v: &[T]) {
    unsafe {
        write_out(ptr, if v.is_empty() { std::ptr::null() } else { v.as_ptr() });
        write_out(count, v.len());
    }
}
