//! Contact history: what an active contact carries from one step to the next. A new contact
//! starts from `History::NEW`; an ended contact's history is dropped. The GPU keeps the f32 twin
//! `HistoryGpu` in its hash table, the CPU the f64 `History` in per-owner lists.

use glam::DVec3;

use crate::gpu_struct;

/// 64 bytes (the CPU's list keeps one per slot, aligned to a cache line: `SlotHistory`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct History {
    /// Shear force F_s of the previous step, on body j (hertz-pfc eq 7's (F_s)₀).
    pub shear: DVec3,
    /// |F_n| of the previous step (hertz-pfc eq 9's (F_n^h)₀).
    pub normal_force: f64,
    /// Normal approach speed when the contact became active (hysteretic-pfc δ̇⁻, eq 6).
    pub impact_velocity: f64,
    /// 0 for a contact that is new in this step, 1 once it has been stored (a flag: f32 keeps
    /// the struct, one per list slot, at 64 bytes).
    pub established: f32,
    /// Compliance 1/k of the shear (tangential) spring of the previous step, with which `shear`
    /// was stored (`energy::compliance`; 0 with no spring): its strain energy is
    /// ½|shear|² × this, with no division (`energy::stiffness_work`).
    pub shear_compliance: f64,
    /// The dashpot force on j of the previous step, F_s^d − F_n^d n (spec sign of F_n^d,
    /// tension positive): the step's dashpot work is booked trapezoidally, half with this force
    /// (`energy::dashpot_work`). f32: it only books energy, never moves a particle, and f32
    /// keeps the CPU backend's memory (one `History` per list slot, 64 bytes) within its budget.
    pub dashpot: [f32; 3],
}

impl History {
    pub const NEW: History = History { shear: DVec3::ZERO, normal_force: 0.0, impact_velocity: 0.0, established: 0.0, shear_compliance: 0.0, dashpot: [0.0; 3] };
}

/// f64 values of a `History` as a row (checkpoints' `contact_history` array, the contact records
/// migrating between MPI ranks): exact, the f32 fields widened.
pub const HISTORY_VALUES: usize = 10;

pub fn history_row(h: &History) -> [f64; HISTORY_VALUES] {
    [h.shear.x, h.shear.y, h.shear.z, h.normal_force, h.impact_velocity, h.established as f64, h.shear_compliance, h.dashpot[0] as f64, h.dashpot[1] as f64, h.dashpot[2] as f64]
}

pub fn history_of(r: &[f64; HISTORY_VALUES]) -> History {
    History { shear: DVec3::new(r[0], r[1], r[2]), normal_force: r[3], impact_velocity: r[4], established: r[5] as f32, shear_compliance: r[6], dashpot: [r[7] as f32, r[8] as f32, r[9] as f32] }
}

gpu_struct! {
    /// f32 twin of `History` (48 bytes).
    pub struct HistoryGpu {
        shear: [f32; 3] => "vec3<f32>",
        normal_force: f32 => "f32",
        impact_velocity: f32 => "f32",
        established: f32 => "f32",
        shear_compliance: f32 => "f32",
        _pad1: f32 => "f32",
        dashpot: [f32; 3] => "vec3<f32>",
        _pad2: f32 => "f32",
    }
}

impl From<&History> for HistoryGpu {
    fn from(h: &History) -> Self {
        HistoryGpu {
            shear: [h.shear.x as f32, h.shear.y as f32, h.shear.z as f32],
            normal_force: h.normal_force as f32,
            impact_velocity: h.impact_velocity as f32,
            established: h.established,
            shear_compliance: h.shear_compliance as f32,
            _pad1: 0.0,
            dashpot: h.dashpot,
            _pad2: 0.0,
        }
    }
}

impl From<&HistoryGpu> for History {
    fn from(h: &HistoryGpu) -> Self {
        History {
            shear: DVec3::new(h.shear[0] as f64, h.shear[1] as f64, h.shear[2] as f64),
            normal_force: h.normal_force as f64,
            impact_velocity: h.impact_velocity as f64,
            established: h.established,
            shear_compliance: h.shear_compliance as f64,
            dashpot: h.dashpot,
        }
    }
}
