//! Hand-checked scenarios for the classic LRU: get_scan_count fractions and
//! refault-distance activation. See issue #2.

use mm::{FileId, Mm, Owner, PageFlags, RegionId, Shadow, VmEvent, ZoneId, ZoneSpan};
use reclaim::policy::classic::{Classic, ScanBalance};
use reclaim::policy::{Origin, ReclaimPolicy};
use reclaim::workingset::{pack_shadow, ShadowInfo, EVICTION_MASK};
use reclaim::{Balance, ReclaimConfig, Reclaimer, ScanControl};

/// A machine whose lists hold `[inactive anon, active anon, inactive file, active file]` pages.
fn lists(cfg: ReclaimConfig, sizes: [u32; 4]) -> (Mm, Classic) {
    let total: u32 = sizes.iter().sum();
    let mut mm = Mm::new(total + 64, 1 << 16);
    let region = mm.add_anon_region(total);
    let file = mm.add_file(total);
    let mut p = Classic::new(cfg);
    let mut index = 0;
    for (lru, &n) in sizes.iter().enumerate() {
        let anon = lru < 2;
        for _ in 0..n {
            let (owner, flags) =
                if anon { (Owner::anon(region), PageFlags::SWAPBACKED) } else { (Owner::file(file), 0) };
            let pfn = mm.frames.alloc(owner, index, flags).unwrap();
            if lru % 2 == 1 {
                mm.frames[pfn].flags.set(PageFlags::ACTIVE);
            }
            p.add_page(&mut mm, pfn, if anon { Origin::AnonFault } else { Origin::FileRead }, None);
            index += 1;
        }
    }
    (mm, p)
}

fn scan_count(swappiness: u32, costs: (u64, u64)) -> ([u64; 4], [u64; 2], u64, ScanBalance) {
    scan_count_with(Balance::WeightedCost, swappiness, costs).0
}

/// What `get_scan_count` decided: pages to scan per list, the anon/file fractions, their denominator, the balance.
type ScanCount = ([u64; 4], [u64; 2], u64, ScanBalance);

/// `get_scan_count` under `balance` with the given costs; also returns the costs after the call.
fn scan_count_with(balance: Balance, swappiness: u32, costs: (u64, u64)) -> (ScanCount, (u64, u64)) {
    let cfg = ReclaimConfig { swappiness, balance, ..ReclaimConfig::default() };
    // Inactive file below active file: file deactivation allowed, no cache-trim mode.
    let (mm, mut p) = lists(cfg, [8192, 8192, 4096, 8192]);
    p.set_costs(costs.0, costs.1);
    let mut sc = ScanControl::new(Reclaimer::Kswapd, 32);
    sc.priority = 2;
    p.prepare_scan_control(&mm, &sc);
    let c = p.get_scan_count(&mm, &sc);
    ((c.nr, c.fraction, c.denominator, c.balance), p.costs())
}

/// Equal (zero) costs: fraction = [swappiness, 200 - swappiness] over 200.
/// Scan targets at priority 2: 8192 >> 2 = 2048 (anon lists, active file), 4096 >> 2 = 1024 (inactive file).
#[test]
fn scan_count_fractions_by_swappiness() {
    assert_eq!(scan_count(60, (0, 0)), ([614, 614, 716, 1433], [60, 140], 200, ScanBalance::Fract));
    assert_eq!(scan_count(0, (0, 0)), ([0, 0, 1024, 2048], [0, 200], 200, ScanBalance::Fract));
    assert_eq!(scan_count(100, (0, 0)), ([1024, 1024, 512, 1024], [100, 100], 200, ScanBalance::Fract));
    assert_eq!(scan_count(200, (0, 0)), ([2048, 2048, 0, 0], [200, 0], 200, ScanBalance::Fract));
}

/// anon_cost 100, file_cost 300: total 400, A = 500, F = 700, T = 1200;
/// ap = 60 * 1201 / 501 = 143, fp = 140 * 1201 / 701 = 239, denominator 382;
/// anon 2048 * 143 / 382 = 766, inactive file 1024 * 239 / 382 = 640, active file 2048 * 239 / 382 = 1281.
#[test]
fn scan_count_follows_refault_cost() {
    assert_eq!(scan_count(60, (100, 300)), ([766, 766, 640, 1281], [143, 239], 382, ScanBalance::Fract));
}

/// Seed 000's 2016 form: no [1/3, 2/3] limit. anon_cost 100, file_cost 300, total 400
/// (below 28672 / 8 = 3584, no decay): ap = 60 * 401 / 101 = 238, fp = 140 * 401 / 301 = 186,
/// denominator 238 + 186 + 1 = 425; anon 2048 * 238 / 425 = 1146, inactive file
/// 1024 * 186 / 425 = 448, active file 2048 * 186 / 425 = 896 (rounded down).
#[test]
fn rfc_2016_scan_count_is_unlimited_cost_ratio() {
    let (c, costs) = scan_count_with(Balance::Rfc2016, 60, (100, 300));
    assert_eq!(c, ([1146, 1146, 448, 896], [238, 186], 425, ScanBalance::Fract));
    assert_eq!(costs, (100, 300));
}

/// 2016 form decays in get_scan_count: 3000 + 1000 > 3584 halves both to 1500 and 500;
/// ap = 60 * 2001 / 1501 = 79, fp = 140 * 2001 / 501 = 559, denominator 639;
/// anon 2048 * 79 / 639 = 253, inactive file 1024 * 559 / 639 = 895, active file 2048 * 559 / 639 = 1791.
#[test]
fn rfc_2016_costs_decay_at_an_eighth_of_the_lru() {
    let (c, costs) = scan_count_with(Balance::Rfc2016, 60, (3000, 1000));
    assert_eq!(c, ([253, 253, 895, 1791], [79, 559], 639, ScanBalance::Fract));
    assert_eq!(costs, (1500, 500));
}

/// 2016 form: a workingset refault and an anon swap-in each cost IO x SWAP_CLUSTER_MAX = 32.
#[test]
fn rfc_2016_charges_io_thirty_two_times() {
    let cfg = || ReclaimConfig {
        balance: Balance::Rfc2016,
        anon_workingset: false,
        anon_start_inactive: false,
        ..ReclaimConfig::default()
    };
    let (mut mm, mut p) = lists(cfg(), [50, 30, 0, 100]);
    let age = p.nonresident_age();
    let shadow: Shadow =
        pack_shadow(ShadowInfo { eviction: age.wrapping_sub(5) & EVICTION_MASK, memcg: 0, workingset: true });
    let pfn = mm.frames.alloc(Owner::file(FileId(0)), 999, 0).unwrap();
    p.add_page(&mut mm, pfn, Origin::FileRead, Some(shadow));
    assert_eq!(p.costs(), (0, 32));
    let pfn = mm.frames.alloc(Owner::anon(RegionId(0)), 998, PageFlags::SWAPBACKED).unwrap();
    p.add_page(&mut mm, pfn, Origin::SwapIn, None);
    assert_eq!(p.costs(), (32, 32));
}

/// A tiny file LRU (8 file + 64 free pages, at or below the high watermark of 100)
/// beside an anon list whose inactive side is low (100 of 1000): before v4.12 global
/// reclaim scans anon only; from v4.12 (`tiny_file_needs_anon`) it does not, since
/// inactive anon is about to be refilled by deactivation, and the next rule applies
/// (here cache-trim mode: inactive file is not low, so file only).
#[test]
fn tiny_file_forces_anon_only_before_v4_12() {
    let balance = |tiny_file_needs_anon: bool| {
        let cfg = ReclaimConfig { tiny_file_needs_anon, ..ReclaimConfig::default() };
        let (mut mm, mut p) = lists(cfg, [100, 900, 4, 4]);
        mm.zones[0].watermark[mm::Watermark::High as usize] = 100;
        let mut sc = ScanControl::new(Reclaimer::Kswapd, 32);
        sc.priority = 2;
        p.prepare_scan_control(&mm, &sc);
        let c = p.get_scan_count(&mm, &sc);
        (c.balance, c.nr)
    };
    assert_eq!(balance(false), (ScanBalance::Anon, [25, 225, 0, 0]));
    assert_eq!(balance(true), (ScanBalance::File, [0, 0, 1, 1]));
}

/// With inactive file at least as large as active file and no refaults,
/// file deactivation is not needed: cache-trim mode scans file only.
#[test]
fn cache_trim_mode_scans_file_only() {
    let (mm, mut p) = lists(ReclaimConfig::default(), [100, 100, 8192, 4096]);
    let mut sc = ScanControl::new(Reclaimer::Kswapd, 32);
    sc.priority = 2;
    p.prepare_scan_control(&mm, &sc);
    let c = p.get_scan_count(&mm, &sc);
    assert_eq!(c.balance, ScanBalance::File);
    assert_eq!(c.nr, [0, 0, 2048, 1024]);
}

/// File lists spread over DMA (zone 0) and DMA32 (zone 1), no swap: inactive
/// file 200 pages in DMA and 3000 in DMA32, active file 100 in DMA and 1000 in
/// DMA32 (3200 * 1 >= 1100: cache-trim mode, file only either way).
/// Kswapd woken for a boosted DMA (`reclaim_idx` DMA) at priority 2 scans the
/// lists' DMA pages: 200 >> 2 = 50 and 100 >> 2 = 25 (v4.10+); v4.8..v4.9
/// scanned the whole lists, 3200 >> 2 = 800 and 1100 >> 2 = 275, skipping the
/// DMA32 pages. Reclaim for DMA32 sees every page either way.
#[test]
fn zone_limited_reclaim_scans_in_proportion_to_eligible_pages() {
    let spans =
        [ZoneSpan { node: 0, id: ZoneId::Dma, pages: 512 }, ZoneSpan { node: 0, id: ZoneId::Dma32, pages: 8192 }];
    let counts = |eligible: bool, reclaim_idx: ZoneId| {
        let mut mm = Mm::with_layout(&spans, vec![vec![10]], 0);
        let file = mm.add_file(4300);
        let mut p = Classic::new(ReclaimConfig { scan_eligible_zones: eligible, ..ReclaimConfig::default() });
        let mut index = 0;
        for (zone, active, n) in [(0, false, 200), (1, false, 3000), (0, true, 100), (1, true, 1000)] {
            for _ in 0..n {
                let pfn = mm.alloc_in(zone, Owner::file(file), index, 0).unwrap();
                if active {
                    mm.frames[pfn].flags.set(PageFlags::ACTIVE);
                }
                p.add_page(&mut mm, pfn, Origin::FileRead, None);
                index += 1;
            }
        }
        p.check_invariants(&mm);
        let mut sc = ScanControl::new(Reclaimer::Kswapd, 32);
        (sc.priority, sc.reclaim_idx) = (2, reclaim_idx);
        p.prepare_scan_control(&mm, &sc);
        let c = p.get_scan_count(&mm, &sc);
        assert_eq!(c.balance, ScanBalance::File);
        c.nr
    };
    assert_eq!(counts(true, ZoneId::Dma), [0, 0, 50, 25]);
    assert_eq!(counts(false, ZoneId::Dma), [0, 0, 800, 275]);
    assert_eq!(counts(true, ZoneId::Dma32), [0, 0, 800, 275]);
}

/// A refault at `distance` of a page of the given type, with lists
/// IA 50, AA 30, IF 0, AF 100 and free swap. Returns whether it was activated.
fn refault(cfg: ReclaimConfig, anon: bool, distance: u64, workingset_bit: bool) -> (bool, Mm) {
    let (mut mm, mut p) = lists(cfg, [50, 30, 0, 100]);
    let age = p.nonresident_age();
    let shadow: Shadow = pack_shadow(ShadowInfo {
        eviction: age.wrapping_sub(distance) & EVICTION_MASK,
        memcg: 0,
        workingset: workingset_bit,
    });
    let pfn = if anon {
        mm.frames.alloc(Owner::anon(RegionId(0)), 999, PageFlags::SWAPBACKED).unwrap()
    } else {
        mm.frames.alloc(Owner::file(FileId(0)), 999, 0).unwrap()
    };
    p.add_page(&mut mm, pfn, if anon { Origin::SwapIn } else { Origin::FileRead }, Some(shadow));
    (mm.frames[pfn].flags.has(PageFlags::ACTIVE), mm)
}

/// v5.9+: file workingset = active file + all anon = 100 + 30 + 50 = 180;
/// anon workingset = active file + inactive file + active anon = 100 + 0 + 30 = 130.
#[test]
fn refault_distance_activates_within_workingset_size() {
    let cfg = ReclaimConfig::default;
    assert!(refault(cfg(), false, 180, false).0);
    assert!(!refault(cfg(), false, 181, false).0);
    assert!(refault(cfg(), true, 130, false).0);
    assert!(!refault(cfg(), true, 131, false).0);
    let (_, mm) = refault(cfg(), true, 10, false);
    assert_eq!(mm.stat.get(VmEvent::WorkingsetRefaultAnon), 1);
    assert_eq!(mm.stat.get(VmEvent::WorkingsetActivateAnon), 1);
    assert_eq!(mm.stat.get(VmEvent::WorkingsetRestoreAnon), 0);
}

/// Before v5.8 only the active file list could be challenged: 100.
#[test]
fn refault_distance_before_v5_8_uses_active_file_only() {
    let cfg = || ReclaimConfig { cache_challenges_anon: false, balance: Balance::Rotation, ..ReclaimConfig::default() };
    assert!(refault(cfg(), false, 100, false).0);
    assert!(!refault(cfg(), false, 101, false).0);
}

/// A refault of a page that was workingset is a restore, and charges IO cost.
#[test]
fn restore_charges_refault_cost() {
    let (active, mm) = refault(ReclaimConfig::default(), false, 5, true);
    assert!(active);
    assert_eq!(mm.stat.get(VmEvent::WorkingsetRestoreFile), 1);
    assert_eq!(mm.stat.get(VmEvent::WorkingsetActivateFile), 1);
    assert_eq!(mm.stat.get(VmEvent::WorkingsetRefaultFile), 1);
}

/// `memory.scaled_from`: 8000 inactive against 32000 active anon pages (156 MB,
/// gb 0, ratio 1) is low (8000 < 32000). On a 256M machine standing for 7G the
/// lists are 28 times larger, 1120000 pages = 4 GB, ratio int_sqrt(40) = 6:
/// 48000 < 32000 is false, not low; 5000 against 35000 is (30000 < 35000).
#[test]
fn scale_model_evaluates_the_ratio_for_the_bigger_machine() {
    let (_, p) = lists(ReclaimConfig::default(), [8000, 32000, 0, 0]);
    assert!(p.inactive_is_low(0));
    let scaled = ReclaimConfig { scale: reclaim::ScaleModel::new(7 << 30, 256 << 20), ..ReclaimConfig::default() };
    let (_, p) = lists(scaled.clone(), [8000, 32000, 0, 0]);
    assert!(!p.inactive_is_low(0));
    let (_, p) = lists(scaled, [5000, 35000, 0, 0]);
    assert!(p.inactive_is_low(0));
}

/// v4.6 (`file_ratio_1to1`, no `refaults_deactivate`): 100000 inactive against
/// 200000 active file pages (1.1 GB, sqrt ratio 3) is low at 1:1 but not at 3:1;
/// with inactive 8192 against active 4096 it is not low, and
/// since refaults do not count, every pass trims the cache (SCAN_FILE).
#[test]
fn old_file_ratio_and_cache_trim() {
    let cfg = ReclaimConfig {
        balance: Balance::Rotation,
        file_ratio_1to1: true,
        refaults_deactivate: false,
        ..ReclaimConfig::default()
    };
    let (_, p) = lists(cfg.clone(), [0, 0, 100_000, 200_000]);
    assert!(p.inactive_is_low(1));
    let (_, p) = lists(ReclaimConfig { file_ratio_1to1: false, ..cfg.clone() }, [0, 0, 100_000, 200_000]);
    assert!(!p.inactive_is_low(1));
    let (mut mm, mut p) = lists(cfg.clone(), [4096, 4096, 8192, 4096]);
    assert!(!p.inactive_is_low(1));
    // A refault activation since the last snapshot does not change the decision.
    mm.stat.count(VmEvent::WorkingsetActivateFile, 1);
    let mut sc = ScanControl::new(Reclaimer::Kswapd, 32);
    sc.priority = 2;
    p.prepare_scan_control(&mm, &sc);
    assert_eq!(p.get_scan_count(&mm, &sc).balance, ScanBalance::File);
    // The same lists with refaults_deactivate: the activation ends trim mode.
    let (mut mm, mut p) = lists(ReclaimConfig { refaults_deactivate: true, ..cfg }, [4096, 4096, 8192, 4096]);
    mm.stat.count(VmEvent::WorkingsetActivateFile, 1);
    p.prepare_scan_control(&mm, &sc);
    assert_eq!(p.get_scan_count(&mm, &sc).balance, ScanBalance::Fract);
}
