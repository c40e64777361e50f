//! Rigid multi-sphere clump templates: the component spheres of a clump in its principal
//! frame and the mass properties of their union (issue 32).
//!
//! A template is given in the user's frame as spheres `[x, y, z, r]`. Talus computes the
//! volume, centre of mass and inertia tensor of the *union* of the spheres (overlaps counted
//! once) at the material's density, diagonalises the tensor and stores
//!
//! - the principal moments, ascending;
//! - `to_principal`, the rotation R (a unit quaternion, `[w, x, y, z]`) whose columns are the
//!   principal axes written in the user's frame, so that a component's user-frame position is
//!   `R · offset + centre`; a body whose principal frame has world orientation `q_body` and
//!   whose user frame has `q_user` satisfies `q_body = q_user · to_principal`;
//! - the component offsets in the principal frame, relative to the centre of mass.
//!
//! How the union is integrated: spheres that overlap no other sphere contribute their exact
//! closed form (moved by the parallel-axis theorem). Each cluster of overlapping spheres is
//! integrated numerically but without a grid: a plane `x = const` cuts the cluster in a union
//! of discs in the (y, z) plane, whose area, first and second moments are integrated exactly
//! (exact integration in z over merged intervals, then exact integration in y between the
//! disc edges and the pairwise circle crossings, where the interval structure cannot change).
//! The remaining integral over x is smooth between breakpoints (sphere extents, the x-extents of
//! the circles where two spheres' surfaces meet, the points three surfaces share); each panel is
//! integrated by Gauss–Legendre after the substitution x = a + (b − a)(1 − cos t)/2, which
//! removes the square-root behaviour at the panel ends, doubling the number of nodes until the
//! volume and the inertia tensor change by less than [`RELATIVE_TOLERANCE`]. The result is
//! deterministic and, for a cluster of two spheres, agrees with the lens closed form to about
//! 1e-12.

use glam::{DMat3, DQuat, DVec3};

/// The numerical integration of overlapping spheres stops once a doubling of the nodes
/// changes the volume and the inertia tensor (relative to its trace) by less than this.
pub const RELATIVE_TOLERANCE: f64 = 1e-11;
/// Gauss–Legendre nodes per panel of the first pass; doubled up to [`MAX_NODES`].
const FIRST_NODES: usize = 8;
/// The most nodes per panel (the work cap).
const MAX_NODES: usize = 256;

/// One sphere of a template.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ComponentSphere {
    /// From the centre of mass, in the principal frame, m.
    pub offset: [f64; 3],
    /// m.
    pub radius: f64,
}

/// A rigid clump template: its spheres and mass properties.
#[derive(Clone, Debug, PartialEq)]
pub struct ClumpTemplate {
    pub name: String,
    /// Index into `Setup::materials`; the density that gave `mass` is that material's.
    pub material: u32,
    /// In the principal frame, relative to the centre of mass.
    pub spheres: Vec<ComponentSphere>,
    /// kg.
    pub mass: f64,
    /// Volume of the union of the spheres, m³ (geometric; an override of the mass leaves it).
    pub volume: f64,
    /// Principal moments of inertia about the centre of mass, ascending, kg m².
    pub principal_moments: [f64; 3],
    /// Unit quaternion `[w, x, y, z]` of the rotation R that takes the user's template axes
    /// onto the principal axes (the columns of R are the principal axes in the user's frame):
    /// user position = R · offset + centre.
    pub to_principal: [f64; 4],
    /// Centre of mass in the user's template frame, m.
    pub centre: [f64; 3],
    /// Largest |offset| + radius: the radius of a sphere about the centre of mass that holds
    /// the clump, m.
    pub bounding_radius: f64,
}

/// Given mass properties that replace the computed ones (`"override"` in a scene).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MassOverride {
    /// kg, > 0.
    pub mass: f64,
    /// Principal moments, kg m², each > 0 and satisfying the triangle inequality; any order
    /// (they are sorted, with their axes).
    pub moments: [f64; 3],
    /// Orientation of the principal axes in the user's frame, `[w, x, y, z]` (normalised
    /// here): moment k belongs to the k-th column of its rotation matrix. `None`: the computed
    /// principal axes, the given moments assigned in ascending order.
    pub orientation: Option<[f64; 4]>,
}

/// Volume, centre and inertia of a solid at unit density (multiply by the density).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MassProperties {
    /// m³.
    pub volume: f64,
    /// Centre of mass (of volume), m.
    pub centre: [f64; 3],
    /// Inertia tensor about `centre` per unit density, m⁵ (symmetric).
    pub inertia: [[f64; 3]; 3],
}

impl ClumpTemplate {
    /// A template from spheres `[x, y, z, r]` in the user's frame, material `material` of
    /// density `density` (kg/m³). Errors: no sphere, a radius that is not finite and > 0, a
    /// position that is not finite, a density that is not finite and > 0.
    pub fn new(name: impl Into<String>, material: u32, spheres: &[[f64; 4]], density: f64) -> Result<Self, String> {
        check_spheres(spheres)?;
        if !(density > 0.0 && density.is_finite()) {
            return Err(format!("density must be finite and > 0, got {density}"));
        }
        let props = union_mass_properties(spheres);
        let (moments, axes) = principal_axes(props.inertia);
        let centre = DVec3::from(props.centre);
        let rot = DMat3::from_cols_array_2d(&axes);
        Ok(Self::assemble(name.into(), material, spheres, density * props.volume, props.volume, moments.map(|m| m * density), rot, centre))
    }

    /// `new` followed by `with_override` when one is given.
    pub fn with_mass_properties(
        name: impl Into<String>,
        material: u32,
        spheres: &[[f64; 4]],
        density: f64,
        over: Option<&MassOverride>,
    ) -> Result<Self, String> {
        let t = Self::new(name, material, spheres, density)?;
        match over {
            Some(o) => t.with_override(o),
            None => Ok(t),
        }
    }

    /// The same spheres with the given mass, principal moments and (optionally) orientation of
    /// the principal axes. The centre of mass stays the computed one (the centroid of the union
    /// of the spheres): offsets are measured from it, in the new principal frame. The volume
    /// stays the geometric one. Errors: a mass or moment that is not finite and > 0, moments
    /// that violate the triangle inequality, an orientation of zero or non-finite length.
    pub fn with_override(&self, o: &MassOverride) -> Result<Self, String> {
        check_override(o)?;
        let centre = DVec3::from(self.centre);
        let old = self.rotation();
        let user: Vec<[f64; 4]> = self
            .spheres
            .iter()
            .map(|s| {
                let p = old * DVec3::from(s.offset) + centre;
                [p.x, p.y, p.z, s.radius]
            })
            .collect();
        let (moments, rot) = match o.orientation {
            Some(q) => {
                let q = DQuat::from_xyzw(q[1], q[2], q[3], q[0]).normalize();
                let m = DMat3::from_quat(q);
                let mut order = [0usize, 1, 2];
                order.sort_by(|&a, &b| o.moments[a].total_cmp(&o.moments[b]));
                let mut cols = order.map(|k| m.col(k));
                if cols[0].cross(cols[1]).dot(cols[2]) < 0.0 {
                    cols[2] = -cols[2];
                }
                (order.map(|k| o.moments[k]), DMat3::from_cols(cols[0], cols[1], cols[2]))
            }
            None => {
                let mut m = o.moments;
                m.sort_by(f64::total_cmp);
                (m, old)
            }
        };
        Ok(Self::assemble(self.name.clone(), self.material, &user, o.mass, self.volume, moments, rot, centre))
    }

    #[allow(clippy::too_many_arguments)]
    fn assemble(name: String, material: u32, user: &[[f64; 4]], mass: f64, volume: f64, moments: [f64; 3], rot: DMat3, centre: DVec3) -> Self {
        let inv = rot.transpose();
        let spheres: Vec<ComponentSphere> = user
            .iter()
            .map(|s| ComponentSphere { offset: (inv * (DVec3::new(s[0], s[1], s[2]) - centre)).to_array(), radius: s[3] })
            .collect();
        let bounding_radius = spheres.iter().map(|s| DVec3::from(s.offset).length() + s.radius).fold(0.0, f64::max);
        let q = DQuat::from_mat3(&rot).normalize();
        // one sign of the two that name the same rotation: w >= 0
        let q = if q.w < 0.0 { -q } else { q };
        ClumpTemplate {
            name,
            material,
            spheres,
            mass,
            volume,
            principal_moments: moments,
            to_principal: [q.w, q.x, q.y, q.z],
            centre: centre.to_array(),
            bounding_radius,
        }
    }

    /// R of `to_principal` (columns: the principal axes in the user's frame).
    pub fn rotation(&self) -> DMat3 {
        let [w, x, y, z] = self.to_principal;
        DMat3::from_quat(DQuat::from_xyzw(x, y, z, w))
    }

    /// The component spheres back in the user's frame, `[x, y, z, r]`.
    pub fn user_spheres(&self) -> Vec<[f64; 4]> {
        let (r, c) = (self.rotation(), DVec3::from(self.centre));
        self.spheres
            .iter()
            .map(|s| {
                let p = r * DVec3::from(s.offset) + c;
                [p.x, p.y, p.z, s.radius]
            })
            .collect()
    }

    /// The template scaled by `s` > 0 about the centre of mass (same density): offsets,
    /// radii, centre and bounding radius × s, volume and mass × s³, moments × s⁵.
    pub fn scaled(&self, s: f64) -> ClumpTemplate {
        debug_assert!(s > 0.0, "scale factor must be > 0, got {s}");
        let (s3, s5) = (s * s * s, s.powi(5));
        ClumpTemplate {
            name: self.name.clone(),
            material: self.material,
            spheres: self.spheres.iter().map(|c| ComponentSphere { offset: c.offset.map(|x| x * s), radius: c.radius * s }).collect(),
            mass: self.mass * s3,
            volume: self.volume * s3,
            principal_moments: self.principal_moments.map(|m| m * s5),
            to_principal: self.to_principal,
            centre: self.centre.map(|x| x * s),
            bounding_radius: self.bounding_radius * s,
        }
    }
}

/// Every sphere finite with radius > 0, at least one sphere.
pub fn check_spheres(spheres: &[[f64; 4]]) -> Result<(), String> {
    if spheres.is_empty() {
        return Err("a clump template needs at least one sphere".to_string());
    }
    for (i, s) in spheres.iter().enumerate() {
        if !(s[3] > 0.0 && s[3].is_finite()) {
            return Err(format!("sphere {i}: radius must be finite and > 0, got {}", s[3]));
        }
        if !s[..3].iter().all(|x| x.is_finite()) {
            return Err(format!("sphere {i}: position must be finite, got [{}, {}, {}]", s[0], s[1], s[2]));
        }
    }
    Ok(())
}

/// The checks of `with_override`.
pub fn check_override(o: &MassOverride) -> Result<(), String> {
    if !(o.mass > 0.0 && o.mass.is_finite()) {
        return Err(format!("mass must be finite and > 0, got {}", o.mass));
    }
    check_moments(o.moments)?;
    if let Some(q) = o.orientation {
        let n = q.iter().map(|x| x * x).sum::<f64>().sqrt();
        if !(n > 1e-12 && n.is_finite()) {
            return Err(format!("orientation must be a non-zero quaternion [w, x, y, z], got [{}, {}, {}, {}]", q[0], q[1], q[2], q[3]));
        }
    }
    Ok(())
}

/// Principal moments of a rigid body: each finite and > 0, and each at most the sum of the
/// other two (relative slack 1e-12; equality is a lamina).
pub fn check_moments(m: [f64; 3]) -> Result<(), String> {
    if let Some(x) = m.iter().find(|x| !(**x > 0.0 && x.is_finite())) {
        return Err(format!("moments must be finite and > 0, got {x} in [{}, {}, {}]", m[0], m[1], m[2]));
    }
    let mut s = m;
    s.sort_by(f64::total_cmp);
    if s[2] > (s[0] + s[1]) * (1.0 + 1e-12) {
        return Err(format!(
            "moments [{}, {}, {}] violate the triangle inequality: the largest, {}, exceeds the sum of the other two, {}",
            m[0],
            m[1],
            m[2],
            s[2],
            s[0] + s[1]
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// mass properties of a union of spheres
// ---------------------------------------------------------------------------------------

/// Raw moments at unit density: ∫1, ∫x_i, ∫x_i x_j (about the origin).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Moments {
    v: f64,
    m1: [f64; 3],
    m2: [[f64; 3]; 3],
}

impl Moments {
    fn add(&mut self, o: &Moments) {
        self.v += o.v;
        for i in 0..3 {
            self.m1[i] += o.m1[i];
            for j in 0..3 {
                self.m2[i][j] += o.m2[i][j];
            }
        }
    }

    fn sphere(s: &[f64; 4]) -> Moments {
        let r = s[3];
        let v = 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
        let own = v * r * r / 5.0; // ∫x² over a ball about its centre
        let mut m = Moments { v, ..Default::default() };
        for i in 0..3 {
            m.m1[i] = v * s[i];
            for j in 0..3 {
                m.m2[i][j] = v * s[i] * s[j] + if i == j { own } else { 0.0 };
            }
        }
        m
    }

    fn properties(&self) -> MassProperties {
        let c = self.m1.map(|x| x / self.v);
        let mut second = [[0.0; 3]; 3]; // ∫(x−c)_i (x−c)_j
        for i in 0..3 {
            for j in 0..3 {
                second[i][j] = self.m2[i][j] - self.v * c[i] * c[j];
            }
        }
        let tr = second[0][0] + second[1][1] + second[2][2];
        let mut inertia = [[0.0; 3]; 3];
        for i in 0..3 {
            for j in 0..3 {
                inertia[i][j] = if i == j { tr - second[i][i] } else { -second[i][j] };
            }
        }
        MassProperties { volume: self.v, centre: c, inertia }
    }
}

/// Volume, centre and inertia (unit density) of the union of spheres `[x, y, z, r]`. Exact
/// when no two spheres overlap (touching is not overlapping); otherwise each cluster of
/// overlapping spheres is integrated numerically (see the module notes), converged to
/// [`RELATIVE_TOLERANCE`].
pub fn union_mass_properties(spheres: &[[f64; 4]]) -> MassProperties {
    let n = spheres.len();
    // clusters: connected components of the overlap graph (union–find)
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(p: &mut [usize], mut i: usize) -> usize {
        while p[i] != i {
            p[i] = p[p[i]];
            i = p[i];
        }
        i
    }
    for i in 0..n {
        for j in i + 1..n {
            if overlap(&spheres[i], &spheres[j]) {
                let (a, b) = (root(&mut parent, i), root(&mut parent, j));
                parent[a.max(b)] = a.min(b);
            }
        }
    }
    let mut total = Moments::default();
    for r in 0..n {
        let members: Vec<[f64; 4]> = (0..n).filter(|&i| root(&mut parent, i) == r).map(|i| spheres[i]).collect();
        match members.len() {
            0 => {}
            1 => total.add(&Moments::sphere(&members[0])),
            _ => total.add(&cluster_moments(&members)),
        }
    }
    total.properties()
}

fn overlap(a: &[f64; 4], b: &[f64; 4]) -> bool {
    let d2 = (a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2);
    d2 < (a[3] + b[3]).powi(2)
}

/// Moments about the origin of the union of a cluster, integrated over x panel by panel.
fn cluster_moments(spheres: &[[f64; 4]]) -> Moments {
    // shift to the cluster's mean position so the moments do not cancel large numbers
    let n = spheres.len() as f64;
    let shift: [f64; 3] = std::array::from_fn(|k| spheres.iter().map(|s| s[k]).sum::<f64>() / n);
    let local: Vec<[f64; 4]> = spheres.iter().map(|s| [s[0] - shift[0], s[1] - shift[1], s[2] - shift[2], s[3]]).collect();
    let breaks = x_breakpoints(&local);
    // reference sizes for the convergence test: the sum of the balls' volumes and the
    // cluster's extent about its mean
    let v_ref: f64 = local.iter().map(|a| 4.0 / 3.0 * std::f64::consts::PI * a[3].powi(3)).sum();
    let l_ref = local.iter().map(|a| (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt() + a[3]).fold(0.0, f64::max);
    let mut m = Moments::default();
    for w in breaks.windows(2) {
        m.add(&integrate_panel(&local, w[0], w[1], v_ref, l_ref));
    }
    m.m2[1][0] = m.m2[0][1];
    m.m2[2][0] = m.m2[0][2];
    m.m2[2][1] = m.m2[1][2];
    // back to the original origin: ∫(x+s)_i(x+s)_j = m2 + s_i m1_j + s_j m1_i + v s_i s_j
    let mut out = Moments { v: m.v, ..Default::default() };
    for i in 0..3 {
        out.m1[i] = m.m1[i] + m.v * shift[i];
        for j in 0..3 {
            out.m2[i][j] = m.m2[i][j] + shift[i] * m.m1[j] + shift[j] * m.m1[i] + m.v * shift[i] * shift[j];
        }
    }
    out
}

/// x values between which the cross-section's moments are smooth functions of x (up to
/// square-root ends): sphere extents, the x-extents of the circles where two surfaces meet, and
/// the x of points common to three surfaces. Sorted, deduplicated.
fn x_breakpoints(s: &[[f64; 4]]) -> Vec<f64> {
    let mut b = Vec::new();
    for a in s {
        b.push(a[0] - a[3]);
        b.push(a[0] + a[3]);
    }
    let n = s.len();
    for i in 0..n {
        for j in i + 1..n {
            if let Some((c, axis, rho)) = surface_circle(&s[i], &s[j]) {
                // the circle's points of least and greatest x: c ± rho·e, e the unit part of x̂
                // perpendicular to the axis
                let e = DVec3::X - axis * axis.x;
                let e = if e.length_squared() > 1e-30 { e.normalize() } else { DVec3::ZERO };
                for p in [c - rho * e, c + rho * e] {
                    if on_surface(s, p, &[i, j]) {
                        b.push(p.x);
                    }
                }
                for k in j + 1..n {
                    for p in three_surface_points(&s[i], &s[j], &s[k]) {
                        if on_surface(s, p, &[i, j, k]) {
                            b.push(p.x);
                        }
                    }
                }
            }
        }
    }
    b.sort_by(f64::total_cmp);
    let lo = b[0];
    let hi = *b.last().unwrap();
    let eps = 1e-13 * (hi - lo);
    b.dedup_by(|a, prev| (*a - *prev).abs() <= eps);
    b
}

/// Whether `p` (on the surfaces of the spheres `own`) is on the union's surface: not strictly
/// inside another sphere. A singular point inside another sphere leaves the union's
/// cross-sections smooth, so it is no breakpoint.
fn on_surface(s: &[[f64; 4]], p: DVec3, own: &[usize]) -> bool {
    !s.iter().enumerate().any(|(k, a)| {
        !own.contains(&k) && (p - DVec3::new(a[0], a[1], a[2])).length_squared() < a[3] * a[3] * (1.0 - 1e-12)
    })
}

/// The circle where two sphere surfaces meet: centre, unit axis (from a to b) and radius.
fn surface_circle(a: &[f64; 4], b: &[f64; 4]) -> Option<(DVec3, DVec3, f64)> {
    let (ca, cb) = (DVec3::new(a[0], a[1], a[2]), DVec3::new(b[0], b[1], b[2]));
    let d = (cb - ca).length();
    if d >= a[3] + b[3] || d <= (a[3] - b[3]).abs() || d == 0.0 {
        return None;
    }
    let axis = (cb - ca) / d;
    let t = (d * d + a[3] * a[3] - b[3] * b[3]) / (2.0 * d); // from a along the axis
    let rho2 = a[3] * a[3] - t * t;
    if rho2 <= 0.0 {
        return None;
    }
    Some((ca + axis * t, axis, rho2.sqrt()))
}

/// The (up to two) points on all three sphere surfaces.
fn three_surface_points(a: &[f64; 4], b: &[f64; 4], c: &[f64; 4]) -> Vec<DVec3> {
    let p = |s: &[f64; 4]| DVec3::new(s[0], s[1], s[2]);
    let (pa, pb, pc) = (p(a), p(b), p(c));
    // radical planes: 2 (pb − pa)·x = |pb|² − |pa|² − rb² + ra², same for c
    let n1 = 2.0 * (pb - pa);
    let n2 = 2.0 * (pc - pa);
    let d1 = pb.length_squared() - pa.length_squared() - b[3] * b[3] + a[3] * a[3];
    let d2 = pc.length_squared() - pa.length_squared() - c[3] * c[3] + a[3] * a[3];
    let dir = n1.cross(n2);
    let dd = dir.length_squared();
    if dd <= 1e-24 * n1.length_squared() * n2.length_squared() {
        return Vec::new(); // collinear centres: the surfaces share a circle or nothing
    }
    // a point on both planes: x0 = (d1 (n2 × dir) + d2 (dir × n1)) / |dir|²
    let x0 = (d1 * n2.cross(dir) + d2 * dir.cross(n1)) / dd;
    let u = dir / dd.sqrt();
    // |x0 + t u − pa|² = ra²
    let w = x0 - pa;
    let bq = w.dot(u);
    let cq = w.length_squared() - a[3] * a[3];
    let disc = bq * bq - cq;
    if disc < 0.0 {
        return Vec::new();
    }
    let r = disc.sqrt();
    vec![x0 + (-bq - r) * u, x0 + (-bq + r) * u]
}

/// Gauss–Legendre nodes and weights on [−1, 1] (Newton on P_n, deterministic).
fn gauss_legendre(n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut x = vec![0.0; n];
    let mut w = vec![0.0; n];
    for i in 0..n.div_ceil(2) {
        let mut z = (std::f64::consts::PI * (i as f64 + 0.75) / (n as f64 + 0.5)).cos();
        let mut dp = 0.0;
        for _ in 0..100 {
            let (mut p0, mut p1) = (1.0, z);
            for k in 2..=n {
                let p2 = ((2 * k - 1) as f64 * z * p1 - (k - 1) as f64 * p0) / k as f64;
                p0 = p1;
                p1 = p2;
            }
            // p1 = P_n(z), p0 = P_{n−1}(z)
            dp = n as f64 * (z * p1 - p0) / (z * z - 1.0);
            let dz = p1 / dp;
            z -= dz;
            if dz.abs() < 1e-16 {
                break;
            }
        }
        x[i] = -z;
        x[n - 1 - i] = z;
        w[i] = 2.0 / ((1.0 - z * z) * dp * dp);
        w[n - 1 - i] = w[i];
    }
    (x, w)
}

/// ∫ over the panel [a, b] of the cross-section moments (upper triangle of m2 only):
/// Gauss–Legendre in t, x = a + (b − a)(1 − cos t)/2, t ∈ [0, π], the nodes doubled from
/// [`FIRST_NODES`] until the change is below [`RELATIVE_TOLERANCE`] of the reference volume
/// `v_ref` (and of v_ref·l_ref, v_ref·l_ref² for the first and second moments), at most
/// [`MAX_NODES`].
fn integrate_panel(s: &[[f64; 4]], a: f64, b: f64, v_ref: f64, l_ref: f64) -> Moments {
    if b <= a {
        return Moments::default();
    }
    let mut nodes = FIRST_NODES;
    let mut prev = panel_rule(s, a, b, nodes);
    while nodes < MAX_NODES {
        nodes *= 2;
        let next = panel_rule(s, a, b, nodes);
        let dv = (next.v - prev.v).abs() / v_ref;
        let d1 = (0..3).map(|i| (next.m1[i] - prev.m1[i]).abs()).fold(0.0, f64::max) / (v_ref * l_ref);
        let d2 = (0..3).flat_map(|i| (i..3).map(move |j| (i, j))).map(|(i, j)| (next.m2[i][j] - prev.m2[i][j]).abs()).fold(0.0, f64::max)
            / (v_ref * l_ref * l_ref);
        prev = next;
        if dv.max(d1).max(d2) < RELATIVE_TOLERANCE {
            break;
        }
    }
    prev
}

/// One Gauss–Legendre rule of `nodes` nodes over the panel [a, b] (see `integrate_panel`).
fn panel_rule(s: &[[f64; 4]], a: f64, b: f64, nodes: usize) -> Moments {
    let (gx, gw) = gauss_legendre(nodes);
    let mut m = Moments::default();
    let half_pi = std::f64::consts::FRAC_PI_2;
    for (u, wt) in gx.iter().zip(&gw) {
        let t = half_pi * (u + 1.0);
        let x = a + (b - a) * 0.5 * (1.0 - t.cos());
        let jac = wt * half_pi * (b - a) * 0.5 * t.sin();
        let c = cross_section(s, x);
        // c = [A, ∫y, ∫z, ∫y², ∫yz, ∫z²] over the section at x
        m.v += jac * c[0];
        m.m1[0] += jac * x * c[0];
        m.m1[1] += jac * c[1];
        m.m1[2] += jac * c[2];
        m.m2[0][0] += jac * x * x * c[0];
        m.m2[0][1] += jac * x * c[1];
        m.m2[0][2] += jac * x * c[2];
        m.m2[1][1] += jac * c[3];
        m.m2[1][2] += jac * c[4];
        m.m2[2][2] += jac * c[5];
    }
    m
}

/// Area, ∫y, ∫z, ∫y², ∫yz, ∫z² of the union of the discs the spheres cut from the plane at x,
/// exactly.
fn cross_section(s: &[[f64; 4]], x: f64) -> [f64; 6] {
    // discs (yc, zc, R²)
    let discs: Vec<(f64, f64, f64)> = s
        .iter()
        .filter_map(|a| {
            let r2 = a[3] * a[3] - (x - a[0]) * (x - a[0]);
            (r2 > 0.0).then_some((a[1], a[2], r2))
        })
        .collect();
    let mut out = [0.0; 6];
    if discs.is_empty() {
        return out;
    }
    let mut ys = Vec::with_capacity(2 * discs.len());
    for d in &discs {
        let r = d.2.sqrt();
        ys.push(d.0 - r);
        ys.push(d.0 + r);
    }
    for i in 0..discs.len() {
        for j in i + 1..discs.len() {
            circle_crossings(discs[i], discs[j], &mut ys);
        }
    }
    ys.sort_by(f64::total_cmp);
    ys.dedup();
    let mut ivals: Vec<(f64, usize, f64, usize)> = Vec::with_capacity(discs.len());
    for w in ys.windows(2) {
        let (y0, y1) = (w[0], w[1]);
        if y1 <= y0 {
            continue;
        }
        let ym = 0.5 * (y0 + y1);
        ivals.clear();
        for (k, d) in discs.iter().enumerate() {
            let h2 = d.2 - (ym - d.0) * (ym - d.0);
            if h2 > 0.0 {
                let h = h2.sqrt();
                ivals.push((d.1 - h, k, d.1 + h, k));
            }
        }
        if ivals.is_empty() {
            continue;
        }
        ivals.sort_by(|a, b| a.0.total_cmp(&b.0));
        // merge: (lo value, lo disc, hi value, hi disc)
        let mut cur = ivals[0];
        let emit = |lo: usize, hi: usize, out: &mut [f64; 6]| {
            let top = endpoint_integrals(discs[hi], 1.0, y0, y1);
            let bottom = endpoint_integrals(discs[lo], -1.0, y0, y1);
            for q in 0..6 {
                out[q] += top[q] - bottom[q];
            }
        };
        for iv in &ivals[1..] {
            if iv.0 <= cur.2 {
                if iv.2 > cur.2 {
                    cur.2 = iv.2;
                    cur.3 = iv.3;
                }
            } else {
                emit(cur.1, cur.3, &mut out);
                cur = *iv;
            }
        }
        emit(cur.1, cur.3, &mut out);
    }
    out
}

/// y of the points where two circles (yc, zc, R²) cross.
fn circle_crossings(a: (f64, f64, f64), b: (f64, f64, f64), ys: &mut Vec<f64>) {
    let (dy, dz) = (b.0 - a.0, b.1 - a.1);
    let d2 = dy * dy + dz * dz;
    let (ra, rb) = (a.2.sqrt(), b.2.sqrt());
    if d2 == 0.0 || d2 >= (ra + rb) * (ra + rb) || d2 <= (ra - rb) * (ra - rb) {
        return;
    }
    let d = d2.sqrt();
    let t = (d2 + a.2 - b.2) / (2.0 * d);
    let h = (a.2 - t * t).max(0.0).sqrt();
    let (uy, uz) = (dy / d, dz / d);
    let (py, _pz) = (a.0 + t * uy, a.1 + t * uz);
    // perpendicular (−uz, uy)
    ys.push(py - h * uz);
    ys.push(py + h * uz);
}

/// For the endpoint e(y) = zc + σ·sqrt(R² − (y − yc)²) of disc (yc, zc, R²), the integrals over
/// [y0, y1] of e, y e, y² e, e²/2, y e²/2, e³/3 (the contributions of a merged interval's top,
/// or minus those of its bottom, to A, ∫y, ∫y², ∫z, ∫yz, ∫z²): returned in the order of
/// `cross_section`: [A, ∫y, ∫z, ∫y², ∫yz, ∫z²].
fn endpoint_integrals(d: (f64, f64, f64), sigma: f64, y0: f64, y1: f64) -> [f64; 6] {
    let (yc, zc, r2) = d;
    let r = r2.sqrt();
    // the disc's own edges (the same floating values `cross_section` put among the
    // breakpoints) map to u = ±r exactly: y − yc would be off by an ulp, and s = sqrt(R² − u²)
    // turns an ulp into about 1e-8
    let (lo, hi) = (yc - r, yc + r);
    let to_u = |y: f64| if y <= lo { -r } else if y >= hi { r } else { y - yc };
    let (u0, u1) = (to_u(y0), to_u(y1));
    // antiderivatives in u of u^p s^k, s = sqrt(R² − u²)
    let f = |u: f64| -> [f64; 8] {
        let u = u.clamp(-r, r);
        // (r − u)(r + u), not r² − u²: exactly 0 at the disc's edge u = ±r
        let s = ((r - u) * (r + u)).max(0.0).sqrt();
        let asn = (u / r).clamp(-1.0, 1.0).asin();
        [
            u,                                                       // ∫1
            u * u / 2.0,                                             // ∫u
            u * u * u / 3.0,                                         // ∫u²
            0.5 * (u * s + r2 * asn),                                // ∫s
            -s * s * s / 3.0,                                        // ∫u s
            u * (2.0 * u * u - r2) * s / 8.0 + r2 * r2 * asn / 8.0,  // ∫u² s
            r2 * u - u * u * u / 3.0,                                // ∫s²
            u * (5.0 * r2 - 2.0 * u * u) * s / 8.0 + 3.0 * r2 * r2 * asn / 8.0, // ∫s³
        ]
    };
    let (f0, f1) = (f(u0), f(u1));
    let i: [f64; 8] = std::array::from_fn(|k| f1[k] - f0[k]);
    let [i1, iu, iuu, is, ius, iuus, is2, is3] = i;
    // y = u + yc; also ∫u s² = [r2 u²/2 − u⁴/4]
    let ius2 = {
        let g = |u: f64| {
            let u = u.clamp(-r, r);
            r2 * u * u / 2.0 - u * u * u * u / 4.0
        };
        g(u1) - g(u0)
    };
    let sg = sigma;
    // ∫ e = zc I1 + σ Is
    let e = zc * i1 + sg * is;
    // ∫ y e = ∫ (u + yc)(zc + σ s)
    let ye = zc * (iu + yc * i1) + sg * (ius + yc * is);
    // ∫ y² e = ∫ (u² + 2 yc u + yc²)(zc + σ s)
    let yye = zc * (iuu + 2.0 * yc * iu + yc * yc * i1) + sg * (iuus + 2.0 * yc * ius + yc * yc * is);
    // e² = zc² + 2 σ zc s + s²
    let ee = zc * zc * i1 + 2.0 * sg * zc * is + is2;
    let yee = zc * zc * (iu + yc * i1) + 2.0 * sg * zc * (ius + yc * is) + (ius2 + yc * is2);
    // e³ = zc³ + 3 σ zc² s + 3 zc s² + σ s³
    let eee = zc * zc * zc * i1 + 3.0 * sg * zc * zc * is + 3.0 * zc * is2 + sg * is3;
    [e, ye, ee / 2.0, yye, yee / 2.0, eee / 3.0]
}

/// Eigenvalues (ascending) and eigenvectors (the columns, right-handed) of a symmetric 3×3
/// matrix, by cyclic Jacobi rotations. The result is `(values, columns)` with `columns[k]` the
/// unit eigenvector of `values[k]`.
pub fn principal_axes(m: [[f64; 3]; 3]) -> ([f64; 3], [[f64; 3]; 3]) {
    let mut a = m;
    let mut v = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]; // v[row][col]
    let scale = (0..3).map(|i| a[i][i].abs()).fold(0.0, f64::max).max(f64::MIN_POSITIVE);
    for _sweep in 0..50 {
        let off = a[0][1].abs() + a[0][2].abs() + a[1][2].abs();
        if off <= 1e-17 * scale {
            break;
        }
        for (p, q) in [(0, 1), (0, 2), (1, 2)] {
            if a[p][q].abs() <= 1e-300 {
                continue;
            }
            let theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
            let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
            let t = if theta == 0.0 { 1.0 } else { t };
            let c = 1.0 / (t * t + 1.0).sqrt();
            let s = t * c;
            // A ← Jᵀ A J with J the rotation in the (p, q) plane
            for row in a.iter_mut() {
                let (akp, akq) = (row[p], row[q]);
                row[p] = c * akp - s * akq;
                row[q] = s * akp + c * akq;
            }
            let (rp, rq) = (a[p], a[q]);
            a[p] = std::array::from_fn(|k| c * rp[k] - s * rq[k]);
            a[q] = std::array::from_fn(|k| s * rp[k] + c * rq[k]);
            for row in v.iter_mut() {
                let (vp, vq) = (row[p], row[q]);
                row[p] = c * vp - s * vq;
                row[q] = s * vp + c * vq;
            }
        }
    }
    let mut order = [0usize, 1, 2];
    order.sort_by(|&i, &j| a[i][i].total_cmp(&a[j][j]));
    let values = order.map(|k| a[k][k]);
    let mut cols = order.map(|k| [v[0][k], v[1][k], v[2][k]]);
    let (c0, c1, c2) = (DVec3::from(cols[0]), DVec3::from(cols[1]), DVec3::from(cols[2]));
    if c0.cross(c1).dot(c2) < 0.0 {
        cols[2] = (-c2).to_array();
    }
    (values, cols)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::PI;

    fn rel(a: f64, b: f64) -> f64 {
        (a - b).abs() / b.abs().max(1e-300)
    }

    /// Largest entry difference relative to the largest entry of `b`.
    fn rel_tensor(a: &[[f64; 3]; 3], b: &[[f64; 3]; 3]) -> f64 {
        let norm = b.iter().flatten().map(|x| x.abs()).fold(0.0, f64::max);
        (0..9).map(|k| (a[k / 3][k % 3] - b[k / 3][k % 3]).abs()).fold(0.0, f64::max) / norm
    }

    /// Moments of a spherical cap of a ball of radius r about the ball's centre, the cap being
    /// the part with z ≥ z0 (|z0| ≤ r): [V, ∫z, ∫z², ∫x²] by the exact polynomial integrals
    /// of the slices (area π(r² − z²), ∫x² over a slice π(r² − z²)²/4).
    fn cap(r: f64, z0: f64) -> [f64; 4] {
        let v = |z: f64| PI * (r * r * z - z.powi(3) / 3.0);
        let mz = |z: f64| PI * (r * r * z * z / 2.0 - z.powi(4) / 4.0);
        let mzz = |z: f64| PI * (r * r * z.powi(3) / 3.0 - z.powi(5) / 5.0);
        let mxx = |z: f64| PI / 4.0 * (r.powi(4) * z - 2.0 * r * r * z.powi(3) / 3.0 + z.powi(5) / 5.0);
        [v(r) - v(z0), mz(r) - mz(z0), mzz(r) - mzz(z0), mxx(r) - mxx(z0)]
    }

    /// The lens where balls r1 at z = 0 and r2 at z = d overlap, as axial moments about z = 0:
    /// [V, ∫z, ∫z², ∫x²] (the closed form of two caps meeting at the radical plane).
    fn lens(r1: f64, r2: f64, d: f64) -> [f64; 4] {
        let t = (d * d + r1 * r1 - r2 * r2) / (2.0 * d); // radical plane, from ball 1
        let a = cap(r1, t); // part of ball 1 beyond the plane
        // part of ball 2 below the plane: its cap with z' ≥ d − t in the mirrored frame z' = d − z
        let b = cap(r2, d - t);
        // ∫z = ∫(d − z') , ∫z² = ∫(d − z')²
        let bv = b[0];
        let bz = d * bv - b[1];
        let bzz = d * d * bv - 2.0 * d * b[1] + b[2];
        [a[0] + bv, a[1] + bz, a[2] + bzz, a[3] + b[3]]
    }

    /// Exact mass properties (unit density) of the union of balls r1 at `c1` and r2 at
    /// c1 + d·axis, axis a unit vector: V1 + V2 − lens, by axial moments rotated to `axis`.
    fn exact_pair(c1: DVec3, r1: f64, r2: f64, d: f64, axis: DVec3) -> MassProperties {
        let ball = |r: f64, z: f64| {
            let v = 4.0 / 3.0 * PI * r.powi(3);
            [v, v * z, v * (z * z + r * r / 5.0), v * r * r / 5.0]
        };
        let (b1, b2) = (ball(r1, 0.0), ball(r2, d));
        let l = if d < r1 + r2 { lens(r1, r2, d) } else { [0.0; 4] };
        let m: [f64; 4] = std::array::from_fn(|k| b1[k] + b2[k] - l[k]);
        let (v, zbar) = (m[0], m[1] / m[0]);
        // central second moments in the axial frame: ∫x² = ∫y² = m[3], ∫(z − z̄)² = m[2] − v z̄²
        let (sxx, szz) = (m[3], m[2] - v * zbar * zbar);
        // rotate: second-moment tensor = sxx (I − a aᵀ) + szz a aᵀ
        let mut inertia = [[0.0; 3]; 3];
        let a = axis.to_array();
        let tr = 2.0 * sxx + szz;
        for i in 0..3 {
            for j in 0..3 {
                let delta = if i == j { 1.0 } else { 0.0 };
                let second = sxx * (delta - a[i] * a[j]) + szz * a[i] * a[j];
                inertia[i][j] = tr * delta - second;
            }
        }
        let c = c1 + axis * zbar;
        MassProperties { volume: v, centre: c.to_array(), inertia }
    }

    fn check(p: &MassProperties, e: &MassProperties, tol: f64, what: &str) {
        assert!(rel(p.volume, e.volume) < tol, "{what}: volume {} vs {}", p.volume, e.volume);
        let scale = e.volume.cbrt();
        for k in 0..3 {
            assert!((p.centre[k] - e.centre[k]).abs() < tol * scale, "{what}: centre {:?} vs {:?}", p.centre, e.centre);
        }
        let r = rel_tensor(&p.inertia, &e.inertia);
        assert!(r < tol, "{what}: inertia off by {r:e}: {:?} vs {:?}", p.inertia, e.inertia);
    }

    #[test]
    fn single_sphere() {
        let t = ClumpTemplate::new("ball", 0, &[[1.0, -2.0, 3.0, 0.5]], 2500.0).unwrap();
        let m = 2500.0 * 4.0 / 3.0 * PI * 0.125;
        assert!(rel(t.mass, m) < 1e-14);
        for k in 0..3 {
            assert!(rel(t.principal_moments[k], 0.4 * m * 0.25) < 1e-14);
        }
        assert_eq!(t.centre, [1.0, -2.0, 3.0]);
        assert_eq!(t.spheres[0].offset, [0.0; 3]);
        assert_eq!(t.bounding_radius, 0.5);
    }

    #[test]
    fn two_separate_spheres_are_exact() {
        let s = [[0.0, 0.0, 0.0, 1.0], [3.0, 0.0, 0.0, 2.0]];
        let p = union_mass_properties(&s);
        let e = exact_pair(DVec3::ZERO, 1.0, 2.0, 3.0, DVec3::X);
        check(&p, &e, 1e-14, "touching");
        // touching spheres count as separate: the closed form, bit for bit symmetric
        let t = ClumpTemplate::new("pair", 0, &s, 1.0).unwrap();
        let v1 = 4.0 / 3.0 * PI;
        let v2 = 8.0 * v1;
        // about the x axis: 2/5 (v1 + 4 v2); transverse: parallel axes from centre x̄ = 24 v1 / 9 v1
        let xbar = 3.0 * v2 / (v1 + v2);
        let ix = 0.4 * (v1 + 4.0 * v2);
        let iy = 0.4 * v1 + 0.4 * v2 * 4.0 + v1 * xbar * xbar + v2 * (3.0 - xbar).powi(2);
        assert!(rel(t.principal_moments[0], ix) < 1e-13, "{:?}", t.principal_moments);
        assert!(rel(t.principal_moments[1], iy) < 1e-13 && rel(t.principal_moments[2], iy) < 1e-13, "{:?}", t.principal_moments);
        assert!(rel(t.centre[0], xbar) < 1e-14);
    }

    #[test]
    fn two_overlapping_spheres_match_the_lens_closed_form() {
        // several radius ratios and depths of overlap, along a skew axis and along x
        let axes = [DVec3::X, DVec3::new(1.0, 2.0, -0.5).normalize(), DVec3::new(0.3, -0.1, 1.0).normalize()];
        let cases = [(1.0, 1.0, 1.0), (1.0, 0.5, 1.3), (1.0, 0.7, 0.4), (0.2, 0.3, 0.45), (1.0, 1.0, 1.999)];
        for axis in axes {
            for (r1, r2, d) in cases {
                let c1 = DVec3::new(0.3, -0.7, 1.1);
                let c2 = c1 + axis * d;
                let p = union_mass_properties(&[[c1.x, c1.y, c1.z, r1], [c2.x, c2.y, c2.z, r2]]);
                let e = exact_pair(c1, r1, r2, d, axis);
                check(&p, &e, 1e-10, &format!("r1 {r1} r2 {r2} d {d} axis {axis}"));
            }
        }
    }

    #[test]
    fn three_spheres_in_a_line_are_exact_by_inclusion_exclusion() {
        // equal balls at 0, 1.5 and 3 (r = 1): the middle one overlaps both, the outer two do
        // not meet, so the union is 3 balls − 2 lenses
        let axis = DVec3::new(1.0, 1.0, 1.0).normalize();
        let s: Vec<[f64; 4]> = (0..3)
            .map(|k| {
                let c = axis * (1.5 * k as f64);
                [c.x, c.y, c.z, 1.0]
            })
            .collect();
        let p = union_mass_properties(&s);
        let ball = 4.0 / 3.0 * PI;
        let l = lens(1.0, 1.0, 1.5);
        // about the middle ball: lenses centred at ±(0.75) along the axis
        let lens_z = l[1] / l[0] - 0.0; // lens centroid from ball 1 (at 0.75)
        assert!((lens_z - 0.75).abs() < 1e-12);
        let v = 3.0 * ball - 2.0 * l[0];
        // ∫z² about the middle: balls 2·ball·1.5² + 3·ball/5; lenses: 2·(∫(z−1.5)² over lens 1)
        let lens_zz_about_mid = l[2] - 2.0 * 1.5 * l[1] + 1.5 * 1.5 * l[0];
        let szz = 2.0 * ball * 2.25 + 3.0 * ball / 5.0 - 2.0 * lens_zz_about_mid;
        let sxx = 3.0 * ball / 5.0 - 2.0 * l[3];
        assert!(rel(p.volume, v) < 1e-10, "{} vs {v}", p.volume);
        let c = axis * 1.5;
        for k in 0..3 {
            assert!((p.centre[k] - c[k]).abs() < 1e-10);
        }
        let (moments, cols) = principal_axes(p.inertia);
        assert!(rel(moments[0], 2.0 * sxx) < 1e-10, "{moments:?}");
        assert!(rel(moments[1], sxx + szz) < 1e-10 && rel(moments[2], sxx + szz) < 1e-10, "{moments:?}");
        assert!(DVec3::from(cols[0]).dot(axis).abs() > 1.0 - 1e-10);
    }

    #[test]
    fn three_mutually_overlapping_spheres_are_invariant_under_rotation() {
        // a triple overlap has no simple closed form: the integration must not depend on the
        // frame (its breakpoints move with the rotation) and must stay below the sum of balls
        let s = [[0.0, 0.0, 0.0, 1.0], [1.2, 0.1, 0.0, 0.8], [0.5, 0.9, 0.3, 0.9]];
        let p = union_mass_properties(&s);
        let q = DQuat::from_euler(glam::EulerRot::ZXY, 0.7, -1.1, 2.3);
        let rot = DMat3::from_quat(q);
        let sr: Vec<[f64; 4]> = s
            .iter()
            .map(|a| {
                let c = q * DVec3::new(a[0], a[1], a[2]);
                [c.x, c.y, c.z, a[3]]
            })
            .collect();
        let pr = union_mass_properties(&sr);
        let i = DMat3::from_cols_array_2d(&p.inertia); // symmetric: rows = cols
        let rotated = rot * i * rot.transpose();
        let expect = MassProperties { volume: p.volume, centre: (q * DVec3::from(p.centre)).to_array(), inertia: rotated.to_cols_array_2d() };
        check(&pr, &expect, 1e-10, "rotated triple");
        let balls: f64 = s.iter().map(|a| 4.0 / 3.0 * PI * a[3].powi(3)).sum();
        assert!(p.volume < balls);
        // inclusion–exclusion bound: V ≥ Σ balls − Σ pair lenses
        let d = |a: &[f64; 4], b: &[f64; 4]| (DVec3::new(a[0], a[1], a[2]) - DVec3::new(b[0], b[1], b[2])).length();
        let pairs = lens(s[0][3], s[1][3], d(&s[0], &s[1]))[0] + lens(s[0][3], s[2][3], d(&s[0], &s[2]))[0] + lens(s[1][3], s[2][3], d(&s[1], &s[2]))[0];
        assert!(p.volume > balls - pairs);
    }

    #[test]
    fn a_sphere_inside_another_adds_nothing() {
        let p = union_mass_properties(&[[0.0, 0.0, 0.0, 1.0], [0.2, 0.3, -0.1, 0.5]]);
        let e = union_mass_properties(&[[0.0, 0.0, 0.0, 1.0]]);
        check(&p, &e, 1e-11, "nested");
        // the same sphere twice, and a sphere touching the inside of another
        let twice = union_mass_properties(&[[0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 1.0]]);
        check(&twice, &e, 1e-11, "twice");
        let inner = union_mass_properties(&[[0.0, 0.0, 0.0, 1.0], [0.0, 0.5, 0.0, 0.5]]);
        check(&inner, &e, 1e-11, "touching inside");
    }

    /// Long chains and mutually overlapping blobs integrate to a finite volume below the sum
    /// of the spheres', deterministically. (How long they take is a benchmark's business, not a
    /// test's: a loaded CI machine made a time limit here fail.)
    #[test]
    fn overlapping_chains_and_blobs_integrate_deterministically() {
        // a chain of 20 overlapping spheres, some side branches
        let s: Vec<[f64; 4]> = (0..20)
            .map(|k| {
                let t = k as f64;
                [0.6 * t, 0.3 * (t * 0.7).sin(), 0.2 * (t * 1.3).cos(), 0.5 + 0.05 * (k % 3) as f64]
            })
            .collect();
        let p = union_mass_properties(&s);
        assert!(p.volume > 0.0 && p.volume < s.iter().map(|a| 4.0 / 3.0 * std::f64::consts::PI * a[3].powi(3)).sum::<f64>());
        assert_eq!(union_mass_properties(&s), p);
        // the worst case: 20 spheres that all overlap one another (every pair and triple adds
        // breakpoints)
        let blob: Vec<[f64; 4]> = (0..20)
            .map(|k| {
                let t = k as f64;
                [0.3 * (t * 2.1).sin(), 0.3 * (t * 1.7).cos(), 0.3 * (t * 0.37).sin(), 0.6 + 0.01 * t]
            })
            .collect();
        let p = union_mass_properties(&blob);
        // at least the largest sphere, less than their sum
        assert!(p.volume >= 4.0 / 3.0 * std::f64::consts::PI * 0.79f64.powi(3) && p.volume < blob.iter().map(|a| 4.0 / 3.0 * std::f64::consts::PI * a[3].powi(3)).sum::<f64>());
        assert_eq!(union_mass_properties(&blob), p);
    }

    #[test]
    fn tilted_l_shape_recovers_moments_and_positions() {
        // an L of five spheres (some overlapping), then the same L turned by a rotation
        let l = [[0.0, 0.0, 0.0, 0.5], [0.8, 0.0, 0.0, 0.5], [1.6, 0.0, 0.0, 0.5], [0.0, 0.8, 0.0, 0.5], [0.0, 1.6, 0.0, 0.4]];
        let a = ClumpTemplate::new("l", 0, &l, 1000.0).unwrap();
        let q = DQuat::from_axis_angle(DVec3::new(0.3, -0.8, 0.52).normalize(), 2.1);
        let shift = DVec3::new(5.0, -1.0, 0.25);
        let turned: Vec<[f64; 4]> = l
            .iter()
            .map(|s| {
                let c = q * DVec3::new(s[0], s[1], s[2]) + shift;
                [c.x, c.y, c.z, s[3]]
            })
            .collect();
        let b = ClumpTemplate::new("l", 0, &turned, 1000.0).unwrap();
        assert!(rel(a.mass, b.mass) < 1e-10);
        for k in 0..3 {
            assert!(rel(a.principal_moments[k], b.principal_moments[k]) < 1e-9, "{:?} vs {:?}", a.principal_moments, b.principal_moments);
        }
        assert!(a.principal_moments[0] < a.principal_moments[1] && a.principal_moments[1] < a.principal_moments[2]);
        for t in [&a, &b] {
            let src = if std::ptr::eq(t, &a) { &l[..] } else { &turned[..] };
            let r = t.rotation();
            assert!((r.determinant() - 1.0).abs() < 1e-12, "right-handed");
            for (s, orig) in t.spheres.iter().zip(src) {
                let p = r * DVec3::from(s.offset) + DVec3::from(t.centre);
                assert!((p - DVec3::new(orig[0], orig[1], orig[2])).length() < 1e-12, "{p} vs {orig:?}");
                assert_eq!(s.radius, orig[3]);
            }
            // the inertia in the principal frame is diagonal: recompute from the offsets
            let p = union_mass_properties(&t.spheres.iter().map(|s| [s.offset[0], s.offset[1], s.offset[2], s.radius]).collect::<Vec<_>>());
            for k in 0..3 {
                assert!(p.centre[k].abs() < 1e-10);
                for j in 0..3 {
                    let expect = if j == k { t.principal_moments[k] / 1000.0 } else { 0.0 };
                    assert!((p.inertia[k][j] - expect).abs() < 1e-9 * t.principal_moments[2] / 1000.0, "{:?}", p.inertia);
                }
            }
            assert_eq!(t.user_spheres().len(), 5);
        }
    }

    #[test]
    fn principal_axes_of_a_known_tensor() {
        let q = DQuat::from_euler(glam::EulerRot::XYZ, 0.4, 1.2, -0.3);
        let r = DMat3::from_quat(q);
        let d = DMat3::from_diagonal(DVec3::new(3.0, 1.0, 2.0));
        let m = r * d * r.transpose();
        let (values, cols) = principal_axes(m.to_cols_array_2d());
        for (v, e) in values.iter().zip([1.0, 2.0, 3.0]) {
            assert!((v - e).abs() < 1e-13, "{values:?}");
        }
        for (k, c) in cols.iter().enumerate() {
            let c = DVec3::from(*c);
            assert!(((m * c) - c * values[k]).length() < 1e-12);
        }
        let (c0, c1, c2) = (DVec3::from(cols[0]), DVec3::from(cols[1]), DVec3::from(cols[2]));
        assert!((c0.cross(c1).dot(c2) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn scaling_laws() {
        let s = [[0.0, 0.0, 0.0, 1.0], [1.2, 0.3, 0.0, 0.7], [0.0, 0.0, 1.5, 0.6]];
        let t = ClumpTemplate::new("t", 1, &s, 1500.0).unwrap();
        let k = 0.01;
        let a = t.scaled(k);
        let scaled: Vec<[f64; 4]> = s.iter().map(|x| x.map(|v| v * k)).collect();
        let b = ClumpTemplate::new("t", 1, &scaled, 1500.0).unwrap();
        assert!(rel(a.mass, t.mass * k.powi(3)) < 1e-15 && rel(a.volume, t.volume * k.powi(3)) < 1e-15);
        assert!(rel(a.mass, b.mass) < 1e-10);
        for i in 0..3 {
            assert!(rel(a.principal_moments[i], t.principal_moments[i] * k.powi(5)) < 1e-15);
            assert!(rel(a.principal_moments[i], b.principal_moments[i]) < 1e-9);
            assert!((a.centre[i] - b.centre[i]).abs() < 1e-12 * k);
        }
        assert!(rel(a.bounding_radius, b.bounding_radius) < 1e-9);
        for (x, y) in a.spheres.iter().zip(&b.spheres) {
            assert_eq!(x.radius, y.radius);
        }
        assert_eq!(a.to_principal, t.to_principal);
    }

    #[test]
    fn override_replaces_mass_moments_and_axes() {
        let s = [[0.0, 0.0, 0.0, 1.0], [1.5, 0.0, 0.0, 1.0]];
        let t = ClumpTemplate::new("t", 0, &s, 1000.0).unwrap();
        // moments only: the computed axes, the given moments sorted
        let o = MassOverride { mass: 10.0, moments: [3.0, 1.0, 3.0], orientation: None };
        let a = t.with_override(&o).unwrap();
        assert_eq!((a.mass, a.principal_moments, a.to_principal, a.centre), (10.0, [1.0, 3.0, 3.0], t.to_principal, t.centre));
        assert_eq!(a.volume, t.volume);
        assert_eq!(a.spheres, t.spheres);
        // an orientation: a quarter turn about z; moment k on column k, sorted ascending
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let o = MassOverride { mass: 10.0, moments: [2.0, 1.5, 3.0], orientation: Some([2.0 * h, 0.0, 0.0, 2.0 * h]) };
        let b = t.with_override(&o).unwrap();
        assert_eq!(b.principal_moments, [1.5, 2.0, 3.0]);
        let r = b.rotation();
        assert!((r.determinant() - 1.0).abs() < 1e-12);
        // moment 1.5 belonged to the second column of the quarter turn, which is −x
        assert!((r.col(0) - DVec3::new(-1.0, 0.0, 0.0)).length() < 1e-12, "{r}");
        for (c, orig) in b.user_spheres().iter().zip(&s) {
            for k in 0..3 {
                assert!((c[k] - orig[k]).abs() < 1e-12);
            }
        }
        // errors
        let bad = |m: [f64; 3]| t.with_override(&MassOverride { mass: 1.0, moments: m, orientation: None }).unwrap_err();
        assert!(bad([1.0, 1.0, 3.0]).contains("triangle"));
        assert!(bad([0.0, 1.0, 1.0]).contains("> 0"));
        assert!(t.with_override(&MassOverride { mass: -1.0, moments: [1.0; 3], orientation: None }).unwrap_err().contains("mass"));
        assert!(t.with_override(&MassOverride { mass: 1.0, moments: [1.0; 3], orientation: Some([0.0; 4]) }).unwrap_err().contains("orientation"));
        // a lamina (equality) is allowed
        assert!(t.with_override(&MassOverride { mass: 1.0, moments: [1.0, 1.0, 2.0], orientation: None }).is_ok());
    }

    #[test]
    fn bad_spheres_are_errors() {
        assert!(ClumpTemplate::new("e", 0, &[], 1.0).unwrap_err().contains("at least one"));
        assert!(ClumpTemplate::new("e", 0, &[[0.0, 0.0, 0.0, 0.0]], 1.0).unwrap_err().contains("radius"));
        assert!(ClumpTemplate::new("e", 0, &[[0.0, 0.0, 0.0, f64::NAN]], 1.0).unwrap_err().contains("radius"));
        assert!(ClumpTemplate::new("e", 0, &[[f64::INFINITY, 0.0, 0.0, 1.0]], 1.0).unwrap_err().contains("position"));
    }

    #[test]
    fn gauss_legendre_integrates_polynomials() {
        let (x, w) = gauss_legendre(8);
        let i: f64 = x.iter().zip(&w).map(|(x, w)| w * x.powi(14)).sum();
        assert!((i - 2.0 / 15.0).abs() < 1e-14);
        assert!((w.iter().sum::<f64>() - 2.0).abs() < 1e-14);
    }
}
