//! Seed 003 (`reproduce seed-003` at full scale, the scale of issue #16's
//! targets; it takes about a second): three kernels (v3.9, mmotm-20130522,
//! v3.11), every per-size row and the vmstat summary, with the rows the model
//! lacks kept and keyed. With the parameters from sources (mmtests' pool and IO
//! sizes, the kernel's dirty ratios) on the seed's zones with per-zone LRU lists
//! (issue #16), v3.9 swaps and its memcachetest collapses at the largest IO
//! while v3.11 holds; the zones' scan velocities are modelled, and under v3.11
//! Normal is scanned no more than twice as fast as DMA32 (the seed: 0.85).

mod common;

#[test]
fn seed003_has_three_kernels_and_v311_stops_the_swapping() {
    let dir = common::scratch("seed003");
    let json = dir.join("r.json");
    let out = common::reclaimsim(&["reproduce", "seed-003", "--json", common::arg(&json)]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Kswapd efficiency"), "{text}");
    let v = common::read_json(&json);
    let totals = common::table(&v, "totals");
    assert_eq!(totals["variants"], serde_json::json!(["v3.9", "mmotm", "v3.11"]));
    for name in ["Swap Ins", "Swap Outs", "Major Faults"] {
        let (ours, direction) = common::row(totals, name);
        assert_eq!(direction, "agrees", "{name}: {ours:?}");
        assert_eq!(common::size(totals, name).as_deref(), Some("within 2x"), "{name}: {ours:?}");
        assert!(ours[0] > 0.0 && ours[2] < ours[0] / 2.0, "{name}: {ours:?}");
    }
    // The shrinkers' rows are counted (issue #16), whatever they show.
    for name in ["Slabs scanned", "Kswapd inode steals"] {
        assert!(!common::row(totals, name).1.starts_with("not modelled"), "{name}");
    }
    let (normal, _) = common::row(totals, "Zone normal velocity");
    let (dma32, _) = common::row(totals, "Zone dma32 velocity");
    assert!(normal[2] > 0.0 && normal[2] < 2.0 * dma32[2], "v3.11: Normal {normal:?}, DMA32 {dma32:?}");
    // v3.9 collapses at the largest IO and v3.11 holds, in some random seeds more
    // than in others (session 16, v3.11 over v3.9 at RNG seeds 1/2/3: 1.65/3.42/2.09),
    // so the median of three seeds is judged.
    let mut ratios: Vec<f64> = [("1", v.clone())]
        .into_iter()
        .chain(["2", "3"].map(|seed| (seed, reproduce_at(&dir, seed))))
        .map(|(seed, v)| {
            let (ops, _) = common::row(common::table(&v, "memcachetest-4055M"), "ops/s");
            assert!(ops[2] > ops[0], "seed {seed}: v3.11 below v3.9: {ops:?}");
            ops[2] / ops[0]
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    assert!(ratios[1] > 1.5, "v3.9 collapses, v3.11 holds: {ratios:?}");
    // Without background IO the kernels do not differ.
    let idle = common::table(&v, "memcachetest-0M");
    let (ops, _) = common::row(idle, "ops/s");
    assert_eq!(ops[0], ops[2]);
    let claims = v["claims"].as_array().unwrap();
    assert_eq!(claims.len(), 56, "24 per-size rows and 32 summary rows");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `reproduce seed-003 --seed SEED --json` into `dir`: the document.
fn reproduce_at(dir: &std::path::Path, seed: &str) -> serde_json::Value {
    let json = dir.join(format!("r{seed}.json"));
    let out = common::reclaimsim(&["reproduce", "seed-003", "--seed", seed, "--json", common::arg(&json)]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    common::read_json(&json)
}
