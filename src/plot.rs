//! Line charts as PNG (plotters' bitmap backend into a buffer, encoded with `png`, written
//! atomically). Text needs a TrueType font: the first of `FONT_PATHS` that exists is used
//! (Debian/Ubuntu: `fonts-dejavu-core`); without one the charts are drawn without text and
//! `chart` says so in its return value.

use std::path::Path;
use std::sync::OnceLock;

use plotters::prelude::*;

use crate::error::{Result, TalusError};

/// Where a sans-serif TrueType font is looked for.
pub const FONT_PATHS: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/System/Library/Fonts/Supplemental/Arial.ttf",
    "C:\\Windows\\Fonts\\arial.ttf",
];

/// Registers the first font found as "sans-serif" (once); false when there is none.
fn font_available() -> bool {
    static FONT: OnceLock<bool> = OnceLock::new();
    *FONT.get_or_init(|| {
        for p in FONT_PATHS {
            if let Ok(bytes) = std::fs::read(p) {
                let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                if plotters::style::register_font("sans-serif", FontStyle::Normal, bytes).is_ok() {
                    return true;
                }
            }
        }
        false
    })
}

/// A named series of points.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

const COLORS: [RGBColor; 6] = [RGBColor(220, 50, 32), RGBColor(0, 90, 181), RGBColor(0, 140, 70), RGBColor(150, 60, 170), RGBColor(230, 150, 0), RGBColor(90, 90, 90)];

fn plot_err(path: &Path, e: impl std::fmt::Display) -> TalusError {
    TalusError::Verify(format!("{}: cannot draw the chart: {e}", path.display()))
}

/// Draws `theory` as a black line and each of `series` as coloured markers joined by thin
/// lines; writes a 900×600 PNG to `path`. Returns false when no font was found (no text drawn).
pub fn chart(path: &Path, title: &str, x_label: &str, y_label: &str, theory: &[(f64, f64)], series: &[Series]) -> Result<bool> {
    let (w, h) = (900u32, 600u32);
    let all = theory.iter().chain(series.iter().flat_map(|s| s.points.iter()));
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in all {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if x0 >= x1 {
        x1 = x0 + 1.0;
    }
    let pad = 0.05 * (y1 - y0).max(1e-12);
    let (y0, y1) = (y0 - pad, y1 + pad);
    let text = font_available();
    let mut buf = vec![255u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| plot_err(path, e))?;
        let mut builder = ChartBuilder::on(&root);
        builder.margin(20);
        if text {
            builder.caption(title, ("sans-serif", 22)).x_label_area_size(45).y_label_area_size(65);
        }
        let mut chart = builder.build_cartesian_2d(x0..x1, y0..y1).map_err(|e| plot_err(path, e))?;
        let mut mesh = chart.configure_mesh();
        mesh.light_line_style(RGBColor(235, 235, 235));
        if text {
            mesh.x_desc(x_label).y_desc(y_label).label_style(("sans-serif", 15));
        } else {
            mesh.disable_x_axis().disable_y_axis();
        }
        mesh.draw().map_err(|e| plot_err(path, e))?;
        chart
            .draw_series(LineSeries::new(theory.iter().copied(), BLACK.stroke_width(2)))
            .map_err(|e| plot_err(path, e))?
            .label("theory")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(2)));
        for (k, s) in series.iter().enumerate() {
            let c = COLORS[k % COLORS.len()];
            chart.draw_series(LineSeries::new(s.points.iter().copied(), c.stroke_width(1))).map_err(|e| plot_err(path, e))?;
            chart
                .draw_series(s.points.iter().map(|&p| Circle::new(p, 4, c.filled())))
                .map_err(|e| plot_err(path, e))?
                .label(s.name.clone())
                .legend(move |(x, y)| Circle::new((x + 10, y), 4, c.filled()));
        }
        if text {
            chart.configure_series_labels().background_style(WHITE.mix(0.9)).border_style(BLACK).label_font(("sans-serif", 15)).draw().map_err(|e| plot_err(path, e))?;
        }
        root.present().map_err(|e| plot_err(path, e))?;
    }
    let mut png_bytes = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut png_bytes, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc.write_header().map_err(|e| plot_err(path, e))?;
        writer.write_image_data(&buf).map_err(|e| plot_err(path, e))?;
    }
    crate::output::write_atomic(path, &png_bytes)?;
    Ok(text)
}
