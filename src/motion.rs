//! Prescribed wall motion: a translation velocity and a rotation about a fixed-direction axis,
//! each constant or piecewise-linear in time. Both backends evaluate the pose here, in f64:
//! the CPU at every force pass, the GPU host once per step of a batch (uploaded before the
//! batch is submitted, so the step loop never waits on the host).

use glam::{DQuat, DVec3};

/// A piecewise-linear function of time: linear between keyframes (t, value), held at the first
/// value before the first keyframe and at the last value after the last one.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile<T> {
    /// Keyframes, strictly increasing in time; at least one.
    pub keys: Vec<(f64, T)>,
}

/// What a profile can hold: a scalar (angular speed) or a vector (velocity).
pub trait Linear: Copy + std::ops::Add<Output = Self> + std::ops::Mul<f64, Output = Self> {
    const ZERO: Self;
}

impl Linear for f64 {
    const ZERO: Self = 0.0;
}

impl Linear for DVec3 {
    const ZERO: Self = DVec3::ZERO;
}

impl<T: Linear> Profile<T> {
    /// A value constant in time.
    pub fn constant(v: T) -> Self {
        Profile { keys: vec![(0.0, v)] }
    }

    /// The value at time `t`.
    pub fn value(&self, t: f64) -> T {
        let k = &self.keys;
        if t <= k[0].0 {
            return k[0].1;
        }
        for w in k.windows(2) {
            let ((t0, v0), (t1, v1)) = (w[0], w[1]);
            if t <= t1 {
                let a = (t - t0) / (t1 - t0);
                return v0 * (1.0 - a) + v1 * a;
            }
        }
        k[k.len() - 1].1
    }

    /// ∫₀ᵗ value dτ (t ≥ 0), exact for the piecewise-linear profile.
    pub fn integral(&self, t: f64) -> T {
        let k = &self.keys;
        let mut sum = T::ZERO;
        let mut from = 0.0f64;
        // before the first keyframe the profile holds its first value
        if from < k[0].0 {
            let to = t.min(k[0].0);
            sum = sum + k[0].1 * (to - from);
            from = to;
        }
        for w in k.windows(2) {
            if from >= t {
                break;
            }
            let (t1, _) = w[1];
            if from >= t1 {
                continue;
            }
            let to = t.min(t1);
            sum = sum + (self.value(from) + self.value(to)) * (0.5 * (to - from));
            from = to;
        }
        if from < t {
            sum = sum + k[k.len() - 1].1 * (t - from);
        }
        sum
    }

    /// True when the profile is zero at every time.
    pub fn is_zero(&self) -> bool
    where
        T: PartialEq,
    {
        self.keys.iter().all(|(_, v)| *v == T::ZERO)
    }
}

/// Motion of a wall: translation velocity v(t), and rotation at angular speed ω(t) about an
/// axis of fixed direction through `center` (which moves with the translation).
#[derive(Clone, Debug, PartialEq)]
pub struct WallMotion {
    pub velocity: Profile<DVec3>,
    pub angular_speed: Profile<f64>,
    /// Unit rotation axis.
    pub axis: DVec3,
    /// A point on the rotation axis at t = 0, m.
    pub center: DVec3,
}

impl Default for WallMotion {
    fn default() -> Self {
        WallMotion { velocity: Profile::constant(DVec3::ZERO), angular_speed: Profile::constant(0.0), axis: DVec3::Z, center: DVec3::ZERO }
    }
}

/// Where a moving body is at one time, and how fast its points move.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pose {
    /// Translation since t = 0.
    pub translation: DVec3,
    /// Rotation since t = 0 (about the axis through the centre).
    pub rotation: DQuat,
    /// Current position of the rotation centre.
    pub center: DVec3,
    /// Translation velocity.
    pub velocity: DVec3,
    /// Angular velocity vector ω(t) · axis.
    pub omega: DVec3,
}

impl Pose {
    /// Where the point that was at `p0` at t = 0 is now.
    pub fn point(&self, p0: DVec3, center0: DVec3) -> DVec3 {
        self.center + self.rotation * (p0 - center0)
    }

    /// A direction fixed to the body (e.g. a plane normal), now.
    pub fn direction(&self, d0: DVec3) -> DVec3 {
        self.rotation * d0
    }

    /// Velocity of the body's material point currently at `x`: v + ω × (x − c).
    pub fn surface_velocity(&self, x: DVec3) -> DVec3 {
        self.velocity + self.omega.cross(x - self.center)
    }
}

impl WallMotion {
    /// True for a wall that never moves.
    pub fn is_static(&self) -> bool {
        self.velocity.is_zero() && self.angular_speed.is_zero()
    }

    /// The pose at time `t` ≥ 0: translation ∫v, rotation angle ∫ω about `axis`.
    pub fn pose(&self, t: f64) -> Pose {
        let translation = self.velocity.integral(t);
        let angle = self.angular_speed.integral(t);
        Pose {
            translation,
            rotation: DQuat::from_axis_angle(self.axis, angle),
            center: self.center + translation,
            velocity: self.velocity.value(t),
            omega: self.axis * self.angular_speed.value(t),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn piecewise_linear_value_and_integral() {
        let p = Profile { keys: vec![(1.0, 2.0), (3.0, 6.0), (4.0, 0.0)] };
        assert_eq!(p.value(0.0), 2.0);
        assert_eq!(p.value(2.0), 4.0);
        assert_eq!(p.value(3.5), 3.0);
        assert_eq!(p.value(9.0), 0.0);
        // 2·1 (held) + (2+6)/2·2 + (6+0)/2·1 + 0
        assert!((p.integral(10.0) - (2.0 + 8.0 + 3.0)).abs() < 1e-12);
        assert!((p.integral(2.0) - (2.0 + 3.0)).abs() < 1e-12);
        assert!((p.integral(0.5) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn rotation_moves_points_and_surface_velocity_is_tangential() {
        let m = WallMotion { angular_speed: Profile::constant(2.0), axis: DVec3::Z, center: DVec3::new(1.0, 0.0, 0.0), ..Default::default() };
        let pose = m.pose(std::f64::consts::FRAC_PI_4);
        // quarter turn: (2, 0, 0) → (1, 1, 0)
        let p = pose.point(DVec3::new(2.0, 0.0, 0.0), m.center);
        assert!((p - DVec3::new(1.0, 1.0, 0.0)).length() < 1e-12);
        let u = pose.surface_velocity(p);
        assert!((u - DVec3::new(-2.0, 0.0, 0.0)).length() < 1e-12);
    }
}
