//! Per-zone LRU lists (before v4.8) against v4.8's node lists: which zone's
//! pages each reclaimer scans, and the per-zone counters. See issue #16.

use mm::{Mm, Owner, VmEvent, ZoneId, ZoneSpan};
use reclaim::direct::Untimed;
use reclaim::pageout::PageoutEnv;
use reclaim::policy::classic::Classic;
use reclaim::policy::{Origin, ReclaimPolicy};
use reclaim::watermark::{setup_lowmem_reserve, setup_per_zone_wmarks, WatermarkGap, DEFAULT_LOWMEM_RESERVE_RATIO};
use reclaim::zoned::ZonedPolicy;
use reclaim::{ReclaimConfig, Reclaimer, ScanControl};

/// DMA32 and Normal of 4096 pages each; min_free_kbytes 1024 = 256 pages,
/// 128 per zone, step max(32, 4) = 32: min 128, low 160, high 192. Each zone
/// holds 3000 clean, unmapped inactive file pages; DMA32 has 1096 free (above
/// high 192 + gap min(160, 41) = 41 + reserve 16), Normal `normal_free`.
fn machine(zoned: bool, normal_free: u32) -> (Mm, Box<dyn ReclaimPolicy>) {
    let mut mm = empty_machine();
    let file = mm.add_file(8192);
    let mut policy: Box<dyn ReclaimPolicy> =
        if zoned { Box::new(zoned_classic()) } else { Box::new(Classic::new(ReclaimConfig::default())) };
    let mut index = 0;
    for (zone, used) in [(0, 3000), (1, 4096 - normal_free)] {
        for i in 0..used {
            let pfn = mm.alloc_in(zone, Owner::file(file), index, 0).unwrap();
            index += 1;
            // Beyond 3000: kernel memory, on no LRU.
            if i < 3000 {
                policy.add_page(&mut mm, pfn, Origin::FileRead, None);
            }
        }
    }
    (mm, policy)
}

/// The two zones, all free, with their watermarks and reserves.
fn empty_machine() -> Mm {
    let spans =
        [ZoneSpan { node: 0, id: ZoneId::Dma32, pages: 4096 }, ZoneSpan { node: 0, id: ZoneId::Normal, pages: 4096 }];
    let mut mm = Mm::with_layout(&spans, vec![vec![10]], 0);
    setup_per_zone_wmarks(&mut mm.zones, 1024, WatermarkGap::Scaled { watermark_scale_factor: 10 });
    setup_lowmem_reserve(&mut mm.zones, &DEFAULT_LOWMEM_RESERVE_RATIO);
    mm
}

/// A classic lruvec for each of the two zones.
fn zoned_classic() -> ZonedPolicy {
    let cfg = ReclaimConfig::default();
    ZonedPolicy::new(vec![Box::new(Classic::new(cfg.clone())), Box::new(Classic::new(cfg))])
}

fn zone_scans(mm: &Mm) -> [(u64, u64); 2] {
    [0, 1].map(|z| (mm.zones[z].stat.pgscan_kswapd, mm.zones[z].stat.pgscan_direct))
}

/// kswapd at priority 2 with Normal below its high watermark (100 free) and
/// DMA32 balanced: per-zone lists shrink Normal alone, towards its high
/// watermark (v3.11's `kswapd_shrink_zone`, flat priority as today): 192 of
/// its 3000 >> 2 = 750 pages, credited to Normal. v4.8's node lists, given the
/// whole budget, scan the node's 6000 pages: 1500, counted for the node only.
#[test]
fn kswapd_shrinks_only_the_unbalanced_zone() {
    let (mut mm, mut p) = machine(true, 100);
    let mut sc = ScanControl::new(Reclaimer::Kswapd, u64::MAX);
    sc.priority = 2;
    sc.reclaim_idx = ZoneId::Normal;
    p.shrink_node(&mut mm, &mut sc, PageoutEnv::TODAY, &mut Untimed);
    assert_eq!(zone_scans(&mm), [(0, 0), (192, 0)]);
    assert_eq!(p.zone_lru_sizes(1).unwrap().inactive_file, 3000 - 192);
    assert_eq!(p.zone_lru_sizes(0).unwrap().inactive_file, 3000);
    let (mut mm, mut p) = machine(false, 100);
    let mut sc = ScanControl::new(Reclaimer::Kswapd, u64::MAX);
    sc.priority = 2;
    p.shrink_node(&mut mm, &mut sc, PageoutEnv::TODAY, &mut Untimed);
    assert_eq!((mm.stat.get(VmEvent::PgscanKswapd), zone_scans(&mm)), (1500, [(0, 0); 2]));
    assert!(p.zone_lru_sizes(0).is_none());
}

/// Direct reclaim for a DMA32 allocation (reclaim_idx DMA32) shrinks only
/// DMA32's lists: 3000 >> 2 = 750 pages, none of Normal's looked at (no
/// pgskip); for a Normal allocation both zones, Normal first: 750 each.
#[test]
fn direct_reclaim_walks_the_zonelist_up_to_the_classzone() {
    for (class, expect) in [(ZoneId::Dma32, [(0, 750), (0, 0)]), (ZoneId::Normal, [(0, 750), (0, 750)])] {
        let (mut mm, mut p) = machine(true, 100);
        let mut sc = ScanControl::new(Reclaimer::Direct, u64::MAX);
        sc.priority = 2;
        sc.reclaim_idx = class;
        p.shrink_node(&mut mm, &mut sc, PageoutEnv::TODAY, &mut Untimed);
        assert_eq!(zone_scans(&mm), expect, "{class:?}");
        assert_eq!(mm.stat.get(VmEvent::PgskipNormal), 0);
        p.check_invariants(&mm);
    }
}

/// `zone_reclaimable()`: a zone scanned six times over its reclaimable
/// pages without freeing one is unreclaimable. Normal's pages are kernel
/// memory here (none on an LRU: 0 reclaimable), so kswapd's first pass marks
/// it; it is reclaimable again once a page is freed to it.
#[test]
fn unreclaimable_zone_until_pages_are_freed() {
    let mut mm = empty_machine();
    let kernel: Vec<u32> = (0..3996).map(|i| mm.alloc_in(1, Owner::KERNEL, i, 0).unwrap()).collect();
    let mut p = zoned_classic();
    let mut sc = ScanControl::new(Reclaimer::Kswapd, u64::MAX);
    sc.reclaim_idx = ZoneId::Normal;
    assert!(!p.all_unreclaimable(&mm, 1));
    p.shrink_node(&mut mm, &mut sc, PageoutEnv::TODAY, &mut Untimed);
    assert!(p.all_unreclaimable(&mm, 1));
    assert!(!p.all_unreclaimable(&mm, 0), "DMA32 is balanced: not shrunk, not marked");
    mm.free_frame(kernel[0]);
    assert!(!p.all_unreclaimable(&mm, 1));
}

/// v3.11's reclaim flags are the zone's. Both zones hold 3000 dirty inactive
/// file pages and 100 free pages (below high 192); Normal is already flagged
/// dirty, DMA32 not. kswapd (priority 2, classzone Normal) shrinks DMA32 first:
/// its first batch of 32 is all unqueued dirty, none written (DMA32 is not
/// flagged), so DMA32 is flagged and kswapd stalls (the pass ends there). The
/// node's own flag stays clear. The next pass writes DMA32's next 32 pages.
#[test]
fn v311_dirty_flags_are_per_zone() {
    let mut mm = empty_machine();
    let file = mm.add_file(8192);
    let dirty = reclaim::DirtyConfig {
        kswapd_write_at_priority: false,
        kswapd_flat_priority: true,
        dirty_activate: false,
        throttle: reclaim::DirtyThrottle::Stall,
        is_dirty_writeback: true,
    };
    let cfg = ReclaimConfig { dirty, ..ReclaimConfig::default() };
    let mut p = ZonedPolicy::new(vec![Box::new(Classic::new(cfg.clone())), Box::new(Classic::new(cfg))]);
    for zone in 0..2 {
        for i in 0..3996 {
            let index = zone as u32 * 4096 + i;
            let owner = if i < 3000 { Owner::file(file) } else { Owner::KERNEL };
            let pfn = mm.alloc_in(zone, owner, index, 0).unwrap();
            if i < 3000 {
                p.add_page(&mut mm, pfn, Origin::FileRead, None);
                mm.set_page_dirty(pfn);
            }
        }
    }
    mm.zones[1].reclaim_flags.dirty = true;
    let env = PageoutEnv { dirty, ..PageoutEnv::TODAY };
    let pass = |mm: &mut Mm, p: &mut ZonedPolicy| {
        let mut sc = ScanControl::new(Reclaimer::Kswapd, u64::MAX);
        sc.priority = 2;
        sc.reclaim_idx = ZoneId::Normal;
        p.shrink_node(mm, &mut sc, env, &mut Untimed);
        sc.throttle.map(|t| t.reason)
    };
    assert_eq!(pass(&mut mm, &mut p), Some(reclaim::throttle::ThrottleReason::CongestionWait));
    assert_eq!(zone_scans(&mm), [(32, 0), (0, 0)]);
    assert_eq!(mm.stat.get(VmEvent::NrVmscanWrite), 0);
    assert!(mm.zones[0].reclaim_flags.dirty && mm.zones[1].reclaim_flags.dirty && !mm.dirty.pgdat_dirty);
    pass(&mut mm, &mut p);
    assert_eq!(mm.stat.get(VmEvent::NrVmscanWrite), 32);
}

/// v3.9's `get_scan_count()` forces anon scanning when the zone's file pages
/// plus its free pages are at most its high watermark. Normal (high 192) holds
/// 3000 inactive anon and 20 inactive file pages, and 100 free; DMA32 is all
/// free. For Normal's lruvec: 20 + 100 = 120 <= 192, anon only (750 = 3000 >> 2
/// at priority 2, no file). The node's figures (4196 free against 384)
/// would not force it: the rule is the zone's under per-zone lists.
#[test]
fn tiny_file_is_judged_per_zone() {
    use reclaim::policy::classic::ScanBalance;
    let spans =
        [ZoneSpan { node: 0, id: ZoneId::Dma32, pages: 4096 }, ZoneSpan { node: 0, id: ZoneId::Normal, pages: 4096 }];
    let mut mm = Mm::with_layout(&spans, vec![vec![10]], 8192);
    setup_per_zone_wmarks(&mut mm.zones, 1024, WatermarkGap::Scaled { watermark_scale_factor: 10 });
    setup_lowmem_reserve(&mut mm.zones, &DEFAULT_LOWMEM_RESERVE_RATIO);
    let (region, file) = (mm.add_anon_region(3000), mm.add_file(20));
    let mut normal = Classic::new(ReclaimConfig::default());
    for i in 0..3996 {
        let (owner, flags, origin) = match i {
            0..3000 => (Owner::anon(region), mm::PageFlags::SWAPBACKED, Origin::AnonFault),
            3000..3020 => (Owner::file(file), 0, Origin::FileRead),
            _ => (Owner::KERNEL, 0, Origin::FileRead),
        };
        let pfn = mm.alloc_in(1, owner, i % 3000, flags).unwrap();
        if i < 3020 {
            normal.add_page(&mut mm, pfn, origin, None);
        }
    }
    assert_eq!((mm.zone_free(1), mm.zones[1].wmark(mm::Watermark::High), mm.nr_free()), (100, 192, 4196));
    let mut sc = ScanControl::new(Reclaimer::Kswapd, u64::MAX);
    sc.priority = 2;
    sc.zone = Some(1);
    normal.prepare_scan_control(&mm, &sc);
    let c = normal.get_scan_count(&mm, &sc);
    assert_eq!((c.balance, c.nr), (ScanBalance::Anon, [750, 0, 0, 0]));
    sc.zone = None;
    normal.prepare_scan_control(&mm, &sc);
    assert_ne!(normal.get_scan_count(&mm, &sc).balance, ScanBalance::Anon);
}
