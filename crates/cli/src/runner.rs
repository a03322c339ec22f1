//! `reclaimsim run`: configuration from arguments, the run, and its outputs.

use anyhow::{Context, Result};
use clap::Args;
use engine::{Config, Progress, RunReport, SimBuilder};
use serde_json::{json, Map, Value};
use std::fmt;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;
use workload::WorkloadSpec;

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
pub struct RunArgs {
    /// Workload NAME[:key=value,...]; repeat to run several side by side (see `reclaimsim workloads`).
    #[arg(long = "workload", short = 'w', required_unless_present = "trace")]
    pub workloads: Vec<String>,
    /// Replay this trace (reclaimsim trace format) as one more thread; also reports Belady's minimum faults.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
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
    /// Check every invariant at the end of the run (O(memory)).
    #[arg(long)]
    pub paranoid: bool,
    /// Print the /sys/kernel/debug/lru_gen listing at the end (lru=mglru).
    #[arg(long)]
    pub lru_gen_dump: bool,
}

/// A [`UsageError`] as an `anyhow::Error`.
pub fn usage(msg: impl Into<String>) -> anyhow::Error {
    UsageError(msg.into()).into()
}

/// The configuration and workloads of a run, resolved.
pub struct Prepared {
    /// The machine and kernel configuration.
    pub config: Config,
    /// Workload specifications with every parameter.
    pub workloads: Vec<WorkloadSpec>,
    /// The ready simulation.
    pub sim: engine::Sim,
    /// Seed.
    pub seed: u64,
}

/// Resolves arguments into a ready simulation; every input error is a [`UsageError`].
pub fn prepare(profile: &str, settings: &[String], workloads: &[String], seed: u64) -> Result<Prepared> {
    let (config, workloads, builder) = prepare_builder(profile, settings, workloads, seed)?;
    Ok(Prepared { config, workloads, sim: builder.build(), seed })
}

/// Like [`prepare`], but returns the builder so more threads can be added.
pub fn prepare_builder(profile: &str, settings: &[String], workloads: &[String], seed: u64) -> Result<(Config, Vec<WorkloadSpec>, SimBuilder)> {
    let mut config = Config::for_profile(profile).map_err(|e| usage(e.to_string()))?;
    for s in settings {
        let (k, v) = s.split_once('=').ok_or_else(|| usage(format!("--set `{s}`: expected KEY=VALUE")))?;
        config.set(k.trim(), v.trim()).map_err(|e| usage(format!("--set {s}: {e}")))?;
    }
    let mut builder = SimBuilder::new(config.clone()).map_err(|e| usage(e.to_string()))?;
    let mut resolved = Vec::new();
    for (i, w) in workloads.iter().enumerate() {
        let spec = WorkloadSpec::parse(w).map_err(|e| usage(format!("--workload {w}: {e}")))?;
        resolved.push(workload::add_workload(&mut builder, &spec, seed, i as u64).map_err(|e| usage(format!("--workload {w}: {e}")))?);
    }
    Ok((config, resolved, builder))
}

/// The result document of a run.
pub fn result_json(p_config: &Config, workloads: &[WorkloadSpec], seed: u64, r: &RunReport, wall_seconds: f64) -> Value {
    let settings: Map<String, Value> = p_config.resolved().into_iter().map(|(k, v)| (k.to_string(), Value::String(v))).collect();
    let vmstat: Map<String, Value> = r.vmstat.iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
    let memcg: Map<String, Value> = r.memcg.iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
    let work = |w: &reclaim::ReclaimWork| {
        json!({
            "pages_scanned": w.pages_scanned,
            "pages_sorted": w.pages_sorted,
            "pages_freed": w.pages_freed,
            "pages_written": w.pages_written,
            "rmap_walks": w.rmap_walks,
            "rmap_ptes": w.rmap_ptes,
            "walk_mms": w.walk_mms,
            "walk_pmds": w.walk_pmds,
            "walk_ptes": w.walk_ptes,
        })
    };
    let psi_line = |l: &engine::PsiLine| json!({ "avg": l.avg, "total_us": l.total_ns / 1000 });
    let dlat: Map<String, Value> = r.direct_reclaim_latency_ns.iter().map(|(p, v)| (format!("p{p}"), json!(v))).collect();
    let threads: Vec<Value> = r
        .threads
        .iter()
        .map(|t| {
            let lat: Map<String, Value> = t.latency_ns.iter().map(|(p, v)| (format!("p{p}"), json!(v))).collect();
            json!({
                "name": t.name,
                "ops": t.ops,
                "ops_per_sec": t.ops_per_sec(),
                "end_ns": t.end_ns,
                "reclaim_stall_ns": t.reclaim_stall_ns,
                "latency_ns": lat,
                "latency_mean_ns": t.latency_mean_ns,
            })
        })
        .collect();
    json!({
        "reclaimsim": env!("CARGO_PKG_VERSION"),
        "config": {
            "profile": p_config.profile,
            "seed": seed,
            "settings": settings,
            "workloads": workloads.iter().map(|w| w.to_string()).collect::<Vec<_>>(),
        },
        "vmstat": vmstat,
        "memcg": if memcg.is_empty() { Value::Null } else { Value::Object(memcg) },
        "threads": threads,
        "reclaim": {
            "kswapd_cpu_ns": r.kswapd_cpu_ns,
            "direct_reclaim_ns": r.direct_reclaim_ns,
            "direct_reclaims": r.direct_reclaims,
            "direct_reclaim_latency_ns": dlat,
            "work": { "kswapd": work(&r.kswapd_work), "direct": work(&r.direct_work) },
            "lru_gen_writes": r.lru_gen_writes,
            "throttled_ns": r.reclaim_throttled_ns,
            "kswapd_efficiency_pct": r.kswapd_efficiency_pct(),
            "kswapd_velocity": r.kswapd_velocity(),
        },
        "psi": { "memory": { "some": psi_line(&r.psi.some), "full": psi_line(&r.psi.full) } },
        "sim": {
            "virtual_ns": r.virtual_ns,
            "events": r.events,
            "accesses": r.accesses,
            "wall_seconds": wall_seconds,
        },
    })
}

/// Writes `value` to `path` atomically as pretty JSON.
pub fn write_json_atomic(path: &Path, value: &Value) -> Result<()> {
    write_text_atomic(path, &(serde_json::to_string_pretty(value)? + "\n"))
}

/// Writes `text` to `path` atomically: a temporary file in the same directory, then rename.
pub fn write_text_atomic(path: &Path, text: &str) -> Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))?;
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
    let sim = p.sim;
    if paranoid {
        sim.check_invariants();
    }
    let report = sim.run(&mut progress)?;
    if interactive {
        eprint!("\r{:60}\r", "");
    }
    Ok((report, started.elapsed().as_secs_f64()))
}

/// `reclaimsim run`.
pub fn run(args: RunArgs) -> Result<()> {
    if args.trace.is_some() {
        return crate::trace_cmd::run_trace(&args);
    }
    let p = prepare(&args.profile, &args.settings, &args.workloads, args.seed)?;
    let (config, workloads, seed) = (p.config.clone(), p.workloads.clone(), p.seed);
    let (report, wall) = execute(p, args.paranoid)?;
    crate::output::print_report(&report, wall, !args.quiet);
    if args.lru_gen_dump {
        match &report.lru_gen_dump {
            Some(d) => print!("{d}"),
            None => println!("lru_gen: not available with lru={}", config.lru),
        }
    }
    if let Some(path) = &args.json {
        write_json_atomic(path, &result_json(&config, &workloads, seed, &report, wall))?;
    }
    Ok(())
}
