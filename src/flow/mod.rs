//! Particles entering and leaving a run: insertion regions (`"insert"` in a scene) and outlets
//! (`"outlets"`).
//!
//! Both act at batch boundaries (the output cadence, where a readback is allowed anyway): the
//! run reads the backend's whole state (`Backend::export_state`), removes the particles in the
//! outlets, compacts ids (survivors keep their order, history keys are remapped), appends the
//! newly inserted particles and hands the state back (`Backend::import_state`). Shaders never
//! see a changing particle count inside a batch. Every decision depends only on the state and
//! a seeded random stream, so a backend's run stays deterministic.
//!
//! The scene's data (`Insertion`, `Outlet`, `Region`) and the exchanged state
//! (`ParticleState`) live in `src/model/`.

pub mod driver;
pub mod insert;
pub mod outlet;

pub use driver::{FlowDriver, FlowState, FlowTotals};
