//! One device and one set of compiled pipelines per process, shared by every `GpuBackend`
//! made with `GpuBackend::new`.
//!
//! Compiling the pipelines once matters on lavapipe: llvmpipe keeps the memory mappings of
//! every JIT-compiled shader until the process ends, so a process that builds many backends
//! (a test binary running a restitution table) otherwise exhausts `vm.max_map_count` (65,530
//! mappings; measured: ~400 per backend) and LLVM aborts with "Unable to allocate section
//! memory". Backends on one device are independent (own buffers and bind groups; error scopes
//! are thread-local in wgpu 30).

use std::sync::{Arc, Mutex};

use super::context::{open_context, GpuContext};
use super::pipelines::Pipelines;
use crate::error::Result;

static SHARED: Mutex<Option<(GpuContext, Arc<Pipelines>)>> = Mutex::new(None);

/// The process's device and pipelines, opened and compiled on first use.
pub fn shared_device() -> Result<(GpuContext, Arc<Pipelines>)> {
    let mut shared = SHARED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((ctx, pipelines)) = shared.as_ref() {
        return Ok((ctx.clone(), Arc::clone(pipelines)));
    }
    let ctx = open_context()?;
    let pipelines = Arc::new(Pipelines::new(&ctx)?);
    *shared = Some((ctx.clone(), Arc::clone(&pipelines)));
    Ok((ctx, pipelines))
}
