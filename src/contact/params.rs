//! Contact parameters of the Hertz model for one material pair (spec `hertz-pfc.txt`, table 2),
//! and their inheritance from the two materials (eqs 18–20).

use crate::gpu_struct;
use crate::layout::consts;
use crate::model::material::Material;

/// The named contact models of the specs, each a preset of the contact parts
/// (`docs/contact-models.md` has a card per model).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u32)]
pub enum ContactModel {
    /// `hertz-pfc.txt`: Hertz–Mindlin with shear history and dashpots.
    #[default]
    Hertz = consts::MODEL_HERTZ,
    /// `hysteretic-pfc.txt`: Hertz elastic part, hysteretic normal dashpot χ δ^α δ̇.
    Hysteretic = consts::MODEL_HYSTERETIC,
    /// `hooke-aspherix.txt`: linear spring–dashpot.
    Hooke = consts::MODEL_HOOKE,
    /// `hertz-mindlin-musen.txt`: Hertz–Mindlin with Tsuji damping and rolling friction.
    HertzMindlin = consts::MODEL_HERTZ_MINDLIN,
    /// `hertz-woo.rst`: viscous Hertz α(ε) √(m* k_n0) δ^¼ δ̇.
    HertzViscous = consts::MODEL_HERTZ_VISCOUS,
}

impl ContactModel {
    pub const ALL: [ContactModel; 5] = [ContactModel::Hertz, ContactModel::Hysteretic, ContactModel::Hooke, ContactModel::HertzMindlin, ContactModel::HertzViscous];

    /// The name used in scene files.
    pub fn name(self) -> &'static str {
        match self {
            ContactModel::Hertz => "hertz",
            ContactModel::Hysteretic => "hysteretic",
            ContactModel::Hooke => "hooke",
            ContactModel::HertzMindlin => "hertz_mindlin",
            ContactModel::HertzViscous => "hertz_viscous",
        }
    }

    pub fn from_name(name: &str) -> Option<ContactModel> {
        ContactModel::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The model of its GPU code (`PairParamsGpu::model`, `MODEL_*`).
    pub fn from_code(code: u32) -> Option<ContactModel> {
        ContactModel::ALL.into_iter().find(|m| *m as u32 == code)
    }
}

/// The adhesion part of a pair (`contacts` key `adhesion`; docs/contact-models.md has a card
/// per part). JKR and DMT change the Hertz spring and so go with `hertz_mindlin` only; SJKR,
/// SJKR2 and the capillary bridge add their force to any model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u32)]
pub enum Adhesion {
    /// Dry contacts.
    #[default]
    None = consts::ADHESION_NONE,
    /// Johnson–Kendall–Roberts (`surface_energy`): made at touch, held to the break gap.
    Jkr = consts::ADHESION_JKR,
    /// Derjaguin–Muller–Toporov (`surface_energy`): a constant pull while in touch.
    Dmt = consts::ADHESION_DMT,
    /// LIGGGHTS's simplified JKR (`cohesion_energy_density` × the exact lens area).
    Sjkr = consts::ADHESION_SJKR,
    /// LIGGGHTS's `sjkr2` (`cohesion_energy_density` × 2πδR*).
    Sjkr2 = consts::ADHESION_SJKR2,
    /// Willett's capillary bridge (`liquid_volume`, `surface_tension`, `contact_angle`).
    Capillary = consts::ADHESION_CAPILLARY,
}

impl Adhesion {
    pub const ALL: [Adhesion; 6] = [Adhesion::None, Adhesion::Jkr, Adhesion::Dmt, Adhesion::Sjkr, Adhesion::Sjkr2, Adhesion::Capillary];

    /// The name used in scene files.
    pub fn name(self) -> &'static str {
        match self {
            Adhesion::None => "none",
            Adhesion::Jkr => "jkr",
            Adhesion::Dmt => "dmt",
            Adhesion::Sjkr => "sjkr",
            Adhesion::Sjkr2 => "sjkr2",
            Adhesion::Capillary => "capillary",
        }
    }

    pub fn from_name(name: &str) -> Option<Adhesion> {
        Adhesion::ALL.into_iter().find(|m| m.name() == name)
    }

    /// The adhesion part of its GPU code (`PairParamsGpu::adhesion`, `ADHESION_*`).
    pub fn from_code(code: u32) -> Option<Adhesion> {
        Adhesion::ALL.into_iter().find(|m| *m as u32 == code)
    }

    /// JKR and DMT replace the Hertz spring of `hertz_mindlin` (`hertz_mindlin_adhesive.rs`);
    /// the others are added to any model (`adhesive.rs`).
    pub fn changes_spring(self) -> bool {
        matches!(self, Adhesion::Jkr | Adhesion::Dmt)
    }
}

/// Parameters of the contact between a material pair: the model and every model's parameters
/// with the spec's names (a model reads only its own). Elastic properties are resolved per
/// pair (`inherit`); quantities that depend on the two bodies (R*, m*) are formed per contact.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairParams {
    pub model: ContactModel,
    // ---- shared by every model
    /// μ, sliding friction coefficient (`fric`; μ_sl in hertz-mindlin-musen).
    pub fric: f64,
    /// g_r, reference gap (m): active iff g_c − g_r ≤ 0 (hertz; 0 for the others).
    pub rgap: f64,
    /// μ_r, rolling friction coefficient (`rolling_fric`; μ_ro in hertz-mindlin-musen), any model.
    pub rolling_fric: f64,
    // ---- Hertz elastic group (hertz, hysteretic; E* = G/(1−ν) for the others)
    /// G, effective shear modulus (Pa), `hz_shear`.
    pub hz_shear: f64,
    /// ν, effective Poisson's ratio, `hz_poiss`.
    pub hz_poiss: f64,
    /// α_h, normal force exponent (default 1.5), `hz_alpha`.
    pub hz_alpha: f64,
    /// M_s, shear-force scaling mode (0 or 1), eq (9), `hz_mode`.
    pub hz_mode: u32,
    /// G* of Mindlin, ((2−ν₁)/G₁ + (2−ν₂)/G₂)⁻¹ (Pa): tangential stiffness 8 G* √(R* δ).
    pub g_star: f64,
    // ---- PFC dashpot group (hertz) and hysteretic dashpot
    /// β_n, normal critical damping ratio.
    pub dp_nratio: f64,
    /// β_s, shear critical damping ratio.
    pub dp_sratio: f64,
    /// α_d, dashpot exponent.
    pub dp_alpha: f64,
    /// M_d, dashpot mode: 0–3 for hertz (eqs 13–14), 0–2 for hysteretic (eq 6).
    pub dp_mode: u32,
    /// e_n, target restitution of the hysteretic dashpot.
    pub dp_en: f64,
    /// e*_n, minimal restitution of hysteretic mode 1.
    pub dp_enmin: f64,
    // ---- restitution-based models (hooke, hertz_mindlin, hertz_viscous)
    /// e, `coefficientRestitution` (ε in hertz-woo).
    pub restitution: f64,
    // ---- hooke
    /// k_n, `elasticStiffness` (N/m); 0 when not given.
    pub elastic_stiffness: f64,
    /// v_0, `characteristicVelocity` (m/s); 0 when not given.
    pub characteristic_velocity: f64,
    /// `useCharacteristicVelocity`: prefer v_0 over k_n when both are given.
    pub use_characteristic_velocity: bool,
    /// `tangential_damping`.
    pub tangential_damping: bool,
    /// `ktToKnUser`: k_t = 2/7 k_n instead of k_t = k_n.
    pub kt_to_kn_user: bool,
    /// `limitForce`: the normal force is never attractive.
    pub limit_force: bool,
    /// `viscous`: restitution from the local Stokes number (Legendre et al.).
    pub viscous: bool,
    /// μ_f, `FluidViscosity` (Pa s).
    pub fluid_viscosity: f64,
    /// c_S, `CriticalStokes`.
    pub critical_stokes: f64,
    /// e_max, `MaximumRestitution`.
    pub maximum_restitution: f64,
    // ---- hertz_viscous
    /// `noAttraction`: ignore a total normal force that would be attractive (default on).
    pub no_attraction: bool,
    // ---- hooke, hertz_mindlin, hertz_viscous
    /// `limit_damping` (LAMMPS `granular`): the total normal force is never attractive and the
    /// Coulomb cap applies to the total tangential force, spring plus dashpot (default off).
    pub limit_damping: bool,
    // ---- adhesion (any model; JKR and DMT with hertz_mindlin)
    /// The adhesion part (`adhesion`, default none).
    pub adhesion: Adhesion,
    /// γ, surface energy (J/m²) of JKR and DMT, the work of adhesion being w = 2γ
    /// (`surface_energy`): pull-off 3πγR* (JKR), 4πγR* (DMT).
    pub surface_energy: f64,
    /// k_c, cohesion energy density (J/m³) of SJKR and SJKR2 (`cohesion_energy_density`).
    pub cohesion_energy_density: f64,
    /// V, liquid volume of a capillary bridge (m³, `liquid_volume`).
    pub liquid_volume: f64,
    /// γ_l, liquid surface tension (N/m, `surface_tension`).
    pub surface_tension: f64,
    /// θ, contact angle of the liquid on both surfaces (rad, [0, π/2], `contact_angle`).
    pub contact_angle: f64,
    /// Which adhesion keys the scene gave for this pair (bits in the order of
    /// `scene::contacts`' list), for the check that each belongs to the pair's part; never
    /// read by a contact.
    pub given_adhesion_keys: u32,
    // ---- every model: the scene's `energy_tracking`, copied into every pair
    /// Whether contacts book their slip, dashpot and stiffness work (scene key
    /// `energy_tracking`, default on). Off, a contact step computes its forces, torques,
    /// history and strain energy only (as PFC without `model energy mechanical on`); the
    /// trajectory is the same bit for bit.
    pub energy_tracking: bool,
    // ---- derived once per pair (`PairParams::prepared`), never read from a scene
    /// Tsuji's α of `restitution` for `hertz_mindlin` (`normal_mindlin::tsuji_alpha`), formed
    /// once per pair instead of once per contact step; `None` until prepared (then
    /// `tsuji_alpha()` computes it on the spot).
    pub tsuji_alpha: Option<f64>,
    /// E* = G/(1−ν) (`e_star()`), formed once per pair; `None` until prepared.
    pub prepared_e_star: Option<f64>,
    /// η_t/η_n = √(4G*/E*) of `hertz_mindlin` (`mindlin_damping_ratio()`), formed once per
    /// pair; `None` until prepared.
    pub mindlin_damping_ratio: Option<f64>,
    /// The restitution the dashpot formulas of `hooke`, `hertz_mindlin` and `hertz_viscous` are
    /// given (`damping_restitution()`): `restitution`, or with `limit_damping` the value whose
    /// dashpot, cut at zero force, rebounds at `restitution` (`calibration`); `None` until
    /// prepared.
    pub prepared_damping_restitution: Option<f64>,
}

impl Default for PairParams {
    /// The specs' defaults (hertz-pfc table 2, hysteretic table 2, hooke defaults).
    fn default() -> Self {
        PairParams {
            model: ContactModel::Hertz,
            fric: 0.0,
            rgap: 0.0,
            rolling_fric: 0.0,
            hz_shear: 0.0,
            hz_poiss: 0.0,
            hz_alpha: 1.5,
            hz_mode: 0,
            g_star: 0.0,
            dp_nratio: 0.0,
            dp_sratio: 0.0,
            dp_alpha: 0.0,
            dp_mode: 0,
            dp_en: 1.0,
            dp_enmin: 0.0,
            restitution: 1.0,
            elastic_stiffness: 0.0,
            characteristic_velocity: 0.0,
            use_characteristic_velocity: false,
            tangential_damping: true,
            kt_to_kn_user: false,
            limit_force: false,
            viscous: false,
            fluid_viscosity: 0.0,
            critical_stokes: 0.0,
            maximum_restitution: 1.0,
            no_attraction: true,
            limit_damping: false,
            adhesion: Adhesion::None,
            surface_energy: 0.0,
            cohesion_energy_density: 0.0,
            liquid_volume: 0.0,
            surface_tension: 0.0,
            contact_angle: 0.0,
            given_adhesion_keys: 0,
            energy_tracking: true,
            tsuji_alpha: None,
            prepared_e_star: None,
            mindlin_damping_ratio: None,
            prepared_damping_restitution: None,
        }
    }
}

impl PairParams {
    /// Equivalent Young's modulus E* = G/(1−ν) of the pair (eqs 18–19 make this exact for
    /// unlike materials): the 1/E* = Σ(1−ν_i²)/E_i of hooke, hertz_mindlin and hertz_viscous.
    #[inline]
    pub fn e_star(&self) -> f64 {
        self.prepared_e_star.unwrap_or_else(|| self.hz_shear / (1.0 - self.hz_poiss))
    }

    /// η_t/η_n of `hertz_mindlin` (`tangential_mindlin::mindlin_shear_damping`): the prepared
    /// value, else formed now.
    #[inline]
    pub fn mindlin_damping_ratio(&self) -> f64 {
        self.mindlin_damping_ratio.unwrap_or_else(|| mindlin_damping_ratio(self.g_star, self.e_star()))
    }

    /// These parameters with the per-pair constants formed once (the pair table holds
    /// prepared entries; a contact step with unprepared ones forms them itself, with the
    /// same bits).
    pub fn prepared(self) -> PairParams {
        let e_star = self.e_star();
        let e_d = self.damping_restitution();
        PairParams {
            tsuji_alpha: Some(tsuji_alpha(e_d)),
            prepared_e_star: Some(e_star),
            mindlin_damping_ratio: Some(mindlin_damping_ratio(self.g_star, e_star)),
            prepared_damping_restitution: Some(e_d),
            ..self
        }
    }

    /// Tsuji's α of this pair (`hertz_mindlin`, of the damping restitution): the prepared
    /// value, else formed now.
    #[inline]
    pub fn tsuji_alpha(&self) -> f64 {
        self.tsuji_alpha.unwrap_or_else(|| tsuji_alpha(self.damping_restitution()))
    }

    // `damping_restitution()`, the restitution the dashpot formulas are given, is defined in
    // `calibration.rs`, which selects the pair's dashpot law and calibrates it.
}

/// α = ln e/√(π² + ln² e) (≤ 0) of Tsuji's damping (`hertz-mindlin-musen.txt`, "Normal
/// force"); 0 for e ≥ 1; e is floored at 1e-20. Defined here so that the pair table can
/// form it once per pair (`normal_mindlin.rs` re-exports it in its twin position); twin of
/// `tsuji_alpha` in `shaders/contact/normal_mindlin.wgsl`.
pub fn tsuji_alpha(e: f64) -> f64 {
    let l = e.max(1e-20).ln();
    if e >= 1.0 { 0.0 } else { l / (std::f64::consts::PI * std::f64::consts::PI + l * l).sqrt() }
}

/// η_t/η_n = √(4G*/E*) of Tsuji's damping (`hertz-mindlin-musen.txt`): both dampings are
/// −1.8257 α √(k M*), and k_t/k_n = 8G*√(R*ξ) / 2E*√(R*ξ) = 4G*/E* at every overlap, so the
/// tangential one is the normal one times this constant of the pair (one square root per
/// contact fewer); 0 for E* ≤ 0. The GPU pair table carries it (`PairParamsGpu::mindlin_damping_ratio`).
pub fn mindlin_damping_ratio(g_star: f64, e_star: f64) -> f64 {
    if e_star > 0.0 { (4.0 * g_star / e_star).sqrt() } else { 0.0 }
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

/// Mindlin's G* = ((2−ν₁)/G₁ + (2−ν₂)/G₂)⁻¹.
pub fn mindlin_g_star(g1: f64, nu1: f64, g2: f64, nu2: f64) -> f64 {
    1.0 / ((2.0 - nu1) / g1 + (2.0 - nu2) / g2)
}

/// `hz_shear`, `hz_poiss`, `fric` (and G*) inherited from two materials; the rest from `base`.
pub fn inherit(a: &Material, b: &Material, base: PairParams) -> PairParams {
    let (g, nu) = inherit_shear_poisson(a.hz_shear, a.hz_poiss, b.hz_shear, b.hz_poiss);
    let g_star = mindlin_g_star(a.hz_shear, a.hz_poiss, b.hz_shear, b.hz_poiss);
    PairParams { hz_shear: g, hz_poiss: nu, g_star, fric: inherit_friction(a.fric, b.fric), ..base }
}

gpu_struct! {
    /// f32 twin of `PairParams` as the shaders see it (flags: `PAIR_FLAG_*`).
    pub struct PairParamsGpu {
        model: u32 => "u32",
        hz_mode: u32 => "u32",
        dp_mode: u32 => "u32",
        flags: u32 => "u32",
        fric: f32 => "f32",
        rgap: f32 => "f32",
        rolling_fric: f32 => "f32",
        hz_shear: f32 => "f32",
        hz_poiss: f32 => "f32",
        hz_alpha: f32 => "f32",
        g_star: f32 => "f32",
        dp_nratio: f32 => "f32",
        dp_sratio: f32 => "f32",
        dp_alpha: f32 => "f32",
        dp_en: f32 => "f32",
        dp_enmin: f32 => "f32",
        /// `PairParams::damping_restitution()`: what the dashpots are given.
        damping_restitution: f32 => "f32",
        elastic_stiffness: f32 => "f32",
        characteristic_velocity: f32 => "f32",
        fluid_viscosity: f32 => "f32",
        critical_stokes: f32 => "f32",
        maximum_restitution: f32 => "f32",
        tsuji_alpha: f32 => "f32",
        mindlin_damping_ratio: f32 => "f32",
        /// `Adhesion` as `ADHESION_*`.
        adhesion: u32 => "u32",
        surface_energy: f32 => "f32",
        cohesion_energy_density: f32 => "f32",
        liquid_volume: f32 => "f32",
        surface_tension: f32 => "f32",
        contact_angle: f32 => "f32",
        _pad0: f32 => "f32",
        _pad1: f32 => "f32",
    }
}

impl PairParams {
    /// The boolean switches as `PAIR_FLAG_*` bits.
    pub fn flags(&self) -> u32 {
        use consts::*;
        let bit = |on: bool, b: u32| if on { b } else { 0 };
        bit(self.use_characteristic_velocity, PAIR_FLAG_USE_CHARACTERISTIC_VELOCITY)
            | bit(self.tangential_damping, PAIR_FLAG_TANGENTIAL_DAMPING)
            | bit(self.kt_to_kn_user, PAIR_FLAG_KT_TO_KN_USER)
            | bit(self.limit_force, PAIR_FLAG_LIMIT_FORCE)
            | bit(self.viscous, PAIR_FLAG_VISCOUS)
            | bit(self.no_attraction, PAIR_FLAG_NO_ATTRACTION)
            | bit(self.limit_damping, PAIR_FLAG_LIMIT_DAMPING)
            | bit(!self.energy_tracking, PAIR_FLAG_NO_ENERGY_TRACKING)
    }
}

impl From<&PairParams> for PairParamsGpu {
    fn from(p: &PairParams) -> Self {
        PairParamsGpu {
            model: p.model as u32,
            hz_mode: p.hz_mode,
            dp_mode: p.dp_mode,
            flags: p.flags(),
            fric: p.fric as f32,
            rgap: p.rgap as f32,
            rolling_fric: p.rolling_fric as f32,
            hz_shear: p.hz_shear as f32,
            hz_poiss: p.hz_poiss as f32,
            hz_alpha: p.hz_alpha as f32,
            g_star: p.g_star as f32,
            dp_nratio: p.dp_nratio as f32,
            dp_sratio: p.dp_sratio as f32,
            dp_alpha: p.dp_alpha as f32,
            dp_en: p.dp_en as f32,
            dp_enmin: p.dp_enmin as f32,
            damping_restitution: p.damping_restitution() as f32,
            elastic_stiffness: p.elastic_stiffness as f32,
            characteristic_velocity: p.characteristic_velocity as f32,
            fluid_viscosity: p.fluid_viscosity as f32,
            critical_stokes: p.critical_stokes as f32,
            maximum_restitution: p.maximum_restitution as f32,
            tsuji_alpha: p.tsuji_alpha() as f32,
            mindlin_damping_ratio: p.mindlin_damping_ratio() as f32,
            adhesion: p.adhesion as u32,
            surface_energy: p.surface_energy as f32,
            cohesion_energy_density: p.cohesion_energy_density as f32,
            liquid_volume: p.liquid_volume as f32,
            surface_tension: p.surface_tension as f32,
            contact_angle: p.contact_angle as f32,
            _pad0: 0.0,
            _pad1: 0.0,
        }
    }
}
