//! Contact parameters of the Hertz model for one material pair (spec `hertz-pfc.txt`, table 2),
//! and their inheritance from the two materials (eqs 18–20).

use crate::gpu_struct;
use crate::setup::Material;

/// Hertz + dashpot parameters of a material pair, with the spec's names.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairParams {
    /// G, effective shear modulus (Pa).
    pub hz_shear: f64,
    /// ν, effective Poisson's ratio.
    pub hz_poiss: f64,
    /// μ, friction coefficient.
    pub fric: f64,
    /// α_h, normal force exponent (default 1.5).
    pub hz_alpha: f64,
    /// M_s, shear-force scaling mode (0 or 1), eq (9).
    pub hz_mode: u32,
    /// g_r, reference gap (m).
    pub rgap: f64,
    /// β_n, normal critical damping ratio.
    pub dp_nratio: f64,
    /// β_s, shear critical damping ratio.
    pub dp_sratio: f64,
    /// α_d, dashpot exponent.
    pub dp_alpha: f64,
    /// M_d, dashpot mode 0–3, eqs (13)–(14).
    pub dp_mode: u32,
}

impl Default for PairParams {
    /// The spec's defaults (table 2).
    fn default() -> Self {
        PairParams {
            hz_shear: 0.0,
            hz_poiss: 0.0,
            fric: 0.0,
            hz_alpha: 1.5,
            hz_mode: 0,
            rgap: 0.0,
            dp_nratio: 0.0,
            dp_sratio: 0.0,
            dp_alpha: 0.0,
            dp_mode: 0,
        }
    }
}

/// Effective (G, ν) of a contact between two materials, spec eqs (18)–(19).
pub fn inherit_shear_poisson(g1: f64, nu1: f64, g2: f64, nu2: f64) -> (f64, f64) {
    let e_star = 1.0 / ((1.0 - nu1) / (2.0 * g1) + (1.0 - nu2) / (2.0 * g2));
    let g_star = 1.0 / ((2.0 - nu1) / g1 + (2.0 - nu2) / g2);
    let nu = (4.0 * g_star - e_star) / (2.0 * g_star - e_star);
    let g = 2.0 * g_star * (2.0 - nu);
    (g, nu)
}

/// Effective friction, spec eq (20).
pub fn inherit_friction(mu1: f64, mu2: f64) -> f64 {
    mu1.min(mu2)
}

/// `hz_shear`, `hz_poiss` and `fric` inherited from two materials; the rest from `base`.
pub fn inherit(a: &Material, b: &Material, base: PairParams) -> PairParams {
    let (g, nu) = inherit_shear_poisson(a.hz_shear, a.hz_poiss, b.hz_shear, b.hz_poiss);
    PairParams { hz_shear: g, hz_poiss: nu, fric: inherit_friction(a.fric, b.fric), ..base }
}

gpu_struct! {
    /// f32 twin of `PairParams` as the shaders see it.
    pub struct PairParamsGpu {
        hz_shear: f32 => "f32",
        hz_poiss: f32 => "f32",
        fric: f32 => "f32",
        hz_alpha: f32 => "f32",
        rgap: f32 => "f32",
        dp_nratio: f32 => "f32",
        dp_sratio: f32 => "f32",
        dp_alpha: f32 => "f32",
        hz_mode: u32 => "u32",
        dp_mode: u32 => "u32",
        _pad0: u32 => "u32",
        _pad1: u32 => "u32",
    }
}

impl From<&PairParams> for PairParamsGpu {
    fn from(p: &PairParams) -> Self {
        PairParamsGpu {
            hz_shear: p.hz_shear as f32,
            hz_poiss: p.hz_poiss as f32,
            fric: p.fric as f32,
            hz_alpha: p.hz_alpha as f32,
            rgap: p.rgap as f32,
            dp_nratio: p.dp_nratio as f32,
            dp_sratio: p.dp_sratio as f32,
            dp_alpha: p.dp_alpha as f32,
            hz_mode: p.hz_mode,
            dp_mode: p.dp_mode,
            _pad0: 0,
            _pad1: 0,
        }
    }
}
