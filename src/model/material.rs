//! Materials: what a scene's `"materials"` entries resolve to. Below `src/contact/`, whose
//! pair-parameter inheritance (`params::inherit`) reads them.

/// One material: density plus the surface properties of the Hertz model
/// (`hz_shear`, `hz_poiss`, `fric`, spec `hertz-pfc.txt` table 2) that contacts inherit.
#[derive(Clone, Debug, PartialEq)]
pub struct Material {
    pub name: String,
    /// kg/m^3
    pub density: f64,
    /// Shear modulus G, Pa
    pub hz_shear: f64,
    /// Poisson's ratio ν
    pub hz_poiss: f64,
    /// Friction coefficient μ
    pub fric: f64,
}
