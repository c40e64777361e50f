//! Rigid bodies (clumps of spheres): the rotation integrator and its analytic references.
//!
//! A body carries a unit quaternion q (body → space, scalar w and vector (x, y, z); stored as
//! glam's `DQuat`, x y z w in memory, and as `vec4<f32>(x, y, z, w)` on the GPU), its
//! space-frame angular momentum L and its principal moments I = (I1, I2, I3) (the body frame
//! is the principal frame). `integrate` is the f64 twin of `shaders/rigid/integrate.wgsl`;
//! `analytic` holds closed-form results of torque-free rotation for tests and benchmarks.

pub mod integrate;
pub mod analytic;
