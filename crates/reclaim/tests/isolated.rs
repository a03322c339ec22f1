//! `too_many_isolated()` (S-TH2, S-TH3): a direct reclaimer waits while other
//! direct reclaimers in flight hold more pages of a type isolated than an
//! eighth of that type's inactive list, then reclaims or skips the batch.

use mm::{Mm, Owner, ZoneId};
use reclaim::direct::{try_to_free_pages_among, Untimed};
use reclaim::pageout::PageoutEnv;
use reclaim::policy::classic::Classic;
use reclaim::policy::{Origin, ReclaimPolicy};
use reclaim::throttle::{InFlight, Isolating};
use reclaim::{DirtyConfig, DirtyThrottle, ReclaimConfig, ScanControl};

const MS: u64 = 1_000_000;

/// 1200 clean page-cache pages on the inactive file list (the limit is 150,
/// and stays above 128 while a call frees its 32 pages) and no swap, under `throttle`.
fn machine(throttle: DirtyThrottle) -> (Mm, Classic) {
    let mut mm = Mm::new(1200 + 64, 0);
    let file = mm.add_file(1200);
    let dirty = DirtyConfig { throttle, ..DirtyConfig::TODAY };
    let mut p = Classic::new(ReclaimConfig { dirty, ..ReclaimConfig::default() });
    for i in 0..1200 {
        let pfn = mm.frames.alloc(Owner::file(file), i, 0).unwrap();
        mm.insert_cache_page(file, i, pfn);
        p.add_page(&mut mm, pfn, Origin::FileRead, None);
    }
    assert_eq!(p.lru_sizes().inactive_file, 1200);
    (mm, p)
}

/// Five reclaimers holding 32 file pages each (160 > 150) from time 0, ending at `ends`.
fn others(ends: [u64; 5]) -> Vec<InFlight> {
    ends.map(|end_ns| InFlight::of([0, 7], 0, end_ns).unwrap()).to_vec()
}

/// A direct reclaim call at time 0 among `in_flight` under `throttle`.
fn reclaim(in_flight: &[InFlight], throttle: DirtyThrottle) -> ScanControl {
    let (mut mm, mut p) = machine(throttle);
    let isolating = Isolating::new(in_flight.to_vec(), 0);
    try_to_free_pages_among(&mut mm, &mut p, PageoutEnv::TODAY, (ZoneId::Normal, None), isolating, &mut Untimed)
}

#[test]
fn a_record_holds_one_batch_split_as_its_isolations() {
    assert_eq!(InFlight::of([0, 7], 3, 9), Some(InFlight { from_ns: 3, end_ns: 9, held: [0, 32] }));
    assert_eq!(InFlight::of([30, 10], 0, 1).unwrap().held, [24, 8]);
    assert_eq!(InFlight::of([0, 0], 0, 1), None);
}

/// v5.16+: ISOLATED wakes when the first reclaimer ends at 5 ms (128 held:
/// within the limit); the batch goes on and frees its pages.
#[test]
fn today_the_reclaimer_waits_until_isolation_drops_to_the_limit() {
    let sc = reclaim(&others([5 * MS, 8 * MS, 50 * MS, 60 * MS, 70 * MS]), DirtyThrottle::Throttle);
    assert_eq!(sc.slept_ns, 5 * MS);
    assert_eq!(sc.now_ns, 5 * MS);
    assert!(sc.nr_reclaimed >= 32, "{}", sc.nr_reclaimed);
    assert_eq!(sc.throttle, None);
}

/// v5.16+: isolation drops only at 25 ms, after the HZ/50 timeout: the first
/// batch is skipped at 20 ms; the next batch waits again, to 25 ms, and reclaims.
#[test]
fn today_a_wait_that_times_out_skips_the_batch() {
    let sc = reclaim(&others([25 * MS, 30 * MS, 50 * MS, 60 * MS, 70 * MS]), DirtyThrottle::Throttle);
    assert_eq!(sc.slept_ns, 25 * MS);
    assert!(sc.nr_reclaimed >= 32);
}

/// Before v5.16: one 100 ms sleep, with no early wake; by then two
/// reclaimers have ended and the batch goes on.
#[test]
fn before_v5_16_the_reclaimer_sleeps_100_ms() {
    for throttle in [DirtyThrottle::Stall, DirtyThrottle::IffCongested] {
        let sc = reclaim(&others([5 * MS, 8 * MS, 150 * MS, 160 * MS, 170 * MS]), throttle);
        assert_eq!(sc.slept_ns, 100 * MS);
        assert!(sc.nr_reclaimed >= 32);
    }
}

/// Within the limit (four reclaimers, 128 pages), anon pages held, or a
/// reclaimer that starts holding only after the call: no wait.
#[test]
fn no_wait_within_the_limit() {
    let four = &others([50 * MS; 5])[..4];
    assert_eq!(reclaim(four, DirtyThrottle::Throttle).slept_ns, 0);
    let anon: Vec<InFlight> = (0..8).map(|_| InFlight::of([1, 0], 0, 50 * MS).unwrap()).collect();
    assert_eq!(reclaim(&anon, DirtyThrottle::Throttle).slept_ns, 0);
    let mut later = others([50 * MS; 5]);
    later[4].from_ns = 40 * MS;
    assert_eq!(reclaim(&later, DirtyThrottle::Throttle).slept_ns, 0);
}

/// A sixth reclaimer, asleep until 3 ms, holds pages from then on: the
/// waiter sees 192 pages at 3 ms, 160 after the first end (4 ms) and wakes at
/// the second (9 ms), not the first.
#[test]
fn reclaimers_that_start_later_count_from_their_start() {
    let mut recs = others([4 * MS, 9 * MS, 50 * MS, 60 * MS, 70 * MS]);
    recs.push(InFlight { from_ns: 3 * MS, end_ns: 80 * MS, held: [0, 32] });
    let sc = reclaim(&recs, DirtyThrottle::Throttle);
    assert_eq!((sc.slept_ns, sc.now_ns), (9 * MS, 9 * MS));
}
