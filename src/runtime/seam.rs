//! The device-runtime seam: a versioned C function table (ge-runtime-api.md §5.3 point 4).
//!
//! Resolution order (§5.4), all-or-nothing per scope so symbols of unrelated runtime copies are
//! never mixed:
//! 1. a table the host registered ([`Runtime::register`], `sa_runtime_register`);
//! 2. the Ascend runtime's own symbols in the caller's scope, `dlsym(RTLD_DEFAULT, …)`;
//! 3. an already-loaded Ascend library, `dlopen(name, RTLD_NOW | RTLD_NOLOAD)` on the usual
//!    names (matched by `DT_SONAME`), so a second copy is never loaded;
//! 4. opt-in only: the library named by `SA_RUNTIME_LIB`;
//! 5. otherwise a "no runtime" error.
//!
//! With `SA_RUNTIME=cuda` ([`super::backend::Backend`]), steps 2 to 5 give way to the CUDA
//! driver ([`super::cuda`]); a registered table still comes first. The resolution itself,
//! [`Runtime::current`], is in [`super::backend`], above this table and both backends.
//!
//! Flags cross the seam in RT encoding, as GE passes them. Nothing links a vendor library.

use std::ffi::{CStr, c_char, c_void};
use std::sync::Arc;

use super::consts::*;
use super::error::{RtError, RtErrorKind, RtResult};

/// Version of [`RuntimeOps`]; bumped only when entries are appended. Version 2 appended the
/// memory and event-completion entries (`mem_malloc` …); version-1 tables are still accepted,
/// with those entries absent.
pub const RUNTIME_OPS_ABI_VERSION: u32 = 2;

/// `struct_size` of a version-1 table: everything before the first version-2 entry.
pub const RUNTIME_OPS_V1_SIZE: u32 = std::mem::offset_of!(RuntimeOps, mem_malloc) as u32;

type Ptr = *mut c_void;

/// The seam's C function table (`sa_runtime_ops`). Every entry returns the runtime's own error
/// code (0 = success); `user` is passed back unchanged. Unused query entries may be null.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct RuntimeOps {
    /// `sizeof(sa_runtime_ops)` as the host compiled it; at least this version's size.
    pub struct_size: u32,
    pub abi_version: u32,
    pub user: Ptr,
    /// `rtStreamCreateWithFlags(stream, priority, rt_flags)`.
    pub stream_create: Option<unsafe extern "C" fn(Ptr, *mut Ptr, i32, u32) -> i32>,
    /// `aclrtDestroyStream`, or `aclrtDestroyStreamForce` when `force` is non-zero.
    pub stream_destroy: Option<unsafe extern "C" fn(Ptr, Ptr, i32) -> i32>,
    pub stream_get_id: Option<unsafe extern "C" fn(Ptr, Ptr, *mut i32) -> i32>,
    /// `aclrtCreateEventExWithFlag(event, acl_flag)`.
    pub event_create: Option<unsafe extern "C" fn(Ptr, *mut Ptr, u32) -> i32>,
    pub event_destroy: Option<unsafe extern "C" fn(Ptr, Ptr) -> i32>,
    /// `(event, stream)`.
    pub event_record: Option<unsafe extern "C" fn(Ptr, Ptr, Ptr) -> i32>,
    /// `(event, stream)`.
    pub event_reset: Option<unsafe extern "C" fn(Ptr, Ptr, Ptr) -> i32>,
    /// `(stream, event)`.
    pub stream_wait_event: Option<unsafe extern "C" fn(Ptr, Ptr, Ptr) -> i32>,
    /// `(notify, device_id)`.
    pub notify_create: Option<unsafe extern "C" fn(Ptr, *mut Ptr, i32) -> i32>,
    pub notify_destroy: Option<unsafe extern "C" fn(Ptr, Ptr) -> i32>,
    /// `(notify, stream)`.
    pub notify_record: Option<unsafe extern "C" fn(Ptr, Ptr, Ptr) -> i32>,
    /// `(notify, stream, timeout_ms)`: wait and reset.
    pub notify_wait: Option<unsafe extern "C" fn(Ptr, Ptr, Ptr, u32) -> i32>,
    /// `rtGetRtCapability(feature, info, value)`.
    pub get_rt_capability: Option<unsafe extern "C" fn(Ptr, i32, i32, *mut i64) -> i32>,
    /// `rtGetMaxStreamAndTask(stream_type, max_streams, max_tasks)`.
    pub max_stream_and_task: Option<unsafe extern "C" fn(Ptr, u32, *mut u32, *mut u32) -> i32>,
    pub available_stream_num: Option<unsafe extern "C" fn(Ptr, *mut u32) -> i32>,
    pub get_device: Option<unsafe extern "C" fn(Ptr, *mut i32) -> i32>,
    // ---- ABI version 2: device memory and event completion (all optional) ----
    /// `aclrtMalloc(dev_ptr, size, policy)`.
    pub mem_malloc: Option<unsafe extern "C" fn(Ptr, *mut Ptr, usize, u32) -> i32>,
    /// `aclrtFree(dev_ptr)`.
    pub mem_free: Option<unsafe extern "C" fn(Ptr, Ptr) -> i32>,
    /// `aclrtQueryEventStatus(event, status)`, normalised: writes 1 when the work before the
    /// event's last record has completed (or it was never recorded), 0 when not yet.
    pub event_query: Option<unsafe extern "C" fn(Ptr, Ptr, *mut i32) -> i32>,
    /// `aclrtSynchronizeEvent(event)`: blocks the host until the event has completed.
    pub event_synchronize: Option<unsafe extern "C" fn(Ptr, Ptr) -> i32>,
    /// `aclrtEventElapsedTime(ms, start, end)`.
    pub event_elapsed_time: Option<unsafe extern "C" fn(Ptr, *mut f32, Ptr, Ptr) -> i32>,
}

impl RuntimeOps {
    /// An empty table of the current version, for hosts filling entries one by one.
    pub fn empty() -> Self {
        RuntimeOps {
            struct_size: std::mem::size_of::<RuntimeOps>() as u32,
            abi_version: RUNTIME_OPS_ABI_VERSION,
            user: std::ptr::null_mut(),
            stream_create: None,
            stream_destroy: None,
            stream_get_id: None,
            event_create: None,
            event_destroy: None,
            event_record: None,
            event_reset: None,
            stream_wait_event: None,
            notify_create: None,
            notify_destroy: None,
            notify_record: None,
            notify_wait: None,
            get_rt_capability: None,
            max_stream_and_task: None,
            available_stream_num: None,
            get_device: None,
            mem_malloc: None,
            mem_free: None,
            event_query: None,
            event_synchronize: None,
            event_elapsed_time: None,
        }
    }
}

/// Where the runtime in use came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum RuntimeSource {
    Registered = 1,
    /// Ascend symbols in the caller's scope (`RTLD_DEFAULT`).
    ProcessScope = 2,
    /// An already-loaded Ascend library (`RTLD_NOLOAD`).
    LoadedLibrary = 3,
    /// `SA_RUNTIME_LIB`.
    ExplicitPath = 4,
    /// The CUDA driver (`SA_RUNTIME=cuda`, or asked for by name).
    Cuda = 5,
}

/// A resolved device runtime. Pools keep the `Arc` they created their handles with, so every
/// handle is destroyed through the table that created it even if the registration changes.
#[derive(Debug)]
pub struct Runtime {
    ops: RuntimeOps,
    source: RuntimeSource,
    /// Names a failed call's code for its error (the CUDA driver's `CUDA_ERROR_…`); `None`:
    /// the code alone.
    code_name: Option<CodeName>,
}

/// Names a runtime's error code, when the runtime knows the name.
pub type CodeName = fn(i32) -> Option<String>;

// SAFETY: the registering host promises its table may be called from any thread (documented in
// the header); the Ascend runtime is thread-safe.
unsafe impl Send for Runtime {}
unsafe impl Sync for Runtime {}

fn missing(entry: &str) -> RtError {
    RtError::new(RtErrorKind::NoRuntime, format!("the device runtime in use has no `{entry}` entry"))
}

// Stream, event and notify handles are opaque runtime tokens: Rust passes them back to the
// runtime and never dereferences them.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
impl Runtime {
    /// Validates a host table: version and size first (a version-1 table needs only the
    /// version-1 size, and its version-2 entries are ignored), then the six lifetime entries
    /// (create/destroy of streams, events and notifies); the other entries are optional.
    pub fn from_ops(ops: &RuntimeOps, source: RuntimeSource) -> RtResult<Arc<Runtime>> {
        Self::from_ops_naming(ops, source, None)
    }

    /// [`Self::from_ops`] for a backend that names its error codes (the CUDA driver).
    pub(super) fn from_ops_naming(
        ops: &RuntimeOps,
        source: RuntimeSource,
        code_name: Option<CodeName>,
    ) -> RtResult<Arc<Runtime>> {
        let need = match ops.abi_version {
            1 => RUNTIME_OPS_V1_SIZE,
            RUNTIME_OPS_ABI_VERSION => std::mem::size_of::<RuntimeOps>() as u32,
            v => {
                return Err(RtError::new(
                    RtErrorKind::Invalid,
                    format!("runtime table abi_version {v} is not 1 or {RUNTIME_OPS_ABI_VERSION}"),
                ));
            }
        };
        if ops.struct_size < need {
            return Err(RtError::new(
                RtErrorKind::Invalid,
                format!(
                    "runtime table struct_size {} is below the {need} bytes of ABI version {}",
                    ops.struct_size, ops.abi_version
                ),
            ));
        }
        let mut ops = *ops;
        if ops.abi_version == 1 {
            ops.mem_malloc = None;
            ops.mem_free = None;
            ops.event_query = None;
            ops.event_synchronize = None;
            ops.event_elapsed_time = None;
        }
        let required = [
            ("stream_create", ops.stream_create.is_some()),
            ("stream_destroy", ops.stream_destroy.is_some()),
            ("event_create", ops.event_create.is_some()),
            ("event_destroy", ops.event_destroy.is_some()),
            ("notify_create", ops.notify_create.is_some()),
            ("notify_destroy", ops.notify_destroy.is_some()),
        ];
        if let Some((name, _)) = required.iter().find(|(_, ok)| !ok) {
            return Err(RtError::new(RtErrorKind::Invalid, format!("runtime table entry `{name}` is null")));
        }
        Ok(Arc::new(Runtime { ops, source, code_name }))
    }

    /// A failed call's error; CUDA codes are named (`CUDA_ERROR_OUT_OF_MEMORY (2)`).
    fn check(&self, call: &str, code: i32) -> RtResult<()> {
        if code == 0 {
            return Ok(());
        }
        let mut e = RtError::device(call, code);
        if let Some(name) = self.code_name.and_then(|name| name(code)) {
            e.message = format!("{call} failed with {name}");
        }
        Err(e)
    }

    pub fn source(&self) -> RuntimeSource {
        self.source
    }

    /// A copy of the table in use (a version-1 table reads with its version-2 entries NULL).
    pub fn ops(&self) -> RuntimeOps {
        self.ops
    }

    pub fn stream_create(&self, priority: i32, rt_flags: u32) -> RtResult<Ptr> {
        let f = self.ops.stream_create.ok_or_else(|| missing("stream_create"))?;
        let mut s: Ptr = std::ptr::null_mut();
        // SAFETY: the table entry follows the documented signature; `s` is a valid out pointer.
        self.check("stream create", unsafe { f(self.ops.user, &mut s, priority, rt_flags) })?;
        if s.is_null() {
            return Err(RtError::new(RtErrorKind::Device, "stream create returned success and a null stream"));
        }
        Ok(s)
    }

    pub fn stream_destroy(&self, stream: Ptr, force: bool) -> RtResult<()> {
        let f = self.ops.stream_destroy.ok_or_else(|| missing("stream_destroy"))?;
        // SAFETY: as above; the handle came from this table.
        self.check(if force { "stream force destroy" } else { "stream destroy" }, unsafe {
            f(self.ops.user, stream, force as i32)
        })
    }

    pub fn stream_get_id(&self, stream: Ptr) -> RtResult<i32> {
        let f = self.ops.stream_get_id.ok_or_else(|| missing("stream_get_id"))?;
        let mut id = -1;
        // SAFETY: as above.
        self.check("stream get id", unsafe { f(self.ops.user, stream, &mut id) })?;
        Ok(id)
    }

    pub fn event_create(&self, acl_flag: u32) -> RtResult<Ptr> {
        let f = self.ops.event_create.ok_or_else(|| missing("event_create"))?;
        let mut e: Ptr = std::ptr::null_mut();
        // SAFETY: as above.
        self.check("event create", unsafe { f(self.ops.user, &mut e, acl_flag) })?;
        if e.is_null() {
            return Err(RtError::new(RtErrorKind::Device, "event create returned success and a null event"));
        }
        Ok(e)
    }

    pub fn event_destroy(&self, event: Ptr) -> RtResult<()> {
        let f = self.ops.event_destroy.ok_or_else(|| missing("event_destroy"))?;
        // SAFETY: as above.
        self.check("event destroy", unsafe { f(self.ops.user, event) })
    }

    pub fn event_record(&self, event: Ptr, stream: Ptr) -> RtResult<()> {
        let f = self.ops.event_record.ok_or_else(|| missing("event_record"))?;
        // SAFETY: as above.
        self.check("event record", unsafe { f(self.ops.user, event, stream) })
    }

    pub fn event_reset(&self, event: Ptr, stream: Ptr) -> RtResult<()> {
        let f = self.ops.event_reset.ok_or_else(|| missing("event_reset"))?;
        // SAFETY: as above.
        self.check("event reset", unsafe { f(self.ops.user, event, stream) })
    }

    pub fn stream_wait_event(&self, stream: Ptr, event: Ptr) -> RtResult<()> {
        let f = self.ops.stream_wait_event.ok_or_else(|| missing("stream_wait_event"))?;
        // SAFETY: as above.
        self.check("stream wait event", unsafe { f(self.ops.user, stream, event) })
    }

    pub fn notify_create(&self, device_id: i32) -> RtResult<Ptr> {
        let f = self.ops.notify_create.ok_or_else(|| missing("notify_create"))?;
        let mut n: Ptr = std::ptr::null_mut();
        // SAFETY: as above.
        self.check("notify create", unsafe { f(self.ops.user, &mut n, device_id) })?;
        if n.is_null() {
            return Err(RtError::new(RtErrorKind::Device, "notify create returned success and a null notify"));
        }
        Ok(n)
    }

    pub fn notify_destroy(&self, notify: Ptr) -> RtResult<()> {
        let f = self.ops.notify_destroy.ok_or_else(|| missing("notify_destroy"))?;
        // SAFETY: as above.
        self.check("notify destroy", unsafe { f(self.ops.user, notify) })
    }

    pub fn notify_record(&self, notify: Ptr, stream: Ptr) -> RtResult<()> {
        let f = self.ops.notify_record.ok_or_else(|| missing("notify_record"))?;
        // SAFETY: as above.
        self.check("notify record", unsafe { f(self.ops.user, notify, stream) })
    }

    pub fn notify_wait(&self, notify: Ptr, stream: Ptr, timeout_ms: u32) -> RtResult<()> {
        let f = self.ops.notify_wait.ok_or_else(|| missing("notify_wait"))?;
        // SAFETY: as above.
        self.check("notify wait", unsafe { f(self.ops.user, notify, stream, timeout_ms) })
    }

    /// `aclrtMalloc` with `ACL_MEM_MALLOC_HUGE_FIRST`: `size` bytes of device memory.
    pub fn mem_malloc(&self, size: usize) -> RtResult<Ptr> {
        let f = self.ops.mem_malloc.ok_or_else(|| missing("mem_malloc"))?;
        let mut p: Ptr = std::ptr::null_mut();
        // SAFETY: as above; `p` is a valid out pointer.
        self.check("aclrtMalloc", unsafe { f(self.ops.user, &mut p, size, ACL_MEM_MALLOC_HUGE_FIRST) })?;
        if p.is_null() {
            return Err(RtError::new(RtErrorKind::Device, "aclrtMalloc returned success and a null pointer"));
        }
        Ok(p)
    }

    pub fn mem_free(&self, ptr: Ptr) -> RtResult<()> {
        let f = self.ops.mem_free.ok_or_else(|| missing("mem_free"))?;
        // SAFETY: as above; the pointer came from `mem_malloc` of this table.
        self.check("aclrtFree", unsafe { f(self.ops.user, ptr) })
    }

    /// Whether the work before the event's last record has completed (a never-recorded event
    /// counts as completed, as in ACL).
    pub fn event_query(&self, event: Ptr) -> RtResult<bool> {
        let f = self.ops.event_query.ok_or_else(|| missing("event_query"))?;
        let mut done = 0;
        // SAFETY: as above.
        self.check("aclrtQueryEventStatus", unsafe { f(self.ops.user, event, &mut done) })?;
        Ok(done != 0)
    }

    pub fn event_synchronize(&self, event: Ptr) -> RtResult<()> {
        let f = self.ops.event_synchronize.ok_or_else(|| missing("event_synchronize"))?;
        // SAFETY: as above.
        self.check("aclrtSynchronizeEvent", unsafe { f(self.ops.user, event) })
    }

    /// Milliseconds from `start`'s completion to `end`'s.
    pub fn event_elapsed_time(&self, start: Ptr, end: Ptr) -> RtResult<f32> {
        let f = self.ops.event_elapsed_time.ok_or_else(|| missing("event_elapsed_time"))?;
        let mut ms = 0f32;
        // SAFETY: as above; `ms` is a valid out pointer.
        self.check("aclrtEventElapsedTime", unsafe { f(self.ops.user, &mut ms, start, end) })?;
        Ok(ms)
    }

    pub fn rt_capability(&self, feature: i32, info: i32) -> RtResult<i64> {
        let f = self.ops.get_rt_capability.ok_or_else(|| missing("get_rt_capability"))?;
        let mut v = 0i64;
        // SAFETY: as above.
        self.check("rtGetRtCapability", unsafe { f(self.ops.user, feature, info, &mut v) })?;
        Ok(v)
    }

    /// `SA_RT_UNLIMITED_DEPTH=0|1` overrides the device answer (ge-runtime-api.md §7).
    pub fn unlimited_depth(&self) -> RtResult<bool> {
        if let Some(v) = env_u32("SA_RT_UNLIMITED_DEPTH") {
            return Ok(v != 0);
        }
        Ok(self.rt_capability(FEATURE_TYPE_PERSISTENT_STREAM_UNLIMITED_DEPTH, 0)? == RT_CAPABILITY_SUPPORT)
    }

    /// `(max streams, max tasks per stream)`; `SA_RT_MAX_TASKS_PER_STREAM` overrides the tasks.
    pub fn max_stream_and_task(&self, stream_type: u32) -> RtResult<(u32, u32)> {
        let env_tasks = env_u32("SA_RT_MAX_TASKS_PER_STREAM");
        let queried = match self.ops.max_stream_and_task {
            Some(f) => {
                let (mut s, mut t) = (0u32, 0u32);
                // SAFETY: as above.
                self.check("rtGetMaxStreamAndTask", unsafe { f(self.ops.user, stream_type, &mut s, &mut t) })
                    .map(|_| (s, t))
            }
            None => Err(missing("max_stream_and_task")),
        };
        match (queried, env_tasks) {
            (Ok((s, _)), Some(t)) => Ok((s, t)),
            (Ok(st), None) => Ok(st),
            (Err(_), Some(t)) => Ok((u32::MAX, t)),
            (Err(e), None) => Err(e),
        }
    }

    pub fn available_stream_num(&self) -> RtResult<u32> {
        let f = self.ops.available_stream_num.ok_or_else(|| missing("available_stream_num"))?;
        let mut n = 0u32;
        // SAFETY: as above.
        self.check("aclrtGetStreamAvailableNum", unsafe { f(self.ops.user, &mut n) })?;
        Ok(n)
    }

    pub fn get_device(&self) -> RtResult<i32> {
        let f = self.ops.get_device.ok_or_else(|| missing("get_device"))?;
        let mut d = 0i32;
        // SAFETY: as above.
        self.check("aclrtGetDevice", unsafe { f(self.ops.user, &mut d) })?;
        Ok(d)
    }
}

fn env_u32(name: &str) -> Option<u32> {
    std::env::var(name).ok()?.trim().parse().ok()
}

/// The Ascend backend: symbol lookup and trampolines from the table shape to the real calls.
pub(super) mod ascend {
    use super::*;

    type RtStreamCreateWithFlags = unsafe extern "C" fn(*mut Ptr, i32, u32) -> i32;
    type AclCreateStreamWithConfig = unsafe extern "C" fn(*mut Ptr, u32, u32) -> i32;
    type Fn1 = unsafe extern "C" fn(Ptr) -> i32;
    type Fn2 = unsafe extern "C" fn(Ptr, Ptr) -> i32;
    type GetId = unsafe extern "C" fn(Ptr, *mut i32) -> i32;
    type CreateU32 = unsafe extern "C" fn(*mut Ptr, u32) -> i32;
    type CreateNotify = unsafe extern "C" fn(*mut Ptr, u64) -> i32;
    type NotifyWait = unsafe extern "C" fn(Ptr, Ptr, u32) -> i32;
    type Capability = unsafe extern "C" fn(i32, i32, *mut i64) -> i32;
    type MaxStreamTask = unsafe extern "C" fn(u32, *mut u32, *mut u32) -> i32;
    type OutU32 = unsafe extern "C" fn(*mut u32) -> i32;
    type OutI32 = unsafe extern "C" fn(*mut i32) -> i32;
    type Malloc = unsafe extern "C" fn(*mut Ptr, usize, u32) -> i32;
    type QueryStatus = unsafe extern "C" fn(Ptr, *mut i32) -> i32;
    type Elapsed = unsafe extern "C" fn(*mut f32, Ptr, Ptr) -> i32;

    /// Library names tried with `RTLD_NOLOAD`, in order.
    pub(super) const LIBRARIES: [&CStr; 3] = [c"libacl_rt.so", c"libruntime.so", c"libascendcl.so"];

    #[derive(Default)]
    struct Syms {
        rt_stream_create: Option<RtStreamCreateWithFlags>,
        acl_stream_create: Option<AclCreateStreamWithConfig>,
        stream_destroy: Option<Fn1>,
        stream_destroy_force: Option<Fn1>,
        stream_get_id: Option<GetId>,
        event_create_ex: Option<CreateU32>,
        event_create: Option<CreateU32>,
        event_destroy: Option<Fn1>,
        event_record: Option<Fn2>,
        event_reset: Option<Fn2>,
        stream_wait_event: Option<Fn2>,
        notify_create: Option<CreateNotify>,
        notify_destroy: Option<Fn1>,
        notify_record: Option<Fn2>,
        notify_wait: Option<NotifyWait>,
        capability: Option<Capability>,
        max_stream_task: Option<MaxStreamTask>,
        available: Option<OutU32>,
        get_device: Option<OutI32>,
        malloc: Option<Malloc>,
        free: Option<Fn1>,
        query_status: Option<QueryStatus>,
        query_legacy: Option<QueryStatus>,
        event_sync: Option<Fn1>,
        elapsed: Option<Elapsed>,
    }

    fn lookup<T: Copy>(find: &dyn Fn(&CStr) -> Ptr, name: &CStr) -> Option<T> {
        let p = find(name);
        if p.is_null() {
            return None;
        }
        assert_eq!(std::mem::size_of::<T>(), std::mem::size_of::<Ptr>());
        // SAFETY: `T` is an `extern "C" fn` pointer type of the symbol's documented signature.
        Some(unsafe { std::mem::transmute_copy::<Ptr, T>(&p) })
    }

    impl Syms {
        fn load(find: &dyn Fn(&CStr) -> Ptr) -> Syms {
            Syms {
                rt_stream_create: lookup(find, c"rtStreamCreateWithFlags"),
                acl_stream_create: lookup(find, c"aclrtCreateStreamWithConfig"),
                stream_destroy: lookup(find, c"aclrtDestroyStream"),
                stream_destroy_force: lookup(find, c"aclrtDestroyStreamForce"),
                stream_get_id: lookup(find, c"aclrtStreamGetId"),
                event_create_ex: lookup(find, c"aclrtCreateEventExWithFlag"),
                event_create: lookup(find, c"aclrtCreateEventWithFlag"),
                event_destroy: lookup(find, c"aclrtDestroyEvent"),
                event_record: lookup(find, c"aclrtRecordEvent"),
                event_reset: lookup(find, c"aclrtResetEvent"),
                stream_wait_event: lookup(find, c"aclrtStreamWaitEvent"),
                notify_create: lookup(find, c"aclrtCreateNotify"),
                notify_destroy: lookup(find, c"aclrtDestroyNotify"),
                notify_record: lookup(find, c"aclrtRecordNotify"),
                notify_wait: lookup(find, c"aclrtWaitAndResetNotify"),
                capability: lookup(find, c"rtGetRtCapability"),
                max_stream_task: lookup(find, c"rtGetMaxStreamAndTask"),
                available: lookup(find, c"aclrtGetStreamAvailableNum"),
                get_device: lookup(find, c"aclrtGetDevice"),
                malloc: lookup(find, c"aclrtMalloc"),
                free: lookup(find, c"aclrtFree"),
                query_status: lookup(find, c"aclrtQueryEventStatus"),
                query_legacy: lookup(find, c"aclrtQueryEvent"),
                event_sync: lookup(find, c"aclrtSynchronizeEvent"),
                elapsed: lookup(find, c"aclrtEventElapsedTime"),
            }
        }

        /// A scope counts as a runtime only if it can create and destroy streams.
        fn usable(&self) -> bool {
            (self.rt_stream_create.is_some() || self.acl_stream_create.is_some()) && self.stream_destroy.is_some()
        }
    }

    fn syms(user: Ptr) -> &'static Syms {
        // SAFETY: `user` is the leaked `Syms` this table was built with (see `table`).
        unsafe { &*(user as *const Syms) }
    }

    unsafe extern "C" fn stream_create(user: Ptr, s: *mut Ptr, prio: i32, flags: u32) -> i32 {
        let y = syms(user);
        if let Some(f) = y.rt_stream_create {
            // SAFETY: documented signature of rtStreamCreateWithFlags.
            return unsafe { f(s, prio, flags) };
        }
        // Only six RT bits have an ACL equivalent; refuse the rest rather than drop them.
        let (Some(f), Ok(acl)) = (y.acl_stream_create, rt_to_acl_stream_flags(flags)) else {
            return ACL_ERROR_RT_FEATURE_NOT_SUPPORT;
        };
        if prio < 0 {
            return ACL_ERROR_RT_PARAM_INVALID;
        }
        // SAFETY: documented signature of aclrtCreateStreamWithConfig.
        unsafe { f(s, prio as u32, acl) }
    }
    unsafe extern "C" fn stream_destroy(user: Ptr, s: Ptr, force: i32) -> i32 {
        let y = syms(user);
        let f = if force != 0 { y.stream_destroy_force } else { y.stream_destroy };
        // SAFETY: documented signatures of aclrtDestroyStream[Force].
        f.map_or(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, |f| unsafe { f(s) })
    }
    unsafe extern "C" fn stream_get_id(user: Ptr, s: Ptr, id: *mut i32) -> i32 {
        // SAFETY: documented signature of aclrtStreamGetId.
        syms(user).stream_get_id.map_or(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, |f| unsafe { f(s, id) })
    }
    unsafe extern "C" fn event_create(user: Ptr, e: *mut Ptr, flag: u32) -> i32 {
        let y = syms(user);
        // SAFETY: documented signature of aclrtCreateEvent[Ex]WithFlag.
        y.event_create_ex.or(y.event_create).map_or(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, |f| unsafe { f(e, flag) })
    }
    unsafe extern "C" fn event_destroy(user: Ptr, e: Ptr) -> i32 {
        // SAFETY: documented signature.
        syms(user).event_destroy.map_or(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, |f| unsafe { f(e) })
    }
    unsafe extern "C" fn event_record(user: Ptr, e: Ptr, s: Ptr) -> i32 {
        // SAFETY: aclrtRecordEvent(event, stream).
        syms(user).event_record.map_or(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, |f| unsafe { f(e, s) })
    }
    unsafe extern "C" fn event_reset(user: Ptr, e: Ptr, s: Ptr) -> i32 {
        // SAFETY: aclrtResetEvent(event, stream).
        syms(user).event_reset.map_or(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, |f| unsafe { f(e, s) })
    }
    unsafe extern "C" fn stream_wait_event(user: Ptr, s: Ptr, e: Ptr) -> i32 {
        // SAFETY: aclrtStreamWaitEvent(stream, event).
        syms(user).stream_wait_event.map_or(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, |f| unsafe { f(s, e) })
    }
    unsafe extern "C" fn notify_create(user: Ptr, n: *mut Ptr, _device: i32) -> i32 {
        // SAFETY: aclrtCreateNotify(notify, flag); the device id is implicit in the context.
        syms(user).notify_create.map_or(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, |f| unsafe { f(n, ACL_NOTIFY_DEFAULT) })
    }
    unsafe extern "C" fn notify_destroy(user: Ptr, n: Ptr) -> i32 {
        // SAFETY: documented signature.
        syms(user).notify_destroy.map_or(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, |f| unsafe { f(n) })
    }
    unsafe extern "C" fn notify_record(user: Ptr, n: Ptr, s: Ptr) -> i32 {
        // SAFETY: aclrtRecordNotify(notify, stream).
        syms(user).notify_record.map_or(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, |f| unsafe { f(n, s) })
    }
    unsafe extern "C" fn notify_wait(user: Ptr, n: Ptr, s: Ptr, t: u32) -> i32 {
        // SAFETY: aclrtWaitAndResetNotify(notify, stream, timeout).
        syms(user).notify_wait.map_or(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, |f| unsafe { f(n, s, t) })
    }
    unsafe extern "C" fn capability(user: Ptr, feat: i32, info: i32, v: *mut i64) -> i32 {
        // SAFETY: rtGetRtCapability(feature, info, value).
        syms(user).capability.map_or(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, |f| unsafe { f(feat, info, v) })
    }
    unsafe extern "C" fn max_stream_task(user: Ptr, ty: u32, s: *mut u32, t: *mut u32) -> i32 {
        // SAFETY: rtGetMaxStreamAndTask(type, streams, tasks).
        syms(user).max_stream_task.map_or(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, |f| unsafe { f(ty, s, t) })
    }
    unsafe extern "C" fn available(user: Ptr, n: *mut u32) -> i32 {
        // SAFETY: aclrtGetStreamAvailableNum(count).
        syms(user).available.map_or(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, |f| unsafe { f(n) })
    }
    unsafe extern "C" fn get_device(user: Ptr, d: *mut i32) -> i32 {
        // SAFETY: aclrtGetDevice(device).
        syms(user).get_device.map_or(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, |f| unsafe { f(d) })
    }

    unsafe extern "C" fn mem_malloc(user: Ptr, p: *mut Ptr, size: usize, policy: u32) -> i32 {
        // SAFETY: aclrtMalloc(dev_ptr, size, policy).
        syms(user).malloc.map_or(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, |f| unsafe { f(p, size, policy) })
    }
    unsafe extern "C" fn mem_free(user: Ptr, p: Ptr) -> i32 {
        // SAFETY: aclrtFree(dev_ptr).
        syms(user).free.map_or(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, |f| unsafe { f(p) })
    }
    /// `aclrtQueryEventStatus` answers `ACL_EVENT_RECORDED_STATUS_COMPLETE` (1); the older
    /// `aclrtQueryEvent` answers `ACL_EVENT_STATUS_COMPLETE` (0). Both become 1 = completed.
    unsafe extern "C" fn event_query(user: Ptr, e: Ptr, done: *mut i32) -> i32 {
        let y = syms(user);
        let mut status = -1;
        let (rc, complete) = match (y.query_status, y.query_legacy) {
            // SAFETY: aclrtQueryEventStatus(event, status).
            (Some(f), _) => (unsafe { f(e, &mut status) }, 1),
            // SAFETY: aclrtQueryEvent(event, status).
            (None, Some(f)) => (unsafe { f(e, &mut status) }, 0),
            (None, None) => return ACL_ERROR_RT_FEATURE_NOT_SUPPORT,
        };
        if rc == 0 {
            // SAFETY: the seam passes a writable out pointer.
            unsafe { done.write(i32::from(status == complete)) };
        }
        rc
    }
    unsafe extern "C" fn event_synchronize(user: Ptr, e: Ptr) -> i32 {
        // SAFETY: aclrtSynchronizeEvent(event).
        syms(user).event_sync.map_or(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, |f| unsafe { f(e) })
    }
    unsafe extern "C" fn event_elapsed_time(user: Ptr, ms: *mut f32, a: Ptr, b: Ptr) -> i32 {
        // SAFETY: aclrtEventElapsedTime(ms, start, end).
        syms(user).elapsed.map_or(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, |f| unsafe { f(ms, a, b) })
    }

    fn table(syms: Syms, source: RuntimeSource) -> RtResult<Arc<Runtime>> {
        let mut ops = RuntimeOps::empty();
        ops.stream_create = Some(stream_create);
        ops.stream_destroy = Some(stream_destroy);
        ops.stream_get_id = syms.stream_get_id.is_some().then_some(stream_get_id as _);
        ops.event_create = Some(event_create);
        ops.event_destroy = Some(event_destroy);
        ops.event_record = Some(event_record);
        ops.event_reset = Some(event_reset);
        ops.stream_wait_event = Some(stream_wait_event);
        ops.notify_create = Some(notify_create);
        ops.notify_destroy = Some(notify_destroy);
        ops.notify_record = Some(notify_record);
        ops.notify_wait = Some(notify_wait);
        ops.get_rt_capability = syms.capability.is_some().then_some(capability as _);
        ops.max_stream_and_task = syms.max_stream_task.is_some().then_some(max_stream_task as _);
        ops.available_stream_num = syms.available.is_some().then_some(available as _);
        ops.get_device = syms.get_device.is_some().then_some(get_device as _);
        ops.mem_malloc = syms.malloc.is_some().then_some(mem_malloc as _);
        ops.mem_free = syms.free.is_some().then_some(mem_free as _);
        ops.event_query = (syms.query_status.is_some() || syms.query_legacy.is_some()).then_some(event_query as _);
        ops.event_synchronize = syms.event_sync.is_some().then_some(event_synchronize as _);
        ops.event_elapsed_time = syms.elapsed.is_some().then_some(event_elapsed_time as _);
        // Leaked on purpose: the table lives as long as the process (no teardown at exit).
        ops.user = Box::into_raw(Box::new(syms)) as Ptr;
        Runtime::from_ops(&ops, source)
    }

    pub(in crate::runtime) fn resolve() -> RtResult<Arc<Runtime>> {
        // 2. The caller's scope.
        // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name.
        let global = Syms::load(&|name| unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) });
        if global.usable() {
            return table(global, RuntimeSource::ProcessScope);
        }
        // 3. Already-loaded libraries, one scope made of every match (rt* and aclrt* live in
        //    different libraries of one installation).
        let handles: Vec<Ptr> = LIBRARIES
            .iter()
            // SAFETY: RTLD_NOLOAD never loads anything; it only returns an existing handle.
            .map(|l| unsafe { libc::dlopen(l.as_ptr(), libc::RTLD_NOW | libc::RTLD_NOLOAD) })
            .filter(|h| !h.is_null())
            .collect();
        if !handles.is_empty() {
            let loaded = Syms::load(&|name| {
                // SAFETY: valid handles from dlopen; NUL-terminated name.
                handles
                    .iter()
                    .map(|h| unsafe { libc::dlsym(*h, name.as_ptr()) })
                    .find(|p| !p.is_null())
                    .unwrap_or(std::ptr::null_mut())
            });
            if loaded.usable() {
                // The handles stay open so the library cannot be unloaded under the table.
                return table(loaded, RuntimeSource::LoadedLibrary);
            }
            for h in handles {
                // SAFETY: each handle came from a successful dlopen above.
                unsafe { libc::dlclose(h) };
            }
        }
        // 4. Opt-in explicit path.
        if let Some(path) = std::env::var_os("SA_RUNTIME_LIB") {
            use std::os::unix::ffi::OsStrExt;
            let Ok(c) = std::ffi::CString::new(path.as_bytes()) else {
                return Err(RtError::new(RtErrorKind::Invalid, "SA_RUNTIME_LIB contains a NUL byte"));
            };
            // SAFETY: explicit, user-requested load of a NUL-terminated path.
            let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
            if h.is_null() {
                return Err(RtError::new(
                    RtErrorKind::NoRuntime,
                    format!("SA_RUNTIME_LIB={}: dlopen failed: {}", path.to_string_lossy(), dlerror()),
                ));
            }
            // SAFETY: valid handle; NUL-terminated names.
            let explicit = Syms::load(&|name| unsafe { libc::dlsym(h, name.as_ptr()) });
            if explicit.usable() {
                return table(explicit, RuntimeSource::ExplicitPath);
            }
            return Err(RtError::new(
                RtErrorKind::NoRuntime,
                format!(
                    "SA_RUNTIME_LIB={} exports neither rtStreamCreateWithFlags nor aclrtCreateStreamWithConfig \
                     together with aclrtDestroyStream",
                    path.to_string_lossy()
                ),
            ));
        }
        Err(RtError::new(
            RtErrorKind::NoRuntime,
            "no device runtime: none registered (sa_runtime_register), no rtStreamCreateWithFlags/\
             aclrtCreateStreamWithConfig with aclrtDestroyStream in the process, none of libacl_rt.so, \
             libruntime.so, libascendcl.so loaded, and SA_RUNTIME_LIB unset",
        ))
    }

    fn dlerror() -> String {
        // SAFETY: dlerror returns a thread-local C string or null.
        let p: *const c_char = unsafe { libc::dlerror() };
        if p.is_null() {
            return "unknown error".into();
        }
        // SAFETY: non-null NUL-terminated string from dlerror.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}
