//! Regions of insertion and outlets: an axis-aligned box or a finite cylinder.

use glam::DVec3;
use rand::Rng;

/// A closed region of space.
#[derive(Clone, Debug, PartialEq)]
pub enum Region {
    /// Axis-aligned box [min, max].
    Box { min: DVec3, max: DVec3 },
    /// Cylinder of `radius` around the segment from `base` along the unit `axis` for `length`.
    Cylinder { base: DVec3, axis: DVec3, length: f64, radius: f64 },
}

impl Region {
    /// Whether the point x lies in the region.
    pub fn contains(&self, x: DVec3) -> bool {
        match *self {
            Region::Box { min, max } => x.cmpge(min).all() && x.cmple(max).all(),
            Region::Cylinder { base, axis, length, radius } => {
                let d = x - base;
                let h = d.dot(axis);
                (0.0..=length).contains(&h) && (d - axis * h).length_squared() <= radius * radius
            }
        }
    }

    /// Whether a sphere of radius r around x lies wholly inside the region.
    pub fn holds_sphere(&self, x: DVec3, r: f64) -> bool {
        match *self {
            Region::Box { min, max } => x.cmpge(min + r).all() && x.cmple(max - r).all(),
            Region::Cylinder { base, axis, length, radius } => {
                let d = x - base;
                let h = d.dot(axis);
                h >= r && h <= length - r && (d - axis * h).length() <= radius - r
            }
        }
    }

    /// A uniformly distributed point at which a sphere of radius r lies wholly inside the
    /// region, or `None` when the region is too small for it.
    pub fn sample_centre<R: Rng>(&self, r: f64, rng: &mut R) -> Option<DVec3> {
        match *self {
            Region::Box { min, max } => {
                let (lo, hi) = (min + r, max - r);
                if lo.cmpgt(hi).any() {
                    return None;
                }
                Some(DVec3::new(lo.x + (hi.x - lo.x) * rng.random::<f64>(), lo.y + (hi.y - lo.y) * rng.random::<f64>(), lo.z + (hi.z - lo.z) * rng.random::<f64>()))
            }
            Region::Cylinder { base, axis, length, radius } => {
                let (rho, h) = (radius - r, length - 2.0 * r);
                if rho < 0.0 || h < 0.0 {
                    return None;
                }
                let (u, v) = perpendicular_basis(axis);
                // uniform over the disc: radius ∝ √U
                let s = rho * rng.random::<f64>().sqrt();
                let phi = std::f64::consts::TAU * rng.random::<f64>();
                let along = r + h * rng.random::<f64>();
                Some(base + axis * along + (u * phi.cos() + v * phi.sin()) * s)
            }
        }
    }

    /// Corners of the region's bounding box.
    pub fn bounds(&self) -> (DVec3, DVec3) {
        match *self {
            Region::Box { min, max } => (min, max),
            Region::Cylinder { base, axis, length, radius } => {
                let top = base + axis * length;
                // extent of a disc of radius ρ with normal a along axis k: ρ √(1 − a_k²)
                let e = DVec3::new((1.0 - axis.x * axis.x).max(0.0).sqrt(), (1.0 - axis.y * axis.y).max(0.0).sqrt(), (1.0 - axis.z * axis.z).max(0.0).sqrt()) * radius;
                (base.min(top) - e, base.max(top) + e)
            }
        }
    }
}

/// Two unit vectors perpendicular to the unit vector a and to each other.
pub fn perpendicular_basis(a: DVec3) -> (DVec3, DVec3) {
    let helper = if a.x.abs() < 0.9 { DVec3::X } else { DVec3::Y };
    let u = a.cross(helper).normalize();
    (u, a.cross(u))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn samples_hold_the_sphere() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
        let regions = [
            Region::Box { min: DVec3::new(-1.0, 0.0, 2.0), max: DVec3::new(0.0, 0.5, 2.2) },
            Region::Cylinder { base: DVec3::new(0.1, 0.2, 0.3), axis: DVec3::new(1.0, 1.0, 0.0).normalize(), length: 0.4, radius: 0.1 },
        ];
        for region in regions {
            let (lo, hi) = region.bounds();
            for _ in 0..2000 {
                let x = region.sample_centre(0.02, &mut rng).unwrap();
                assert!(region.holds_sphere(x, 0.02) && region.contains(x), "{region:?}: {x}");
                assert!(x.cmpge(lo + 0.02).all() && x.cmple(hi - 0.02).all(), "{region:?}: {x} outside the bounds");
            }
            assert!(region.sample_centre(0.3, &mut rng).is_none());
        }
    }
}
