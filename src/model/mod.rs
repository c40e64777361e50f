//! The resolved scene's data, below the code that parses it (`src/scene/`) and the code that
//! runs it (`src/flow/`, `src/measure/`, `src/cpu/`, `src/gpu/`): materials, radius
//! distributions, regions, insertions and outlets, measurement settings, rigid clump templates
//! (`clump.rs`), and the particle state that backends export and import. `Setup` itself
//! (`src/setup.rs`) sits in the same layer and holds these. `material.rs` is a layer of its own below `src/contact/` (pair
//! parameters inherit from materials); see ARCHITECTURE.md, "Layers".

pub mod body;
pub mod checks;
pub mod clump;
pub mod contact_record;
pub mod distribution;
pub mod exchange;
pub mod flow;
pub mod material;
pub mod measure;
pub mod overlap;
pub mod region;
pub mod state;
