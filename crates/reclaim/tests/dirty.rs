//! Hand-checked scenarios for dirty file pages in reclaim: the `PG_reclaim`
//! lifecycle, when kswapd writes file pages itself under each kernel's flags,
//! and the v3.11 stall (issue #4).

use mm::{Mm, Owner, PageFlags, Pfn, VmEvent};
use reclaim::direct::Untimed;
use reclaim::pageout::PageoutEnv;
use reclaim::policy::classic::Classic;
use reclaim::policy::{Origin, ReclaimPolicy};
use reclaim::throttle::ThrottleReason;
use reclaim::{DirtyConfig, DirtyThrottle, ReclaimConfig, Reclaimer, ScanControl};

/// Inactive file pages, oldest (the tail) first; `dirty[i]` dirties page i. No swap.
fn file_pages(cfg: &ReclaimConfig, dirty: &[bool]) -> (Mm, Classic, Vec<Pfn>) {
    let mut mm = Mm::new(dirty.len() as u32 + 16, 0);
    let file = mm.add_file(dirty.len() as u32);
    let mut p = Classic::new(cfg.clone());
    let mut pfns = Vec::new();
    for (i, &d) in dirty.iter().enumerate() {
        let pfn = mm.frames.alloc(Owner::file(file), i as u32, 0).unwrap();
        mm.insert_cache_page(mm::FileId(0), i as u32, pfn);
        p.add_page(&mut mm, pfn, Origin::FileRead, None);
        if d {
            mm.set_page_dirty(pfn);
        }
        pfns.push(pfn);
    }
    (mm, p, pfns)
}

fn shrink(mm: &mut Mm, p: &mut Classic, who: Reclaimer, priority: i32, dirty: DirtyConfig) -> ScanControl {
    let mut sc = ScanControl::new(who, 32);
    sc.priority = priority;
    p.shrink_node(
        mm,
        &mut sc,
        PageoutEnv {
            sync_swap: false,
            now_ns: 0,
            fs_congested: false,
            dirty,
            shrinker: reclaim::ShrinkerConfig::TODAY,
        },
        &mut Untimed,
    );
    sc
}

#[test]
fn pg_reclaim_lifecycle_immediate_then_rotated_then_freed() {
    let cfg = ReclaimConfig::default();
    let (mut mm, mut p, pfns) = file_pages(&cfg, &[true, false, true, false]);
    // Direct reclaim meets two dirty pages: marked PG_reclaim, activated, not written.
    let sc = shrink(&mut mm, &mut p, Reclaimer::Direct, 0, cfg.dirty);
    assert_eq!(sc.nr_reclaimed, 2);
    assert!(sc.pageout.is_empty());
    assert_eq!(mm.stat.get(VmEvent::NrVmscanImmediateReclaim), 2);
    assert_eq!(mm.stat.get(VmEvent::NrVmscanWrite), 0);
    for &d in &[pfns[0], pfns[2]] {
        assert!(mm.frames[d].flags.has(PageFlags::RECLAIM | PageFlags::ACTIVE | PageFlags::DIRTY));
    }
    // The flusher writes page 0; at writeback end it is rotated to the inactive tail.
    mm.start_writeback(pfns[0]);
    assert_eq!((mm.dirty.nr_dirty, mm.dirty.nr_writeback), (1, 1));
    assert!(mm.end_writeback(pfns[0]));
    p.rotate_reclaimable(&mut mm, pfns[0]);
    assert_eq!(mm.stat.get(VmEvent::Pgrotated), 1);
    assert_eq!(p.list_pages(&mm, false, false), vec![pfns[0]]);
    assert!(!mm.frames[pfns[0]].flags.has(PageFlags::RECLAIM));
    // The next pass frees it at once; the still-dirty page 2 stays active
    // (inactive file is not low: nothing is deactivated).
    let sc = shrink(&mut mm, &mut p, Reclaimer::Direct, 0, cfg.dirty);
    assert_eq!(sc.nr_reclaimed, 1);
    assert!(mm.frames.is_free(pfns[0]));
    assert_eq!(p.list_pages(&mm, false, true), vec![pfns[2]]);
    assert_eq!(mm.stat.get(VmEvent::PgstealDirect), 3);
}

#[test]
fn v39_kswapd_writes_dirty_pages_below_priority_10_and_keeps_them_inactive() {
    let dirty = DirtyConfig {
        kswapd_write_at_priority: true,
        kswapd_flat_priority: false,
        dirty_activate: false,
        throttle: DirtyThrottle::IffCongested,
    };
    let cfg = ReclaimConfig { dirty, ..ReclaimConfig::default() };
    // Priority 10 (1024 >> 10 = 1 page): no writes from kswapd, immediate
    // reclaim, the page kept on the inactive list.
    let (mut mm, mut p, pfns) = file_pages(&cfg, &vec![true; 1024]);
    let sc = shrink(&mut mm, &mut p, Reclaimer::Kswapd, 10, dirty);
    assert_eq!((sc.nr_scanned, sc.nr_reclaimed), (1, 0));
    assert_eq!(mm.stat.get(VmEvent::NrVmscanImmediateReclaim), 1);
    assert!(!mm.frames[pfns[0]].flags.has(PageFlags::ACTIVE));
    assert_eq!(p.list_pages(&mm, false, false)[0], pfns[0]);
    // Priority 9 (2 pages): kswapd writes them itself.
    let sc = shrink(&mut mm, &mut p, Reclaimer::Kswapd, 9, dirty);
    assert_eq!(sc.nr_scanned, 2);
    assert_eq!(sc.pageout.len(), 2);
    assert_eq!(mm.stat.get(VmEvent::NrVmscanWrite), 2);
    assert_eq!((mm.dirty.nr_dirty, mm.dirty.nr_writeback), (1022, 2));
    assert!(mm.frames[sc.pageout[0]].flags.has(PageFlags::WRITEBACK | PageFlags::RECLAIM));
}

#[test]
fn v311_kswapd_stalls_on_an_all_dirty_batch_then_writes() {
    let dirty = DirtyConfig {
        kswapd_write_at_priority: false,
        kswapd_flat_priority: true,
        dirty_activate: false,
        throttle: DirtyThrottle::Stall,
    };
    let cfg = ReclaimConfig { dirty, ..ReclaimConfig::default() };
    let (mut mm, mut p, _) = file_pages(&cfg, &[true; 64]);
    // Priority 0 scans 32 pages in a batch: all unqueued dirty.
    let sc = shrink(&mut mm, &mut p, Reclaimer::Kswapd, 0, dirty);
    assert_eq!(sc.throttle.map(|t| t.reason), Some(ThrottleReason::CongestionWait));
    assert_eq!((sc.nr_scanned, sc.nr_reclaimed), (32, 0));
    assert!(mm.dirty.pgdat_dirty);
    assert_eq!(mm.stat.get(VmEvent::NrVmscanImmediateReclaim), 32);
    // With the node flagged dirty kswapd writes the next batch itself (and stalls again).
    let sc = shrink(&mut mm, &mut p, Reclaimer::Kswapd, 0, dirty);
    assert_eq!(sc.pageout.len(), 32);
    assert_eq!(mm.stat.get(VmEvent::NrVmscanWrite), 32);
    // Direct reclaim never writes file pages.
    let sc = shrink(&mut mm, &mut p, Reclaimer::Direct, 0, dirty);
    assert!(sc.pageout.is_empty());
}
