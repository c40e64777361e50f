//! Output files of a run: `energy.csv`, `walls.csv`, `outflow.csv`, `summary.json`, VTU snapshots with a `.pvd` index (and, with rigid clumps, a bodies file beside each).
//! Every file is replaced atomically (temp file + rename), so an interrupted run leaves only
//! complete files. Formats are described in docs/output.md.

pub mod atomic;
pub mod bodies_csv;
pub mod csv_log;
pub mod energy_csv;
pub mod outflow_csv;
pub mod read;
pub mod summary;
pub mod vtu;
pub mod walls_csv;

pub use atomic::write_atomic;
pub use energy_csv::EnergyCsv;
pub use outflow_csv::OutflowCsv;
pub use summary::{EnergySummary, FlowSummary, RestSummary, Summary};
pub use vtu::{write_vtu, PvdIndex, VtuEncoding};
pub use walls_csv::WallsCsv;
