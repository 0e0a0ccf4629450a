//! `sa_allocation`: a read-only view of a compile session that ran as far as it was asked
//! (`sa_graph_allocate`), or of a finished one (`sa_session_get_allocation`).
//!
//! Nodes are addressed by node index (GE's `GetAllNodes` order: each graph in topological
//! order, a node's subgraphs right after it; the nodes the pipeline inserted are not counted)
//! or by graph and node name; `sa_allocation_execution_order` lists the indexes in the order the
//! streams run the nodes. Streams are `int64_t`, -1 for a node that runs on no stream. The
//! memory plan and the summary are read as on the session (see [`super::handle`]).

use std::ffi::{CString, c_char};
use std::sync::{Mutex, OnceLock};

use super::handle::{self, SessionHandle};
use super::summary::sa_summary;
use super::{
    ApiError, ApiResult, LastError, SA_BUFFER_TOO_SMALL, SA_INVALID_ARGUMENT, SA_NOT_FOUND, SA_NULL_POINTER, arg_str,
    ffi_boundary, free_box, lossy_cstring, opt_str, out_ptr, put, sa_status, write_out,
};
use crate::compile::{Allocation, Stage};
use crate::graph::{NodeId, StreamId};
use crate::memory::AllocationDocument;

/// Which stages of the pipeline `sa_graph_allocate` runs (an `int32_t`; one of `SA_STAGE_*`).
pub type sa_stage = i32;
/// Logical stream assignment only.
pub const SA_STAGE_LOGICAL: sa_stage = 0;
/// Logical streams plus synchronisation (events or notifies).
pub const SA_STAGE_SYNC: sa_stage = 1;
/// Up to the physical split and stream activation.
pub const SA_STAGE_SPLIT: sa_stage = 2;
/// The whole pipeline.
pub const SA_STAGE_ALL: sa_stage = 3;

pub(crate) fn stage_of(stage: sa_stage) -> ApiResult<Stage> {
    Ok(match stage {
        SA_STAGE_LOGICAL => Stage::Logical,
        SA_STAGE_SYNC => Stage::Sync,
        SA_STAGE_SPLIT => Stage::Split,
        SA_STAGE_ALL => Stage::All,
        other => return Err(ApiError::new(SA_INVALID_ARGUMENT, format!("stage {other} is not one of SA_STAGE_*"))),
    })
}

pub(crate) fn stage_value(stage: Stage) -> sa_stage {
    match stage {
        Stage::Logical => SA_STAGE_LOGICAL,
        Stage::Sync => SA_STAGE_SYNC,
        Stage::Split => SA_STAGE_SPLIT,
        Stage::All => SA_STAGE_ALL,
    }
}

/// A compile session that has run, read-only, plus the JSON text C reads of it. Opaque to C.
/// Immutable after creation, so queries from several threads are safe (its caches are
/// `OnceLock`s); the last-error slot is behind a lock.
pub struct sa_allocation {
    handle: SessionHandle,
    mode: CString,
    json: OnceLock<CString>,
    last_error: Mutex<LastError>,
}

impl sa_allocation {
    /// A view of `handle`, which has run at least its logical stage.
    pub(crate) fn new(handle: SessionHandle) -> ApiResult<Self> {
        let mode = lossy_cstring(handle.allocation()?.mode());
        Ok(sa_allocation { handle, mode, json: OnceLock::new(), last_error: Mutex::new(LastError::default()) })
    }

    fn alloc(&self) -> ApiResult<&Allocation> {
        self.handle.allocation()
    }

    /// Node `node` of graph `graph`: `SA_NOT_FOUND` when missing (the session answers
    /// `SA_UNKNOWN_NODE`).
    fn find(&self, graph: Option<&str>, node: &str) -> ApiResult<NodeId> {
        self.handle.find(graph, node, SA_NOT_FOUND)
    }

    fn json(&self) -> ApiResult<&CString> {
        let alloc = self.alloc()?;
        let plan = self.handle.memory()?;
        Ok(self.json.get_or_init(|| lossy_cstring(&alloc.document(self.handle.model(), plan).to_string_pretty())))
    }
}

fn stream_value(s: Option<StreamId>) -> i64 {
    s.map_or(-1, |s| i64::from(s.0))
}

/// Runs `f` on a non-NULL allocation and records its failure on the handle.
///
/// # Safety
/// `a` is NULL or a live handle from this library.
unsafe fn with_alloc<T>(a: *const sa_allocation, f: impl FnOnce(&sa_allocation) -> ApiResult<T>) -> ApiResult<T> {
    // SAFETY: live by the caller's contract; only shared access is taken.
    let Some(a) = (unsafe { a.as_ref() }) else {
        return Err(ApiError::new(SA_NULL_POINTER, "argument 'allocation' is NULL"));
    };
    let r = f(a);
    if let Err(e) = &r {
        a.last_error.lock().unwrap_or_else(|p| p.into_inner()).set(e);
    }
    r
}

/// Runs `f` on the session behind a non-NULL allocation (see [`with_alloc`]).
///
/// # Safety
/// As [`with_alloc`].
pub(crate) unsafe fn with_handle<T>(
    a: *const sa_allocation,
    f: impl FnOnce(&SessionHandle) -> ApiResult<T>,
) -> ApiResult<T> {
    unsafe { with_alloc(a, |a| f(&a.handle)) }
}

/// Frees an allocation. NULL is a no-op. Strings borrowed from it (names, mode) die with it;
/// owned strings from `sa_allocation_to_json` do not. Freeing twice, or using the handle
/// afterwards, is undefined behaviour.
///
/// Ownership: takes ownership of `allocation` and frees it (NULL is a no-op); the strings and
/// arrays it lent die with it.
///
/// # Safety
/// `allocation` is NULL or a live handle that no other thread is using.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_allocation_free(allocation: *mut sa_allocation) {
    ffi_boundary(|| unsafe { free_box(allocation) })
}

/// Stores in `*out` the number of nodes of the model (all graphs; inserted Send/Recv/
/// StreamActive nodes excluded): valid indexes are `0 .. *out - 1`. Thread-safe.
///
/// Ownership: borrows `allocation`; nothing is allocated, `*out` is written.
///
/// # Safety
/// `allocation` is NULL or a live handle; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_allocation_node_count(allocation: *const sa_allocation, out: *mut usize) -> sa_status {
    ffi_boundary(|| unsafe { with_alloc(allocation, |a| put(out, "out", || Ok(a.handle.session().order().len()))) })
}

/// Stores in `*name` the name of the node at node index `index` (GE's `GetAllNodes` order). The string belongs
/// to the allocation and lives until `sa_allocation_free`. `SA_NOT_FOUND` if `index` is out of
/// range. Thread-safe.
///
/// Ownership: borrows `allocation`; the string in `*name` is owned by `allocation` and valid until
/// `sa_allocation_free`; the caller does not free it.
///
/// # Safety
/// `allocation` is NULL or a live handle; `name` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_allocation_node_name(
    allocation: *const sa_allocation,
    index: usize,
    name: *mut *const c_char,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_alloc(allocation, |a| {
            put(name, "name", || {
                let n = a.handle.node_at(index)?;
                Ok(a.handle.name(n).as_ptr())
            })
        })
    })
}

/// Stores in `*graph_name` the graph of the node at `index`: `""` for the root, else the
/// subgraph's name (as allocation JSON writes it). Owned by the allocation, valid until
/// `sa_allocation_free`. `SA_NOT_FOUND` if out of range. Thread-safe.
///
/// Ownership: borrows `allocation`; the string in `*graph_name` is owned by `allocation` and valid
/// until `sa_allocation_free`; the caller does not free it.
///
/// # Safety
/// `allocation` is NULL or a live handle; `graph_name` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_allocation_node_graph(
    allocation: *const sa_allocation,
    index: usize,
    graph_name: *mut *const c_char,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_alloc(allocation, |a| {
            put(graph_name, "graph_name", || {
                let n = a.handle.node_at(index)?;
                Ok(a.handle.graph_label(n).as_ptr())
            })
        })
    })
}

/// Stores in `*stream` the physical stream of the node at node index `index` (-1:
/// none). `SA_NOT_FOUND` if out of range. Thread-safe.
///
/// Ownership: borrows `allocation`; nothing is allocated, `*stream` is written.
///
/// # Safety
/// `allocation` is NULL or a live handle; `stream` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_allocation_stream_at(
    allocation: *const sa_allocation,
    index: usize,
    stream: *mut i64,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_alloc(allocation, |a| {
            put(stream, "stream", || {
                let n = a.handle.node_at(index)?;
                Ok(stream_value(a.alloc()?.stream()[n]))
            })
        })
    })
}

/// Stores in `*stream` the logical stream of the node at node index `index` (-1:
/// none). `SA_NOT_FOUND` if out of range. Thread-safe.
///
/// Ownership: borrows `allocation`; nothing is allocated, `*stream` is written.
///
/// # Safety
/// `allocation` is NULL or a live handle; `stream` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_allocation_logical_stream_at(
    allocation: *const sa_allocation,
    index: usize,
    stream: *mut i64,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_alloc(allocation, |a| {
            put(stream, "stream", || {
                let n = a.handle.node_at(index)?;
                Ok(stream_value(a.alloc()?.logical_stream()[n]))
            })
        })
    })
}

/// Stores in `*stream` the physical stream (-1: none) of node `node` of graph `graph_name`
/// (NULL, `""`: the root; else a subgraph's name). `SA_NOT_FOUND` names the missing graph or
/// node. Thread-safe.
///
/// Ownership: borrows `allocation` and reads `graph_name` and `node` only during the call;
/// `*stream` is written.
///
/// # Safety
/// `allocation` is NULL or a live handle; the strings are NULL or NUL-terminated; `stream` is
/// NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_allocation_stream_of(
    allocation: *const sa_allocation,
    graph_name: *const c_char,
    node: *const c_char,
    stream: *mut i64,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_alloc(allocation, |a| {
            put(stream, "stream", || {
                let n = a.find(opt_str(graph_name, "graph_name")?, arg_str(node, "node")?)?;
                Ok(stream_value(a.alloc()?.stream()[n]))
            })
        })
    })
}

/// Stores in `*stream` the logical stream (-1: none) of node `node` of graph `graph_name`
/// (NULL, `""`: the root). `SA_NOT_FOUND` names the missing graph or node. Thread-safe.
///
/// Ownership: borrows `allocation` and reads `graph_name` and `node` only during the call;
/// `*stream` is written.
///
/// # Safety
/// `allocation` is NULL or a live handle; the strings are NULL or NUL-terminated; `stream` is
/// NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_allocation_logical_stream_of(
    allocation: *const sa_allocation,
    graph_name: *const c_char,
    node: *const c_char,
    stream: *mut i64,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_alloc(allocation, |a| {
            put(stream, "stream", || {
                let n = a.find(opt_str(graph_name, "graph_name")?, arg_str(node, "node")?)?;
                Ok(stream_value(a.alloc()?.logical_stream()[n]))
            })
        })
    })
}

/// The body of the count getters.
///
/// # Safety
/// As the getters.
unsafe fn count(a: *const sa_allocation, out: *mut u32, field: impl FnOnce(&Allocation) -> u32) -> ApiResult {
    unsafe { with_alloc(a, |a| put(out, "out", || Ok(field(a.alloc()?)))) }
}

/// Stores in `*out` the number of logical (main) streams. Thread-safe.
///
/// Ownership: borrows `allocation`; nothing is allocated, `*out` is written.
///
/// # Safety
/// `allocation` is NULL or a live handle; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_allocation_logical_stream_count(
    allocation: *const sa_allocation,
    out: *mut u32,
) -> sa_status {
    ffi_boundary(|| unsafe { count(allocation, out, |a| a.logical_count()) })
}

/// Stores in `*out` the number of physical streams after the split (equal to the logical
/// count before the split stage). Thread-safe.
///
/// Ownership: borrows `allocation`; nothing is allocated, `*out` is written.
///
/// # Safety
/// `allocation` is NULL or a live handle; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_allocation_physical_stream_count(
    allocation: *const sa_allocation,
    out: *mut u32,
) -> sa_status {
    ffi_boundary(|| unsafe { count(allocation, out, |a| a.physical_count()) })
}

/// Stores in `*out` the number of attached streams. Thread-safe.
///
/// Ownership: borrows `allocation`; nothing is allocated, `*out` is written.
///
/// # Safety
/// `allocation` is NULL or a live handle; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_allocation_attached_stream_count(
    allocation: *const sa_allocation,
    out: *mut u32,
) -> sa_status {
    ffi_boundary(|| unsafe { count(allocation, out, |a| a.attached_count()) })
}

/// Stores in `*out` the number of distinct sync ids (events or notifies, see the JSON's
/// `events.kind`). Thread-safe.
///
/// Ownership: borrows `allocation`; nothing is allocated, `*out` is written.
///
/// # Safety
/// `allocation` is NULL or a live handle; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_allocation_sync_count(allocation: *const sa_allocation, out: *mut u32) -> sa_status {
    ffi_boundary(|| unsafe { count(allocation, out, |a| a.sync_count()) })
}

/// Stores in `*mode` the mode the model was allocated in (`"static-single"`,
/// `"static-multi"`, `"dynamic-single"`, `"dynamic-multi"` or a policy name). Owned by the
/// allocation, valid until `sa_allocation_free`. Thread-safe.
///
/// Ownership: borrows `allocation`; the string in `*mode` is owned by `allocation` and valid until
/// `sa_allocation_free`; the caller does not free it.
///
/// # Safety
/// `allocation` is NULL or a live handle; `mode` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_allocation_mode(allocation: *const sa_allocation, mode: *mut *const c_char) -> sa_status {
    ffi_boundary(|| unsafe { with_alloc(allocation, |a| put(mode, "mode", || Ok(a.mode.as_ptr()))) })
}

/// Stores in `*stage` how far the pipeline ran (`SA_STAGE_*`). Thread-safe.
///
/// Ownership: borrows `allocation`; nothing is allocated, `*stage` is written.
///
/// # Safety
/// `allocation` is NULL or a live handle; `stage` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_allocation_stage(allocation: *const sa_allocation, stage: *mut sa_stage) -> sa_status {
    ffi_boundary(|| unsafe { with_alloc(allocation, |a| put(stage, "stage", || Ok(stage_value(a.alloc()?.stage())))) })
}

/// Stores in `*json` a new NUL-terminated copy of the allocation JSON v1 document (pretty,
/// newline-terminated, byte-identical for identical results).
///
/// Ownership: the caller owns `*json` and frees it with `sa_string_free` (not `free`); it
/// outlives the allocation. Thread-safe.
///
/// # Safety
/// `allocation` is NULL or a live handle; `json` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_allocation_to_json(allocation: *const sa_allocation, json: *mut *mut c_char) -> sa_status {
    ffi_boundary(|| unsafe { with_alloc(allocation, |a| put(json, "json", || Ok(a.json()?.clone().into_raw()))) })
}

/// Copies the allocation JSON document into the caller's buffer, NUL-terminated.
///
/// Size protocol: `*needed` receives the size the document takes, NUL included. With
/// `buffer` NULL and `capacity` 0 the call only asks for that size and returns `SA_OK`. If
/// `capacity < *needed` it returns `SA_BUFFER_TOO_SMALL` (with `*needed` set, `buffer`
/// untouched); call again with a buffer of `*needed` bytes. `buffer` NULL with a non-zero
/// `capacity` is `SA_NULL_POINTER`. Thread-safe.
///
/// Ownership: borrows `allocation`; nothing is allocated: the caller owns `buffer`, which is
/// written, and `*needed`.
///
/// # Safety
/// `allocation` is NULL or a live handle; `buffer` is NULL or writable for `capacity` bytes;
/// `needed` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_allocation_copy_json(
    allocation: *const sa_allocation,
    buffer: *mut c_char,
    capacity: usize,
    needed: *mut usize,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_alloc(allocation, |a| {
            let needed = out_ptr(needed, "needed")?;
            if buffer.is_null() && capacity != 0 {
                return Err(ApiError::new(
                    SA_NULL_POINTER,
                    format!("argument 'buffer' is NULL with capacity {capacity}"),
                ));
            }
            let bytes = a.json()?.as_bytes_with_nul();
            write_out(needed, bytes.len());
            if buffer.is_null() {
                return Ok(());
            }
            if capacity < bytes.len() {
                return Err(ApiError::new(
                    SA_BUFFER_TOO_SMALL,
                    format!("the allocation JSON takes {} bytes with its NUL; the buffer has {capacity}", bytes.len()),
                ));
            }
            // SAFETY: `buffer` is writable for `capacity >= bytes.len()` bytes and cannot
            // overlap our own string.
            std::ptr::copy_nonoverlapping(bytes.as_ptr().cast::<c_char>(), buffer, bytes.len());
            Ok(())
        })
    })
}

/// The message of the most recent failed call on `allocation`, `""` if none; NULL if
/// `allocation` is NULL. Valid until the next failing call on the handle or its free; when
/// several threads share the handle, read `sa_last_error_message` (per thread) instead.
///
/// Ownership: borrows `allocation`; the returned string is owned by `allocation` and valid until
/// its next failing call or its free; the caller does not free it.
///
/// # Safety
/// `allocation` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_allocation_last_error(allocation: *const sa_allocation) -> *const c_char {
    ffi_boundary(|| {
        // SAFETY: live handle by the caller's contract.
        unsafe { allocation.as_ref() }
            .map_or(std::ptr::null(), |a| a.last_error.lock().unwrap_or_else(|p| p.into_inner()).message_ptr())
    })
}

/// The code string of the most recent failed call on `allocation` (`"SA3006"`, ...), `""` if
/// none; NULL if `allocation` is NULL. Static storage: never freed.
///
/// Ownership: borrows `allocation`; the returned string is static: never freed.
///
/// # Safety
/// `allocation` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_allocation_last_error_code(allocation: *const sa_allocation) -> *const c_char {
    ffi_boundary(|| {
        // SAFETY: live handle by the caller's contract.
        unsafe { allocation.as_ref() }
            .map_or(std::ptr::null(), |a| a.last_error.lock().unwrap_or_else(|p| p.into_inner()).code_ptr())
    })
}

/// One tensor of an allocation's memory plan (allocation JSON `memory.tensors`): output
/// `port` of node `node` of graph `graph` lives at `offset` in the arena, `bytes` long.
/// The strings are borrowed from the allocation and valid until `sa_allocation_free`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct sa_tensor {
    /// Producing node's name.
    pub node: *const c_char,
    /// Its graph: `""` for the root, else the subgraph's name.
    pub graph: *const c_char,
    /// Output port of the node.
    pub port: u32,
    /// Byte offset in the arena (a multiple of 512).
    pub offset: u64,
    /// Bytes of the tensor (`out_bytes` of the port).
    pub bytes: u64,
}

/// `sa_allocation_tensor_at`, `sa_session_tensor_at`: the strings are the handle's.
///
/// # Safety
/// `tensor` is NULL or writable.
pub(crate) unsafe fn tensor_at(c: &SessionHandle, index: usize, tensor: *mut sa_tensor) -> ApiResult {
    let out = out_ptr(tensor, "tensor")?;
    let list = c.memory()?.map_or(&[][..], |p| &p.tensors[..]);
    let t = list.get(index).ok_or_else(|| {
        ApiError::new(
            SA_NOT_FOUND,
            format!("tensor index {index} is out of range (the memory plan has {} tensors)", list.len()),
        )
    })?;
    let v = sa_tensor {
        node: c.name(t.node).as_ptr(),
        graph: c.graph_label(t.node).as_ptr(),
        port: t.port,
        offset: t.offset,
        bytes: t.bytes,
    };
    unsafe { write_out(out, v) };
    Ok(())
}

/// Stores in `*out` the arena bytes of the allocation's memory plan: every tensor that owns
/// memory fits in `[0, *out)`, and tensors share bytes only when stream order and syncs
/// order their lifetimes. `SA_NOT_FOUND` when the graph gives no `out_bytes` (no plan). The
/// plan is made on the first memory query and kept by the allocation. Thread-safe.
///
/// Ownership: borrows `allocation`; `*out` is the caller's.
///
/// # Safety
/// `allocation` is NULL or a live handle; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_allocation_memory_peak(allocation: *const sa_allocation, out: *mut u64) -> sa_status {
    ffi_boundary(|| unsafe { with_handle(allocation, |c| handle::memory_peak(c, out)) })
}

/// Stores in `*out` the number of tensors of the memory plan (0 when the graph gives no
/// `out_bytes`): valid indexes for `sa_allocation_tensor_at` are `0 .. *out - 1`, in the
/// order of allocation JSON `memory.tensors`. Thread-safe.
///
/// Ownership: borrows `allocation`; `*out` is the caller's.
///
/// # Safety
/// `allocation` is NULL or a live handle; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_allocation_tensor_count(allocation: *const sa_allocation, out: *mut usize) -> sa_status {
    ffi_boundary(|| unsafe { with_handle(allocation, |c| handle::tensor_count(c, out)) })
}

/// Stores in `*tensor` the tensor at `index` of the memory plan. `SA_NOT_FOUND` if `index` is
/// out of range. Thread-safe.
///
/// Ownership: the struct is the caller's; its strings are owned by the allocation and valid
/// until `sa_allocation_free`.
///
/// # Safety
/// `allocation` is NULL or a live handle; `tensor` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_allocation_tensor_at(
    allocation: *const sa_allocation,
    index: usize,
    tensor: *mut sa_tensor,
) -> sa_status {
    ffi_boundary(|| unsafe { with_handle(allocation, |c| tensor_at(c, index, tensor)) })
}

/// Stores the allocation's execution order, the order in which each stream runs its nodes
/// (allocation JSON lists `nodes` in it): `*count` node indexes in `*indexes` (NULL when 0),
/// each an index for `sa_allocation_node_name` and the other index getters. It is the
/// critical-path-first order the allocation was made with, or GE's `GetAllNodes` order (the
/// identity) under `compat=ge`, on one stream and in graphs without costs. Thread-safe.
///
/// Ownership: the array is owned by the allocation and valid until `sa_allocation_free`; the
/// caller does not free it.
///
/// # Safety
/// `allocation` is NULL or a live handle; the outputs are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_allocation_execution_order(
    allocation: *const sa_allocation,
    indexes: *mut *const usize,
    count: *mut usize,
) -> sa_status {
    ffi_boundary(|| unsafe { with_handle(allocation, |c| handle::execution_order(c, indexes, count)) })
}

/// Takes the stream allocation summary (GE's `GetStreamAllocationSummary`) of the stage the
/// allocation reached into a new snapshot in `*out`, as `sa_session_get_summary` does on a
/// session. Thread-safe.
///
/// Ownership: the caller owns `*out` and frees it with `sa_summary_free`; it stays valid after
/// `sa_allocation_free`.
///
/// # Safety
/// `allocation` is NULL or a live handle; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_allocation_get_summary(
    allocation: *const sa_allocation,
    out: *mut *mut sa_summary,
) -> sa_status {
    ffi_boundary(|| unsafe { with_handle(allocation, |c| super::summary::take(c, false, out)) })
}

/// Takes the compiled graph summary (GE's `Session::GetCompiledGraphSummary`, with the memory
/// plan when the graph gives `out_bytes`) into a new snapshot in `*out`, as
/// `sa_session_get_compiled_summary` does. `SA_STAGE` unless the allocation ran the whole
/// pipeline (`SA_STAGE_ALL`). Thread-safe.
///
/// Ownership: the caller owns `*out` and frees it with `sa_summary_free`; it stays valid after
/// `sa_allocation_free`.
///
/// # Safety
/// `allocation` is NULL or a live handle; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_allocation_get_compiled_summary(
    allocation: *const sa_allocation,
    out: *mut *mut sa_summary,
) -> sa_status {
    ffi_boundary(|| unsafe { with_handle(allocation, |c| super::summary::take(c, true, out)) })
}
