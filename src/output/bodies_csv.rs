//! `snapshots/bodies_<step>.csv`, written beside each VTU snapshot of a scene with rigid
//! clumps: one row per body (body-id order) with its template, mass, centre of mass (inside
//! the domain on periodic axes, as the VTU's points), orientation quaternion (w, x, y, z, body
//! → space; the body frame is the principal frame), velocity and angular velocity. Numbers in
//! Rust's shortest round-trip form; written atomically.

use std::fmt::Write as _;
use std::path::Path;

use super::atomic::write_atomic;
use crate::error::Result;
use crate::model::body::{omega, Bodies, NO_BODY};

/// The header of the file.
pub const HEADER: &str = "id,template,mass,x,y,z,qw,qx,qy,qz,vx,vy,vz,wx,wy,wz";

/// The bodies file of `bodies` (`template` names its entries; `NO_BODY` is a lone sphere).
pub fn bodies_text(bodies: &Bodies, templates: &[String]) -> String {
    let mut out = String::with_capacity(64 + bodies.len() * 200);
    out.push_str(HEADER);
    out.push('\n');
    for b in 0..bodies.len() {
        let t = bodies.template[b];
        let name = if t == NO_BODY { "sphere" } else { templates.get(t as usize).map(String::as_str).unwrap_or("?") };
        let (x, q, v) = (bodies.position[b], bodies.orientation[b], bodies.velocity[b]);
        let w = omega(q, bodies.moments[b], bodies.angular_momentum[b]);
        let _ = write!(out, "{b},{name},{:?}", bodies.mass[b]);
        for c in x.iter().chain(&q).chain(&v).chain(&w) {
            let _ = write!(out, ",{c:?}");
        }
        out.push('\n');
    }
    out
}

/// Write the bodies file to `path` atomically.
pub fn write_bodies_csv(path: &Path, bodies: &Bodies, templates: &[String]) -> Result<()> {
    write_atomic(path, bodies_text(bodies, templates).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_row_per_body_with_omega() {
        let mut b = Bodies::default();
        b.push([1.0, 2.0, 3.0], [1.0, 0.0, 0.0, 0.0], [0.5, 0.0, 0.0], [0.0, 0.0, 2.0], 4.0, [1.0, 1.0, 4.0], 0, 0, &[[0.0; 3], [0.1, 0.0, 0.0]]);
        b.push([0.0; 3], [1.0, 0.0, 0.0, 0.0], [0.0; 3], [0.0; 3], 1.0, [0.4; 3], NO_BODY, 2, &[[0.0; 3]]);
        let text = bodies_text(&b, &["tablet".to_string()]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], HEADER);
        assert_eq!(lines[1], "0,tablet,4.0,1.0,2.0,3.0,1.0,0.0,0.0,0.0,0.5,0.0,0.0,0.0,0.0,0.5");
        assert!(lines[2].starts_with("1,sphere,1.0,"));
        assert_eq!(lines.len(), 3);
    }
}
