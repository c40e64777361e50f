//! Talus: a discrete-element-method engine with a wgpu GPU step loop and an f64 CPU reference.
//!
//! Load a scene (`scene::load`), pick a backend (`cpu::CpuBackend`, `gpu::GpuBackend`),
//! step it and read state and energies through the `Backend` trait. See ARCHITECTURE.md.

pub mod backend;
pub mod bench;
pub mod bench_scene;
pub mod checkpoint;
pub mod chung_ooi;
pub mod clump_bench;
pub mod cohesion_bench;
pub mod contact;
pub mod cpu;
pub mod error;
pub mod exact_sum;
pub mod flow;
pub mod gpu;
pub mod layout;
pub mod measure;
pub mod mesh;
pub mod model;
pub mod motion;
pub mod output;
pub mod plot;
pub mod render;
pub mod resume;
pub mod rigid;
pub mod ranks;
pub mod run;
pub mod scene;
pub mod setup;
pub mod simulation;
pub mod verify;

pub use backend::{Backend, Energies, Snapshot, WallLoad};
pub use error::{Result, TalusError};
pub use setup::Setup;
