//! Seed 000: anon/file balancing on refault IO cost (v5.7 rotation heuristics
//! against v5.8 refault cost), on the seed's pgbench setup scaled down.

use super::{counter, ops_per_sec_of, run_variants, Expect, Metric, ReproduceArgs, Reproduction, Table, Variant};
use anyhow::Result;
use engine::RunReport;

/// The parallelio check: memcachetest beside background writes of growing size
/// at swappiness 60 must not regress with refault-cost balancing.
fn parallelio(args: &ReproduceArgs) -> Result<Table> {
    // The seed's sizes (0M, 769M, 2565M, 4361M) as fractions of memory, the largest = 1x.
    const SIZES: [(&str, f64); 4] = [("0M", 0.0), ("769M", 0.176), ("2565M", 0.588), ("4361M", 1.0)];
    const SEED_OPS: [[f64; 2]; 4] = [[84805.85, 84852.31], [84273.56, 85160.52], [85792.43, 85967.59], [86212.90, 86891.87]];
    const SEED_SWAPIN: [[f64; 2]; 4] = [[291429.67, 290184.67], [294641.33, 247553.33], [224398.67, 199541.33], [188710.67, 155103.67]];
    let (memory, ops) = if args.quick { ("128M", "300000") } else { ("256M", "1000000") };
    let mut variants = Vec::new();
    for (_, frac) in SIZES {
        for (label, profile) in [("vanilla", "v5.7"), ("lrucost", "v5.8")] {
            // The seed's memcachetest alone swaps (290k swap-ins without IO): its store
            // plus the idle anon exceed memory.
            let mut workloads = vec![format!("memcachetest:size=0.9x,ops={ops}"), "anon:size=0.15x,pattern=idle".into()];
            if frac > 0.0 {
                workloads.push(format!("parallelio:size={frac}x,start_ms=100"));
            }
            let settings = vec![format!("memory={memory}"), "swap=hdd:1G".into(), "fs=hdd".into(), "vm.swappiness=60".into()];
            variants.push(Variant { label: label.into(), profile: profile.into(), settings, workloads });
        }
    }
    let reports = run_variants(&variants, args.rng_seed)?;
    let mut metrics = Vec::new();
    for (i, pair) in reports.chunks(2).enumerate() {
        let size = SIZES[i].0;
        let ops: Vec<f64> = pair.iter().map(|r| ops_per_sec_of(r, "memcachetest")).collect();
        metrics.push(Metric { name: format!("memcachetest-{size} ops/s"), seed: SEED_OPS[i].map(Some).to_vec(), ours: ops, expect: Expect::NoWorse(0.05) });
        let swapin = counter(pair, "pswpin");
        let expect = if i == 0 { Expect::Same(0.05) } else { Expect::Lower };
        metrics.push(Metric { name: format!("swapin-{size}"), seed: SEED_SWAPIN[i].map(Some).to_vec(), ours: swapin, expect });
    }
    Ok(Table {
        title: format!("parallelio: memcachetest beside background writes, swappiness 60 ({memory} memory, hdd)"),
        variants: vec!["vanilla".into(), "lrucost".into()],
        metrics,
        notes: vec![
            "the seed's claim is no regression: transactions level, swap-ins level or lower".into(),
            "sizes are the seed's as fractions of memory (4361M = 1x); the seed gives means over three runs".into(),
        ],
    })
}

/// The pgbench table and the parallelio check.
pub fn run(args: &ReproduceArgs) -> Result<Reproduction> {
    let pgbench = pgbench(args)?;
    Ok(Reproduction { name: "seed-000", tables: vec![pgbench, parallelio(args)?] })
}

/// Transactions per second of each report, summed over its threads.
fn tps(reports: &[RunReport]) -> Vec<f64> {
    reports.iter().map(|r| r.threads.iter().map(|t| t.txns_per_sec()).sum()).collect()
}

/// Mean transaction latency of each report over all its transactions, ms.
fn txn_latency_ms(reports: &[RunReport]) -> Vec<f64> {
    reports
        .iter()
        .map(|r| {
            let n: u64 = r.threads.iter().map(|t| t.txns).sum();
            r.threads.iter().map(|t| t.txn_latency_mean_ns * t.txns as f64).sum::<f64>() / n.max(1) as f64 / 1e6
        })
        .collect()
}

/// The pgbench table: file on an HDD, swap on an SSD, swappiness 115.
fn pgbench(args: &ReproduceArgs) -> Result<Table> {
    // Full: the seed's own 7G machine (the anon LRU's inactive ratio depends on absolute size).
    let (memory, swap, txns) = if args.quick { ("3G", "ssd:4G", "8000") } else { ("7G", "ssd:8G", "40000") };
    let variant = |label: &str, profile: &str| Variant {
        label: label.into(),
        profile: profile.into(),
        settings: vec![format!("memory={memory}"), format!("swap={swap}"), "fs=hdd".into(), "vm.swappiness=115".into()],
        workloads: vec![format!("pgbench:txns={txns}")],
    };
    let variants = [variant("vanilla", "v5.7"), variant("lrucost", "v5.8")];
    let reports = run_variants(&variants, args.rng_seed)?;
    let refaults: Vec<f64> =
        counter(&reports, "workingset_refault_file").iter().zip(counter(&reports, "workingset_refault_anon")).map(|(f, a)| f + a).collect();
    let metric = |name: &str, seed: [f64; 2], ours: Vec<f64>, expect| Metric { name: name.into(), seed: seed.map(Some).to_vec(), ours, expect };
    let metrics = vec![
        metric("tps", [80.65, 104.99], tps(&reports), Expect::Higher),
        metric("latency average ms", [99.187, 76.198], txn_latency_ms(&reports), Expect::Lower),
        metric("pgscan_anon", [6579.0, 201845.0], counter(&reports, "pgscan_anon"), Expect::Higher),
        metric("pgscan_file", [364444.0, 27706.0], counter(&reports, "pgscan_file"), Expect::Lower),
        metric("pswpout", [3149.0, 86932.0], counter(&reports, "pswpout"), Expect::Higher),
        metric("pswpin", [313.0, 503.0], counter(&reports, "pswpin"), Expect::Higher),
        metric("workingset_refault_file", [222486.0, 101041.0], counter(&reports, "workingset_refault_file"), Expect::Lower),
        metric("total refaults", [222799.0, 101544.0], refaults, Expect::Lower),
    ];
    Ok(Table {
        title: format!("pgbench TPC-B, 8 clients x {txns} transactions, file on hdd, swap on ssd, swappiness 115 ({memory} memory; seed: 7G, database 5.6G)"),
        variants: variants.iter().map(|v| v.label.clone()).collect(),
        metrics,
        notes: vec![
            "vanilla = profile v5.7 (the kernel the series was merged on), lrucost = v5.8".into(),
            "the machine keeps the seed's proportions: database 0.8x memory, shared buffers 0.143x, idle anon 0.15x, WAL 0.143x".into(),
            "transactions: accounts index descent (root, internal, leaf), account heap update, teller and branch updates, history append, 8.6K of WAL".into(),
            "the clients first write the database (pgbench -i), so the run starts with it in the page cache".into(),
            "the seed counts one hour after a 30-minute warm-up; our counters include the load and warm-up; tps and latency count transactions only".into(),
        ],
    })
}
