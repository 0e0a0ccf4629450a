//! `sa_session`: the staged compile API (GE's `ModelBuilder` order: logical streams, then the
//! host's memory assignment and task generation, then syncs, split, Send/Recv generation).
//!
//! One handle holds one built model, the allocation so far and the host's task counts
//! ([`SessionHandle`]). Stage calls run once each, in order; a call out of order returns
//! `SA_STAGE` (SA2002) with a message naming the call that must come first. After any stage
//! the host reads per-node results (by node index, GE's `GetAllNodes` order, or by graph and
//! node name via `sa_session_node_index`), the execution order the streams run the nodes in,
//! the model counts, GE's node and model attributes as JSON, the inserted nodes, the memory
//! plan and the stream allocation summary (`sa_session_get_summary`), and once finished takes
//! the allocation as a read-only `sa_allocation` (`sa_session_get_allocation`).
//!
//! Arrays and strings a getter returns are owned by the session and stay valid until the next
//! stage call on it (or its free); owned strings (`char *`) are freed with `sa_string_free`.
//! See tests_c/ge_harness.cpp for a walk through the whole sequence.

use std::ffi::{CString, c_char};

use super::allocation::{sa_allocation, sa_tensor};
use super::graph::sa_graph;
use super::handle::{self, CompileSession, SessionHandle, write_array};
use super::summary::sa_summary;
use super::{
    ApiError, ApiResult, LastError, SA_NOT_FOUND, SA_NULL_POINTER, SA_STAGE, SA_UNKNOWN_NODE, arg_str, ffi_boundary,
    free_box, lossy_cstring, new_boxed, opt_str, out_ptr, put, sa_status, write_opt, write_out,
};
use crate::compile::NodeSyncs;
use crate::driver::SessionStage;
use crate::graph::{EventId, NodeId, StreamId};

/// How far a session has run (an `int32_t`; one of `SA_SESSION_*`).
pub type sa_session_stage = i32;
/// Created; no stage has run.
pub const SA_SESSION_NEW: sa_session_stage = 0;
/// `sa_session_assign_logical_streams` (or `sa_session_assign_given_streams`) ran.
pub const SA_SESSION_LOGICAL: sa_session_stage = 1;
/// `sa_session_insert_syncs` (or `sa_session_insert_given_syncs`) ran.
pub const SA_SESSION_SYNC: sa_session_stage = 2;
/// `sa_session_split_streams` ran.
pub const SA_SESSION_SPLIT: sa_session_stage = 3;
/// `sa_session_generate_send_recv` ran: the allocation is complete.
pub const SA_SESSION_GENERATED: sa_session_stage = 4;

// One numbering: the session's stages (driver/session.rs) are these values.
const _: () = assert!(
    SessionStage::New as i32 == SA_SESSION_NEW
        && SessionStage::Logical as i32 == SA_SESSION_LOGICAL
        && SessionStage::Sync as i32 == SA_SESSION_SYNC
        && SessionStage::Split as i32 == SA_SESSION_SPLIT
        && SessionStage::Generated as i32 == SA_SESSION_GENERATED
);

/// What C reads of one node, built once per stage.
#[derive(Default)]
struct NodeView {
    attached: Vec<i64>,
    attached_logical: Vec<i64>,
    /// Its id, for the sync index.
    id: NodeId,
    active: Vec<i64>,
}

struct InsertedView {
    name: CString,
    op_type: CString,
    anchor: NodeId,
    before: bool,
    stream: i64,
    logical_stream: i64,
    sync_id: i64,
}

#[derive(Default)]
struct View {
    /// By node index.
    nodes: Vec<NodeView>,
    /// The allocation's per-node sync index, read in place.
    syncs: NodeSyncs,
    inserted: Vec<InsertedView>,
    huge: Vec<i64>,
    split_to_logic: Vec<i64>,
}

/// A compile session plus what C reads of it. Opaque to C. Not thread-safe for one handle.
pub struct sa_session {
    handle: SessionHandle,
    /// Per-node arrays of the current stage, built on the first per-node query.
    view: Option<View>,
    last_error: LastError,
}

fn sv(s: Option<StreamId>) -> i64 {
    s.map_or(-1, |s| i64::from(s.0))
}

fn ids(v: &[StreamId]) -> Vec<i64> {
    v.iter().map(|s| i64::from(s.0)).collect()
}

impl sa_session {
    fn view(&mut self) -> ApiResult<&View> {
        if self.view.is_none() {
            let s = self.handle.session();
            let a = s.allocation()?;
            let infos = s.node_infos()?;
            let nodes = s
                .order()
                .iter()
                .map(|&n| {
                    let i = &infos[n];
                    NodeView {
                        attached: ids(&i.attached),
                        attached_logical: ids(&i.attached_logical),
                        id: n,
                        active: ids(&i.active_streams),
                    }
                })
                .collect();
            let syncs = a.node_syncs();
            let inserted = s
                .inserted_nodes()?
                .into_iter()
                .map(|i| InsertedView {
                    name: lossy_cstring(&i.name(s.model())),
                    op_type: lossy_cstring(i.op_type()),
                    anchor: i.anchor,
                    before: i.before,
                    stream: i64::from(i.stream.0),
                    logical_stream: i64::from(i.logical_stream.0),
                    sync_id: i.sync_id.map_or(-1, |id| i64::from(id.0)),
                })
                .collect();
            self.view = Some(View {
                nodes,
                syncs,
                inserted,
                huge: ids(a.huge_streams()),
                split_to_logic: ids(a.split_to_logic()),
            });
        }
        Ok(self.view.as_ref().expect("just built"))
    }

    fn index(&self, index: usize) -> ApiResult<NodeId> {
        self.handle.node_at(index)
    }

    fn session(&self) -> &CompileSession {
        self.handle.session()
    }

    /// A call that changes the allocation: what was read of the previous stage goes.
    fn stage_call(&mut self, f: impl FnOnce(&mut CompileSession) -> crate::Result<()>) -> ApiResult {
        self.view = None;
        self.handle.stage_call(f)
    }
}

/// Runs `f` on a non-NULL session and records its failure on the handle.
///
/// # Safety
/// `s` is NULL or a live handle, not used by another thread during the call.
pub(crate) unsafe fn with_session<T>(
    s: *mut sa_session,
    f: impl FnOnce(&mut sa_session) -> ApiResult<T>,
) -> ApiResult<T> {
    if s.is_null() {
        return Err(ApiError::new(SA_NULL_POINTER, "argument 'session' is NULL"));
    }
    // SAFETY: live and exclusively ours for the call, by the caller's contract.
    let s = unsafe { &mut *s };
    let r = f(s);
    if let Err(e) = &r {
        s.last_error.set(e);
    }
    r
}

/// The ids as the `uint32_t` array C reads, without a copy.
fn raw_ids(ids: &[EventId]) -> &[u32] {
    // SAFETY: `EventId` is `repr(transparent)` over `u32`: same size, alignment and validity.
    unsafe { std::slice::from_raw_parts(ids.as_ptr().cast::<u32>(), ids.len()) }
}

/// Picks a node's send and recv lists from the index.
type PickLists = fn(&NodeSyncs, NodeId) -> (&[EventId], &[EventId]);

/// An output array and its count.
type IdsOut = (*mut *const u32, *mut usize);

/// Writes two id lists of the node at `index`, which `lists` picks from its view: its syncs
/// (`sa_session_node_syncs`) or its split events (`sa_session_node_split_events`).
///
/// # Safety
/// The outputs are NULL or writable.
unsafe fn write_send_recv(s: &mut sa_session, index: usize, send: IdsOut, recv: IdsOut, lists: PickLists) -> ApiResult {
    let (a, b) = (out_ptr(send.0, "send")?, out_ptr(send.1, "send_count")?);
    let (c, d) = (out_ptr(recv.0, "recv")?, out_ptr(recv.1, "recv_count")?);
    s.index(index)?;
    let view = s.view()?;
    let (sends, recvs) = lists(&view.syncs, view.nodes[index].id);
    unsafe {
        write_array(a, b, raw_ids(sends));
        write_array(c, d, raw_ids(recvs));
    }
    Ok(())
}

/// Builds `graph` if needed and starts a compile session on it in `*out`. The session shares
/// the built model: the graph can be freed first. Build errors come back as their status
/// (`SA_CYCLE`, `SA_PARTITION`, ...) with the message on the graph handle.
///
/// Ownership: the caller owns `*out` and frees it with `sa_session_free`. Not thread-safe for
/// one graph.
///
/// # Safety
/// `graph` is NULL or a live handle; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_new(graph: *mut sa_graph, out: *mut *mut sa_session) -> sa_status {
    ffi_boundary(|| unsafe {
        new_boxed(out, || {
            let model = super::graph::with_graph(graph, |g| g.model())?;
            let (options, limits) = super::graph::compile_inputs(&model)?;
            let session = crate::search::session(model, options, limits, Default::default());
            Ok(sa_session { handle: SessionHandle::new(session), view: None, last_error: LastError::default() })
        })
    })
}

/// Frees a session. NULL is a no-op. Arrays and strings borrowed from it die with it.
///
/// Ownership: takes ownership of `session` and frees it (NULL is a no-op); the arrays and strings
/// it lent die with it.
///
/// # Safety
/// `session` is NULL or a live handle no other thread is using.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_free(session: *mut sa_session) {
    ffi_boundary(|| unsafe { free_box(session) })
}

/// Stage 1: assigns logical streams (GE's `AssignLogicalStreams`). `SA_STAGE` if it already
/// ran; allocation errors (`SA_SINGLE_STREAM_LABEL`, ...) as their status.
///
/// Ownership: borrows `session`; the arrays it lent until now (valid until its next stage call) are
/// no longer valid afterwards.
///
/// # Safety
/// `session` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_assign_logical_streams(session: *mut sa_session) -> sa_status {
    ffi_boundary(|| unsafe { with_session(session, |s| s.stage_call(CompileSession::assign_logical_streams)) })
}

/// Stage 1 from the host's assignment, instead of `sa_session_assign_logical_streams`: the
/// logical streams the graph gives (graph JSON `stream` / `attached_stream_ids`, or
/// `sa_graph_set_node_stream` / `sa_graph_set_node_attached_streams`) and its events (`events`,
/// `sa_graph_add_event`). The later stages then run on them as on GE's own assignment.
/// `SA_STAGE` if stage 1 already ran; `SA_LIMIT` / `SA_FIELD` for ids no assignment reaches.
///
/// Ownership: borrows `session`; the arrays it lent until now (valid until its next stage call) are
/// no longer valid afterwards.
///
/// # Safety
/// `session` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_assign_given_streams(session: *mut sa_session) -> sa_status {
    ffi_boundary(|| unsafe { with_session(session, |s| s.stage_call(CompileSession::assign_given_streams)) })
}

/// Stage 2 from the host's syncs, instead of `sa_session_insert_syncs`: the events the graph
/// gives become the syncs as they are, each with its Send/Recv node, and the split is the
/// first stage computed. `SA_STAGE` before stage 1 or when stage 2 already ran.
///
/// Ownership: borrows `session`; the arrays it lent until now (valid until its next stage call) are
/// no longer valid afterwards.
///
/// # Safety
/// `session` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_insert_given_syncs(session: *mut sa_session) -> sa_status {
    ffi_boundary(|| unsafe { with_session(session, |s| s.stage_call(CompileSession::insert_given_syncs)) })
}

/// Stage 2: inserts and optimises events / notifies (GE's `InsertSyncNodesByLogicStream`).
/// `SA_STAGE` before `sa_session_assign_logical_streams` or when it already ran.
///
/// Ownership: borrows `session`; the arrays it lent until now (valid until its next stage call) are
/// no longer valid afterwards.
///
/// # Safety
/// `session` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_insert_syncs(session: *mut sa_session) -> sa_status {
    ffi_boundary(|| unsafe { with_session(session, |s| s.stage_call(CompileSession::insert_syncs)) })
}

/// Sets the main-stream task count of node `node` of graph `graph_name` (NULL, `""`: the root),
/// as the host's task generation produced it; the split uses it instead of the node's `tasks`
/// and count attributes. Allowed after logical assignment and before the split (`SA_STAGE`
/// otherwise). `SA_UNKNOWN_NODE` names a missing node or graph.
///
/// Ownership: borrows `session` and reads the strings only during the call; the arrays it lent
/// until now (valid until its next stage call) are no longer valid afterwards.
///
/// # Safety
/// `session` is NULL or a live handle; the strings are NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_set_task_count(
    session: *mut sa_session,
    graph_name: *const c_char,
    node: *const c_char,
    tasks: u64,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_session(session, |s| {
            let n = s.handle.find(opt_str(graph_name, "graph_name")?, arg_str(node, "node")?, SA_UNKNOWN_NODE)?;
            s.stage_call(|x| x.set_task_count(n, tasks))
        })
    })
}

/// Sets the task count of the `attached_index`-th attached stream of a node (0-based, in the
/// order `sa_session_node_attached` lists them). Same window and errors as
/// `sa_session_set_task_count`; an index past the node's attached streams is `SA_FIELD`.
///
/// Ownership: borrows `session` and reads the strings only during the call; the arrays it lent
/// until now (valid until its next stage call) are no longer valid afterwards.
///
/// # Safety
/// `session` is NULL or a live handle; the strings are NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_set_attached_task_count(
    session: *mut sa_session,
    graph_name: *const c_char,
    node: *const c_char,
    attached_index: usize,
    tasks: u64,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_session(session, |s| {
            let n = s.handle.find(opt_str(graph_name, "graph_name")?, arg_str(node, "node")?, SA_UNKNOWN_NODE)?;
            s.stage_call(|x| x.set_attached_task_count(n, attached_index, tasks))
        })
    })
}

/// Stage 3: splits streams over the task limit and updates activations (GE's
/// `SplitStreamAndRefreshTaskDef`), with the task counts set so far. `SA_STAGE` before
/// `sa_session_insert_syncs` or when it already ran.
///
/// Ownership: borrows `session`; the arrays it lent until now (valid until its next stage call) are
/// no longer valid afterwards.
///
/// # Safety
/// `session` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_split_streams(session: *mut sa_session) -> sa_status {
    ffi_boundary(|| unsafe { with_session(session, |s| s.stage_call(CompileSession::split_streams)) })
}

/// Stage 4: generates the Send/Recv (SendNotify/RecvNotify) nodes; they then appear in
/// `sa_session_inserted_*`. `SA_STAGE` before `sa_session_split_streams` or when it already ran.
///
/// Ownership: borrows `session`; the arrays it lent until now (valid until its next stage call) are
/// no longer valid afterwards.
///
/// # Safety
/// `session` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_generate_send_recv(session: *mut sa_session) -> sa_status {
    ffi_boundary(|| unsafe { with_session(session, |s| s.stage_call(CompileSession::generate_send_recv)) })
}

/// Stores in `*stage` how far the session has run (`SA_SESSION_*`).
///
/// Ownership: borrows `session`; nothing is allocated, `*stage` is written.
///
/// # Safety
/// `session` is NULL or a live handle; `stage` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_current_stage(session: *mut sa_session, stage: *mut sa_session_stage) -> sa_status {
    ffi_boundary(|| unsafe {
        with_session(session, |s| {
            let out = out_ptr(stage, "stage")?;
            let v = match s.session().stage() {
                SessionStage::New => SA_SESSION_NEW,
                SessionStage::Logical => SA_SESSION_LOGICAL,
                SessionStage::Sync => SA_SESSION_SYNC,
                SessionStage::Split => SA_SESSION_SPLIT,
                SessionStage::Generated => SA_SESSION_GENERATED,
            };
            write_out(out, v);
            Ok(())
        })
    })
}

/// Stores in `*count` the number of model nodes (all graphs, inserted nodes excluded); node
/// indexes are `0 .. *count - 1` in GE's `GetAllNodes` order; the order the streams run them
/// in is `sa_session_execution_order`.
///
/// Ownership: borrows `session`; nothing is allocated, `*count` is written.
///
/// # Safety
/// `session` is NULL or a live handle; `count` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_node_count(session: *mut sa_session, count: *mut usize) -> sa_status {
    ffi_boundary(|| unsafe { with_session(session, |s| put(count, "count", || Ok(s.session().order().len()))) })
}

/// Stores in `*index` the node index (GE's `GetAllNodes` order) of node `node` of graph `graph_name` (NULL,
/// `""`: the root). `SA_UNKNOWN_NODE` names a missing node or graph.
///
/// Ownership: borrows `session` and reads the strings only during the call; `*index` is written.
///
/// # Safety
/// `session` is NULL or a live handle; the strings are NULL or NUL-terminated; `index` is NULL
/// or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_node_index(
    session: *mut sa_session,
    graph_name: *const c_char,
    node: *const c_char,
    index: *mut usize,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_session(session, |s| {
            put(index, "index", || {
                let n = s.handle.find(opt_str(graph_name, "graph_name")?, arg_str(node, "node")?, SA_UNKNOWN_NODE)?;
                Ok(s.session().index_of(n))
            })
        })
    })
}

/// Stores in `*name` and `*graph_name` the name of the node at `index` and of its graph (`""`
/// for the root). Owned by the session (valid until its free). Either output may be NULL.
///
/// Ownership: borrows `session`; the strings in `*name` and `*graph_name` are owned by the session
/// and valid until `sa_session_free`; the caller does not free them.
///
/// # Safety
/// `session` is NULL or a live handle; `name` / `graph_name` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_node_name(
    session: *mut sa_session,
    index: usize,
    name: *mut *const c_char,
    graph_name: *mut *const c_char,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_session(session, |s| {
            let n = s.index(index)?;
            write_opt(name, s.handle.name(n).as_ptr());
            write_opt(graph_name, s.handle.graph_label(n).as_ptr());
            Ok(())
        })
    })
}

/// Stores the logical and physical stream of the node at `index` (-1: none; the physical one
/// equals the logical one before the split). `SA_STAGE` before logical assignment.
///
/// Ownership: borrows `session`; nothing is allocated, the outputs are written.
///
/// # Safety
/// `session` is NULL or a live handle; the outputs are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_node_streams(
    session: *mut sa_session,
    index: usize,
    logical_stream: *mut i64,
    stream: *mut i64,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_session(session, |s| {
            let lo = out_ptr(logical_stream, "logical_stream")?;
            let ph = out_ptr(stream, "stream")?;
            let n = s.index(index)?;
            let a = s.handle.allocation()?;
            write_out(lo, sv(a.logical_stream()[n]));
            write_out(ph, sv(a.stream()[n]));
            Ok(())
        })
    })
}

/// Stores the attached streams of the node at `index`: `*physical` and `*logical` (same
/// length `*count`; NULL when 0). Owned by the session until its next stage call.
///
/// Ownership: borrows `session`; the arrays are owned by the session and valid until its next stage
/// call (or `sa_session_free`); the caller does not free them.
///
/// # Safety
/// `session` is NULL or a live handle; the outputs are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_node_attached(
    session: *mut sa_session,
    index: usize,
    physical: *mut *const i64,
    logical: *mut *const i64,
    count: *mut usize,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_session(session, |s| {
            let (ph, lo, c) = (out_ptr(physical, "physical")?, out_ptr(logical, "logical")?, out_ptr(count, "count")?);
            s.index(index)?;
            let v = &s.view()?.nodes[index];
            write_array(ph, c, &v.attached);
            write_array(lo, c, &v.attached_logical);
            Ok(())
        })
    })
}

/// Stores the sync ids the node at `index` records after it (`*send`, `*send_count`) and waits
/// for before it (`*recv`, `*recv_count`): events, or notifies in notify mode. Arrays are NULL
/// when empty and owned by the session until its next stage call.
///
/// Ownership: borrows `session`; the arrays are owned by the session and valid until its next stage
/// call (or `sa_session_free`); the caller does not free them.
///
/// # Safety
/// `session` is NULL or a live handle; the outputs are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_node_syncs(
    session: *mut sa_session,
    index: usize,
    send: *mut *const u32,
    send_count: *mut usize,
    recv: *mut *const u32,
    recv_count: *mut usize,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_session(session, |s| {
            write_send_recv(s, index, (send, send_count), (recv, recv_count), |v, n| (v.sends(n), v.recvs(n)))
        })
    })
}

/// As `sa_session_node_syncs`, for the events the split adds in notify mode (`events.kind` =
/// notify); empty in event mode, where the split's events are among the node's syncs.
///
/// Ownership: borrows `session`; the arrays are owned by the session and valid until its next stage
/// call (or `sa_session_free`); the caller does not free them.
///
/// # Safety
/// `session` is NULL or a live handle; the outputs are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_node_split_events(
    session: *mut sa_session,
    index: usize,
    send: *mut *const u32,
    send_count: *mut usize,
    recv: *mut *const u32,
    recv_count: *mut usize,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_session(session, |s| {
            write_send_recv(s, index, (send, send_count), (recv, recv_count), |v, n| {
                (v.split_sends(n), v.split_recvs(n))
            })
        })
    })
}

/// Stores the streams the node at `index` activates (`active_stream_list`; NULL, 0 when none).
/// Owned by the session until its next stage call.
///
/// Ownership: borrows `session`; the arrays are owned by the session and valid until its next stage
/// call (or `sa_session_free`); the caller does not free them.
///
/// # Safety
/// `session` is NULL or a live handle; the outputs are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_node_active_streams(
    session: *mut sa_session,
    index: usize,
    streams: *mut *const i64,
    count: *mut usize,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_session(session, |s| {
            let (a, c) = (out_ptr(streams, "streams")?, out_ptr(count, "count")?);
            s.index(index)?;
            let v = &s.view()?.nodes[index];
            write_array(a, c, &v.active);
            Ok(())
        })
    })
}

/// Stores in `*json` a new string with GE's attributes of the node at `index` as a JSON object
/// (`_logic_stream_id`, `stream_id`, `_logic_attached_stream_ids`, `_attached_stream_ids`,
/// `_send_event_ids`, `_recv_event_ids`, `active_stream_list`, ...). Free with
/// `sa_string_free`.
///
/// Ownership: borrows `session`; the caller owns `*json` and frees it with `sa_string_free`; it
/// outlives the session.
///
/// # Safety
/// `session` is NULL or a live handle; `json` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_node_ge_attrs(
    session: *mut sa_session,
    index: usize,
    json: *mut *mut c_char,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_session(session, |s| {
            let out = out_ptr(json, "json")?;
            let n = s.index(index)?;
            let v = s.session().node_ge_attrs(n)?;
            write_out(out, lossy_cstring(&v.to_string()).into_raw());
            Ok(())
        })
    })
}

/// Stores in `*json` a new string with the model attributes GE writes, as a JSON object:
/// `stream_num`, `event_num`, `notify_num`, `_attached_stream_num`, `huge_stream_list`,
/// `_split_logic_stream_2_origin_logic_stream` (`"phys:logic,..."`). Free with
/// `sa_string_free`.
///
/// Ownership: borrows `session`; the caller owns `*json` and frees it with `sa_string_free`; it
/// outlives the session.
///
/// # Safety
/// `session` is NULL or a live handle; `json` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_model_ge_attrs(session: *mut sa_session, json: *mut *mut c_char) -> sa_status {
    ffi_boundary(|| unsafe {
        with_session(session, |s| {
            put(json, "json", || {
                let v = s.session().model_ge_attrs()?;
                Ok(lossy_cstring(&v.to_string()).into_raw())
            })
        })
    })
}

/// Stores the model counts after the current stage: logical (main) streams, `stream_num`
/// (physical, attached and inserted streams included), attached streams, `event_num`,
/// `notify_num`. Any output may be NULL.
///
/// Ownership: borrows `session`; nothing is allocated, the outputs are written.
///
/// # Safety
/// `session` is NULL or a live handle; the outputs are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_counts(
    session: *mut sa_session,
    logical_stream_num: *mut u32,
    stream_num: *mut u32,
    attached_stream_num: *mut u32,
    event_num: *mut u32,
    notify_num: *mut u32,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_session(session, |s| {
            let c = s.session().counts()?;
            for (p, v) in [
                (logical_stream_num, c.logical_stream_num),
                (stream_num, c.stream_num),
                (attached_stream_num, c.attached_stream_num),
                (event_num, c.event_num),
                (notify_num, c.notify_num),
            ] {
                write_opt(p, v);
            }
            Ok(())
        })
    })
}

/// Stores the huge streams (`huge_stream_list`) and the split map (index = physical stream,
/// value = its logical stream). Arrays are NULL when empty and owned by the session until its
/// next stage call.
///
/// Ownership: borrows `session`; the arrays are owned by the session and valid until its next stage
/// call (or `sa_session_free`); the caller does not free them.
///
/// # Safety
/// `session` is NULL or a live handle; the outputs are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_streams(
    session: *mut sa_session,
    huge: *mut *const i64,
    huge_count: *mut usize,
    split_to_logic: *mut *const i64,
    physical_count: *mut usize,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_session(session, |s| {
            let (a, b) = (out_ptr(huge, "huge")?, out_ptr(huge_count, "huge_count")?);
            let (c, d) = (out_ptr(split_to_logic, "split_to_logic")?, out_ptr(physical_count, "physical_count")?);
            let v = s.view()?;
            write_array(a, b, &v.huge);
            write_array(c, d, &v.split_to_logic);
            Ok(())
        })
    })
}

/// Stores in `*count` the number of nodes the host inserts into its graph: StreamActive nodes
/// from the split on, plus Send/Recv (SendNotify/RecvNotify) once
/// `sa_session_generate_send_recv` ran.
///
/// Ownership: borrows `session`; nothing is allocated, `*count` is written.
///
/// # Safety
/// `session` is NULL or a live handle; `count` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_inserted_count(session: *mut sa_session, count: *mut usize) -> sa_status {
    ffi_boundary(|| unsafe {
        with_session(session, |s| {
            let out = out_ptr(count, "count")?;
            let n = s.view()?.inserted.len();
            write_out(out, n);
            Ok(())
        })
    })
}

/// Describes inserted node `i`: its `name` and `op_type` (owned by the session until its next
/// stage call), the node index of the node it is placed next to (`anchor_index`),
/// `before` (1: right before the anchor, as a Recv; 0: right after it, as a Send), its physical
/// and logical stream, and `sync_id` (`event_id` / `notify_id`; -1 for StreamActive). Any
/// output may be NULL. `SA_NOT_FOUND` when `i` is out of range.
///
/// Ownership: borrows `session`; the strings in `*name` and `*op_type` are owned by the session and
/// valid until its next stage call (or `sa_session_free`); the other outputs are written.
///
/// # Safety
/// `session` is NULL or a live handle; the outputs are NULL or writable.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn sa_session_inserted_node(
    session: *mut sa_session,
    i: usize,
    name: *mut *const c_char,
    op_type: *mut *const c_char,
    anchor_index: *mut usize,
    before: *mut i32,
    stream: *mut i64,
    logical_stream: *mut i64,
    sync_id: *mut i64,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_session(session, |s| {
            let view = s.view()?;
            let Some(anchor) = view.inserted.get(i).map(|v| v.anchor) else {
                return Err(ApiError::new(
                    SA_NOT_FOUND,
                    format!("inserted node {i} is out of range ({} inserted at this stage)", view.inserted.len()),
                ));
            };
            let anchor = s.session().index_of(anchor);
            let v = &s.view.as_ref().expect("built above").inserted[i];
            write_opt(name, v.name.as_ptr());
            write_opt(op_type, v.op_type.as_ptr());
            write_opt(anchor_index, anchor);
            write_opt(before, i32::from(v.before));
            write_opt(stream, v.stream);
            write_opt(logical_stream, v.logical_stream);
            write_opt(sync_id, v.sync_id);
            Ok(())
        })
    })
}

/// Stores in `*json` a new string with the allocation JSON v1 document of the current stage
/// (inserted nodes listed as `sa_session_inserted_*` lists them). Free with `sa_string_free`.
///
/// Ownership: borrows `session`; the caller owns `*json` and frees it with `sa_string_free`; it
/// outlives the session.
///
/// # Safety
/// `session` is NULL or a live handle; `json` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_allocation_json(session: *mut sa_session, json: *mut *mut c_char) -> sa_status {
    ffi_boundary(|| unsafe {
        with_session(session, |s| {
            let out = out_ptr(json, "json")?;
            let mut text = serde_json::to_string_pretty(&s.session().allocation_json()?).expect("JSON serialises");
            text.push('\n');
            write_out(out, lossy_cstring(&text).into_raw());
            Ok(())
        })
    })
}

/// Runs the library's independent checker (the rules of allocation-json.md) on the session's
/// allocation JSON: `*violations` receives their number, `*message` (if not NULL) a new string
/// with one line per violation (`"rule N: ..."`, `""` when none; free with `sa_string_free`).
/// Returns `SA_OK` whether or not rules are broken; `SA_STAGE` before logical assignment.
///
/// Ownership: borrows `session`; the caller owns `*message` and frees it with `sa_string_free`;
/// `*violations` is written.
///
/// # Safety
/// `session` is NULL or a live handle; `violations` is NULL or writable; `message` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_verify(
    session: *mut sa_session,
    violations: *mut usize,
    message: *mut *mut c_char,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_session(session, |s| {
            let out = out_ptr(violations, "violations")?;
            let report = s.session().verify()?;
            write_out(out, report.violations.len());
            if !message.is_null() {
                let text: Vec<String> =
                    report.violations.iter().map(|v| format!("rule {}: {}", v.rule, v.message)).collect();
                write_out(message, lossy_cstring(&text.join("\n")).into_raw());
            }
            Ok(())
        })
    })
}

/// The message of the most recent failed call on `session`, `""` if none; NULL if `session`
/// is NULL. Valid until the next call on the handle.
///
/// Ownership: borrows `session`; the returned string is owned by `session` and valid until its next
/// call or its free; the caller does not free it.
///
/// # Safety
/// `session` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_last_error(session: *const sa_session) -> *const c_char {
    ffi_boundary(|| {
        // SAFETY: live handle by the caller's contract.
        unsafe { session.as_ref() }.map_or(std::ptr::null(), |s| s.last_error.message_ptr())
    })
}

/// The code string (`"SA2002"`, ...) of the most recent failed call on `session`, `""` if none;
/// NULL if `session` is NULL. Static storage.
///
/// Ownership: borrows `session`; the returned string is static: never freed.
///
/// # Safety
/// `session` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_last_error_code(session: *const sa_session) -> *const c_char {
    ffi_boundary(|| {
        // SAFETY: live handle by the caller's contract.
        unsafe { session.as_ref() }.map_or(std::ptr::null(), |s| s.last_error.code_ptr())
    })
}

/// Takes the stream allocation summary of the session's current stage into a new snapshot in
/// `*out`. `SA_STAGE` before logical assignment.
///
/// Ownership: the caller owns `*out` and frees it with `sa_summary_free`; it stays valid after
/// further stage calls and after `sa_session_free`.
///
/// # Safety
/// `session` is NULL or a live handle; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_get_summary(session: *mut sa_session, out: *mut *mut sa_summary) -> sa_status {
    ffi_boundary(|| unsafe { with_session(session, |s| super::summary::take(&s.handle, false, out)) })
}

/// Takes the summary of a finished allocation (GE's `Session::GetCompiledGraphSummary`) into a
/// new snapshot in `*out`, with its memory plan when the graph gives `out_bytes`, so
/// `sa_summary_ge_method` answers every method of GE's `CompiledGraphSummary`. `SA_STAGE` until
/// `sa_session_generate_send_recv` has run.
///
/// Ownership: the caller owns `*out` and frees it with `sa_summary_free`; it stays valid after
/// `sa_session_free`.
///
/// # Safety
/// `session` is NULL or a live handle; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_get_compiled_summary(
    session: *mut sa_session,
    out: *mut *mut sa_summary,
) -> sa_status {
    ffi_boundary(|| unsafe { with_session(session, |s| super::summary::take(&s.handle, true, out)) })
}

/// Takes the finished allocation of the session into a new read-only `sa_allocation` in
/// `*out`: the same node indexes, names, streams, memory plan and summary, and the same
/// allocation JSON as `sa_session_allocation_json`. `SA_STAGE` until
/// `sa_session_generate_send_recv` has run.
///
/// Ownership: the caller owns `*out` and frees it with `sa_allocation_free`; it shares the
/// model and the name table with the session and stays valid after `sa_session_free`.
///
/// # Safety
/// `session` is NULL or a live handle; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_get_allocation(
    session: *mut sa_session,
    out: *mut *mut sa_allocation,
) -> sa_status {
    ffi_boundary(|| unsafe {
        with_session(session, |s| {
            let out = out_ptr(out, "out")?;
            let stage = s.session().stage();
            if stage != SessionStage::Generated {
                return Err(ApiError::new(
                    SA_STAGE,
                    format!(
                        "model '{}': the allocation is not finished (stage '{}'); sa_session_get_allocation needs \
                         sa_session_generate_send_recv to have run",
                        s.session().model().name,
                        stage.as_str()
                    ),
                ));
            }
            let a = sa_allocation::new(s.handle.clone())?;
            write_out(out, Box::into_raw(Box::new(a)));
            Ok(())
        })
    })
}

/// Stores in `*out` the arena bytes of the memory plan of the session's current allocation
/// (as `sa_allocation_memory_peak`). `SA_NOT_FOUND` when the graph gives no `out_bytes`;
/// `SA_STAGE` before logical assignment. The plan is kept until the next stage call.
///
/// Ownership: borrows `session`; `*out` is the caller's.
///
/// # Safety
/// `session` is NULL or a live handle; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_memory_peak(session: *mut sa_session, out: *mut u64) -> sa_status {
    ffi_boundary(|| unsafe { with_session(session, |s| handle::memory_peak(&s.handle, out)) })
}

/// Stores in `*out` the number of tensors of the memory plan of the current allocation (0
/// when the graph gives no `out_bytes`), as `sa_allocation_tensor_count`. `SA_STAGE` before
/// logical assignment.
///
/// Ownership: borrows `session`; `*out` is the caller's.
///
/// # Safety
/// `session` is NULL or a live handle; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_tensor_count(session: *mut sa_session, out: *mut usize) -> sa_status {
    ffi_boundary(|| unsafe { with_session(session, |s| handle::tensor_count(&s.handle, out)) })
}

/// Stores in `*tensor` the tensor at `index` of the memory plan of the current allocation, as
/// `sa_allocation_tensor_at`. `SA_NOT_FOUND` if `index` is out of range; `SA_STAGE` before
/// logical assignment.
///
/// Ownership: the struct is the caller's; its strings are owned by the session and valid
/// until `sa_session_free`.
///
/// # Safety
/// `session` is NULL or a live handle; `tensor` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_tensor_at(
    session: *mut sa_session,
    index: usize,
    tensor: *mut sa_tensor,
) -> sa_status {
    ffi_boundary(|| unsafe { with_session(session, |s| super::allocation::tensor_at(&s.handle, index, tensor)) })
}

/// Stores the execution order of the current allocation, the order in which each stream runs
/// its nodes: `*count` node indexes in `*indexes` (NULL when 0), as
/// `sa_allocation_execution_order`. `SA_STAGE` before logical assignment.
///
/// Ownership: the array is owned by the session and valid until its next stage call (or
/// `sa_session_free`); the caller does not free it.
///
/// # Safety
/// `session` is NULL or a live handle; the outputs are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn sa_session_execution_order(
    session: *mut sa_session,
    indexes: *mut *const usize,
    count: *mut usize,
) -> sa_status {
    ffi_boundary(|| unsafe { with_session(session, |s| handle::execution_order(&s.handle, indexes, count)) })
}
