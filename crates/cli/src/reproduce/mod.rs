//! `reclaimsim reproduce`: each seed document's headline table, run before and
//! after its change, printed beside the figures the document reports.
//!
//! A reproduction is a list of [`Metric`]s measured under two or more
//! [`Variant`]s (kernel profiles or flag sets). Each metric carries the seed's
//! own figures and the direction the change is expected to move it; the table
//! says for every metric whether our run agrees.

pub(crate) mod charts;
mod report;
mod seed000;
mod seed001;
mod seed002;
mod seed003;
mod seed004;
mod series;
mod table;

use crate::runner;
use anyhow::Result;
use engine::RunReport;
pub use table::{print_reproduction, reproduction_json};

/// One configuration of a reproduction (the "before" or "after" kernel, or a point of a sweep).
#[derive(Debug, Clone)]
pub struct Variant {
    /// Column heading, e.g. `v5.7` or `vma-ra`.
    pub label: String,
    /// Kernel profile.
    pub profile: String,
    /// `--set` assignments on top of the profile.
    pub settings: Vec<String>,
    /// Workload specifications.
    pub workloads: Vec<String>,
}

/// Which way the change should move a metric, from the first variant to the last.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Expect {
    /// The value should fall.
    Lower,
    /// The value should rise.
    Higher,
    /// The value should stay within the given relative tolerance (e.g. 0.1 = ±10%).
    Same(f64),
    /// No regression: the value may rise, or fall by at most the given relative tolerance.
    NoWorse(f64),
}

/// One row of the table: the seed's figures per variant and ours.
#[derive(Debug, Clone)]
pub struct Metric {
    /// Row name, using the kernel's or mmtests' names (`pswpin`, `ra_hit%`, `ops/s`).
    pub name: String,
    /// The seed's figures per variant (`None` where the document gives none).
    pub seed: Vec<Option<f64>>,
    /// Our figures per variant.
    pub ours: Vec<f64>,
    /// Expected direction from the first to the last variant.
    pub expect: Expect,
}

impl Metric {
    /// Relative change from the first to the last value, or `None` when the first is zero.
    pub fn change(values: &[f64]) -> Option<f64> {
        let (first, last) = (*values.first()?, *values.last()?);
        (first != 0.0).then(|| (last - first) / first.abs())
    }

    /// How our figures compare with the expected direction and the seed's size of change.
    pub fn verdict(&self) -> Verdict {
        let Some(ours) = Metric::change(&self.ours) else {
            return match self.expect {
                _ if !self.ours.iter().all(|v| *v == 0.0) => Verdict::Disagrees,
                Expect::Same(_) | Expect::NoWorse(_) => Verdict::Agrees,
                Expect::Lower | Expect::Higher => Verdict::Zero,
            };
        };
        let seed: Option<Vec<f64>> = self.seed.iter().copied().collect();
        let seed = seed.as_deref().and_then(Metric::change);
        match self.expect {
            Expect::Same(tol) if ours.abs() <= tol => Verdict::Agrees,
            Expect::Same(_) => Verdict::Disagrees,
            Expect::NoWorse(tol) if ours >= -tol => Verdict::Agrees,
            Expect::NoWorse(_) => Verdict::Disagrees,
            Expect::Lower | Expect::Higher => {
                let sign = if self.expect == Expect::Lower { -1.0 } else { 1.0 };
                if ours * sign <= 0.0 {
                    Verdict::Disagrees
                } else if ours.abs() < WEAK_CHANGE || seed.is_some_and(|s| ours.abs() < s.abs() / 5.0) {
                    Verdict::Weak
                } else {
                    Verdict::Agrees
                }
            }
        }
    }
}

/// Below this relative change (2%), a move in the right direction is called weak.
pub const WEAK_CHANGE: f64 = 0.02;

/// How a metric of ours compares with the seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The expected direction, at least 2% and at least a fifth of the seed's change.
    Agrees,
    /// The expected direction but much smaller than the seed's change.
    Weak,
    /// The opposite direction (or outside the tolerance).
    Disagrees,
    /// Ours is zero throughout: the effect does not arise at our scale.
    Zero,
}

impl Verdict {
    /// Its name in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Agrees => "agrees",
            Verdict::Weak => "weak",
            Verdict::Disagrees => "DISAGREES",
            Verdict::Zero => "zero (not reproduced)",
        }
    }
}

/// A finished reproduction: one or more tables.
#[derive(Debug, Clone)]
pub struct Reproduction {
    /// Seed name, e.g. `seed-004`.
    pub name: &'static str,
    /// Tables in the order the document gives them.
    pub tables: Vec<Table>,
}

/// One table: variants as columns, metrics as rows.
#[derive(Debug, Clone)]
pub struct Table {
    /// What the table shows and at what scale.
    pub title: String,
    /// Column headings.
    pub variants: Vec<String>,
    /// Rows.
    pub metrics: Vec<Metric>,
    /// Remarks printed under the table (scale-down, what differs from the seed's setup).
    pub notes: Vec<String>,
}

/// Options common to every reproduction.
#[derive(Debug, Clone, clap::Args)]
pub struct ReproduceArgs {
    /// Seed to reproduce (`seed-000` ... `seed-004`), `all`, or `list` to list them.
    pub seed: String,
    /// Random seed of the workloads (old name: --rng-seed).
    #[arg(long = "seed", alias = "rng-seed", default_value_t = 1)]
    pub rng_seed: u64,
    /// Smaller runs for a quick look (and for the test suite); directions still hold.
    #[arg(long)]
    pub quick: bool,
    /// Write the tables as JSON to this file.
    #[arg(long, value_name = "OUT")]
    pub json: Option<std::path::PathBuf>,
    /// Write a report into this directory: `reproductions.md` with every table, a PNG bar chart per
    /// table and PNG time series (free memory, LRU sizes, refaults) of each seed's headline runs.
    #[arg(long = "output", short = 'o', alias = "report", value_name = "DIR")]
    pub report: Option<std::path::PathBuf>,
}

/// A reproduction by name.
pub struct Entry {
    /// `seed-NNN`.
    pub name: &'static str,
    /// One line: what the document claims.
    pub about: &'static str,
    /// Runs it.
    pub run: fn(&ReproduceArgs) -> Result<Reproduction>,
}

/// Every reproduction.
pub const ENTRIES: &[Entry] = &[
    Entry {
        name: "seed-000",
        about: "refault-cost balancing: pgbench refaults -54%, tps +30% (v5.7 vs v5.8)",
        run: seed000::run,
    },
    Entry {
        name: "seed-001",
        about: "VMA swap readahead: ra_hit 52.7% -> 99.98%, throughput +19.9%, latency -37%",
        run: seed001::run,
    },
    Entry {
        name: "seed-002",
        about: "multi-gen LRU: kswapd CPU -51%, PSI full -52%, direct reclaim p99 -22%, refaults -7% on tabs",
        run: seed002::run,
    },
    Entry {
        name: "seed-003",
        about: "kswapd disruption: memcachetest beside a large copy, v3.9 vs v3.11 (kswapd efficiency 17% -> 68%)",
        run: seed003::run,
    },
    Entry {
        name: "seed-004",
        about: "anon workingset: hot/cold swap-ins -21%, ebizzy pswpin down (v5.7 vs v5.9)",
        run: seed004::run,
    },
];

/// Runs one variant, sampled every `timeseries_ns` if given, and returns its report.
fn run_variant(v: &Variant, rng_seed: u64, timeseries_ns: Option<engine::Nanos>) -> Result<RunReport> {
    let req = experiment::Request {
        workloads: v.workloads.clone(),
        profile: v.profile.clone(),
        settings: v.settings.clone(),
        seed: rng_seed,
        timeseries_ns,
    };
    let (report, _) = runner::execute(runner::prepare_request(&req)?, false)?;
    Ok(report)
}

/// Runs every variant in order with a progress line on stderr. When a report
/// is being written, the first batch of a reproduction is sampled for its charts.
pub fn run_variants(variants: &[Variant], rng_seed: u64) -> Result<Vec<RunReport>> {
    let sample = series::wanted();
    let mut out = Vec::with_capacity(variants.len());
    let mut sampled = Vec::new();
    for (i, v) in variants.iter().enumerate() {
        crate::output::status(&format!("[{}/{}] {} ({})", i + 1, variants.len(), v.label, v.workloads.join(" ")));
        let mut report = run_variant(v, rng_seed, sample)?;
        if let Some(ts) = report.timeseries.take() {
            let kernel = std::iter::once(&v.profile).chain(&v.settings).cloned().collect::<Vec<_>>().join(" ");
            let (label, workloads) = (v.label.clone(), v.workloads.clone());
            sampled.push(series::SampledRun { label, kernel, workloads, series: ts });
        }
        out.push(report);
    }
    if sample.is_some() {
        series::keep(sampled);
    }
    Ok(out)
}

/// A vmstat counter of each report, as floats.
pub fn counter(reports: &[RunReport], name: &str) -> Vec<f64> {
    reports.iter().map(|r| r.get(name).unwrap_or(0) as f64).collect()
}

/// Operations per second summed over the threads whose names start with `prefix`.
pub fn ops_per_sec_of(r: &RunReport, prefix: &str) -> f64 {
    r.threads.iter().filter(|t| t.name.starts_with(prefix)).map(|t| t.ops_per_sec()).sum()
}

/// `reclaimsim reproduce`.
pub fn reproduce(args: ReproduceArgs) -> Result<()> {
    if args.seed == "list" {
        for e in ENTRIES {
            println!("{:<10} {}", e.name, e.about);
        }
        return Ok(());
    }
    if let Some(path) = &args.json {
        runner::check_output(path, "--json")?;
    }
    let chosen: Vec<&Entry> = if args.seed == "all" {
        ENTRIES.iter().collect()
    } else {
        match ENTRIES.iter().find(|e| e.name == args.seed) {
            Some(e) => vec![e],
            None => {
                let names: Vec<&str> = ENTRIES.iter().map(|e| e.name).collect();
                return Err(runner::UsageError(format!(
                    "unknown seed `{}`; expected one of: all, {}",
                    args.seed,
                    names.join(", ")
                ))
                .into());
            }
        }
    };
    let mut all = Vec::new();
    let mut sampled = Vec::new();
    for e in chosen {
        crate::output::status(&format!("{}: {}", e.name, e.about));
        if args.report.is_some() {
            series::arm();
        }
        let r = (e.run)(&args)?;
        print_reproduction(&r);
        all.push(r);
        sampled.push(series::take());
    }
    if let Some(dir) = &args.report {
        report::write_report(dir, &all, &sampled, &args.seed, args.quick)?;
    }
    if let Some(path) = &args.json {
        runner::write_json_atomic(path, &serde_json::Value::Array(all.iter().map(reproduction_json).collect()))?;
    }
    Ok(())
}
