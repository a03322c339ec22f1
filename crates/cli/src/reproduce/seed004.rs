//! Seed 004: anon workingset protection (`prot`) and detection (`detect`)
//! against the v5.7 base, on the seed's hot/cold scenario and ebizzy.

use super::{counter, run_variants, Expect, Metric, ReproduceArgs, Reproduction, Table, Variant};
use anyhow::Result;

const PROFILES: [(&str, &str); 3] = [("base", "v5.7"), ("prot", "v5.9-prot"), ("detect", "v5.9")];

fn hot_cold(args: &ReproduceArgs) -> Result<Table> {
    let memory = if args.quick { "64M" } else { "128M" };
    let variants: Vec<Variant> = [("base", "v5.7"), ("patch", "v5.9")]
        .iter()
        .map(|(label, profile)| Variant {
            label: label.to_string(),
            profile: profile.to_string(),
            settings: vec![format!("memory={memory}"), "swap=pmem:1G".into()],
            workloads: vec!["hotcold".into()],
        })
        .collect();
    let reports = run_variants(&variants, args.rng_seed)?;
    Ok(Table {
        title: format!("hot/cold scenario ({memory} memory; seed: ~280M usable, 512M cold, 96M hot-1 and hot-2)"),
        variants: variants.iter().map(|v| v.label.clone()).collect(),
        metrics: vec![
            Metric { name: "pswpin".into(), seed: vec![Some(863240.0), Some(681565.0)], ours: counter(&reports, "pswpin"), expect: Expect::Lower },
            Metric { name: "pswpout".into(), seed: vec![Some(989945.0), Some(809273.0)], ours: counter(&reports, "pswpout"), expect: Expect::Lower },
        ],
        notes: vec![
            "region sizes keep the seed's ratios to usable memory (`reclaimsim workloads`)".into(),
            "swap is pmem: the seed's RAM-backed swap is outside the ~280M the test can use, so it must not take usable memory as zram's pool would".into(),
        ],
    })
}

fn ebizzy(args: &ReproduceArgs) -> Result<Table> {
    let (memory, ops) = if args.quick { ("128M", "2000000") } else { ("256M", "5000000") };
    // The seed's single-thread rows at 1280M allocated on a 1024M machine.
    let seed_rows: [(&str, [f64; 3], Expect); 3] = [
        ("0.1", [22895541.4, 22860305.4, 22705565.2], Expect::Same(0.05)),
        ("0.7", [13717645.6, 12935355.8, 13040232.0], Expect::Lower),
        ("1.3", [1654251.4, 1522680.6, 1599207.0], Expect::Lower),
    ];
    let mut variants = Vec::new();
    for (alpha, _, _) in &seed_rows {
        for (label, profile) in PROFILES {
            variants.push(Variant {
                label: label.into(),
                profile: profile.into(),
                settings: vec![format!("memory={memory}"), "swap=pmem:2G".into()],
                workloads: vec![format!("ebizzy:size=1.25x,alpha={alpha},ops={ops}")],
            });
        }
    }
    let pswpin = counter(&run_variants(&variants, args.rng_seed)?, "pswpin");
    let metrics = seed_rows
        .iter()
        .zip(pswpin.chunks(PROFILES.len()))
        .map(|((alpha, seed, expect), ours)| Metric {
            name: format!("pswpin alpha={alpha}"),
            seed: seed.map(Some).to_vec(),
            ours: ours.to_vec(),
            expect: *expect,
        })
        .collect();
    Ok(Table {
        title: format!("ebizzy, zipf popularity, one thread, 1.25x memory allocated ({memory}; seed: 1024M, 1280M allocated)"),
        variants: PROFILES.iter().map(|(l, _)| l.to_string()).collect(),
        metrics,
        notes: vec![
            "direction is judged from base to detect".into(),
            "swap is pmem: the seed's 5120M of RAM swap on a 1024M machine cannot live in the machine's RAM (no zram pool)".into(),
        ],
    })
}

/// Both tables of the seed.
pub fn run(args: &ReproduceArgs) -> Result<Reproduction> {
    Ok(Reproduction { name: "seed-004", tables: vec![hot_cold(args)?, ebizzy(args)?] })
}
