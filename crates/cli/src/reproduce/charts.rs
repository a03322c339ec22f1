//! The report's PNG charts, drawn with plotters on its bitmap backend: a bar
//! chart of each table's headline changes and line charts of a seed's runs
//! over time. Text uses DejaVu Sans, embedded in the binary (its licence is
//! `crates/cli/assets/DejaVuSans-LICENSE.txt`) so that a machine without
//! fonts draws the same pictures.

use anyhow::{anyhow, Context, Result};
use engine::timeseries::COLUMNS;
use experiment::reproduce::{Metric, SampledRun, Table};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;
use std::sync::OnceLock;

/// The family name the embedded font is registered under.
pub(crate) const FONT: &str = "sans-serif";
static DEJAVU_SANS: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");

/// Line colours, one per run (matplotlib's first five).
pub(crate) const PALETTE: [RGBColor; 5] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
];
const SEED_GREY: RGBColor = RGBColor(150, 150, 150);
pub(crate) const GRID: RGBColor = RGBColor(230, 230, 230);

/// Points per line at most; longer series are thinned to every k-th sample.
const MAX_POINTS: usize = 400;

/// Pixel width of every chart.
const WIDTH: u32 = 1000;
/// Height of the title and legend strip above the plots.
const HEADER: u32 = 96;

pub(crate) type Area<'a> = DrawingArea<BitMapBackend<'a>, Shift>;

fn register_font() -> Result<()> {
    static DONE: OnceLock<bool> = OnceLock::new();
    let ok = *DONE.get_or_init(|| plotters::style::register_font(FONT, FontStyle::Normal, DEJAVU_SANS).is_ok());
    ok.then_some(()).ok_or_else(|| anyhow!("the embedded font DejaVuSans.ttf could not be read"))
}

/// Draws a `height`-pixel chart with `draw` and writes it to `path` atomically
/// (a temporary PNG beside it, then a rename).
pub(crate) fn write_png(path: &Path, height: u32, draw: impl FnOnce(&Area) -> Result<()>) -> Result<()> {
    register_font()?;
    let tmp = path.with_extension("tmp.png");
    {
        let root = BitMapBackend::new(&tmp, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE)?;
        draw(&root)?;
        root.present().with_context(|| format!("writing {}", tmp.display()))?;
    }
    std::fs::rename(&tmp, path).with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))
}

/// One legend entry: its text, colour, and whether it is drawn as a box or a line.
struct Key<'a> {
    text: &'a str,
    colour: RGBColor,
    boxed: bool,
}

/// The strip above the plots: a title, a smaller subtitle, and the legend in a row.
fn header(area: &Area, title: &str, subtitle: &str, keys: &[Key]) -> Result<()> {
    area.draw(&Text::new(title.to_string(), (20, 10), (FONT, 24).into_font().color(&BLACK)))?;
    area.draw(&Text::new(subtitle.to_string(), (20, 42), (FONT, 14).into_font().color(&RGBColor(80, 80, 80))))?;
    let mut x = 20;
    let y = 78;
    for k in keys {
        if k.boxed {
            area.draw(&Rectangle::new([(x, y - 7), (x + 24, y + 7)], k.colour.filled()))?;
        } else {
            area.draw(&PathElement::new(vec![(x, y), (x + 24, y)], k.colour.stroke_width(3)))?;
        }
        let style = (FONT, 16).into_font().color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center));
        area.draw(&Text::new(k.text.to_string(), (x + 30, y), style))?;
        let (w, _) = area.estimate_text_size(k.text, &TextStyle::from((FONT, 16).into_font()))?;
        x += 30 + w as i32 + 28;
    }
    Ok(())
}

/// `1.5M`, `350k`, `42`: axis labels that stay short.
pub(crate) fn short_number(v: &f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{:.1}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 10.0 || *v == v.trunc() {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// The part of a table title before its parenthesised details, at most 70 characters.
pub fn short_title(title: &str) -> String {
    let head = title.split(" (").next().unwrap_or(title);
    if head.chars().count() > 70 {
        head.chars().take(69).collect::<String>() + "…"
    } else {
        head.to_string()
    }
}

/// The half-width of a change axis, percent: the largest change shown, with a
/// margin, rounded up to 1, 1.5, 2, 3, 5 or 7.5 times a power of ten (at least 2%, at most
/// 200%; larger changes are clipped, their true figure written beside the bar).
fn change_axis(changes: impl Iterator<Item = f64>) -> f64 {
    let largest = changes.map(f64::abs).filter(|c| c.is_finite()).fold(0.0, f64::max) * 1.15;
    let mut step = 1.0;
    loop {
        for k in [1.0, 1.5, 2.0, 3.0, 5.0, 7.5] {
            let v = k * step;
            if v >= largest.max(2.0) || v >= 200.0 {
                return v.min(200.0);
            }
        }
        step *= 10.0;
    }
}

/// A column heading as its legend names it (with the kernel, see [`legend_texts`]) when known.
fn with_kernel(label: &str, kernels: &[(String, String)]) -> String {
    kernels.iter().find(|(l, _)| l == label).map_or_else(|| label.to_string(), |(_, text)| text.clone())
}

/// Horizontal bars, per metric, of the seed's relative change (grey) and ours
/// (blue) from the first column to the last, on an axis scaled to the largest
/// change (see [`change_axis`]) with the true figure written beside each bar.
/// `kernels` maps column headings to their legend texts, for the subtitle.
pub fn change_chart(path: &Path, seed: &str, t: &Table, kernels: &[(String, String)]) -> Result<()> {
    const ROW: u32 = 46;
    let rows: Vec<&Metric> =
        t.metrics.iter().filter(|m| m.not_modelled.is_none()).take(super::report::CHART_ROWS).collect();
    let n = rows.len();
    let (first, last) = (t.variants.first().map_or("", String::as_str), t.variants.last().map_or("", String::as_str));
    let (first, last) = (with_kernel(first, kernels), with_kernel(last, kernels));
    let changes: Vec<(Option<f64>, Option<f64>)> = rows
        .iter()
        .map(|m| {
            let seed_vals: Option<Vec<f64>> = m.seed.iter().copied().collect();
            (
                seed_vals.as_deref().and_then(Metric::change).map(|c| c * 100.0),
                Metric::change(&m.ours).map(|c| c * 100.0),
            )
        })
        .collect();
    let lim = change_axis(changes.iter().flat_map(|(a, b)| [*a, *b]).flatten());
    let span = lim * 1.3;
    write_png(path, HEADER + 70 + ROW * n as u32, |root| {
        let (top, plot) = root.split_vertically(HEADER);
        let keys = [
            Key { text: "seed document", colour: SEED_GREY, boxed: true },
            Key { text: "reclaimsim", colour: PALETTE[0], boxed: true },
        ];
        header(
            &top,
            &format!("{seed}: {}", short_title(&t.title)),
            &format!("relative change from {first} to {last}"),
            &keys,
        )?;
        let mut chart = ChartBuilder::on(&plot)
            .margin_left(10)
            .margin_right(30)
            .margin_bottom(10)
            .x_label_area_size(50)
            .y_label_area_size(220)
            .build_cartesian_2d(-span..span, -0.5..n as f64 - 0.5)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .bold_line_style(GRID)
            .light_line_style(TRANSPARENT)
            .x_desc(format!("change, % ({first} → {last}; bars clipped at ±{lim}%)"))
            .x_labels(11)
            .x_label_formatter(&|x| format!("{x:+.0}"))
            .label_style((FONT, 15))
            .axis_desc_style((FONT, 16))
            .draw()?;
        chart.draw_series(LineSeries::new([(0.0, -0.5), (0.0, n as f64 - 0.5)], BLACK.stroke_width(1)))?;
        for (i, m) in rows.iter().enumerate() {
            let y = (n - 1 - i) as f64;
            // The metric's name left of the plot (the label area), level with its bars.
            let (px, py) = chart.backend_coord(&(-span, y));
            let style = (FONT, 15).into_font().color(&BLACK).pos(Pos::new(HPos::Right, VPos::Center));
            root.draw(&Text::new(m.name.clone(), (px - 10, py), style))?;
            let bars = [(changes[i].0, SEED_GREY, y + 0.04), (changes[i].1, PALETTE[0], y - 0.36)];
            for (change, colour, y0) in bars {
                let label_y = y0 + 0.16;
                let Some(c) = change else {
                    let style = (FONT, 13).into_font().color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center));
                    chart.plotting_area().draw(&Text::new(
                        "n/a (first value 0 or not given)",
                        (lim * 0.02, label_y),
                        style,
                    ))?;
                    continue;
                };
                let w = c.clamp(-lim, lim);
                chart.plotting_area().draw(&Rectangle::new([(0.0, y0), (w, y0 + 0.32)], colour.filled()))?;
                let gap = lim * 0.015;
                let (x, h) = if w < 0.0 { (w - gap, HPos::Right) } else { (w + gap, HPos::Left) };
                let style = (FONT, 13).into_font().color(&BLACK).pos(Pos::new(h, VPos::Center));
                chart.plotting_area().draw(&Text::new(format!("{c:+.1}%"), (x, label_y), style))?;
            }
        }
        Ok(())
    })
}

/// One plot of the time-series chart: which columns it draws and how.
struct Panel {
    title: &'static str,
    unit: &'static str,
    /// Sample columns with their line style (dashed or solid).
    columns: &'static [(&'static str, bool)],
    /// Factor from the column's unit (pages) to the plot's.
    scale: f64,
}

const MIB_PER_PAGE: f64 = mm::PAGE_SIZE as f64 / (1024.0 * 1024.0);

const PANELS: [Panel; 5] = [
    Panel {
        title: "Free memory (nr_free_pages)",
        unit: "MiB",
        columns: &[("nr_free_pages", false)],
        scale: MIB_PER_PAGE,
    },
    Panel {
        title: "Anon LRU: active (solid), inactive (dashed)",
        unit: "MiB",
        columns: &[("nr_active_anon", false), ("nr_inactive_anon", true)],
        scale: MIB_PER_PAGE,
    },
    Panel {
        title: "File LRU: active (solid), inactive (dashed)",
        unit: "MiB",
        columns: &[("nr_active_file", false), ("nr_inactive_file", true)],
        scale: MIB_PER_PAGE,
    },
    Panel {
        title: "Refaults since start: file (solid), anon (dashed)",
        unit: "pages",
        columns: &[("workingset_refault_file", false), ("workingset_refault_anon", true)],
        scale: 1.0,
    },
    // Kernels before v3.15 (seed 003's) count no refaults: their swap-ins and major faults show the same trouble.
    Panel {
        title: "Since start: major faults (solid), swap-ins (dashed)",
        unit: "pages",
        columns: &[("pgmajfault", false), ("pswpin", true)],
        scale: 1.0,
    },
];

/// Panel height in pixels.
const PANEL_HEIGHT: u32 = 270;

fn column(name: &str) -> usize {
    COLUMNS.iter().position(|c| *c == name).unwrap_or_else(|| unreachable!("{name} is a timeseries column"))
}

/// `(seconds, value * scale)` of a column, thinned to at most [`MAX_POINTS`] (the last sample kept).
fn points(run: &SampledRun, col: usize, scale: f64) -> Vec<(f64, f64)> {
    let rows = &run.series.rows;
    let step = rows.len().div_ceil(MAX_POINTS).max(1);
    let mut idx: Vec<usize> = (0..rows.len()).step_by(step).collect();
    if rows.len() > 1 && idx.last() != Some(&(rows.len() - 1)) {
        idx.push(rows.len() - 1);
    }
    idx.into_iter().map(|i| (rows[i][0] as f64 / 1e9, rows[i][col] as f64 * scale)).collect()
}

/// Free memory, anon and file LRU sizes, cumulative refaults, major faults and
/// swap-ins over virtual time, one colour per run (the kernels on the same axes).
pub fn timeseries_chart(path: &Path, title: &str, runs: &[&SampledRun]) -> Result<()> {
    let x_max =
        runs.iter().filter_map(|r| r.series.rows.last()).map(|row| row[0] as f64 / 1e9).fold(0.0, f64::max).max(1e-3);
    let subtitle = runs.first().map(|r| r.workloads.join("  ")).unwrap_or_default();
    let subtitle =
        if subtitle.chars().count() > 125 { subtitle.chars().take(124).collect::<String>() + "…" } else { subtitle };
    // Panels where every run stays at zero (no file pages, no refaults before v3.15) are left out.
    let panels: Vec<&Panel> = PANELS
        .iter()
        .filter(|p| {
            runs.iter().any(|r| p.columns.iter().any(|(c, _)| r.series.rows.iter().any(|row| row[column(c)] > 0)))
        })
        .collect();
    let texts = legend_texts(runs);
    write_png(path, HEADER + PANEL_HEIGHT * panels.len().max(1) as u32, |root| {
        let (top, rest) = root.split_vertically(HEADER);
        let keys: Vec<Key> = texts
            .iter()
            .enumerate()
            .map(|(i, t)| Key { text: t, colour: PALETTE[i % PALETTE.len()], boxed: false })
            .collect();
        header(&top, title, &subtitle, &keys)?;
        for (panel, area) in panels.iter().zip(rest.split_evenly((panels.len().max(1), 1))) {
            draw_panel(&area, panel, runs, x_max)?;
        }
        Ok(())
    })
}

/// Legend texts: what tells the runs' kernels apart (the profile, and the
/// settings not all runs share), then the column heading: `v5.9 (patch)`.
pub fn legend_texts(runs: &[&SampledRun]) -> Vec<String> {
    let words: Vec<Vec<&str>> = runs.iter().map(|r| r.kernel.split(' ').filter(|w| !w.is_empty()).collect()).collect();
    let profiles_differ = words.iter().any(|w| w.first() != words[0].first());
    runs.iter()
        .zip(&words)
        .map(|(r, w)| {
            let mut parts: Vec<&str> = Vec::new();
            if profiles_differ {
                parts.extend(w.first());
            }
            parts.extend(w.iter().skip(1).filter(|s| !words.iter().all(|o| o.contains(s))));
            if parts.is_empty() {
                parts.extend(w.first());
            }
            let kernel = parts.join(" ");
            if kernel.is_empty() || kernel == r.label {
                r.label.clone()
            } else {
                format!("{kernel} ({})", r.label)
            }
        })
        .collect()
}

fn draw_panel(area: &Area, panel: &Panel, runs: &[&SampledRun], x_max: f64) -> Result<()> {
    let mut lines = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        for (name, dashed) in panel.columns {
            lines.push((PALETTE[i % PALETTE.len()], *dashed, points(run, column(name), panel.scale)));
        }
    }
    let y_max = lines.iter().flat_map(|(_, _, p)| p.iter().map(|(_, y)| *y)).fold(0.0, f64::max).max(1.0) * 1.05;
    let mut chart = ChartBuilder::on(area)
        .caption(panel.title, (FONT, 18))
        .margin_left(10)
        .margin_right(30)
        .margin_bottom(6)
        .x_label_area_size(46)
        .y_label_area_size(80)
        .build_cartesian_2d(0.0..x_max, 0.0..y_max)?;
    chart
        .configure_mesh()
        .bold_line_style(GRID)
        .light_line_style(TRANSPARENT)
        .x_desc("virtual time (s)")
        .y_desc(panel.unit)
        .y_label_formatter(&short_number)
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 15))
        .draw()?;
    // Earlier runs are drawn wider, so a later run on the same values shows inside them.
    let per_run = panel.columns.len();
    for (k, (colour, dashed, pts)) in lines.into_iter().enumerate() {
        let style = colour.stroke_width(2 + 2 * (runs.len() - 1 - k / per_run) as u32);
        if dashed {
            chart.draw_series(DashedLineSeries::new(pts, 7, 5, style))?;
        } else {
            chart.draw_series(LineSeries::new(pts, style))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::Timeseries;

    #[test]
    fn long_series_are_thinned_keeping_the_last_sample() {
        let rows: Vec<_> = (1..=1001u64)
            .map(|k| {
                let mut r = [0u64; COLUMNS.len()];
                r[0] = k * 10_000_000;
                r[1] = k;
                r
            })
            .collect();
        let run = SampledRun {
            label: "a".into(),
            kernel: String::new(),
            workloads: vec![],
            series: Timeseries { interval_ns: 10_000_000, rows },
        };
        let p = points(&run, column("nr_free_pages"), 2.0);
        assert_eq!(p.len(), 335, "every third of 1001 samples, plus the last");
        assert_eq!(p[0], (0.01, 2.0));
        assert_eq!(p[1], (0.04, 8.0));
        assert_eq!(*p.last().unwrap(), (10.01, 2002.0));
    }

    #[test]
    fn change_axis_fits_the_data() {
        assert_eq!(change_axis([-5.0, 3.0].into_iter()), 7.5);
        assert_eq!(change_axis([1.0].into_iter()), 2.0);
        assert_eq!(change_axis([-54.0, 30.0].into_iter()), 75.0);
        assert_eq!(change_axis([-24.0, 21.0].into_iter()), 30.0);
        assert_eq!(change_axis([98.8].into_iter()), 150.0);
        assert_eq!(change_axis([17.0].into_iter()), 20.0);
        assert_eq!(change_axis([900.0, f64::INFINITY].into_iter()), 200.0);
    }

    #[test]
    fn legends_name_the_kernels() {
        let run = |label: &str, kernel: &str| SampledRun {
            label: label.into(),
            kernel: kernel.into(),
            workloads: vec![],
            series: Timeseries { interval_ns: 1, rows: vec![] },
        };
        let (a, b) = (run("base", "v5.7"), run("patch", "v5.9"));
        assert_eq!(legend_texts(&[&a, &b]), ["v5.7 (base)", "v5.9 (patch)"]);
        let (a, b) =
            (run("base", "v6.2 memory=1G vma_ra_enabled=0"), run("optimized", "v6.2 memory=1G vma_ra_enabled=1"));
        assert_eq!(legend_texts(&[&a, &b]), ["vma_ra_enabled=0 (base)", "vma_ra_enabled=1 (optimized)"]);
        let c = run("v3.9", "v3.9");
        assert_eq!(legend_texts(&[&c]), ["v3.9"]);
    }

    #[test]
    fn axis_numbers_and_titles_stay_short() {
        assert_eq!(short_number(&2_500_000.0), "2.5M");
        assert_eq!(short_number(&35_000.0), "35k");
        assert_eq!(short_number(&120.0), "120");
        assert_eq!(short_number(&2.5), "2.5");
        assert_eq!(short_title("hot/cold scenario (64M memory; seed: ~280M)"), "hot/cold scenario");
        assert_eq!(short_title(&"x".repeat(80)).chars().count(), 70);
    }
}
