//! Dashpots, spec `hertz-pfc.txt` eqs (13)–(14), all four modes M_d.
//! Twin of `shaders/contact/damping.wgsl`.

use glam::DVec3;

use super::geometry::ContactGeometry;
use super::normal::NormalForce;
use super::params::PairParams;
use crate::layout::consts::{DP_MODE_BOTH, DP_MODE_NO_TENSION, DP_MODE_SLIP_CUT};

/// Dashpot forces of one contact.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DashpotForce {
    /// F_n^d in the spec's sign (tension positive), eq (13).
    pub fn_d: f64,
    /// Shear dashpot force F_s^d on j, eq (14).
    pub fs_d: DVec3,
}

/// Eqs (13)–(14). `k_s` and `slip` come from the shear part of the same step.
pub fn dashpot(p: &PairParams, g: &ContactGeometry, normal: &NormalForce, k_s: f64, slip: bool) -> DashpotForce {
    let gap_factor = if p.dp_alpha == 0.0 { 1.0 } else { g.gap.abs().powf(p.dp_alpha) };
    // eq (13): F* = 2 β_n √(m_c k_n) |g_c|^α_d δ̇_n; no-tension modes cap F_n^h + F_n^d ≤ 0
    let f_star = 2.0 * p.dp_nratio * (g.m_c * normal.k_n).sqrt() * gap_factor * g.vel_normal;
    // `limit_damping` (LAMMPS `granular`) is mode 3 whatever `dp_mode` says: no tension, and no
    // shear dashpot while sliding
    let limited = p.limit_damping;
    let no_tension = p.dp_mode == DP_MODE_NO_TENSION || p.dp_mode == DP_MODE_BOTH || limited;
    let fn_d = if no_tension { f_star.min(-normal.fn_h) } else { f_star };
    // eq (14): shear dashpot, cut while sliding in modes 2 and 3
    let slip_cut = slip && (p.dp_mode == DP_MODE_SLIP_CUT || p.dp_mode == DP_MODE_BOTH || limited);
    let fs_d = if slip_cut { DVec3::ZERO } else { g.vel_shear * (-2.0 * p.dp_sratio * (g.m_c * k_s).sqrt() * gap_factor) };
    DashpotForce { fn_d, fs_d }
}
