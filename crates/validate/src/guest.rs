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
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// zram size in the guest (and the simulator's swap).
pub(crate) const SWAP_BYTES: u64 = 1 << 30;
/// KERNEL: a memory-backed null_blk keeps a page for every sector written and
/// the swap allocator spreads writes over the device: 256M in the 512M guest
/// (1G deadlocked it).
const NULLB_SWAP_BYTES: u64 = 256 << 20;
/// Host time allowed per boot.
pub(crate) const BOOT_TIMEOUT: Duration = Duration::from_secs(1800);

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

/// A row's kernel side, ready for its simulator run.
struct Prepared {
    machine: replay::Machine,
    runs: Vec<KernelRun>,
    traces: Vec<(String, driver::trace::Trace)>,
    scenario: Scenario,
    host_seconds: f64,
    lru_gen: bool,
    cached: bool,
}

impl Prepared {
    /// Runs the simulator on the row's traces and compares it with the kernel's
    /// runs (the phase table with `phase_counters`).
    fn simulate(self, phase_counters: &[String]) -> Result<Boot> {
        let started = Instant::now();
        let sim = replay::simulate(&self.machine, self.traces).map_err(err)?;
        let seconds = started.elapsed().as_secs_f64();
        Ok(Boot {
            comparison: Comparison::new(self.scenario, self.machine, self.runs, sim, seconds, phase_counters),
            host_seconds: self.host_seconds,
            lru_gen: self.lru_gen,
            cached: self.cached,
        })
    }
}

/// `reclaimsim validate --kernel debian-*`.
pub fn validate(args: &ValidateArgs, family: &'static Family) -> Result<()> {
    let (set, too_new): (Vec<Scenario>, Vec<Scenario>) =
        scenarios::all(Scale::guest(args.quick), true).into_iter().partition(|sc| sc.since <= family.version);
    let set = scenarios::select(&args.scenario, set).map_err(|e| {
        let why = match too_new.iter().find(|sc| sc.name == args.scenario) {
            Some(sc) => format!("{}: needs a kernel of v{}.{} or newer", sc.name, sc.since.0, sc.since.1),
            None => format!("{e} (with {})", family.name),
        };
        anyhow::Error::new(Stop::Usage(why))
    })?;
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
    let costs = crate::calibrate::guest_costs(args, family, &kernel, &payload, &qemu)?;
    let started = Instant::now();
    let mut boots = Vec::new();
    let mut not_run = Vec::new();
    std::thread::scope(|scope| -> Result<()> {
        let mut take = |b: Result<Boot>| -> Result<()> {
            let b = b?;
            print!("{}", b.comparison.text());
            std::io::stdout().flush()?;
            boots.push(b);
            Ok(())
        };
        let mut pipe = crate::pipeline::Pipeline::new(scope, args.jobs as usize);
        let mut n = 0;
        for sc in &set {
            let trace_dir = ScratchDir::new(&format!("trace{n}")).map_err(err)?;
            // One trace, or one per tenant group.
            let specs: Vec<(String, String)> = if sc.tenants.is_empty() {
                vec![(String::new(), sc.pattern.clone())]
            } else {
                sc.tenants.iter().map(|t| (t.group.clone(), t.pattern.clone())).collect()
            };
            let traces = specs
                .into_iter()
                .map(|(group, spec)| trace_of(&spec, &trace_dir.0).map(|(t, d)| (group, t, d)))
                .collect::<Result<Vec<_>>>()?;
            drop(trace_dir);
            for &lru_gen in &modes {
                let Some(p) = boot_scenario(
                    args,
                    family,
                    &kernel,
                    &payload,
                    &qemu,
                    sc,
                    lru_gen,
                    traces.clone(),
                    n,
                    costs.as_ref(),
                )?
                else {
                    not_run.push(format!("{} (lru_gen {})", sc.name, on_off(lru_gen)));
                    continue;
                };
                n += 1;
                let counters = &args.phase_counters;
                if let Some(b) = pipe.push(move || p.simulate(counters)) {
                    take(b)?;
                }
            }
        }
        pipe.finish().into_iter().try_for_each(take)
    })?;
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
        if !not_run.is_empty() {
            table += &format!("\nNot run on this kernel yet (no cached report): {}.\n", not_run.join(", "));
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

pub(crate) fn file_name(p: &Path) -> String {
    p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Boots once for `sc` with `lru_gen` (or reads the cached report) and sets up
/// the simulator's machine for `traces` (one, or one per tenant group, with the
/// digests the guest's drivers must print); `None` with `--cached` where the
/// kernel's report is not cached.
#[allow(clippy::too_many_arguments)]
fn boot_scenario(
    args: &ValidateArgs,
    family: &Family,
    kernel: &Kernel,
    payload: &Payload,
    qemu: &Path,
    sc: &Scenario,
    lru_gen: bool,
    traces: Vec<(String, driver::trace::Trace, driver::trace::Digest)>,
    n: usize,
    costs: Option<&crate::calibrate::GuestCosts>,
) -> Result<Option<Prepared>> {
    let warmup = sc.warmup as u32;
    let (trace, digest) = (&traces[0].1, traces[0].2);
    let data_mb = (trace.file_pages > 0).then(|| (trace.file_pages as u64 * mm::PAGE_SIZE).div_ceil(1 << 20));
    let mut plan = GuestPlan {
        pattern: sc.pattern.clone(),
        limit_bytes: sc.limit_bytes,
        global_ram_mb: sc.global_ram_mb,
        swappiness: sc.swappiness,
        swap_bytes: swap_bytes(sc),
        lru_gen: family.mglru.is_some().then_some(lru_gen),
        runs: args.reps + warmup,
        modules: Vec::new(),
        phase_every: if args.phases > 0 { crate::phases::every(trace.ops.len(), args.phases) } else { 0 },
        swap: sc.swap,
        data_mb,
        zswap_pool_pct: sc.zswap_pool_pct,
        tenants: sc.tenants.clone(),
        calibrate: false,
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
    if args.cached && !from_cache {
        return Ok(None);
    }
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
    let want: Vec<String> = traces.iter().map(|(_, _, d)| format!("digest {d}")).collect();
    let mut runs = Vec::new();
    for r in &report.runs {
        if r.status != 0 || !want.iter().all(|w| r.driver.contains(w)) {
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
                groups: r.groups.clone(),
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
        swap_bytes: swap_bytes(sc),
        page_cluster: report.info.get("page_cluster").and_then(|v| v.parse().ok()).unwrap_or(3),
        vma_ra: report.info.get("vma_ra").is_none_or(|v| v == "true"),
        stats_flush,
        measured: match (runs.last().and_then(|r| r.zram_mm_stat.as_deref()), sc.zswap_pool_pct) {
            (Some(mm_stat), _) => replay::zram_settings(mm_stat).map_err(err)?,
            (None, Some(_)) => {
                let driver = report.runs.last().map_or("", |r| r.driver.as_str());
                zswap_settings(&report.info, driver).map_err(|e| err(format!("{label}: {e}")))?
            }
            (None, None) => Vec::new(),
        }
        .into_iter()
        .chain(costs.map_or_else(Vec::new, |c| c.settings(&cpu_costs(family.profile(lru_gen)), !block_swap)))
        .collect(),
        extra: args.sim_settings()?,
        global: match (sc.global_ram_mb, runs.last()) {
            (Some(_), Some(r)) => Some(replay::GlobalStart::from_stats(&r.start).map_err(err)?),
            _ => None,
        },
        cpus: crate::qemu::CPUS,
        phase_every: plan.phase_every,
        swap_dev: nullb.filter(|_| block_swap),
        fs_dev: nullb.filter(|_| plan.data_mb.is_some()),
        // zswap's pool limit is a percent of the guest's RAM.
        memory: match sc.zswap_pool_pct {
            Some(_) => Some(guest_number(&report.info, "mem_total_kb").map_err(err)? << 10),
            None => None,
        },
        knobs: sc.tenants.iter().flat_map(|t| t.knobs.iter().map(|(k, b)| (t.group.clone(), k.clone(), *b))).collect(),
        reclaims: sc.tenants.iter().filter_map(|t| Some((t.group.clone(), t.reclaim?))).collect(),
    };
    let scenario = Scenario { name: label, ..sc.clone() };
    let traces = traces.into_iter().map(|(g, t, _)| (g, t)).collect();
    Ok(Some(Prepared { machine, runs, traces, scenario, host_seconds, lru_gen, cached: from_cache }))
}

/// The CPU costs of simulator profile `profile`.
fn cpu_costs(profile: &str) -> engine::config::CpuCosts {
    engine::config::Config::for_profile(profile).map(|c| c.cpu).unwrap_or_default()
}

/// The swap size of `sc`: zram's, or the null_blk's.
fn swap_bytes(sc: &Scenario) -> u64 {
    match sc.swap {
        scenarios::Swap::Zram => SWAP_BYTES,
        scenarios::Swap::Block { .. } => NULLB_SWAP_BYTES,
    }
}

/// A number of the guest's `@guest` line.
fn guest_number(info: &BTreeMap<String, String>, key: &str) -> Result<u64, String> {
    info.get(key).and_then(|v| v.parse().ok()).ok_or_else(|| format!("the guest's `{key}` is missing or not a number"))
}

/// zswap as the guest ran it (`info`, its `@guest` line): enabled, its
/// `max_pool_percent`, and the compression of the driver's pages
/// (`zram.comp_ratio`, which the simulator's zswap pool uses too) from the
/// pages stored and the pool's size after the driver's last access (its
/// `snapshot` lines in `driver`).
fn zswap_settings(info: &BTreeMap<String, String>, driver: &str) -> Result<Vec<(String, String)>, String> {
    if info.get("zswap_enabled").map(String::as_str) != Some("Y") {
        return Err("the guest's zswap is not enabled".into());
    }
    let mut v = vec![
        ("zswap.enabled".to_string(), "1".to_string()),
        ("zswap.max_pool_percent".to_string(), guest_number(info, "zswap_max_pool_percent")?.to_string()),
    ];
    let read = |path: &str| {
        let prefix = format!("snapshot {path} ");
        driver
            .lines()
            .find_map(|l| l.strip_prefix(&prefix)?.trim().parse::<u64>().ok())
            .ok_or_else(|| format!("the driver did not report `{path}`"))
    };
    let (stored, pool) = (read(initramfs::ZSWAP_SNAPSHOTS[0])?, read(initramfs::ZSWAP_SNAPSHOTS[1])?);
    if stored > 0 && pool > 0 {
        let ratio = (stored as f64 * mm::PAGE_SIZE as f64 / pool as f64).clamp(1.0, 4096.0);
        v.push(("zram.comp_ratio".into(), format!("{ratio:.2}")));
    }
    Ok(v)
}

/// The guest's null_blk as its `@guest` line reports it; `None` without one.
/// A rotational device would take cluster readahead, which the simulator's `ssd` does not.
fn nullb_of(info: &BTreeMap<String, String>) -> Result<Option<replay::BlockDev>, String> {
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
pub(crate) fn run_key(package: &str, plan: &GuestPlan, digest: driver::trace::Digest) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn info(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn zswap_and_null_blk_from_the_guest_report() {
        let i = info(&[("zswap_enabled", "Y"), ("zswap_max_pool_percent", "1"), ("mem_total_kb", "480000")]);
        let driver = "ops 10 digest 00ff\nsnapshot /sys/kernel/debug/zswap/stored_pages 1000\nsnapshot /sys/kernel/debug/zswap/pool_total_size 2048000\n";
        let s = zswap_settings(&i, driver).unwrap();
        let want = [("zswap.enabled", "1"), ("zswap.max_pool_percent", "1"), ("zram.comp_ratio", "2.00")];
        assert_eq!(s, want.map(|(k, v)| (k.to_string(), v.to_string())));
        assert!(zswap_settings(&i, "ops 10\n")
            .unwrap_err()
            .contains("did not report `/sys/kernel/debug/zswap/stored_pages`"));
        assert_eq!(
            zswap_settings(&info(&[("zswap_enabled", "N")]), driver).unwrap_err(),
            "the guest's zswap is not enabled"
        );
        assert_eq!(guest_number(&i, "mem_total_kb"), Ok(480000));
        assert_eq!(nullb_of(&i), Ok(None), "no null_blk");
        let nb = info(&[("nullb_completion_nsec", "50000"), ("nullb_queue_depth", "64"), ("nullb_rotational", "0")]);
        assert_eq!(nullb_of(&nb), Ok(Some(replay::BlockDev { latency_us: 50, queue_depth: 64 })));
        let rot = info(&[("nullb_completion_nsec", "50000"), ("nullb_queue_depth", "64"), ("nullb_rotational", "1")]);
        assert!(nullb_of(&rot).unwrap_err().contains("non-rotational"));
    }
}
