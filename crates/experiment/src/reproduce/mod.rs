//! Seed reproductions: each seed document's tables, run before and after its
//! change, with the seed's own figures beside ours and two verdicts per row
//! (see [`claims`]). The command line's `reproduce` and the Python package's
//! `reclaimsim.reproduce` are front ends to [`run`].
//!
//! A reproduction is a list of [`Metric`]s measured under two or more
//! [`Variant`]s (kernel profiles or flag sets). The runs of one batch are
//! independent simulations and run in parallel over `jobs` threads; each run
//! depends only on its variant and workload seed, so results do not depend on
//! `jobs`.

pub mod claims;
pub mod params;
mod seed000;
mod seed000_data;
mod seed001;
mod seed002;
mod seed003;
mod seed003_data;
mod seed004;
mod series;
mod summary;
mod table;

pub use claims::{Direction, Metric, Reproduction, Size, Summary, Table};
pub use series::{groups, SampledRun, SAMPLE_NS};
pub use table::{
    fmt_change, fmt_seed_change as table_seed_change, fmt_value, overall, render, reproductions_json, NOT_JUDGED,
};

use anyhow::{anyhow, Result};
use engine::{Nanos, RunReport};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

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

/// How a reproduction runs.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// First workload seed (iterated rows use this and the next ones).
    pub rng_seed: u64,
    /// Smaller runs for a quick look (and for the test suite).
    pub quick: bool,
    /// Runs at a time (threads); results do not depend on it.
    pub jobs: usize,
    /// Sample each seed's first batch of runs for the report's charts.
    pub sample: bool,
}

enum Sampling {
    Off,
    Armed,
    Kept(Vec<SampledRun>),
}

/// What a seed's tables are built with: the options, a status line for
/// progress and the runs sampled for charts.
pub struct Ctx<'a> {
    /// Smaller runs.
    pub quick: bool,
    /// First workload seed.
    pub rng_seed: u64,
    jobs: usize,
    status: &'a (dyn Fn(&str) + Sync),
    sampling: Mutex<Sampling>,
}

impl Ctx<'_> {
    /// Runs every variant with workload seed `rng_seed`, `jobs` at a time,
    /// and returns the reports in the order of `variants`. The first batch
    /// after a sampled reproduction starts is sampled for its charts.
    pub fn run_variants(&self, variants: &[Variant], rng_seed: u64) -> Result<Vec<RunReport>> {
        let sample = {
            let s = self.sampling.lock().map_err(|_| anyhow!("sampling state poisoned"))?;
            matches!(*s, Sampling::Armed).then_some(SAMPLE_NS)
        };
        let next = AtomicUsize::new(0);
        let slots: Vec<Mutex<Option<Result<RunReport>>>> = variants.iter().map(|_| Mutex::new(None)).collect();
        std::thread::scope(|scope| {
            for _ in 0..self.jobs.clamp(1, variants.len().max(1)) {
                scope.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(v) = variants.get(i) else { break };
                    (self.status)(&format!("[{}/{}] {} ({})", i + 1, variants.len(), v.label, v.workloads.join(" ")));
                    let r = run_variant(v, rng_seed, sample);
                    if let Ok(mut slot) = slots[i].lock() {
                        *slot = Some(r);
                    }
                });
            }
        });
        let mut reports = Vec::with_capacity(variants.len());
        for slot in slots {
            let r = slot.into_inner().map_err(|_| anyhow!("a run panicked"))?;
            reports.push(r.ok_or_else(|| anyhow!("a run did not finish"))??);
        }
        if sample.is_some() {
            let kept = variants
                .iter()
                .zip(reports.iter_mut())
                .filter_map(|(v, r)| {
                    let series = r.timeseries.take()?;
                    let kernel = std::iter::once(&v.profile).chain(&v.settings).cloned().collect::<Vec<_>>().join(" ");
                    Some(SampledRun { label: v.label.clone(), kernel, workloads: v.workloads.clone(), series })
                })
                .collect();
            if let Ok(mut s) = self.sampling.lock() {
                *s = Sampling::Kept(kept);
            }
        }
        Ok(reports)
    }
}

/// Runs one variant, sampled every `timeseries_ns` if given.
fn run_variant(v: &Variant, rng_seed: u64, timeseries_ns: Option<Nanos>) -> Result<RunReport> {
    let req = crate::Request {
        workloads: v.workloads.clone(),
        profile: v.profile.clone(),
        settings: v.settings.clone(),
        seed: rng_seed,
        timeseries_ns,
    };
    let p = crate::prepare(&req).map_err(|e| anyhow!("{}: {e}", v.label))?;
    Ok(p.builder.build().run(&mut |_| {})?)
}

/// A reproduction by name.
pub struct Entry {
    /// `seed-NNN`.
    pub name: &'static str,
    /// One line: what the document claims.
    pub about: &'static str,
    /// Builds its tables.
    run: fn(&Ctx) -> Result<Reproduction>,
    /// Its machine and workload parameters with their sources.
    pub params: fn() -> Vec<params::Param>,
}

/// Every reproduction.
pub const ENTRIES: &[Entry] = &[
    Entry {
        name: "seed-000",
        about: "refault-cost balancing: pgbench refaults -54%, tps +30% (v5.7 vs v5.8)",
        run: seed000::run,
        params: seed000::params,
    },
    Entry {
        name: "seed-001",
        about: "VMA swap readahead: ra_hit 52.7% -> 99.98%, throughput +19.9%, latency -37%",
        run: seed001::run,
        params: seed001::params,
    },
    Entry {
        name: "seed-002",
        about: "multi-gen LRU: kswapd CPU -51%, PSI full -52%, direct reclaim p99 -22%, refaults -7% on tabs",
        run: seed002::run,
        params: seed002::params,
    },
    Entry {
        name: "seed-003",
        about: "kswapd disruption: memcachetest beside a large copy, v3.9 vs v3.11 (kswapd efficiency 17% -> 68%)",
        run: seed003::run,
        params: seed003::params,
    },
    Entry {
        name: "seed-004",
        about: "anon workingset: hot/cold swap-ins -21%, ebizzy pswpin down (v5.7 vs v5.9)",
        run: seed004::run,
        params: seed004::params,
    },
];

/// The reproduction called `name`, if there is one.
pub fn find(name: &str) -> Option<&'static Entry> {
    ENTRIES.iter().find(|e| e.name == name)
}

/// Runs the reproduction `entry`, reporting progress through `status`; returns
/// its tables and, with `opts.sample`, the sampled runs of its first batch.
pub fn run(entry: &Entry, opts: &Options, status: &(dyn Fn(&str) + Sync)) -> Result<(Reproduction, Vec<SampledRun>)> {
    let cx = Ctx {
        quick: opts.quick,
        rng_seed: opts.rng_seed,
        jobs: opts.jobs,
        status,
        sampling: Mutex::new(if opts.sample { Sampling::Armed } else { Sampling::Off }),
    };
    let mut r = (entry.run)(&cx)?;
    r.fitted = (entry.params)().iter().filter(|p| p.origin.is_fitted()).count();
    let sampled = match cx.sampling.into_inner() {
        Ok(Sampling::Kept(runs)) => runs,
        _ => Vec::new(),
    };
    Ok((r, sampled))
}

/// A vmstat counter of each report, as floats.
pub fn counter(reports: &[RunReport], name: &str) -> Vec<f64> {
    reports.iter().map(|r| r.get(name).unwrap_or(0) as f64).collect()
}

/// Operations per second summed over the threads whose names start with `prefix`.
pub fn ops_per_sec_of(r: &RunReport, prefix: &str) -> f64 {
    r.threads.iter().filter(|t| t.name.starts_with(prefix)).map(|t| t.ops_per_sec()).sum()
}
