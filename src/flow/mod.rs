//! Particles entering and leaving a run: insertion regions (`"insert"` in a scene) and outlets
//! (`"outlets"`).
//!
//! Both act at batch boundaries (the output cadence): the run removes the particles in the
//! outlets, compacts ids (survivors keep their order, history keys are remapped), appends the
//! newly inserted particles and continues. A backend that can (the GPU's, `gpu::flow`) hands out
//! only the particles near the outlets and insertion regions (`Backend::exchange_view`) and
//! makes the change itself (`Backend::apply_exchange`); otherwise the run reads its whole state
//! (`Backend::export_state`), changes it and hands it back (`Backend::import_state`). The
//! decisions are the same either way. Shaders never see a changing particle count inside a
//! batch. Every decision depends only on the state and
//! a seeded random stream, so a backend's run stays deterministic.
//!
//! The scene's data (`Insertion`, `Outlet`, `Region`) and the exchanged state
//! (`ParticleState`) live in `src/model/`.

pub mod driver;
pub mod insert;
pub mod outlet;

pub use driver::{FlowDriver, FlowState, FlowTotals};
