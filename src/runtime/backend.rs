//! Which device runtime the allocators call: a registered table, else the backend
//! `SA_RUNTIME` selects, in the resolution order of [`super::seam`]'s docs. It sits above the
//! table ([`super::seam`]) and the backends that fill it ([`super::seam::ascend`],
//! [`super::cuda`]), so neither backend names the other.

use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use super::error::{RtError, RtErrorKind, RtResult};
use super::seam::{Runtime, RuntimeOps, RuntimeSource, ascend};

static REGISTERED: RwLock<Option<Arc<Runtime>>> = RwLock::new(None);
static ASCEND: Mutex<Option<Arc<Runtime>>> = Mutex::new(None);

/// Which runtime [`Runtime::current`] resolves when none is registered: `SA_RUNTIME=cuda`
/// selects the CUDA driver ([`super::cuda`]); unset, empty or `ascend` keeps the Ascend
/// lookup of the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Ascend,
    Cuda,
}

impl Backend {
    /// The backend `SA_RUNTIME` selects; an unknown value is an error naming the valid ones.
    pub fn from_env() -> RtResult<Backend> {
        match std::env::var("SA_RUNTIME") {
            Err(_) => Ok(Backend::Ascend),
            Ok(v) => match v.trim() {
                "" | "ascend" => Ok(Backend::Ascend),
                "cuda" => Ok(Backend::Cuda),
                other => Err(RtError::new(
                    RtErrorKind::Invalid,
                    format!("SA_RUNTIME='{other}' is not a device runtime: use 'ascend' (the default) or 'cuda'"),
                )),
            },
        }
    }
}

impl Runtime {
    /// Registers a host table for every allocator created from now on; `None` returns to
    /// automatic resolution. Allocators that already created handles keep their table.
    pub fn register(ops: Option<&RuntimeOps>) -> RtResult<()> {
        let rt = ops.map(|o| Runtime::from_ops(o, RuntimeSource::Registered)).transpose()?;
        *REGISTERED.write() = rt;
        Ok(())
    }

    /// The runtime in use now, in the resolution order of [`super::seam`]'s docs.
    pub fn current() -> RtResult<Arc<Runtime>> {
        if let Some(rt) = REGISTERED.read().as_ref() {
            return Ok(rt.clone());
        }
        if Backend::from_env()? == Backend::Cuda {
            return super::cuda::runtime();
        }
        let mut cached = ASCEND.lock();
        if let Some(rt) = cached.as_ref() {
            return Ok(rt.clone());
        }
        // Only success is cached: a runtime loaded later is still found.
        let rt = ascend::resolve()?;
        *cached = Some(rt.clone());
        Ok(rt)
    }
}
