//! Scene-level placement of a mesh: scale (uniform or per axis), then rotation about an axis
//! through the origin by an angle in degrees (right-hand rule), then translation.
//!
//! Scales must be finite and positive, so a transform never mirrors a mesh and the winding
//! (hence the normal side, see `super`) is kept.

use std::path::Path;

use glam::{DMat3, DQuat, DVec3};

use crate::error::{Result, TalusError};

/// x' = R(axis, angle)·(scale ∘ x) + translation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeshTransform {
    /// Per-axis scale factors (all equal for a uniform scale).
    pub scale: DVec3,
    /// Rotation axis (need not be unit; ignored when the angle is zero).
    pub axis: DVec3,
    /// Rotation angle in degrees, counter-clockwise looking down the axis.
    pub angle_deg: f64,
    pub translation: DVec3,
}

impl Default for MeshTransform {
    fn default() -> Self {
        MeshTransform { scale: DVec3::ONE, axis: DVec3::Z, angle_deg: 0.0, translation: DVec3::ZERO }
    }
}

impl MeshTransform {
    /// The identity.
    pub fn identity() -> Self {
        Self::default()
    }

    /// Same transform with a uniform scale.
    pub fn with_uniform_scale(self, s: f64) -> Self {
        MeshTransform { scale: DVec3::splat(s), ..self }
    }

    /// Same transform with per-axis scale factors.
    pub fn with_scale(self, scale: DVec3) -> Self {
        MeshTransform { scale, ..self }
    }

    /// Same transform with a rotation of `angle_deg` degrees about `axis`.
    pub fn with_rotation(self, axis: DVec3, angle_deg: f64) -> Self {
        MeshTransform { axis, angle_deg, ..self }
    }

    /// Same transform with a translation.
    pub fn with_translation(self, translation: DVec3) -> Self {
        MeshTransform { translation, ..self }
    }

    /// Check every value; errors name `file` and the `key` path of the transform.
    pub fn validate(&self, file: &Path, key: &str) -> Result<()> {
        let s = self.scale;
        if !s.is_finite() || s.min_element() <= 0.0 {
            return Err(TalusError::scene(file, format!("{key}.scale"), format!("scale must be finite and positive, got [{}, {}, {}]", s.x, s.y, s.z)));
        }
        if !self.angle_deg.is_finite() {
            return Err(TalusError::scene(file, format!("{key}.angle"), format!("rotation angle must be finite, got {}", self.angle_deg)));
        }
        if self.angle_deg != 0.0 && (!self.axis.is_finite() || self.axis.length_squared() == 0.0) {
            let a = self.axis;
            return Err(TalusError::scene(file, format!("{key}.axis"), format!("rotation axis must be finite and non-zero, got [{}, {}, {}]", a.x, a.y, a.z)));
        }
        if !self.translation.is_finite() {
            let t = self.translation;
            return Err(TalusError::scene(file, format!("{key}.translation"), format!("translation must be finite, got [{}, {}, {}]", t.x, t.y, t.z)));
        }
        Ok(())
    }

    /// The rotation matrix (identity for a zero angle).
    pub fn rotation(&self) -> DMat3 {
        if self.angle_deg == 0.0 {
            return DMat3::IDENTITY;
        }
        DMat3::from_quat(DQuat::from_axis_angle(self.axis.normalize(), self.angle_deg.to_radians()))
    }

    /// Transform one point: scale, then rotate, then translate.
    pub fn apply(&self, p: DVec3) -> DVec3 {
        self.rotation() * (p * self.scale) + self.translation
    }

    /// Transform every vertex of a triangle list in place (validate first).
    pub fn apply_all(&self, triangles: &mut [[DVec3; 3]]) {
        let r = self.rotation();
        for t in triangles.iter_mut() {
            for v in t.iter_mut() {
                *v = r * (*v * self.scale) + self.translation;
            }
        }
    }
}
