//! Runtime errors. Each kind maps to one `sa_status` code of the C ABI (100…105).

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RtErrorKind {
    /// No device runtime: none registered and the Ascend symbols are not in the process.
    NoRuntime,
    /// A count limit was exceeded (2024 streams, 4096 events, 1024 notifies, 256 models).
    Limit,
    /// The device runtime returned an error code.
    Device,
    /// An argument or a registered table is invalid (wrong size/version, missing entry,
    /// unknown stream, mixed external allocators).
    Invalid,
    /// A required pointer was null.
    Null,
    /// A panic was caught at the C boundary. Always a bug.
    Panic,
}

impl RtErrorKind {
    /// The C status code (`SA_RT_*` in stream_alloc_runtime.h).
    pub fn status(self) -> i32 {
        match self {
            RtErrorKind::NoRuntime => 100,
            RtErrorKind::Limit => 101,
            RtErrorKind::Device => 102,
            RtErrorKind::Invalid => 103,
            RtErrorKind::Null => 104,
            RtErrorKind::Panic => 105,
        }
    }
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
    pub fn status(&self) -> i32 {
        self.kind.status()
    }
}

impl fmt::Display for RtError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RtError {}

pub type RtResult<T> = Result<T, RtError>;
