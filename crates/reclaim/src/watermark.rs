//! Zone watermarks from `vm.min_free_kbytes` and `vm.watermark_scale_factor`.
//!
//! Models `calculate_min_free_kbytes()`, `__setup_per_zone_wmarks()`,
//! `setup_per_zone_lowmem_reserve()` and the order-0 `zone_watermark_ok()`,
//! mm/page_alloc.c (v3.9..v6.x). Every x86-64 zone is lowmem, so each zone's
//! share of `pages_min` is in proportion to its managed pages. The v5.0+
//! boost is in [`Zone::wmark`] ([`mm::pageblock`]).

use mm::{Mm, Watermark, Zone, ZoneId, MAX_NR_ZONES};

/// KERNEL: `calculate_min_free_kbytes()`: `int_sqrt(16 * lowmem_kbytes)` clamped to [128, 262144].
pub fn default_min_free_kbytes(lowmem_kbytes: u64) -> u64 {
    int_sqrt(16 * lowmem_kbytes).clamp(128, 262_144)
}

/// Integer square root, rounded down (kernel `int_sqrt`).
pub fn int_sqrt(x: u64) -> u64 {
    if x < 2 {
        return x;
    }
    // Newton's method on integers; converges from above in O(log x) steps.
    let mut r = 1u64 << (64 - x.leading_zeros()).div_ceil(2);
    loop {
        let next = (r + x / r) / 2;
        if next >= r {
            return r;
        }
        r = next;
    }
}

/// How far the low and high watermarks sit above min.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatermarkGap {
    /// Before v4.6: low = min + min/4, high = min + min/2, whatever the zone's size.
    MinFraction,
    /// v4.6 ("scale kswapd watermarks in proportion to memory"): each step is
    /// `max(min/4, managed * vm.watermark_scale_factor / 10000)`.
    Scaled {
        /// `vm.watermark_scale_factor`, in 1/10000 of the zone's pages.
        watermark_scale_factor: u64,
    },
}

/// Sets `zone.watermark` as `__setup_per_zone_wmarks()` does.
///
/// `total_lowmem_managed` is the sum of managed pages over lowmem zones.
pub fn setup_zone_watermarks(zone: &mut Zone, min_free_kbytes: u64, gap: WatermarkGap, total_lowmem_managed: u64) {
    let pages_min = min_free_kbytes >> (mm::PAGE_SHIFT - 10);
    let share = pages_min * zone.managed / total_lowmem_managed.max(1);
    let (low, high, promo) = match gap {
        // KERNEL: v3.x/v4.5 add share >> 2 and share >> 1; no promotion watermark then (set to high).
        WatermarkGap::MinFraction => (share >> 2, share >> 1, share >> 1),
        WatermarkGap::Scaled { watermark_scale_factor } => {
            let d = (share / 4).max(zone.managed * watermark_scale_factor / 10_000);
            (d, 2 * d, 3 * d)
        }
    };
    zone.watermark[Watermark::Min as usize] = share;
    zone.watermark[Watermark::Low as usize] = share + low;
    zone.watermark[Watermark::High as usize] = share + high;
    zone.watermark[Watermark::Promo as usize] = share + promo;
    zone.reset_alloc_batch();
}

/// Sets the watermarks of every zone (`__setup_per_zone_wmarks()`): `pages_min`
/// is shared among the zones of all nodes by managed pages.
pub fn setup_per_zone_wmarks(zones: &mut [Zone], min_free_kbytes: u64, gap: WatermarkGap) {
    let lowmem: u64 = zones.iter().map(|z| z.managed).sum();
    for z in zones {
        setup_zone_watermarks(z, min_free_kbytes, gap, lowmem);
    }
}

/// KERNEL: `sysctl_lowmem_reserve_ratio` on x86-64: DMA 256, DMA32 256, Normal 32, Movable 0.
pub const DEFAULT_LOWMEM_RESERVE_RATIO: [u64; MAX_NR_ZONES] = [256, 256, 32, 0];

/// `setup_per_zone_lowmem_reserve()`: zone `i` of a node keeps back, from
/// allocations that could have used the higher zone type `j`, the managed
/// pages of the node's zones above `i` up to `j` divided by `ratio[i]`
/// (0 where the ratio is 0 or the zone manages nothing).
pub fn setup_lowmem_reserve(zones: &mut [Zone], ratio: &[u64; MAX_NR_ZONES]) {
    for i in 0..zones.len() {
        let (node, id, managed) = (zones[i].node, zones[i].id, zones[i].managed);
        let mut reserve = [0; MAX_NR_ZONES];
        let mut above = 0;
        let r = ratio[id as usize];
        for (j, slot) in reserve.iter_mut().enumerate().skip(id as usize + 1) {
            above += zones.iter().filter(|z| z.node == node && z.id as usize == j).map(|z| z.managed).sum::<u64>();
            *slot = if r == 0 || managed == 0 { 0 } else { above / r };
        }
        zones[i].lowmem_reserve = reserve;
    }
}

/// `zone_watermark_ok()` for order 0: zone `zone` (an index into `mm.zones`)
/// has more free pages than `mark` plus its reserve against `classzone`.
#[inline]
pub fn zone_watermark_ok(mm: &Mm, zone: usize, mark: Watermark, classzone: ZoneId) -> bool {
    let z = &mm.zones[zone];
    mm.zone_free(zone) > z.wmark(mark) + z.lowmem_reserve[classzone as usize]
}

/// The `highest_zoneidx` of user pages: `ZONE_MOVABLE` where the machine has
/// one, else `ZONE_NORMAL` (even when empty, as on a 3G x86-64 machine). The
/// kernel's is `ZONE_MOVABLE` even when it is empty; an empty zone adds nothing
/// to the reserves, so they are the same, and `allocstall_normal` counts
/// user pages' direct reclaims as in the one-zone model.
pub fn user_classzone(mm: &Mm) -> ZoneId {
    mm.zones.iter().map(|z| z.id).max().unwrap_or(ZoneId::Normal).max(ZoneId::Normal)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_sqrt_floor() {
        for x in [0u64, 1, 2, 3, 4, 15, 16, 17, 99, 100, 1 << 40, u64::MAX] {
            let r = int_sqrt(x);
            assert!(r as u128 * r as u128 <= x as u128, "{x}");
            assert!((r as u128 + 1) * (r as u128 + 1) > x as u128, "{x}");
        }
    }

    /// Hand-checked: 1 GiB of memory, defaults.
    /// lowmem_kbytes = 1048576; int_sqrt(16 * 1048576) = 4096 KiB -> 1024 pages min.
    /// d = max(1024/4 = 256, 262144 * 10 / 10000 = 262) = 262.
    #[test]
    fn one_gib_defaults() {
        let managed = 262_144u64;
        let mfk = default_min_free_kbytes(managed * 4);
        assert_eq!(mfk, 4096);
        let mut z = Zone::new(ZoneId::Normal, 0, 0, managed as u32);
        setup_zone_watermarks(&mut z, mfk, WatermarkGap::Scaled { watermark_scale_factor: 10 }, managed);
        assert_eq!(z.watermark, [1024, 1024 + 262, 1024 + 524, 1024 + 786]);
    }

    /// Small machine: 64 MiB. int_sqrt(16 * 65536) = 1024 KiB -> 256 pages;
    /// d = max(64, 16384 * 10 / 10000 = 16) = 64. Scale factor 1000 (10%) gives d = 1638.
    #[test]
    fn small_machine_and_scale_factor() {
        let managed = 16_384u64;
        let mfk = default_min_free_kbytes(managed * 4);
        assert_eq!(mfk, 1024);
        let mut z = Zone::new(ZoneId::Normal, 0, 0, managed as u32);
        setup_zone_watermarks(&mut z, mfk, WatermarkGap::Scaled { watermark_scale_factor: 10 }, managed);
        assert_eq!(z.watermark, [256, 320, 384, 448]);
        setup_zone_watermarks(&mut z, mfk, WatermarkGap::Scaled { watermark_scale_factor: 1000 }, managed);
        assert_eq!(z.watermark, [256, 256 + 1638, 256 + 2 * 1638, 256 + 3 * 1638]);
    }

    /// Pages on per-CPU lists are free frames but not free pages to the
    /// checks. 16384 pages: min 256, low 256 + max(64, 16) = 320; a v5.14 list
    /// on one CPU (batch 3) is refilled 3 pages at a time. After 16060
    /// allocations (5354 refills = 16062 pages) 2 are on the list and the zone
    /// has 322 > 320; the 16063rd allocation refills again: 321 frames are
    /// free but the zone has 319, below low. Draining the list gives 321.
    #[test]
    fn per_cpu_pages_count_as_allocated() {
        let mut m = Mm::new(16_384, 0);
        let mfk = default_min_free_kbytes(16_384 * 4);
        setup_per_zone_wmarks(&mut m.zones, mfk, WatermarkGap::Scaled { watermark_scale_factor: 10 });
        assert_eq!(m.zones[0].wmark(Watermark::Low), 320);
        m.setup_pcp(mm::PcpSetup { form: mm::PcpForm::LowMark, fraction: 0, cpus: 1 });
        let take = |m: &mut Mm, n: u32| {
            for _ in 0..n {
                m.frames.alloc_in(0, mm::Owner::KERNEL, 0, 0).unwrap();
            }
        };
        take(&mut m, 16_060);
        assert_eq!((m.frames.pcp.held(0), m.zone_free(0)), (2, 322));
        assert!(zone_watermark_ok(&m, 0, Watermark::Low, ZoneId::Normal));
        take(&mut m, 3);
        assert_eq!((m.frames.pcp.held(0), m.zone_free(0), m.nr_free(), m.nr_free_frames()), (2, 319, 319, 321));
        assert!(!zone_watermark_ok(&m, 0, Watermark::Low, ZoneId::Normal));
        m.drain_all_pages();
        assert_eq!((m.frames.pcp.held(0), m.zone_free(0)), (0, 321));
        assert!(zone_watermark_ok(&m, 0, Watermark::Low, ZoneId::Normal));
    }

    #[test]
    fn min_free_kbytes_clamps() {
        assert_eq!(default_min_free_kbytes(16), 128);
        assert_eq!(default_min_free_kbytes(1 << 40), 262_144);
    }

    /// Hand-checked: 8 GiB, defaults. min_free_kbytes = int_sqrt(16 * 8388608) = 11585 KiB
    /// -> 2896 pages. Before v4.6: low 2896 + 724, high 2896 + 1448. v4.6: the step is
    /// max(724, 2097152 * 10 / 10000 = 2097): low 4993, high 7090.
    #[test]
    fn eight_gib_before_and_after_v4_6() {
        let managed = 2_097_152u64;
        let mfk = default_min_free_kbytes(managed * 4);
        assert_eq!(mfk, 11585);
        let mut z = Zone::new(ZoneId::Normal, 0, 0, managed as u32);
        setup_zone_watermarks(&mut z, mfk, WatermarkGap::MinFraction, managed);
        assert_eq!(z.watermark[..3], [2896, 3620, 4344]);
        setup_zone_watermarks(&mut z, mfk, WatermarkGap::Scaled { watermark_scale_factor: 10 }, managed);
        assert_eq!(z.watermark[..3], [2896, 4993, 7090]);
    }

    /// Hand-checked: 6 GiB on x86-64, v4.6+ defaults (watermark_scale_factor 10).
    /// Zones: DMA 4096 pages, DMA32 782336, Normal 786432; lowmem 1572864 pages.
    /// min_free_kbytes = int_sqrt(16 * 6291456 = 100663296) = 10033 (10033^2 =
    /// 100661089 <= it < 10034^2 = 100681156) -> pages_min = 10033 >> 2 = 2508.
    /// - DMA: min = 2508 * 4096 / 1572864 = 6 (6.53); step = max(6 >> 2 = 1,
    ///   4096 * 10 / 10000 = 4) = 4: low 10, high 14.
    /// - DMA32: min = 2508 * 782336 / 1572864 = 1247 (1247.45); step = max(311,
    ///   782) = 782: low 2029, high 2811.
    /// - Normal: min = 2508 * 786432 / 1572864 = 1254; step = max(313, 786) = 786:
    ///   low 2040, high 2826.
    ///
    /// lowmem_reserve (ratios 256, 256, 32): DMA against DMA32 = 782336 / 256 =
    /// 3056, against Normal and Movable = (782336 + 786432) / 256 = 6128; DMA32
    /// against Normal and Movable = 786432 / 256 = 3072; Normal against Movable
    /// (empty) = 0 / 32 = 0.
    /// Before v4.6 (min/4, min/2): Normal low 1254 + 313 = 1567, high 1254 + 627 = 1881.
    #[test]
    fn six_gib_zones_and_lowmem_reserve() {
        let mut m = Mm::with_layout(&mm::zone::x86_64_layout(6 << 18, 1), vec![vec![10]], 0);
        let mfk = default_min_free_kbytes(6 << 20);
        assert_eq!(mfk, 10033);
        setup_per_zone_wmarks(&mut m.zones, mfk, WatermarkGap::Scaled { watermark_scale_factor: 10 });
        setup_lowmem_reserve(&mut m.zones, &DEFAULT_LOWMEM_RESERVE_RATIO);
        let marks: Vec<_> = m.zones.iter().map(|z| z.watermark[..3].to_vec()).collect();
        assert_eq!(marks, [vec![6, 10, 14], vec![1247, 2029, 2811], vec![1254, 2040, 2826]]);
        let reserves: Vec<_> = m.zones.iter().map(|z| z.lowmem_reserve).collect();
        assert_eq!(reserves, [[0, 3056, 6128, 6128], [0, 0, 3072, 3072], [0, 0, 0, 0]]);
        assert_eq!(user_classzone(&m), ZoneId::Normal);
        // All free: DMA holds 4096 pages, not above 10 + 6128 for a user page;
        // for a DMA32 allocation its reserve is 3056, and 4096 > 10 + 3056.
        assert!(!zone_watermark_ok(&m, 0, Watermark::Low, ZoneId::Normal));
        assert!(zone_watermark_ok(&m, 0, Watermark::Low, ZoneId::Dma32));
        assert!(zone_watermark_ok(&m, 0, Watermark::Low, ZoneId::Dma));
        assert!(zone_watermark_ok(&m, 1, Watermark::High, ZoneId::Normal));
        setup_per_zone_wmarks(&mut m.zones, mfk, WatermarkGap::MinFraction);
        assert_eq!(m.zones[2].watermark[..3], [1254, 1567, 1881]);
    }
}
