//! Seed reproductions (`reproduce --quick`) as integration tests: the headline
//! rows must move the way the seed documents report, and those within 2x of
//! the seed's change must stay so (the size verdict). Headlines outside 2x are
//! named in docs/reproductions/claims.md with the mechanism the model lacks, not asserted.

mod common;

use common::{arg, command, read_json, scratch};
use serde_json::Value;

/// Runs `reproduce SEED --quick --json` and returns the tables.
fn reproduce(seed: &str) -> Value {
    let dir = scratch(&format!("repro-{seed}"));
    let path = dir.join("r.json");
    let out = command().args(["reproduce", seed, "--quick", "--json", arg(&path)]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("seed chg") && text.contains("ours chg"), "{text}");
    let v = read_json(&path);
    std::fs::remove_dir_all(&dir).unwrap();
    v
}

/// The row `name` of table number `table`: (our figures, direction verdict).
fn row(v: &Value, table: usize, name: &str) -> (Vec<f64>, String) {
    common::row(&v["seeds"][0]["tables"][table], name)
}

/// The size verdict of row `name` of table number `table`.
fn size(v: &Value, table: usize, name: &str) -> Option<String> {
    common::size(&v["seeds"][0]["tables"][table], name)
}

#[test]
fn seed_000_posted_series_cuts_refaults_after_warm_up() {
    let v = reproduce("seed-000");
    // Table 0, the series as posted (v4.6 -> v4.6-lrucost), counted after the warm-up:
    // the cost of thrashing cache pushes reclaim to the idle anon and refaults fall,
    // (seed: -54%; quick, a 3G scale model of the seed's 7G machine: -43%), within 2x.
    // The seed's tps (+30%) is not asserted: at the quick scale it depends on the
    // workloads' random seed more than on the series (session 16, RNG seeds 1/2/3:
    // +18.8/-1.6/+12.7% before per-CPU lists held frames, +1.7/+20.4/+4.7% after).
    let (refaults, verdict) = row(&v, 0, "total refaults");
    assert_eq!(verdict, "agrees", "{refaults:?}");
    assert!(refaults[1] < 0.9 * refaults[0], "{refaults:?}");
    assert_eq!(size(&v, 0, "total refaults").as_deref(), Some("within 2x"));
    let (anon, _) = row(&v, 0, "pgscan_anon");
    assert!(anon[1] > 1.2 * anon[0], "{anon:?}");
    // Table 1, the series as merged (v5.7 -> v5.8): swap-outs are charged to anon
    // as IO, so reclaim does not move to anon and refaults do not fall (see the issue note).
    let (merged, _) = row(&v, 1, "total refaults");
    assert!(merged[1] > 0.95 * merged[0], "{merged:?}");
    for table in [0, 1] {
        let (tps, _) = row(&v, table, "tps");
        assert!(tps.iter().all(|t| *t > 1.0), "{tps:?}");
    }
    // Table 2, parallelio at swappiness 60 with the posted series: no memcachetest
    // regression (the seed's claim), near the seed's own rate.
    for size in ["0M", "769M", "2565M", "4361M"] {
        let (ops, _) = row(&v, 2, &format!("Hmean memcachetest-{size}"));
        assert!(ops[1] >= 0.98 * ops[0], "{size}: {ops:?}");
        assert!(ops[0] > 0.5 * 84806.0, "{size}: {ops:?}");
    }
    // The store (0.69x in memcached's slabs), the idle anon and the client's leak
    // overcommit memory: without IO, reclaim swaps out about a third of it per run
    // (quick: 32768 pages), as the seed's 586k of 1.97M pages, and memcached faults some back.
    let (swaptotal, _) = row(&v, 2, "Amean swaptotal-0M");
    assert!(swaptotal.iter().all(|s| *s > 0.2 * 32768.0), "{swaptotal:?}");
    let (major, _) = row(&v, 2, "Amean majorfaults-0M");
    assert!(major.iter().all(|m| *m > 0.0), "{major:?}");
    // As a scale model of the 7690M machine (its inactive anon list an eighth of
    // anon), memcached's pages are evicted and swapped back in: the seed's 0.15x of
    // memory per run, ours about 0.1x (0.01x with the 128M machine's own ratio).
    let (swapin, _) = row(&v, 2, "Amean swapin-0M");
    assert!(swapin.iter().all(|s| *s > 0.05 * 32768.0), "{swapin:?}");
    // Headline: no regression, judged as a "no change" claim (seed +0.8%: within 2 points).
    assert_eq!(size(&v, 2, "Hmean memcachetest-4361M").as_deref(), Some("within 2x"));
    // The vmstat summary's rows the model lacks are kept, keyed by the simplification
    // (one zone here: the zone rows are S-MM1); the shrinkers' and NUMA allocation rows are counted.
    assert_eq!(row(&v, 2, "THP collapse alloc").1, "not modelled (S-KS1)");
    assert_eq!(row(&v, 2, "NUMA hint faults").1, "not modelled (S-NB1)");
    assert_eq!(row(&v, 2, "Zone dma32 velocity").1, "not modelled (S-MM1)");
    assert_eq!(row(&v, 2, "DMA32 allocs").1, "not modelled (S-MM1)");
    for name in ["Slabs scanned", "NUMA alloc hit"] {
        assert!(!row(&v, 2, name).1.starts_with("not modelled"), "{name}");
    }
}

#[test]
fn seed_004_anon_workingset_cuts_swap_ins() {
    let v = reproduce("seed-004");
    let (pswpin, verdict) = row(&v, 0, "pswpin");
    assert_eq!(verdict, "agrees", "{pswpin:?}");
    // Seed: -21%; ours within 2x of it.
    assert_eq!(size(&v, 0, "pswpin").as_deref(), Some("within 2x"), "{pswpin:?}");
    // ebizzy (mean over seeds): near-uniform popularity is level; with a hot
    // set, protection and detection both swap in less than v5.7 (seed: -3..-8%).
    let (flat, verdict) = row(&v, 1, "pswpin 1-1280-0.1");
    assert_eq!(verdict, "agrees", "{flat:?}");
    assert_eq!(size(&v, 1, "pswpin 1-1280-0.1").as_deref(), Some("within 2x"), "{flat:?}");
    assert!((flat[2] / flat[0] - 1.0).abs() < 0.02, "alpha 0.1: {flat:?}");
    for alpha in ["0.7", "1.3"] {
        let (ours, verdict) = row(&v, 1, &format!("pswpin 1-1280-{alpha}"));
        assert_eq!(verdict, "agrees", "alpha {alpha}: {ours:?}");
        assert_eq!(size(&v, 1, &format!("pswpin 1-1280-{alpha}")).as_deref(), Some("within 2x"), "{ours:?}");
        assert!(ours[1] < 0.98 * ours[0] && ours[2] < 0.98 * ours[0], "alpha {alpha}: {ours:?}");
        // Detection swaps in more than protection alone, as in the seed's
        // 1-1280 rows (+0.8%, +5.0%): refault activations demote protected pages.
        assert!(ours[2] > ours[1] && ours[2] < 1.06 * ours[1], "alpha {alpha}, detect against prot: {ours:?}");
    }
}

#[test]
fn unknown_seed_is_a_usage_error_listing_the_seeds() {
    let out = common::reclaimsim(&["reproduce", "seed-999"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown seed `seed-999`") && err.contains("seed-000"), "{err}");
}

#[test]
fn seed_001_vma_readahead_hits_more_and_runs_faster() {
    let v = reproduce("seed-001");
    for name in ["ra_hit%", "throughput KB/s", "latency.average us"] {
        let (ours, verdict) = row(&v, 0, name);
        assert_eq!(verdict, "agrees", "{name}: {ours:?}");
    }
    // ra_hit% and latency are within 2x of the seed's change; throughput is not (+44% quick
    // against +19.9%: our faults speed up more than the seed's, the table's note says so).
    for name in ["ra_hit%", "latency.average us"] {
        assert_eq!(size(&v, 0, name).as_deref(), Some("within 2x"), "{name}");
    }
    let (hit, _) = row(&v, 0, "ra_hit%");
    assert!(hit[0] < 80.0 && hit[1] > 95.0, "seed: 52.7% -> 99.98%; ours {hit:?}");
    // On an HDD the seed states an expectation without figures: not a claim.
    let (tp, verdict) = row(&v, 1, "throughput KB/s");
    assert_eq!(verdict, "no seed figure", "HDD, vma then cluster: {tp:?}");
}

#[test]
fn report_has_a_png_per_table_and_time_series_of_the_headline_runs_without_changing_results() {
    let dir = scratch("report");
    let json = dir.join("r.json");
    let out = command()
        .args(["reproduce", "seed-004", "--quick", "--report", arg(&dir), "--json", arg(&json)])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let md = std::fs::read_to_string(dir.join("reproductions.md")).unwrap();
    // Two tables (hot/cold; ebizzy, mean and std of three rows) and one experiment in the headline batch
    // (hot/cold under base and patch).
    for (name, height) in [
        ("seed-004-1.png", 96 + 70 + 2 * 46),
        ("seed-004-2.png", 96 + 70 + 6 * 46),
        // hot/cold has no file pages: the file LRU panel is left out (4 of 5 panels).
        ("seed-004-series-1.png", 96 + 4 * 270),
    ] {
        let png = std::fs::read(dir.join(name)).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{name}");
        let dim = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().unwrap());
        assert_eq!((dim(16), dim(20)), (1000, height), "{name}: IHDR width and height");
        assert!(md.contains(&format!("]({name})")), "{name} not in the page");
    }
    // Legends and titles name the kernels, not only the columns.
    assert!(md.contains("seed-004: v5.7 (base) vs v5.9 (patch) over time"), "{md}");
    assert!(md.contains("**Summary**: ") && dir.join("parameters.md").is_file(), "{md}");
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().into_string().unwrap())
        .filter(|n| n.contains("tmp"))
        .collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
    // Sampling the runs for the charts leaves every figure as it is without a report.
    let with_report: Value = read_json(&json);
    assert_eq!(with_report, reproduce("seed-004"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn json_lists_every_claim_with_both_verdicts_and_the_summaries() {
    let dir = scratch("claims");
    let (one, two) = (dir.join("j1.json"), dir.join("j2.json"));
    for (jobs, path) in [("1", &one), ("2", &two)] {
        let out =
            command().args(["reproduce", "seed-001", "--quick", "--jobs", jobs, "--json", arg(path)]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let v = read_json(&one);
    assert_eq!(v, read_json(&two), "results do not depend on --jobs");
    let claims = v["claims"].as_array().unwrap();
    let summary = &v["summary"]["seed-001"];
    assert_eq!(summary["claims"].as_u64().unwrap() as usize, claims.len());
    assert_eq!(v["summary"]["overall"], *summary);
    let ra =
        claims.iter().find(|c| c["row"] == "ra_hit%" && c["table"].as_str().unwrap().starts_with("vm-scal")).unwrap();
    assert_eq!(ra["seed_values"], serde_json::json!([52.69, 99.98]));
    for key in ["seed", "table", "row", "ours_values", "direction", "size", "source"] {
        assert!(!ra[key].is_null(), "{key} in {ra}");
    }
    let agrees = claims.iter().filter(|c| c["direction"] == "agrees").count();
    assert_eq!(summary["direction_agrees"].as_u64().unwrap() as usize, agrees);
    let within = claims.iter().filter(|c| c["size"] == "within 2x").count();
    assert_eq!(summary["within_2x"].as_u64().unwrap() as usize, within);
    assert!(summary["fitted_parameters"].as_u64().is_some());
    // The HDD table has no seed figures: none of its rows is a claim.
    assert!(claims.iter().all(|c| !c["table"].as_str().unwrap().contains("HDD")));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn params_prints_the_committed_provenance_table_and_jobs_0_is_a_usage_error() {
    let out = common::ok(&["reproduce", "params"]);
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/reproductions/parameters.md"))
        .unwrap();
    assert!(out == doc, "docs/reproductions/parameters.md is stale: regenerate it with `reclaimsim reproduce params`");
    let bad = common::reclaimsim(&["reproduce", "seed-001", "--jobs", "0"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--jobs 0"));
}
