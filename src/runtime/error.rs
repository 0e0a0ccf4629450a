//! Runtime errors. Each kind maps to one `sa_status` of the C ABI (`capi::status`): the
//! runtime range `SA4000`… for what only the runtime half can meet, the common argument and
//! panic statuses for the rest.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RtErrorKind {
    /// No device runtime: none registered and the Ascend symbols are not in the process.
    NoRuntime,
    /// A count limit was exceeded (2024 streams, 4096 events, 1024 notifies, 256 models).
    Limit,
    /// The device runtime returned an error code.
    Device,
    /// An argument or a registered table is invalid (wrong size/version, missing entry, bad
    /// pool options, mixed external allocators).
    Invalid,
    /// A device handle was not created by the pool or allocator it was handed to.
    UnknownHandle,
    /// A required pointer was null.
    Null,
    /// The call does not fit the object's state (a block freed twice, a stream key reused with
    /// other flags).
    State,
    /// Device memory ran out after the memory pool synchronised its pending events, released
    /// their blocks and retried once.
    OutOfMemory,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RtError {
    pub kind: RtErrorKind,
    /// The device runtime's own code for `Device` errors, else 0.
    pub runtime_code: i32,
    pub message: String,
}

impl RtError {
    pub fn new(kind: RtErrorKind, message: impl Into<String>) -> Self {
        RtError { kind, runtime_code: 0, message: message.into() }
    }
    pub fn device(call: &str, code: i32) -> Self {
        RtError {
            kind: RtErrorKind::Device,
            runtime_code: code,
            message: format!("{call} failed with runtime error {code}"),
        }
    }
}

impl fmt::Display for RtError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RtError {}

pub type RtResult<T> = Result<T, RtError>;
