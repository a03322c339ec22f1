//! Hand-checked scenarios for dirty file pages in reclaim: the `PG_reclaim`
//! lifecycle, when kswapd writes file pages itself under each kernel's flags,
//! the v3.11 stall (issue #4), and how reclaim counts ext3's pages with and
//! without the filesystem's `is_dirty_writeback` (issue #18).

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
        is_dirty_writeback: false,
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

/// v3.11's dirty-page handling: kswapd at a flat priority stalls rather than
/// activating, with or without the filesystem's `is_dirty_writeback`.
fn v311_dirty(is_dirty_writeback: bool) -> DirtyConfig {
    DirtyConfig {
        kswapd_write_at_priority: false,
        kswapd_flat_priority: true,
        dirty_activate: false,
        throttle: DirtyThrottle::Stall,
        is_dirty_writeback,
    }
}

#[test]
fn v311_kswapd_stalls_on_an_all_dirty_batch_then_writes() {
    let dirty = v311_dirty(true);
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

/// Four inactive file pages at the tail, in the states one flusher pass leaves
/// them on each filesystem. ext4: page 0 dirty, pages 1 and 2 under writeback
/// (1 already `PG_reclaim`), page 3 clean. ext3 (data=ordered): the same
/// writes went out as the journal's buffer writes, so page 0 is dirty, pages 1
/// and 2 are `PG_dirty` with locked buffers and no `PG_writeback` (1 already
/// `PG_reclaim`), and page 3, whose buffer write has ended, is `PG_dirty`
/// with clean buffers.
fn flushed_tail(ext3: bool, cfg: &ReclaimConfig) -> (Mm, Classic, Vec<Pfn>) {
    let (mut mm, p, pfns) = file_pages(cfg, &[true; 4]);
    for &pfn in &pfns[1..] {
        if ext3 {
            mm.start_buffer_write(pfn);
        } else {
            mm.start_writeback(pfn);
        }
    }
    mm.frames[pfns[1]].flags.set(PageFlags::RECLAIM);
    if ext3 {
        assert!(mm.end_buffer_write(pfns[3]), "still PG_dirty: its writepage is to come");
    } else {
        assert!(!mm.end_writeback(pfns[3]));
    }
    (mm, p, pfns)
}

/// v3.11 kswapd over [`flushed_tail`], the node flagged WRITEBACK, not DIRTY:
/// (nr_dirty, nr_unqueued_dirty, nr_congested, nr_writeback, nr_immediate),
/// pages freed, and `nr_vmscan_immediate_reclaim`.
fn kswapd_counts(ext3: bool, is_dirty_writeback: bool) -> ([u64; 5], u64, u64) {
    let dirty = v311_dirty(is_dirty_writeback);
    let cfg = ReclaimConfig { dirty, ..ReclaimConfig::default() };
    let (mut mm, mut p, _) = flushed_tail(ext3, &cfg);
    mm.dirty.pgdat_writeback = true;
    let sc = shrink(&mut mm, &mut p, Reclaimer::Kswapd, 0, dirty);
    assert_eq!((sc.nr_scanned, sc.nr.taken), (4, 4));
    let n = sc.nr;
    (
        [n.dirty, n.unqueued_dirty, n.congested, n.writeback, n.immediate],
        sc.nr_reclaimed,
        mm.stat.get(VmEvent::NrVmscanImmediateReclaim),
    )
}

/// Issue #18 (seed 003's filesystem half), by hand. ext4: pages 0..2 are dirty
/// or under writeback (3), page 0 unqueued (1), page 1 under writeback and
/// `PG_reclaim` is congested (1) and, the node flagged WRITEBACK, immediate
/// (1); page 2 is newly marked (writeback 1); page 3 is freed; page 0 is
/// marked for immediate reclaim. ext3 with v3.11's hook: page 0 dirty and
/// unqueued; pages 1 and 2 count as writeback through their locked buffers
/// (dirty 3, page 1 congested), but without `PG_writeback` neither reaches the
/// writeback case (writeback 0, immediate 0): they are dirty pages kswapd may
/// not write, as is page 3, whose clean buffers make it neither dirty nor
/// writeback: 4 immediate-reclaim marks, nothing freed. ext3 by the page flags
/// alone (v3.9, mmotm): all four are unqueued dirty, the batch looks like a
/// tail the flushers are not cleaning, and nothing is congested.
#[test]
fn r18_ext3_pages_counted_through_their_buffers() {
    assert_eq!(kswapd_counts(false, true), ([3, 1, 1, 1, 1], 1, 1));
    assert_eq!(kswapd_counts(false, false), ([3, 1, 1, 1, 1], 1, 1), "ext4: the hook changes nothing");
    assert_eq!(kswapd_counts(true, true), ([3, 1, 1, 0, 0], 0, 4));
    assert_eq!(kswapd_counts(true, false), ([4, 4, 0, 0, 0], 0, 4));
}

/// Once the node is flagged DIRTY, v3.11 kswapd "writes" ext3's tail: page 0
/// (dirty buffers) is written with `PG_writeback`; pages 1 and 2, whose
/// buffers are locked, are counted as written but cannot be released and are
/// activated; page 3's writepage finds clean buffers, writes nothing, and the
/// page is freed at once. Four reclaim writes, one device write.
#[test]
fn r18_kswapd_pageout_of_ext3_pages_with_clean_or_locked_buffers() {
    let dirty = v311_dirty(true);
    let cfg = ReclaimConfig { dirty, ..ReclaimConfig::default() };
    let (mut mm, mut p, pfns) = flushed_tail(true, &cfg);
    mm.dirty.pgdat_dirty = true;
    let sc = shrink(&mut mm, &mut p, Reclaimer::Kswapd, 0, dirty);
    assert_eq!((sc.nr_scanned, sc.nr_reclaimed), (4, 1));
    assert_eq!(sc.pageout, vec![pfns[0]]);
    assert_eq!(mm.stat.get(VmEvent::NrVmscanWrite), 4);
    assert!(mm.frames.is_free(pfns[3]));
    for &pfn in &pfns[1..3] {
        let f = mm.frames[pfn].flags;
        assert!(f.has(PageFlags::ACTIVE | PageFlags::DIRTY | PageFlags::BUFFERS_LOCKED));
        assert!(!f.has(PageFlags::WRITEBACK));
    }
    // nr_dirty: pages 1 and 2 still PG_dirty; page 0 moved to writeback.
    assert_eq!((mm.dirty.nr_dirty, mm.dirty.nr_writeback), (2, 1));
}
