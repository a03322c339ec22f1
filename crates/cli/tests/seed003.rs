//! Seed 003 (`reproduce seed-003 --quick`): the effects of the v3.11 "reduce
//! system disruption" series on kswapd, swap and memcachetest must show, with
//! tolerances.

mod common;

#[test]
fn seed003_quick_v311_keeps_memcachetest_and_stops_kswapd_disruption() {
    let dir = common::scratch("seed003");
    let json = dir.join("r.json");
    let out = common::reclaimsim(&["reproduce", "seed-003", "--quick", "--json", common::arg(&json)]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("Kswapd efficiency %"), "{text}");
    let v = common::read_json(&json);
    let totals = common::table(&v, "totals");
    let row = |name: &str| common::pair(totals, name);
    let (eff39, eff311) = row("Kswapd efficiency %");
    assert!(eff311 > eff39 * 1.4, "efficiency {eff39} -> {eff311}");
    let (vel39, vel311) = row("Kswapd velocity");
    assert!(vel311 < vel39 * 0.6, "velocity {vel39} -> {vel311}");
    let (w39, w311) = row("Page writes file");
    assert!(w39 > 1000.0 && w311 < w39 / 10.0, "kswapd file writes {w39} -> {w311}");
    let (i39, i311) = row("Page reclaim immediate");
    assert!(i311 < i39 / 5.0, "immediate {i39} -> {i311}");
    let (s39, s311) = row("Swap Outs");
    assert!(s39 > 100.0 && s311 <= s39 / 100.0, "swap-outs {s39} -> {s311}");
    // Without background IO the kernels do not differ.
    let idle = &v[0]["tables"][0]["metrics"][0]["ours"];
    assert_eq!(idle[0], idle[1]);
    // With the largest IO, v3.9's memcachetest collapses and v3.11's holds.
    let ops = common::table(&v, "memcachetest ops/s");
    let v39 = ops["metrics"][0]["ours"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect::<Vec<_>>();
    let v311 = ops["metrics"][1]["ours"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect::<Vec<_>>();
    assert!(v39[1] < v39[0] * 0.7, "v3.9 ops/s {v39:?}");
    assert!(v311[1] > v311[0] * 0.95, "v3.11 ops/s {v311:?}");
    let (si39, si311) = row("Swap Ins");
    assert!(si39 > 100.0 && si311 == 0.0, "swap-ins {si39} -> {si311}");
    // Both kernels reclaim the same file pages; v3.9's reclaim (kswapd and,
    // since time passes in direct reclaim, its direct reclaimers) also makes
    // room for the pages its swap-ins allocate again (the table's note).
    let (k39, k311) = row("Kswapd pages reclaimed");
    let (d39, d311) = row("Direct pages reclaimed");
    let extra = (k39 + d39) - (k311 + d311);
    assert!((extra - si39).abs() < si39 * 0.25, "reclaimed {k39}+{d39} -> {k311}+{d311}, swap-ins {si39}");
    std::fs::remove_dir_all(&dir).unwrap();
}
