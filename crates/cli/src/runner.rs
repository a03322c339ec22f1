//! `reclaimsim run`: configuration from arguments, the run, and its outputs.

use anyhow::{Context, Result};
use clap::Args;
use engine::{Progress, RunReport};
use experiment::Request;
use serde_json::Value;
use std::fmt;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Bad command-line input (exit code 2).
#[derive(Debug)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Arguments of `run`.
#[derive(Args, Debug, Clone)]
#[command(group(clap::ArgGroup::new("input").required(true).multiple(true).args(["workloads", "trace"])))]
pub struct RunArgs {
    /// Workload NAME[:key=value,...]; repeat to run several side by side (see `reclaimsim workloads`).
    #[arg(long = "workload", short = 'w')]
    pub workloads: Vec<String>,
    /// Replay this trace (reclaimsim trace format) as one more thread; reports the faults it caused.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// With --trace: also compute Belady's minimum faults at the run's memory size (a second pass over
    /// the references, scratch files of 12 bytes per reference).
    #[arg(long, requires = "trace")]
    pub opt: bool,
    /// Kernel profile (see `reclaimsim profiles`).
    #[arg(long, default_value = "v6.2")]
    pub profile: String,
    /// Machine setting, kernel knob or feature flag, KEY=VALUE (see `reclaimsim settings`).
    #[arg(long = "set", short = 's', value_name = "KEY=VALUE")]
    pub settings: Vec<String>,
    /// Random seed of the workloads.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write the result document (JSON) to this file.
    #[arg(long, value_name = "OUT")]
    pub json: Option<PathBuf>,
    /// Print only the summary, not the counters.
    #[arg(long, short)]
    pub quiet: bool,
    /// Check every invariant (O(memory) each time) every 4096 events during the
    /// run; slow. Every run checks them once at its end anyway.
    #[arg(long)]
    pub paranoid: bool,
    /// Print the /sys/kernel/debug/lru_gen listing at the end (lru=mglru).
    #[arg(long)]
    pub lru_gen_dump: bool,
    /// Print a /proc/zoneinfo-style dump of every zone at the end.
    #[arg(long)]
    pub zoneinfo: bool,
    /// Sample free pages, LRU sizes and reclaim counters every MS milliseconds
    /// of virtual time into the JSON's `timeseries`.
    #[arg(long, value_name = "MS")]
    pub timeseries: Option<f64>,
    /// Tracepoint recording (`--events FILE`, `--events-filter`, `--events-max`).
    #[command(flatten)]
    pub events: crate::events::EventArgs,
}

/// A [`UsageError`] as an `anyhow::Error`.
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    UsageError(msg.into()).into()
}

pub use experiment::Prepared;

/// Resolves arguments into a ready simulation; every input error is a [`UsageError`].
pub fn prepare(profile: &str, settings: &[String], workloads: &[String], seed: u64) -> Result<Prepared> {
    prepare_request(&Request {
        workloads: workloads.to_vec(),
        profile: profile.into(),
        settings: settings.to_vec(),
        seed,
        timeseries_ns: None,
    })
}

/// Resolves a request (shared with the Python package); every input error is a [`UsageError`].
pub fn prepare_request(req: &Request) -> Result<Prepared> {
    let p = experiment::prepare(req).map_err(|e| usage(e.0))?;
    let need = experiment::limits::estimate(&p.info.config, 0);
    if need >= LARGE_MACHINE_BYTES {
        eprintln!(
            "reclaimsim: note: this machine can take up to {:.1} GiB of simulator memory (its page frames take memory as the run first uses them)",
            need as f64 / (1u64 << 30) as f64
        );
    }
    Ok(p)
}

/// Simulator memory from which `run` says how much the machine can take.
const LARGE_MACHINE_BYTES: u64 = 1 << 30;

/// Writes `value` to `path` atomically as pretty JSON.
pub fn write_json_atomic(path: &Path, value: &Value) -> Result<()> {
    write_text_atomic(path, &(serde_json::to_string_pretty(value)? + "\n"))
}

/// Writes `text` to `path` atomically: a temporary file in the same directory, then rename.
pub fn write_text_atomic(path: &Path, text: &str) -> Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let written = std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display())).and_then(|()| {
        std::fs::rename(&tmp, path).with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))
    });
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Checks, before any work, that an output file can be created where it is
/// asked for: its directory exists and is a directory (usage error otherwise).
pub fn check_output(path: &Path, option: &str) -> Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(usage(format!(
            "{option} {}: directory {} does not exist (create it first)",
            path.display(),
            dir.display()
        )));
    }
    if path.is_dir() {
        return Err(usage(format!("{option} {}: is a directory; give a file name", path.display())));
    }
    Ok(())
}

/// Runs a prepared simulation with a progress line on stderr when it is a terminal.
pub fn execute(p: Prepared, paranoid: bool) -> Result<(RunReport, f64)> {
    let interactive = std::io::stderr().is_terminal();
    let started = Instant::now();
    let mut last = Instant::now();
    let mut progress = |pr: Progress| {
        if interactive && last.elapsed().as_millis() >= 200 {
            last = Instant::now();
            eprint!("\r  simulated {:>9.3} s, {:>12} accesses", pr.virtual_ns as f64 / 1e9, pr.accesses);
        }
    };
    let mut sim = p.builder.build();
    if paranoid {
        sim = sim.paranoid();
    }
    let report = sim.run(&mut progress)?;
    if interactive {
        eprint!("\r{:60}\r", "");
    }
    Ok((report, started.elapsed().as_secs_f64()))
}

/// The request `run`'s arguments describe (the workloads; a trace is added by the caller).
pub fn request(args: &RunArgs) -> Result<Request> {
    let timeseries_ns = match args.timeseries {
        Some(ms) if ms.is_finite() && ms > 0.0 => Some((ms * 1e6).round().max(1.0) as u64),
        Some(ms) => return Err(usage(format!("--timeseries {ms}: expected a positive number of milliseconds"))),
        None => None,
    };
    Ok(Request {
        workloads: args.workloads.clone(),
        profile: args.profile.clone(),
        settings: args.settings.clone(),
        seed: args.seed,
        timeseries_ns,
    })
}

/// `reclaimsim run`.
pub fn run(args: RunArgs) -> Result<()> {
    if let Some(path) = &args.json {
        check_output(path, "--json")?;
    }
    if args.trace.is_some() {
        return crate::trace_cmd::run_trace(&args);
    }
    let mut p = prepare_request(&request(&args)?)?;
    let info = p.info.clone();
    let events = crate::events::EventFile::install(&args, &mut p.builder)?;
    let (report, wall) = execute(p, args.paranoid)?;
    if let Some(events) = events {
        events.finish()?;
    }
    crate::output::print_report(&info, &report, wall, !args.quiet, None);
    if args.lru_gen_dump {
        match report.control_reads.iter().find(|(name, _)| *name == "lru_gen") {
            Some((_, d)) => print!("{d}"),
            None => println!("lru_gen: not available with lru={}", info.config.lru),
        }
    }
    if args.zoneinfo {
        print!("{}", engine::zoneinfo::zoneinfo_text(&report.zones));
    }
    if let Some(path) = &args.json {
        write_json_atomic(path, &info.result_json(&report, wall))?;
    }
    Ok(())
}
