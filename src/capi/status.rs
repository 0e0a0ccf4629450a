//! `sa_status`: the result of every status-returning C function. Each value equals the number
//! in the error's code string (`SA_IO` = 1000 for `SA1000`, `SA_INVALID_OPTION` = 10001 for GE's
//! `E10001`), so a status can be logged, compared with GE's logs and stored without a table.
//! Values never change once released; new ones are only added.

use std::ffi::c_char;

use crate::error::ErrorKind;
use crate::runtime::RtErrorKind;

/// Result of a C ABI call: `SA_OK` (0) or one of the `SA_*` error values below. A plain
/// `int32_t` rather than a C enum so its size is fixed and unknown values from a newer library
/// stay representable.
pub type sa_status = i32;

/// Success.
pub const SA_OK: sa_status = 0;

/// `SA1000`: a file could not be read or written.
pub const SA_IO: sa_status = 1000;
/// `SA1001`: the input is not well-formed JSON.
pub const SA_JSON: sa_status = 1001;
/// `SA1002`: `format` / `version` of a graph document is not one this library reads.
pub const SA_FORMAT: sa_status = 1002;
/// `SA1003`: a required field is missing or has the wrong type or range.
pub const SA_FIELD: sa_status = 1003;
/// `SA1004`: two nodes of one graph (or two graphs) share a name.
pub const SA_DUPLICATE_NAME: sa_status = 1004;
/// `SA1005`: an edge, partition entry or reference names a node that does not exist.
pub const SA_UNKNOWN_NODE: sa_status = 1005;
/// `SA1006`: the graph has a cycle.
pub const SA_CYCLE: sa_status = 1006;
/// `SA1007`: a node or option names an engine that is not in the engine table.
pub const SA_UNKNOWN_ENGINE: sa_status = 1007;
/// `SA1008`: a node attribute has the wrong type or an invalid value.
pub const SA_ATTRIBUTE: sa_status = 1008;
/// `SA1009`: a subgraph names a parent node that does not exist or that it cannot belong to.
pub const SA_SUBGRAPH: sa_status = 1009;
/// `SA1010`: the `partition` given with the graph is inconsistent.
pub const SA_PARTITION: sa_status = 1010;
/// `SA2000`: the requested mode, policy or stage is not implemented in this build.
pub const SA_NOT_IMPLEMENTED: sa_status = 2000;
/// `SA2001`: a pipeline step failed on the given graph (GE's FAILED / PARAM_INVALID cases).
pub const SA_FAILED: sa_status = 2001;
/// `SA2002`: a stage was called out of order.
pub const SA_STAGE: sa_status = 2002;
/// `SA2003`: a limit was exceeded (notify count, task limits, stream count).
pub const SA_LIMIT: sa_status = 2003;

/// `SA3001`: a pointer argument that must not be NULL was NULL.
pub const SA_NULL_POINTER: sa_status = 3001;
/// `SA3002`: an argument is out of its domain: a string that is not UTF-8, an unknown
/// `sa_stage` / `sa_shape` / `sa_edge_kind` value, a cost that is not a finite number >= 0.
pub const SA_INVALID_ARGUMENT: sa_status = 3002;
/// `SA3003`: the caller's buffer is too small; the size needed has been written.
pub const SA_BUFFER_TOO_SMALL: sa_status = 3003;
/// `SA3004`: the library panicked (a bug); the call had no effect on its outputs. The handle
/// passed to the call may be left half-updated and is best freed.
pub const SA_PANIC: sa_status = 3004;
/// `SA3005`: the call does not fit the handle's state (for example: adding a node to a graph
/// that has already been built).
pub const SA_INVALID_STATE: sa_status = 3005;
/// `SA3006`: a graph, node or index named in the call does not exist.
pub const SA_NOT_FOUND: sa_status = 3006;

/// `SA4000`: no device runtime: none registered (`sa_runtime_register`) and none found in the
/// process (see `sa_runtime_resolve`).
pub const SA_NO_RUNTIME: sa_status = 4000;
/// `SA4001`: a runtime count limit was exceeded: 2024 streams, 4096 events or 1024 notifies
/// per allocator, 256 models per pooled stream, or host memory for a vector.
pub const SA_RUNTIME_LIMIT: sa_status = 4001;
/// `SA4002`: the device runtime returned an error; the message carries the runtime's own code.
pub const SA_DEVICE_ERROR: sa_status = 4002;
/// `SA4003`: a device handle (stream) was not created by the pool or allocator it was given to.
pub const SA_UNKNOWN_HANDLE: sa_status = 4003;
/// `SA4004`: device memory ran out: `sa_mem_pool_alloc` synchronised the pool's pending events,
/// released their blocks, returned its cached blocks to the device and retried once; the
/// message names the size, the stream and each step.
pub const SA_OUT_OF_MEMORY: sa_status = 4004;

/// `E10001` (GE): an option has an invalid value.
pub const SA_INVALID_OPTION: sa_status = 10001;
/// `E10006` (GE): `ge.hcomParallel` is neither 0 nor 1.
pub const SA_INVALID_HCOM_PARALLEL: sa_status = 10006;
/// `E10055` (GE): single-stream mode meets a stream label.
pub const SA_SINGLE_STREAM_LABEL: sa_status = 10055;
/// `E10056` (GE): single-stream mode meets an auto multi-stream mode.
pub const SA_SINGLE_STREAM_AUTO_MODE: sa_status = 10056;
/// `E19999` (GE): an internal invariant broke. Always a bug.
pub const SA_INTERNAL: sa_status = 19999;

/// The status of a library error. Exhaustive on purpose: a new `ErrorKind` must get its own
/// stable status value before the crate compiles.
pub(crate) fn status_of(kind: ErrorKind) -> sa_status {
    match kind {
        ErrorKind::Io => SA_IO,
        ErrorKind::Json => SA_JSON,
        ErrorKind::Format => SA_FORMAT,
        ErrorKind::Field => SA_FIELD,
        ErrorKind::DuplicateName => SA_DUPLICATE_NAME,
        ErrorKind::UnknownNode => SA_UNKNOWN_NODE,
        ErrorKind::Cycle => SA_CYCLE,
        ErrorKind::UnknownEngine => SA_UNKNOWN_ENGINE,
        ErrorKind::Attribute => SA_ATTRIBUTE,
        ErrorKind::Subgraph => SA_SUBGRAPH,
        ErrorKind::Partition => SA_PARTITION,
        ErrorKind::InvalidOption => SA_INVALID_OPTION,
        ErrorKind::InvalidHcomParallel => SA_INVALID_HCOM_PARALLEL,
        ErrorKind::SingleStreamLabel => SA_SINGLE_STREAM_LABEL,
        ErrorKind::SingleStreamAutoMode => SA_SINGLE_STREAM_AUTO_MODE,
        ErrorKind::NotImplemented => SA_NOT_IMPLEMENTED,
        ErrorKind::Failed => SA_FAILED,
        ErrorKind::Stage => SA_STAGE,
        ErrorKind::Limit => SA_LIMIT,
        ErrorKind::Internal => SA_INTERNAL,
    }
}

/// The status of a runtime error. Exhaustive on purpose, like [`status_of`].
pub(crate) fn status_of_runtime(kind: RtErrorKind) -> sa_status {
    match kind {
        RtErrorKind::NoRuntime => SA_NO_RUNTIME,
        RtErrorKind::Limit => SA_RUNTIME_LIMIT,
        RtErrorKind::Device => SA_DEVICE_ERROR,
        RtErrorKind::UnknownHandle => SA_UNKNOWN_HANDLE,
        RtErrorKind::Invalid => SA_INVALID_ARGUMENT,
        RtErrorKind::Null => SA_NULL_POINTER,
        RtErrorKind::State => SA_INVALID_STATE,
        RtErrorKind::OutOfMemory => SA_OUT_OF_MEMORY,
    }
}

/// Name and code string of a status, as NUL-terminated static strings.
pub(crate) fn describe(status: sa_status) -> Option<(&'static str, &'static str)> {
    Some(match status {
        SA_OK => ("SA_OK: success\0", "\0"),
        SA_IO => ("SA_IO: a file could not be read or written\0", "SA1000\0"),
        SA_JSON => ("SA_JSON: the input is not well-formed JSON\0", "SA1001\0"),
        SA_FORMAT => ("SA_FORMAT: unsupported document format or version\0", "SA1002\0"),
        SA_FIELD => ("SA_FIELD: a field is missing or has the wrong type or range\0", "SA1003\0"),
        SA_DUPLICATE_NAME => ("SA_DUPLICATE_NAME: two nodes or graphs share a name\0", "SA1004\0"),
        SA_UNKNOWN_NODE => ("SA_UNKNOWN_NODE: a reference names a node that does not exist\0", "SA1005\0"),
        SA_CYCLE => ("SA_CYCLE: the graph has a cycle\0", "SA1006\0"),
        SA_UNKNOWN_ENGINE => ("SA_UNKNOWN_ENGINE: an engine is not in the engine table\0", "SA1007\0"),
        SA_ATTRIBUTE => ("SA_ATTRIBUTE: a node attribute is invalid\0", "SA1008\0"),
        SA_SUBGRAPH => ("SA_SUBGRAPH: a subgraph's parent is missing or invalid\0", "SA1009\0"),
        SA_PARTITION => ("SA_PARTITION: the given partition is inconsistent\0", "SA1010\0"),
        SA_NOT_IMPLEMENTED => ("SA_NOT_IMPLEMENTED: not implemented in this build\0", "SA2000\0"),
        SA_FAILED => ("SA_FAILED: a pipeline step failed on the graph\0", "SA2001\0"),
        SA_STAGE => ("SA_STAGE: a stage was called out of order\0", "SA2002\0"),
        SA_LIMIT => ("SA_LIMIT: a limit was exceeded\0", "SA2003\0"),
        SA_NULL_POINTER => ("SA_NULL_POINTER: a required pointer argument was NULL\0", "SA3001\0"),
        SA_INVALID_ARGUMENT => ("SA_INVALID_ARGUMENT: an argument is out of its domain\0", "SA3002\0"),
        SA_BUFFER_TOO_SMALL => ("SA_BUFFER_TOO_SMALL: the buffer is too small\0", "SA3003\0"),
        SA_PANIC => ("SA_PANIC: the library panicked (a bug)\0", "SA3004\0"),
        SA_INVALID_STATE => ("SA_INVALID_STATE: the call does not fit the handle's state\0", "SA3005\0"),
        SA_NOT_FOUND => ("SA_NOT_FOUND: no such graph, node or index\0", "SA3006\0"),
        SA_NO_RUNTIME => ("SA_NO_RUNTIME: no device runtime registered or found\0", "SA4000\0"),
        SA_RUNTIME_LIMIT => ("SA_RUNTIME_LIMIT: a runtime count limit was exceeded\0", "SA4001\0"),
        SA_DEVICE_ERROR => ("SA_DEVICE_ERROR: the device runtime returned an error\0", "SA4002\0"),
        SA_UNKNOWN_HANDLE => ("SA_UNKNOWN_HANDLE: a device handle was not created here\0", "SA4003\0"),
        SA_OUT_OF_MEMORY => ("SA_OUT_OF_MEMORY: device memory ran out after synchronising and one retry\0", "SA4004\0"),
        SA_INVALID_OPTION => ("SA_INVALID_OPTION: an option has an invalid value\0", "E10001\0"),
        SA_INVALID_HCOM_PARALLEL => ("SA_INVALID_HCOM_PARALLEL: ge.hcomParallel is not 0 or 1\0", "E10006\0"),
        SA_SINGLE_STREAM_LABEL => ("SA_SINGLE_STREAM_LABEL: single-stream mode meets a stream label\0", "E10055\0"),
        SA_SINGLE_STREAM_AUTO_MODE => {
            ("SA_SINGLE_STREAM_AUTO_MODE: single-stream mode meets an auto multi-stream mode\0", "E10056\0")
        }
        SA_INTERNAL => ("SA_INTERNAL: an internal invariant broke (a bug)\0", "E19999\0"),
        _ => return None,
    })
}

/// The code string of a status without its NUL (`""` for `SA_OK`).
#[cfg(test)]
pub(crate) fn code_of(status: sa_status) -> &'static str {
    describe(status).map_or("", |(_, c)| c.trim_end_matches('\0'))
}

/// A static, NUL-terminated description of `status`: its name and meaning, e.g.
/// `"SA_NULL_POINTER: a required pointer argument was NULL"`. Unknown values give
/// `"SA_UNKNOWN: unknown status"`. Never NULL; the string lives as long as the program and
/// must not be freed. Thread-safe.
///
/// Ownership: the returned string is static: never freed.
#[unsafe(no_mangle)]
pub extern "C" fn sa_status_str(status: sa_status) -> *const c_char {
    super::ffi_boundary(|| describe(status).map_or(c"SA_UNKNOWN: unknown status".as_ptr(), |(s, _)| s.as_ptr().cast()))
}

/// The static, NUL-terminated code string of `status`: `"SA1005"`, GE's `"E10001"`, ...;
/// `""` for `SA_OK` and for unknown values. Never NULL; must not be freed. Thread-safe.
///
/// Ownership: the returned string is static: never freed.
#[unsafe(no_mangle)]
pub extern "C" fn sa_status_code(status: sa_status) -> *const c_char {
    super::ffi_boundary(|| describe(status).map_or(c"".as_ptr(), |(_, c)| c.as_ptr().cast()))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL_KINDS: &[ErrorKind] = &[
        ErrorKind::Io,
        ErrorKind::Json,
        ErrorKind::Format,
        ErrorKind::Field,
        ErrorKind::DuplicateName,
        ErrorKind::UnknownNode,
        ErrorKind::Cycle,
        ErrorKind::UnknownEngine,
        ErrorKind::Attribute,
        ErrorKind::Subgraph,
        ErrorKind::Partition,
        ErrorKind::InvalidOption,
        ErrorKind::InvalidHcomParallel,
        ErrorKind::SingleStreamLabel,
        ErrorKind::SingleStreamAutoMode,
        ErrorKind::NotImplemented,
        ErrorKind::Failed,
        ErrorKind::Stage,
        ErrorKind::Limit,
        ErrorKind::Internal,
    ];

    #[test]
    fn status_value_is_the_number_of_its_code() {
        for &k in ALL_KINDS {
            let s = status_of(k);
            assert_eq!(code_of(s), k.code(), "{k:?}");
            let digits: String = k.code().chars().filter(char::is_ascii_digit).collect();
            assert_eq!(s, digits.parse::<i32>().unwrap(), "{k:?}");
        }
        for s in [SA_NULL_POINTER, SA_INVALID_ARGUMENT, SA_BUFFER_TOO_SMALL, SA_PANIC, SA_INVALID_STATE, SA_NOT_FOUND] {
            assert_eq!(code_of(s), format!("SA{s}"));
        }
        for k in [
            RtErrorKind::NoRuntime,
            RtErrorKind::Limit,
            RtErrorKind::Device,
            RtErrorKind::UnknownHandle,
            RtErrorKind::Invalid,
            RtErrorKind::Null,
            RtErrorKind::State,
            RtErrorKind::OutOfMemory,
        ] {
            let s = status_of_runtime(k);
            assert_eq!(code_of(s), format!("SA{s}"), "{k:?}");
        }
    }

    #[test]
    fn every_description_is_nul_terminated_and_named() {
        for s in (0..20000).filter(|&s| describe(s).is_some()) {
            let (text, code) = describe(s).unwrap();
            assert!(text.ends_with('\0') && code.ends_with('\0'), "{s}");
            assert_eq!(text.matches('\0').count(), 1, "{s}");
            assert!(text.starts_with("SA_"), "{s}");
        }
    }
}
