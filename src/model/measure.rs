//! Measurement settings of a scene's `"measure"` list (docs/measurements.md); run by the
//! samplers of `src/measure/`.

use glam::DVec3;

/// One entry of the scene's `"measure"` list.
#[derive(Clone, Debug, PartialEq)]
pub struct Measure {
    /// Name in outputs (default: the type).
    pub name: String,
    /// Samples are taken from this simulated time on, s.
    pub from_time: f64,
    /// Outputs between samples (≥ 1).
    pub every: u64,
    pub kind: MeasureKind,
}

/// What is measured, with its type's settings.
#[derive(Clone, Debug, PartialEq)]
pub enum MeasureKind {
    /// `"repose_angle"`: dynamic angle of repose in a rotating drum.
    ReposeAngle(ReposeAngle),
    /// `"discharge"`: mass-flow rate through an outlet, compared with Beverloo's correlation.
    Discharge(Discharge),
}

impl MeasureKind {
    /// The scene's `type` string.
    pub fn type_name(&self) -> &'static str {
        match self {
            MeasureKind::ReposeAngle(_) => "repose_angle",
            MeasureKind::Discharge(_) => "discharge",
        }
    }
}

// ---- repose_angle ----

/// Default part of the occupied width whose surface points are fitted.
pub const DEFAULT_SURFACE_FRACTION: f64 = 0.6;
/// Default least number of particles in a bin for it to give a surface point.
pub const DEFAULT_MIN_BIN_COUNT: u64 = 3;

/// Settings of a `"repose_angle"` measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct ReposeAngle {
    /// Unit vector along the drum axis.
    pub axis: DVec3,
    /// A point on the axis, m.
    pub center: DVec3,
    /// Part (0, 1] of the occupied width, centred, whose surface points are fitted.
    pub surface_fraction: f64,
    /// Bin width along `across`, m; `None` = the largest particle diameter.
    pub bin_width: Option<f64>,
    /// Least number of particles in a bin for it to give a surface point.
    pub min_bin_count: u64,
}

// ---- discharge ----

/// Beverloo's C (Beverloo, Leniger & van de Velde 1961: 0.55–0.65).
pub const DEFAULT_C: f64 = 0.58;
/// Beverloo's k for spheres (1.3–2.9 in the literature; 1.5 is the usual choice).
pub const DEFAULT_K: f64 = 1.5;

/// Settings of a discharge measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct Discharge {
    /// Index of the outlet in `Setup::outlets`, and its name.
    pub outlet: usize,
    pub outlet_name: String,
    /// Samples after this time are not used, s (`None` = to the end).
    pub to_time: Option<f64>,
    pub beverloo: Beverloo,
}

/// The inputs of Beverloo's correlation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Beverloo {
    pub c: f64,
    pub k: f64,
    /// kg/m³
    pub bulk_density: f64,
    /// m
    pub orifice_diameter: f64,
    /// m
    pub particle_diameter: f64,
}

impl Beverloo {
    /// W_B in kg/s for gravity `g` (m/s²); zero when the orifice is narrower than k d.
    pub fn rate(&self, g: f64) -> f64 {
        let free = (self.orifice_diameter - self.k * self.particle_diameter).max(0.0);
        self.c * self.bulk_density * g.sqrt() * free.powf(2.5)
    }
}
