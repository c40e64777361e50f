//! Contact history: what an active contact carries from one step to the next. A new contact
//! starts from `History::NEW`; an ended contact's history is dropped. The GPU keeps the f32 twin
//! `HistoryGpu` in its hash table, the CPU the f64 `History` in per-owner lists.

use glam::DVec3;

use crate::gpu_struct;

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
    /// Shear (tangential) spring stiffness of the previous step, with which `shear` was stored.
    pub shear_stiffness: f64,
    /// Normal dashpot force F_n^d of the previous step (spec sign, tension positive): the
    /// step's dashpot work is booked trapezoidally, half with this force (`energy::dashpot_work`).
    /// f32 here and below: these only book energy, never move a particle, and f32 keeps the
    /// CPU backend's memory (one `History` per list slot) within its budget.
    pub dashpot_normal: f32,
    /// The shear dashpot force F_s^d on j of the previous step, for the same booking: its two
    /// components in the tangent basis of that step's normal (`geometry::tangent_basis`).
    pub dashpot_shear: [f32; 2],
}

impl History {
    pub const NEW: History = History { shear: DVec3::ZERO, normal_force: 0.0, impact_velocity: 0.0, established: 0.0, shear_stiffness: 0.0, dashpot_normal: 0.0, dashpot_shear: [0.0; 2] };
}

gpu_struct! {
    /// f32 twin of `History` (48 bytes).
    pub struct HistoryGpu {
        shear: [f32; 3] => "vec3<f32>",
        normal_force: f32 => "f32",
        impact_velocity: f32 => "f32",
        established: f32 => "f32",
        shear_stiffness: f32 => "f32",
        dashpot_normal: f32 => "f32",
        dashpot_shear_1: f32 => "f32",
        dashpot_shear_2: f32 => "f32",
        _pad1: f32 => "f32",
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
            shear_stiffness: h.shear_stiffness as f32,
            dashpot_normal: h.dashpot_normal,
            dashpot_shear_1: h.dashpot_shear[0],
            dashpot_shear_2: h.dashpot_shear[1],
            _pad1: 0.0,
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
            shear_stiffness: h.shear_stiffness as f64,
            dashpot_normal: h.dashpot_normal,
            dashpot_shear: [h.dashpot_shear_1, h.dashpot_shear_2],
        }
    }
}
