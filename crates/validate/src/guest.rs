//! `validate --kernel debian-5.10|6.1|6.12|7.2`: the scenario runs inside a
//! Debian kernel booted under qemu, MGLRU on or off, compared with the
//! simulator under the matching profile (`v6.1-classic`, `v6.12-mglru`, ...).
//!
//! One boot per scenario and `lru_gen` setting runs the driver `reps + 1`
//! times; the first run warms the guest up and is discarded. With the
//! deterministic qemu set-up the kernel's counters repeat exactly.

use super::compare::{self, Comparison, KernelRun};
use super::debian::{self, Family, Kernel};
use super::initramfs::{self, GuestPlan, Payload};
use super::qemu::{self, ScratchDir};
use super::scenarios::{self, Scale, Scenario};
use super::{console, cpio, host, replay, stat, trace_of, write_json, Stop, ValidateArgs};
use anyhow::Result;
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// zram size in the guest (and the simulator's swap).
const SWAP_BYTES: u64 = 1 << 30;
/// Host time allowed per boot.
const BOOT_TIMEOUT: Duration = Duration::from_secs(1800);

fn err(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow::anyhow!("{e}")
}

/// The statically linked busybox the guest runs.
fn find_busybox() -> Result<PathBuf, Stop> {
    let found =
        ["/bin/busybox", "/usr/bin/busybox", "/usr/sbin/busybox"].iter().map(PathBuf::from).find(|p| p.is_file());
    let need = "needs a statically linked busybox (Debian: apt-get install busybox-static)";
    let bb = found.ok_or_else(|| Stop::Refused(need.into()))?;
    match initramfs::is_static(&bb) {
        Ok(true) => Ok(bb),
        _ => Err(Stop::Refused(format!("{need}; {} is dynamically linked", bb.display()))),
    }
}

/// A finished boot's comparison and the host seconds it took.
struct Boot {
    comparison: Comparison,
    host_seconds: f64,
    lru_gen: bool,
    /// The kernel's report came from the cache (no boot).
    cached: bool,
}

/// `reclaimsim validate --kernel debian-*`.
pub fn validate(args: &ValidateArgs, family: &'static Family) -> Result<()> {
    let set = scenarios::select(&args.scenario, scenarios::all(Scale::guest(args.quick), true))
        .map_err(|e| anyhow::Error::new(Stop::Usage(format!("{e} (with a guest kernel)"))))?;
    let modes: Vec<bool> = match args.lru_gen.as_deref() {
        Some("on") if family.mglru.is_none() => {
            return Err(Stop::Usage(format!("--lru-gen on: {} has no MGLRU", family.name)).into())
        }
        None if family.mglru.is_none() => vec![false],
        None => vec![false, true],
        Some("on") => vec![true],
        Some("off") => vec![false],
        Some(other) => return Err(Stop::Usage(format!("--lru-gen {other}: expected on or off")).into()),
    };
    let qemu = qemu::find_qemu().ok_or_else(|| {
        Stop::Refused(format!("needs {} on PATH (Debian: apt-get install qemu-system-x86)", qemu::QEMU))
    })?;
    let busybox = find_busybox()?;
    host::catch_signals();
    let kernel = debian::fetch(family).map_err(|e| match host::check_interrupted() {
        Err(stop) => err(stop),
        Ok(()) => Stop::Refused(format!("the {} kernel package is not available: {e}", family.name)).into(),
    })?;
    let exe = std::env::current_exe()?;
    let work = ScratchDir::new("driver").map_err(err)?;
    let payload = Payload {
        busybox,
        libs: initramfs::shared_libs(&exe).map_err(err)?,
        exe: without_debuginfo(&exe, &work.0),
        modules: kernel
            .modules
            .iter()
            .chain(&kernel.nullb_modules)
            .map(|m| Ok((file_name(m), std::fs::read(m).map_err(|e| err(format!("{}: {e}", m.display())))?)))
            .collect::<Result<_>>()?,
    };
    eprintln!(
        "reclaimsim validate: {} ({}), qemu TCG -icount, {} rep(s) after a discarded warm-up run per boot",
        family.name, kernel.package, args.reps
    );
    let started = Instant::now();
    let mut boots = Vec::new();
    for sc in &set {
        let trace_dir = ScratchDir::new(&format!("trace{}", boots.len())).map_err(err)?;
        let (trace, digest) = trace_of(sc, &trace_dir.0)?;
        drop(trace_dir);
        for &lru_gen in &modes {
            let b =
                boot_scenario(args, family, &kernel, &payload, &qemu, sc, lru_gen, trace.clone(), digest, boots.len())?;
            print!("{}", b.comparison.text());
            std::io::stdout().flush()?;
            boots.push(b);
        }
    }
    let total = started.elapsed().as_secs_f64();
    eprintln!("reclaimsim validate: {} boot(s) in {total:.0} s", boots.len());
    let direction = direction(&boots);
    if !direction.is_empty() {
        print!("\n{}", direction_text(&direction));
    }
    let results: Vec<&Comparison> = boots.iter().map(|b| &b.comparison).collect();
    if let Some(path) = &args.json {
        let doc = json!({
            "kernel": {"family": family.name, "package": kernel.package, "reps": args.reps, "quick": args.quick, "emulation": "qemu TCG, -icount shift=0,sleep=off, -smp 1", "host_seconds": total},
            "scenarios": boots.iter().map(|b| { let mut v = b.comparison.json(); v["lru_gen"] = json!(b.lru_gen); v["host_seconds"] = json!(b.host_seconds); v["cached"] = json!(b.cached); v }).collect::<Vec<Value>>(),
            "mglru_vs_classic": direction.iter().map(|d| json!({"scenario": d.scenario, "counter": "pswpout", "kernel_change": d.kernel, "sim_change": d.sim, "agrees": d.agrees()})).collect::<Vec<_>>(),
        });
        write_json(path, &doc)?;
    }
    if let Some(path) = &args.doc {
        let booted: Vec<&Boot> = boots.iter().filter(|b| !b.cached).collect();
        let boots_done = if booted.is_empty() {
            format!("all {} kernel reports from the cache", boots.len())
        } else {
            let secs: f64 = booted.iter().map(|b| b.host_seconds).sum();
            format!(
                "{} boot(s) now ({secs:.0} s host time), {} report(s) from the cache",
                booted.len(),
                boots.len() - booted.len()
            )
        };
        let setup = format!(
            "{}, qemu TCG `-icount`, zram, {} rep(s) after a discarded warm-up; {boots_done}{}",
            kernel.package,
            args.reps,
            if args.quick { ", --quick" } else { "" }
        );
        let command = format!("reclaimsim validate all --kernel {} --doc docs/validation.md", family.name);
        let mut table = compare::markdown(&results, &command, &setup);
        if !direction.is_empty() {
            table += &format!("\n{}", direction_markdown(&direction));
        }
        compare::rewrite_doc(path, family.name, &table).map_err(err)?;
    }
    Ok(Stop::verdict(results.iter().copied())?)
}

/// A copy of `exe` without debug sections (`objcopy --strip-debug`) in `dir`:
/// a smaller initramfs boots faster. `exe` itself where objcopy is missing or fails.
fn without_debuginfo(exe: &Path, dir: &Path) -> PathBuf {
    let out = dir.join("reclaimsim");
    let ok = std::process::Command::new("objcopy")
        .arg("--strip-debug")
        .arg(exe)
        .arg(&out)
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        out
    } else {
        exe.to_path_buf()
    }
}

fn file_name(p: &Path) -> String {
    p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Boots once for `sc` with `lru_gen`, runs the simulator on `trace`.
#[allow(clippy::too_many_arguments)]
fn boot_scenario(
    args: &ValidateArgs,
    family: &Family,
    kernel: &Kernel,
    payload: &Payload,
    qemu: &Path,
    sc: &Scenario,
    lru_gen: bool,
    trace: driver::trace::Trace,
    digest: driver::trace::Digest,
    n: usize,
) -> Result<Boot> {
    let warmup = sc.warmup as u32;
    let data_mb = (trace.file_pages > 0).then(|| (trace.file_pages as u64 * mm::PAGE_SIZE).div_ceil(1 << 20));
    let mut plan = GuestPlan {
        pattern: sc.pattern.clone(),
        limit_bytes: sc.limit_bytes,
        global_ram_mb: sc.global_ram_mb,
        swappiness: sc.swappiness,
        swap_bytes: SWAP_BYTES,
        lru_gen: family.mglru.is_some().then_some(lru_gen),
        runs: args.reps + warmup,
        modules: Vec::new(),
        phase_every: if args.phases > 0 { crate::phases::every(trace.ops.len(), args.phases) } else { 0 },
        swap: sc.swap,
        data_mb,
    };
    if data_mb.is_some() && plan.swap != scenarios::Swap::Zram {
        return Err(err(format!("{}: a null_blk swap and a null_blk data device in one guest", sc.name)));
    }
    // zram's modules for zram swap, null_blk's for a block device: a plan's
    // `/init` (and so its cache key) names only what it uses.
    let zram = (plan.swap == scenarios::Swap::Zram).then_some(&kernel.modules);
    let nullb = plan.uses_nullb().then_some(&kernel.nullb_modules);
    plan.modules = zram.into_iter().chain(nullb).flatten().map(|m| file_name(m)).collect();
    let label = format!("{} (lru_gen {})", sc.name, on_off(lru_gen));
    // The guest is deterministic: its report is kept per kernel and plan.
    let cached = kernel.dir.join("runs").join(format!("{}.txt", run_key(&kernel.package, &plan, digest)));
    let started = Instant::now();
    let from_cache = !args.fresh && cached.exists();
    let text = match std::fs::read_to_string(&cached) {
        Ok(text) if !args.fresh => {
            eprintln!(
                "reclaimsim validate: {label}: the kernel's report from {} (--fresh boots again)",
                cached.display()
            );
            text
        }
        _ => {
            let archive = cpio::archive(&initramfs::entries(&plan, payload).map_err(err)?);
            let scratch = ScratchDir::new(&format!("boot{n}")).map_err(err)?;
            let memory_mb = sc.global_ram_mb.unwrap_or(qemu::GUEST_MB);
            qemu::boot(qemu, &kernel.image, &archive, memory_mb, &scratch, BOOT_TIMEOUT)
                .map_err(|e| err(format!("{label}: {e}")))?
        }
    };
    let host_seconds = started.elapsed().as_secs_f64();
    let report = console::parse(&text).map_err(err)?;
    if !report.done || report.runs.len() != plan.runs as usize {
        return Err(err(format!("{label}: the guest stopped after {} of {} runs", report.runs.len(), plan.runs)));
    }
    let want = format!("digest {digest}");
    let mut runs = Vec::new();
    for r in &report.runs {
        if r.status != 0 || !r.driver.contains(&want) {
            return Err(err(format!(
                "{label} run {}: the driver failed (status {}): {}",
                r.index,
                r.status,
                r.driver.trim()
            )));
        }
        if r.index >= warmup {
            runs.push(KernelRun {
                vmstat: stat::delta(&r.vmstat_before, &r.vmstat_after),
                memcg: r.memory_stat.clone(),
                wall_seconds: r.seconds,
                polls: r.polls,
                zram_mm_stat: KernelRun::zram_snapshot(&r.driver),
                start: r.start.clone(),
                phases: crate::phases::kernel_phases(&r.driver, &r.vmstat_before).map_err(err)?,
            });
        }
    }
    if !cached.exists() {
        std::fs::create_dir_all(cached.parent().expect("runs dir"))
            .map_err(|e| err(format!("{}: {e}", cached.display())))?;
        crate::write_atomic(&cached, text.as_bytes()).map_err(err)?;
    }
    let stats_flush = if family.stale_stats && sc.global_ram_mb.is_none() {
        // Charges per poll: every first touch, swap-in and page-cache refault
        // charges a page (a file page evicted without a shadow is not counted).
        let charges: u64 = runs
            .iter()
            .map(|r| {
                let n = |k: &str| r.vmstat.get(k).copied().unwrap_or(0);
                (trace.anon_pages + trace.file_pages) as u64 + n("pswpin") + n("workingset_refault_file")
            })
            .sum();
        (charges / runs.iter().map(|r| r.polls).sum::<u64>().max(1)).max(1)
    } else {
        0
    };
    let nullb = nullb_of(&report.info).map_err(|e| err(format!("{label}: {e}")))?;
    let block_swap = matches!(sc.swap, scenarios::Swap::Block { .. });
    let machine = replay::Machine {
        profile: family.profile(lru_gen),
        limit_bytes: sc.limit_bytes,
        swappiness: sc.swappiness,
        swap_kind: if block_swap { "ssd" } else { "zram" },
        swap_ra: "kernel",
        swap_bytes: SWAP_BYTES,
        page_cluster: report.info.get("page_cluster").and_then(|v| v.parse().ok()).unwrap_or(3),
        vma_ra: report.info.get("vma_ra").is_none_or(|v| v == "true"),
        stats_flush,
        measured: match runs.last().and_then(|r| r.zram_mm_stat.as_deref()) {
            Some(mm_stat) => replay::zram_settings(mm_stat).map_err(err)?,
            None => Vec::new(),
        },
        extra: args.sim_settings()?,
        global: match (sc.global_ram_mb, runs.last()) {
            (Some(_), Some(r)) => Some(replay::GlobalStart::from_stats(&r.start).map_err(err)?),
            _ => None,
        },
        cpus: crate::qemu::CPUS,
        phase_every: plan.phase_every,
        swap_dev: nullb.filter(|_| block_swap),
        fs_dev: nullb.filter(|_| plan.data_mb.is_some()),
    };
    let sim_started = Instant::now();
    let sim = replay::simulate(&machine, trace).map_err(err)?;
    let scenario = Scenario { name: label, ..sc.clone() };
    Ok(Boot {
        comparison: Comparison::new(scenario, machine, runs, sim, sim_started.elapsed().as_secs_f64()),
        host_seconds,
        lru_gen,
        cached: from_cache,
    })
}

/// The guest's null_blk as its `@guest` line reports it; `None` without one.
/// A rotational device would take cluster readahead, which the simulator's `ssd` does not.
fn nullb_of(info: &std::collections::BTreeMap<String, String>) -> Result<Option<replay::BlockDev>, String> {
    let Some(ns) = info.get("nullb_completion_nsec") else { return Ok(None) };
    let num = |key: &str, v: Option<&String>| {
        v.and_then(|v| v.parse::<u64>().ok()).ok_or_else(|| format!("the guest's `{key}` is missing or not a number"))
    };
    if info.get("nullb_rotational").map(String::as_str) != Some("0") {
        return Err("the guest's null_blk is not reported non-rotational (`nullb_rotational=0`)".into());
    }
    Ok(Some(replay::BlockDev {
        latency_us: num("nullb_completion_nsec", Some(ns))?.div_ceil(1000),
        queue_depth: num("nullb_queue_depth", info.get("nullb_queue_depth"))?,
    }))
}

/// The cache key of a boot: FNV-1a 64 over the package, the generated `/init`
/// (pattern, sizes, runs, modules) and the trace digest.
fn run_key(package: &str, plan: &GuestPlan, digest: driver::trace::Digest) -> String {
    let text = format!("{package}\n{}\n{digest}", initramfs::init_script(plan));
    let h = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3));
    format!("{h:016x}")
}

fn on_off(b: bool) -> &'static str {
    if b {
        "on"
    } else {
        "off"
    }
}

/// MGLRU vs classic on one scenario: relative change of `pswpout`.
struct Direction {
    scenario: String,
    kernel: f64,
    sim: f64,
}

impl Direction {
    /// Same sign, or both within ±1% (no real difference either way).
    fn agrees(&self) -> bool {
        (self.kernel.abs() < 0.01 && self.sim.abs() < 0.01) || self.kernel.signum() == self.sim.signum()
    }
}

fn direction(boots: &[Boot]) -> Vec<Direction> {
    let pswpout = |b: &Boot| {
        b.comparison.rows.iter().find(|r| r.name == "pswpout").map(|r| (r.kernel_mean(), r.sim)).unwrap_or((0.0, 0.0))
    };
    let base = |b: &Boot| b.comparison.scenario.name.split(' ').next().unwrap_or_default().to_string();
    let mut out = Vec::new();
    for on in boots.iter().filter(|b| b.lru_gen) {
        if let Some(off) = boots.iter().find(|b| !b.lru_gen && base(b) == base(on)) {
            let ((k_on, s_on), (k_off, s_off)) = (pswpout(on), pswpout(off));
            let change = |a: f64, b: f64| if b > 0.0 { a / b - 1.0 } else { 0.0 };
            out.push(Direction { scenario: base(on), kernel: change(k_on, k_off), sim: change(s_on, s_off) });
        }
    }
    out
}

fn direction_text(d: &[Direction]) -> String {
    let mut s = String::from("MGLRU vs classic, pswpout (on/off - 1):\n");
    for x in d {
        s += &format!(
            "  {:<12} kernel {:+.1}%  simulator {:+.1}%  {}\n",
            x.scenario,
            x.kernel * 100.0,
            x.sim * 100.0,
            if x.agrees() { "agrees" } else { "DISAGREES" }
        );
    }
    s
}

fn direction_markdown(d: &[Direction]) -> String {
    let mut s = String::from("MGLRU vs classic: change of `pswpout` with lru_gen on (on/off - 1).\n\n| scenario | kernel | simulator | direction agrees |\n|---|---|---|---|\n");
    for x in d {
        s += &format!(
            "| {} | {:+.1}% | {:+.1}% | {} |\n",
            x.scenario,
            x.kernel * 100.0,
            x.sim * 100.0,
            if x.agrees() { "yes" } else { "**no**" }
        );
    }
    s
}
