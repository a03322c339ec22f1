//! `memcg.root_stats`: from v6.12 global reclaim reads the root memory
//! cgroup's statistics as the 2 s flusher left them. The run: 60000 zipf(0.8)
//! accesses to 1.3x of an 8M machine, swapping to zram. Flushed at the start
//! (an empty machine), the statistics say the active anon list is empty, so
//! no refault is activated (the workingset is 0 pages) and the inactive anon
//! list is never low (0 < 0 is false): nothing is deactivated until a flush
//! shows the lists. The kernel's guest (6.12 and 7.2, validate global-zipf)
//! activates none either; 6.1, which flushes in every reclaim pass, does.

mod common;
use common::{read_json, reclaimsim};

/// The run's workingset_activate_anon, pgdeactivate and
/// workingset_refault_anon with `memcg.root_stats` (the profile's: `None`).
fn vmstat(think_ns: u32, root_stats: Option<&str>, dir: &std::path::Path) -> (u64, u64, u64) {
    let path = dir.join(format!("{think_ns}-{root_stats:?}.json"));
    let workload = format!("anon:size=1.3x,pattern=zipf,alpha=0.8,ops=60000,think_ns={think_ns}");
    let mut args = vec!["run", "-q", "--profile", "v6.12-classic", "--workload", &workload];
    args.extend(["--set", "memory=8M", "--set", "swap=zram:32M", "--json", common::arg(&path)]);
    let root = root_stats.map(|r| format!("memcg.root_stats={r}"));
    if let Some(r) = &root {
        args.extend(["--set", r]);
    }
    let out = reclaimsim(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v = read_json(&path);
    let get = |k: &str| v["vmstat"][k].as_u64().unwrap_or_else(|| panic!("vmstat.{k}"));
    (get("workingset_activate_anon"), get("pgdeactivate"), get("workingset_refault_anon"))
}

#[test]
fn v6_12_reclaim_reads_the_statistics_the_flusher_left() {
    let dir = common::scratch("root-stats");
    // Under 2 s of virtual time (0.02 ms of thinking per access: 1.2 s): no flush after the start.
    let (activated, deactivated, refaults) = vmstat(20_000, None, &dir);
    assert_eq!(vmstat(20_000, Some("periodic"), &dir), (activated, deactivated, refaults), "v6.12's form");
    assert!(refaults > 10_000, "the run thrashes: {refaults} refaults");
    assert_eq!((activated, deactivated), (0, 0));
    // Exact statistics show the lists as they are: refaults are activated and lists deactivated.
    let (activated, deactivated, _) = vmstat(20_000, Some("exact"), &dir);
    assert!(activated > 0 && deactivated > 0, "exact: {activated} activated, {deactivated} deactivated");
    // Past 2 s (0.04 ms a access: 2.4 s) the flush at 2 s shows the lists.
    let (activated, deactivated, _) = vmstat(40_000, None, &dir);
    assert!(activated > 0 && deactivated > 0, "after the flush: {activated} activated, {deactivated} deactivated");
}
