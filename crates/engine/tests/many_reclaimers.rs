//! Many direct reclaimers at once (S-TH2): the engine records each direct
//! reclaim call in flight, and a call that begins while the others hold more
//! pages isolated than an eighth of the inactive list waits
//! (`too_many_isolated()`). Anon pages on zram: no writeback, so no other
//! reclaim throttle can fire and all throttled time is these waits.

use engine::{Access, RunReport};
use testkit::Script;

/// `threads` threads on a 4M machine (1024 pages) under `profile`, each
/// writing its own anon region (together 1.5x memory) twice.
fn run(profile: &str, threads: u32) -> RunReport {
    let mut b = testkit::builder(profile, &[("memory", "4M"), ("swap", "zram:16M")]);
    let span = 1536 / threads;
    for t in 0..threads {
        let region = b.add_anon_region(span);
        let accesses = (0..2 * span).map(|i| Access::Mem { region, page: i % span, write: true }).collect();
        b.add_thread(format!("t{t}"), Box::new(Script::new(accesses)));
    }
    b.build().paranoid().run(&mut |_| {}).unwrap()
}

#[test]
fn one_reclaimer_never_waits_for_isolation() {
    let r = run("v6.2", 1);
    assert!(r.get("allocstall_normal").unwrap() > 0);
    assert_eq!(r.reclaim_throttled_ns, 0);
}

/// 64 threads: the inactive anon list (a few hundred pages) allows only a few
/// concurrent 32-page batches; the others wait, each wait at most HZ/50
/// (v6.2) or exactly 100 ms (v5.10's `msleep(100)`), and every thread finishes.
#[test]
fn many_reclaimers_wait_for_isolation_by_version() {
    for (profile, most_ns) in [("v6.2", 20_000_000), ("v5.10", 100_000_000)] {
        let r = run(profile, 64);
        let stalls = r.get("allocstall_normal").unwrap();
        assert!(r.reclaim_throttled_ns > 0, "{profile}: nobody waited");
        assert!(r.reclaim_throttled_ns <= stalls * 64 * most_ns, "{profile}");
        assert_eq!(r.threads.len(), 64);
        assert!(r.threads.iter().all(|t| t.ops == 2 * 24), "{profile}: every thread finishes");
    }
}
