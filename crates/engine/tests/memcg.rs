//! Memory-cgroup limit reclaim on a tiny hand-checked case: a 64-page limit,
//! 65 anonymous pages written once, zram swap, a 1G machine (no global reclaim).
//!
//! Hand check. Page 0 charges a batch of 64 (stock 63); pages 1..63 come from
//! the stock. Page 64 finds the counter at the limit: the batch and the single
//! page fail (failcnt 2) and limit reclaim runs with nr_to_reclaim 32. The 64
//! pages sit on the inactive anon list with young PTEs, nothing on file lists.
//! SCAN_FRACT at swappiness 60 with the v6.2 costs: each pass adds its
//! unreclaimed scans to anon_cost, which shifts the next pass's fraction:
//!   p=12..5: (64 >> p) * fraction rounds to 0;
//!   p=4: costs 0/0 -> ap 60, fp 140, 4 * 60/200 = 1 page (anon_cost 1);
//!   p=3: costs 2/1 (each plus the total) -> ap 80, fp 280, 8 * 80/360 = 1 (anon_cost 2);
//!   p=2: 4/2 -> ap 84, fp 326, 16 * 84/410 = 3 (anon_cost 5);
//!   p=1: 10/5 -> ap 87, fp 373, 32 * 87/460 = 6 (anon_cost 11).
//! These 11 pages are referenced on this first look: kept with PG_referenced,
//! accessed bit cleared. p=0 is SCAN_EQUAL over all 64: the 53 pages seen for the
//! first time are kept, the 11 seen before are no longer young and are swapped
//! out. pgscan_anon 11 + 64 = 75, pgsteal_anon = pswpout = 11. The retry charges
//! page 64 alone (the batch fails again: failcnt 3). 54 pages remain charged.

use engine::{Sim, SimError};

/// The machine with an 80-page anon region whose pages `0..n` have been
/// written in order; the error of the first write that failed, if any.
fn written(swappiness: &str, n: u32) -> (Sim, Result<(), SimError>) {
    let mut b = testkit::builder(
        "v6.2",
        &[("memory", "1G"), ("swap", "zram:64M"), ("memcg.limit", "256K"), ("memcg.swappiness", swappiness)],
    );
    let region = b.add_anon_region(80);
    let mut sim = b.build();
    let r = testkit::write_pages(&mut sim, region, 0..n);
    (sim, r)
}

#[test]
fn limit_reclaim_counts_exactly() {
    let (sim, r) = written("60", 65);
    r.unwrap();
    let rep = sim.run(&mut |_| {}).unwrap();
    let vm = |n: &str| rep.get(n).unwrap();
    let mc = |n: &str| rep.memcg.iter().find(|(k, _)| *k == n).unwrap().1;
    assert_eq!((vm("pgscan_anon"), vm("pgsteal_anon"), vm("pswpout")), (75, 11, 11));
    // Limit reclaim is neither kswapd nor direct reclaim.
    for n in ["pgscan_kswapd", "pgscan_direct", "pgsteal_kswapd", "pgsteal_direct", "pgrefill", "allocstall_normal"] {
        assert_eq!(vm(n), 0, "{n}");
    }
    assert_eq!((mc("pgpgin"), mc("pgpgout"), mc("failcnt")), (65, 11, 3));
    assert_eq!((mc("usage_in_bytes"), mc("rss"), mc("swap")), (54 * 4096, 54 * 4096, 11 * 4096));
    assert_eq!((mc("inactive_anon"), mc("active_anon")), (54 * 4096, 0));
}

#[test]
fn swappiness_zero_never_swaps_and_ooms() {
    // Pages 0..63 fit; page 64 finds only anon pages, which group swappiness 0 never swaps.
    let (sim, r) = written("0", 65);
    let e = r.unwrap_err();
    assert!(matches!(e, SimError::MemcgOutOfMemory { .. }), "{e}");
    assert_eq!(sim.mm().stat.get(mm::VmEvent::Pgfault), 64);
    assert_eq!(sim.mm().stat.get(mm::VmEvent::PgscanAnon), 0);
    assert_eq!(sim.mm().stat.get(mm::VmEvent::Pswpout), 0);
}
