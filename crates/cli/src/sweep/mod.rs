//! `reclaimsim sweep SPEC.toml`: the cartesian product of workloads, profiles,
//! settings and seeds (see `spec.rs`), run on local processes (`--jobs N`) or
//! on Ray (`--ray ADDRESS`, `--ray local`). Results: `OUT/runs/ID.json` per
//! run and `OUT/table.csv` (plus `table.parquet` when pyarrow is there).
//! A run whose result file exists is finished: an interrupted sweep resumes
//! where it stopped.

mod local;
mod progress;
mod python;
mod spec;
mod table;

use crate::runner::{write_json_atomic, write_text_atomic, UsageError};
use anyhow::{bail, Context, Result};
use clap::Args;
use progress::Progress;
use serde_json::json;
use std::path::PathBuf;

/// Arguments of `sweep`.
#[derive(Args, Debug, Clone)]
pub struct SweepArgs {
    /// The sweep specification (TOML: workloads, profiles, seeds, [settings]).
    pub spec: PathBuf,
    /// Output directory [default: SPEC without its extension, plus `.out`].
    #[arg(long = "output", short = 'o', alias = "out", value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Local runs at a time [default: the number of CPUs]; with `--ray local`, the CPUs Ray may use.
    #[arg(long, short)]
    pub jobs: Option<usize>,
    /// Run on a Ray cluster at ADDRESS, or `local` for a Ray instance on this machine
    /// (needs the Python package: python/setup-venv.sh, run on first use).
    #[arg(long, value_name = "ADDRESS")]
    pub ray: Option<String>,
}

/// `reclaimsim sweep`.
pub fn sweep(args: SweepArgs) -> Result<()> {
    let text = std::fs::read_to_string(&args.spec).map_err(|e| UsageError(format!("{}: {e}", args.spec.display())))?;
    let sweep = spec::parse(&args.spec, &text).map_err(|e| UsageError(format!("{e:#}")))?;
    if args.jobs == Some(0) {
        bail!(UsageError("--jobs 0: expected at least 1".into()));
    }
    let out = args.out.clone().unwrap_or_else(|| args.spec.with_extension("out"));
    let runs_dir = out.join("runs");
    std::fs::create_dir_all(&runs_dir).with_context(|| format!("creating {}", runs_dir.display()))?;
    let pending: Vec<&spec::RunSpec> =
        sweep.runs.iter().filter(|r| !runs_dir.join(format!("{}.json", r.id)).exists()).collect();
    let finished = sweep.runs.len() - pending.len();
    let jobs = args.jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let backend = match &args.ray {
        Some(addr) => format!("Ray ({addr})"),
        None => format!("{jobs} local process{}", if jobs == 1 { "" } else { "es" }),
    };
    eprintln!(
        "sweep: {} runs, {finished} already done, {} to run on {backend}; results in {}",
        sweep.runs.len(),
        pending.len(),
        out.display()
    );
    if !pending.is_empty() {
        match &args.ray {
            Some(addr) => {
                let plan = out.join("plan.json");
                let runs: Vec<_> = pending
                    .iter()
                    .map(|r| json!({"id": r.id, "workloads": r.workloads, "trace": r.trace, "profile": r.profile, "settings": r.settings, "seed": r.seed, "timeseries_ns": r.timeseries_ns}))
                    .collect();
                let abs_runs =
                    std::path::absolute(&runs_dir).with_context(|| format!("resolving {}", runs_dir.display()))?;
                write_json_atomic(
                    &plan,
                    &json!({"runs_dir": abs_runs, "total": sweep.runs.len(), "jobs": args.jobs, "runs": runs}),
                )?;
                python::run_ray(&plan, addr)?;
            }
            None => {
                let mut progress = Progress::new(sweep.runs.len(), finished);
                local::run_local(&pending, &runs_dir, jobs, &mut progress)?;
                progress.finish();
            }
        }
    }
    let (csv, counts) = table::build(&sweep, &runs_dir)?;
    let csv_path = out.join("table.csv");
    write_text_atomic(&csv_path, &csv)?;
    let parquet = match python::parquet(&csv_path, &out.join("table.parquet")) {
        Ok(()) => format!(" and {}", out.join("table.parquet").display()),
        Err(why) => format!(" (no Parquet: {why})"),
    };
    eprintln!(
        "sweep: {} done, {} failed, {} missing; table {}{parquet}",
        counts.done,
        counts.failed,
        counts.missing,
        csv_path.display()
    );
    if counts.failed + counts.missing > 0 {
        bail!(
            "{} of {} runs have no result; see {}/*.error, and run the sweep again to retry",
            counts.failed + counts.missing,
            sweep.runs.len(),
            runs_dir.display()
        );
    }
    Ok(())
}
