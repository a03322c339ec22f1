//! Hand-checked kswapd runs with a watermark boost (v5.0+ `balance_pgdat`).

use mm::pageblock::{boost_watermark, DEFAULT_BOOST_FACTOR};
use mm::{Mm, Owner, PageFlags, VmEvent, Watermark, ZoneId};
use reclaim::kswapd::Kswapd;
use reclaim::pageout::PageoutEnv;
use reclaim::policy::classic::Classic;
use reclaim::policy::{Origin, ReclaimPolicy};
use reclaim::watermark::{setup_per_zone_wmarks, WatermarkGap};
use reclaim::ReclaimConfig;

/// One zone of 8192 pages; min_free_kbytes 1024 = 256 pages, low = high - 64:
/// min 256, low 320, high 384. `anon` inactive anon pages and `file` clean
/// inactive file pages fill it; the rest is free.
fn machine(anon: u32, file: u32) -> (Mm, Classic) {
    let mut mm = Mm::new(8192, 1 << 16);
    setup_per_zone_wmarks(&mut mm.zones, 1024, WatermarkGap::Scaled { watermark_scale_factor: 10 });
    assert_eq!(mm.zones[0].watermark[..3], [256, 320, 384]);
    let region = mm.add_anon_region(anon);
    let f = mm.add_file(file);
    let mut p = Classic::new(ReclaimConfig::default());
    for i in 0..anon + file {
        let (owner, index, flags, origin) = if i < anon {
            (Owner::anon(region), i, PageFlags::SWAPBACKED, Origin::AnonFault)
        } else {
            (Owner::file(f), i - anon, 0, Origin::FileRead)
        };
        let pfn = mm.frames.alloc(owner, index, flags).unwrap();
        p.add_page(&mut mm, pfn, origin, None);
    }
    (mm, p)
}

/// Runs a kswapd balance run to its end; returns whether each pass might
/// swap and write (`may_swap`, `may_writepage`).
fn run(k: &mut Kswapd, mm: &mut Mm, p: &mut Classic) -> Vec<(bool, bool)> {
    k.begin(mm);
    let mut passes = Vec::new();
    loop {
        let step = k.step(mm, p, PageoutEnv::TODAY);
        passes.push((step.sc.may_swap, step.sc.may_writepage));
        if step.finished {
            return passes;
        }
    }
}

/// [`machine`] with `free` pages free, boosted once, and kswapd's run for it
/// (the machine after it, kswapd, and the passes' `may_swap`, `may_writepage`).
fn boosted_run(anon: u32, file: u32, free: u64) -> (Mm, Kswapd, Vec<(bool, bool)>) {
    let (mut mm, mut p) = machine(anon, file);
    assert_eq!(mm.nr_free(), free);
    let mut k = Kswapd::new(&mm, 0, true);
    boost_watermark(&mut mm.zones[0], DEFAULT_BOOST_FACTOR);
    assert!(k.wake_request(&mm, ZoneId::Normal));
    let passes = run(&mut k, &mut mm, &mut p);
    (mm, k, passes)
}

/// 1000 pages free: above the high watermark (384) with or without the
/// first boost (384 + 512 = 896), so the node is balanced: unboosted kswapd
/// is not woken. Boosted, it is; its run reclaims the boost's 512 pages from
/// the file list alone (no swap-out, though 3000 anon pages are inactive),
/// then takes the boost off the zone and wakes kcompactd once.
#[test]
fn a_boosted_run_reclaims_the_boost_without_swapping_then_clears_it() {
    let (mut mm, mut p) = machine(3000, 4192);
    let mut k = Kswapd::new(&mm, 0, true);
    assert!(!k.wake_request(&mm, ZoneId::Normal), "balanced, not boosted: no wakeup");
    assert!(boost_watermark(&mut mm.zones[0], DEFAULT_BOOST_FACTOR));
    assert_eq!((mm.zones[0].watermark_boost, mm.zones[0].wmark(Watermark::High)), (512, 896));
    assert!(k.wake_request(&mm, ZoneId::Normal), "a boosted zone wakes kswapd though balanced");
    let passes = run(&mut k, &mut mm, &mut p);
    // The last step found the node balanced and the boost reclaimed: it ends the run.
    assert!(passes[..passes.len() - 1].iter().all(|&m| m == (false, false)), "{passes:?}");
    let stolen = mm.stat.get(VmEvent::PgstealKswapd);
    assert!(stolen >= 512, "reclaimed the boost: {stolen}");
    assert_eq!((mm.stat.get(VmEvent::Pswpout), mm.stat.get(VmEvent::PgstealAnon)), (0, 0));
    assert_eq!(mm.stat.get(VmEvent::PgstealFile), stolen);
    assert_eq!((mm.zones[0].watermark_boost, mm.stat.get(VmEvent::CompactDaemonWake)), (0, 1));
    assert!(!k.wake_request(&mm, ZoneId::Normal), "the boost is gone: balanced again");
}

/// 600 pages free: balanced for the plain high watermark (384) but not for
/// the boosted one (896): the run drops the boost (`goto restart`) and
/// reclaims normally (may swap and write) up to 896 free; the boost seen
/// at the start is still taken off at the end.
#[test]
fn an_unbalanced_node_reclaims_normally_and_still_clears_the_boost() {
    let (mm, _, passes) = boosted_run(3796, 3796, 600);
    assert!(passes.iter().all(|&m| m == (true, true)), "{passes:?}");
    assert!(mm.nr_free() >= 896, "free {}", mm.nr_free());
    assert_eq!((mm.zones[0].watermark_boost, mm.stat.get(VmEvent::CompactDaemonWake)), (0, 1));
}

/// 1192 pages free: balanced, boosted. The boosted run may not swap and the
/// file lists are empty: its first pass reclaims nothing and the run ends
/// (no progress for the boost). It counts as a failure (`kswapd_failures`)
/// though the node is balanced; the boost is still taken off.
#[test]
fn a_boosted_run_without_progress_is_a_failure() {
    let (mm, k, passes) = boosted_run(7000, 0, 1192);
    assert_eq!(passes, [(false, false)]);
    assert_eq!((mm.stat.get(VmEvent::PgscanKswapd), k.failures), (0, 1));
    assert_eq!(mm.zones[0].watermark_boost, 0);
}
