//! `reclaimsim reproduce seed-002 --quick`: MGLRU against the classic LRU on the
//! tabs workload, with sourced parameters: the headline verdicts it gives, and
//! the review cases reported.

mod common;

use common::{pair, table};

#[test]
fn quick_reproduction_agrees_with_the_seed_on_tabs() {
    let dir = common::scratch("seed002");
    let path = dir.join("s2.json");
    let out = common::reclaimsim(&["reproduce", "seed-002", "--quick", "--json", common::arg(&path)]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("seed-002: tabs"), "{text}");
    let v = common::read_json(&path);
    let tabs = table(&v, "tabs");
    // Headlines with the sourced parameters (docs/reproductions/parameters.md): PSI full
    // (-52%) falls within 2x of the seed's change, and so does direct reclaim p99 (-22%;
    // ours -21%) since the v5.0+ watermark boost (session 13; before, -53%: v6.1's
    // swap-cache tree nodes, never trimmed, raised the classic LRU's p99 more).
    for (name, size) in [("direct reclaim p99 us", "within 2x"), ("PSI full total ms", "within 2x")] {
        let (classic, mglru) = pair(tabs, name);
        assert!(classic > 0.0 && mglru < classic * 0.95, "{name}: mglru {mglru} vs classic {classic}");
        assert_eq!(common::row(tabs, name).1, "agrees", "{name}");
        assert_eq!(common::size(tabs, name).as_deref(), Some(size), "{name}");
    }
    // kswapd CPU (-51%) falls, by less than half the seed's change: the engine's default
    // CPU costs price the rmap's interval-tree walk at 0 (docs/reproductions/claims.md).
    let (classic, mglru) = pair(tabs, "kswapd CPU s");
    assert!(mglru < classic * 0.95, "kswapd CPU: mglru {mglru} vs classic {classic}");
    assert_eq!(common::row(tabs, "kswapd CPU s").1, "agrees");
    // Refaults (-7%) are a miss with code at 10% of the accesses; the row hinges on that
    // share, which no source gives (claims.md): not asserted.
    assert!(text.contains("headline kswapd CPU s (tabs): seed -51.0%"), "{text}");
    // The classic LRU scans more pages per page reclaimed.
    let (classic, mglru) = pair(tabs, "pgscan/pgsteal");
    assert!(classic > mglru && mglru >= 1.0, "pgscan/pgsteal {classic} vs {mglru}");
    // Sparse sharing: MGLRU checks fewer PTEs through the rmap, and reads more in
    // batches (page-table walk and look-around).
    let shared = table(&v, "shared-anon");
    let (c_rmap, m_rmap) = pair(shared, "rmap PTEs checked");
    assert!(m_rmap < c_rmap, "rmap PTEs {m_rmap} vs {c_rmap}");
    // The reply's kswapd profile: MGLRU spends a smaller share in page_vma_mapped_walk.
    assert_eq!(common::row(shared, "kswapd profile: page_vma_mapped_walk %").1, "agrees");
    assert_eq!(common::row(shared, "oom_kill").1, "not modelled (S-WL2)");
    let (c_all, m_all) = pair(shared, "all PTEs read (rmap+walk)");
    assert_eq!(c_all, c_rmap, "the classic LRU reads PTEs only through the rmap");
    assert!(m_all > m_rmap);
    // The page-cache case ran under pressure in both designs.
    let pc = table(&v, "pagecache-heavy");
    let (c_ws, m_ws) = pair(pc, "workingset refaults");
    assert!(c_ws > 0.0 && m_ws > 0.0);
    std::fs::remove_dir_all(&dir).unwrap();
}
