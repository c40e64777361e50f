//! Rayleigh critical time step, used for `"time_step": "auto"`.

use crate::model::material::Material;
use crate::setup::Setup;

/// Rayleigh critical step of one material for spheres of radius `radius`:
/// Δt_R = π R √(ρ/G) / (0.1631 ν + 0.8766).
pub fn rayleigh_time_step_single(density: f64, hz_shear: f64, hz_poiss: f64, radius: f64) -> f64 {
    std::f64::consts::PI * radius * (density / hz_shear).sqrt() / (0.1631 * hz_poiss + 0.8766)
}

/// Rayleigh critical step: the minimum of [`rayleigh_time_step_single`] over `materials`,
/// all taken with the smallest particle radius `min_radius`. `f64::INFINITY` if `materials`
/// is empty.
pub fn rayleigh_time_step<'a>(materials: impl IntoIterator<Item = &'a Material>, min_radius: f64) -> f64 {
    materials
        .into_iter()
        .map(|m| rayleigh_time_step_single(m.density, m.hz_shear, m.hz_poiss, min_radius))
        .fold(f64::INFINITY, f64::min)
}

/// Rayleigh critical step of a set-up: over the materials its particles use, with its
/// smallest particle radius.
pub fn rayleigh_for_setup(setup: &Setup) -> f64 {
    let mut used = vec![false; setup.materials.len()];
    for &m in &setup.particles.material {
        used[m as usize] = true;
    }
    let r_min = setup.particles.radius.iter().cloned().fold(f64::INFINITY, f64::min);
    rayleigh_time_step(setup.materials.iter().zip(&used).filter(|(_, &u)| u).map(|(m, _)| m), r_min)
}
