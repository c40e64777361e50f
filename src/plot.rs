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
pub(crate) fn font_available() -> bool {
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
    TalusError::Other(format!("{}: cannot draw the chart: {e}", path.display()))
}

/// Draws `theory` as a black line (none when empty) and each of `series` as coloured markers joined by thin
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
        if !theory.is_empty() {
            chart
                .draw_series(LineSeries::new(theory.iter().copied(), BLACK.stroke_width(2)))
                .map_err(|e| plot_err(path, e))?
                .label("theory")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(2)));
        }
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
    write_png(path, &buf, w, h)?;
    Ok(text)
}

/// `chart` of points named by series: each name (in order of first appearance) one series;
/// says on stderr when no font was found (the PNG then has no text). The benchmarks' figures
/// (`chung_ooi`, `clump_bench`, `cohesion_bench`).
pub fn named_chart(path: &Path, title: &str, x_label: &str, y_label: &str, theory: &[(f64, f64)], points: impl IntoIterator<Item = (String, f64, f64)>) -> Result<()> {
    let mut series: Vec<Series> = Vec::new();
    for (name, x, y) in points {
        match series.iter_mut().find(|s| s.name == name) {
            Some(s) => s.points.push((x, y)),
            None => series.push(Series { name, points: vec![(x, y)] }),
        }
    }
    if !chart(path, title, x_label, y_label, theory, &series)? {
        let file = path.file_name().map_or_else(|| path.display().to_string(), |f| f.to_string_lossy().into_owned());
        eprintln!("talus: no TrueType font found ({}): {file} has no text", FONT_PATHS[0]);
    }
    Ok(())
}

/// The partitions `energy.png` can show, each with its own colour (no two alike, none black:
/// black is the drift line): kinetic, gravitational, strain, dissipated (slip + dashpot),
/// stiffness work, wall work, inserted, removed.
pub const PARTITION_COLORS: [(&str, RGBColor); 8] = [
    ("kinetic", RGBColor(220, 50, 32)),
    ("gravitational", RGBColor(0, 90, 181)),
    ("strain", RGBColor(0, 140, 70)),
    ("dissipated", RGBColor(150, 60, 170)),
    ("stiffness work", RGBColor(230, 150, 0)),
    ("wall work", RGBColor(90, 90, 90)),
    ("inserted", RGBColor(0, 170, 200)),
    ("removed", RGBColor(160, 100, 40)),
];

/// The colour of partition `name` in `energy.png` (the first word(s) of its legend label, as in
/// `PARTITION_COLORS`); an unknown name gets grey.
pub fn partition_color(name: &str) -> RGBColor {
    PARTITION_COLORS.iter().find(|(n, _)| name.starts_with(n)).map_or(RGBColor(128, 128, 128), |&(_, c)| c)
}

/// The title above `energy.png`'s partitions: kinetic and strain energy are drawn as they are,
/// every other partition as its change since the first row.
pub const ENERGY_TITLE: &str = "energy partitions: kinetic and strain as they are, the others as change since the start";

/// The energy chart of a run (`energy.png`, 900×700): above, every energy partition of
/// `energy.csv` against time, each in its own colour (`partition_color`): kinetic and strain as
/// they are, the others as the change since the first row (gravitational and the work terms
/// only matter as differences): gravitational, dissipated (slip + dashpot) and, where not zero
/// throughout, stiffness work, wall work, inserted and removed (title `ENERGY_TITLE`);
/// below, on its own scale, the drift of the total (total − its first value) with its largest
/// size as a fraction of the largest partition change. A run without energy tracking
/// (`energy_tracking` false: no slip, dashpot or total column) shows no dissipation and no
/// drift. Returns false when no font was found (no text drawn). `csv` names the source in
/// errors.
pub fn energy_chart(path: &Path, csv: &Path, table: &crate::output::read::EnergyTable) -> Result<bool> {
    let col = |name: &str| table.column(csv, name);
    let time = col("time")?;
    let rel = |v: Vec<f64>| -> Vec<f64> {
        let v0 = v.first().copied().unwrap_or(0.0);
        v.into_iter().map(|x| x - v0).collect()
    };
    let tracked = table.columns.iter().any(|c| c == "total");
    let mut series: Vec<(&str, Vec<f64>)> = vec![("kinetic", col("kinetic")?), ("gravitational − initial", rel(col("gravitational")?)), ("strain", col("strain")?)];
    if tracked {
        let (slip, dashpot) = (col("slip")?, col("dashpot")?);
        series.push(("dissipated (slip + dashpot)", rel(slip.iter().zip(&dashpot).map(|(a, b)| a + b).collect())));
    }
    for (name, label) in [("stiffness_work", "stiffness work"), ("wall_work", "wall work"), ("inserted", "inserted"), ("removed", "removed")] {
        if let Ok(v) = col(name) {
            if v.iter().any(|&x| x != 0.0) {
                series.push((label, rel(v)));
            }
        }
    }
    let drift = if tracked { rel(col("total")?) } else { Vec::new() };
    let scale = series.iter().flat_map(|(_, v)| v.iter()).fold(0.0f64, |m, &x| m.max(x.abs()));
    let max_drift = drift.iter().fold(0.0f64, |m, &x| m.max(x.abs()));
    let drift_text = if !tracked {
        "no energy balance: the scene turns energy_tracking off (no slip, dashpot or stiffness work booked)".to_string()
    } else if scale > 0.0 {
        format!("total − initial (largest |drift| {max_drift:.2e} J = {:.2e} of the largest partition change)", max_drift / scale)
    } else {
        format!("total − initial (largest |drift| {max_drift:.2e} J)")
    };

    let (w, h) = (900u32, 700u32);
    let (t0, mut t1) = (time.first().copied().unwrap_or(0.0), time.last().copied().unwrap_or(1.0));
    if t1 <= t0 {
        t1 = t0 + 1.0;
    }
    let range = |vals: &mut dyn Iterator<Item = f64>| {
        let (mut lo, mut hi) = (f64::MAX, f64::MIN);
        for x in vals.filter(|x| x.is_finite()) {
            lo = lo.min(x);
            hi = hi.max(x);
        }
        if lo > hi {
            (lo, hi) = (0.0, 1.0);
        }
        let pad = 0.05 * (hi - lo).max(1e-300);
        let (lo, hi) = (lo - pad, hi + pad);
        if hi - lo < 1e-300 { (lo - 1.0, hi + 1.0) } else { (lo, hi) }
    };
    let (y0, y1) = range(&mut series.iter().flat_map(|(_, v)| v.iter().copied()));
    let (d0, d1) = {
        let m = max_drift.max(1e-300) * 1.1;
        range(&mut [-m, m].into_iter())
    };
    let text = font_available();
    let mut buf = vec![255u8; (w * h * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| plot_err(path, e))?;
        let (top, bottom) = root.split_vertically(470);
        let mut builder = ChartBuilder::on(&top);
        builder.margin(15);
        if text {
            builder.caption(ENERGY_TITLE, ("sans-serif", 18)).x_label_area_size(35).y_label_area_size(75);
        }
        let mut chart = builder.build_cartesian_2d(t0..t1, y0..y1).map_err(|e| plot_err(path, e))?;
        let mut mesh = chart.configure_mesh();
        mesh.light_line_style(RGBColor(235, 235, 235));
        if text {
            mesh.x_desc("time (s)").y_desc("energy (J)").label_style(("sans-serif", 14)).y_label_formatter(&|y| format!("{y:.2e}"));
        } else {
            mesh.disable_x_axis().disable_y_axis();
        }
        mesh.draw().map_err(|e| plot_err(path, e))?;
        for (name, v) in &series {
            let c = partition_color(name);
            chart
                .draw_series(LineSeries::new(time.iter().copied().zip(v.iter().copied()), c.stroke_width(2)))
                .map_err(|e| plot_err(path, e))?
                .label(name.to_string())
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2)));
        }
        if text {
            chart.configure_series_labels().position(SeriesLabelPosition::UpperLeft).background_style(WHITE.mix(0.9)).border_style(BLACK).label_font(("sans-serif", 14)).draw().map_err(|e| plot_err(path, e))?;
        }

        let mut builder = ChartBuilder::on(&bottom);
        builder.margin(15);
        if text {
            builder.caption(&drift_text, ("sans-serif", 15)).x_label_area_size(35).y_label_area_size(75);
        }
        let mut chart = builder.build_cartesian_2d(t0..t1, d0..d1).map_err(|e| plot_err(path, e))?;
        let mut mesh = chart.configure_mesh();
        mesh.light_line_style(RGBColor(235, 235, 235));
        if text {
            mesh.x_desc("time (s)").y_desc("drift (J)").label_style(("sans-serif", 14)).y_label_formatter(&|y| format!("{y:.1e}"));
        } else {
            mesh.disable_x_axis().disable_y_axis();
        }
        mesh.draw().map_err(|e| plot_err(path, e))?;
        chart.draw_series(LineSeries::new([(t0, 0.0), (t1, 0.0)], RGBColor(150, 150, 150).stroke_width(1))).map_err(|e| plot_err(path, e))?;
        chart.draw_series(LineSeries::new(time.iter().copied().zip(drift.iter().copied()), BLACK.stroke_width(2))).map_err(|e| plot_err(path, e))?;
        root.present().map_err(|e| plot_err(path, e))?;
    }
    write_png(path, &buf, w, h)?;
    Ok(text)
}

/// Encode an RGB buffer as PNG and write it atomically.
pub(crate) fn write_png(path: &Path, buf: &[u8], w: u32, h: u32) -> Result<()> {
    let mut png_bytes = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut png_bytes, w, h);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut writer = enc.write_header().map_err(|e| plot_err(path, e))?;
        writer.write_image_data(buf).map_err(|e| plot_err(path, e))?;
    }
    crate::output::write_atomic(path, &png_bytes)
}

/// `talus plot`: read `run_dir/energy.csv` and write `energy.png` (default: beside it).
pub fn plot_run(run_dir: &Path, out: Option<&Path>) -> Result<std::path::PathBuf> {
    let csv = if run_dir.is_dir() { run_dir.join("energy.csv") } else { run_dir.to_path_buf() };
    let table = crate::output::read::read_energy_csv(&csv)?;
    let out = out.map(Path::to_path_buf).unwrap_or_else(|| csv.with_file_name("energy.png"));
    energy_chart(&out, &csv, &table)?;
    Ok(out)
}
