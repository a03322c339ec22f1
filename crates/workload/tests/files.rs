//! Many files: dentries and inodes in slab memory, the superblock shrinker's
//! inode steals by kernel era, and no slab at all without files.

use engine::RunReport;
use workload::WorkloadSpec;

fn run(profile: &str, workloads: &[&str]) -> RunReport {
    let mut b = testkit::builder(profile, &[("memory", "32M"), ("swap", "ssd:64M")]);
    for (i, w) in workloads.iter().enumerate() {
        workload::add_workload(&mut b, &WorkloadSpec::parse(w).unwrap(), 1, i as u64).unwrap();
    }
    b.build().run(&mut |_| {}).unwrap()
}

/// 2000 small files read once, then anon memory pushes them out.
const FILES_THEN_ANON: [&str; 2] =
    ["fileloop:size=0.6x,files=2000,passes=1", "anon:size=0.9x,pattern=seq,passes=3,start_ms=50"];

#[test]
fn kswapd_steals_inode_pages_until_v5_16() {
    let n = |r: &RunReport, k: &str| r.get(k).unwrap();
    let old = run("v5.10", &FILES_THEN_ANON);
    assert!(n(&old, "kswapd_inodesteal") > 0, "v5.10 prunes inodes with page cache");
    assert!(n(&old, "slabs_scanned") > 0);
    // (Direct reclaim steals inodes too since the v5.0+ watermark boost raised the min
    // watermark after slab fallbacks: pginodesteal is no longer 0 here, session 13.)
    let new = run("v6.2", &FILES_THEN_ANON);
    assert_eq!(n(&new, "kswapd_inodesteal") + n(&new, "pginodesteal"), 0, "v5.16+ keeps cached inodes off the LRU");
    assert!(n(&new, "slabs_scanned") > 0);
    assert!(n(&new, "nr_slab_reclaimable") > 0);
}

#[test]
fn no_files_no_slab() {
    // v6.18+ (swap tables): an anon-only run has no slab at all.
    let r = run("v7.2-classic", &["anon:size=1.5x,pattern=seq,passes=2"]);
    for k in ["nr_slab_reclaimable", "slabs_scanned", "workingset_nodes", "workingset_nodereclaim"] {
        assert_eq!(r.get(k), Some(0), "{k}");
    }
    // v6.3..v6.17: its only slab is the swap cache's tree nodes, holding shadows.
    let r = run("v6.12-classic", &["anon:size=1.5x,pattern=seq,passes=2"]);
    assert!(r.get("nr_slab_reclaimable").unwrap() > 0 && r.get("workingset_nodes").unwrap() > 0);
}
