//! `reclaimsim reproduce`: a front end to `experiment::reproduce`, which
//! holds the seed tables. It prints them, writes `--json` and the report
//! (Markdown, bar charts, time series) and `params` prints the parameter
//! provenance table.

pub(crate) mod charts;
mod report;

use crate::runner;
use anyhow::Result;
use experiment::reproduce::{self as repro, Entry, Options, Reproduction, SampledRun};

/// Options common to every reproduction.
#[derive(Debug, Clone, clap::Args)]
pub struct ReproduceArgs {
    /// Seed to reproduce (`seed-000` ... `seed-004`), `all`, `list` to list them, or `params` to print
    /// every reproduction parameter with its source (docs/reproductions/parameters.md).
    pub seed: String,
    /// Random seed of the workloads (old name: --rng-seed); rows over N iterations use this and the next N-1.
    #[arg(long = "seed", alias = "rng-seed", default_value_t = 1)]
    pub rng_seed: u64,
    /// Smaller runs for a quick look (and for the test suite).
    #[arg(long)]
    pub quick: bool,
    /// Runs at a time (default: the number of cores); results do not depend on it.
    #[arg(long, short = 'j', value_name = "N")]
    pub jobs: Option<usize>,
    /// Write the tables, the flat list of claims and the summaries as JSON to this file.
    #[arg(long, value_name = "OUT")]
    pub json: Option<std::path::PathBuf>,
    /// Write a report into this directory: `reproductions.md` with every table, a PNG bar chart per
    /// table and PNG time series (free memory, LRU sizes, refaults) of each seed's headline runs.
    #[arg(long = "output", short = 'o', alias = "report", value_name = "DIR")]
    pub report: Option<std::path::PathBuf>,
}

/// `reclaimsim reproduce`.
pub fn reproduce(args: ReproduceArgs) -> Result<()> {
    match args.seed.as_str() {
        "list" => {
            for e in repro::ENTRIES {
                println!("{:<10} {}", e.name, e.about);
            }
            return Ok(());
        }
        "params" => {
            print!("{}", repro::params::markdown());
            return Ok(());
        }
        _ => {}
    }
    let jobs = match args.jobs {
        Some(0) => return Err(runner::usage("--jobs 0: expected at least 1")),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    for path in args.json.iter() {
        runner::check_output(path, "--json")?;
    }
    let chosen: Vec<&Entry> = if args.seed == "all" {
        repro::ENTRIES.iter().collect()
    } else {
        match repro::find(&args.seed) {
            Some(e) => vec![e],
            None => {
                let names: Vec<&str> = repro::ENTRIES.iter().map(|e| e.name).collect();
                return Err(runner::usage(format!(
                    "unknown seed `{}`; expected one of: all, list, params, {}",
                    args.seed,
                    names.join(", ")
                )));
            }
        }
    };
    let opts = Options { rng_seed: args.rng_seed, quick: args.quick, jobs, sample: args.report.is_some() };
    let mut all: Vec<Reproduction> = Vec::new();
    let mut sampled: Vec<Vec<SampledRun>> = Vec::new();
    for e in chosen {
        crate::output::status(&format!("{}: {}", e.name, e.about));
        let (r, runs) = repro::run(e, &opts, &crate::output::status)?;
        print!("{}", repro::render(&r));
        all.push(r);
        sampled.push(runs);
    }
    if all.len() > 1 {
        println!("overall: {}", repro::overall(&all).line());
    }
    if let Some(dir) = &args.report {
        report::write_report(dir, &all, &sampled, &args.seed, args.quick)?;
    }
    if let Some(path) = &args.json {
        runner::write_json_atomic(path, &repro::reproductions_json(&all))?;
    }
    Ok(())
}
