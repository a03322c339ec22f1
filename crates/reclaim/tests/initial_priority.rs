//! MGLRU's `set_initial_priority()` (v6.3+, knob `mglru_initial_priority`):
//! kswapd's root reclaim starts below `DEF_PRIORITY` when the node has much
//! to reclaim; and where kswapd's pass stops (`should_abort_scan()`) (issue #21).

use mm::{Mm, Owner, Watermark, ZoneId};
use reclaim::kswapd::Kswapd;
use reclaim::memcg_lru::MemcgLruForm;
use reclaim::pageout::PageoutEnv;
use reclaim::policy::mglru::config::InitialPriority;
use reclaim::policy::mglru::Mglru;
use reclaim::policy::{Origin, ReclaimPolicy};
use reclaim::watermark::{setup_per_zone_wmarks, WatermarkGap};
use reclaim::{LruGenConfig, ReclaimConfig};

/// One zone of 8192 pages (min 256, low 320, high 384) holding 7892 clean
/// page-cache pages, all in MGLRU's oldest generation (inactive): 300 free,
/// below the low watermark. `memcg_lru`: the kernel's form of the memcg
/// LRU, which also gives the form of `should_abort_scan()`.
fn machine(form: InitialPriority, memcg_lru: MemcgLruForm) -> (Mm, Mglru) {
    let mut mm = Mm::new(8192, 1 << 16);
    setup_per_zone_wmarks(&mut mm.zones, 1024, WatermarkGap::Scaled { watermark_scale_factor: 10 });
    assert_eq!(mm.zones[0].watermark[..3], [256, 320, 384]);
    let f = mm.add_file(7892);
    let cfg = ReclaimConfig {
        lru_gen: LruGenConfig { v6_12: true, initial_priority: form, memcg_lru, ..LruGenConfig::default() },
        ..ReclaimConfig::default()
    };
    let mut p = Mglru::new(cfg);
    for i in 0..7892 {
        let pfn = mm.frames.alloc(Owner::file(f), i, 0).unwrap();
        p.add_page(&mut mm, pfn, Origin::FileRead, None);
    }
    assert_eq!((mm.nr_free(), p.lru_sizes().inactive_file), (300, 7892));
    (mm, p)
}

/// kswapd's first pass wants the zone's high watermark, 384 pages
/// (`kswapd_shrink_node()`). The node's inactive pages: 7892, so
/// `fls(7892) - 1 = 12`; the want rounded up: `fls(383) = 9`; 12 - 9 = 3.
/// v6.3 starts the pass at priority 3, v6.11 clamps it to 6 (`DEF_PRIORITY /
/// 2`), before v6.3 it starts at 12. The pass scans `7892 >> priority`
/// pages (a batch at least), so the lower start reclaims the 85 pages the
/// node lacks above its high watermark in one pass; at 12 one batch of 64
/// pages falls short.
#[test]
fn kswapd_starts_where_the_inactive_pages_cover_its_want() {
    for (form, start) in [(InitialPriority::Off, 12), (InitialPriority::V6_3, 3), (InitialPriority::V6_11, 6)] {
        let (mut mm, mut p) = machine(form, MemcgLruForm::V6_3);
        let mut k = Kswapd::new(&mm, 0, true);
        assert!(k.wake_request(&mm, ZoneId::Normal));
        k.begin(&mut mm);
        let step = k.step(&mut mm, &mut p, PageoutEnv::TODAY);
        assert_eq!((step.sc.nr_to_reclaim, step.sc.priority), (384, start), "{form:?}");
        let balanced = mm.nr_free() > mm.zones[0].wmark(Watermark::High);
        assert_eq!(balanced, form != InitialPriority::Off, "{form:?}: {} free", mm.nr_free());
        if !step.finished {
            // The loop goes on below the start, never back up to 12.
            let next = k.step(&mut mm, &mut p, PageoutEnv::TODAY);
            assert!(next.finished || next.sc.priority <= start, "{form:?}");
        }
    }
}

/// Direct reclaim wants 32 pages, fewer than `MIN_LRU_BATCH` (64): it keeps
/// `DEF_PRIORITY`, whatever the node holds.
#[test]
fn direct_reclaim_keeps_the_default_priority() {
    let (mut mm, mut p) = machine(InitialPriority::V6_3, MemcgLruForm::V6_3);
    let sc = reclaim::direct::try_to_free_pages(
        &mut mm,
        &mut p,
        PageoutEnv::TODAY,
        (ZoneId::Normal, None),
        &mut reclaim::direct::Untimed,
    );
    assert_eq!((sc.nr_to_reclaim, sc.priority), (32, 12));
}

/// v6.7's "mm/mglru: try to stop at high watermarks": after each eviction
/// batch kswapd stops once every eligible zone has more free pages than its
/// high watermark plus `MIN_LRU_BATCH` (384 + 64 = 448), before it has
/// reclaimed its want. The pass starts at priority 3 (v6.3's estimate), so
/// it may scan `7892 >> 3 = 986` pages, in batches of 64 clean pages each
/// reclaimed. Before v6.7 it stops at its want: 6 batches, 384 pages.
/// From v6.7: 300 + 64 = 364 and 428 free pages are not above 448, 492 are
/// (less the page the shadow entries' slab takes): 3 batches, 192 pages.
#[test]
fn kswapd_stops_its_pass_above_the_high_watermark_from_v6_7() {
    for (form, reclaimed) in [(MemcgLruForm::V6_3, 384), (MemcgLruForm::V6_7, 192), (MemcgLruForm::V6_11, 192)] {
        let (mut mm, mut p) = machine(InitialPriority::V6_3, form);
        let mut k = Kswapd::new(&mm, 0, true);
        assert!(k.wake_request(&mm, ZoneId::Normal));
        k.begin(&mut mm);
        let step = k.step(&mut mm, &mut p, PageoutEnv::TODAY);
        assert_eq!((step.sc.priority, step.sc.nr_to_reclaim), (3, 384), "{form:?}");
        assert_eq!(step.sc.nr_reclaimed, reclaimed, "{form:?}");
        if form != MemcgLruForm::V6_3 {
            // Above 448 now, not a batch earlier (the shadow entries' slab took a page).
            let free = mm.zone_free(0);
            assert!(free > 448 && free - 64 <= 448, "{form:?}: {free} free");
        }
    }
}
