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

/// The device, and its pipelines without and with the mesh-wall loops (`MESH_WALLS`).
struct Shared {
    ctx: GpuContext,
    pipelines: [Option<Arc<Pipelines>>; 2],
}

static SHARED: Mutex<Option<Shared>> = Mutex::new(None);

/// The process's device and the pipelines for scenes with or without mesh walls, opened and
/// compiled on first use.
pub fn shared_device(mesh_walls: bool) -> Result<(GpuContext, Arc<Pipelines>)> {
    let mut guard = SHARED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if guard.is_none() {
        *guard = Some(Shared { ctx: open_context()?, pipelines: [None, None] });
    }
    let shared = guard.as_mut().expect("opened above");
    let slot = &mut shared.pipelines[mesh_walls as usize];
    if slot.is_none() {
        *slot = Some(Arc::new(Pipelines::new(&shared.ctx, mesh_walls)?));
    }
    Ok((shared.ctx.clone(), Arc::clone(slot.as_ref().expect("compiled above"))))
}
