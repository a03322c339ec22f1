//! `reclaimsim validate`: the simulator checked against the real kernel.
//!
//! For each scenario: the driver's dry-mode trace is written and read back;
//! the driver runs for real in a fresh cgroup v1 memory group (pinned to CPU 1,
//! a 1 ms `memory.stat` poller on CPU 0), on swap we create (zram when free,
//! else a swap file); `memory.stat` and `/proc/vmstat` deltas are collected;
//! the simulator replays the trace on a machine configured the same way; the
//! two are printed side by side with the relative error per counter.
//!
//! `--kernel debian-5.10|6.1|6.12|7.2` runs the anon scenarios inside that
//! Debian kernel under qemu instead, MGLRU on and off, and the global-reclaim
//! scenarios (no group, a small guest) besides ([`guest`]).
//!
//! The kernel-side workload is the running executable's `driver run`
//! subcommand (the `reclaimsim` binary, which parses these arguments and
//! calls [`validate`]).

mod apt;
mod calibrate;
mod compare;
mod console;
mod cpio;
mod debian;
mod guest;
mod host;
mod initramfs;
mod phases;
mod pipeline;
mod qemu;
mod replay;
mod scenarios;
mod stat;

use anyhow::Result;
use clap::Args;
use compare::{Comparison, KernelRun};
use driver::pattern::Pattern;
use driver::trace::{read_trace, write_trace, Digest, Trace};
use host::{Host, Poller};
use scenarios::{Scale, Scenario};
use serde_json::{json, Value};
use std::fmt;
use std::io::{BufReader, BufWriter, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

/// Why validate stopped before a result, with the exit code it asks for.
#[derive(Debug)]
pub enum Stop {
    /// Bad arguments (exit code 2).
    Usage(String),
    /// Validation cannot run on this machine (exit code 3; tests skip on it).
    Refused(String),
    /// It ran, and these scenarios are outside tolerance (exit code 1); the
    /// tables and JSON are written first.
    Outside(Vec<String>),
}

impl Stop {
    /// `Outside` unless every comparison is within tolerance.
    fn verdict<'a>(results: impl IntoIterator<Item = &'a Comparison>) -> Result<(), Stop> {
        let missed: Vec<String> =
            results.into_iter().filter(|c| !c.all_within()).map(|c| c.scenario.name.clone()).collect();
        if missed.is_empty() {
            Ok(())
        } else {
            Err(Stop::Outside(missed))
        }
    }
}

impl Stop {
    /// The process exit code.
    pub fn exit_code(&self) -> u8 {
        match self {
            Stop::Usage(_) => 2,
            Stop::Refused(_) => 3,
            Stop::Outside(_) => 1,
        }
    }
}

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Stop::Usage(why) => f.write_str(why),
            Stop::Refused(why) => write!(f, "validate cannot run here: {why}"),
            Stop::Outside(names) => write!(f, "outside tolerance: {}", names.join(", ")),
        }
    }
}

impl std::error::Error for Stop {}

/// Writes `bytes` to `path` through a temporary file beside it and a rename.
fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> Result<(), String> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp.{}", std::process::id()));
    std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path)).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("writing {}: {e}", path.display())
    })
}

/// `value` as pretty JSON, written atomically to `path`.
fn write_json(path: &std::path::Path, value: &Value) -> Result<()> {
    write_atomic(path, (serde_json::to_string_pretty(value)? + "\n").as_bytes()).map_err(err)
}

/// Arguments of `validate`.
#[derive(Args, Debug, Clone)]
pub struct ValidateArgs {
    /// Scenario name, or `all`. On the host: anon-seq, anon-zipf, hotcold, file-seq, file-zipf,
    /// mixed-sw{0,60,100,200}. With --kernel debian-*: anon-seq, anon-zipf, hotcold, seed004-hotcold,
    /// file-seq, file-zipf, global-{hotcold,zipf,file-seq,file-zipf,dirty}, global-mixed-sw{0,60,100,200},
    /// blkswap-{vma,cluster,pc0}, zswap-blk, cg-{low,high,reclaim} (docs/validation.md).
    pub scenario: String,
    /// Kernel runs per scenario (the simulator runs once: it is deterministic).
    #[arg(long, default_value_t = 1)]
    pub reps: u32,
    /// Write the numbers (every kernel run, the simulator, the comparison) as JSON.
    #[arg(long, value_name = "OUT")]
    pub json: Option<PathBuf>,
    /// Scenarios scaled down 4x (32M limit), for the integration tests.
    #[arg(long)]
    pub quick: bool,
    /// With a Debian kernel: cut each run into N phases by accesses and show the
    /// kernel's and the simulator's counters phase by phase (the guest's driver
    /// reads /proc/vmstat at each boundary; 0: totals only).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub phases: u64,
    /// More `/proc/vmstat` counters (comma-separated, e.g. `pgactivate,pgrefill,pgalloc_dma`):
    /// `(info)` rows of the totals, and columns of the phase table with --phases.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub phase_counters: Vec<String>,
    /// With a Debian kernel: simulator runs at once beside the boots (the
    /// guests still boot one at a time); the results do not depend on N.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub jobs: u32,
    /// Rewrite the generated table section of this markdown file (docs/validation.md).
    #[arg(long, value_name = "FILE")]
    pub doc: Option<PathBuf>,
    /// The simulator's `memcg.stats_flush` (charges between statistics flushes);
    /// default: the kernel runs' charges per `memory.stat` poll.
    #[arg(long, value_name = "CHARGES")]
    pub stats_flush: Option<u64>,
    /// Use a swap file even when /dev/zram0 is free.
    #[arg(long)]
    pub swap_file: bool,
    /// The kernel: `host` (the running one), or `debian-5.10`, `debian-6.1`, `debian-6.12`, `debian-7.2`
    /// booted under qemu (anon scenarios; the package is fetched and cached).
    #[arg(long, default_value = "host")]
    pub kernel: String,
    /// With a Debian kernel: MGLRU `on` or `off` (default: both, one boot each).
    #[arg(long, value_name = "on|off")]
    pub lru_gen: Option<String>,
    /// With a Debian kernel: boot even where the kernel's report for the same
    /// kernel, scenario and reps is cached (the guest is deterministic).
    #[arg(long)]
    pub fresh: bool,
    /// With a Debian kernel: no boot; the scenarios whose kernel report is
    /// cached are compared, the others listed as not run.
    #[arg(long, conflicts_with = "fresh")]
    pub cached: bool,
    /// Simulator setting KEY=VALUE applied after the machine's (repeatable),
    /// to test a model change against the same kernel runs.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
}

impl ValidateArgs {
    /// The `--set` overrides as pairs.
    fn sim_settings(&self) -> Result<Vec<(String, String)>, Stop> {
        self.set
            .iter()
            .map(|kv| {
                kv.split_once('=')
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .ok_or_else(|| Stop::Usage(format!("--set {kv}: expected KEY=VALUE")))
            })
            .collect()
    }
}

/// zram's statistics; the driver reads them after its last access (`--snapshot`).
const ZRAM_MM_STAT: &str = "/sys/block/zram0/mm_stat";

/// KERNEL/SIM: swap created for validation (zram disksize or swap file size).
const SWAP_BYTES: u64 = 1 << 30;
/// The host kernel (6.x, classic LRU) matches this simulator profile.
const PROFILE: &str = "v6.2";

fn err(e: impl fmt::Display) -> anyhow::Error {
    anyhow::anyhow!("{e}")
}

/// `reclaimsim validate`.
pub fn validate(args: ValidateArgs) -> Result<()> {
    if args.reps == 0 {
        return Err(Stop::Usage("--reps must be at least 1".into()).into());
    }
    if args.kernel != "host" {
        let family = debian::Family::find(&args.kernel).ok_or_else(|| {
            let names: Vec<&str> = debian::FAMILIES.iter().map(|f| f.name).collect();
            Stop::Usage(format!("--kernel {}: expected host, {}", args.kernel, names.join(", ")))
        })?;
        return guest::validate(&args, family);
    }
    if args.lru_gen.is_some() {
        return Err(Stop::Usage("--lru-gen needs --kernel debian-*: the host kernel has no MGLRU".into()).into());
    }
    let set = scenarios::select(&args.scenario, scenarios::all(Scale::host(args.quick), false))
        .map_err(|e| anyhow::Error::new(Stop::Usage(e)))?;
    if let Some(why) = host::refusal() {
        return Err(Stop::Refused(why).into());
    }
    host::catch_signals();
    let driver_cpu = if host::nr_cpus() > 1 { 1 } else { 0 };
    host::pin_self(0);
    let page_cluster = host::sysctl("/proc/sys/vm/page-cluster").map_err(err)?;
    let vma_ra =
        std::fs::read_to_string("/sys/kernel/mm/swap/vma_ra_enabled").map(|s| s.trim() == "true").unwrap_or(true);
    let mut host = Host::setup(SWAP_BYTES, args.swap_file).map_err(err)?;
    let swap = host.swap.clone().expect("setup enabled swap");
    eprintln!(
        "reclaimsim validate: swap {} ({}), vm.page-cluster {page_cluster}, driver on CPU {driver_cpu}, {} rep(s)",
        match &swap {
            host::SwapDev::Zram => "/dev/zram0".to_string(),
            host::SwapDev::File(p) => p.display().to_string(),
        },
        swap.sim_kind(),
        args.reps
    );
    let mut results = Vec::new();
    for sc in &set {
        let machine = replay::Machine {
            profile: PROFILE,
            limit_bytes: sc.limit_bytes,
            swappiness: sc.swappiness,
            swap_kind: swap.sim_kind(),
            swap_ra: swap.sim_swap_ra(),
            swap_bytes: SWAP_BYTES,
            page_cluster,
            vma_ra,
            stats_flush: 0,
            measured: Vec::new(),
            extra: args.sim_settings()?,
            global: None,
            // The host's kswapd is not involved in limit reclaim: no CPU contention modelled.
            cpus: 0,
            phase_every: 0,
            swap_dev: None,
            fs_dev: None,
            memory: None,
            knobs: Vec::new(),
            reclaims: Vec::new(),
        };
        let c = run_scenario(&mut host, sc, machine, args.reps, driver_cpu, args.stats_flush)?;
        print!("{}", c.text());
        std::io::stdout().flush()?;
        results.push(c);
    }
    drop(host);
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim().to_string();
    let swap_name = swap.sim_kind();
    if let Some(path) = &args.json {
        let doc = json!({
            "host": {"kernel": kernel, "swap": swap_name, "page_cluster": page_cluster, "profile": PROFILE, "reps": args.reps, "quick": args.quick},
            "scenarios": results.iter().map(Comparison::json).collect::<Vec<Value>>(),
        });
        write_json(path, &doc)?;
    }
    if let Some(path) = &args.doc {
        let setup = format!(
            "kernel {kernel}, swap {swap_name}, {} rep(s) per scenario{}",
            args.reps,
            if args.quick { ", --quick" } else { "" }
        );
        let table = compare::markdown(
            &results.iter().collect::<Vec<_>>(),
            "reclaimsim validate all --reps N --doc docs/validation.md",
            &setup,
        );
        compare::rewrite_doc(path, "host", &table).map_err(err)?;
    }
    Ok(Stop::verdict(&results)?)
}

/// The dry-mode trace of driver pattern `spec`, written to `dir` and read back
/// (the file is removed), with the digest the driver's real run must print.
fn trace_of(spec: &str, dir: &std::path::Path) -> Result<(Trace, Digest)> {
    let pattern = Pattern::parse(spec).map_err(err)?;
    let trace_path = dir.join("run.trace");
    let mut w = BufWriter::new(std::fs::File::create(&trace_path)?);
    let digest = write_trace(&pattern, &mut w)?;
    w.flush()?;
    drop(w);
    let trace = read_trace(&mut BufReader::new(std::fs::File::open(&trace_path)?))
        .map_err(|e| err(format!("{}: {e}", trace_path.display())));
    std::fs::remove_file(&trace_path)?;
    Ok((trace?, digest))
}

fn run_scenario(
    host: &mut Host,
    sc: &Scenario,
    mut machine: replay::Machine,
    reps: u32,
    cpu: usize,
    stats_flush: Option<u64>,
) -> Result<Comparison> {
    let pattern = Pattern::parse(&sc.pattern).map_err(err)?;
    let (trace, digest) = trace_of(&sc.pattern, &host.dir)?;
    let mut runs = Vec::new();
    for rep in 0..reps {
        host::check_interrupted().map_err(err)?;
        runs.push(kernel_run(host, sc, &pattern, rep, cpu, digest)?);
    }
    // The poller's flushes, counted in charges: the group's pgpgin per poll.
    let charges: u64 = runs.iter().map(|r| r.memcg.get("pgpgin").copied().unwrap_or(0)).sum();
    let polls: u64 = runs.iter().map(|r| r.polls).sum();
    machine.stats_flush = stats_flush.unwrap_or(charges / polls.max(1)).max(1);
    if let Some(mm_stat) = runs.last().and_then(|r| r.zram_mm_stat.as_deref()) {
        machine.measured = replay::zram_settings(mm_stat).map_err(err)?;
    }
    let started = Instant::now();
    let report = replay::simulate(&machine, vec![(String::new(), trace)]).map_err(err)?;
    Ok(Comparison::new(sc.clone(), machine, runs, report, started.elapsed().as_secs_f64(), &[]))
}

fn kernel_run(
    host: &mut Host,
    sc: &Scenario,
    pattern: &Pattern,
    rep: u32,
    cpu: usize,
    digest: driver::trace::Digest,
) -> Result<KernelRun> {
    let file = if pattern.file_pages > 0 { Some(host.fresh_file(pattern.file_pages).map_err(err)?) } else { None };
    let cg = host
        .make_cgroup(&format!("reclaimsim-validate-{}-{}", std::process::id(), sc.name), sc.limit_bytes, sc.swappiness)
        .map_err(err)?;
    let before = host::vmstat().map_err(err)?;
    let poller = Poller::start(&cg);
    let mut cmd = Command::new(std::env::current_exe()?);
    cmd.args([
        "driver",
        "run",
        &pattern.canonical,
        "--cgroup",
        cg.to_str().expect("UTF-8 path"),
        "--cpu",
        &cpu.to_string(),
    ]);
    if let Some(f) = &file {
        cmd.args(["--file", f.to_str().expect("UTF-8 path")]);
    }
    if matches!(host.swap, Some(host::SwapDev::Zram)) {
        cmd.args(["--snapshot", ZRAM_MM_STAT]);
    }
    let started = Instant::now();
    let child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn()?;
    let waited = host::wait_child(child);
    let wall = started.elapsed().as_secs_f64();
    let polls = poller.stop();
    let (out, status) = waited.map_err(err)?;
    let after = host::vmstat().map_err(err)?;
    let memcg = host::memory_stat(&cg).map_err(err)?;
    let oom = std::fs::read_to_string(cg.join("memory.oom_control")).unwrap_or_default();
    host.remove_cgroup();
    if !status.success() {
        return Err(err(format!(
            "{} rep {rep}: the driver failed ({status}); memory.oom_control: {}",
            sc.name,
            oom.replace('\n', ", ")
        )));
    }
    let want = format!("digest {digest}");
    if !out.contains(&want) {
        return Err(err(format!(
            "{} rep {rep}: the driver's access sequence differs from the trace: got `{}`, want `{want}`",
            sc.name,
            out.trim()
        )));
    }
    eprintln!("reclaimsim validate: {} rep {rep}: {wall:.2} s, {polls} memory.stat polls", sc.name);
    let zram_mm_stat = KernelRun::zram_snapshot(&out);
    Ok(KernelRun {
        vmstat: stat::delta(&before, &after),
        memcg,
        wall_seconds: wall,
        polls,
        zram_mm_stat,
        start: stat::Stats::new(),
        phases: Vec::new(),
        groups: Default::default(),
    })
}
