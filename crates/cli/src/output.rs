//! Listings and human-readable output.

use engine::RunReport;
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

fn fmt_ns(ns: u64) -> String {
    match ns {
        0..=9_999 => format!("{ns}ns"),
        10_000..=9_999_999 => format!("{:.1}us", ns as f64 / 1e3),
        _ => format!("{:.2}ms", ns as f64 / 1e6),
    }
}

/// `run`'s text output: the counters (unless `counters` is false), then a summary.
pub fn print_report(r: &RunReport, wall_seconds: f64, counters: bool) {
    if counters {
        for (name, v) in &r.vmstat {
            println!("{name} {v}");
        }
        println!();
        if !r.memcg.is_empty() {
            println!("# memcg memory.stat");
            for (name, v) in &r.memcg {
                println!("{name} {v}");
            }
            println!();
        }
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
    println!("# simulated time     {:.3} s", r.virtual_ns as f64 / 1e9);
    println!(
        "# simulation speed   {} accesses in {:.2} s wall = {:.1} M accesses/s ({} events)",
        r.accesses,
        wall_seconds,
        r.accesses as f64 / wall_seconds.max(1e-9) / 1e6,
        r.events
    );
    println!("# kswapd CPU         {:.3} s", r.kswapd_cpu_ns as f64 / 1e9);
    println!(
        "# direct reclaim     {:.3} s in {} calls (p50 {}, p99 {}, max {})",
        r.direct_reclaim_ns as f64 / 1e9,
        r.direct_reclaims,
        fmt_ns(r.direct_reclaim_latency(50.0)),
        fmt_ns(r.direct_reclaim_latency(99.0)),
        fmt_ns(r.direct_reclaim_latency(100.0))
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
    for (name, l) in [("some", &r.psi.some), ("full", &r.psi.full)] {
        println!("# psi memory {name}    avg={:.2} total={}", l.avg, l.total_ns / 1000);
    }
    for wr in &r.control_writes {
        println!("# lru_gen write      {wr}");
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
    let mut header = format!("# {:<20} {:>12} {:>12}", "thread", "ops", "ops/s");
    for p in &engine::report::LATENCY_PERCENTILES {
        header += &format!(" {:>8}", if *p >= 100.0 { "max".to_string() } else { format!("p{p}") });
    }
    println!("{header}");
    for t in &r.threads {
        let mut line = format!("# {:<20} {:>12} {:>12.0}", t.name, t.ops, t.ops_per_sec());
        for (_, v) in &t.latency_ns {
            line += &format!(" {:>8}", fmt_ns(*v));
        }
        println!("{line}");
    }
    print_transactions(r);
}

/// The transaction table, for workloads that mark transactions (pgbench).
fn print_transactions(r: &RunReport) {
    if r.threads.iter().all(|t| t.txns == 0) {
        return;
    }
    let pick = [50.0, 90.0, 99.0, 100.0];
    let mut header = format!("# {:<20} {:>12} {:>12} {:>9}", "thread", "txns", "tps", "avg");
    for p in pick {
        header += &format!(" {:>9}", if p >= 100.0 { "max".to_string() } else { format!("p{p}") });
    }
    println!("{header}");
    for t in r.threads.iter().filter(|t| t.txns > 0) {
        let mut line = format!(
            "# {:<20} {:>12} {:>12.2} {:>9}",
            t.name,
            t.txns,
            t.txns_per_sec(),
            fmt_ns(t.txn_latency_mean_ns as u64)
        );
        for (_, v) in t.txn_latency_ns.iter().filter(|(p, _)| pick.contains(p)) {
            line += &format!(" {:>9}", fmt_ns(*v));
        }
        println!("{line}");
    }
    let txns: u64 = r.threads.iter().map(|t| t.txns).sum();
    let tps: f64 = r.threads.iter().map(|t| t.txns_per_sec()).sum();
    let mean = r.threads.iter().map(|t| t.txn_latency_mean_ns * t.txns as f64).sum::<f64>() / txns as f64;
    println!("# transactions       {txns} ({tps:.2} tps, latency average {})", fmt_ns(mean as u64));
}

/// A status line on stderr, only when stderr is a terminal.
pub fn status(msg: &str) {
    use std::io::IsTerminal;
    if std::io::stderr().is_terminal() {
        eprintln!("reclaimsim: {msg}");
    }
}
