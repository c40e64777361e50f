//! A picture of a snapshot: spheres as shaded discs, orthographic along an axis (or an
//! isometric direction), drawn far to near (painter's algorithm) with tiny-skia, coloured by a
//! field through plotters' viridis map, with the plane walls seen edge-on and the feature edges
//! of mesh walls as outlines. `talus run` writes one of its last snapshot (`render.png`);
//! `talus render` draws one again from a `.vtu` or a run directory (docs/output.md).

use std::path::{Path, PathBuf};
use std::str::FromStr;

use glam::DVec3;
use plotters::style::colors::colormaps::{ColorMap, ViridisRGB};
use tiny_skia::{Color, FillRule, GradientStop, Paint, PathBuilder, Pixmap, Point, RadialGradient, SpreadMode, Stroke, Transform};

use crate::error::{Result, TalusError};
use crate::output::read::{read_vtu, VtuPoints};
use crate::setup::Setup;

/// Direction the picture looks along.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum View {
    /// From +x: y to the right, z up.
    X,
    /// From −y (a front view): x to the right, z up.
    #[default]
    Y,
    /// From +z (top down): x to the right, y up.
    Z,
    /// From (1, −1, 1): z up.
    Iso,
}

impl FromStr for View {
    type Err = TalusError;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "x" => Ok(View::X),
            "y" => Ok(View::Y),
            "z" => Ok(View::Z),
            "iso" => Ok(View::Iso),
            other => Err(TalusError::Other(format!("unknown view `{other}` (expected x, y, z or iso)"))),
        }
    }
}

impl View {
    /// (right, up, toward the viewer), orthonormal with right × up = toward.
    fn frame(self) -> (DVec3, DVec3, DVec3) {
        match self {
            View::X => (DVec3::Y, DVec3::Z, DVec3::X),
            View::Y => (DVec3::X, DVec3::Z, DVec3::NEG_Y),
            View::Z => (DVec3::X, DVec3::Y, DVec3::Z),
            View::Iso => {
                let toward = DVec3::new(1.0, -1.0, 1.0).normalize();
                let up = (DVec3::Z - toward * toward.z).normalize();
                (up.cross(toward), up, toward)
            }
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            View::X => "x",
            View::Y => "y",
            View::Z => "z",
            View::Iso => "iso",
        }
    }
}

/// What the disc colours show.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ColorBy {
    /// |velocity|, m/s
    #[default]
    Speed,
    /// radius, m
    Radius,
    /// particle id (index in the snapshot)
    Id,
    /// |contact force|, N
    Force,
    /// the rigid body of each component sphere (clump scenes: `body_id`), each body its own
    /// colour (ids scrambled, so that neighbouring bodies differ)
    Body,
}

impl FromStr for ColorBy {
    type Err = TalusError;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "speed" => Ok(ColorBy::Speed),
            "radius" => Ok(ColorBy::Radius),
            "id" => Ok(ColorBy::Id),
            "force" => Ok(ColorBy::Force),
            "body" => Ok(ColorBy::Body),
            other => Err(TalusError::Other(format!("unknown colour field `{other}` (expected speed, radius, id, force or body)"))),
        }
    }
}

impl ColorBy {
    pub fn name(self) -> &'static str {
        match self {
            ColorBy::Speed => "speed",
            ColorBy::Radius => "radius",
            ColorBy::Id => "id",
            ColorBy::Force => "force",
            ColorBy::Body => "body",
        }
    }

    fn unit(self) -> &'static str {
        match self {
            ColorBy::Speed => "m/s",
            ColorBy::Radius => "m",
            ColorBy::Id | ColorBy::Body => "",
            ColorBy::Force => "N",
        }
    }

    /// The field per particle from a snapshot read from `path`.
    fn values(self, path: &Path, s: &VtuPoints) -> Result<Vec<f64>> {
        let norms = |a: &[f64]| a.chunks_exact(3).map(|v| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()).collect();
        Ok(match self {
            ColorBy::Speed => norms(s.array(path, "velocity", 3)?),
            ColorBy::Force => norms(s.array(path, "force", 3)?),
            ColorBy::Radius => s.array(path, "radius", 1)?.to_vec(),
            ColorBy::Id => s.array(path, "id", 1)?.to_vec(),
            // a multiplicative hash of the id spread over [0, 1): the golden-ratio sequence
            ColorBy::Body => s.array(path, "body_id", 1)?.iter().map(|&b| (b * 0.618_033_988_749_895).fract()).collect(),
        })
    }
}

/// Options of a render.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RenderOptions {
    pub view: View,
    pub color: ColorBy,
    /// Width and height of the (square) picture, pixels.
    pub size: u32,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions { view: View::default(), color: ColorBy::default(), size: 800 }
    }
}

/// The percentile of |contact force| that tops the colour scale of `--color force`: a few
/// grains with a far larger force (a wedged grain, an impact) would otherwise leave every
/// other grain at the bottom of the scale. Larger forces get the top colour.
pub const FORCE_PERCENTILE: f64 = 99.0;

/// The values the colours span.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ColorRange {
    /// The value drawn at the bottom (dark blue) and at the top (yellow) of the scale.
    pub lo: f64,
    pub hi: f64,
    /// The largest value drawn (above `hi` where the scale was clipped).
    pub max: f64,
    /// Particles above `hi`, drawn in the top colour (0 unless clipped).
    pub clipped: usize,
    /// The percentile the top was taken at (`FORCE_PERCENTILE` for force), `None`: the largest
    /// value.
    pub percentile: Option<f64>,
}

impl ColorRange {
    /// The range of the finite `values` of `color`: smallest to largest, except for force,
    /// whose top is the `FORCE_PERCENTILE` percentile (nearest rank) of the values; (0, 1)
    /// when there is none.
    pub fn of(color: ColorBy, values: impl IntoIterator<Item = f64>) -> ColorRange {
        let mut v: Vec<f64> = values.into_iter().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return ColorRange { lo: 0.0, hi: 1.0, max: 1.0, clipped: 0, percentile: None };
        }
        v.sort_by(f64::total_cmp);
        let (lo, max) = (v[0], v[v.len() - 1]);
        match color {
            ColorBy::Force => {
                let p = FORCE_PERCENTILE;
                let rank = ((p / 100.0 * v.len() as f64).ceil() as usize).clamp(1, v.len());
                let hi = v[rank - 1];
                let clipped = v.len() - v.partition_point(|&x| x <= hi);
                ColorRange { lo, hi, max, clipped, percentile: Some(p) }
            }
            _ => ColorRange { lo, hi: max, max, clipped: 0, percentile: None },
        }
    }

    /// Where `x` sits on the scale, 0 (bottom) to 1 (top), clamped; 0.5 for a single value.
    pub fn fraction(&self, x: f64) -> f32 {
        if self.hi > self.lo {
            (((x - self.lo) / (self.hi - self.lo)) as f32).clamp(0.0, 1.0)
        } else {
            0.5
        }
    }

    /// The colour bar's caption, e.g. `force, N: 0 … 0.1234 (99th percentile; 3 particles above,
    /// up to 5.1 N, drawn yellow)`.
    pub fn caption(&self, color: ColorBy) -> String {
        let unit = color.unit();
        let name = if unit.is_empty() { color.name().to_string() } else { format!("{}, {unit}", color.name()) };
        let f = crate::error::fmt_num;
        let mut text = format!("{name}: {} … {}", f(self.lo), f(self.hi));
        if let Some(p) = self.percentile {
            text += &format!(" ({}th percentile", f(p));
            if self.clipped > 0 {
                text += &format!("; {} above, up to {}{}{}, drawn yellow", self.clipped, f(self.max), if unit.is_empty() { "" } else { " " }, unit);
            }
            text += ")";
        }
        text
    }
}

/// Height in pixels of the colour bar strip at the bottom of a picture of `size` pixels.
pub fn bar_height(size: u32) -> u32 {
    (size / 10).clamp(8, 80)
}

/// What was drawn: particles, the colour range and the outline segments.
#[derive(Clone, Debug, PartialEq)]
pub struct RenderInfo {
    pub particles: usize,
    pub color_min: f64,
    pub color_max: f64,
    /// The colour scale, as drawn in the colour bar (`color_min`/`color_max` are its ends).
    pub range: ColorRange,
    pub outlines: usize,
}

impl RenderInfo {
    /// e.g. "20000 particles, speed 0 … 0.12 m/s (viridis: dark = low, yellow = high), 3 wall outlines"
    pub fn describe(&self, color: ColorBy) -> String {
        let clip = match self.range.percentile {
            Some(p) if self.range.clipped > 0 => format!(" ({}th percentile; {} particles above, up to {:.3e} {}, drawn yellow)", crate::error::fmt_num(p), self.range.clipped, self.range.max, color.unit()),
            Some(p) => format!(" ({}th percentile)", crate::error::fmt_num(p)),
            None => String::new(),
        };
        format!(
            "{} particles, {} {:.3e} … {:.3e} {}{clip} (viridis: dark blue = low, yellow = high), {} outline segments",
            self.particles,
            color.name(),
            self.color_min,
            self.color_max,
            color.unit(),
            self.outlines
        )
    }
}

/// 3D line segments to draw over the particles: the plane walls seen edge-on (clipped to the
/// scene's domain) and the feature edges (boundary edges and edges between facet groups) of
/// the mesh walls, all at their pose at `time`.
pub fn wall_outlines(setup: &Setup, time: f64, view: View) -> Vec<[DVec3; 2]> {
    let (_, _, toward) = view.frame();
    let (lo, hi) = (DVec3::from(setup.domain.min), DVec3::from(setup.domain.max));
    let mut out = Vec::new();
    for w in &setup.walls {
        let pose = w.motion.pose(time);
        let p = pose.point(DVec3::from(w.point), w.motion.center);
        let n = pose.direction(DVec3::from(w.normal));
        if n.dot(toward).abs() > 1e-6 {
            continue; // not edge-on: it would cover the picture
        }
        let dir = toward.cross(n).normalize();
        if let Some((a, b)) = clip_line(p, dir, lo, hi) {
            out.push([a, b]);
        }
    }
    for m in &setup.meshes {
        let pose = m.motion.pose(time);
        let mesh = &m.mesh;
        for (t, tri) in mesh.triangles.iter().enumerate() {
            for k in 0..3 {
                let other = mesh.neighbours[t][k];
                let feature = other == crate::mesh::groups::NO_NEIGHBOUR || mesh.group[other as usize] != mesh.group[t];
                // each shared edge once, from the lower triangle index
                if feature && (other == crate::mesh::groups::NO_NEIGHBOUR || (other as usize) > t) {
                    out.push([pose.point(tri[k], m.motion.center), pose.point(tri[(k + 1) % 3], m.motion.center)]);
                }
            }
        }
    }
    out
}

/// The part of the line p + s·d inside the box [lo, hi] (slab method).
fn clip_line(p: DVec3, d: DVec3, lo: DVec3, hi: DVec3) -> Option<(DVec3, DVec3)> {
    let (mut s0, mut s1) = (f64::NEG_INFINITY, f64::INFINITY);
    for a in 0..3 {
        if d[a].abs() < 1e-12 {
            if p[a] < lo[a] - 1e-9 || p[a] > hi[a] + 1e-9 {
                return None;
            }
        } else {
            let (u, v) = ((lo[a] - p[a]) / d[a], (hi[a] - p[a]) / d[a]);
            s0 = s0.max(u.min(v));
            s1 = s1.min(u.max(v));
        }
    }
    (s0.is_finite() && s1.is_finite() && s1 > s0).then(|| (p + d * s0, p + d * s1))
}

fn render_err(path: &Path, e: impl std::fmt::Display) -> TalusError {
    TalusError::Other(format!("{}: cannot draw the picture: {e}", path.display()))
}

/// Draw the snapshot `s` (read from `source`) with `outlines` and write a PNG to `out`.
pub fn render_png(s: &VtuPoints, source: &Path, outlines: &[[DVec3; 2]], opts: RenderOptions, out: &Path) -> Result<RenderInfo> {
    let n = s.position.len();
    let radius = s.array(source, "radius", 1)?;
    let values = opts.color.values(source, s)?;
    let (right, up, toward) = opts.view.frame();
    let proj = |x: DVec3| (x.dot(right), x.dot(up), x.dot(toward));

    // the frame: every disc, with a margin
    let (mut u0, mut u1, mut v0, mut v1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    let mut discs: Vec<(f64, f64, f64, f64, usize)> = Vec::with_capacity(n);
    for i in 0..n {
        let (u, v, depth) = proj(DVec3::from(s.position[i]));
        let r = radius[i];
        if !(u.is_finite() && v.is_finite() && depth.is_finite() && r.is_finite()) {
            continue;
        }
        u0 = u0.min(u - r);
        u1 = u1.max(u + r);
        v0 = v0.min(v - r);
        v1 = v1.max(v + r);
        discs.push((depth, u, v, r, i));
    }
    if discs.is_empty() {
        // nothing to frame: the outlines, or a unit square
        for seg in outlines {
            for &p in seg {
                let (u, v, _) = proj(p);
                u0 = u0.min(u);
                u1 = u1.max(u);
                v0 = v0.min(v);
                v1 = v1.max(v);
            }
        }
        if u0 > u1 {
            (u0, u1, v0, v1) = (0.0, 1.0, 0.0, 1.0);
        }
    }
    let span = (u1 - u0).max(v1 - v0).max(1e-12) * 1.08;
    let (uc, vc) = (0.5 * (u0 + u1), 0.5 * (v0 + v1));
    let size = opts.size.max(16);
    // the particles above, the colour bar in a strip at the bottom
    let bar_h = bar_height(size);
    let area = (size - bar_h) as f64;
    let scale = area / span;
    let to_px = |u: f64, v: f64| (((u - uc) * scale + 0.5 * size as f64) as f32, ((vc - v) * scale + 0.5 * area) as f32);

    // colour range over the drawn particles (force: clipped at a percentile)
    let range = ColorRange::of(opts.color, discs.iter().map(|d| values[d.4]));

    let mut pixmap = Pixmap::new(size, size).ok_or_else(|| render_err(out, format!("bad size {size}")))?;
    pixmap.fill(Color::from_rgba8(250, 250, 250, 255));
    // painter's algorithm: far (small depth along `toward`) first
    discs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut paint = Paint { anti_alias: true, ..Paint::default() };
    for &(_, u, v, r, i) in &discs {
        let (x, y) = to_px(u, v);
        let rp = (r * scale) as f32;
        if rp < 0.3 {
            continue;
        }
        let base = ViridisRGB.get_color(range.fraction(values[i]));
        let (br, bg, bb) = (base.0 as f32 / 255.0, base.1 as f32 / 255.0, base.2 as f32 / 255.0);
        let lift = |c: f32, k: f32| c + (1.0 - c) * k;
        let light = Color::from_rgba(lift(br, 0.6), lift(bg, 0.6), lift(bb, 0.6), 1.0).expect("in range");
        let mid = Color::from_rgba(br, bg, bb, 1.0).expect("in range");
        let dark = Color::from_rgba(br * 0.45, bg * 0.45, bb * 0.45, 1.0).expect("in range");
        let Some(circle) = PathBuilder::from_circle(x, y, rp) else { continue };
        // a sphere lit from the upper left: highlight off centre, darker towards the rim
        paint.shader = match RadialGradient::new(
            Point::from_xy(x - 0.35 * rp, y - 0.35 * rp),
            Point::from_xy(x, y),
            rp,
            vec![GradientStop::new(0.0, light), GradientStop::new(0.55, mid), GradientStop::new(1.0, dark)],
            SpreadMode::Pad,
            Transform::identity(),
        ) {
            Some(shader) => shader,
            None => tiny_skia::Shader::SolidColor(mid),
        };
        pixmap.fill_path(&circle, &paint, FillRule::Winding, Transform::identity(), None);
    }

    // outlines on top
    let mut line = Paint { anti_alias: true, ..Paint::default() };
    line.set_color_rgba8(60, 60, 60, 200);
    let stroke = Stroke { width: (size as f32 / 400.0).max(1.0), ..Stroke::default() };
    let mut drawn = 0;
    for seg in outlines {
        let (ua, va, _) = proj(seg[0]);
        let (ub, vb, _) = proj(seg[1]);
        let (xa, ya) = to_px(ua, va);
        let (xb, yb) = to_px(ub, vb);
        let mut pb = PathBuilder::new();
        pb.move_to(xa, ya);
        pb.line_to(xb, yb);
        if let Some(path) = pb.finish() {
            pixmap.stroke_path(&path, &line, &stroke, Transform::identity(), None);
            drawn += 1;
        }
    }

    let rgb = color_bar(&pixmap, opts.color, &range, out)?;
    crate::plot::write_png(out, &rgb, size, size)?;
    Ok(RenderInfo { particles: discs.len(), color_min: range.lo, color_max: range.hi, range, outlines: drawn })
}

/// The picture as RGB with the colour bar drawn into the strip at the bottom (`bar_height`):
/// the viridis scale from `range.lo` (left) to `range.hi` (right) with the field, its unit and
/// both ends written beside it (`ColorRange::caption`; no text without a font, see
/// `crate::plot`). Body colours are no scale: the strip then only says so.
fn color_bar(pixmap: &Pixmap, color: ColorBy, range: &ColorRange, out: &Path) -> Result<Vec<u8>> {
    use plotters::prelude::*;
    let (w, h) = (pixmap.width(), pixmap.height());
    let bar_h = bar_height(w);
    let mut rgb: Vec<u8> = pixmap.data().chunks_exact(4).flat_map(|p| [p[0], p[1], p[2]]).collect();
    let text = crate::plot::font_available();
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        let err = |e: &dyn std::fmt::Display| render_err(out, e);
        let top = (h - bar_h) as i32;
        root.draw(&Rectangle::new([(0, top), (w as i32, h as i32)], RGBColor(250, 250, 250).filled())).map_err(|e| err(&e))?;
        let (x0, x1) = ((w as f64 * 0.05) as i32, (w as f64 * 0.95) as i32);
        let (y0, y1) = (top + (bar_h as i32) / 8, top + (bar_h as i32) * 3 / 8);
        let font = ((bar_h as f64) * 0.28).max(8.0);
        if color == ColorBy::Body {
            if text {
                root.draw(&Text::new("colour: one per rigid body (no scale)", (x0, y0), ("sans-serif", font).into_font().color(&BLACK))).map_err(|e| err(&e))?;
            }
        } else {
            for x in x0..x1 {
                let c = ViridisRGB.get_color((x - x0) as f32 / (x1 - x0 - 1).max(1) as f32);
                root.draw(&PathElement::new(vec![(x, y0), (x, y1)], RGBColor(c.0, c.1, c.2))).map_err(|e| err(&e))?;
            }
            root.draw(&Rectangle::new([(x0, y0), (x1, y1)], RGBColor(60, 60, 60))).map_err(|e| err(&e))?;
            if text {
                let style = ("sans-serif", font).into_font().color(&BLACK);
                let f = crate::error::fmt_num;
                let ty = y1 + (bar_h as i32) / 16;
                root.draw(&Text::new(f(range.lo), (x0, ty), style.clone())).map_err(|e| err(&e))?;
                let hi = f(range.hi);
                let hi_w = root.estimate_text_size(&hi, &style).map(|s| s.0 as i32).unwrap_or(0);
                root.draw(&Text::new(hi.clone(), (x1 - hi_w, ty), style.clone())).map_err(|e| err(&e))?;
                // the caption, smaller where it would not fit the width
                let caption = range.caption(color);
                let cw = root.estimate_text_size(&caption, &style).map(|s| s.0 as f64).unwrap_or(0.0);
                let small = font * (0.96 * w as f64 / cw.max(1.0)).min(1.0);
                let style = ("sans-serif", small).into_font().color(&BLACK);
                let cw = root.estimate_text_size(&caption, &style).map(|s| s.0 as i32).unwrap_or(0);
                root.draw(&Text::new(caption, ((((w as i32) - cw) / 2).max(0), ty + font as i32), style)).map_err(|e| err(&e))?;
            }
        }
        root.present().map_err(|e| err(&e))?;
    }
    Ok(rgb)
}

/// The snapshot a `talus render` input names: a `.vtu` file, or a run directory (its last
/// snapshot, by the step in the file name). Errors name the path and what is missing.
pub fn snapshot_of(input: &Path) -> Result<PathBuf> {
    if input.is_dir() {
        let dir = input.join("snapshots");
        let entries = std::fs::read_dir(&dir).map_err(|e| {
            TalusError::Other(format!("{}: not a run directory with snapshots ({}: {e}); the scene needs \"snapshot_every\" > 0", input.display(), dir.display()))
        })?;
        let mut best: Option<(u64, PathBuf)> = None;
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let step = name.strip_prefix("particles_").and_then(|r| r.strip_suffix(".vtu")).and_then(|s| s.parse::<u64>().ok());
            if let Some(step) = step {
                if best.as_ref().is_none_or(|(b, _)| step > *b) {
                    best = Some((step, entry.path()));
                }
            }
        }
        best.map(|(_, p)| p).ok_or_else(|| TalusError::Other(format!("{}: no particles_<step>.vtu snapshot in it", dir.display())))
    } else if input.exists() {
        Ok(input.to_path_buf())
    } else {
        Err(TalusError::Other(format!("{}: no such file or directory (give a snapshot .vtu or a run directory)", input.display())))
    }
}

/// The step in a snapshot's file name (`particles_<step>.vtu`).
pub fn snapshot_step(path: &Path) -> Option<u64> {
    path.file_stem()?.to_str()?.strip_prefix("particles_")?.parse().ok()
}

/// Read the snapshot `vtu` and draw it (see `render_png`).
pub fn render_file(vtu: &Path, outlines: &[[DVec3; 2]], opts: RenderOptions, out: &Path) -> Result<RenderInfo> {
    let s = read_vtu(vtu)?;
    render_png(&s, vtu, outlines, opts, out)
}
