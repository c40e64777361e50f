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
use super::pipelines::{ContactVariant, Pipelines};
use super::split::SplitLayout;
use crate::error::Result;

/// The device, and its pipelines by ((mesh walls, adhesion, contact variant), split layout).
struct Shared {
    ctx: GpuContext,
    pipelines: Vec<((bool, bool, ContactVariant), SplitLayout, Arc<Pipelines>)>,
}

static SHARED: Mutex<Option<Shared>> = Mutex::new(None);

fn with_shared<T>(f: impl FnOnce(&mut Shared) -> Result<T>) -> Result<T> {
    let mut guard = SHARED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if guard.is_none() {
        *guard = Some(Shared { ctx: open_context()?, pipelines: Vec::new() });
    }
    f(guard.as_mut().expect("opened above"))
}

/// The process's device, opened on first use.
pub fn shared_context() -> Result<GpuContext> {
    with_shared(|s| Ok(s.ctx.clone()))
}

/// The process's pipelines for scenes with or without mesh walls and adhesion, contact code
/// for `contact`, and arrays cut as `split` says, compiled on first use (for a new `contact`
/// only the contact pipelines, `Pipelines::with_contact`).
pub fn shared_pipelines(mesh_walls: bool, adhesion: bool, contact: ContactVariant, split: &SplitLayout) -> Result<Arc<Pipelines>> {
    with_shared(|s| {
        let key = (mesh_walls, adhesion, contact);
        if let Some((_, _, p)) = s.pipelines.iter().find(|(k, l, _)| *k == key && l == split) {
            return Ok(Arc::clone(p));
        }
        let sibling = s.pipelines.iter().find(|((m, a, _), l, _)| (*m, *a) == (mesh_walls, adhesion) && l == split);
        let p = Arc::new(match sibling {
            Some((_, _, p)) => p.with_contact(&s.ctx, contact)?,
            None => Pipelines::new(&s.ctx, mesh_walls, adhesion, contact, split)?,
        });
        s.pipelines.push((key, split.clone(), Arc::clone(&p)));
        Ok(p)
    })
}
