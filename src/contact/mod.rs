//! Contact model parts, each the twin of `shaders/contact/<part>.wgsl` (same function names,
//! same statement order). The Hertz model of `hertz-pfc.txt` is the preset in `hertz.rs`.
//!
//! Sign conventions (both twins): the contact is between body i and body j (a wall is always j);
//! `normal` points from i to j; forces are those acting on j (i feels the opposite);
//! normal forces follow the spec's sign (tension positive, so a compressive Hertz force is < 0).

pub mod history;
pub mod params;
pub mod geometry;
pub mod normal;
pub mod tangential;
pub mod damping;
pub mod energy;
pub mod hertz;
pub mod damping_hysteretic;
pub mod normal_hooke;
pub mod tangential_linear;
pub mod hysteretic;
pub mod hooke;
pub mod rolling;
pub mod normal_mindlin;
pub mod tangential_mindlin;
pub mod normal_viscous;
pub mod hertz_mindlin;
pub mod hertz_viscous;
pub mod output;
pub mod model;
pub mod calibration;
pub mod adhesion;
pub mod hertz_mindlin_adhesive;
pub mod adhesive;

pub use geometry::{ball_ball_geometry, ball_wall_geometry, ContactGeometry};
pub use hertz::hertz_contact;
pub use model::{contact_force, ended_contact_work};
pub use output::ContactOutput;
pub use normal::contact_active;
pub use history::History;
pub use params::{ContactModel, PairParams};
