//! Seed 002: the multi-generational LRU (v1 cover letter, March 2021).
//!
//! Claims on Chrome OS (browsing in many tabs, zram): 51% less kswapd CPU, 52%
//! less PSI `full`, direct-reclaim latency 22% lower at p99, 7% fewer refaults;
//! and pgscan/pgsteal of about 7 with the classic LRU on their servers. The
//! review asked about page-cache-heavy loads and about large shared memory
//! touched sparsely by many processes (Yu's reply: kswapd no clear winner,
//! direct reclaim 71% vs 47% of CPU). The seed gives relative figures only for
//! the tabs case, so the seed columns there are an index (classic = 100).

use super::params::{Origin, Param};
use super::{counter, Ctx, Metric, Reproduction, Table, Variant};
use anyhow::Result;
use engine::RunReport;

/// zram's compression CPU per page written (`swap.write_cpu_ns`, the zram preset): with
/// `cpu.rmap_pte_ns`, the two costs of the seed's kswapd profiles.
const COMPRESS_NS: f64 = 3000.0;

/// A share of kswapd's CPU time, percent: `ns_each` per unit of `units(r)`.
fn kswapd_share(r: &RunReport, units: fn(&RunReport) -> u64, ns_each: f64) -> f64 {
    units(r) as f64 * ns_each * 100.0 / (r.kswapd_cpu_ns as f64).max(1.0)
}

fn variants(workloads: &[String], settings: &[&str]) -> Vec<Variant> {
    [("classic", "v6.1-classic"), ("mglru", "v6.1-mglru")]
        .into_iter()
        .map(|(label, profile)| Variant {
            label: label.into(),
            profile: profile.into(),
            settings: settings.iter().map(|s| s.to_string()).collect(),
            workloads: workloads.to_vec(),
        })
        .collect()
}

fn per(reports: &[RunReport], f: impl Fn(&RunReport) -> f64) -> Vec<f64> {
    reports.iter().map(f).collect()
}

fn kswapd_s(r: &RunReport) -> f64 {
    r.kswapd_cpu_ns as f64 / 1e9
}

fn scan_ratio(r: &RunReport) -> f64 {
    let g = |n| r.get(n).unwrap_or(0) as f64;
    (g("pgscan_kswapd") + g("pgscan_direct")) / (g("pgsteal_kswapd") + g("pgsteal_direct")).max(1.0)
}

/// `ns` as a share of the workload threads' time, percent.
fn thread_pct(r: &RunReport, ns: f64) -> f64 {
    let busy: u64 = r.threads.iter().map(|t| t.end_ns).sum();
    ns * 100.0 / busy.max(1) as f64
}

/// Direct reclaim CPU as a share of the workload threads' time, percent.
fn direct_pct(r: &RunReport) -> f64 {
    thread_pct(r, r.direct_reclaim_ns as f64)
}

/// The engine's default `cpu.rmap_pte_ns`, the same for every seed (docs/model.md): the
/// cost of one `page_vma_mapped_walk` check in the profile rows.
fn rmap_pte_ns() -> f64 {
    engine::CpuCosts::default().rmap_pte_ns as f64
}

/// Where the tabs claims are in the seed.
const TABS: &str = "seed 002: \"51% less CPU usage from kswapd ... 52% (full) less PSI ... 22% less direct reclaim latency at 99th percentile ... 7% less refaults\" (an index, classic = 100)";
/// Where the shared-memory claim is.
const SHARED: &str = "seed 002, Yu's reply on shared memory: direct reclaim 71% vs 47% of CPU";
/// Where the kswapd profiles are.
const PROFILES: &str = "seed 002, kswapd profiles on Chrome OS: classic \"31.03% page_vma_mapped_walk, 25.59% lzo1x_1_do_compress\", multi-gen \"49.36% lzo1x_1_do_compress, 4.54% page_vma_mapped_walk\"";
/// Where the fleet figures are (an index, classic = 100).
const FLEET: &str = "seed 002: Android \"18% fewer low-memory kills ... cold starts by 16%\"; Chrome OS \"96% fewer low-memory tab discards and 59% fewer OOM kills\" (an index, classic = 100)";
/// Where the sparse shared-memory profiles are (kswapd0 + kswapd1; the test process, "sparse").
const SHARED_PROFILES: &str = "seed 002, Yu's reply on shared memory: kswapd page_vma_mapped_walk 43.99% + 34.86% (5.12.0-rc6) vs 9.36% + 7.15% (multigenerational); test process 65.02% vs 33.12%";
/// A row of ours only.
const OURS: &str = "no seed figure";

fn metric(name: &str, seed: [Option<f64>; 2], ours: Vec<f64>) -> Metric {
    let source = match (name, seed) {
        (_, [None, None]) => OURS,
        ("direct reclaim CPU %", _) => SHARED,
        ("pgscan/pgsteal", _) => "seed 002: pgscan/pgsteal of about 7 on the classic LRU (server fleet)",
        (n, _) if n.starts_with("kswapd profile") => PROFILES,
        (n, _) if n.contains("fleet") => FLEET,
        _ => TABS,
    };
    Metric::new(name, seed.to_vec(), ours, source)
}

/// SOURCE: Chrome OS's zram "achieve[s] a compression ratio of almost 3:1" (Luigi
/// Semenzato, "zram is deployed!", linux-mm, 2013,
/// http://mail.spinics.net/lists/linux-mm/msg57717.html).
const CHROME_OS_ZRAM_RATIO: &str = "zram.comp_ratio=3";

/// The tabs' whole footprint, as a multiple of RAM: the same message sizes
/// Chrome OS's zram device at 1.5x RAM, which at 3:1 "when full, uses up about
/// 2GB of RAM, and leaves the other 2GB for the working set of tabs" on a 4 GB
/// system: 1.5x swapped plus 0.5x resident, 2.0x in all, past which the browser
/// discards tabs (not modelled, S-RP4). The seed's fleet figures come from
/// "fully-utilized devices", so the browser is sized at that point.
const FOOTPRINT: f64 = 2.0;
/// The shared executable, the `tabs` workload's default (chosen when the workload was written).
const EXE: f64 = 0.12;
/// Per mille of a visit's accesses that run code: the `tabs` workload's choice when it
/// was written (before any seed-002 result); no measured share was found. 300 is the
/// value once fitted to the refault row, kept as a sensitivity row.
const EXEC: u32 = 100;
const EXEC_FITTED: u32 = 300;

/// Each tab's heap, as a multiple of RAM: the [`FOOTPRINT`] less the executable, over the tabs.
fn heap(tabs: u32) -> f64 {
    (FOOTPRINT - EXE) / tabs as f64
}

fn tabs(args: &Ctx) -> Result<Table> {
    let (mem, shape, ntabs) = if args.quick {
        ("memory=48M", "visits=150,ops=2000,think_us=1000,churn=15", 16)
    } else {
        ("memory=256M", "visits=1500", 24)
    };
    let w = format!("tabs:tabs={ntabs},{shape},heap={:.4}x,exe={EXE}x,exec={EXEC}", heap(ntabs));
    let settings = [mem, "swap=zram:1G", CHROME_OS_ZRAM_RATIO];
    let v = variants(std::slice::from_ref(&w), &settings);
    let r = args.run_variants(&v, args.rng_seed)?;
    // Sensitivity: the same browser with code at 30% of the accesses, the value
    // once fitted to the refault row: the refault row hinges on this share.
    let fitted_exec = w.replace(&format!("exec={EXEC}"), &format!("exec={EXEC_FITTED}"));
    let r_fit = args.run_variants(&variants(&[fitted_exec], &settings), args.rng_seed)?;
    Ok(Table {
        title: format!("tabs (browser, {w}), {mem}, zram swap: MGLRU vs classic"),
        variants: v.iter().map(|v| v.label.clone()).collect(),
        metrics: vec![
            metric("kswapd CPU s", [Some(100.0), Some(49.0)], per(&r, kswapd_s)),
            metric("refaults (pgmajfault)", [Some(100.0), Some(93.0)], counter(&r, "pgmajfault")),
            metric("  of which anon (pswpin)", [None, None], counter(&r, "pswpin")),
            metric("  of which file", [None, None], counter(&r, "workingset_refault_file")),
            metric("refaults, code 30%", [None, None], counter(&r_fit, "pgmajfault")),
            metric("direct reclaim p99 us", [Some(100.0), Some(78.0)], per(&r, |r| r.direct_reclaim_latency(99.0) as f64 / 1e3)),
            metric("PSI full total ms", [Some(100.0), Some(48.0)], per(&r, |r| r.psi.full.total_ns as f64 / 1e6)),
            metric("PSI some total ms", [None, None], per(&r, |r| r.psi.some.total_ns as f64 / 1e6)),
            metric("pgscan/pgsteal", [Some(7.0), None], per(&r, scan_ratio)),
            metric("run time s", [None, None], per(&r, |r| r.virtual_ns as f64 / 1e9)),
            metric(
                "kswapd profile: page_vma_mapped_walk %",
                [Some(31.03), Some(4.54)],
                per(&r, |r| kswapd_share(r, |r| r.kswapd_work.rmap_ptes, rmap_pte_ns())),
            ),
            metric(
                "kswapd profile: lzo1x_1_do_compress %",
                [Some(25.59), Some(49.36)],
                per(&r, |r| kswapd_share(r, |r| r.kswapd_work.pages_written, COMPRESS_NS)),
            ),
            metric("OOM kills (Chrome OS fleet)", [Some(100.0), Some(41.0)], counter(&r, "oom_kill")),
            Metric::not_modelled("low-memory tab discards (Chrome OS fleet)", vec![Some(100.0), Some(4.0)], FLEET, "S-RP4"),
            Metric::not_modelled("low-memory kills (Android fleet)", vec![Some(100.0), Some(82.0)], FLEET, "S-RP4"),
            Metric::not_modelled("cold starts (Android fleet)", vec![Some(100.0), Some(84.0)], FLEET, "S-RP4"),
        ],
        notes: vec![
            format!("kswapd profile rows: our rmap PTE checks x cpu.rmap_pte_ns ({} ns, the engine's default) and pages written x zram's 3000 ns, as shares of kswapd CPU", rmap_pte_ns()),
            "seed columns for the first four rows are an index (classic = 100) built from the seed's relative claims".into(),
            "pgscan/pgsteal 7 is the seed's server fleet average, not a Chrome OS figure".into(),
            "kswapd CPU includes zram compression (cpu.pageout_ns + zram write CPU per page), equal for both designs".into(),
            "kswapd CPU: the CPU costs are the engine's defaults, as for every seed (docs/model.md), never measured on a kernel (the costs once fitted to the seed's classic profile, 120 ns per PTE and 175 per walk, are gone). Our MGLRU still checks rmap PTEs well above the seed's 4.5% (profile row): the shared executable's pages reach the oldest generation and their mappings, one per tab, are walked, and each evicted anon page is unmapped through the rmap; the interval-tree search and lock contention (7% and 4.6% of the seed's classic profile) cost 0. What the model lacks is CPU costs measured on a real kernel, which no issue adds yet (#17 compares counters, not CPU time)".into(),
            format!("heap {:.4}x per tab: the tabs fill {FOOTPRINT}x RAM with the executable, the point at which Chrome OS's published zram setup (1.5x RAM at 3:1) is full and the browser starts discarding tabs", heap(ntabs)),
            format!("refaults: MGLRU cuts file refaults (the hot code classic evicts, as the seed describes: exec pages evicted while older anon exists) but swaps in more anon. Code is {}% of a visit's accesses, the workload's choice when it was written (no measured share was found); the split moves with it (the code-30% row). What the model lacks is a measured browser access stream; replaying recorded programs is issue #17's trace item", EXEC / 10),
            "zram.comp_ratio=3: Chrome OS reported almost 3:1 for its zram (linux-mm, 2013)".into(),
            "direct reclaim p99: ours is only the modelled work (scan, rmap, compression, throttling); the fleet's p99 also holds waits that neither design changes (lock contention, compaction, slab shrinkers: not modelled), the likely reason our drop is larger".into(),
        ],
        judged: true,
    })
}

fn pagecache(args: &Ctx) -> Result<Table> {
    let (mem, w) = if args.quick {
        ("memory=32M", "pagecache-heavy:ops=150000,passes=1")
    } else {
        ("memory=128M", "pagecache-heavy")
    };
    let v = variants(&[w.to_string()], &[mem, "swap=zram:512M"]);
    let r = args.run_variants(&v, args.rng_seed)?;
    let refaults = |r: &RunReport| {
        (r.get("workingset_refault_file").unwrap_or(0) + r.get("workingset_refault_anon").unwrap_or(0)) as f64
    };
    Ok(Table {
        title: format!("pagecache-heavy ({w}), {mem}: reviewers' question, reported as measured"),
        variants: v.iter().map(|v| v.label.clone()).collect(),
        metrics: vec![
            metric("kswapd CPU s", [None, None], per(&r, kswapd_s)),
            metric("pgscan/pgsteal", [None, None], per(&r, scan_ratio)),
            metric("read KiB (pgpgin)", [None, None], counter(&r, "pgpgin")),
            metric("workingset refaults", [None, None], per(&r, refaults)),
            metric("PSI some total ms", [None, None], per(&r, |r| r.psi.some.total_ns as f64 / 1e6)),
            metric("run time s", [None, None], per(&r, |r| r.virtual_ns as f64 / 1e9)),
        ],
        notes: vec!["no seed figures: the review asked for this case; reported as measured, not judged".into()],
        judged: true,
    })
}

fn shared(args: &Ctx) -> Result<Table> {
    let (mem, w) = if args.quick {
        ("memory=8M", "shared-anon:procs=6,ops=20000,mempolicy=interleave")
    } else {
        ("memory=48M", "shared-anon:ops=400000,mempolicy=interleave")
    };
    let machine = [mem, "memory.scaled_from=200G", "numa.nodes=2", "swap=zram:512M", "fs=nvme"];
    let v = variants(&[w.to_string()], &machine);
    let r = args.run_variants(&v, args.rng_seed)?;
    Ok(Table {
        title: format!("shared-anon ({w}), {mem} on two nodes: many processes, sparse offsets (8 of 512 PTEs per table)"),
        variants: v.iter().map(|v| v.label.clone()).collect(),
        metrics: vec![
            metric("kswapd CPU s", [None, None], per(&r, kswapd_s)),
            metric("direct reclaim CPU %", [Some(71.0), Some(47.0)], per(&r, direct_pct)),
            metric("rmap PTEs checked", [None, None], per(&r, |r| (r.kswapd_work.rmap_ptes + r.direct_work.rmap_ptes) as f64)),
            metric("all PTEs read (rmap+walk)", [None, None], per(&r, |r| (r.kswapd_work.rmap_ptes + r.direct_work.rmap_ptes + r.kswapd_work.walk_ptes + r.direct_work.walk_ptes) as f64)),
            metric("refaults (pgmajfault)", [None, None], counter(&r, "pgmajfault")),
            Metric::new(
                "kswapd profile: page_vma_mapped_walk %",
                vec![Some(43.99 + 34.86), Some(9.36 + 7.15)],
                per(&r, |r| kswapd_share(r, |r| r.kswapd_work.rmap_ptes, rmap_pte_ns())),
                SHARED_PROFILES,
            ),
            Metric::new(
                "process profile: page_vma_mapped_walk %",
                vec![Some(65.02), Some(33.12)],
                per(&r, |r| thread_pct(r, r.direct_work.rmap_ptes as f64 * rmap_pte_ns())),
                SHARED_PROFILES,
            ),
            Metric::not_modelled("oom_kill", vec![Some(81.0), Some(80.0)], SHARED, "S-WL2"),
        ],
        notes: vec![
            "seed: 256G shmem, 450 processes, 200G RAM on 2 nodes; kswapd 'no clear winner', direct reclaim 71% vs 47% of CPU".into(),
            "two nodes of half the memory each (the seed gives 2 nodes and 200GB, no split: numa.nodes' even split), each with its own kswapd and (MGLRU) its own generations; the shmem's pages interleaved over both, as processes on both nodes' CPUs fault them in".into(),
            "profile rows: rmap PTE checks x cpu.rmap_pte_ns as shares of kswapd CPU (the seed's two kswapds summed) and of the processes' time (direct reclaim's checks)".into(),
            "process profile: our processes spend a small share of their time in direct reclaim (the row above; the seed's 71% and 47%): its 450 processes on 64 CPUs outran its two kswapds, ours each have a CPU beside the kswapds' (S-EN1, no cpus=N here), so the rmap's share of their time is small in both designs".into(),
            "oom_kill (seed 81 vs 80): shmem beyond RAM and swap kills; as a file mapping (S-WL2) it is re-read, never OOM".into(),
            "S-WL2: shmem is modelled as a shared file mapping (file LRU, re-read from fs=nvme instead of swap)".into(),
            "MGLRU reads more PTEs (look-around: up to 64 per young mapping) but at cpu.walk_pte_ns each, not cpu.rmap_pte_ns".into(),
        ],
        judged: true,
    })
}

/// `reclaimsim reproduce seed-002`.
pub fn run(args: &Ctx) -> Result<Reproduction> {
    Ok(Reproduction::new("seed-002", vec![tabs(args)?, pagecache(args)?, shared(args)?]))
}

/// The parameters of seed 002's tables.
pub fn params() -> Vec<Param> {
    let cpu = engine::CpuCosts::default();
    vec![
        Param::new("tabs", "memory", "256M (quick 48M)", Origin::Choice("the seed gives Chrome OS fleet figures, no machine size")),
        Param::new("tabs", "swap", "zram:1G", Origin::Seed("Chrome OS ... zram")),
        Param::new("tabs", "zram.comp_ratio", 3, Origin::Published("Chrome OS's zram \"achieve[s] a compression ratio of almost 3:1\" (linux-mm, 2013, msg57717)")),
        Param::new("tabs", "tabs:tabs", "24 (quick 16)", Origin::Choice("the workload's default when it was written; the seed says \"multiple tabs\"")),
        Param::new("tabs", "tabs:exe", format!("{EXE}x"), Origin::Choice("the workload's default when it was written")),
        Param::new("tabs", "tabs:heap", format!("{:.4}x (quick {:.4}x)", heap(24), heap(16)), Origin::Published("(2.0x - exe) / tabs: Chrome OS's zram is 1.5x RAM and \"when full, uses up about 2GB of RAM, and leaves the other 2GB for the working set of tabs\" on a 4 GB system (msg57717): 1.5x swapped + 0.5x resident; the seed's figures are from \"fully-utilized devices\"")),
        Param::new("tabs", "tabs:exec", format!("{EXEC} per mille"), Origin::Choice("the workload's choice when it was written, before any seed-002 result; no measured share found (the 300 once fitted to the refault row is a sensitivity row)")),
        Param::new("all", "cpu.rmap_pte_ns", cpu.rmap_pte_ns, Origin::Choice("the engine's default, the same for every seed (docs/model.md)")),
        Param::new("all", "cpu.rmap_walk_ns", cpu.rmap_walk_ns, Origin::Choice("the engine's default, the same for every seed (docs/model.md)")),
        Param::new("pagecache", "memory", "128M (quick 32M)", Origin::Choice("the review's question has no setup")),
        Param::new("shared", "memory", "48M (quick 8M)", Origin::Scaled("\"256G shmem, 450 processes, 200G RAM\", shmem 1.28x of memory")),
        Param::new("shared", "memory.scaled_from", "200G", Origin::Seed("Total memory size: 200GB")),
        Param::new("shared", "numa.nodes", 2, Origin::Seed("The number of nodes: 2 (the memory split is not given: numa.nodes' even split, 100G a node)")),
        Param::new("shared", "shared-anon:mempolicy", "interleave", Origin::Choice("\"The number of CPUs: 64\" over 2 nodes runs the 450 processes on both nodes; their first touches spread the shmem over both, which interleave stands for (the seed gives no placement)")),
    ]
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_tabs_fill_the_published_zram_setup() {
        // 1.5x RAM swapped at 3:1 takes 0.5x RAM, leaving 0.5x resident: 2.0x in all.
        let swapped = 1.5;
        assert!((super::FOOTPRINT - (swapped + (1.0 - swapped / 3.0))).abs() < 1e-9);
        for tabs in [16, 24] {
            assert!((super::heap(tabs) * tabs as f64 + super::EXE - super::FOOTPRINT).abs() < 1e-9);
        }
    }
}
