//! `reclaimsim mrc`: faults, refaults and swap-ins of the simulated kernel
//! against memory size, one run per size on parallel threads
//! (`experiment::mrc`), with a trace's LRU curve (one stack-distance pass)
//! and optionally its OPT curve for reference; a table, CSV and a PNG chart.

use crate::reproduce::charts::{short_number, write_png, FONT, GRID, PALETTE};
use crate::runner::{self, usage};
use crate::trace_cmd::{belady_from_spool, Scratch};
use anyhow::Result;
use clap::Args;
use engine::config::{format_size, parse_size};
use experiment::mrc::{self, Held, MrcRequest, Point};
use experiment::Request;
use plotters::prelude::*;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::time::Instant;
use trace::sample::PageSample;

/// Arguments of `mrc`.
#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("input").required(true).multiple(true).args(["workloads", "trace"])))]
pub struct MrcArgs {
    /// Replay this trace (reclaimsim trace format) in every run.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// Workload NAME[:key=value,...] run in every run; repeat for several side by side.
    #[arg(long = "workload", short = 'w')]
    workloads: Vec<String>,
    /// Kernel profile (see `reclaimsim profiles`).
    #[arg(long, default_value = "v6.2")]
    profile: String,
    /// Machine setting, kernel knob or feature flag, KEY=VALUE; `memory` is set per point.
    #[arg(long = "set", short = 's', value_name = "KEY=VALUE")]
    settings: Vec<String>,
    /// Random seed of the workloads.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Memory sizes, comma-separated (e.g. 16M,32M,64M).
    #[arg(long, value_delimiter = ',', conflicts_with = "max")]
    sizes: Vec<String>,
    /// Or the largest memory size: --points sizes evenly spaced up to it.
    #[arg(long, value_name = "SIZE")]
    max: Option<String>,
    /// The smallest size with --max (default: --max / --points).
    #[arg(long, value_name = "SIZE", requires = "max")]
    min: Option<String>,
    /// Number of sizes with --max.
    #[arg(long, default_value_t = 20)]
    points: u64,
    /// Sampled mode: replay a spatially hashed sample of RATE of the trace's pages on RATE times the memory.
    #[arg(long, value_name = "RATE", requires = "trace")]
    sample: Option<f64>,
    /// With --sample: also run every size in full and report the sampled curve's error.
    #[arg(long, requires = "sample")]
    verify: bool,
    /// Also Belady's MIN at each size (trace only; scratch files of 12 bytes per reference).
    #[arg(long, requires = "trace")]
    opt: bool,
    /// Runs at a time (default: the number of cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// Write the curve as CSV to this file.
    #[arg(long, value_name = "OUT")]
    csv: Option<PathBuf>,
    /// Draw the curve as a PNG chart to this file.
    #[arg(long, value_name = "OUT.png")]
    plot: Option<PathBuf>,
}

/// The memory sizes of the curve, in bytes (whole pages).
fn sizes(a: &MrcArgs) -> Result<Vec<u64>> {
    let page = mm::PAGE_SIZE;
    let parse = |s: &str, what: &str| parse_size(s.trim()).map_err(|e| usage(format!("{what} {s}: {e}")));
    let sizes: Vec<u64> = match &a.max {
        Some(max) => {
            let max = parse(max, "--max")? / page;
            let min =
                a.min.as_deref().map(|m| parse(m, "--min")).transpose()?.map_or(max / a.points.max(1), |m| m / page);
            if a.points == 0 || min > max || (a.points > 1 && a.points - 1 > max - min) {
                return Err(usage(format!(
                    "--points {} from --min {} to --max {}: expected 1..={} distinct page counts",
                    a.points,
                    format_size(min * page),
                    format_size(max * page),
                    max - min + 1
                )));
            }
            // Evenly spaced from min to max, both included (one point: max).
            let step = |i: u64| if a.points == 1 { max } else { min + (max - min) * i / (a.points - 1) };
            (0..a.points).map(|i| step(i) * page).collect()
        }
        None => a.sizes.iter().map(|s| Ok(parse(s, "--sizes")? / page * page)).collect::<Result<_>>()?,
    };
    match sizes.iter().find(|&&s| s == 0) {
        _ if sizes.is_empty() => Err(usage("give the memory sizes: --sizes 16M,32M,... or --max SIZE [--points N]")),
        Some(_) => Err(usage("--sizes: every size must be at least one page (4K)")),
        None => Ok(sizes),
    }
}

/// The reference curves of the trace: LRU misses (and with --opt MIN's) at each size.
struct Reference {
    refs: u64,
    lru: Vec<u64>,
    opt: Option<Vec<u64>>,
}

/// The exact LRU and OPT curves of the trace at `path`, or of `held` (its
/// whole copy) when given.
fn reference(path: &Path, held: Option<&Held>, pages: &[u64], jobs: usize) -> Result<Reference> {
    let (spool, f) = Scratch::new(None, "pageids")?;
    let mut tap = BufWriter::with_capacity(1 << 16, f);
    let lru = match held {
        Some(h) => mrc::lru_curve_of(h, pages, Some(&mut tap)),
        None => mrc::lru_curve(path, pages, Some(&mut tap)),
    }
    .map_err(|e| usage(e.0))?;
    drop(tap);
    let opt = belady_from_spool(&spool, lru.refs, lru.pages, pages, jobs)?;
    Ok(Reference { refs: lru.refs, lru: lru.misses, opt: Some(opt) })
}

/// `reclaimsim mrc`.
pub fn mrc(a: MrcArgs) -> Result<()> {
    let sizes = sizes(&a)?;
    if a.jobs == Some(0) {
        return Err(usage("--jobs 0: expected at least 1"));
    }
    let jobs = a.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let sample = match a.sample {
        Some(r) => Some(PageSample::new(r).ok_or_else(|| usage(format!("--sample {r}: expected a rate in (0, 1]")))?),
        None => None,
    };
    for out in [&a.csv, &a.plot].into_iter().flatten() {
        runner::check_output(out, "OUT")?;
    }
    let base = Request {
        workloads: a.workloads.clone(),
        profile: a.profile.clone(),
        settings: a.settings.clone(),
        seed: a.seed,
        timeseries_ns: None,
    };
    let req = MrcRequest { base, trace: a.trace.clone(), sizes: sizes.clone(), sample };
    let pages: Vec<u64> = sizes.iter().map(|s| s / mm::PAGE_SIZE).collect();
    let started = Instant::now();
    // A compressed trace, or one on standard input, is decoded once to an
    // uncompressed scratch file that every pass reads (the runs, the LRU and
    // OPT pass, the full runs of --verify): not decompressed once per run, and
    // the memory stays bounded whatever the trace's length.
    let scratch = match &a.trace {
        Some(t) if t == Path::new("-") || experiment::trace_header(t).is_ok_and(|h| h.compressed) => {
            Some((t, Scratch::new(None, "trace")?))
        }
        _ => None,
    };
    let held = match scratch {
        Some((t, (s, f))) => Some((mrc::hold_in_file(t, f, s.reopen_path()).map_err(|e| usage(e.0))?, s)),
        None => None,
    };
    let held = held.as_ref().map(|(h, _)| h);
    // With --opt, the exact LRU and OPT curves come from one more pass over the whole
    // trace, beside the runs; otherwise the LRU pass is one of the curve's jobs.
    let (curve, reference) = std::thread::scope(|s| {
        let r = a.trace.as_deref().filter(|_| a.opt).map(|t| s.spawn(|| reference(t, held, &pages, jobs)));
        let curve = mrc::curve_of(&req, held, jobs, !a.opt);
        (curve, r.map(|h| h.join().expect("the reference pass does not panic")))
    });
    let curve = curve.map_err(|e| usage(e.0))?;
    let points: Vec<Point> = curve.points.into_iter().collect::<Result<_, String>>().map_err(anyhow::Error::msg)?;
    let reference = match (reference.transpose()?, curve.lru) {
        (Some(r), _) => Some(r),
        (None, Some(lru)) => Some(Reference { refs: points[0].full_refs, lru, opt: None }),
        (None, None) => None,
    };
    let runs_wall = started.elapsed().as_secs_f64();
    let full = if a.verify {
        let t = Instant::now();
        let full = mrc::curve_of(&MrcRequest { sample: None, ..req.clone() }, held, jobs, false)
            .map_err(|e| usage(e.0))?
            .points
            .into_iter()
            .collect::<Result<Vec<_>, String>>()
            .map_err(anyhow::Error::msg)?;
        Some((full, t.elapsed().as_secs_f64()))
    } else {
        None
    };
    let table = Table { points, reference, full: full.as_ref().map(|f| f.0.clone()) };
    print!("{}", table.text(&a, jobs));
    println!(
        "# {} runs in {runs_wall:.2} s wall on {jobs} threads{}",
        table.points.len(),
        full.as_ref().map_or(String::new(), |(_, w)| format!("; the full runs for --verify {w:.2} s"))
    );
    if let Some(e) = table.error() {
        println!(
            "# sampled vs full: fault ratio mean absolute error {:.4}, largest relative error of faults {:.1}% at {}",
            e.mae,
            100.0 * e.max_rel,
            format_size(e.at)
        );
    }
    if let Some(path) = &a.csv {
        runner::write_text_atomic(path, &table.csv())?;
    }
    if let Some(path) = &a.plot {
        table.plot(path, &a)?;
    }
    Ok(())
}

/// The curve, its references and (with --verify) the full runs.
struct Table {
    points: Vec<Point>,
    reference: Option<Reference>,
    full: Option<Vec<Point>>,
}

/// How far a sampled curve is from the full one.
struct SampleError {
    /// Mean absolute error of the fault ratio (faults per reference).
    mae: f64,
    /// Largest relative error of the estimated faults.
    max_rel: f64,
    /// The memory size of the largest relative error.
    at: u64,
}

impl Table {
    fn error(&self) -> Option<SampleError> {
        let full = self.full.as_ref()?;
        let mut e = SampleError { mae: 0.0, max_rel: 0.0, at: 0 };
        for (s, f) in self.points.iter().zip(full) {
            e.mae += (s.fault_ratio() - f.fault_ratio()).abs() / full.len() as f64;
            let rel = (s.estimates()[0] as f64 - f.faults as f64).abs() / f.faults.max(1) as f64;
            if rel > e.max_rel {
                (e.max_rel, e.at) = (rel, s.memory_bytes);
            }
        }
        Some(e)
    }

    /// Column names and, per point, the values: the CSV's and the printed table's.
    fn rows(&self) -> (Vec<&'static str>, Vec<Vec<String>>) {
        let mut head = vec!["memory_bytes", "memory_pages", "refs", "faults", "refaults", "swapins", "fault_ratio"];
        let sampled = self.points.first().is_some_and(|p| p.scale != 1.0);
        if sampled {
            head.extend(["sample_rate", "run_memory_bytes", "sampled_refs"]);
        }
        if self.reference.is_some() {
            head.extend(["lru_misses", "lru_ratio"]);
        }
        if self.reference.as_ref().is_some_and(|r| r.opt.is_some()) {
            head.extend(["opt_misses", "opt_ratio"]);
        }
        if self.full.is_some() {
            head.extend(["full_faults", "full_refaults", "full_swapins", "full_fault_ratio", "faults_error"]);
        }
        let rows = self
            .points
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let [faults, refaults, swapins] = p.estimates();
                let mut row = vec![
                    p.memory_bytes.to_string(),
                    (p.memory_bytes / mm::PAGE_SIZE).to_string(),
                    p.full_refs.to_string(),
                    faults.to_string(),
                    refaults.to_string(),
                    swapins.to_string(),
                    format!("{:.6}", p.fault_ratio()),
                ];
                if sampled {
                    row.extend([format!("{:.6}", 1.0 / p.scale), p.run_memory_bytes.to_string(), p.refs.to_string()]);
                }
                if let Some(r) = &self.reference {
                    let ratio = |m: u64| format!("{:.6}", m as f64 / r.refs.max(1) as f64);
                    row.extend([r.lru[i].to_string(), ratio(r.lru[i])]);
                    if let Some(o) = &r.opt {
                        row.extend([o[i].to_string(), ratio(o[i])]);
                    }
                }
                if let Some(f) = self.full.as_ref().map(|f| &f[i]) {
                    let err = (faults as f64 - f.faults as f64) / f.faults.max(1) as f64;
                    row.extend([f.faults, f.refaults, f.swapins].map(|v| v.to_string()));
                    row.extend([format!("{:.6}", f.fault_ratio()), format!("{err:.4}")]);
                }
                row
            })
            .collect();
        (head, rows)
    }

    fn csv(&self) -> String {
        let (head, rows) = self.rows();
        let mut out = head.join(",") + "\n";
        for r in rows {
            out += &(r.join(",") + "\n");
        }
        out
    }

    fn text(&self, a: &MrcArgs, jobs: usize) -> String {
        let what = a.trace.as_ref().map(|t| t.display().to_string()).into_iter().chain(a.workloads.iter().cloned());
        let mut out = format!(
            "# mrc of {} | profile {} | {} sizes | {jobs} threads{}\n",
            what.collect::<Vec<_>>().join(" + "),
            a.profile,
            self.points.len(),
            self.points.first().filter(|p| p.scale != 1.0).map_or(String::new(), |p| format!(
                " | sampled at {:.4} (memory scaled by it, counts divided by it)",
                1.0 / p.scale
            ))
        );
        let (head, rows) = self.rows();
        let widths: Vec<usize> = head
            .iter()
            .enumerate()
            .map(|(i, h)| rows.iter().map(|r| r[i].len()).chain([h.len()]).max().unwrap_or(0))
            .collect();
        let line = |cells: Vec<&str>| {
            cells
                .iter()
                .zip(&widths)
                .map(|(c, w)| format!("{c:>w$}"))
                .collect::<Vec<_>>()
                .join(" ")
                .trim_end()
                .to_string()
                + "\n"
        };
        out += &line(head.clone());
        for r in &rows {
            out += &line(r.iter().map(String::as_str).collect());
        }
        out
    }

    /// Fault ratio against memory: the simulated curve, the full runs, LRU and OPT.
    fn plot(&self, path: &Path, a: &MrcArgs) -> Result<()> {
        let x = |p: &Point| p.memory_bytes as f64 / (1 << 20) as f64;
        let mut lines: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
        let sampled = self.points.first().is_some_and(|p| p.scale != 1.0);
        let label = if sampled { format!("{} (sampled)", a.profile) } else { a.profile.clone() };
        lines.push((label, self.points.iter().map(|p| (x(p), p.fault_ratio())).collect()));
        if let Some(f) = &self.full {
            lines.push((format!("{} (full runs)", a.profile), f.iter().map(|p| (x(p), p.fault_ratio())).collect()));
        }
        if let Some(r) = &self.reference {
            let curve =
                |m: &[u64]| self.points.iter().zip(m).map(|(p, &m)| (x(p), m as f64 / r.refs.max(1) as f64)).collect();
            lines.push(("LRU".into(), curve(&r.lru)));
            if let Some(o) = &r.opt {
                lines.push(("OPT (Belady)".into(), curve(o)));
            }
        }
        let x_max = self.points.iter().map(x).fold(0.0, f64::max) * 1.02;
        let y_max = lines.iter().flat_map(|(_, l)| l.iter().map(|p| p.1)).fold(0.0, f64::max).max(1e-3) * 1.05;
        let what = a.trace.as_ref().map_or_else(|| a.workloads.join(" + "), |t| t.display().to_string());
        write_png(path, 600, |root| {
            let mut chart = ChartBuilder::on(root)
                .caption(format!("Miss-ratio curve: {what}"), (FONT, 20))
                .margin(20)
                .x_label_area_size(46)
                .y_label_area_size(70)
                .build_cartesian_2d(0.0..x_max, 0.0..y_max)?;
            chart
                .configure_mesh()
                .bold_line_style(GRID)
                .light_line_style(TRANSPARENT)
                .x_desc("memory (MiB)")
                .y_desc("faults per reference")
                .x_label_formatter(&short_number)
                .label_style((FONT, 14))
                .axis_desc_style((FONT, 15))
                .draw()?;
            for (i, (name, pts)) in lines.into_iter().enumerate() {
                let colour = PALETTE[i % PALETTE.len()];
                chart
                    .draw_series(LineSeries::new(pts.clone(), colour.stroke_width(2)))?
                    .label(name)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(3)));
                chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 3, colour.filled())))?;
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .label_font((FONT, 14))
                .background_style(WHITE)
                .border_style(BLACK)
                .draw()?;
            Ok(())
        })
    }
}
