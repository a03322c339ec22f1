//! Listings and human-readable output.

use engine::config::format_size;
use engine::RunReport;
use experiment::sections::{section_of, Section};
use experiment::RunInfo;
use workload::WORKLOADS;

/// `reclaimsim workloads`.
pub fn print_workloads() {
    println!("Built-in workloads: --workload NAME[:key=value,...]; repeat --workload to run several side by side.\n");
    for w in WORKLOADS {
        println!("{:<10} {}", w.name, w.summary);
        for p in w.params {
            println!("    {:<10} default {:<8} {}", p.key, p.default, p.help);
        }
        println!();
    }
}

/// Simulated seconds: 3 decimals, 6 below one second (a short run is not 0.000 s).
fn secs(ns: u64) -> String {
    let s = ns as f64 / 1e9;
    if s < 1.0 {
        format!("{s:.6}")
    } else {
        format!("{s:.3}")
    }
}

/// Latency in microseconds, the one unit of every latency `run` prints.
fn us(ns: f64) -> String {
    format!("{:.2}", ns / 1e3)
}

/// The one line that names what ran: workloads, profile, machine, seed, and
/// whether the run finished or `time_limit` stopped it.
pub fn header(info: &RunInfo, r: &RunReport, trace: Option<&str>) -> String {
    let mut what: Vec<String> = info.workloads.iter().map(|w| w.to_string()).collect();
    if let Some(t) = trace {
        what.push(format!("trace {t}"));
    }
    let c = &info.config;
    let swap = if c.swap_bytes == 0 {
        "no swap".to_string()
    } else {
        format!("swap {} on {}", format_size(c.swap_bytes), c.swap_kind.name())
    };
    let stopped = c.time_limit_ns != 0 && r.virtual_ns >= c.time_limit_ns;
    format!(
        "# ran {} | profile {} | memory {}, {swap} | seed {} | {} at {} s simulated",
        what.join(" + "),
        c.profile,
        format_size(c.memory_bytes),
        info.seed,
        if stopped { "stopped by time_limit" } else { "finished" },
        secs(r.virtual_ns)
    )
}

/// `run`'s text output: the header line, the counters by `/proc` file (unless
/// `counters` is false), then a summary.
pub fn print_report(info: &RunInfo, r: &RunReport, wall_seconds: f64, counters: bool, trace: Option<&str>) {
    println!("{}", header(info, r, trace));
    if counters {
        println!("# /proc/vmstat");
        for (name, v) in r.vmstat.iter().filter(|(n, _)| section_of(n) == Section::Vmstat) {
            println!("{name} {v}");
        }
        println!("# /proc/meminfo");
        for (_, v) in r.vmstat.iter().filter(|(n, _)| section_of(n) == Section::Meminfo) {
            println!("SwapFree: {} kB", v * mm::PAGE_SIZE / 1024);
        }
        println!("SReclaimable: {} kB", r.get("nr_slab_reclaimable").unwrap_or(0) * mm::PAGE_SIZE / 1024);
        let zones = if r.zones.len() == 1 { "zone Normal" } else { "all zones summed; run --zoneinfo for each" };
        println!("# /proc/zoneinfo ({zones}, pages)");
        for (name, v) in r.vmstat.iter().filter(|(n, _)| section_of(n) == Section::Zoneinfo) {
            println!("{} {v}", name.trim_start_matches("wmark_"));
        }
        println!();
        if !r.memcg.is_empty() {
            println!("# memcg memory.stat");
            for (name, v) in &r.memcg {
                println!("{name} {v}");
            }
            let events: Vec<String> = r.memcg_events.iter().map(|(name, v)| format!("{name} {v}")).collect();
            println!("# memcg memory.events: {}", events.join(", "));
            println!();
        }
    }
    for g in &r.cgroups {
        let stat: Vec<String> = g.stat.iter().map(|(name, v)| format!("{name} {v}")).collect();
        let events: Vec<String> = g.events.iter().map(|(name, v)| format!("{name} {v}")).collect();
        println!("# cgroup {}: {}", g.path, stat.join(", "));
        println!("# cgroup {} memory.events: {}", g.path, events.join(", "));
        let (some, full) = (&g.pressure.some, &g.pressure.full);
        println!(
            "# cgroup {} memory.pressure: some avg10={:.2} total={}, full avg10={:.2} total={} (run-long share {:.2}% / {:.2}%)",
            g.path,
            some.avg10,
            some.total_ns / 1000,
            full.avg10,
            full.total_ns / 1000,
            some.avg,
            full.avg
        );
    }
    if !r.cgroups.is_empty() {
        println!();
    }
    if !r.zram.is_empty() {
        let z = |name: &str| r.zram.iter().find(|(n, _)| *n == name).map_or(0, |&(_, v)| v);
        let mib = |b: u64| b as f64 / (1 << 20) as f64;
        println!(
            "# zram mm_stat       orig {:.1} MiB, compr {:.1} MiB, pool {:.1} MiB (max {:.1}), same {}, huge {}, failed writes {}",
            mib(z("orig_data_size")),
            mib(z("compr_data_size")),
            mib(z("mem_used_total")),
            mib(z("mem_used_max")),
            z("same_pages"),
            z("huge_pages"),
            z("failed_writes")
        );
    }
    if !r.zswap.is_empty() {
        let z = |name: &str| r.zswap.iter().find(|(n, _)| *n == name).map_or(0, |&(_, v)| v);
        let v = |name: &str| r.vmstat.iter().find(|(n, _)| *n == name).map_or(0, |&(_, v)| v);
        println!(
            "# zswap              pool {:.1} MiB, stored {}, zswpout {}, zswpin {}, zswpwb {}, pool limit hit {}, reject alloc {}",
            z("pool_total_size") as f64 / (1 << 20) as f64,
            z("stored_pages"),
            v("zswpout"),
            v("zswpin"),
            v("zswpwb"),
            z("pool_limit_hit"),
            z("reject_alloc_fail")
        );
    }
    println!("# simulated time     {} s", secs(r.virtual_ns));
    println!(
        "# simulation speed   {} accesses in {:.2} s wall = {:.1} M accesses/s ({} events)",
        r.accesses,
        wall_seconds,
        r.accesses as f64 / wall_seconds.max(1e-9) / 1e6,
        r.events
    );
    println!(
        "# CPU time           User time {:.3} s, System time {:.3} s, Elapsed time {} s (workload threads, as /usr/bin/time)",
        r.user_time_ns() as f64 / 1e9,
        r.system_time_ns() as f64 / 1e9,
        secs(r.virtual_ns)
    );
    println!("# kswapd CPU         {:.3} s", r.kswapd_cpu_ns as f64 / 1e9);
    if r.kswapd_run_delay_ns > 0 || r.threads.iter().any(|t| t.run_delay_ns > 0) {
        let threads: u64 = r.threads.iter().map(|t| t.run_delay_ns).sum();
        println!(
            "# run delay          kswapd {:.3} s, threads {:.3} s (runnable, waiting for one of the cpus)",
            r.kswapd_run_delay_ns as f64 / 1e9,
            threads as f64 / 1e9
        );
    }
    println!(
        "# direct reclaim     {:.3} s in {} calls (latency us: p50 {}, p99 {}, max {})",
        r.direct_reclaim_ns as f64 / 1e9,
        r.direct_reclaims,
        us(r.direct_reclaim_latency(50.0) as f64),
        us(r.direct_reclaim_latency(99.0) as f64),
        us(r.direct_reclaim_latency(100.0) as f64)
    );
    let steal = |n| r.get(n).unwrap_or(0);
    let (scan, stolen) =
        (steal("pgscan_kswapd") + steal("pgscan_direct"), steal("pgsteal_kswapd") + steal("pgsteal_direct"));
    println!("# pgscan/pgsteal     {scan}/{stolen} = {:.2}", scan as f64 / stolen.max(1) as f64);
    let w = |x: &reclaim::ReclaimWork| {
        format!(
            "rmap walks {} ptes {}, pt-walk mms {} pmds {} ptes {}, sorted {}",
            x.rmap_walks, x.rmap_ptes, x.walk_mms, x.walk_pmds, x.walk_ptes, x.pages_sorted
        )
    };
    println!("# kswapd work        {}", w(&r.kswapd_work));
    println!("# direct work        {}", w(&r.direct_work));
    println!(
        "# /proc/pressure/memory (total in us; the run-long share: {:.2}% some, {:.2}% full)",
        r.psi.some.avg, r.psi.full.avg
    );
    for (name, l) in [("some", &r.psi.some), ("full", &r.psi.full)] {
        println!("{name} avg10={:.2} avg60={:.2} avg300={:.2} total={}", l.avg10, l.avg60, l.avg300, l.total_ns / 1000);
    }
    for wr in &r.control_writes {
        println!("# control write      {wr}");
    }
    println!("# reclaim throttled  {:.3} s", r.reclaim_throttled_ns as f64 / 1e9);
    println!("# kswapd efficiency  {:.1}% (pgsteal_kswapd / pgscan_kswapd)", r.kswapd_efficiency_pct());
    println!("# kswapd velocity    {:.1} pages/s (pgscan_kswapd per simulated second)", r.kswapd_velocity());
    let (ra, ra_hit) = (r.get("swap_ra").unwrap_or(0), r.get("swap_ra_hit").unwrap_or(0));
    if ra > 0 {
        println!(
            "# swap readahead     {ra} pages read ahead, {ra_hit} hit ({:.2}%)",
            ra_hit as f64 * 100.0 / ra as f64
        );
    }
    println!("# operation latency, us");
    let mut header = format!("# {:<20} {:>12} {:>12}", "thread", "ops", "ops/s");
    for p in &engine::report::LATENCY_PERCENTILES {
        header += &format!(" {:>8}", if *p >= 100.0 { "max".to_string() } else { format!("p{p}") });
    }
    println!("{header}");
    for t in &r.threads {
        let mut line = format!("# {:<20} {:>12} {:>12.0}", t.name, t.ops, t.ops_per_sec());
        for (_, v) in &t.latency_ns {
            line += &format!(" {:>8}", us(*v as f64));
        }
        println!("{line}");
    }
    println!("# CPU time, s\n# {:<20} {:>12} {:>12} {:>12}", "thread", "User time", "System time", "Elapsed time");
    for t in &r.threads {
        let s = |ns: u64| ns as f64 / 1e9;
        println!("# {:<20} {:>12.6} {:>12.6} {:>12.6}", t.name, s(t.user_time_ns), s(t.system_time_ns), s(t.end_ns));
    }
    for (node, ns) in r.kswapd_cpu_ns_by_node.iter().enumerate() {
        println!("# {:<20} {:>12.6} {:>12.6} {:>12}", format!("kswapd{node}"), 0.0, *ns as f64 / 1e9, "-");
    }
    for t in &r.threads {
        if let Some(at) = t.oom_killed_ns {
            println!("# oom-killed         {} at {} s (stopped at {} s)", t.name, secs(at), secs(t.end_ns));
        }
    }
    print_transactions(r);
}

/// The transaction table, for workloads that mark transactions (pgbench).
fn print_transactions(r: &RunReport) {
    if r.threads.iter().all(|t| t.txns == 0) {
        return;
    }
    let pick = [50.0, 90.0, 99.0, 100.0];
    println!("# transaction latency, us");
    let mut header = format!("# {:<20} {:>12} {:>12} {:>9}", "thread", "txns", "tps", "avg");
    for p in pick {
        header += &format!(" {:>9}", if p >= 100.0 { "max".to_string() } else { format!("p{p}") });
    }
    println!("{header}");
    for t in r.threads.iter().filter(|t| t.txns > 0) {
        let mut line =
            format!("# {:<20} {:>12} {:>12.2} {:>9}", t.name, t.txns, t.txns_per_sec(), us(t.txn_latency_mean_ns));
        for (_, v) in t.txn_latency_ns.iter().filter(|(p, _)| pick.contains(p)) {
            line += &format!(" {:>9}", us(*v as f64));
        }
        println!("{line}");
    }
    let txns: u64 = r.threads.iter().map(|t| t.txns).sum();
    let tps: f64 = r.threads.iter().map(|t| t.txns_per_sec()).sum();
    let mean = r.threads.iter().map(|t| t.txn_latency_mean_ns * t.txns as f64).sum::<f64>() / txns as f64;
    println!("# transactions       {txns} ({tps:.2} tps, latency average {} us)", us(mean));
}

/// A status line on stderr, only when stderr is a terminal.
pub fn status(msg: &str) {
    use std::io::IsTerminal;
    if std::io::stderr().is_terminal() {
        eprintln!("reclaimsim: {msg}");
    }
}
