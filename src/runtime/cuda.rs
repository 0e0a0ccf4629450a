//! The CUDA driver API behind the device-runtime seam, found at run time.
//!
//! A CUDA GPU has the primitives the seam asks for (streams, events, record / wait / query /
//! synchronise, elapsed time, device memory), so the pools and the memory pool run on it
//! unchanged. Nothing links CUDA at build time: the driver is `dlopen("libcuda.so.1")`, or the
//! library `SA_CUDA_LIB` names (a fake driver in the tests), and its symbols are looked up by
//! name. Selection is explicit ([`super::backend::Backend`]): `SA_RUNTIME=cuda`, or a caller that
//! asks for [`runtime`] itself, as `stream-alloc replay --backend cuda` does; the Ascend runtime
//! stays the default lookup.
//!
//! Mapping onto the seam:
//! - streams are `cuStreamCreateWithPriority(CU_STREAM_NON_BLOCKING, priority)` (CUDA clamps the
//!   priority to its range); RT flags have no CUDA meaning and are ignored;
//! - events are CUDA events, with timing only when the ACL flag asks for `ACL_EVENT_TIME_LINE`;
//!   CUDA events need no reset, so `event_reset` succeeds without a call;
//! - notifies (which CUDA lacks) are timing-free events: record is `cuEventRecord`, wait is
//!   `cuStreamWaitEvent` (CUDA's wait has no timeout);
//! - memory is `cuMemAlloc` / `cuMemFree` in the device's primary context;
//! - there is no per-stream task limit, so `max_stream_and_task` is absent and the compile side
//!   keeps the limits of its options.
//!
//! Every call first makes the device's primary context current on the calling thread (once per
//! thread). The primary context is retained once and never released: as elsewhere in the
//! runtime half, no device call happens at process exit.
//!
//! Besides the seam, [`Cuda`] offers what a replay needs and the seam does not: the SM count,
//! PTX modules JIT-compiled by the driver (`cuModuleLoadDataEx`), kernel launches and copies.

use std::cell::Cell;
use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};
use std::sync::Arc;

use parking_lot::Mutex;

use super::error::{RtError, RtErrorKind, RtResult};
use super::seam::{Runtime, RuntimeOps, RuntimeSource};

type Ptr = *mut c_void;
/// `CUdeviceptr`.
pub type DevPtr = u64;

pub const CUDA_SUCCESS: i32 = 0;
pub const CUDA_ERROR_INVALID_VALUE: i32 = 1;
pub const CUDA_ERROR_OUT_OF_MEMORY: i32 = 2;
pub const CUDA_ERROR_INVALID_HANDLE: i32 = 400;
pub const CUDA_ERROR_NOT_READY: i32 = 600;
const CU_STREAM_NON_BLOCKING: c_uint = 1;
const CU_EVENT_DEFAULT: c_uint = 0;
const CU_EVENT_DISABLE_TIMING: c_uint = 2;
const CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: c_int = 16;
const CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: c_int = 97;
const CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: c_int = 8;
const CU_JIT_ERROR_LOG_BUFFER: c_int = 5;
const CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES: c_int = 6;
/// `ACL_EVENT_TIME_LINE`: the ACL flag that asks for an event usable in elapsed-time queries.
const ACL_EVENT_TIME_LINE: u32 = 0x08;

/// The library tried when `SA_CUDA_LIB` is unset.
pub const DRIVER_LIBRARY: &str = "libcuda.so.1";

type Init = unsafe extern "C" fn(c_uint) -> c_int;
type DeviceGet = unsafe extern "C" fn(*mut c_int, c_int) -> c_int;
type OutInt = unsafe extern "C" fn(*mut c_int) -> c_int;
type DeviceAttr = unsafe extern "C" fn(*mut c_int, c_int, c_int) -> c_int;
type DeviceName = unsafe extern "C" fn(*mut c_char, c_int, c_int) -> c_int;
type CtxRetain = unsafe extern "C" fn(*mut Ptr, c_int) -> c_int;
type Fn1 = unsafe extern "C" fn(Ptr) -> c_int;
type Fn2 = unsafe extern "C" fn(Ptr, Ptr) -> c_int;
type StreamCreate = unsafe extern "C" fn(*mut Ptr, c_uint, c_int) -> c_int;
type StreamGetId = unsafe extern "C" fn(Ptr, *mut u64) -> c_int;
type EventCreate = unsafe extern "C" fn(*mut Ptr, c_uint) -> c_int;
type WaitEvent = unsafe extern "C" fn(Ptr, Ptr, c_uint) -> c_int;
type Elapsed = unsafe extern "C" fn(*mut f32, Ptr, Ptr) -> c_int;
type MemAlloc = unsafe extern "C" fn(*mut DevPtr, usize) -> c_int;
type MemFree = unsafe extern "C" fn(DevPtr) -> c_int;
type MemGetInfo = unsafe extern "C" fn(*mut usize, *mut usize) -> c_int;
type HtoD = unsafe extern "C" fn(DevPtr, *const c_void, usize) -> c_int;
type HtoDAsync = unsafe extern "C" fn(DevPtr, *const c_void, usize, Ptr) -> c_int;
type DtoH = unsafe extern "C" fn(*mut c_void, DevPtr, usize) -> c_int;
type MemsetD32 = unsafe extern "C" fn(DevPtr, c_uint, usize) -> c_int;
type ModuleLoadDataEx = unsafe extern "C" fn(*mut Ptr, *const c_void, c_uint, *mut c_int, *mut Ptr) -> c_int;
type ModuleGetFunction = unsafe extern "C" fn(*mut Ptr, Ptr, *const c_char) -> c_int;
type FuncSetAttr = unsafe extern "C" fn(Ptr, c_int, c_int) -> c_int;
type Launch = unsafe extern "C" fn(
    Ptr,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    c_uint,
    Ptr,
    *mut *mut c_void,
    *mut *mut c_void,
) -> c_int;
type ErrorName = unsafe extern "C" fn(c_int, *mut *const c_char) -> c_int;
type BeginCapture = unsafe extern "C" fn(Ptr, c_int) -> c_int;
type EndCapture = unsafe extern "C" fn(Ptr, *mut Ptr) -> c_int;
type GraphInstantiate = unsafe extern "C" fn(*mut Ptr, Ptr, u64) -> c_int;

/// Stream capture and graph launch (CUDA 11.4 and later): all six or none.
#[derive(Clone, Copy)]
struct GraphApi {
    begin_capture: BeginCapture,
    end_capture: EndCapture,
    instantiate: GraphInstantiate,
    launch: Fn2,
    exec_destroy: Fn1,
    destroy: Fn1,
}

/// `CU_STREAM_CAPTURE_MODE_THREAD_LOCAL`: only this thread's calls are checked for ones a
/// capture forbids.
const CU_STREAM_CAPTURE_MODE_THREAD_LOCAL: c_int = 1;

/// The driver entry points, all required except the two noted.
struct Driver {
    init: Init,
    device_get: DeviceGet,
    device_count: OutInt,
    device_attr: DeviceAttr,
    device_name: DeviceName,
    ctx_retain: CtxRetain,
    ctx_set_current: Fn1,
    stream_create: StreamCreate,
    stream_destroy: Fn1,
    stream_synchronize: Fn1,
    /// CUDA 12.0 and later.
    stream_get_id: Option<StreamGetId>,
    event_create: EventCreate,
    event_destroy: Fn1,
    event_record: Fn2,
    stream_wait_event: WaitEvent,
    event_query: Fn1,
    event_synchronize: Fn1,
    event_elapsed: Elapsed,
    mem_alloc: MemAlloc,
    mem_free: MemFree,
    /// Absent: the device's total memory is unknown (the pluggable allocator's memory fraction
    /// says so).
    mem_get_info: Option<MemGetInfo>,
    htod: HtoD,
    htod_async: HtoDAsync,
    dtoh: DtoH,
    memset_d32: MemsetD32,
    module_load: ModuleLoadDataEx,
    module_get_function: ModuleGetFunction,
    module_unload: Fn1,
    /// Absent: kernels keep the default dynamic shared-memory limit.
    func_set_attr: Option<FuncSetAttr>,
    launch: Launch,
    error_name: ErrorName,
    /// Absent on drivers before CUDA 11.4: [`Cuda::begin_capture`] says so.
    graphs: Option<GraphApi>,
}

fn sym<T: Copy>(h: Ptr, name: &CStr) -> Option<T> {
    // SAFETY: a valid handle from dlopen and a NUL-terminated name.
    let p = unsafe { libc::dlsym(h, name.as_ptr()) };
    if p.is_null() {
        return None;
    }
    assert_eq!(std::mem::size_of::<T>(), std::mem::size_of::<Ptr>());
    // SAFETY: `T` is the `extern "C" fn` type of the symbol's documented signature.
    Some(unsafe { std::mem::transmute_copy::<Ptr, T>(&p) })
}

impl Driver {
    fn load(h: Ptr, lib: &str) -> RtResult<Driver> {
        let mut missing: Vec<&str> = Vec::new();
        macro_rules! req {
            ($name:literal) => {{
                let c = CStr::from_bytes_with_nul(concat!($name, "\0").as_bytes()).expect("literal");
                match sym(h, c) {
                    Some(f) => Some(f),
                    None => {
                        missing.push($name);
                        None
                    }
                }
            }};
        }
        let d = (|| {
            Some(Driver {
                init: req!("cuInit")?,
                device_get: req!("cuDeviceGet")?,
                device_count: req!("cuDeviceGetCount")?,
                device_attr: req!("cuDeviceGetAttribute")?,
                device_name: req!("cuDeviceGetName")?,
                ctx_retain: req!("cuDevicePrimaryCtxRetain")?,
                ctx_set_current: req!("cuCtxSetCurrent")?,
                stream_create: req!("cuStreamCreateWithPriority")?,
                stream_destroy: req!("cuStreamDestroy_v2")?,
                stream_synchronize: req!("cuStreamSynchronize")?,
                stream_get_id: sym(h, c"cuStreamGetId"),
                event_create: req!("cuEventCreate")?,
                event_destroy: req!("cuEventDestroy_v2")?,
                event_record: req!("cuEventRecord")?,
                stream_wait_event: req!("cuStreamWaitEvent")?,
                event_query: req!("cuEventQuery")?,
                event_synchronize: req!("cuEventSynchronize")?,
                event_elapsed: req!("cuEventElapsedTime")?,
                mem_alloc: req!("cuMemAlloc_v2")?,
                mem_free: req!("cuMemFree_v2")?,
                mem_get_info: sym(h, c"cuMemGetInfo_v2"),
                htod: req!("cuMemcpyHtoD_v2")?,
                htod_async: req!("cuMemcpyHtoDAsync_v2")?,
                dtoh: req!("cuMemcpyDtoH_v2")?,
                memset_d32: req!("cuMemsetD32_v2")?,
                module_load: req!("cuModuleLoadDataEx")?,
                module_get_function: req!("cuModuleGetFunction")?,
                module_unload: req!("cuModuleUnload")?,
                func_set_attr: sym(h, c"cuFuncSetAttribute"),
                launch: req!("cuLaunchKernel")?,
                error_name: req!("cuGetErrorName")?,
                graphs: (|| {
                    Some(GraphApi {
                        begin_capture: sym(h, c"cuStreamBeginCapture_v2")?,
                        end_capture: sym(h, c"cuStreamEndCapture")?,
                        instantiate: sym(h, c"cuGraphInstantiateWithFlags")?,
                        launch: sym(h, c"cuGraphLaunch")?,
                        exec_destroy: sym(h, c"cuGraphExecDestroy")?,
                        destroy: sym(h, c"cuGraphDestroy")?,
                    })
                })(),
            })
        })();
        d.ok_or_else(|| {
            RtError::new(
                RtErrorKind::NoRuntime,
                format!(
                    "{lib} is not a usable CUDA driver: it lacks {} (CUDA 11 or later is needed)",
                    missing.join(", ")
                ),
            )
        })
    }
}

/// A loaded CUDA driver with the primary context of one device retained.
pub struct Cuda {
    d: Driver,
    ctx: Ptr,
    device: c_int,
    sms: u32,
    shared_optin: u32,
    name: String,
    library: String,
}

// SAFETY: the CUDA driver API is thread-safe; the context handle is only passed back to it.
unsafe impl Send for Cuda {}
unsafe impl Sync for Cuda {}

impl std::fmt::Debug for Cuda {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cuda").field("device", &self.device).field("name", &self.name).field("sms", &self.sms).finish()
    }
}

static DRIVER: Mutex<Option<Arc<Cuda>>> = Mutex::new(None);
static RUNTIME: Mutex<Option<Arc<Runtime>>> = Mutex::new(None);

thread_local! {
    /// The context this thread last made current through [`Cuda::bind`].
    static CURRENT: Cell<usize> = const { Cell::new(0) };
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

/// The loaded driver, loading it and initialising the device on first use (only success is
/// cached). The device is `SA_CUDA_DEVICE` (default 0).
pub fn driver() -> RtResult<Arc<Cuda>> {
    let mut cached = DRIVER.lock();
    if let Some(c) = cached.as_ref() {
        return Ok(c.clone());
    }
    let c = Arc::new(Cuda::open()?);
    *cached = Some(c.clone());
    Ok(c)
}

/// The CUDA driver as a seam table: what `SA_RUNTIME=cuda` resolves to.
pub fn runtime() -> RtResult<Arc<Runtime>> {
    let mut cached = RUNTIME.lock();
    if let Some(rt) = cached.as_ref() {
        return Ok(rt.clone());
    }
    let cuda = driver()?;
    let rt = table(cuda)?;
    *cached = Some(rt.clone());
    Ok(rt)
}

impl Cuda {
    fn open() -> RtResult<Cuda> {
        let explicit = std::env::var_os("SA_CUDA_LIB");
        let library = match &explicit {
            Some(p) => p.to_string_lossy().into_owned(),
            None => DRIVER_LIBRARY.to_string(),
        };
        let Ok(c) = CString::new(library.as_bytes()) else {
            return Err(RtError::new(RtErrorKind::Invalid, "SA_CUDA_LIB contains a NUL byte"));
        };
        // SAFETY: a user-requested load of a NUL-terminated name.
        let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if h.is_null() {
            let searched = match explicit {
                Some(_) => format!("SA_CUDA_LIB={library}"),
                None => format!(
                    "{DRIVER_LIBRARY} on the loader's search path (LD_LIBRARY_PATH, ld.so.cache); SA_CUDA_LIB unset"
                ),
            };
            return Err(RtError::new(
                RtErrorKind::NoRuntime,
                format!("no CUDA driver: searched {searched}: dlopen failed: {}", dlerror()),
            ));
        }
        // The handle stays open for the life of the process: the table points into it.
        let d = Driver::load(h, &library)?;
        let device_ordinal: c_int = match std::env::var("SA_CUDA_DEVICE") {
            Ok(v) => v.trim().parse().map_err(|_| {
                RtError::new(RtErrorKind::Invalid, format!("SA_CUDA_DEVICE='{v}' is not a device number"))
            })?,
            Err(_) => 0,
        };
        let err = |d: &Driver, call: &str, code: c_int| RtError {
            kind: RtErrorKind::Device,
            runtime_code: code,
            message: format!("{call} failed with {}", name_of(d, code)),
        };
        // SAFETY (this block): documented driver signatures with valid out pointers.
        unsafe {
            let rc = (d.init)(0);
            if rc != 0 {
                return Err(err(&d, "cuInit", rc));
            }
            let mut count = 0;
            let rc = (d.device_count)(&mut count);
            if rc != 0 {
                return Err(err(&d, "cuDeviceGetCount", rc));
            }
            if device_ordinal < 0 || device_ordinal >= count {
                return Err(RtError::new(
                    RtErrorKind::NoRuntime,
                    format!("CUDA device {device_ordinal} does not exist: {library} reports {count} device(s)"),
                ));
            }
            let mut dev = 0;
            let rc = (d.device_get)(&mut dev, device_ordinal);
            if rc != 0 {
                return Err(err(&d, "cuDeviceGet", rc));
            }
            let mut sms = 0;
            let rc = (d.device_attr)(&mut sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
            if rc != 0 || sms <= 0 {
                return Err(err(&d, "cuDeviceGetAttribute(MULTIPROCESSOR_COUNT)", rc));
            }
            let mut optin = 0;
            if (d.device_attr)(&mut optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev) != 0 {
                optin = 0;
            }
            let mut buf = [0 as c_char; 256];
            let name = if (d.device_name)(buf.as_mut_ptr(), buf.len() as c_int - 1, dev) == 0 {
                CStr::from_ptr(buf.as_ptr()).to_string_lossy().into_owned()
            } else {
                format!("CUDA device {device_ordinal}")
            };
            let mut ctx: Ptr = std::ptr::null_mut();
            let rc = (d.ctx_retain)(&mut ctx, dev);
            if rc != 0 || ctx.is_null() {
                return Err(err(&d, "cuDevicePrimaryCtxRetain", rc));
            }
            Ok(Cuda { d, ctx, device: dev, sms: sms as u32, shared_optin: optin.max(0) as u32, name, library })
        }
    }

    /// Makes the primary context current on this thread (a driver call only the first time).
    fn bind(&self) -> c_int {
        let key = self.ctx as usize;
        if CURRENT.with(Cell::get) == key {
            return 0;
        }
        // SAFETY: a context retained by `open`.
        let rc = unsafe { (self.d.ctx_set_current)(self.ctx) };
        if rc == 0 {
            CURRENT.with(|c| c.set(key));
        }
        rc
    }

    fn call(&self, call: &str, f: impl FnOnce() -> c_int) -> RtResult<()> {
        let rc = self.bind();
        let rc = if rc == 0 { f() } else { rc };
        if rc == 0 { Ok(()) } else { Err(self.error(call, rc)) }
    }

    fn error(&self, call: &str, code: c_int) -> RtError {
        RtError {
            kind: RtErrorKind::Device,
            runtime_code: code,
            message: format!("{call} failed with {}", self.describe(code)),
        }
    }

    /// `CUDA_ERROR_… (code)`, from `cuGetErrorName`.
    pub fn describe(&self, code: i32) -> String {
        name_of(&self.d, code)
    }

    /// The device's total memory in bytes (`cuMemGetInfo_v2`).
    pub fn total_memory(&self) -> RtResult<u64> {
        let f = self
            .d
            .mem_get_info
            .ok_or_else(|| RtError::new(RtErrorKind::NoRuntime, format!("{} has no cuMemGetInfo_v2", self.library)))?;
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: cuMemGetInfo_v2(free, total) with two valid out pointers.
        self.call("cuMemGetInfo_v2", || unsafe { f(&mut free, &mut total) })?;
        Ok(total as u64)
    }

    /// Streaming multiprocessors of the device (`CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT`).
    pub fn sm_count(&self) -> u32 {
        self.sms
    }

    /// The device's name (`cuDeviceGetName`).
    pub fn device_name(&self) -> &str {
        &self.name
    }

    /// The library the driver was loaded from.
    pub fn library(&self) -> &str {
        &self.library
    }

    /// Dynamic shared memory one block may use after opting in (0 when unknown).
    pub fn shared_optin(&self) -> u32 {
        self.shared_optin
    }

    /// JIT-compiles a PTX module; the driver's error log is part of the error.
    pub fn load_ptx(self: &Arc<Self>, ptx: &CStr) -> RtResult<Module> {
        let mut log = vec![0u8; 4096];
        let mut opts: [c_int; 2] = [CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES];
        let mut vals: [Ptr; 2] = [log.as_mut_ptr().cast(), log.len() as Ptr];
        let mut m: Ptr = std::ptr::null_mut();
        // SAFETY: a NUL-terminated PTX image and option arrays of the length passed.
        let r = self.call("cuModuleLoadDataEx", || unsafe {
            (self.d.module_load)(&mut m, ptx.as_ptr().cast(), 2, opts.as_mut_ptr(), vals.as_mut_ptr())
        });
        if let Err(mut e) = r {
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            let text = String::from_utf8_lossy(&log[..end]);
            if !text.trim().is_empty() {
                e.message.push_str(&format!("; JIT log: {}", text.trim()));
            }
            return Err(e);
        }
        Ok(Module { cuda: self.clone(), handle: m })
    }

    /// Launches `f` on `stream` with a 1-D grid and block; `params` point at the arguments.
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    pub fn launch(
        &self,
        f: &Function,
        grid: u32,
        block: u32,
        shared: u32,
        stream: Ptr,
        params: &mut [Ptr],
    ) -> RtResult<()> {
        // SAFETY: `params` holds one pointer per kernel parameter, each to a live value of the
        // parameter's type (the caller's contract with the kernel it loaded).
        self.call("cuLaunchKernel", || unsafe {
            (self.d.launch)(
                f.handle,
                grid,
                1,
                1,
                block,
                1,
                1,
                shared,
                stream,
                params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        })
    }

    /// Lets `f` use up to `bytes` of dynamic shared memory.
    pub fn set_max_dynamic_shared(&self, f: &Function, bytes: u32) -> RtResult<()> {
        let Some(set) = self.d.func_set_attr else {
            return Err(RtError::new(RtErrorKind::NoRuntime, "the CUDA driver has no cuFuncSetAttribute"));
        };
        // SAFETY: a function handle of a loaded module.
        self.call("cuFuncSetAttribute", || unsafe {
            set(f.handle, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes as c_int)
        })
    }

    pub fn copy_to_device(&self, dst: DevPtr, src: &[u8]) -> RtResult<()> {
        // SAFETY: `src` is readable for its length; `dst` is device memory of the caller.
        self.call("cuMemcpyHtoD", || unsafe { (self.d.htod)(dst, src.as_ptr().cast(), src.len()) })
    }

    /// An asynchronous host-to-device copy on `stream`; `src` must stay alive until the
    /// stream has run it.
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    pub fn copy_to_device_async(&self, dst: DevPtr, src: &[u8], stream: Ptr) -> RtResult<()> {
        // SAFETY: as above.
        self.call("cuMemcpyHtoDAsync", || unsafe { (self.d.htod_async)(dst, src.as_ptr().cast(), src.len(), stream) })
    }

    pub fn copy_to_host(&self, dst: &mut [u8], src: DevPtr) -> RtResult<()> {
        // SAFETY: `dst` is writable for its length.
        self.call("cuMemcpyDtoH", || unsafe { (self.d.dtoh)(dst.as_mut_ptr().cast(), src, dst.len()) })
    }

    pub fn fill_u32(&self, dst: DevPtr, value: u32, count: usize) -> RtResult<()> {
        // SAFETY: device memory of at least `count` words.
        self.call("cuMemsetD32", || unsafe { (self.d.memset_d32)(dst, value, count) })
    }

    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    pub fn stream_synchronize(&self, stream: Ptr) -> RtResult<()> {
        // SAFETY: a stream of this driver.
        self.call("cuStreamSynchronize", || unsafe { (self.d.stream_synchronize)(stream) })
    }
}

impl Cuda {
    /// Starts capturing `origin` into a graph: work issued to it, and to every stream that
    /// waits on an event recorded in the capture, is recorded instead of run, until
    /// [`Capture::finish`]. Every stream that joined must be joined back into `origin` (an
    /// event recorded on it that `origin` waits on) before then.
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    pub fn begin_capture(self: &Arc<Self>, origin: Ptr) -> RtResult<Capture> {
        let Some(g) = self.d.graphs else {
            return Err(RtError::new(
                RtErrorKind::NoRuntime,
                format!(
                    "the CUDA driver {} has no stream capture (cuStreamBeginCapture_v2 and cuGraphInstantiateWithFlags, CUDA 11.4 or later)",
                    self.library
                ),
            ));
        };
        // SAFETY: a stream of this driver.
        self.call("cuStreamBeginCapture", || unsafe {
            (g.begin_capture)(origin, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
        })?;
        Ok(Capture { cuda: self.clone(), g, origin, open: true })
    }
}

/// A capture in progress; dropped unfinished, it ends the capture and discards the graph, so
/// the streams are usable again after an error.
pub struct Capture {
    cuda: Arc<Cuda>,
    g: GraphApi,
    origin: Ptr,
    open: bool,
}

impl Capture {
    fn end(&mut self) -> RtResult<Ptr> {
        self.open = false;
        let mut graph: Ptr = std::ptr::null_mut();
        // SAFETY: `origin` is capturing (begun by `begin_capture`, ended once).
        self.cuda.call("cuStreamEndCapture", || unsafe { (self.g.end_capture)(self.origin, &mut graph) })?;
        Ok(graph)
    }

    /// Ends the capture and instantiates what it recorded.
    pub fn finish(mut self) -> RtResult<GraphExec> {
        let graph = self.end()?;
        let mut exec: Ptr = std::ptr::null_mut();
        // SAFETY: a graph the capture made; the executable copies it, so it is destroyed after.
        let made =
            self.cuda.call("cuGraphInstantiateWithFlags", || unsafe { (self.g.instantiate)(&mut exec, graph, 0) });
        // SAFETY: the graph is ours and no longer needed.
        let _ = self.cuda.call("cuGraphDestroy", || unsafe { (self.g.destroy)(graph) });
        made?;
        Ok(GraphExec { cuda: self.cuda.clone(), g: self.g, handle: exec })
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        if self.open {
            // The capture failed on the way: close it (a driver that already invalidated it
            // answers an error and no graph, which has no one to report to here).
            if let Ok(graph) = self.end() {
                if !graph.is_null() {
                    // SAFETY: the discarded capture's graph, destroyed once.
                    let _ = self.cuda.call("cuGraphDestroy", || unsafe { (self.g.destroy)(graph) });
                }
            }
        }
    }
}

/// An instantiated graph; destroyed on drop.
pub struct GraphExec {
    cuda: Arc<Cuda>,
    g: GraphApi,
    handle: Ptr,
}

impl GraphExec {
    /// Launches the whole graph on `stream` with one call.
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    pub fn launch(&self, stream: Ptr) -> RtResult<()> {
        // SAFETY: an executable graph of this driver and a stream of it.
        self.cuda.call("cuGraphLaunch", || unsafe { (self.g.launch)(self.handle, stream) })
    }
}

impl Drop for GraphExec {
    fn drop(&mut self) {
        // SAFETY: instantiated by `Capture::finish`, destroyed once.
        let _ = self.cuda.call("cuGraphExecDestroy", || unsafe { (self.g.exec_destroy)(self.handle) });
    }
}

fn name_of(d: &Driver, code: c_int) -> String {
    let mut p: *const c_char = std::ptr::null();
    // SAFETY: cuGetErrorName writes a static string or fails.
    if unsafe { (d.error_name)(code, &mut p) } == 0 && !p.is_null() {
        // SAFETY: a static NUL-terminated string of the driver.
        let name = unsafe { CStr::from_ptr(p) }.to_string_lossy();
        return format!("{name} ({code})");
    }
    format!("CUDA error {code}")
}

/// A loaded PTX module; unloaded on drop.
pub struct Module {
    cuda: Arc<Cuda>,
    handle: Ptr,
}

/// A kernel of a [`Module`] (valid while the module lives).
pub struct Function {
    handle: Ptr,
}

impl Module {
    pub fn function(&self, name: &CStr) -> RtResult<Function> {
        let mut f: Ptr = std::ptr::null_mut();
        // SAFETY: a loaded module and a NUL-terminated name.
        self.cuda.call("cuModuleGetFunction", || unsafe {
            (self.cuda.d.module_get_function)(&mut f, self.handle, name.as_ptr())
        })?;
        Ok(Function { handle: f })
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        // SAFETY: loaded by `load_ptx`, unloaded once. A failure here has no one to report to.
        let _ = self.cuda.call("cuModuleUnload", || unsafe { (self.cuda.d.module_unload)(self.handle) });
    }
}

fn cuda_of(user: Ptr) -> &'static Cuda {
    // SAFETY: `user` is the leaked `Arc<Cuda>` the table was built with (see `table`).
    unsafe { &*(user as *const Cuda) }
}

/// Runs `f` with the context current; the bind's error code when it fails.
fn bound(user: Ptr, f: impl FnOnce(&Cuda) -> c_int) -> c_int {
    let c = cuda_of(user);
    match c.bind() {
        0 => f(c),
        rc => rc,
    }
}

unsafe extern "C" fn stream_create(user: Ptr, s: *mut Ptr, priority: i32, _rt_flags: u32) -> i32 {
    // SAFETY: cuStreamCreateWithPriority(stream, flags, priority); `s` is the seam's out pointer.
    bound(user, |c| unsafe { (c.d.stream_create)(s, CU_STREAM_NON_BLOCKING, priority) })
}
unsafe extern "C" fn stream_destroy(user: Ptr, s: Ptr, _force: i32) -> i32 {
    // SAFETY: cuStreamDestroy (CUDA lets queued work finish; there is no forced variant).
    bound(user, |c| unsafe { (c.d.stream_destroy)(s) })
}
unsafe extern "C" fn stream_get_id(user: Ptr, s: Ptr, id: *mut i32) -> i32 {
    bound(user, |c| {
        let Some(f) = c.d.stream_get_id else { return CUDA_ERROR_INVALID_VALUE };
        let mut v = 0u64;
        // SAFETY: cuStreamGetId(stream, id).
        let rc = unsafe { f(s, &mut v) };
        if rc == 0 {
            // SAFETY: the seam's out pointer. Ids beyond i32 wrap, as a 32-bit id must.
            unsafe { id.write(v as i32) };
        }
        rc
    })
}
unsafe extern "C" fn event_create(user: Ptr, e: *mut Ptr, acl_flag: u32) -> i32 {
    let flags = if acl_flag & ACL_EVENT_TIME_LINE != 0 { CU_EVENT_DEFAULT } else { CU_EVENT_DISABLE_TIMING };
    // SAFETY: cuEventCreate(event, flags).
    bound(user, |c| unsafe { (c.d.event_create)(e, flags) })
}
unsafe extern "C" fn event_destroy(user: Ptr, e: Ptr) -> i32 {
    // SAFETY: cuEventDestroy(event).
    bound(user, |c| unsafe { (c.d.event_destroy)(e) })
}
unsafe extern "C" fn event_record(user: Ptr, e: Ptr, s: Ptr) -> i32 {
    // SAFETY: cuEventRecord(event, stream).
    bound(user, |c| unsafe { (c.d.event_record)(e, s) })
}
/// CUDA events need no reset: a record replaces the previous one.
unsafe extern "C" fn event_reset(user: Ptr, _e: Ptr, _s: Ptr) -> i32 {
    bound(user, |_| 0)
}
unsafe extern "C" fn stream_wait_event(user: Ptr, s: Ptr, e: Ptr) -> i32 {
    // SAFETY: cuStreamWaitEvent(stream, event, 0).
    bound(user, |c| unsafe { (c.d.stream_wait_event)(s, e, 0) })
}
unsafe extern "C" fn notify_create(user: Ptr, n: *mut Ptr, _device: i32) -> i32 {
    // SAFETY: a timing-free event stands for the notify.
    bound(user, |c| unsafe { (c.d.event_create)(n, CU_EVENT_DISABLE_TIMING) })
}
unsafe extern "C" fn notify_wait(user: Ptr, n: Ptr, s: Ptr, _timeout_ms: u32) -> i32 {
    // SAFETY: cuStreamWaitEvent(stream, event, 0); CUDA's wait has no timeout.
    bound(user, |c| unsafe { (c.d.stream_wait_event)(s, n, 0) })
}
unsafe extern "C" fn get_device(user: Ptr, d: *mut i32) -> i32 {
    let c = cuda_of(user);
    // SAFETY: the seam's out pointer.
    unsafe { d.write(c.device) };
    0
}
unsafe extern "C" fn mem_malloc(user: Ptr, p: *mut Ptr, size: usize, _policy: u32) -> i32 {
    bound(user, |c| {
        let mut d: DevPtr = 0;
        // SAFETY: cuMemAlloc(dptr, size).
        let rc = unsafe { (c.d.mem_alloc)(&mut d, size) };
        if rc == 0 {
            // SAFETY: the seam's out pointer; a device address travels as a pointer.
            unsafe { p.write(d as usize as Ptr) };
        }
        rc
    })
}
unsafe extern "C" fn mem_free(user: Ptr, p: Ptr) -> i32 {
    // SAFETY: cuMemFree(dptr) of an address from `mem_malloc`.
    bound(user, |c| unsafe { (c.d.mem_free)(p as usize as DevPtr) })
}
/// `cuEventQuery` answers `CUDA_ERROR_NOT_READY` while work is pending: the seam's 0.
unsafe extern "C" fn event_query(user: Ptr, e: Ptr, done: *mut i32) -> i32 {
    bound(user, |c| {
        // SAFETY: cuEventQuery(event).
        let rc = unsafe { (c.d.event_query)(e) };
        let state = match rc {
            CUDA_SUCCESS => 1,
            CUDA_ERROR_NOT_READY => 0,
            other => return other,
        };
        // SAFETY: the seam's out pointer.
        unsafe { done.write(state) };
        0
    })
}
unsafe extern "C" fn event_synchronize(user: Ptr, e: Ptr) -> i32 {
    // SAFETY: cuEventSynchronize(event).
    bound(user, |c| unsafe { (c.d.event_synchronize)(e) })
}
unsafe extern "C" fn event_elapsed_time(user: Ptr, ms: *mut f32, a: Ptr, b: Ptr) -> i32 {
    // SAFETY: cuEventElapsedTime(ms, start, end).
    bound(user, |c| unsafe { (c.d.event_elapsed)(ms, a, b) })
}

fn table(cuda: Arc<Cuda>) -> RtResult<Arc<Runtime>> {
    let mut ops = RuntimeOps::empty();
    ops.stream_create = Some(stream_create);
    ops.stream_destroy = Some(stream_destroy);
    ops.stream_get_id = cuda.d.stream_get_id.is_some().then_some(stream_get_id as _);
    ops.event_create = Some(event_create);
    ops.event_destroy = Some(event_destroy);
    ops.event_record = Some(event_record);
    ops.event_reset = Some(event_reset);
    ops.stream_wait_event = Some(stream_wait_event);
    ops.notify_create = Some(notify_create);
    ops.notify_destroy = Some(event_destroy);
    ops.notify_record = Some(event_record);
    ops.notify_wait = Some(notify_wait);
    ops.get_device = Some(get_device);
    ops.mem_malloc = Some(mem_malloc);
    ops.mem_free = Some(mem_free);
    ops.event_query = Some(event_query);
    ops.event_synchronize = Some(event_synchronize);
    ops.event_elapsed_time = Some(event_elapsed_time);
    // Leaked on purpose, like the driver itself: the table lives as long as the process.
    ops.user = Arc::into_raw(cuda) as Ptr;
    Runtime::from_ops_naming(&ops, RuntimeSource::Cuda, Some(loaded_error_name))
}

/// The `CUDA_ERROR_…` name of a code when the CUDA driver is loaded (for seam messages).
fn loaded_error_name(code: i32) -> Option<String> {
    DRIVER.lock().as_ref().map(|c| c.describe(code))
}
