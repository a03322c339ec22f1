//! Seed 000: anon/file balancing on refault IO cost (v5.7 rotation heuristics
//! against v5.8 refault cost), on the seed's pgbench setup scaled down.

use super::{counter, run_variants, throughput, Expect, Metric, ReproduceArgs, Reproduction, Table, Variant};
use anyhow::Result;

/// The pgbench table: file on an HDD, swap on an SSD, swappiness 115.
pub fn run(args: &ReproduceArgs) -> Result<Reproduction> {
    let (memory, ops) = if args.quick { ("256M", "500000") } else { ("1G", "2000000") };
    let variant = |label: &str, profile: &str| Variant {
        label: label.into(),
        profile: profile.into(),
        settings: vec![format!("memory={memory}"), "swap=ssd:2G".into(), "fs=hdd".into(), "vm.swappiness=115".into()],
        workloads: vec![format!("pgbench:ops={ops}")],
    };
    let variants = [variant("vanilla", "v5.7"), variant("lrucost", "v5.8")];
    let reports = run_variants(&variants, args.rng_seed)?;
    let refaults: Vec<f64> =
        counter(&reports, "workingset_refault_file").iter().zip(counter(&reports, "workingset_refault_anon")).map(|(f, a)| f + a).collect();
    let metric = |name: &str, seed: [f64; 2], ours: Vec<f64>, expect| Metric { name: name.into(), seed: seed.map(Some).to_vec(), ours, expect };
    let metrics = vec![
        metric("tps (accesses/s)", [80.65, 104.99], throughput(&reports), Expect::Higher),
        metric("pgscan_anon", [6579.0, 201845.0], counter(&reports, "pgscan_anon"), Expect::Higher),
        metric("pgscan_file", [364444.0, 27706.0], counter(&reports, "pgscan_file"), Expect::Lower),
        metric("pswpout", [3149.0, 86932.0], counter(&reports, "pswpout"), Expect::Higher),
        metric("pswpin", [313.0, 503.0], counter(&reports, "pswpin"), Expect::Higher),
        metric("workingset_refault_file", [222486.0, 101041.0], counter(&reports, "workingset_refault_file"), Expect::Lower),
        metric("total refaults", [222799.0, 101544.0], refaults, Expect::Lower),
    ];
    Ok(Reproduction {
        name: "seed-000",
        tables: vec![Table {
            title: format!("pgbench, file on hdd, swap on ssd, swappiness 115 ({memory} memory; seed: 7G, database 5.6G)"),
            variants: variants.iter().map(|v| v.label.clone()).collect(),
            metrics,
            notes: vec![
                "vanilla = profile v5.7 (the kernel the series was merged on), lrucost = v5.8".into(),
                "the machine keeps the seed's proportions: database 0.8x memory, shared buffers 0.143x, idle anon 0.15x".into(),
                "both kernels end up swapping the idle anon here; in the seed the vanilla kernel did not (see issue #2's note)".into(),
                "the seed counts one hour after a 30-minute warm-up; ours count the whole run, warm-up included".into(),
                "tps is page accesses per second of the clients (each access to a shared buffer or a database page)".into(),
                "the parallelio table of the seed needs the memcachetest/parallelio workloads (seed 003)".into(),
            ],
        }],
    })
}
